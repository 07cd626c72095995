//! One peer's connection, the same type on both sides: its state, its deadlines, its
//! datagram sequence numbers and acks (with the replay window), the reliable channel, the
//! packetizer, and the counters. Sans-IO: every method takes the time in microseconds, and
//! unit tests drive two of them against each other with no group and no socket.

#[cfg(feature = "fuzzing")]
mod forge;
mod packetize;
mod reliable;
mod timer;
mod window;

pub(crate) use timer::{Timer, TimerTable};

use crate::crypto::{self, Cipher, Direction, Key, Nonce};
use crate::error::DisconnectReason;
pub use crate::stats::PeerStats;
use crate::wire::{self, DatagramKind, Msg};
pub(crate) use reliable::ReliableReceiver;
use reliable::ReliableSender;
use std::collections::VecDeque;
use std::net::SocketAddr;
pub(crate) use window::Link;
use window::{ReceiveWindow, SentDatagram};
use x25519_dalek::StaticSecret;

/// The deadlines a connection keeps, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timing {
    pub(crate) timeout: u64,
    pub(crate) heartbeat: u64,
    pub(crate) reliable_expiry: u64,
    pub(crate) connect_retry: u64,
    pub(crate) connect_timeout: u64,
}

/// Where a connection is.
#[derive(Clone)]
pub(crate) enum State {
    /// Client: the hello is out; waiting for the server's challenge.
    Hello {
        nonce: u64,
        secret: Box<StaticSecret>,
        public: [u8; 32],
    },
    /// Client: the answer to the challenge is out; waiting for the welcome.
    Connect {
        nonce: u64,
        datagram: Vec<u8>,
        /// Times it was sent; past a few with no welcome the handshake starts again (the
        /// challenge may have been corrupted on the way, giving us the wrong key).
        tries: u32,
        /// Our secret, to start again from.
        secret: Box<StaticSecret>,
    },
    /// The session runs: every datagram is tagged with the session key.
    Connected,
    /// The session is over.
    Closed,
}

/// What a connection's deadlines asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Deadline {
    /// The session is over, for this reason.
    Lost(DisconnectReason),
    /// A client's handshake took too long.
    GaveUp,
    /// Nothing was sent for a while: send a heartbeat.
    Heartbeat,
    /// A handshake datagram is due again.
    Retry,
}

/// Why a received datagram was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The tag was wrong: counted in `bad_tags`.
    BadTag,
    /// A duplicate or a replay: counted in `duplicates`.
    Replayed,
    /// Tagged right but undecodable: counted in `bad_datagrams`.
    Malformed,
}

/// How many datagrams of one send opportunity may carry reliable messages: a backlog (the
/// whole world for a client that just joined) goes out over several opportunities, in
/// bursts the peer's 32-datagram ack window covers.
pub(crate) const RELIABLE_DATAGRAMS: usize = 8;

/// What an accepted DATA datagram brought.
pub(crate) struct Incoming<'a> {
    /// Whether the datagram carried reliable messages (new or resent: either way the
    /// sender waits for an ack).
    pub(crate) carried_messages: bool,
    /// Reliable messages now deliverable, in order.
    pub(crate) delivered: Vec<Vec<u8>>,
    /// The sender's broadcast number the datagram belongs to.
    pub(crate) number: u32,
    /// Whether no datagram of a newer broadcast was taken before this one.
    pub(crate) fresh: bool,
    /// The datagram's state: sections from a client, state entries from a server.
    pub(crate) sections: &'a [u8],
    /// The sender's clock when it sent the datagram, milliseconds (wrapping).
    pub(crate) sent_ms: u16,
}

