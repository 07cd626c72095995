//! What every part of a [`NetManager`](crate::NetManager) shares: the configuration, the
//! clock (microseconds, the sum of the `dt`s it was given), the outbox, the events for the
//! user, and the counters that belong to no peer.

use crate::config::NetConfig;
use crate::connection::{Connection, Timing};
use crate::error::DisconnectReason;
use crate::event::NetEvent;
use crate::stats::NetCounters;
use crate::wire::{self, Bye, DatagramKind, Physics};
use std::collections::VecDeque;
use std::net::SocketAddr;

#[derive(Clone)]
pub(crate) struct Core {
    pub(crate) config: NetConfig,
    pub(crate) now: u64,
    pub(crate) last_send: Option<u64>,
    pub(crate) outbox: Vec<(SocketAddr, Vec<u8>)>,
    pub(crate) events: VecDeque<NetEvent>,
    pub(crate) counters: NetCounters,
    /// The names of the kinds this peer's world registers, sorted: what a client tells
    /// the server in its handshake, and what the server compares it with. Taken from the
    /// group at each update.
    pub(crate) kinds: Vec<String>,
    kinds_of: usize,
    /// A server's world's physics, as of the last update (sent in every welcome).
    pub(crate) physics: Physics,
}

/// Seconds to microseconds.
pub(crate) fn us(secs: f32) -> u64 {
    (f64::from(secs.max(0.0)) * 1e6).round() as u64
}

impl Core {
    /// Notes the kinds of `registry` (again only when it is another registry).
    pub(crate) fn know_kinds(&mut self, registry: &std::sync::Arc<lanyard::KindRegistry>) {
        let at = std::sync::Arc::as_ptr(registry) as usize;
        if at != self.kinds_of {
            let mut names: Vec<String> = registry.kinds().map(|(_, n)| n.to_owned()).collect();
            names.sort();
            self.kinds = names;
            self.kinds_of = at;
        }
    }

    pub(crate) fn new(config: NetConfig) -> Self {
        Core {
            kinds: Vec::new(),
            kinds_of: 0,
            physics: Physics::of(&lanyard::GroupConfig::default()),
            config,
            now: 0,
            last_send: None,
            outbox: Vec::new(),
            events: VecDeque::new(),
            counters: NetCounters::default(),
        }
    }

    /// The deadlines every connection keeps, from the configuration.
    pub(crate) fn timing(&self) -> Timing {
        let c = &self.config;
        Timing {
            timeout: us(c.timeout),
            heartbeat: us(c.heartbeat),
            reliable_expiry: us(c.reliable_expiry),
            connect_retry: us(c.connect_retry),
            connect_timeout: us(c.connect_timeout),
        }
    }

    /// Whether the rate cap allows a send now. Broadcasts are at least a full interval
    /// apart, so no window of one second ever holds more than `rate` of them.
    pub(crate) fn send_due(&self) -> bool {
        let interval = (1e6 / f64::from(self.config.rate.max(0.001))).ceil() as u64;
        self.last_send.is_none_or(|t| self.now - t >= interval)
    }

    /// Queues an encoded reliable message on `conn`, unless it is larger than
    /// [`wire::MAX_MESSAGE`]; returns its id on the connection (its last fragment's).
    pub(crate) fn push<T: serde::Serialize>(
        &mut self,
        conn: &mut Connection,
        msg: &T,
    ) -> Option<u32> {
        self.push_with(conn, msg, false)
    }

    /// [`push`](Self::push), for a message that goes again in every datagram until the
    /// peer acknowledges it (a claim: a resend's wait would cost its holder's state).
    pub(crate) fn push_eager<T: serde::Serialize>(
        &mut self,
        conn: &mut Connection,
        msg: &T,
    ) -> Option<u32> {
        self.push_with(conn, msg, true)
    }

    fn push_with<T: serde::Serialize>(
        &mut self,
        conn: &mut Connection,
        msg: &T,
        eager: bool,
    ) -> Option<u32> {
        match wire::encode_message(msg) {
            Ok(b) => Some(conn.push_reliable(b, eager)),
            Err(e) => {
                self.counters.oversized_messages += 1;
                tracing::error!("a reliable message was not sent: {e}");
                None
            }
        }
    }

    /// Queues datagrams to `to`.
    pub(crate) fn send_all(&mut self, to: SocketAddr, datagrams: Vec<Vec<u8>>) {
        self.outbox.extend(datagrams.into_iter().map(|d| (to, d)));
    }

    /// Says goodbye on `conn`, three times: it is unreliable, and the peer times out if all
    /// are lost. Tagged, so nobody else can end a session this way.
    pub(crate) fn goodbye(&mut self, conn: &Connection, reason: DisconnectReason) {
        let version = self.config.version;
        if let Ok(body) = wire::encode(&Bye { reason })
            && let Some(d) = conn.sealed(DatagramKind::Bye, version, &body)
        {
            for _ in 0..3 {
                self.outbox.push((conn.addr, d.clone()));
            }
        }
    }
}
