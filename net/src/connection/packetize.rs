//! The packetizer: one send opportunity's DATA datagrams, each with its header, the
//! reliable messages that are due and fit, then whole chunks of sections, sealed.

use super::{Connection, RELIABLE_DATAGRAMS, SentDatagram, Timer};
use crate::crypto::{Nonce, TAG_LEN};
use crate::wire::{self, DataHeader, DatagramKind};
use std::collections::VecDeque;

impl Connection {
    /// How long to wait for an ack before resending: 1.5 round trips, at least 50 ms, and
    /// 200 ms until a round trip has been measured.
    pub(super) fn resend_after_us(&self) -> u64 {
        self.srtt_us
            .map_or(200_000, |r| (r * 1.5).max(50_000.0) as u64)
    }

    /// Builds the DATA datagrams of one send opportunity, sealed: every reliable message
    /// that is due (up to [`RELIABLE_DATAGRAMS`] datagrams of them; the rest wait for the
    /// next opportunity), then the section chunks (each a run of whole sections of at most
    /// [`wire::DATA_ROOM`] bytes, placed whole), over as many datagrams as needed. With
    /// nothing to send it still builds one (a heartbeat, which carries the acks). The
    /// broadcast number is the connection's own count of send opportunities.
    pub(crate) fn build_data(&mut self, now: u64, version: u16, chunks: &[&[u8]]) -> Vec<Vec<u8>> {
        let number = self.number_out.wrapping_add(1);
        self.build_numbered(now, version, number, chunks, &mut Vec::new())
    }

    /// [`build_data`](Self::build_data) for the given broadcast number (a server numbers its
    /// broadcasts once for every client); `seqs` gets, for each non-empty chunk in order,
    /// the sequence number of the datagram that carries it.
    pub(crate) fn build_numbered(
        &mut self,
        now: u64,
        version: u16,
        number: u32,
        chunks: &[&[u8]],
        seqs: &mut Vec<u32>,
    ) -> Vec<Vec<u8>> {
        let Some(cipher) = self.cipher.clone() else {
            return Vec::new();
        };
        let mut due = self.reliable_out.due(now, self.resend_after_us());
        let mut chunks = chunks.iter().filter(|c| !c.is_empty()).peekable();
        let mut out = Vec::new();
        self.number_out = number;
        let mut with_messages = 0;
        let mut message_bytes = 0;
        loop {
            if with_messages == RELIABLE_DATAGRAMS {
                due.clear();
            }
            let (seq, nonce, mut d) = self.begin_datagram(now, version, number);
            let room = wire::MAX_DATAGRAM - d.len() - 2 - TAG_LEN;
            let picked = self.pick_messages(&mut due, room, &mut message_bytes);
            let ids = self.put_messages(&mut d, &picked, now);
            let mut placed = 0;
            while let Some(c) = chunks.peek() {
                if d.len() + c.len() + TAG_LEN > wire::MAX_DATAGRAM {
                    break;
                }
                d.extend_from_slice(c);
                chunks.next();
                seqs.push(seq);
                placed += 1;
            }
            if !picked.is_empty() {
                with_messages += 1;
            }
            cipher.seal(self.out, &mut d, wire::clear_len(DatagramKind::Data), nonce);
            let placed = placed > 0;
            self.sent.push_back(SentDatagram {
                seq,
                at: now,
                messages: ids,
                acked: false,
                bytes: d.len() as u32,
                missed: false,
            });
            self.stats.packets_out += 1;
            self.stats.bytes_out += d.len() as u64;
            out.push(d);
            if due.is_empty() && chunks.peek().is_none() {
                break;
            }
            if picked.is_empty() && !placed {
                // A chunk larger than a datagram (never built by this crate): drop it
                // rather than loop.
                chunks.next();
            }
        }
        self.timers
            .set(Timer::Heartbeat, now + self.timing.heartbeat);
        self.arm_expiry();
        out
    }

    /// The next DATA datagram's header, for broadcast `number`: its sequence number and
    /// nonce, and the datagram so far.
    fn begin_datagram(&mut self, now: u64, version: u16, number: u32) -> (u32, Nonce, Vec<u8>) {
        let (ack, ack_bits) = self.received.header();
        let seq = self.next_seq;
        let nonce = Nonce::Seq(self.seq_wraps << 32 | u64::from(seq));
        self.next_seq = self.next_seq.wrapping_add(1);
        if self.next_seq == 0 {
            self.seq_wraps += 1;
        }
        let mut d = wire::begin(DatagramKind::Data, version);
        // The time held, rounded to the millisecond: cut off, it would read half a
        // millisecond short on average, and the peer's round trip half a millisecond long.
        let (echo, held) = match self.peer_time {
            Some((t, at)) => (
                t,
                (now.saturating_sub(at).saturating_add(500) / 1000)
                    .min(u64::from(wire::NO_ECHO) - 1) as u16,
            ),
            None => (0, wire::NO_ECHO),
        };
        DataHeader {
            seq,
            ack,
            ack_bits,
            number,
            time: (now / 1000) as u16,
            echo,
            held,
        }
        .write(&mut d);
        (seq, nonce, d)
    }

    /// Of the `due` reliable messages (taken from its front), those that fit in `room`
    /// bytes, while the messages' bytes this opportunity (`message_bytes`, grown) stay
    /// within the room for messages; past that, none is due any more.
    fn pick_messages(
        &self,
        due: &mut VecDeque<usize>,
        mut room: usize,
        message_bytes: &mut usize,
    ) -> Vec<usize> {
        let mut picked = Vec::new();
        while let Some(&i) = due.front() {
            let cost = wire::message_cost(self.reliable_out.len_of(i));
            if *message_bytes >= self.message_room {
                due.clear();
                break;
            }
            if cost > room {
                break;
            }
            room -= cost;
            *message_bytes += cost;
            picked.push(i);
            due.pop_front();
        }
        picked
    }

    /// Writes the `picked` reliable messages into `d` (their count first), noting them
    /// sent at `now`; their ids.
    fn put_messages(&mut self, d: &mut Vec<u8>, picked: &[usize], now: u64) -> Vec<u32> {
        lanyard::codec::put_varint(d, picked.len() as u64);
        let mut ids = Vec::with_capacity(picked.len());
        for &i in picked {
            let (fragment, resend) = self.reliable_out.send(i, now);
            if resend {
                self.stats.resends += 1;
            }
            wire::put_message(d, fragment);
            ids.push(fragment.id);
        }
        ids
    }
}