/// One peer's connection.
#[derive(Clone)]
pub(crate) struct Connection {
    /// Where the peer is.
    pub(crate) addr: SocketAddr,
    /// Where the handshake or the session stands: changed only by the connection's own
    /// methods.
    state: State,
    key: Option<Key>,
    /// The session's ciphers (made from `key`).
    cipher: Option<Cipher>,
    /// Which way our datagrams go.
    out: Direction,
    timing: Timing,
    pub(crate) timers: TimerTable,
    next_seq: u32,
    /// How many times `next_seq` wrapped: the high half of our datagrams' 64-bit nonces.
    seq_wraps: u64,
    /// The newest sequence number opened, extended to 64 bits: the peer's 32-bit numbers
    /// are extended near it.
    seq_in: u64,
    received: ReceiveWindow,
    sent: VecDeque<SentDatagram>,
    reliable_out: ReliableSender,
    reliable_in: ReliableReceiver,
    latest_number: Option<u32>,
    number_out: u32,
    /// Consecutive datagrams with a right tag that could not be decoded.
    pub(crate) bad_streak: u32,
    srtt_us: Option<f32>,
    /// The newest ack header taken (the peer's latest sequence number in it).
    newest_ack: Option<u32>,
    /// Datagrams of ours known delivered or lost (as they leave the ack window), and of
    /// those the lost, since the connection began: for a pace to read the link.
    settled: (u32, u32),
    /// Bytes of our datagrams the peer acknowledged since the connection began.
    delivered_bytes: u64,
    /// Datagrams of ours the peer acknowledged since [`take_acked`](Self::take_acked).
    acked: Vec<u32>,
    /// The newest clock stamp the peer sent, and when (µs) it came: echoed back.
    peer_time: Option<(u16, u64)>,
    /// The smoothed round trip from echoed stamps, in milliseconds.
    pub(crate) ping_ms: Option<f32>,
    /// The least round trip any single sample measured (ms): the link with no queue.
    pub(crate) least_ping_ms: Option<f32>,
    /// When (µs) a datagram from the peer was last taken.
    pub(crate) last_heard: u64,
    /// The counters.
    pub(crate) stats: PeerStats,
    /// Bytes of reliable messages the next send opportunity may carry (a paced sender
    /// sets it; a message that starts within it goes whole).
    pub(crate) message_room: usize,
}

impl Connection {
    fn with(addr: SocketAddr, state: State, key: Option<Key>, out: Direction, t: Timing) -> Self {
        Connection {
            addr,
            state,
            cipher: key.as_ref().map(Cipher::new),
            key,
            out,
            timing: t,
            timers: TimerTable::default(),
            next_seq: 0,
            seq_wraps: 0,
            seq_in: 0,
            received: ReceiveWindow::default(),
            sent: VecDeque::new(),
            reliable_out: ReliableSender::default(),
            reliable_in: ReliableReceiver::default(),
            latest_number: None,
            number_out: 0,
            bad_streak: 0,
            srtt_us: None,
            newest_ack: None,
            settled: (0, 0),
            delivered_bytes: 0,
            acked: Vec::new(),
            peer_time: None,
            ping_ms: None,
            least_ping_ms: None,
            last_heard: 0,
            stats: PeerStats::default(),
            message_room: usize::MAX,
        }
    }

    /// The server's side of a session the endpoint just admitted.
    pub(crate) fn accepted(addr: SocketAddr, key: Key, now: u64, timing: Timing) -> Self {
        let mut c = Self::with(
            addr,
            State::Connected,
            Some(key),
            Direction::ToClient,
            timing,
        );
        c.timers.set(Timer::Idle, now + timing.timeout);
        c.timers.set(Timer::Heartbeat, now + timing.heartbeat);
        c.last_heard = now;
        c
    }

    /// What a pace reads of the link: round trips and the datagrams settled so far.
    pub(crate) fn link(&self) -> Link {
        Link {
            ping_ms: self.ping_ms.unwrap_or(0.0),
            least_ping_ms: self.least_ping_ms,
            settled: self.settled.0,
            lost: self.settled.1,
            delivered: self.delivered_bytes,
        }
    }

    /// The counters, with the silence so far at `now`.
    pub(crate) fn stats_at(&self, now: u64) -> PeerStats {
        PeerStats {
            silence_ms: now.saturating_sub(self.last_heard) as f32 / 1000.0,
            ..self.stats
        }
    }

    /// A client's side, about to say hello with `nonce` and a key pair made from `secret`.
    pub(crate) fn client(
        server: SocketAddr,
        nonce: u64,
        secret: Key,
        now: u64,
        timing: Timing,
    ) -> Self {
        let (secret, public) = crypto::keypair(secret);
        let state = State::Hello {
            nonce,
            secret: Box::new(secret),
            public,
        };
        let mut c = Self::with(server, state, None, Direction::ToServer, timing);
        c.timers.set(Timer::Retry, now);
        c.timers.set(Timer::GiveUp, now + timing.connect_timeout);
        c
    }

    /// Whether the session runs.
    pub(crate) fn is_connected(&self) -> bool {
        matches!(self.state, State::Connected)
    }

