//! The recording format: header, ops, tick records, framing and checksums. It knows
//! nothing of groups; the replay module runs a recording through one.
//!
//! ```text
//! file     := "LNYR" version:u32 header_len:u32 header [kind_states] snapshot block*
//! snapshot := raw_len:u64 packed_len:u64 lz4(snapshot bytes)
//! block    := packed_len:u32 raw_len:u32 lz4(bincode Vec<TickRecord>) checksum:u64
//! ```
//!
//! A block holds up to [`BLOCK_TICKS`] consecutive ticks and its checksum covers its packed
//! bytes, so a file cut short or damaged is reported at the first tick it loses. A section
//! equal to the one its entity was last given is recorded as part of an [`Op::Repeat`]
//! run, so a world at rest costs a few bytes per tick before compression and next to
//! nothing after. Sections that a kind which [decides
//! alone](crate::KindOptions::decides_alone) wrote on the recording peer are not recorded
//! at all: a replay writes them again. Every [`BODIES_SECONDS`] of game time, and when the
//! recording stops, a tick carries a [`BodyFrame`]: the state of every body that changed
//! since the last one, for naming what differs after a divergence; every
//! [`KEYFRAME_SECONDS`], a [`Keyframe`]: the whole world, for seeking.

use crate::config::GroupConfig;
use crate::error::{Error, RecordError};
use crate::hash::StateHasher;
use crate::id::{KindId, NetId, Owner};
use crate::pose::BodyState;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The recording format version this build writes and reads. Version 4 dropped the pose of
/// every moving body every tick and the sections of kinds that decide alone, and added
/// keyframes. Version 5 added [`Op::HolderLead`] (a version 4 recording reads as before).
/// Version 6 added [`Op::Outside`], as every kind came to decide alone by default (a
/// version 4 or 5 recording replays with its kinds as they decide now). Version 7: the
/// sections it holds carry a pose's velocities on a square-root scale
/// ([`SectionWriter::velocity`](crate::codec::SectionWriter::velocity)); an older
/// recording's would read as other velocities, and its replay diverge, so it is refused.
/// Version 8 added [`Op::SkipNetIds`] (a version 7 recording reads as before). Version 9
/// added [`Op::Restart`] (a version 7 or 8 recording reads as before).
pub const RECORDING_VERSION: u32 = 9;

/// The oldest recording format version this build still reads.
pub const OLDEST_READABLE: u32 = 7;

/// Seconds of game time between two keyframes (the whole world, to seek to).
pub const KEYFRAME_SECONDS: f32 = 30.0;

/// Seconds of game time between two body frames (every changed body's state, to compare
/// with).
pub const BODIES_SECONDS: f32 = 2.0;

/// A body's state as recorded: position (x y z), rotation (qx qy qz qw), linear and angular
/// velocity.
pub type BodyBits = [f32; 13];

/// The most ticks one block of a recording holds.
pub const BLOCK_TICKS: usize = 64;

/// The largest block or snapshot a reader unpacks (a damaged length cannot make it
/// allocate more).
const MAX_UNPACKED: usize = 1 << 30;

const MAGIC: &[u8; 4] = b"LNYR";

/// What a replay needs to know before the first tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordingHeader {
    /// The scene the session ran in (its name or file: the scenery itself is in the
    /// initial snapshot).
    pub scene: String,
    /// Who recorded: "server", "client 2", ...
    pub recorded_by: String,
    /// Every kind registered when the recording started.
    pub kinds: Vec<(String, KindId)>,
    /// The fixed timestep.
    pub dt: f32,
    /// The kinds whose saved state was not version 0 when the recording started, with
    /// their [`state_version`](crate::KindOptions::state_version). It follows the header's
    /// other fields inside the header's bytes, where readers of older builds skip it, and a
    /// recording without it had every kind at version 0.
    #[serde(skip)]
    pub kind_states: Vec<(String, u16)>,
}

impl RecordingHeader {
    /// The state version the recording has for `kind` (0 unless listed).
    pub fn state_version(&self, kind: &str) -> u16 {
        self.kind_states
            .iter()
            .find(|(k, _)| k == kind)
            .map_or(0, |(_, v)| *v)
    }
}

