//! How much the link to one client carries: a rate (bytes a second, all of them: state,
//! reliable messages, headers) the server finds by probing, as congestion control does,
//! between a floor and the configured ceiling. What the server sends is held to it by a
//! credit: each broadcast adds the rate's share, each datagram spends its size, and
//! reliable messages and then state go only as far as the credit reaches.
//!
//! - **It starts low and grows fast**: from [`START`] bytes a second (or a quarter of the
//!   ceiling, if less) it doubles every round trip while the client is starved and no
//!   queue shows, as a slow start does. The first queue ends the slow start and halves
//!   the rate.
//! - **A queue backs it off.** When the round trip stands well above the least one seen
//!   (by half that floor plus [`QUEUE_MS`], for [`QUEUE_HOLD_US`] at least, so one late
//!   datagram is not a queue), datagrams wait somewhere: the rate drops by a fifth, at most
//!   once every two round trips, and at once to under what the client acknowledged receiving over
//!   the last half second (the link's rate, measured) if that is less and well under what
//!   was sent a round trip before, by a sender that used at least half its rate (one with
//!   little to send, on a link that loses some by chance, would read its own demand as the
//!   link's rate). A narrow link
//!   queues before it drops, so the server slows down before anything is lost.
//! - **Loss caps it.** The share of datagrams lost (as the peer's acks settle them) caps
//!   the rate at what a TCP flow would get over the same link (the TFRC equation, in its
//!   simple form: a full datagram per round trip, over the square root of two thirds of
//!   the loss; full-sized whatever the datagrams' size, as TFRC for small packets does,
//!   since a link drops datagrams, not bytes). A link that loses a few percent by chance
//!   keeps its rate; one that loses many is asked for less.
//! - **It grows back** while the client is starved and the link stays clear: a tenth of
//!   the rate a second, so it creeps up on a link's capacity rather than leaping past it.

use crate::wire::MAX_DATAGRAM;
use std::collections::VecDeque;

use crate::connection::Link;

/// A round trip this much (ms) above half again its floor is a queue.
const QUEUE_MS: f32 = 50.0;
/// Where a pace starts, bytes a second (32 kbit/s), unless a quarter of its ceiling is
/// less: low, so the first round trips measure the link and not a queue the server made.
const START: f32 = 4_000.0;
/// What a back-off keeps of the rate.
const BACK_OFF: f32 = 0.8;
/// How fast a starved client's rate grows on a clear link: this share of the rate a
/// second.
const GROWTH: f32 = 0.1;
/// How long (µs) the round trip must stand above the threshold to be a queue.
const QUEUE_HOLD_US: u64 = 150_000;
/// How long, at least, between two back-offs (µs), whatever the round trip.
const MIN_GAP_US: u64 = 200_000;
/// How many settled datagrams the loss share remembers (the weight of each is one over
/// this).
const LOSS_MEMORY: f32 = 64.0;
/// Settled datagrams before the loss share caps anything.
const LOSS_WARMUP: u32 = 32;
/// Over how long (µs) the rate the link delivered is measured.
const DELIVERY_WINDOW_US: u64 = 500_000;
/// The longest round trip (µs) the delivered rate is set against the sending by.
const DELIVERY_LAG_US: u64 = 1_000_000;
/// What a back-off keeps of the rate the link delivered: a little under, so a queue drains.
const UNDER_DELIVERED: f32 = 0.9;

/// The state rate for one client.
#[derive(Debug, Clone)]
pub(crate) struct Pace {
    /// Bytes of state a second this client may be sent now.
    rate: f32,
    /// The lowest round trip seen (ms): the link with no queue.
    floor_ms: Option<f32>,
    /// When it last backed off (µs).
    backed_off: Option<u64>,
    /// Since when (µs) the round trip has stood above the queue threshold.
    queued_since: Option<u64>,
    /// Until its first back-off it grows fast.
    slow_start: bool,
    /// When (µs) a slow start last doubled the rate.
    doubled: Option<u64>,
    /// The link's settled and lost datagrams at the last update.
    seen: (u32, u32),
    /// The share of datagrams lost, over about the last [`LOSS_MEMORY`].
    loss: f32,
    /// Bytes it may still send: negative after a datagram that overdrew it.
    credit: f32,
    /// Bytes sent in all.
    sent: u64,
    /// When (µs), how many bytes the link had delivered (acknowledged) in all and how many
    /// had been sent, over the last [`DELIVERY_WINDOW_US`] and [`DELIVERY_LAG_US`] before.
    deliveries: VecDeque<(u64, u64, u64)>,
    /// The last round trip (µs), at most [`DELIVERY_LAG_US`].
    ping_us: u64,
}

