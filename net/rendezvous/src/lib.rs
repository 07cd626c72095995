//! Play beyond one LAN: a rendezvous server on a public address, and UDP hole punching.
//!
//! A game behind a home router (a NAT) cannot be reached from outside: the router drops
//! what nobody inside asked for. The rendezvous server sits on a public address and brings
//! two peers together:
//!
//! 1. A host registers its game under a name from its **game socket** (so the rendezvous
//!    server sees the public address and port the host's NAT gave that socket), with its
//!    player counts, protocol version and whether it asks for a password, and refreshes
//!    it; a registration nobody refreshes expires.
//! 2. A player lists the games, or asks to join one by name. The rendezvous server tells
//!    the player the host's public address, and the host the player's.
//! 3. Both send small punch datagrams to each other's public address. Each one opens the
//!    sender's NAT toward the other; once one arrives from the other side, the path is
//!    open, and the ordinary handshake runs over it. The rendezvous server carries no game
//!    traffic.
//!
//! A rendezvous server reached over both IPv6 and IPv4 ([`Addrs`]) knows a host by both
//! of its public addresses if the host registers over each, and hands both to a player; a
//! player that asks over each is introduced to the host by both of its own. The player
//! punches the host's IPv6 address first, and its IPv4 one [`V4_AFTER`] later.
//!
//! Punching fails through a *symmetric* NAT (one that gives each destination its own
//! port, so the address the rendezvous server saw is not the one the peer must use). Then,
//! a couple of seconds into punching ([`RELAY_AFTER`]), both peers ask the rendezvous
//! server to relay ([`Message::Relay`]): it forwards their sealed datagrams unchanged
//! between the two addresses it introduced, and the peers keep punching now and then and
//! go direct once a punch gets through ([`relay`]). Only if the relay is refused or silent
//! too does the player get [`RendezvousError::PunchFailed`], which says so and what to do.
//!
//! # Protections
//!
//! The rendezvous server is a public service, so it is built like the game port:
//!
//! * **No amplification.** Every request is padded to [`REQUEST_LEN`] bytes and a request
//!   that is shorter, or not a rendezvous datagram at all, is dropped after reading its
//!   first bytes. Until an address echoes a stateless [`Message::Challenge`] cookie (keyed
//!   by the server's secret, the address and the time), the only answer it gets is that
//!   challenge, which is smaller than the request, and no state is kept for it. Only an
//!   address that proved it receives at its address can register, list (answers up to a
//!   datagram) or make the server introduce it to a host.
//! * **Limits.** At most [`RendezvousConfig::max_per_address`] games per IP address and
//!   [`RendezvousConfig::max_games`] in all; at most [`JOIN_BURST`] join requests per IP
//!   address in [`JOIN_WINDOW`] seconds (each makes a host send punches).
//! * **Bad input never hurts.** Every datagram decodes to a [`Message`] or an error, with
//!   allocations bounded by the datagram's size; the decoder has property tests and a
//!   fuzz target (`net/fuzz`).
//! * **A relay that cannot be abused.** It forwards only between the two addresses of an
//!   introduction it made itself, once both have asked (each with a cookie); a datagram
//!   from any other address, or for an unknown session, is dropped and counted. It sends
//!   exactly what it received (never more), within a rate per session and one in all
//!   ([`RendezvousConfig::relay_rate`], [`RendezvousConfig::relay_total`]), and a session
//!   ends when it idles for [`relay::RELAY_IDLE`] or its game's registration ends. The
//!   game's datagrams are sealed end to end: the relay reads and forges nothing.
//! * A host starts punching only when the rendezvous server it registered with introduces
//!   a player, with a proof keyed by the registration's owner secret (so a forged
//!   introduction with the rendezvous server's address cannot aim its punches), and
//!   answers punches only from the addresses it was introduced to; a player believes the
//!   rendezvous server's answer only with its own random nonce in it, and answers punches
//!   only from the address it named.
//!
//! Passwords never go to the rendezvous server: a listing says only whether a game asks
//! for one, and the game's own handshake checks it over the punched path.
//!
//! The server, [`RendezvousServer`], and the peers' sides, [`Registrar`] (a host),
//! [`Joiner`] (a player) and [`Lister`] (a browser), are sans-IO like the NetManager: time
//! is a parameter and datagrams go in and out through methods. [`list`] and [`punch`] are
//! the blocking edge helpers for tools and menus.

