//! The reliable, ordered channel: a send half that keeps messages until they are
//! acknowledged and says which are due (again), and a receive half that delivers each
//! message once and in order.
//!
//! A message larger than one datagram's room travels as fragments: consecutive ids, each
//! but the last marked `more`. Delivery is in order, so the receiver only appends each
//! fragment to the message it is putting together, and hands the message on with its last
//! fragment. A message is never larger than [`MAX_MESSAGE`]:
//! the sender refuses one, and the receiver drops the fragments of one, so what a peer
//! holds per connection stays bounded (the window's fragments and one message).

use crate::wire::{Fragment, MAX_FRAGMENT, MAX_MESSAGE};
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
    /// More fragments of the same message follow.
    more: bool,
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
    /// Queues an encoded message (of at most [`MAX_MESSAGE`] bytes: the caller checks),
    /// as fragments of at most [`MAX_FRAGMENT`] bytes if it is larger; returns the id of
    /// its last fragment, which is delivered when the whole message is. An `eager` one goes
    /// again in every datagram until acknowledged, not after a wait (a small one whose
    /// lateness costs more than its bytes).
    pub(crate) fn push(&mut self, bytes: Vec<u8>, eager: bool) -> u32 {
        debug_assert!(bytes.len() <= MAX_MESSAGE);
        if bytes.len() <= MAX_FRAGMENT {
            return self.push_fragment(bytes, eager, false);
        }
        let mut pieces = bytes.chunks(MAX_FRAGMENT).peekable();
        let mut id = self.next_id;
        while let Some(piece) = pieces.next() {
            id = self.push_fragment(piece.to_vec(), eager, pieces.peek().is_some());
        }
        id
    }

    fn push_fragment(&mut self, bytes: Vec<u8>, eager: bool, more: bool) -> u32 {
        let id = self.next_id;
        self.queue.push_back(Outgoing {
            id,
            bytes,
            first_sent: None,
            last_sent: 0,
            sends: 0,
            acked: false,
            eager,
            more,
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
    /// host after a migration): numbered again from 0, never sent. A message goes whole,
    /// with the fragments of it the old peer acknowledged (the queue keeps a message's
    /// fragments until all are).
    pub(crate) fn afresh(&self) -> ReliableSender {
        let mut s = ReliableSender::default();
        let mut message = Vec::new();
        for m in &self.queue {
            message.push(m);
            if m.more {
                continue;
            }
            if message.iter().any(|f| !f.acked) {
                for f in &message {
                    s.push_fragment(f.bytes.clone(), f.eager, f.more);
                }
            }
            message.clear();
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

    /// Whether message `id` (the last fragment of one this sender queued) was
    /// acknowledged, each of its fragments, whether or not every message before it was:
    /// what [`afresh`](Self::afresh) leaves behind.
    pub(crate) fn acknowledged(&self, id: u32) -> bool {
        if self.delivered_through(id) {
            return true;
        }
        let Some(last) = self.queue.iter().position(|m| m.id == id) else {
            return false;
        };
        // Back to the message's first fragment: the one after a fragment with no more.
        let first = self
            .queue
            .range(..last)
            .rposition(|m| !m.more)
            .map_or(0, |p| p + 1);
        self.queue.range(first..=last).all(|m| m.acked)
    }

    /// Messages not yet acknowledged.
    pub(crate) fn unacked(&self) -> usize {
        self.queue.len()
    }

    /// The bytes of the messages not yet acknowledged.
    pub(crate) fn unacked_bytes(&self) -> usize {
        self.queue.iter().map(|m| m.bytes.len()).sum()
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

    /// Marks message `i` sent at `now`; returns it and whether it is a resend.
    pub(crate) fn send(&mut self, i: usize, now: u64) -> (Fragment<'_>, bool) {
        let m = &mut self.queue[i];
        let resend = m.first_sent.is_some();
        m.first_sent.get_or_insert(now);
        m.last_sent = now;
        m.sends += 1;
        let fragment = Fragment {
            id: m.id,
            more: m.more,
            bytes: &m.bytes,
        };
        (fragment, resend)
    }

    /// Marks the messages with these (sorted) ids acknowledged and forgets the settled
    /// front of the queue: whole messages, all of whose fragments were acknowledged.
    pub(crate) fn ack(&mut self, ids: &[u32]) {
        for m in self.queue.iter_mut() {
            if ids.binary_search(&m.id).is_ok() {
                m.acked = true;
            }
        }
        // Up to the last whole message in the acknowledged front.
        let settled = self
            .queue
            .iter()
            .take_while(|m| m.acked)
            .enumerate()
            .filter(|(_, m)| !m.more)
            .last();
        if let Some((last, _)) = settled {
            self.queue.drain(..=last);
        }
    }
}

/// The receive half.
#[derive(Default, Clone)]
pub(crate) struct ReliableReceiver {
    next_expected: u32,
    /// Fragments that came ahead of one still missing, with their `more` flags.
    held: BTreeMap<u32, (Vec<u8>, bool)>,
    /// The message being put together from its fragments so far.
    partial: Vec<u8>,
    /// The message being put together grew past [`MAX_MESSAGE`]: its fragments are
    /// dropped up to its last.
    dropping: bool,
}

impl ReliableReceiver {
    /// Takes in a message or fragment; appends to `deliver` every message now deliverable
    /// in order. Returns how many messages it dropped for being larger than
    /// [`MAX_MESSAGE`] (a peer of ours never sends one).
    pub(crate) fn receive(&mut self, f: Fragment<'_>, deliver: &mut Vec<Vec<u8>>) -> u32 {
        if f.id.wrapping_sub(self.next_expected) >= WINDOW || f.bytes.len() > MAX_FRAGMENT {
            // Already delivered (or absurdly far ahead): the ack covers it either way.
            return 0;
        }
        self.held
            .entry(f.id)
            .or_insert_with(|| (f.bytes.to_vec(), f.more));
        let mut dropped = 0;
        while let Some((bytes, more)) = self.held.remove(&self.next_expected) {
            self.next_expected = self.next_expected.wrapping_add(1);
            if !self.dropping && self.partial.len() + bytes.len() > MAX_MESSAGE {
                self.dropping = true;
                self.partial = Vec::new();
                dropped += 1;
            }
            if !self.dropping {
                if self.partial.is_empty() && !more {
                    deliver.push(bytes);
                    continue;
                }
                self.partial.extend_from_slice(&bytes);
            }
            if !more {
                self.dropping = false;
                if !self.partial.is_empty() {
                    deliver.push(std::mem::take(&mut self.partial));
                }
            }
        }
        dropped
    }

    /// The bytes it holds: fragments ahead of one missing, and the message being put
    /// together.
    pub(crate) fn held_bytes(&self) -> usize {
        self.held.values().map(|(b, _)| b.len()).sum::<usize>() + self.partial.len()
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
        let whole = |id: u32, bytes: &'static [u8]| Fragment {
            id,
            more: false,
            bytes,
        };
        r.receive(whole(1, &[1]), &mut got);
        assert!(got.is_empty());
        r.receive(whole(0, &[0]), &mut got);
        r.receive(whole(0, &[0]), &mut got);
        r.receive(whole(2, &[2]), &mut got);
        assert_eq!(got, vec![vec![0], vec![1], vec![2]]);
    }

    /// Sends every due fragment of `s` to `r` in the order `order` gives their positions
    /// in the due list; what `r` delivers.
    fn carry(s: &mut ReliableSender, r: &mut ReliableReceiver, order: &[usize]) -> Vec<Vec<u8>> {
        let due = s.due(0, 100);
        let mut fragments = Vec::new();
        for &i in &due {
            let (f, _) = s.send(i, 0);
            fragments.push((f.id, f.more, f.bytes.to_vec()));
        }
        let mut got = Vec::new();
        for &k in order {
            let (id, more, bytes) = &fragments[k];
            let f = Fragment {
                id: *id,
                more: *more,
                bytes,
            };
            assert_eq!(r.receive(f, &mut got), 0);
        }
        got
    }

    #[test]
    fn a_large_message_goes_as_fragments_and_arrives_whole_in_its_place() {
        let big: Vec<u8> = (0..3 * MAX_FRAGMENT + 7)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let mut s = ReliableSender::default();
        s.push(vec![1], false);
        let last = s.push(big.clone(), false);
        s.push(vec![2], false);
        assert_eq!(last, 4, "four fragments after the first message");
        assert_eq!(s.unacked(), 6);
        let mut r = ReliableReceiver::default();
        // Backwards, with the big one's pieces shuffled: nothing is delivered early.
        let got = carry(&mut s, &mut r, &[5, 3, 1, 4, 2]);
        assert!(got.is_empty(), "message 0 is missing: nothing goes");
        let mut got = Vec::new();
        r.receive(
            Fragment {
                id: 0,
                more: false,
                bytes: &[1],
            },
            &mut got,
        );
        assert_eq!(got, vec![vec![1], big, vec![2]]);
    }

    #[test]
    fn a_message_is_settled_and_carried_to_a_new_host_whole() {
        let big = vec![9u8; 2 * MAX_FRAGMENT + 1];
        let mut s = ReliableSender::default();
        let first = s.push(big.clone(), false);
        s.push(vec![3], false);
        for i in s.due(0, 100) {
            s.send(i, 0);
        }
        // Its first two fragments and the small message acknowledged: the big one is
        // not, and the queue keeps all of it.
        s.ack(&[0, 1, 3]);
        assert!(!s.delivered_through(first));
        assert_eq!(s.unacked(), 4);
        // The small one is acknowledged itself, though not delivered (the big one is ahead
        // of it): what a new host is not given.
        assert!(s.acknowledged(3));
        assert!(!s.delivered_through(3));
        assert!(!s.acknowledged(first));
        // A new host gets it whole (and not the small one, acknowledged).
        let mut fresh = s.afresh();
        let mut r = ReliableReceiver::default();
        let got = carry(&mut fresh, &mut r, &[0, 1, 2]);
        assert_eq!(got, vec![big]);
        // Its last fragment acknowledged: all of it is settled.
        s.ack(&[2]);
        assert!(s.delivered_through(first));
        assert!(s.acknowledged(first));
        assert_eq!(s.unacked(), 0);
    }

    #[test]
    fn fragments_of_a_message_over_the_cap_are_dropped_and_memory_stays_bounded() {
        let mut r = ReliableReceiver::default();
        let piece = vec![5u8; MAX_FRAGMENT];
        let mut got = Vec::new();
        let pieces = MAX_MESSAGE / MAX_FRAGMENT + 2;
        let mut dropped = 0;
        for id in 0..pieces as u32 {
            let more = id + 1 < pieces as u32;
            dropped += r.receive(
                Fragment {
                    id,
                    more,
                    bytes: &piece,
                },
                &mut got,
            );
            assert!(r.held_bytes() <= MAX_MESSAGE);
        }
        assert_eq!((dropped, got.len()), (1, 0), "one message dropped whole");
        // The next message is delivered as usual.
        r.receive(
            Fragment {
                id: pieces as u32,
                more: false,
                bytes: &[4],
            },
            &mut got,
        );
        assert_eq!(got, vec![vec![4]]);
        // A fragment longer than any sender makes is not held.
        let long = vec![0u8; MAX_FRAGMENT + 1];
        let f = Fragment {
            id: pieces as u32 + 2,
            more: false,
            bytes: &long,
        };
        r.receive(f, &mut got);
        assert!(r.held.is_empty());
    }
}
