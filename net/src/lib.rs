//! `lanyard-net`: the NetManager, which moves controller sections between a server and its
//! clients.
//!
//! This crate is a skeleton: it will hold a sans-IO NetManager core (fed
//! `receive(from, bytes)` and `update(dt)`, drained with `drain_outgoing()`; no sockets and
//! no clock inside), the protocol messages and sessions, and the transports (message-io
//! UDP, an in-memory hub for tests, a seeded network conditioner). It drives the steps of
//! [`lanyard::EntityGroup`]'s frame one by one and carries the packets they produce.
#![warn(missing_docs)]

/// The protocol version this build speaks. Peers with another version are refused at the
/// handshake.
pub const PROTOCOL_VERSION: u32 = 1;

pub use lanyard;
