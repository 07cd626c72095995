//! Who takes a game over if its server goes ([`Successor`]): plain data, which the wire
//! carries and the manager keeps (`manager/succession.rs` says how the list is made).

use lanyard::ClientId;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// A player who would take over the game if the server went, and where the server sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Successor {
    /// Its client id.
    pub client: ClientId,
    /// The name it plays under.
    pub name: String,
    /// Its address as the server sees it (on a LAN, where the others can reach it).
    pub addr: SocketAddr,
}
