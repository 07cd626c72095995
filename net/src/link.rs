//! One peer's link: datagram sequence numbers and acks, the reliable channel, and the
//! counters. Sans-IO: every method takes the current time in microseconds.

use crate::wire::{self, DataHeader};
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;

/// How many reliable messages may be in flight past the oldest unacknowledged one.
pub const RELIABLE_WINDOW: u32 = 4096;

/// Counters for one peer, readable through the API.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PeerStats {
    /// Datagrams received.
    pub packets_in: u64,
    /// Datagrams sent.
    pub packets_out: u64,
    /// Bytes received.
    pub bytes_in: u64,
    /// Bytes sent.
    pub bytes_out: u64,
    /// Reliable messages sent again because no ack came in time.
    pub resends: u64,
    /// Datagrams that could not be decoded.
    pub bad_datagrams: u64,
    /// Datagrams received twice.
    pub duplicates: u64,
    /// Sections skipped because their datagram was older than one already applied.
    pub dropped_stale: u64,
    /// Sections for entities that do not exist (here).
    pub dropped_unknown_entity: u64,
    /// Sections for entities the peer does not own.
    pub dropped_not_owner: u64,
    /// Sections the entity's validation hook judged illegal.
    pub dropped_illegal: u64,
    /// Corrections: on a server, sent to this client; on a client, received.
    pub corrections: u64,
    /// Reliable messages that were not acceptable (wrong direction, bad content).
    pub refused_messages: u64,
    /// Smoothed round-trip time in milliseconds (0 until the first ack).
    pub rtt_ms: f32,
    /// Estimated fraction of datagrams to this peer that are lost (0 to 1).
    pub loss: f32,
}

/// Datagram sequence bookkeeping for what we received: the newest seq and a bitmask of the
/// 32 before it.
#[derive(Debug, Default, Clone)]
struct Received {
    latest: Option<u32>,
    bits: u32,
}

impl Received {
    /// Records `seq`; returns false if it was seen already (or is too old to tell).
    fn record(&mut self, seq: u32) -> bool {
        let Some(latest) = self.latest else {
            self.latest = Some(seq);
            return true;
        };
        if seq == latest {
            return false;
        }
        if seq.wrapping_sub(latest) < u32::MAX / 2 {
            // Newer.
            let shift = seq.wrapping_sub(latest);
            self.bits = if shift > 32 {
                0
            } else {
                (self.bits << 1 | 1) << (shift - 1)
            };
            self.latest = Some(seq);
            true
        } else {
            let back = latest.wrapping_sub(seq);
            if back > 32 {
                return false;
            }
            let bit = 1 << (back - 1);
            let fresh = self.bits & bit == 0;
            self.bits |= bit;
            fresh
        }
    }

    fn header(&self) -> (u32, u32) {
        (self.latest.unwrap_or(u32::MAX), self.bits)
    }
}

struct Outgoing {
    id: u32,
    bytes: Vec<u8>,
    first_sent: Option<u64>,
    last_sent: u64,
    acked: bool,
}

struct Sent {
    seq: u32,
    at: u64,
    messages: Vec<u32>,
    acked: bool,
}

/// One peer's link.
pub struct Link {
    /// Where the peer is.
    pub addr: SocketAddr,
    next_seq: u32,
    received: Received,
    sent: VecDeque<Sent>,
    next_msg_id: u32,
    outgoing: VecDeque<Outgoing>,
    next_expected: u32,
    incoming: BTreeMap<u32, Vec<u8>>,
    /// The newest broadcast frame whose sections were applied.
    pub latest_frame: Option<u32>,
    /// Our broadcast counter towards this peer.
    pub frame_out: u32,
    /// When we last heard from the peer (µs).
    pub last_heard: u64,
    /// When we last sent to the peer (µs).
    pub last_sent: u64,
    /// Consecutive undecodable datagrams.
    pub bad_streak: u32,
    srtt_us: Option<f32>,
    /// The counters.
    pub stats: PeerStats,
}

impl Link {
    /// A fresh link to `addr`, heard from at `now`.
    pub fn new(addr: SocketAddr, now: u64) -> Self {
        Link {
            addr,
            next_seq: 0,
            received: Received::default(),
            sent: VecDeque::new(),
            next_msg_id: 0,
            outgoing: VecDeque::new(),
            next_expected: 0,
            incoming: BTreeMap::new(),
            latest_frame: None,
            frame_out: 0,
            last_heard: now,
            last_sent: now,
            bad_streak: 0,
            srtt_us: None,
            stats: PeerStats::default(),
        }
    }

    /// Queues a reliable message (already encoded).
    pub fn push_reliable(&mut self, bytes: Vec<u8>) {
        self.outgoing.push_back(Outgoing {
            id: self.next_msg_id,
            bytes,
            first_sent: None,
            last_sent: 0,
            acked: false,
        });
        self.next_msg_id = self.next_msg_id.wrapping_add(1);
    }

    /// Reliable messages not yet acknowledged.
    pub fn unacked(&self) -> usize {
        self.outgoing.len()
    }

