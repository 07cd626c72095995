//! The network layer's one error type, and the reasons a session is refused or ends.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a server refused a client's handshake. It reaches the client's API as
/// [`NetEvent::Rejected`](crate::NetEvent::Rejected).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum RejectReason {
    /// The two builds speak different protocol versions.
    VersionMismatch {
        /// The server's version.
        server: u16,
        /// The client's version.
        client: u16,
    },
    /// The server has a password and this was not it.
    BadPassword,
    /// Every player slot is taken.
    ServerFull {
        /// How many players the server takes.
        max: u16,
    },
    /// Someone already plays under that name. Servers of protocol 10 and later no longer
    /// refuse for this: they offer the first free "name (N)" instead (see
    /// [`NetEvent::Joined`](crate::NetEvent::Joined)).
    NameTaken,
    /// The name is empty or too long.
    BadName,
    /// Every spectator seat is taken.
    SpectatorsFull {
        /// How many spectators the server takes.
        max: u16,
    },
    /// The server banned this name for its lifetime.
    Banned,
    /// A resume named a session the server no longer keeps (its grace window ran out, or
    /// the proof was wrong): join afresh.
    SessionExpired,
    /// Said by a player of the game, not by its server, to a player that came to it as the
    /// host's successor: it plays at a live host, at `at`. If that is the host the one
    /// asking lost, only its own link to it failed, and it tries the host again instead of
    /// taking the game over; if it is another (the game moved on to a successor while the
    /// one asking could not reach it), it follows the game there (protocol 20).
    HostAlive {
        /// Where the live host is.
        at: std::net::SocketAddr,
    },
    /// The two worlds register different kinds: the first that differs, by name.
    KindMismatch {
        /// The kind's name.
        kind: String,
        /// Whether the server has it (and the client lacks it), or the other way round.
        server_has_it: bool,
    },
    /// A resume named a session the server kicked while the client could not hear it
    /// (protocol 22).
    Kicked {
        /// Why, as the server said.
        reason: String,
    },
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RejectReason::VersionMismatch { server, client } => write!(
                f,
                "version mismatch: the server speaks protocol {server}, this game speaks {client}"
            ),
            RejectReason::BadPassword => f.write_str("wrong password"),
            RejectReason::ServerFull { max } => write!(f, "the server is full ({max} players)"),
            RejectReason::NameTaken => f.write_str("that name is taken on this server"),
            RejectReason::BadName => f.write_str("names are 1 to 32 characters"),
            RejectReason::SpectatorsFull { max } => {
                write!(f, "the server takes no more spectators ({max})")
            }
            RejectReason::Banned => f.write_str("that name is banned on this server"),
            RejectReason::SessionExpired => f.write_str("session expired"),
            RejectReason::HostAlive { at } => write!(f, "the game goes on at {at}"),
            RejectReason::Kicked { reason } if reason.is_empty() => f.write_str("kicked"),
            RejectReason::Kicked { reason } => write!(f, "kicked: {reason}"),
            RejectReason::KindMismatch {
                kind,
                server_has_it: true,
            } => write!(
                f,
                "the server's world has the kind '{kind}', which this game does not register: \
                 both sides must register the same kinds"
            ),
            RejectReason::KindMismatch {
                kind,
                server_has_it: false,
            } => write!(
                f,
                "this game registers the kind '{kind}', which the server's world does not have: \
                 both sides must register the same kinds"
            ),
        }
    }
}

/// Why a session ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DisconnectReason {
    /// The client said goodbye.
    Left,
    /// Nothing came from the peer for longer than the timeout.
    TimedOut,
    /// The server is shutting down.
    ServerShutdown,
    /// The server removed the client, saying why (perhaps nothing).
    Kicked {
        /// What the server said.
        reason: String,
    },
    /// The client was silent past the grace window in which it could have resumed its
    /// session, or its resume was refused.
    SessionExpired,
    /// A reliable message was not acknowledged before it expired.
    ReliableExpired,
    /// The peer kept sending datagrams that could not be decoded.
    TooManyBadPackets,
    /// The same address said hello again as a new client (it restarted).
    Replaced,
}

impl fmt::Display for DisconnectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let DisconnectReason::Kicked { reason } = self {
            return match reason.is_empty() {
                true => f.write_str("kicked"),
                false => write!(f, "kicked: {reason}"),
            };
        }
        f.write_str(match self {
            DisconnectReason::Left => "left the game",
            DisconnectReason::TimedOut => "timed out",
            DisconnectReason::ServerShutdown => "the server shut down",
            DisconnectReason::Kicked { .. } => "kicked",
            DisconnectReason::SessionExpired => "session expired",
            DisconnectReason::ReliableExpired => "a reliable message could not be delivered",
            DisconnectReason::TooManyBadPackets => "sent too many malformed packets",
            DisconnectReason::Replaced => "reconnected as a new session",
        })
    }
}

/// Everything that can go wrong in the network layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// A datagram is shorter than its header or its fields say.
    #[error("truncated datagram")]
    Truncated,
    /// A datagram does not start with the Lanyard magic.
    #[error("not a Lanyard datagram")]
    BadMagic,
    /// A datagram has a kind this build does not know.
    #[error("unknown datagram kind {0}")]
    UnknownKind(u8),
    /// A control message or reliable message could not be decoded.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// A message is larger than fits in a datagram.
    #[error("message of {len} bytes exceeds the limit of {max}")]
    MessageTooLarge {
        /// Its size.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The operation needs a connected session.
    #[error("not connected")]
    NotConnected,
    /// No client has this id.
    #[error("no client {0}")]
    NoSuchClient(lanyard::ClientId),
    /// A framework error (a spawn, a section).
    #[error(transparent)]
    Framework(#[from] lanyard::Error),
    /// An I/O error from a transport.
    #[error("transport: {0}")]
    Io(String),
}

impl From<std::io::Error> for NetError {
    fn from(e: std::io::Error) -> Self {
        NetError::Io(e.to_string())
    }
}
