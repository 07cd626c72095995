//! `lanyard-net`: the NetManager, which moves controller sections between a server and its
//! clients.
//!
//! * [`NetManager`]: one type for the server and its clients, **sans-IO**. It holds no
//!   socket, reads no clock and draws no randomness: it is fed datagrams with
//!   [`NetManager::receive`], runs a frame of an [`lanyard::EntityGroup`] (through the
//!   group's one pipeline, [`lanyard::pipeline`]) with [`NetManager::update`]`(group, dt)`,
//!   and hands back datagrams with [`NetManager::drain_outgoing`]. Time is the sum of the
//!   `dt`s; randomness is the [`Entropy`] its owner gives it.
//! * Inside, by concern: a connection per peer (its state, a timer table, acks, the
//!   reliable channel, the packetizer, the replay window), an endpoint (addresses to
//!   connections; the stateless handshake and admission), replication (what goes to whom),
//!   the keyed hashes, and the wire format. Only the facade is public.
//! * [`transport`]: the [`Transport`] trait, an in-memory [`Hub`] for tests and a seeded
//!   [`Conditioned`] wrapper (latency, jitter, loss, corruption, duplication, reordering);
//!   [`udp::UdpTransport`]: real sockets through message-io, the only I/O here.
//! * `harness` (feature `harness`): a server and clients of your kinds on the hub with a
//!   virtual clock, for multi-peer tests.
//! * [`guide`]: write a kind, network it, write a replay test, in three compiled examples.
//! * [`discovery`]: finding servers on the LAN by UDP broadcast.
//! * Beyond the LAN, a rendezvous server on a public address, and punching through the NATs
//!   between two homes, are a crate of their own: `lanyard-rendezvous` (`net/rendezvous/`),
//!   which drives the same [`Transport`] and shares [`Addrs`] with [`discovery`].
//!
//! # Invariants
//!
//! * **Bad input never hurts.** Every datagram decodes to a value or an error, never a panic,
//!   and allocates no more than its own size. After the handshake every datagram carries a
//!   tag keyed by the session; one whose tag is wrong, or a replay, is dropped and counted
//!   before any field in it is used, and never ends a session. A client that keeps sending
//!   undecodable datagrams under a right tag is dropped; a stranger's garbage is counted
//!   and ignored.
//! * **No amplification.** Until an address has answered the server's stateless challenge,
//!   the server keeps no state for it and sends it no more bytes than it received from it.
//! * **Authority.** A client's sections are applied only to entities it owns, and only if
//!   the kind's validation hook calls them legal; its spawn requests only if the kind's
//!   spawn judge does. Corrections are the server's own state. Only the server assigns
//!   network ids and admits clients.
//! * **The cap holds.** Broadcasts are at least `1 / rate` seconds apart whatever the frame
//!   rate, so no one-second window holds more than `rate` of them.
//! * **Nothing is lost silently.** Spawns, despawns, owner changes, corrections and events
//!   travel on an acknowledged, resent, ordered channel; a message that cannot be delivered
//!   in time ends the session with a clear reason, or suspends it for a resume.
//! * **A session outlives its link.** A client silent past the timeout keeps its id and
//!   entities for [`NetConfig::grace`] seconds; it resumes with a proof of a token both
//!   sides derived from the first session key (nothing secret travels), from any address,
//!   and gets the world afresh. Only a proven resume touches a session.
#![warn(missing_docs)]

pub mod addrs;
mod claim;
mod config;
mod connection;
mod core;
mod crypto;
pub mod discovery;
mod endpoint;
pub mod error;
mod event;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod guide;
#[cfg(feature = "harness")]
pub mod harness;
mod idmap;
mod manager;
mod replication;
mod session;
mod stats;
mod succession;
pub mod transport;
#[cfg(not(target_arch = "wasm32"))]
pub mod udp;
mod wire;

pub use addrs::Addrs;
pub use claim::SessionClaim;
pub use config::{Entropy, NetConfig};
pub use error::{DisconnectReason, NetError, RejectReason};
pub use event::NetEvent;
pub use manager::{NetFrame, NetManager, SessionInfo};
pub use stats::{Footprint, NetCounters, PeerStats};
pub use succession::Successor;
pub use transport::{Conditioned, ConditionerStats, Conditions, Hub, HubEndpoint, Transport};
#[cfg(not(target_arch = "wasm32"))]
pub use udp::os_entropy;
pub use wire::{HELLO_LEN, MAX_DATAGRAM, MAX_FRAGMENT, MAX_MESSAGE, PROTOCOL_VERSION};

pub use lanyard;

/// Moves every datagram `transport` has received into `net`, and every datagram `net` wants
/// to send out through `transport`. Call it around [`NetManager::update`].
pub fn pump(net: &mut NetManager, transport: &mut dyn Transport) {
    while let Some((from, bytes, age)) = transport.recv_aged() {
        net.receive_aged(from, &bytes, age);
    }
    for (to, bytes) in net.drain_outgoing() {
        transport.send(to, &bytes);
    }
}

/// The README's examples, compiled and run as this crate's doctests (it sees both
/// `lanyard` and `lanyard-net`).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