impl Pace {
    /// A pace toward `ceiling` bytes a second.
    pub(crate) fn new(ceiling: f32) -> Self {
        Pace {
            rate: START.min(0.25 * ceiling),
            doubled: None,
            floor_ms: None,
            backed_off: None,
            queued_since: None,
            slow_start: true,
            seen: (0, 0),
            loss: 0.0,
            credit: 0.0,
            sent: 0,
            deliveries: VecDeque::new(),
            ping_us: 0,
        }
    }

    /// Bytes a second the link delivered over the last [`DELIVERY_WINDOW_US`], once it
    /// has been measured that long, and only if that is well under what was sent a round
    /// trip (`rtt_us`) before each end of it (what is acknowledged now left a round trip
    /// ago): the link, not the sender, set it. (A sender that had little to send delivers
    /// little on any link; random loss keeps delivery within a few percent of the sending.
    /// Against what was sent over the same span, the bytes still in flight on a long
    /// round trip would read as the link's shortfall.)
    fn link_rate(&self, rtt_us: u64) -> Option<f32> {
        let last = self.deliveries.back()?;
        let start = last.0.saturating_sub(DELIVERY_WINDOW_US);
        let first = self.deliveries.iter().find(|d| d.0 >= start)?;
        let span = last.0.saturating_sub(first.0);
        // What had been sent by `t`, as of the last update at or before it.
        let sent_by = |t: u64| {
            let i = self.deliveries.partition_point(|d| d.0 <= t);
            (i > 0).then(|| self.deliveries[i - 1].2)
        };
        let sent = sent_by(last.0.saturating_sub(rtt_us))?
            .saturating_sub(sent_by(first.0.saturating_sub(rtt_us))?);
        let delivered = last.1 - first.1;
        // A sender that used less than half its rate had little to send: what it lost of
        // so little says nothing of what the link carries.
        let filled = sent as f32 >= 0.5 * self.rate * span as f32 / 1e6;
        let limited =
            span >= DELIVERY_WINDOW_US / 2 && filled && (delivered as f32) < 0.8 * sent as f32;
        limited.then(|| delivered as f32 / (span as f32 / 1e6))
    }

    /// A back-off: the rate times `keep`, and under the rate the link delivered.
    fn back_off(&mut self, keep: f32, now: u64) {
        let rtt_us = self.ping_us;
        let measured = self
            .link_rate(rtt_us)
            .map_or(f32::INFINITY, |d| UNDER_DELIVERED * d);
        self.rate = (self.rate * keep).min(measured);
        self.backed_off = Some(now);
        self.slow_start = false;
    }

    /// A broadcast, `dt` seconds after the last, adds the rate's share to the credit. What
    /// is not spent carries over up to two broadcasts' share and a datagram, so a short
    /// silence does not turn into a burst.
    pub(crate) fn refill(&mut self, dt: f32) {
        let share = self.rate * dt;
        self.credit = (self.credit + share).min(2.0 * share + MAX_DATAGRAM as f32);
    }

    /// The bytes it may send now.
    pub(crate) fn room(&self) -> usize {
        self.credit.max(0.0) as usize
    }

    /// Bytes sent.
    pub(crate) fn spend(&mut self, bytes: usize) {
        self.credit -= bytes as f32;
        self.sent += bytes as u64;
    }

    /// Bytes of state a second this client may be sent now.
    pub(crate) fn rate(&self) -> f32 {
        self.rate
    }

