//! The client's side of a [`NetManager`](crate::NetManager): its endpoint and replication, the server's
//! clock and the lead, and the frame driver that applies the server's state and sends ours
//! up.

use super::frame::Inbound;
use crate::endpoint::ClientEndpoint;
use crate::replication::ClientReplication;

#[derive(Clone)]
pub(super) struct Client {
    pub(super) endpoint: ClientEndpoint,
    pub(super) repl: ClientReplication,
    pub(super) ack_owed: bool,
    /// The server's clock, unwrapped from the datagrams' millisecond stamps: (the last
    /// stamp, seconds).
    pub(super) server_clock: Option<(u16, f64)>,
    /// The server's clock when it sent the newest state taken in the last update.
    pub(super) remote_time: Option<f64>,
    /// Ticks the server's state is behind our present (half the round trip).
    pub(super) lead: u32,
    /// The hellos of players who came to us while we stood by as the host's successor
    /// (they lost the host too): the server we become takes them.
    pub(super) handed: Vec<Inbound>,
}

impl Client {
    /// A client of `endpoint`, which has yet to hear from its server.
    pub(super) fn new(endpoint: ClientEndpoint) -> Self {
        Client {
            endpoint,
            repl: ClientReplication::default(),
            ack_owed: false,
            server_clock: None,
            remote_time: None,
            lead: 0,
            handed: Vec::new(),
        }
    }

    /// The lead for a round trip of `ping_ms` at timestep `dt`: half of it in whole ticks,
    /// changed only when the estimate is most of a tick away (so it does not flicker).
    pub(super) fn lead_for(&self, ping_ms: f32, dt: f32) -> u32 {
        let ticks = ping_ms / 2000.0 / dt;
        if (ticks - self.lead as f32).abs() < 0.75 {
            return self.lead;
        }
        ticks.round().clamp(0.0, 60.0) as u32
    }
}
