//! Transports: how datagrams leave and arrive. The NetManager never touches one; the code
//! that drives it moves datagrams between the two.
//!
//! * [`Hub`]: an in-memory network for tests. Deterministic, instantaneous.
//! * [`Conditioned`]: wraps any transport with seeded latency, jitter, loss, duplication
//!   and reordering. The same seed gives the same run; time passes only through
//!   [`Transport::advance`].
//! * [`crate::udp::UdpTransport`]: real UDP sockets through message-io.

use lanyard::SeededRng;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

/// Something that sends and receives datagrams.
pub trait Transport {
    /// The address peers reach this transport at.
    fn local_addr(&self) -> SocketAddr;
    /// Sends one datagram (best effort, like UDP).
    fn send(&mut self, to: SocketAddr, bytes: &[u8]);
    /// The next received datagram, if any. Never blocks.
    fn recv(&mut self) -> Option<(SocketAddr, Vec<u8>)>;
    /// The next received datagram and how long ago it arrived, for a round trip measured
    /// on the wire rather than from one frame to another (see
    /// [`NetManager::receive_aged`](crate::NetManager::receive_aged)). Transports that do
    /// not know say it arrived just now: so do the hub's endpoints, whose peers step in
    /// turn.
    fn recv_aged(&mut self) -> Option<(SocketAddr, Vec<u8>, Duration)> {
        self.recv()
            .map(|(from, bytes)| (from, bytes, Duration::ZERO))
    }
    /// Lets `dt` seconds pass, for transports that hold datagrams back. Real sockets ignore it.
    fn advance(&mut self, dt: f32) {
        let _ = dt;
    }
    /// Waits up to `timeout` for a datagram, for a real-time loop with time to spare.
    /// Transports with no real time (the hub) return at once.
    fn wait(&mut self, timeout: std::time::Duration) {
        let _ = timeout;
    }
    /// Whether the peer at `peer`, heard through this transport, could host a game (take
    /// it over if its host went): true for a socket's peers; false for a page behind a
    /// data channel, which only its host can reach.
    fn can_host(&self, peer: SocketAddr) -> bool {
        let _ = peer;
        true
    }
    /// What a [`Conditioned`] transport did to the datagrams it sent; `None` for others.
    fn conditioner_stats(&self) -> Option<ConditionerStats> {
        None
    }
    /// The transport's own clock now, on which [`recv_aged`](Self::recv_aged)'s ages are
    /// measured: a real socket's (time since some instant); `None` for transports whose
    /// time is only what [`advance`](Self::advance) lets pass (the hub, a conditioner).
    /// A game gives the network this clock's steps
    /// ([`NetManager::update`](crate::NetManager::update)'s `dt`), so that what it stamps
    /// on the wire is when datagrams really leave and arrive.
    fn wall_clock(&self) -> Option<Duration> {
        None
    }
}

#[derive(Default)]
struct HubInner {
    queues: HashMap<SocketAddr, VecDeque<(SocketAddr, Vec<u8>)>>,
    delivered: u64,
    undeliverable: u64,
    /// Every datagram sent on the hub since the tap was put on: (from, to, bytes).
    tap: Option<Vec<Tapped>>,
}

/// A datagram a [`Hub`]'s tap saw: who sent it, to whom, and its bytes.
pub type Tapped = (SocketAddr, SocketAddr, Vec<u8>);

/// An in-memory network: endpoints registered on one hub exchange datagrams instantly and
/// in order. Combine with [`Conditioned`] for a bad network.
#[derive(Clone, Default)]
pub struct Hub {
    inner: Rc<RefCell<HubInner>>,
}

impl Hub {
    /// An empty hub.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new endpoint at `addr` (any address: nothing leaves the process).
    pub fn endpoint(&self, addr: SocketAddr) -> HubEndpoint {
        self.inner.borrow_mut().queues.entry(addr).or_default();
        HubEndpoint {
            hub: self.clone(),
            addr,
        }
    }