    /// One broadcast, `dt` seconds after the last, at `now` (µs): what the link showed,
    /// and whether the client was starved
    /// (changes it needs, or reliable messages, were held back for want of room). The rate stays within
    /// `floor..=ceiling`.
    pub(crate) fn update(
        &mut self,
        link: Link,
        starved: bool,
        (dt, now): (f32, u64),
        (floor, ceiling): (f32, f32),
    ) {
        let ping = link.ping_ms;
        self.ping_us = ((ping.max(0.0) * 1000.0) as u64).min(DELIVERY_LAG_US);
        if let Some(least) = link.least_ping_ms.or((ping > 0.0).then_some(ping)) {
            self.floor_ms = Some(self.floor_ms.map_or(least, |f| f.min(least)));
        }
        self.deliveries.push_back((now, link.delivered, self.sent));
        while self
            .deliveries
            .front()
            .is_some_and(|d| now.saturating_sub(d.0) > DELIVERY_WINDOW_US + DELIVERY_LAG_US)
        {
            self.deliveries.pop_front();
        }
        let settled = link.settled.wrapping_sub(self.seen.0);
        let lost = link.lost.wrapping_sub(self.seen.1);
        self.seen = (link.settled, link.lost);
        for i in 0..settled.min(LOSS_MEMORY as u32) {
            let l = if i < lost { 1.0 } else { 0.0 };
            self.loss += (l - self.loss) / LOSS_MEMORY;
        }
        let above = self.floor_ms.is_some_and(|f| ping > 1.5 * f + QUEUE_MS);
        // A queue stays; a late datagram (jitter, reordering) passes.
        self.queued_since = match above {
            true => self.queued_since.or(Some(now)),
            false => None,
        };
        let queued = self
            .queued_since
            .is_some_and(|t| now.saturating_sub(t) >= QUEUE_HOLD_US);
        // A back-off shows in the round trip a round trip later, and in its smoothed
        // value later still: the next waits two.
        let gap = ((2.0 * ping * 1000.0) as u64).max(MIN_GAP_US);
        let cap = self.loss_cap(link.settled, ping);
        if self.slow_start {
            if above || self.rate > cap {
                // It overshot by up to the last doubling.
                self.back_off(0.5, now);
            } else if starved
                && ping > 0.0
                && self
                    .doubled
                    .is_none_or(|t| now.saturating_sub(t) as f32 >= ping * 1000.0)
            {
                self.rate *= 2.0;
                self.doubled = Some(now);
            }
        } else if queued {
            if self.backed_off.is_none_or(|t| now.saturating_sub(t) >= gap) {
                self.back_off(BACK_OFF, now);
            }
        } else if starved && self.rate <= cap {
            self.rate *= 1.0 + GROWTH * dt;
        }
        self.rate = self.rate.min(cap).clamp(floor.min(ceiling), ceiling);
    }