#[cfg(not(target_arch = "wasm32"))]
mod blocking;
mod client;
mod crypto;
pub mod error;
mod host;
pub mod relay;
mod server;

#[cfg(not(target_arch = "wasm32"))]
pub use blocking::{drive, list, punch};
pub use client::{
    Exchange, JOIN_TIMEOUT, Joiner, Lister, PUNCH_TIMEOUT, Path, RELAY_AFTER, V4_AFTER,
};
pub use error::{Refusal, RendezvousError};
pub use host::{Registrar, RegistrarEvent};
pub use lanyard_net::Addrs;
pub use server::{Listed, RendezvousConfig, RendezvousServer, RendezvousStats};

use lanyard_net::MAX_DATAGRAM;
use lanyard_net::discovery::ServerInfo;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::SocketAddr;

/// The rendezvous server's UDP port when none is given.
pub const DEFAULT_PORT: u16 = 47820;

/// The version of the rendezvous protocol (separate from the game's protocol version,
/// which a registration carries).
/// 2: a host's address in the other family ([`Message::Peer`]'s `also`).
pub const VERSION: u8 = 2;

/// Every request is at least this long (padded with zeros): the server's answer to a
/// request without a valid cookie is never longer.
pub const REQUEST_LEN: usize = 64;

/// At most this many join requests from one IP address ...
pub const JOIN_BURST: usize = 10;
/// ... in this many seconds.
pub const JOIN_WINDOW: f64 = 10.0;

/// Bytes of a rendezvous cookie.
pub const COOKIE_LEN: usize = crate::crypto::COOKIE_LEN;

/// A rendezvous cookie: proof that an address receives what is sent to it.
pub type Cookie = [u8; COOKIE_LEN];

const MAGIC: [u8; 4] = *b"LYRV";
const HEADER_LEN: usize = MAGIC.len() + 1;
const DECODE_LIMIT: usize = 16 * 1024;

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NameTaken => f.write_str("another game is registered under that name"),
            Refusal::BadName => {
                f.write_str("game names are 1 to 32 characters, with no control characters")
            }
            Refusal::TooMany { max } => {
                write!(f, "this address already has {max} games registered")
            }
            Refusal::Full => f.write_str("the rendezvous server is full"),
            Refusal::NoSuchGame => f.write_str("no game is registered under that name"),
            Refusal::Busy => f.write_str("too many requests from this address; try again soon"),
            Refusal::Version { server } => write!(
                f,
                "the rendezvous server speaks rendezvous protocol {server}, this game {VERSION}"
            ),
        }
    }
}