    /// Datagrams handed to an existing endpoint so far.
    pub fn delivered(&self) -> u64 {
        self.inner.borrow().delivered
    }

    /// Datagrams sent to an address no endpoint has.
    pub fn undeliverable(&self) -> u64 {
        self.inner.borrow().undeliverable
    }

    /// Puts a tap on the hub: from now on it keeps a copy of every datagram sent on it, as
    /// a third host on a LAN that reads every datagram would (see [`tapped`](Self::tapped)).
    pub fn tap(&self) {
        self.inner.borrow_mut().tap.get_or_insert_with(Vec::new);
    }

    /// What the tap saw since it was put on (or since the last call), in the order sent.
    pub fn tapped(&self) -> Vec<Tapped> {
        self.inner
            .borrow_mut()
            .tap
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }
}

/// One endpoint of a [`Hub`].
pub struct HubEndpoint {
    hub: Hub,
    addr: SocketAddr,
}

impl Transport for HubEndpoint {
    fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    fn send(&mut self, to: SocketAddr, bytes: &[u8]) {
        let mut inner = self.hub.inner.borrow_mut();
        if let Some(tap) = &mut inner.tap {
            tap.push((self.addr, to, bytes.to_vec()));
        }
        match inner.queues.get_mut(&to) {
            Some(q) => {
                q.push_back((self.addr, bytes.to_vec()));
                inner.delivered += 1;
            }
            None => inner.undeliverable += 1,
        }
    }

    fn recv(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.hub
            .inner
            .borrow_mut()
            .queues
            .get_mut(&self.addr)?
            .pop_front()
    }
}

impl Drop for HubEndpoint {
    fn drop(&mut self) {
        self.hub.inner.borrow_mut().queues.remove(&self.addr);
    }
}

/// How bad a [`Conditioned`] link is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conditions {
    /// Base one-way delay, seconds.
    pub latency: f32,
    /// Extra delay drawn uniformly from `[-jitter, jitter]`, seconds (never below zero in
    /// total). Jitter reorders datagrams by itself.
    pub jitter: f32,
    /// Probability a datagram is dropped.
    pub loss: f32,
    /// Probability a datagram is delivered twice (the copy with its own delay).
    pub duplicate: f32,
    /// Probability a datagram is held back an extra `latency`, to force reordering.
    pub reorder: f32,
    /// Probability a datagram arrives corrupted: one to three of its bytes changed.
    pub corrupt: f32,
    /// The link's capacity, bytes a second (0: unlimited). Datagrams leave one after
    /// another at this rate, waiting in a queue behind the ones before: a link that is
    /// asked for more than it carries delays, then drops.
    pub bandwidth: f32,
    /// How long (seconds) the queue in front of a limited link may grow: a datagram that
    /// would wait longer is dropped (a router's buffer, full).
    pub queue: f32,
}

impl Conditions {
    /// A perfect link.
    pub const PERFECT: Conditions = Conditions {
        latency: 0.0,
        jitter: 0.0,
        loss: 0.0,
        duplicate: 0.0,
        reorder: 0.0,
        corrupt: 0.0,
        bandwidth: 0.0,
        queue: 0.2,
    };
}

/// Counters of what a [`Conditioned`] transport did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConditionerStats {
    /// Datagrams handed to it.
    pub sent: u64,
    /// Datagrams it dropped.
    pub dropped: u64,
    /// Extra copies it made.
    pub duplicated: u64,
    /// Datagrams it held back to reorder them.
    pub reordered: u64,
    /// Datagrams it corrupted.
    pub corrupted: u64,
    /// Of the dropped, those a limited link's full queue dropped.
    pub overflowed: u64,
    /// Bytes it let onto the link (duplicates counted once).
    pub bytes: u64,
}

