//! Endpoints: which connection a datagram belongs to, and how a peer gets one.
//!
//! The server's endpoint maps addresses to client ids and admits new clients: it answers a
//! padded hello with a smaller stateless challenge (a cookie bound to the address, the
//! hello's values and a time epoch, and the epoch's key pair: a hello costs a keyed hash,
//! not a key exchange), and only when the cookie comes back does it check the version, the
//! password proof, the name and the room left, derive the session key, and open a
//! [`Connection`](crate::connection::Connection). Until then it keeps nothing and sends an address no more bytes than it
//! received from it. It answers a bounded number of hellos a second from one address and
//! in all (`limit.rs`).
//!
//! The client's endpoint says hello, answers the challenge with its name and password
//! proof, and checks the welcome's tag before it believes it.

use crate::core::Core;
use crate::wire::{self, DatagramKind, RejectBody};
use lanyard::ClientId;
use std::net::SocketAddr;

mod admit;
mod client;
mod kicks;
mod limit;
mod server;

pub(crate) use client::{ClientArrival, ClientEndpoint};
pub(crate) use server::{Arrival, ServerEndpoint};

/// How long a challenge's cookie stays good: answers within one to two epochs are taken.
const COOKIE_EPOCH_US: u64 = 10_000_000;

/// Logs a refusal now and then (at powers of two), so a flood does not flood the log.
pub(crate) fn log_refusal(id: ClientId, count: &u64, what: &str) {
    if count.is_power_of_two() {
        tracing::warn!("{id}: {count} {what} so far");
    }
}

/// Answers an address that has not proved it receives: only if the answer is no larger
/// than what came from it.
fn answer(core: &mut Core, to: SocketAddr, received: usize, r: &RejectBody) {
    match wire::control(DatagramKind::Reject, core.config.version, r) {
        Ok(d) if d.len() <= received => core.outbox.push((to, d)),
        _ => core.counters.strangers += 1,
    }
}