/// One rendezvous datagram.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Message {
    /// Peer to server: asks for a cookie.
    Hello,
    /// Server to peer: the cookie to echo, and the address the server saw.
    Challenge {
        /// The cookie.
        cookie: Cookie,
        /// The requester's public address.
        you: SocketAddr,
    },
    /// Host to server: register (or refresh) a game.
    Register {
        /// The cookie.
        cookie: Cookie,
        /// A secret the host chose: only its holder refreshes or drops the registration,
        /// from any address.
        owner: [u8; 16],
        /// The game (its `game_port` is ignored: the server uses the port it saw).
        info: ServerInfo,
    },
    /// Server to host: the game is registered.
    Registered {
        /// Under this name.
        name: String,
        /// For this many milliseconds unless refreshed.
        ttl_ms: u32,
        /// The host's public address, as the server saw it.
        public: SocketAddr,
        /// Keyed by the registration's owner secret: a host believes only what its
        /// rendezvous server could have said (see [`registered_proof`]).
        proof: [u8; 16],
    },
    /// Peer to server: one page of the registered games.
    List {
        /// The cookie.
        cookie: Cookie,
        /// Which page (from 0).
        page: u16,
    },
    /// Server to peer: a page of games.
    Games {
        /// This page.
        page: u16,
        /// How many pages there are.
        pages: u16,
        /// The games, by name (their `game_port` is 0: a listed game is joined by name).
        games: Vec<ServerInfo>,
    },
    /// Player to server: introduce me to the game registered under `name`.
    Join {
        /// The cookie.
        cookie: Cookie,
        /// The game's name.
        name: String,
        /// The player's choice, echoed in [`Message::Peer`] and [`Message::Introduce`], and
        /// carried by the punches.
        nonce: u64,
    },
    /// Server to player: where the game is.
    Peer {
        /// The game's name.
        name: String,
        /// The host's public address: in the family the player asked over, if the host
        /// registered over it.
        addr: SocketAddr,
        /// The host's public address in the other family, if it registered over both
        /// (the player tries IPv6 first).
        also: Option<SocketAddr>,
        /// The join's nonce.
        nonce: u64,
    },
    /// Server to host: a player is coming; punch toward it.
    Introduce {
        /// The game's name.
        name: String,
        /// The player's public address.
        addr: SocketAddr,
        /// The join's nonce.
        nonce: u64,
        /// Keyed by the registration's owner secret, so no one else can make a host
        /// punch toward an address of their choice (see [`introduce_proof`]).
        proof: [u8; 16],
    },
    /// Server to peer: a request was refused.
    Refused {
        /// The name the request was about (empty if none).
        about: String,
        /// Why.
        reason: Refusal,
    },
    /// Peer to peer: opens the sender's NAT toward the receiver.
    Punch {
        /// The join's nonce.
        nonce: u64,
    },
    /// Host to server: drop my registration (the game is ending).
    Unregister {
        /// The cookie.
        cookie: Cookie,
        /// The registration's owner secret.
        owner: [u8; 16],
        /// Its name.
        name: String,
    },
    /// Player or host to server: punching found no path; relay the session of the join
    /// `(name, nonce)` (see [`relay`]). The session runs once both sides have asked.
    Relay {
        /// The cookie.
        cookie: Cookie,
        /// The game's name.
        name: String,
        /// The join's nonce.
        nonce: u64,
    },
    /// Server to player and host: the session of the join `(name, nonce)` is relayed:
    /// wrap datagrams for `peer` with `token` ([`relay::wrap`]) and send them to the
    /// rendezvous server.
    Relaying {
        /// The game's name.
        name: String,
        /// The join's nonce.
        nonce: u64,
        /// The session's token.
        token: u64,
        /// The other side's public address, as the rendezvous server sees it.
        peer: SocketAddr,
        /// To the host, keyed by the registration's owner secret (see [`relaying_proof`]);
        /// zeros to the player, who trusts its own nonce.
        proof: [u8; 16],
    },
}

impl Message {
    /// Whether a peer sends this to the server (and pads it to [`REQUEST_LEN`]).
    pub fn is_request(&self) -> bool {
        matches!(
            self,
            Message::Hello
                | Message::Register { .. }
                | Message::List { .. }
                | Message::Join { .. }
                | Message::Unregister { .. }
                | Message::Relay { .. }
        )
    }
}