/// Wraps a transport: outgoing datagrams are delayed, jittered, dropped, corrupted,
/// duplicated and reordered as [`Conditions`] say, drawing from a seeded generator. Incoming datagrams
/// pass straight through (condition both ends for a bad link both ways).
pub struct Conditioned<T> {
    inner: T,
    conditions: Conditions,
    rng: SeededRng,
    now_us: u64,
    order: u64,
    held: BTreeMap<(u64, u64), (SocketAddr, Vec<u8>)>,
    stats: ConditionerStats,
    /// When a limited link has sent everything queued so far (µs).
    link_free_us: u64,
}

impl<T: Transport> Conditioned<T> {
    /// Wraps `inner`.
    pub fn new(inner: T, conditions: Conditions, seed: u64) -> Self {
        Conditioned {
            inner,
            conditions,
            rng: SeededRng::new(seed),
            now_us: 0,
            order: 0,
            held: BTreeMap::new(),
            stats: ConditionerStats::default(),
            link_free_us: 0,
        }
    }

    /// Changes the conditions from now on.
    pub fn set_conditions(&mut self, conditions: Conditions) {
        self.conditions = conditions;
    }

    /// What it did so far.
    pub fn stats(&self) -> ConditionerStats {
        self.stats
    }

    /// The wrapped transport.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// A limited link: when `len` more bytes would have left it (µs from now), or `None`
    /// if its queue is too long to take them.
    fn queue_for(&mut self, len: usize) -> Option<u64> {
        let c = self.conditions;
        if c.bandwidth <= 0.0 {
            return Some(0);
        }
        let start = self.link_free_us.max(self.now_us);
        if (start - self.now_us) as f32 / 1e6 > c.queue {
            return None;
        }
        self.link_free_us = start + (len as f64 / f64::from(c.bandwidth) * 1e6).round() as u64;
        Some(self.link_free_us - self.now_us)
    }

    fn hold(&mut self, to: SocketAddr, bytes: &[u8], queued_us: u64) {
        let c = self.conditions;
        let mut delay =
            c.latency + self.rng.range_f32(-c.jitter, c.jitter) + queued_us as f32 / 1e6;
        if c.reorder > 0.0 && self.rng.chance(c.reorder) {
            delay += c.latency.max(0.01);
            self.stats.reordered += 1;
        }
        let at = self.now_us + (delay.max(0.0) * 1e6) as u64;
        self.order += 1;
        self.held.insert((at, self.order), (to, bytes.to_vec()));
    }

    fn flush(&mut self) {
        while let Some(entry) = self.held.first_entry() {
            if entry.key().0 > self.now_us {
                break;
            }
            let (to, bytes) = entry.remove();
            self.inner.send(to, &bytes);
        }
    }
}