    fn incoming_dir(&self) -> Direction {
        match self.out {
            Direction::ToServer => Direction::ToClient,
            Direction::ToClient => Direction::ToServer,
        }
    }

    /// Client: the challenge came; derives the session key and moves to answering it with
    /// `connect`, a function of (hello, key) that builds the CONNECT datagram. False if the
    /// challenge is not for this hello or its key is degenerate.
    pub(crate) fn on_challenge(
        &mut self,
        c: &wire::Challenge,
        connect: impl FnOnce(wire::Hello, &Key) -> Option<Vec<u8>>,
        now: u64,
    ) -> bool {
        let State::Hello {
            nonce,
            secret,
            public,
        } = &self.state
        else {
            return false;
        };
        if c.nonce != *nonce {
            return false;
        }
        let Some(key) = crypto::session_key(secret, &c.server_pub, *nonce, public, &c.server_pub)
        else {
            return false;
        };
        let hello = wire::Hello {
            nonce: *nonce,
            client_pub: *public,
        };
        let Some(datagram) = connect(hello, &key) else {
            return false;
        };
        let nonce = *nonce;
        let secret = secret.clone();
        self.set_key(Some(key));
        self.state = State::Connect {
            nonce,
            datagram,
            tries: 0,
            secret,
        };
        self.timers.set(Timer::Retry, now);
        true
    }

    /// Sets the session key and the ciphers made from it.
    fn set_key(&mut self, key: Option<Key>) {
        self.cipher = key.as_ref().map(Cipher::new);
        self.key = key;
    }

    /// Client: the nonce of the handshake under way, if one is.
    pub(crate) fn nonce(&self) -> u64 {
        match &self.state {
            State::Hello { nonce, .. } | State::Connect { nonce, .. } => *nonce,
            State::Connected | State::Closed => 0,
        }
    }

    /// Client: starts the handshake again with a new nonce and key pair (the answer to
    /// the challenge went unanswered, or the welcome did not open with our key).
    pub(crate) fn restart(&mut self, now: u64) {
        let State::Connect { nonce, secret, .. } = &self.state else {
            return;
        };
        let next = crypto::derive(&secret.to_bytes(), "restart", *nonce);
        let (secret, public) = crypto::keypair(next);
        self.state = State::Hello {
            nonce: nonce.wrapping_add(1),
            secret: Box::new(secret),
            public,
        };
        self.set_key(None);
        self.timers.set(Timer::Retry, now);
    }

    /// Client: the handshake datagram to send now, if one is due (hello or connect).
    pub(crate) fn handshake_datagram(&mut self, now: u64, version: u16) -> Option<Vec<u8>> {
        if !self.timers.is_due(Timer::Retry, now) {
            return None;
        }
        if let State::Connect { tries, .. } = &mut self.state {
            *tries += 1;
            if *tries > 4 {
                self.restart(now);
            }
        }
        let d = match &self.state {
            State::Hello { nonce, public, .. } => wire::hello(
                version,
                &wire::Hello {
                    nonce: *nonce,
                    client_pub: *public,
                },
            ),
            State::Connect { datagram, .. } => datagram.clone(),
            State::Connected | State::Closed => return None,
        };
        self.timers
            .set(Timer::Retry, now + self.timing.connect_retry);
        Some(d)
    }

    /// Where the handshake or the session stands.
    pub(crate) fn state(&self) -> &State {
        &self.state
    }

    /// The session is over (refused, lost, or left): nothing more is sent or taken.
    pub(crate) fn close(&mut self) {
        self.state = State::Closed;
    }

    /// Client: the session starts (the welcome checked out).
    pub(crate) fn established(&mut self, now: u64) {
        self.last_heard = now;
        self.state = State::Connected;
        self.timers.stop(Timer::Retry);
        self.timers.stop(Timer::GiveUp);
        self.timers.set(Timer::Idle, now + self.timing.timeout);
        self.timers
            .set(Timer::Heartbeat, now + self.timing.heartbeat);
    }