/// One change to the group, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// A section was accepted for the entity's client path.
    Section {
        /// The entity.
        net: NetId,
        /// The section.
        payload: Vec<u8>,
    },
    /// Sections for the entities `first`, `first + 1`, ... (`count` of them, consecutive
    /// network ids), each the same bytes as the last section recorded for it.
    Repeat {
        /// The first entity.
        first: NetId,
        /// How many.
        count: u32,
    },
    /// An entity was spawned from outside the client paths.
    Spawn {
        /// Its network id.
        net: NetId,
        /// Its kind.
        kind: KindId,
        /// Its owner.
        owner: Owner,
        /// Its encoded spawn parameters.
        params: Vec<u8>,
    },
    /// An entity was despawned from outside the client paths.
    Despawn {
        /// Its network id.
        net: NetId,
    },
    /// An entity changed hands.
    SetOwner {
        /// Its network id.
        net: NetId,
        /// The new owner.
        owner: Owner,
    },
    /// An entity's network id changed (a confirmed client spawn).
    Rename {
        /// The old id.
        from: NetId,
        /// The new id.
        to: NetId,
    },
    /// An entity's body was put in a state from outside (a spawn message's state).
    BodyState {
        /// The entity.
        net: NetId,
        /// The state.
        state: BodyState,
    },
    /// The group's configuration changed (a client learning its id, say).
    Config(GroupConfig),
    /// The client paths ran.
    ClientPass,
    /// The commands the client paths gave were carried out.
    Commands,
    /// The lead of sections from outside changed (see
    /// [`Replica::set_lead`](crate::Replica::set_lead)), in ticks.
    Lead(u32),
    /// An input was handed to an entity from outside
    /// ([`EntityGroup::send_input`](crate::EntityGroup::send_input)).
    Input {
        /// The entity.
        net: NetId,
        /// The input.
        input: Vec<u8>,
    },
    /// The lead of the sections a client sends of the bodies it holds changed (see
    /// [`Replica::set_holder_lead`](crate::Replica::set_holder_lead)), in ticks.
    HolderLead {
        /// The client.
        holder: Owner,
        /// The lead.
        ticks: u32,
    },
    /// Game code changed the entity's controller from outside the group's paths
    /// ([`EntityGroup::controller_mut`](crate::EntityGroup::controller_mut)): from here on
    /// the recording keeps the sections its own server path writes, and a replay takes them
    /// instead of running that server path.
    Outside {
        /// The entity.
        net: NetId,
    },
    /// The group left this many network ids unused
    /// ([`Replica::skip_net_ids`](crate::Replica::skip_net_ids): a new host after a host
    /// migration), so the entities it spawns after have the ids they had.
    SkipNetIds(u32),
    /// An entity's controller started over from its spawn parameters
    /// ([`Replica::restart_copy`](crate::Replica::restart_copy): the server sent a copy
    /// whole again after a resumed session).
    Restart {
        /// The entity.
        net: NetId,
    },
}

/// One recorded tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickRecord {
    /// The tick (the group's tick before its physics step).
    pub tick: u64,
    /// What happened, in order.
    pub ops: Vec<Op>,
    /// [`EntityGroup::state_hash`](crate::EntityGroup::state_hash) after the step.
    pub hash: u64,
    /// Every body that changed since the last body frame, now and then.
    pub bodies: Option<BodyFrame>,
    /// The whole world after the step, more rarely.
    pub keyframe: Option<Keyframe>,
}

/// The bodies that changed (bit for bit) since the last body frame, or since the
/// recording's initial world, after a tick's physics step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BodyFrame {
    /// The entities whose body changed, or that appeared, with its state, in network-id
    /// order.
    pub changed: Vec<(NetId, BodyBits)>,
    /// The entities that are gone.
    pub gone: Vec<NetId>,
}

/// The whole world after a tick's physics step: where a replay can start, and what it is
/// compared with, entity by entity, after a divergence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Keyframe {
    /// The group, as [`EntityGroup::snapshot`](crate::EntityGroup::snapshot) bytes.
    pub snapshot: Vec<u8>,
    /// The last section recorded for each entity (what an [`Op::Repeat`] after this tick
    /// repeats), in network-id order.
    pub sections: Vec<(NetId, Vec<u8>)>,
}

/// Collects a group's ops while it records.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub(crate) out: Vec<u8>,
    pub(crate) ops: Vec<Op>,
    /// Inside the command pass: its changes are regenerated on replay, not recorded.
    pub(crate) quiet: bool,
    /// The last section recorded for each entity.
    pub(crate) sections: HashMap<NetId, Vec<u8>>,
    /// Tick records not yet written as a block.
    pub(crate) pending: Vec<TickRecord>,
    /// Ticks between keyframes, and between body frames.
    pub(crate) every: (u64, u64),
    /// Ticks recorded so far.
    pub(crate) ticks: u64,
    /// Every body's state as of the last body frame.
    pub(crate) bodies: HashMap<NetId, BodyBits>,
}

impl Recorder {
    /// Whether the tick about to be recorded carries a keyframe, and a body frame.
    pub(crate) fn due(&self) -> (bool, bool) {
        let next = self.ticks + 1;
        let at = |every: u64| every > 0 && next.is_multiple_of(every);
        (at(self.every.0), at(self.every.1))
    }