    /// How long to wait for an ack before resending: 1.5 round trips, at least 50 ms, and
    /// 200 ms until a round trip has been measured.
    pub fn resend_after_us(&self) -> u64 {
        self.srtt_us
            .map_or(200_000, |r| (r * 1.5).max(50_000.0) as u64)
    }

    /// Whether the oldest unacknowledged reliable message was first sent longer than
    /// `expiry_us` ago.
    pub fn reliable_expired(&self, now: u64, expiry_us: u64) -> bool {
        self.outgoing
            .front()
            .and_then(|m| m.first_sent)
            .is_some_and(|t| now.saturating_sub(t) > expiry_us)
    }

    /// Builds the DATA datagrams for one send opportunity: every reliable message that is
    /// due (never sent, or unacknowledged for longer than the resend time), then the
    /// sections in `sections` (whole sections only), split over as many datagrams as needed.
    /// `sections` is a packet body (a run of sections); it may be empty.
    pub fn build_data(&mut self, now: u64, version: u16, sections: &[u8]) -> Vec<Vec<u8>> {
        let resend_after = self.resend_after_us();
        let window_end = self
            .outgoing
            .front()
            .map_or(self.next_msg_id, |m| m.id.wrapping_add(RELIABLE_WINDOW));
        let mut due: VecDeque<usize> = self
            .outgoing
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                !m.acked
                    && m.id.wrapping_sub(window_end) > u32::MAX / 2
                    && (m.first_sent.is_none() || now.saturating_sub(m.last_sent) >= resend_after)
            })
            .map(|(i, _)| i)
            .collect();
        let mut rest = sections;
        let mut out = Vec::new();
        self.frame_out = self.frame_out.wrapping_add(1);
        loop {
            let (ack, ack_bits) = self.received.header();
            let seq = self.next_seq;
            self.next_seq = self.next_seq.wrapping_add(1);
            let mut d = wire::begin(wire::Kind::Data, version);
            DataHeader {
                seq,
                ack,
                ack_bits,
                frame: self.frame_out,
            }
            .write(&mut d);
            let mut budget = wire::MAX_DATAGRAM - d.len() - 2;
            let mut picked = Vec::new();
            while let Some(&i) = due.front() {
                let cost = wire::message_cost(self.outgoing[i].bytes.len());
                if cost > budget {
                    break;
                }
                budget -= cost;
                picked.push(i);
                due.pop_front();
            }
            lanyard::codec::put_varint(&mut d, picked.len() as u64);
            let mut ids = Vec::with_capacity(picked.len());
            for &i in &picked {
                let m = &mut self.outgoing[i];
                if m.first_sent.is_some() {
                    self.stats.resends += 1;
                }
                m.first_sent.get_or_insert(now);
                m.last_sent = now;
                wire::put_message(&mut d, m.id, &m.bytes);
                ids.push(m.id);
            }
            let take = whole_sections(rest, wire::MAX_DATAGRAM - d.len());
            d.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            self.sent.push_back(Sent {
                seq,
                at: now,
                messages: ids,
                acked: false,
            });
            self.stats.packets_out += 1;
            self.stats.bytes_out += d.len() as u64;
            out.push(d);
            if due.is_empty() && rest.is_empty() {
                break;
            }
            if take == 0 && picked.is_empty() {
                // Nothing fits (cannot happen with sections under the size limit); stop
                // rather than loop.
                break;
            }
        }
        self.last_sent = now;
        out
    }

    /// Takes in the acks of a received DATA header. Returns false if the datagram is a
    /// duplicate (already processed).
    pub fn on_data_header(&mut self, h: &DataHeader, now: u64, len: usize) -> bool {
        self.stats.packets_in += 1;
        self.stats.bytes_in += len as u64;
        self.last_heard = now;
        self.bad_streak = 0;
        if !self.received.record(h.seq) {
            self.stats.duplicates += 1;
            return false;
        }
        if h.ack != u32::MAX {
            self.apply_acks(h.ack, h.ack_bits, now);
        }
        true
    }

    fn apply_acks(&mut self, ack: u32, bits: u32, now: u64) {
        let is_acked = |seq: u32| {
            let back = ack.wrapping_sub(seq);
            back == 0 || (back <= 32 && bits & (1 << (back - 1)) != 0)
        };
        let mut acked_msgs = Vec::new();
        for s in self.sent.iter_mut() {
            if !s.acked && is_acked(s.seq) {
                s.acked = true;
                acked_msgs.extend_from_slice(&s.messages);
                if s.seq == ack {
                    let sample = now.saturating_sub(s.at) as f32;
                    self.srtt_us =
                        Some(self.srtt_us.map_or(sample, |r| 0.875 * r + 0.125 * sample));
                    self.stats.rtt_ms = self.srtt_us.unwrap_or(0.0) / 1000.0;
                }
            }
        }
        if !acked_msgs.is_empty() {
            acked_msgs.sort_unstable();
            for m in self.outgoing.iter_mut() {
                if acked_msgs.binary_search(&m.id).is_ok() {
                    m.acked = true;
                }
            }
            while self.outgoing.front().is_some_and(|m| m.acked) {
                self.outgoing.pop_front();
            }
        }
        // Datagrams the ack window has moved past are settled: count the ones never acked.
        while let Some(s) = self.sent.front() {
            if ack.wrapping_sub(s.seq) <= 32 {
                break;
            }
            let lost = if s.acked { 0.0 } else { 1.0 };
            self.stats.loss = 0.95 * self.stats.loss + 0.05 * lost;
            self.sent.pop_front();
        }
    }

    /// Takes in a reliable message; returns the messages now deliverable in order.
    pub fn on_reliable(&mut self, id: u32, bytes: &[u8], deliver: &mut Vec<Vec<u8>>) {
        let ahead = id.wrapping_sub(self.next_expected);
        if ahead >= RELIABLE_WINDOW {
            // Already delivered (or absurdly far ahead): the ack covers it either way.
            return;
        }
        self.incoming.entry(id).or_insert_with(|| bytes.to_vec());
        while let Some(m) = self.incoming.remove(&self.next_expected) {
            deliver.push(m);
            self.next_expected = self.next_expected.wrapping_add(1);
        }
    }

    /// Whether the frame number of a received datagram is new enough for its sections.
    pub fn accept_frame(&mut self, frame: u32) -> bool {
        match self.latest_frame {
            Some(f) if frame.wrapping_sub(f) > u32::MAX / 2 => false,
            _ => {
                self.latest_frame = Some(frame);
                true
            }
        }
    }
}

