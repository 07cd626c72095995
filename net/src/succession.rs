//! Who takes a game over if its server goes ([`Successor`]), and what the successors are
//! given to take the others' sessions over (`Heir`): plain data, which the wire carries and
//! the manager keeps (`manager/succession.rs` says how the list is made and used).

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

/// One session as a successor needs it to take the session over: who it is, and the token
/// its client will prove when it resumes with the new host. The token is derived from the
/// session's resume token ([`migration_token`](crate::crypto::migration_token)); it never
/// opens a session on the old host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Heir {
    pub(crate) client: ClientId,
    pub(crate) name: String,
    pub(crate) spectator: bool,
    pub(crate) token: [u8; 32],
    /// Where the server sees it: a new host knocks there, to open its own NAT to it.
    pub(crate) addr: SocketAddr,
}

/// What the server keeps its clients told: the succession, and whether and how the game
/// moves to a successor when the server goes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Succession {
    /// The successors, in order.
    pub(crate) list: Vec<Successor>,
    /// The name the host plays under ("" if it does not play): "ada left".
    pub(crate) host: String,
    /// Whether the clients follow a successor when the server goes
    /// ([`NetConfig::host_migration`](crate::NetConfig::host_migration)).
    pub(crate) migrate: bool,
    /// Every session, with its migration token: only a player (a successor) is sent them.
    pub(crate) heirs: Vec<Heir>,
    /// More heirs follow in the next message (a message carries at most
    /// `wire::MAX_FRAGMENT` bytes); a continuation's list is empty.
    pub(crate) more: bool,
}

impl Succession {
    /// Takes in the next message: the whole succession once its last part came.
    pub(crate) fn gather(acc: &mut Option<Succession>, part: Succession) -> Option<Succession> {
        let whole = match acc.take() {
            Some(mut a) => {
                a.heirs.extend(part.heirs);
                a.more = part.more;
                a
            }
            None => part,
        };
        if whole.more {
            *acc = Some(whole);
            return None;
        }
        Some(whole)
    }
}