    /// Opens a sealed datagram from the peer's address: checks its tag and decrypts it,
    /// giving it back as it was before it was sealed (the header, then the plaintext). A
    /// wrong or missing tag is counted and the datagram refused; nothing in it was read.
    pub(crate) fn open(&mut self, datagram: &[u8]) -> Result<Vec<u8>, Refused> {
        let dir = self.incoming_dir();
        let (seq_in, cipher) = (self.seq_in, self.cipher.as_ref());
        let opened = cipher
            .zip(wire::sealed_kind(datagram))
            .and_then(|(c, (kind, seq))| {
                let nonce = match seq {
                    Some(seq) => Nonce::Seq(crypto::extend_seq(seq, seq_in)),
                    None => Nonce::Synthetic,
                };
                let opened = c.open(dir, datagram, wire::clear_len(kind), nonce)?;
                Some((opened, nonce))
            });
        match opened {
            Some((opened, nonce)) => {
                if let Nonce::Seq(n) = nonce {
                    self.seq_in = self.seq_in.max(n);
                }
                Ok(opened)
            }
            None => {
                self.stats.bad_tags += 1;
                Err(Refused::BadTag)
            }
        }
    }

    /// A sealed control datagram (a welcome, a goodbye).
    pub(crate) fn sealed(&self, kind: DatagramKind, version: u16, body: &[u8]) -> Option<Vec<u8>> {
        let cipher = self.cipher.as_ref()?;
        let mut d = wire::begin(kind, version);
        d.extend_from_slice(body);
        cipher.seal(self.out, &mut d, wire::clear_len(kind), Nonce::Synthetic);
        Some(d)
    }

