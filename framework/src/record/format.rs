//! The recording format: header, ops, tick records, framing and checksums. It knows
//! nothing of groups; the replay module runs a recording through one.

use crate::config::GroupConfig;
use crate::error::Error;
use crate::hash::StateHasher;
use crate::id::{KindId, NetId, Owner};
use crate::pose::BodyState;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The recording format version this build writes and reads.
pub const RECORDING_VERSION: u32 = 1;

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
    /// The position and rotation (x y z, qx qy qz qw) after the step of every entity whose
    /// pose changed since the tick before (resting bodies cost nothing).
    pub poses: Vec<(NetId, [f32; 7])>,
    /// Entities that existed the tick before and do not now.
    pub gone: Vec<NetId>,
}

/// Collects a group's ops while it records.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub(crate) out: Vec<u8>,
    pub(crate) ops: Vec<Op>,
    /// Inside the command pass: its changes are regenerated on replay, not recorded.
    pub(crate) quiet: bool,
    /// The poses as of the last recorded tick.
    pub(crate) last: BTreeMap<NetId, [f32; 7]>,
}

impl Recorder {
    /// The poses that changed and the entities that went since the last tick, remembering
    /// the new poses.
    pub(crate) fn delta(
        &mut self,
        now: Vec<(NetId, [f32; 7])>,
    ) -> (Vec<(NetId, [f32; 7])>, Vec<NetId>) {
        let mut changed = Vec::new();
        let mut next = BTreeMap::new();
        for (net, p) in now {
            if self.last.get(&net).map(|q| q.map(f32::to_bits)) != Some(p.map(f32::to_bits)) {
                changed.push((net, p));
            }
            next.insert(net, p);
        }
        let gone = self
            .last
            .keys()
            .filter(|k| !next.contains_key(k))
            .copied()
            .collect();
        self.last = next;
        (changed, gone)
    }

    pub(crate) fn op(&mut self, op: Op) {
        if !self.quiet {
            self.ops.push(op);
        }
    }
}

fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// The bytes that start a recording: magic, version, header and initial snapshot.
pub(crate) fn preamble(header: &RecordingHeader, snapshot: &[u8]) -> Result<Vec<u8>, Error> {
    let h = bincode::serde::encode_to_vec(header, config())
        .map_err(|e| Error::BadRecording(e.to_string()))?;
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&RECORDING_VERSION.to_le_bytes());
    out.extend_from_slice(&(h.len() as u32).to_le_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(&(snapshot.len() as u64).to_le_bytes());
    out.extend_from_slice(snapshot);
    Ok(out)
}

/// Appends one tick record, framed and checksummed.
pub(crate) fn write_record(out: &mut Vec<u8>, record: &TickRecord) -> Result<(), Error> {
    let body = bincode::serde::encode_to_vec(record, config())
        .map_err(|e| Error::BadRecording(e.to_string()))?;
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    let mut h = StateHasher::new();
    h.bytes(&body);
    out.extend_from_slice(&h.finish().to_le_bytes());
    Ok(())
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
        let head = || Error::RecordingTruncated { tick: None };
        if take(&mut rest, 4, head)? != MAGIC {
            return Err(Error::NotARecording);
        }
        let version = u32::from_le_bytes(take(&mut rest, 4, head)?.try_into().unwrap_or_default());
        if version != RECORDING_VERSION {
            return Err(Error::RecordingVersion {
                found: version,
                supported: RECORDING_VERSION,
            });
        }
        let hlen =
            u32::from_le_bytes(take(&mut rest, 4, head)?.try_into().unwrap_or_default()) as usize;
        let h = take(&mut rest, hlen, head)?;
        let (header, _): (RecordingHeader, usize) = bincode::serde::decode_from_slice(h, config())
            .map_err(|_| Error::RecordingCorrupted { tick: None })?;
        let slen = u64::from_le_bytes(take(&mut rest, 8, head)?.try_into().unwrap_or_default());
        let slen = usize::try_from(slen).map_err(|_| Error::RecordingCorrupted { tick: None })?;
        let snapshot = take(&mut rest, slen, head)?.to_vec();
        let mut ticks: Vec<TickRecord> = Vec::new();
        while !rest.is_empty() {
            let next = ticks.last().map(|t| t.tick + 1);
            let cut = || Error::RecordingTruncated { tick: next };
            let len = u32::from_le_bytes(take(&mut rest, 4, cut)?.try_into().unwrap_or_default())
                as usize;
            let body = take(&mut rest, len, cut)?;
            let sum = u64::from_le_bytes(take(&mut rest, 8, cut)?.try_into().unwrap_or_default());
            let mut h = StateHasher::new();
            h.bytes(body);
            if h.finish() != sum {
                return Err(Error::RecordingCorrupted { tick: next });
            }
            let (record, used): (TickRecord, usize) =
                bincode::serde::decode_from_slice(body, config())
                    .map_err(|_| Error::RecordingCorrupted { tick: next })?;
            if used != body.len() {
                return Err(Error::RecordingCorrupted { tick: next });
            }
            ticks.push(record);
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
        for t in &self.ticks {
            write_record(&mut out, t)?;
        }
        Ok(out)
    }
}