/// Whether `bytes` is a rendezvous datagram (by its magic; nothing else is read). A game
/// socket that also talks to a rendezvous server sorts what it receives with this.
pub fn is_rendezvous(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// The datagram of `msg`: requests padded to [`REQUEST_LEN`].
pub fn encode(msg: &Message) -> Result<Vec<u8>, RendezvousError> {
    let mut out = MAGIC.to_vec();
    out.push(VERSION);
    out.extend_from_slice(&encode_body(msg)?);
    if msg.is_request() && out.len() < REQUEST_LEN {
        out.resize(REQUEST_LEN, 0);
    }
    Ok(out)
}

/// The bytes of `value` in a datagram's body: bincode's standard encoding, at most a
/// datagram long.
pub(crate) fn encode_body<T: Serialize>(value: &T) -> Result<Vec<u8>, RendezvousError> {
    let config = bincode::config::standard().with_limit::<MAX_DATAGRAM>();
    bincode::serde::encode_to_vec(value, config)
        .map_err(|e| RendezvousError::Malformed(e.to_string()))
}

/// The rendezvous protocol version of a datagram, if it is a rendezvous datagram.
pub fn version_of(bytes: &[u8]) -> Option<u8> {
    is_rendezvous(bytes).then(|| bytes.get(MAGIC.len()).copied())?
}

/// Reads a datagram of this rendezvous protocol version (trailing zero padding allowed).
pub fn decode(bytes: &[u8]) -> Result<Message, RendezvousError> {
    if bytes.len() < HEADER_LEN {
        return Err(RendezvousError::Truncated);
    }
    if !is_rendezvous(bytes) {
        return Err(RendezvousError::BadMagic);
    }
    if bytes[MAGIC.len()] != VERSION {
        return Err(RendezvousError::Malformed(format!(
            "rendezvous protocol {}",
            bytes[MAGIC.len()]
        )));
    }
    let body = &bytes[HEADER_LEN..];
    // The limit bounds what decoding may allocate (a list of games claims the memory of
    // its entries, more than their bytes on the wire), never more than a few kilobytes.
    let config = bincode::config::standard().with_limit::<DECODE_LIMIT>();
    match bincode::serde::decode_from_slice::<Message, _>(body, config) {
        Ok((m, n)) if body[n..].iter().all(|&b| b == 0) => Ok(m),
        Ok(_) => Err(RendezvousError::Malformed("trailing bytes".into())),
        Err(e) => Err(RendezvousError::Malformed(e.to_string())),
    }
}

/// The proof a [`Message::Registered`] carries, keyed by the registration's `owner`.
pub fn registered_proof(owner: &[u8; 16], name: &str, ttl_ms: u32, public: SocketAddr) -> [u8; 16] {
    crate::crypto::owner_proof(
        owner,
        "registered",
        &[
            name.as_bytes(),
            &ttl_ms.to_le_bytes(),
            &crate::crypto::addr_bytes(public),
        ],
    )
}

/// The proof a [`Message::Introduce`] carries, keyed by the registration's `owner`.
pub fn introduce_proof(owner: &[u8; 16], name: &str, addr: SocketAddr, nonce: u64) -> [u8; 16] {
    crate::crypto::owner_proof(
        owner,
        "introduce",
        &[
            name.as_bytes(),
            &crate::crypto::addr_bytes(addr),
            &nonce.to_le_bytes(),
        ],
    )
}

/// The proof a [`Message::Relaying`] to the host carries, keyed by the registration's
/// `owner`.
pub fn relaying_proof(
    owner: &[u8; 16],
    name: &str,
    peer: SocketAddr,
    nonce: u64,
    token: u64,
) -> [u8; 16] {
    crate::crypto::owner_proof(
        owner,
        "relaying",
        &[
            name.as_bytes(),
            &crate::crypto::addr_bytes(peer),
            &nonce.to_le_bytes(),
            &token.to_le_bytes(),
        ],
    )
}

/// Whether `name` may be registered: 1 to 32 characters, none of them a control character.
pub fn valid_name(name: &str) -> bool {
    let n = name.chars().count();
    (1..=32).contains(&n) && !name.chars().any(char::is_control)
}

#[cfg(test)]
mod dual_tests;
#[cfg(test)]
mod relay_tests;
#[cfg(test)]
mod tests;