    /// What the loss seen allows, bytes a second: a full datagram per round trip over
    /// `sqrt(2p/3)`. No cap before enough datagrams settled, nor without loss.
    fn loss_cap(&self, settled: u32, ping_ms: f32) -> f32 {
        if settled < LOSS_WARMUP || self.loss <= 0.0 || ping_ms <= 0.0 {
            return f32::INFINITY;
        }
        MAX_DATAGRAM as f32 / (ping_ms / 1000.0 * (2.0 * self.loss / 3.0).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: (f32, f32) = (64.0 * 30.0, 12_000.0);

    /// A link that has delivered 100 kB/s (more than any rate here) until `now`.
    fn link(ping_ms: f32, settled: u32, lost: u32, now: u64) -> Link {
        Link {
            ping_ms,
            least_ping_ms: None,
            settled,
            lost,
            delivered: now / 10,
        }
    }

    /// Runs a pace against a link of `capacity` bytes a second whose queue delay is what
    /// was sent beyond it (a crude bottleneck): returns the rates, one a broadcast.
    fn against(capacity: f32, seconds: f32) -> Vec<f32> {
        let mut p = Pace::new(12_000.0);
        let (mut queue_s, mut delivered, mut rates) = (0.0f32, 0.0, Vec::new());
        let dt = 1.0 / 30.0;
        for i in 0..(seconds / dt) as u64 {
            queue_s = (queue_s + (p.rate() - capacity) / capacity * dt).max(0.0);
            p.spend((p.rate() * dt) as usize);
            delivered += if queue_s > 0.0 { capacity } else { p.rate() } * dt;
            let ping = 10.0 + queue_s * 1000.0;
            let l = Link {
                delivered: delivered as u64,
                ..link(ping, 0, 0, 0)
            };
            p.update(l, true, (dt, i * 33_333), BOUNDS);
            rates.push(p.rate());
        }
        rates
    }

    #[test]
    fn a_clear_link_reaches_the_ceiling_within_a_second_and_keeps_it() {
        let rates = against(1e9, 10.0);
        // A quarter of the ceiling (less than the start), doubled at the first round trip.
        assert_eq!(rates[0], 6_000.0);
        assert!(rates[30..].iter().all(|r| *r == 12_000.0), "{rates:?}");
    }

    #[test]
    fn a_narrow_link_brings_the_rate_under_its_capacity_and_keeps_it_near() {
        let rates = against(8_000.0, 30.0);
        let last: Vec<f32> = rates[rates.len() - 300..].to_vec();
        let mean = last.iter().sum::<f32>() / last.len() as f32;
        assert!(mean < 8_000.0 && mean > 6_000.0, "mean {mean}: {last:?}");
    }

    #[test]
    fn a_queue_ends_the_slow_start_then_backs_off_once_in_two_round_trips() {
        let mut p = Pace::new(400_000.0);
        let b = (100.0, 100_000.0);
        let at = |t| (0.033, t);
        p.update(link(20.0, 0, 0, 0), true, at(0), b);
        assert_eq!(p.rate(), 8_000.0, "doubled");
        p.update(link(20.0, 0, 0, 10_000), true, at(10_000), b);
        assert_eq!(p.rate(), 8_000.0, "once a round trip");
        p.update(link(200.0, 0, 0, 33_000), true, at(33_000), b);
        assert_eq!(p.rate(), 4_000.0, "the first queue halves it");
        p.update(link(200.0, 0, 0, 66_000), false, at(66_000), b);
        assert_eq!(
            p.rate(),
            4_000.0,
            "after that, one late datagram is no queue"
        );
        p.update(link(200.0, 0, 0, 450_000), false, at(450_000), b);
        assert_eq!(p.rate(), 3_200.0);
        p.update(link(200.0, 0, 0, 800_000), false, at(800_000), b);
        assert_eq!(p.rate(), 3_200.0, "again within two round trips");
        p.update(link(200.0, 0, 0, 850_000), false, at(850_000), b);
        assert_eq!(p.rate(), 2_560.0);
    }

    #[test]
    fn a_sender_with_little_to_send_keeps_the_rate_its_loss_allows() {
        // 1.2 kB/s to send (60 B a broadcast, 20 a second) over a link that loses a
        // quarter of it by chance, with 160 ms round trips. The loss caps the rate (at about
        // 18 kB/s); what the link delivered of so little says nothing of what it carries,
        // and must not bring the rate down to it.
        let mut p = Pace::new(64_000.0);
        let (mut sent, mut settled, mut lost) = (0u64, 0u32, 0u32);
        for i in 0..80u64 {
            p.refill(0.05);
            p.spend(60);
            sent += 60;
            settled += 1;
            lost += u32::from(i % 4 == 0);
            let l = Link {
                ping_ms: 160.0,
                least_ping_ms: Some(150.0),
                settled,
                lost,
                delivered: sent * 3 / 4,
            };
            p.update(l, true, (0.05, i * 50_000), (2_000.0, 64_000.0));
        }
        assert!(p.rate() > 10_000.0, "{}", p.rate());
    }

    #[test]
    fn loss_caps_the_rate_by_how_much_is_lost() {
        // 400 ms round trips: 10% lost allows about 11.6 kB/s, 30% lost about 6.7 kB/s
        // (the share as remembered reads a little under the mean each time, as each
        // update's losses come first and its deliveries after).
        let run = |lost_per_ten: u32| {
            let mut p = Pace::new(40_000.0);
            let (mut settled, mut lost) = (0, 0);
            for i in 0..300u64 {
                settled += 10;
                lost += lost_per_ten;
                let l = link(400.0, settled, lost, i * 33_333);
                p.update(l, true, (1.0 / 30.0, i * 33_333), (2_000.0, 40_000.0));
            }
            p.rate()
        };
        assert_eq!(run(0), 40_000.0);
        let some = run(1);
        assert!(some > 10_500.0 && some < 12_500.0, "{some}");
        let heavy = run(3);
        assert!(heavy > 6_000.0 && heavy < 7_500.0, "{heavy}");
    }
}