    /// The body frame of a world whose bodies are `now` (in network-id order), remembering
    /// them.
    pub(crate) fn body_frame(&mut self, now: Vec<(NetId, BodyBits)>) -> BodyFrame {
        let bits = |b: &BodyBits| b.map(f32::to_bits);
        let mut frame = BodyFrame::default();
        let mut next = HashMap::with_capacity(now.len());
        for (net, b) in now {
            if self.bodies.get(&net).map(bits) != Some(bits(&b)) {
                frame.changed.push((net, b));
            }
            next.insert(net, b);
        }
        frame.gone = self
            .bodies
            .keys()
            .filter(|k| !next.contains_key(k))
            .copied()
            .collect();
        frame.gone.sort_unstable();
        self.bodies = next;
        frame
    }

    /// A keyframe of a group whose snapshot is `snapshot`.
    pub(crate) fn keyframe(&self, snapshot: Vec<u8>) -> Keyframe {
        let mut sections: Vec<(NetId, Vec<u8>)> =
            self.sections.iter().map(|(n, s)| (*n, s.clone())).collect();
        sections.sort_unstable_by_key(|(n, _)| *n);
        Keyframe { snapshot, sections }
    }

    pub(crate) fn op(&mut self, op: Op) {
        if self.quiet {
            return;
        }
        if let Op::Rename { from, to } = &op
            && let Some(s) = self.sections.remove(from)
        {
            self.sections.insert(*to, s);
        }
        self.ops.push(op);
    }

    /// Records a section accepted for `net`: as part of a run if it repeats the entity's
    /// last one.
    pub(crate) fn section(&mut self, net: NetId, payload: &[u8]) {
        if self.quiet {
            return;
        }
        if self
            .sections
            .get(&net)
            .is_some_and(|s| s.as_slice() == payload)
        {
            if let Some(Op::Repeat { first, count }) = self.ops.last_mut()
                && first.0.checked_add(*count) == Some(net.0)
            {
                *count += 1;
                return;
            }
            self.ops.push(Op::Repeat {
                first: net,
                count: 1,
            });
            return;
        }
        self.sections.insert(net, payload.to_vec());
        self.ops.push(Op::Section {
            net,
            payload: payload.to_vec(),
        });
    }

    /// Ends a tick: its record waits for its block, written when full.
    pub(crate) fn tick(&mut self, record: TickRecord) {
        self.ticks += 1;
        self.pending.push(record);
        if self.pending.len() >= BLOCK_TICKS {
            self.flush();
        }
    }

    /// Writes the waiting tick records as a block.
    pub(crate) fn flush(&mut self) {
        if !self.pending.is_empty() {
            // Encoding into memory cannot fail for these types.
            let _ = write_block(&mut self.out, &self.pending);
            self.pending.clear();
        }
    }
}

fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// The most a recording's header may claim to hold when read (a damaged length inside it
/// cannot make the reader allocate more).
const MAX_HEADER: usize = 1 << 20;

/// The most one block's tick records may claim to hold when read.
const MAX_RECORDS: usize = 1 << 28;

/// The most bytes LZ4 unpacks from one packed byte (its best ratio is about 255 to 1): a
/// damaged length that claims more is refused before anything is allocated for it.
const LZ4_RATIO: usize = 256;

/// The bytes that start a recording: magic, version, header and initial snapshot.
pub(crate) fn preamble(header: &RecordingHeader, snapshot: &[u8]) -> Result<Vec<u8>, Error> {
    let mut h = bincode::serde::encode_to_vec(header, config())
        .map_err(|e| Error::Record(RecordError::BadRecording(e.to_string())))?;
    if !header.kind_states.is_empty() {
        bincode::serde::encode_into_std_write(&header.kind_states, &mut h, config())
            .map_err(|e| Error::Record(RecordError::BadRecording(e.to_string())))?;
    }
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&RECORDING_VERSION.to_le_bytes());
    out.extend_from_slice(&(h.len() as u32).to_le_bytes());
    out.extend_from_slice(&h);
    let packed = lz4_flex::block::compress(snapshot);
    out.extend_from_slice(&(snapshot.len() as u64).to_le_bytes());
    out.extend_from_slice(&(packed.len() as u64).to_le_bytes());
    out.extend_from_slice(&packed);
    Ok(out)
}

/// Appends one block of consecutive tick records, packed and checksummed.
pub(crate) fn write_block(out: &mut Vec<u8>, records: &[TickRecord]) -> Result<(), Error> {
    let body = bincode::serde::encode_to_vec(records, config())
        .map_err(|e| Error::Record(RecordError::BadRecording(e.to_string())))?;
    let packed = lz4_flex::block::compress(&body);
    out.extend_from_slice(&(packed.len() as u32).to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&packed);
    let mut h = StateHasher::new();
    h.bytes(&packed);
    out.extend_from_slice(&h.finish().to_le_bytes());
    Ok(())
}

