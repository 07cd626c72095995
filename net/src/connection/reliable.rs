//! The reliable, ordered channel: a send half that keeps messages until they are
//! acknowledged and says which are due (again), and a receive half that delivers each
//! message once and in order.

use std::collections::{BTreeMap, VecDeque};

/// How many reliable messages may be in flight past the oldest unacknowledged one.
pub(crate) const WINDOW: u32 = 4096;

#[derive(Clone)]
struct Outgoing {
    id: u32,
    bytes: Vec<u8>,
    first_sent: Option<u64>,
    last_sent: u64,
    /// How many times it was sent.
    sends: u32,
    acked: bool,
    /// Sent again in every datagram until acknowledged, not after a wait.
    eager: bool,
}

/// A message resent this many times waits the longest: each resend doubles the wait
/// before the next, up to `2^MAX_BACKOFF` times the first.
const MAX_BACKOFF: u32 = 3;

/// The send half.
#[derive(Default, Clone)]
pub(crate) struct ReliableSender {
    next_id: u32,
    queue: VecDeque<Outgoing>,
}

impl ReliableSender {
    /// Queues an encoded message; returns its id. An `eager` one goes again in every
    /// datagram until acknowledged, not after a wait (a small one whose lateness costs
    /// more than its bytes).
    pub(crate) fn push(&mut self, bytes: Vec<u8>, eager: bool) -> u32 {
        let id = self.next_id;
        self.queue.push_back(Outgoing {
            id: self.next_id,
            bytes,
            first_sent: None,
            last_sent: 0,
            sends: 0,
            acked: false,
            eager,
        });
        self.next_id = self.next_id.wrapping_add(1);
        id
    }

    /// Treats every message not yet acknowledged as never sent (they go to a new
    /// connection of the same session, which sends them at once).
    pub(crate) fn rearm(&mut self) {
        for m in self.queue.iter_mut().filter(|m| !m.acked) {
            m.first_sent = None;
            m.sends = 0;
        }
    }

    /// The messages not yet acknowledged, as a new sender whose peer has seen none (a new
    /// host after a migration): numbered again from 0, never sent.
    pub(crate) fn afresh(&self) -> ReliableSender {
        let mut s = ReliableSender::default();
        for m in self.queue.iter().filter(|m| !m.acked) {
            s.push(m.bytes.clone(), m.eager);
        }
        s
    }

    /// Whether message `id` (one this sender queued) and every message before it were
    /// acknowledged: the peer has then delivered it (delivery is in order).
    pub(crate) fn delivered_through(&self, id: u32) -> bool {
        match self.queue.front() {
            // The front is the oldest message not yet acknowledged.
            Some(front) => front.id.wrapping_sub(id).wrapping_sub(1) < u32::MAX / 2,
            None => id.wrapping_sub(self.next_id) > u32::MAX / 2,
        }
    }

    /// Messages not yet acknowledged.
    pub(crate) fn unacked(&self) -> usize {
        self.queue.len()
    }

    /// When the oldest unacknowledged message was first sent.
    pub(crate) fn oldest_sent(&self) -> Option<u64> {
        self.queue.front().and_then(|m| m.first_sent)
    }

