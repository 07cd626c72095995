//! The counters the network layer keeps: per peer ([`PeerStats`]) and for no peer
//! ([`NetCounters`]).

/// Counters for one peer, readable through the API.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PeerStats {
    /// Datagrams received and accepted (tag right, not a replay).
    pub packets_in: u64,
    /// Datagrams sent.
    pub packets_out: u64,
    /// Bytes received in accepted datagrams.
    pub bytes_in: u64,
    /// Bytes sent.
    pub bytes_out: u64,
    /// Reliable messages sent again because no ack came in time.
    pub resends: u64,
    /// Datagrams from the peer's address whose tag was wrong (corrupted on the way, or
    /// forged): dropped before any field was read.
    pub bad_tags: u64,
    /// Datagrams with a right tag that could not be decoded.
    pub bad_datagrams: u64,
    /// Datagrams received again (duplicated on the way, or replayed by someone): refused.
    pub duplicates: u64,
    /// Sections skipped because their datagram was older than one already applied.
    pub dropped_stale: u64,
    /// Server: bytes of state entries sent to this client (headers excluded). Client: bytes
    /// of state entries received.
    pub state_bytes: u64,
    /// Server: state entries sent to this client. Client: state entries received.
    pub entries: u64,
    /// Client: state entries whose baseline it did not hold (never expected: counted so a
    /// test can say so).
    pub missing_baselines: u64,
    /// Sections for entities that do not exist (here).
    pub dropped_unknown_entity: u64,
    /// Sections for entities the peer does not own.
    pub dropped_not_owner: u64,
    /// Server: of those, the sections for a body the server had just kept or taken back
    /// from this client (hand-off), sent before the client heard. They are expected, and
    /// not logged as a warning as the rest are.
    pub late_sections: u64,
    /// Sections the entity's validation hook judged illegal.
    pub dropped_illegal: u64,
    /// Spawn requests the server refused (kind, parameters, claimed state or count).
    pub refused_spawns: u64,
    /// Claims on a server's body the server granted (hand-off): on a server, this
    /// client's; on a client, ours.
    pub claims: u64,
    /// Claims the server refused (the body touches nothing the client holds, another
    /// client holds it, its kind forbids hand-off, the client holds too many).
    pub refused_claims: u64,
    /// Server: the entries of this client's predicted bodies, touching nothing, that
    /// changed since what it holds and that its prediction stood for (nothing was sent).
    pub predictions_held: u64,
    /// Server: those its prediction missed (a difference from the prediction was due). A
    /// kind whose free bodies mostly miss is warned about ([`NetEvent::Mispredicted`]).
    ///
    /// [`NetEvent::Mispredicted`]: crate::NetEvent::Mispredicted
    pub predictions_missed: u64,
    /// Corrections: on a server, sent to this client; on a client, received.
    pub corrections: u64,
    /// Reliable messages that were not acceptable (wrong direction, bad content).
    pub refused_messages: u64,
    /// Smoothed round-trip time in milliseconds from acks (0 until the first ack): what
    /// resends wait on. It includes the time the peer waits before it next sends.
    pub rtt_ms: f32,
    /// The round trip on the wire in milliseconds, from clock stamps each side echoes with
    /// how long it held them (0 until the first echo): the ping a player should see. A
    /// datagram given with its age ([`NetManager::receive_aged`](crate::NetManager::receive_aged))
    /// is timed from its arrival, so neither side's wait for its next frame counts.
    pub ping_ms: f32,
    /// Whether a clock stamp came back yet: until one has, `ping_ms` is 0 for want of a
    /// measure; after, a 0 is a round trip under a millisecond (loopback).
    pub pinged: bool,
    /// Milliseconds since a datagram from the peer was last taken (filled in when the
    /// stats are read).
    pub silence_ms: f32,
    /// Estimated fraction of datagrams to this peer that are lost (0 to 1).
    pub loss: f32,
    /// Server: at the last broadcast, how old the state this client held of the entities
    /// it needs was, in milliseconds, at the 95th percentile over them. An entity that did
    /// not change since the state the client acknowledged is 0 old; a changed one is as old
    /// as the time since it first changed from that state, or from the last moment the
    /// client held it itself (hand-off): a body that rested for minutes, or that the client
    /// pushed until now, is not that old the moment the server's copy moves. It stays near
    /// a round trip while the byte budget carries every change, and rises when the budget
    /// starves bodies (which then go in turn, by priority).
    /// Client: 0.
    pub state_age_p95_ms: f32,
    /// Server: the oldest of those, milliseconds. Client: 0.
    pub state_age_max_ms: f32,
    /// Server: the bytes a second the server may send this client now, in all: what it
    /// found the link carries, at most
    /// [`NetConfig::link_ceiling`](crate::NetConfig::link_ceiling). Client: 0.
    pub send_rate: f32,
}

/// What a [`NetManager`](crate::NetManager) holds in its queues now: the memory that grows
/// with traffic and faults rather than with the world. Each part has a bound (the reliable
/// window, [`MAX_MESSAGE`](crate::MAX_MESSAGE), `NetConfig::inbox_limit`), and once faults heal
/// and peers acknowledge, it falls back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Sessions and connections, live and suspended (a client's one).
    pub connections: usize,
    /// Reliable messages (and fragments) sent and not yet acknowledged, on all of them.
    pub unacked_messages: usize,
    /// Their bytes.
    pub unacked_bytes: usize,
    /// Bytes of reliable messages received ahead of a missing one, or being put together.
    pub held_bytes: usize,
    /// Datagrams received and not yet taken in by a frame.
    pub inbox: usize,
    /// Events not yet polled.
    pub events: usize,
}

/// Counters that belong to no peer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetCounters {
    /// Broadcasts (send opportunities used) so far.
    pub broadcasts: u64,
    /// Datagrams from addresses that are not peers and not a handshake, or that could not
    /// be read at all.
    pub strangers: u64,
    /// Datagrams from any peer's address whose tag was wrong (corrupted or forged), over the
    /// whole run: the per-peer counts go when a peer does.
    pub bad_tags: u64,
    /// Datagrams from any peer refused as duplicates or replays, over the whole run.
    pub duplicates: u64,
    /// Answers to a challenge whose cookie was wrong or stale (a spoofed or replayed
    /// handshake): nothing was committed for them.
    pub bad_cookies: u64,
    /// Handshake datagrams not answered: hellos (of any version) and connects past the
    /// rate one address, or everyone, may ask at (every answer before a session exists
    /// counts against those limits).
    pub hellos_dropped: u64,
    /// Hellos of another protocol version answered with a refusal that names ours (within
    /// the same limits).
    pub version_refusals: u64,
    /// Datagrams dropped because the inbox was full.
    pub inbox_overflow: u64,
    /// Spawn messages that could not be carried out.
    pub failed_spawns: u64,
    /// Reliable messages too large to send.
    pub oversized_messages: u64,
    /// Bytes received, from anyone, since the start (never decreases).
    pub bytes_in: u64,
    /// Bytes sent, to anyone, since the start (never decreases).
    pub bytes_out: u64,
    /// The largest datagram received, in bytes.
    pub largest_in: u64,
    /// The largest datagram sent, in bytes.
    pub largest_out: u64,
}