/// Unpacks `packed` into `raw_len` bytes, or fails with `bad`.
fn unpack(packed: &[u8], raw_len: u64, bad: impl Fn() -> Error) -> Result<Vec<u8>, Error> {
    let raw_len = usize::try_from(raw_len)
        .ok()
        .filter(|&n| n <= MAX_UNPACKED && n <= packed.len().saturating_mul(LZ4_RATIO) + 64)
        .ok_or_else(&bad)?;
    match lz4_flex::block::decompress(packed, raw_len) {
        Ok(raw) if raw.len() == raw_len => Ok(raw),
        _ => Err(bad()),
    }
}

/// A recording read into memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// Its header.
    pub header: RecordingHeader,
    /// The initial world, as [`EntityGroup::snapshot`](crate::EntityGroup::snapshot) bytes.
    pub snapshot: Vec<u8>,
    /// The ticks.
    pub ticks: Vec<TickRecord>,
}

fn take<'a>(rest: &mut &'a [u8], n: usize, what: impl Fn() -> Error) -> Result<&'a [u8], Error> {
    if rest.len() < n {
        return Err(what());
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Ok(head)
}

impl Recording {
    /// Reads a recording. Another format version, a truncated file and corrupted bytes each
    /// give their own error.
    pub fn from_bytes(bytes: &[u8]) -> Result<Recording, Error> {
        let mut rest = bytes;
        let head = || Error::Record(RecordError::RecordingTruncated { tick: None });
        if take(&mut rest, 4, head)? != MAGIC {
            return Err(Error::Record(RecordError::NotARecording));
        }
        let version = u32::from_le_bytes(take(&mut rest, 4, head)?.try_into().unwrap_or_default());
        if !(OLDEST_READABLE..=RECORDING_VERSION).contains(&version) {
            return Err(Error::Record(RecordError::RecordingVersion {
                found: version,
                supported: RECORDING_VERSION,
            }));
        }
        let hlen =
            u32::from_le_bytes(take(&mut rest, 4, head)?.try_into().unwrap_or_default()) as usize;
        let h = take(&mut rest, hlen, head)?;
        let limited = config().with_limit::<MAX_HEADER>();
        let (mut header, used): (RecordingHeader, usize) =
            bincode::serde::decode_from_slice(h, limited)
                .map_err(|_| Error::Record(RecordError::RecordingCorrupted { tick: None }))?;
        if used < h.len() {
            header.kind_states = bincode::serde::decode_from_slice(&h[used..], limited)
                .map_err(|_| Error::Record(RecordError::RecordingCorrupted { tick: None }))?
                .0;
        }
        let u64_of = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
        let raw_len = u64_of(take(&mut rest, 8, head)?);
        let packed_len = u64_of(take(&mut rest, 8, head)?);
        let packed_len = usize::try_from(packed_len)
            .map_err(|_| Error::Record(RecordError::RecordingCorrupted { tick: None }))?;
        let packed = take(&mut rest, packed_len, head)?;
        let snapshot = unpack(packed, raw_len, || {
            Error::Record(RecordError::RecordingCorrupted { tick: None })
        })?;
        let mut ticks: Vec<TickRecord> = Vec::new();
        while !rest.is_empty() {
            let next = ticks.last().map(|t| t.tick + 1);
            let cut = || Error::Record(RecordError::RecordingTruncated { tick: next });
            let damaged = || Error::Record(RecordError::RecordingCorrupted { tick: next });
            let u32_of = |b: &[u8]| u32::from_le_bytes(b.try_into().unwrap_or_default());
            let packed_len = u32_of(take(&mut rest, 4, cut)?) as usize;
            let raw_len = u32_of(take(&mut rest, 4, cut)?);
            let packed = take(&mut rest, packed_len, cut)?;
            let sum = u64_of(take(&mut rest, 8, cut)?);
            let mut h = StateHasher::new();
            h.bytes(packed);
            if h.finish() != sum {
                return Err(damaged());
            }
            let body = unpack(packed, u64::from(raw_len), damaged)?;
            let limited = config().with_limit::<MAX_RECORDS>();
            let (records, used): (Vec<TickRecord>, usize) =
                bincode::serde::decode_from_slice(&body, limited).map_err(|_| damaged())?;
            if used != body.len() || records.len() > BLOCK_TICKS {
                return Err(damaged());
            }
            ticks.extend(records);
        }
        Ok(Recording {
            header,
            snapshot,
            ticks,
        })
    }

    /// Writes it back (after a test changed it, say).
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut out = preamble(&self.header, &self.snapshot)?;
        for block in self.ticks.chunks(BLOCK_TICKS) {
            write_block(&mut out, block)?;
        }
        Ok(out)
    }
}