    /// The indices of messages due at `now`: never sent, eager ones not sent at `now`
    /// yet, or unacknowledged for `resend_after` µs (twice that after a resend, four times after two, and so on up
    /// to eight times: a link that queues does not get the same messages over and over),
    /// and inside the window.
    pub(crate) fn due(&self, now: u64, resend_after: u64) -> VecDeque<usize> {
        let window_end = self
            .queue
            .front()
            .map_or(self.next_id, |m| m.id.wrapping_add(WINDOW));
        self.queue
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                !m.acked
                    && m.id.wrapping_sub(window_end) > u32::MAX / 2
                    && (m.first_sent.is_none()
                        || (m.eager && now > m.last_sent)
                        || now.saturating_sub(m.last_sent)
                            >= resend_after << m.sends.saturating_sub(1).min(MAX_BACKOFF))
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The encoded length of message `i`.
    pub(crate) fn len_of(&self, i: usize) -> usize {
        self.queue[i].bytes.len()
    }

    /// Marks message `i` sent at `now`; returns its id, bytes, and whether it is a resend.
    pub(crate) fn send(&mut self, i: usize, now: u64) -> (u32, &[u8], bool) {
        let m = &mut self.queue[i];
        let resend = m.first_sent.is_some();
        m.first_sent.get_or_insert(now);
        m.last_sent = now;
        m.sends += 1;
        (m.id, &m.bytes, resend)
    }

    /// Marks the messages with these (sorted) ids acknowledged and forgets the settled
    /// front of the queue.
    pub(crate) fn ack(&mut self, ids: &[u32]) {
        for m in self.queue.iter_mut() {
            if ids.binary_search(&m.id).is_ok() {
                m.acked = true;
            }
        }
        while self.queue.front().is_some_and(|m| m.acked) {
            self.queue.pop_front();
        }
    }
}

/// The receive half.
#[derive(Default, Clone)]
pub(crate) struct ReliableReceiver {
    next_expected: u32,
    held: BTreeMap<u32, Vec<u8>>,
}

impl ReliableReceiver {
    /// Takes in message `id`; appends to `deliver` every message now deliverable in order.
    pub(crate) fn receive(&mut self, id: u32, bytes: &[u8], deliver: &mut Vec<Vec<u8>>) {
        if id.wrapping_sub(self.next_expected) >= WINDOW {
            // Already delivered (or absurdly far ahead): the ack covers it either way.
            return;
        }
        self.held.entry(id).or_insert_with(|| bytes.to_vec());
        while let Some(m) = self.held.remove(&self.next_expected) {
            deliver.push(m);
            self.next_expected = self.next_expected.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eager_message_goes_in_every_datagram_until_acked_and_a_plain_one_waits() {
        let mut s = ReliableSender::default();
        let plain = s.push(vec![1], false);
        let eager = s.push(vec![2], true);
        assert_eq!(s.due(0, 200_000), [0, 1]);
        s.send(0, 0);
        s.send(1, 0);
        assert!(s.due(0, 200_000).is_empty(), "once per datagram");
        // The next datagram, 50 ms on: the eager one again, the plain one not yet.
        assert_eq!(s.due(50_000, 200_000), [1]);
        s.send(1, 50_000);
        s.ack(&[eager]);
        assert!(s.due(100_000, 200_000).is_empty(), "acknowledged");
        assert_eq!(s.due(200_000, 200_000), [0]);
        s.ack(&[plain]);
        assert!(s.due(900_000, 200_000).is_empty());
    }

    #[test]
    fn messages_are_due_until_acked_and_delivered_once_in_order() {
        let mut s = ReliableSender::default();
        for i in 0..3u8 {
            s.push(vec![i], false);
        }
        assert_eq!(s.due(0, 100).len(), 3);
        for i in 0..3 {
            s.send(i, 0);
        }
        assert!(
            s.due(50, 100).is_empty(),
            "not due again before the resend time"
        );
        assert_eq!(s.due(100, 100).len(), 3);
        for i in 0..3 {
            s.send(i, 100);
        }
        assert!(s.due(250, 100).is_empty(), "a resend waits twice as long");
        assert_eq!(s.due(300, 100), [0, 1, 2]);
        s.ack(&[0, 2]);
        assert_eq!(s.unacked(), 2, "message 1 holds the queue");
        assert!(s.delivered_through(0));
        assert!(
            !s.delivered_through(2),
            "acknowledged, but 1 is not: not delivered yet"
        );
        s.ack(&[1]);
        assert_eq!(s.unacked(), 0);
        assert!(s.delivered_through(2));
        assert!(!s.delivered_through(3), "never sent");

        let mut r = ReliableReceiver::default();
        let mut got = Vec::new();
        r.receive(1, &[1], &mut got);
        assert!(got.is_empty());
        r.receive(0, &[0], &mut got);
        r.receive(0, &[0], &mut got);
        r.receive(2, &[2], &mut got);
        assert_eq!(got, vec![vec![0], vec![1], vec![2]]);
    }
}