    /// Takes in one opened DATA body (`len` bytes on the wire, arrived at `arrived`, taken
    /// at `now`): [`on_data`](Self::on_data), with the reliable messages it delivered
    /// decoded (a malformed one is counted on the link and skipped).
    pub(crate) fn take_data<'a>(
        &mut self,
        body: &'a [u8],
        len: usize,
        (now, arrived): (u64, u64),
    ) -> Result<(Incoming<'a>, Vec<Msg>), Refused> {
        let mut incoming = self.on_data(body, len, (now, arrived))?;
        let messages = std::mem::take(&mut incoming.delivered)
            .iter()
            .filter_map(|m| match wire::decode_message::<Msg>(m) {
                Ok(m) => Some(m),
                Err(_) => {
                    self.stats.refused_messages += 1;
                    None
                }
            })
            .collect();
        Ok((incoming, messages))
    }

    /// The peer echoed our stamp `echo`, having held it `held` ms, in a datagram that
    /// arrived at `arrived` (µs): a sample of the ping.
    fn echoed(&mut self, echo: u16, held: u16, arrived: u64) {
        // Our clock when it came, less what we stamped, less what the peer held it: the
        // wire's round trip (wrapping milliseconds; a stale or absurd one is ignored).
        let sample = ((arrived / 1000) as u16)
            .wrapping_sub(echo)
            .wrapping_sub(held);
        // Stamps in whole milliseconds make a round trip under one read a millisecond
        // either side: one a hair below zero is a zero (dropped, the short ones would be
        // missing from the average, which would read long on a fast link).
        let sample = match sample {
            s if s > u16::MAX - 2 => 0,
            s if s < 10_000 => s,
            _ => return,
        };
        let s = f32::from(sample);
        self.ping_ms = Some(self.ping_ms.map_or(s, |p| 0.8 * p + 0.2 * s));
        self.least_ping_ms = Some(self.least_ping_ms.map_or(s, |p| p.min(s)));
        self.stats.ping_ms = self.ping_ms.unwrap_or(0.0);
        self.stats.pinged = true;
    }

    /// Takes in an opened DATA body (`len` bytes on the wire) at `now`, which arrived at
    /// `arrived` (no later than `now`: a frame takes in what came since the last one): the
    /// replay window first, then acks, the reliable channel and the broadcast number.
    /// Round trips are measured from the arrival, and the time until our reply is sent
    /// counts as held, so neither side's wait for its next frame reads as wire time.
    pub(crate) fn on_data<'a>(
        &mut self,
        body: &'a [u8],
        len: usize,
        (now, arrived): (u64, u64),
    ) -> Result<Incoming<'a>, Refused> {
        let arrived = arrived.min(now);
        let malformed = |c: &mut Connection| {
            c.stats.bad_datagrams += 1;
            c.bad_streak += 1;
            Err(Refused::Malformed)
        };
        let Ok(header) = wire::parse_data_header(body) else {
            return malformed(self);
        };
        if !self.received.is_new(header.seq) {
            self.stats.duplicates += 1;
            return Err(Refused::Replayed);
        }
        let newest = self
            .received
            .latest
            .is_none_or(|l| header.seq.wrapping_sub(l) < u32::MAX / 2);
        self.received.record(header.seq);
        self.last_heard = now;
        if newest {
            self.peer_time = Some((header.time, arrived));
        }
        if header.held != wire::NO_ECHO {
            self.echoed(header.echo, header.held, arrived);
        }
        self.stats.packets_in += 1;
        self.stats.bytes_in += len as u64;
        self.timers.set(Timer::Idle, now + self.timing.timeout);
        let Ok(data) = wire::parse_data(body) else {
            return malformed(self);
        };
        self.bad_streak = 0;
        if header.ack != u32::MAX {
            self.apply_acks(header.ack, header.ack_bits, now);
        }
        let mut delivered = Vec::new();
        for &f in &data.messages {
            let dropped = self.reliable_in.receive(f, &mut delivered);
            self.stats.refused_messages += u64::from(dropped);
        }
        let fresh = match self.latest_number {
            Some(f) if header.number.wrapping_sub(f) > u32::MAX / 2 => false,
            _ => {
                self.latest_number = Some(header.number);
                true
            }
        };
        Ok(Incoming {
            sent_ms: header.time,
            carried_messages: !data.messages.is_empty(),
            delivered,
            number: header.number,
            fresh,
            sections: data.sections,
        })
    }

    /// A resumed session's new connection takes over the old one's reliable messages to
    /// the peer: the ones not yet acknowledged go out again (the peer's receiving half,
    /// kept with the session, delivers each once), and none counts as old yet.
    pub(crate) fn carry_reliable_out(&mut self, old: &mut Connection) {
        self.reliable_out = std::mem::take(&mut old.reliable_out);
        self.reliable_out.rearm();
        self.arm_expiry();
    }

    /// A connection to a new host (after a migration) takes the old one's messages not yet
    /// acknowledged, numbered afresh: the new host never saw the old numbering.
    pub(crate) fn carry_reliable_afresh(&mut self, old: &Connection) {
        self.reliable_out = old.reliable_out.afresh();
        self.arm_expiry();
    }

    /// A resumed session's new connection takes over the old one's receiving half, so
    /// messages the peer sends again are delivered once.
    pub(crate) fn carry_reliable_in(&mut self, old: &mut Connection) {
        self.reliable_in = std::mem::take(&mut old.reliable_in);
    }

    /// The session key, once there is one.
    pub(crate) fn key(&self) -> Option<&Key> {
        self.key.as_ref()
    }

    /// Queues an encoded reliable message, `eager` to resend it in every datagram; its id.
    pub(crate) fn push_reliable(&mut self, bytes: Vec<u8>, eager: bool) -> u32 {
        self.reliable_out.push(bytes, eager)
    }

    /// Whether the peer has delivered reliable message `id`: it and every message before
    /// it were acknowledged.
    pub(crate) fn delivered(&self, id: u32) -> bool {
        self.reliable_out.delivered_through(id)
    }

    /// Whether the peer acknowledged reliable message `id`, every fragment of it, even if
    /// not every message before it yet (it holds it, undelivered, till they come): such a
    /// message does not go on to a new host ([`carry_reliable_afresh`](Self::carry_reliable_afresh)).
    pub(crate) fn acknowledged(&self, id: u32) -> bool {
        self.reliable_out.acknowledged(id)
    }

    /// The datagrams of ours the peer acknowledged since the last call, by sequence number.
    pub(crate) fn take_acked(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.acked)
    }

    /// Whether a reliable message is due to be sent (for the first time, or again).
    pub(crate) fn messages_due(&self, now: u64) -> bool {
        !self
            .reliable_out
            .due(now, self.resend_after_us())
            .is_empty()
    }

    /// The bytes the reliable messages due at `now` take on the wire, as far as the next
    /// send opportunity may carry them, and whether some due messages are left for later.
    pub(crate) fn messages_due_bytes(&self, now: u64) -> (usize, bool) {
        let due = self.reliable_out.due(now, self.resend_after_us());
        let limit = self
            .message_room
            .min(RELIABLE_DATAGRAMS * wire::MAX_DATAGRAM);
        let mut bytes = 0;
        for (n, &i) in due.iter().enumerate() {
            if bytes >= limit {
                return (bytes, n < due.len());
            }
            bytes += wire::message_cost(self.reliable_out.len_of(i));
        }
        (bytes, false)
    }

    /// Reliable messages not yet acknowledged.
    pub(crate) fn unacked(&self) -> usize {
        self.reliable_out.unacked()
    }

    /// Adds what this connection holds in its reliable channel to `f`.
    pub(crate) fn add_footprint(&self, f: &mut crate::Footprint) {
        f.connections += 1;
        f.unacked_messages += self.reliable_out.unacked();
        f.unacked_bytes += self.reliable_out.unacked_bytes();
        f.held_bytes += self.reliable_in.held_bytes();
    }

    fn arm_expiry(&mut self) {
        match self.reliable_out.oldest_sent() {
            Some(t) => self
                .timers
                .set(Timer::ReliableExpiry, t + self.timing.reliable_expiry),
            None => self.timers.stop(Timer::ReliableExpiry),
        }
    }

    fn apply_acks(&mut self, ack: u32, bits: u32, now: u64) {
        let is_acked = |seq: u32| {
            let back = ack.wrapping_sub(seq);
            back == 0 || (back <= 32 && bits & (1 << (back - 1)) != 0)
        };
        // A header older than one already taken (the peer's datagrams reordered) still
        // acknowledges, but says nothing of what was lost since.
        let newest = self
            .newest_ack
            .is_none_or(|n| ack.wrapping_sub(n) < u32::MAX / 2);
        if newest {
            self.newest_ack = Some(ack);
        }
        let mut acked_msgs = Vec::new();
        for s in self.sent.iter_mut() {
            if s.acked {
                continue;
            }
            if is_acked(s.seq) {
                s.acked = true;
                self.delivered_bytes += u64::from(s.bytes);
                self.acked.push(s.seq);
                acked_msgs.extend_from_slice(&s.messages);
                if s.seq == ack {
                    let sample = now.saturating_sub(s.at) as f32;
                    self.srtt_us =
                        Some(self.srtt_us.map_or(sample, |r| 0.875 * r + 0.125 * sample));
                    self.stats.rtt_ms = self.srtt_us.unwrap_or(0.0) / 1000.0;
                }
            } else if newest && (1..=32).contains(&ack.wrapping_sub(s.seq)) {
                s.missed = true;
            }
        }
        if !acked_msgs.is_empty() {
            acked_msgs.sort_unstable();
            self.reliable_out.ack(&acked_msgs);
            self.arm_expiry();
        }
        if !newest {
            return;
        }
        // Datagrams the ack window has moved past are settled. One never acked counts as
        // lost only if a header left it out: one no header ever spoke for (the peer was
        // silent while we sent more than the window holds) is not known lost.
        while let Some(s) = self.sent.front() {
            if ack.wrapping_sub(s.seq) <= 32 {
                break;
            }
            if s.acked || s.missed {
                let lost = !s.acked;
                self.stats.loss = 0.95 * self.stats.loss + if lost { 0.05 } else { 0.0 };
                self.settled.0 += 1;
                self.settled.1 += u32::from(lost);
            }
            self.sent.pop_front();
        }
    }

    /// The next deadline, for a driver that sleeps until then.
    pub(crate) fn poll_timeout(&self) -> Option<u64> {
        self.timers.next_timeout()
    }

    /// Handles every deadline due at `now`; returns what they ask for, most serious first.
    pub(crate) fn handle_timeout(&mut self, now: u64) -> Vec<Deadline> {
        let mut out: Vec<Deadline> = self
            .timers
            .expired(now)
            .into_iter()
            .map(|t| match t {
                Timer::Idle => Deadline::Lost(DisconnectReason::TimedOut),
                Timer::ReliableExpiry => Deadline::Lost(DisconnectReason::ReliableExpired),
                Timer::Heartbeat => Deadline::Heartbeat,
                Timer::Retry => Deadline::Retry,
                Timer::GiveUp => Deadline::GaveUp,
            })
            .collect();
        // Retries stay armed for `handshake_datagram` to see.
        if out.contains(&Deadline::Retry) {
            self.timers.set(Timer::Retry, now);
        }
        out.sort_by_key(|d| match d {
            Deadline::Lost(_) | Deadline::GaveUp => 0,
            Deadline::Retry => 1,
            Deadline::Heartbeat => 2,
        });
        if out
            .iter()
            .any(|d| matches!(d, Deadline::Lost(_) | Deadline::GaveUp))
        {
            self.state = State::Closed;
        }
        out
    }
}

#[cfg(test)]
mod tests;