impl<T: Transport> Transport for Conditioned<T> {
    fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr()
    }

    fn can_host(&self, peer: SocketAddr) -> bool {
        self.inner.can_host(peer)
    }

    fn send(&mut self, to: SocketAddr, bytes: &[u8]) {
        self.stats.sent += 1;
        if self.rng.chance(self.conditions.loss) {
            self.stats.dropped += 1;
            return;
        }
        // No draw at all without corruption, so seeded runs stay as they were.
        let mut mangled;
        let mut bytes = bytes;
        if self.conditions.corrupt > 0.0
            && !bytes.is_empty()
            && self.rng.chance(self.conditions.corrupt)
        {
            self.stats.corrupted += 1;
            mangled = bytes.to_vec();
            for _ in 0..1 + self.rng.below(3) {
                let i = self.rng.below(mangled.len() as u32) as usize;
                mangled[i] ^= 1 + self.rng.below(255) as u8;
            }
            bytes = &mangled;
        }
        let Some(queued_us) = self.queue_for(bytes.len()) else {
            self.stats.dropped += 1;
            self.stats.overflowed += 1;
            return;
        };
        self.stats.bytes += bytes.len() as u64;
        self.hold(to, bytes, queued_us);
        if self.rng.chance(self.conditions.duplicate) {
            self.stats.duplicated += 1;
            self.hold(to, bytes, queued_us);
        }
        self.flush();
    }

    fn recv(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.inner.recv()
    }

    fn recv_aged(&mut self) -> Option<(SocketAddr, Vec<u8>, Duration)> {
        self.inner.recv_aged()
    }

    fn advance(&mut self, dt: f32) {
        self.now_us += (f64::from(dt) * 1e6).round() as u64;
        self.flush();
        self.inner.advance(dt);
    }

    fn conditioner_stats(&self) -> Option<ConditionerStats> {
        Some(self.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    /// A conditioned sender on port 1 (seeded with `seed`) and the receiver on port 2.
    fn link(c: Conditions, seed: u64) -> (Conditioned<HubEndpoint>, HubEndpoint) {
        let hub = Hub::new();
        let rx = hub.endpoint(a(2));
        (Conditioned::new(hub.endpoint(a(1)), c, seed), rx)
    }

    fn run(seed: u64) -> (Vec<Vec<u8>>, ConditionerStats) {
        let c = Conditions {
            latency: 0.05,
            jitter: 0.02,
            loss: 0.2,
            duplicate: 0.1,
            corrupt: 0.0,
            reorder: 0.1,
            ..Conditions::PERFECT
        };
        let (mut tx, mut rx) = link(c, seed);
        let mut got = Vec::new();
        for i in 0..200u8 {
            tx.send(a(2), &[i]);
            tx.advance(0.01);
            while let Some((_, b)) = rx.recv() {
                got.push(b);
            }
        }
        tx.advance(1.0);
        while let Some((_, b)) = rx.recv() {
            got.push(b);
        }
        (got, tx.stats())
    }

    #[test]
    fn the_same_seed_gives_the_same_run_and_the_conditions_show() {
        let (x, sx) = run(5);
        let (y, _) = run(5);
        let (z, _) = run(6);
        assert_eq!(x, y);
        assert_ne!(x, z);
        assert!(sx.dropped > 10 && sx.dropped < 80, "{sx:?}");
        assert!(sx.duplicated > 0 && sx.reordered > 0);
        assert_eq!(x.len() as u64, sx.sent - sx.dropped + sx.duplicated);
        assert!(x.windows(2).any(|w| w[0] > w[1]), "nothing was reordered");
    }

    #[test]
    fn nothing_arrives_before_its_latency() {
        let latency = Conditions {
            latency: 0.1,
            ..Conditions::PERFECT
        };
        let (mut tx, mut rx) = link(latency, 1);
        tx.send(a(2), b"x");
        tx.advance(0.099);
        assert!(rx.recv().is_none());
        tx.advance(0.002);
        assert_eq!(rx.recv().unwrap().1, b"x");
    }

    #[test]
    fn a_limited_link_delays_what_it_cannot_carry_at_once_then_drops() {
        // 10 000 bytes a second with a 0.1 s queue: 1000 bytes take 0.1 s to leave.
        let narrow = Conditions {
            bandwidth: 10_000.0,
            queue: 0.1,
            ..Conditions::PERFECT
        };
        let (mut tx, mut rx) = link(narrow, 1);
        let d = [0u8; 500];
        for _ in 0..4 {
            tx.send(a(2), &d);
        }
        // The first leaves after 50 ms, the second after 100, the third after 150; the
        // fourth would wait 150 ms in the queue: dropped.
        assert_eq!(tx.stats().overflowed, 1);
        let mut arrivals = Vec::new();
        for ms in 1..=200 {
            tx.advance(0.001);
            while rx.recv().is_some() {
                arrivals.push(ms);
            }
        }
        assert_eq!(arrivals, vec![50, 100, 150]);
        assert_eq!(tx.stats().bytes, 1500);
    }
}
