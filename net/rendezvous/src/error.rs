//! What goes wrong beyond the LAN: [`RendezvousError`], and why a rendezvous server
//! refuses a request ([`Refusal`]).

use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// An error of the rendezvous protocol, its server or a peer's exchange with it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RendezvousError {
    /// A datagram shorter than the rendezvous header.
    #[error("truncated rendezvous datagram")]
    Truncated,
    /// Not a rendezvous datagram (its magic is another's).
    #[error("not a rendezvous datagram")]
    BadMagic,
    /// A rendezvous datagram that does not decode (another protocol version, bad fields,
    /// trailing bytes).
    #[error("malformed rendezvous datagram: {0}")]
    Malformed(String),
    /// A rendezvous server did not answer.
    #[error("the rendezvous server at {addr} does not answer")]
    Silent {
        /// Where it was asked.
        addr: SocketAddr,
    },
    /// A rendezvous server refused a request.
    #[error("the rendezvous server at {addr} refused: {reason}")]
    Refused {
        /// Where it was asked.
        addr: SocketAddr,
        /// Why.
        reason: Refusal,
    },
    /// Hole punching found no path to a game behind its NAT.
    #[error(
        "no path opened to '{name}' at {peer}: hole punching failed (a symmetric NAT, which gives \
         every destination its own port, or a router that lets nothing in, stops it) and the \
         rendezvous server did not relay the game. The host can forward its UDP game port on its \
         router, or you can play on the same LAN"
    )]
    PunchFailed {
        /// The game's registered name.
        name: String,
        /// Its public address, as the rendezvous server saw it.
        peer: SocketAddr,
    },
    /// An I/O error from the socket.
    #[error("transport: {0}")]
    Io(String),
}

impl From<std::io::Error> for RendezvousError {
    fn from(e: std::io::Error) -> Self {
        RendezvousError::Io(e.to_string())
    }
}

/// Why the rendezvous server refused a request (in its [`Message::Refused`](crate::Message::Refused) answers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Refusal {
    /// Another host has a live registration under that name.
    NameTaken,
    /// Game names are 1 to 32 characters, with no control characters.
    BadName,
    /// This IP address already has as many games registered as the server allows.
    TooMany {
        /// The limit per address.
        max: u16,
    },
    /// The server keeps as many games as it can.
    Full,
    /// No game is registered under that name (or its registration expired).
    NoSuchGame,
    /// Too many join requests from this address: try again in a few seconds.
    Busy,
    /// The server speaks another version of the rendezvous protocol.
    Version {
        /// The server's version.
        server: u8,
    },
}