/// How many bytes from the front of `packet` are whole sections that fit in `room`.
fn whole_sections(packet: &[u8], room: usize) -> usize {
    let mut reader = lanyard::codec::PacketReader::new(packet);
    let mut used = 0;
    while let Some(Ok(_)) = reader.next() {
        let end = packet.len() - reader.remaining();
        if end > room {
            break;
        }
        used = end;
    }
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn received_tracks_duplicates_and_reordering() {
        let mut r = Received::default();
        assert!(r.record(5));
        assert!(!r.record(5));
        assert!(r.record(7));
        assert!(r.record(6));
        assert!(!r.record(6));
        assert_eq!(r.header(), (7, 0b11));
        assert!(r.record(100));
        assert!(!r.record(7), "too old to tell: treated as seen");
    }

    fn addr() -> SocketAddr {
        "127.0.0.1:9".parse().unwrap()
    }

    #[test]
    fn reliable_messages_are_resent_until_acked_and_delivered_once_in_order() {
        let mut a = Link::new(addr(), 0);
        let mut b = Link::new(addr(), 0);
        for i in 0..3u8 {
            a.push_reliable(vec![i; 10]);
        }
        let first = a.build_data(0, 1, &[]);
        // Lost. Nothing is due again before the resend time...
        let again = a.build_data(100_000, 1, &[]);
        let d = wire::parse_data(&again[0][wire::HEADER_LEN..]).unwrap();
        assert!(d.messages.is_empty());
        // ...and everything is after it.
        let later = a.build_data(300_000, 1, &[]);
        assert_eq!(a.stats.resends, 3);
        let mut got = Vec::new();
        for dg in later.iter().chain(first.iter()) {
            let d = wire::parse_data(&dg[wire::HEADER_LEN..]).unwrap();
            if b.on_data_header(&d.header, 300_000, dg.len()) {
                for (id, m) in d.messages {
                    b.on_reliable(id, m, &mut got);
                }
            }
        }
        assert_eq!(got, vec![vec![0; 10], vec![1; 10], vec![2; 10]]);
        // b acks; a forgets the messages.
        let reply = b.build_data(310_000, 1, &[]);
        let d = wire::parse_data(&reply[0][wire::HEADER_LEN..]).unwrap();
        a.on_data_header(&d.header, 320_000, reply[0].len());
        assert_eq!(a.unacked(), 0);
        assert!(a.stats.rtt_ms > 0.0);
    }

    #[test]
    fn sections_are_split_across_datagrams_whole() {
        let mut p = lanyard::codec::PacketWriter::new();
        for i in 0..100u32 {
            p.section(lanyard::NetId(i), |w| {
                for _ in 0..40 {
                    w.u8(i as u8)
                }
            })
            .unwrap();
        }
        let mut a = Link::new(addr(), 0);
        let dgs = a.build_data(0, 1, p.as_bytes());
        assert!(dgs.len() >= 4);
        let mut n = 0;
        for dg in &dgs {
            assert!(dg.len() <= wire::MAX_DATAGRAM);
            let d = wire::parse_data(&dg[wire::HEADER_LEN..]).unwrap();
            for s in lanyard::codec::PacketReader::new(d.sections) {
                let s = s.unwrap();
                assert_eq!(s.net_id, lanyard::NetId(n));
                n += 1;
            }
            assert_eq!(d.header.frame, 1, "one broadcast, one frame number");
        }
        assert_eq!(n, 100);
    }
}
