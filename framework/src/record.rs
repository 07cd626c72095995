//! Recording a group's session and replaying it headless, bit for bit.
//!
//! A recording is what a replay needs and nothing more: the registered kinds, the scene's
//! name, the initial world (a [`snapshot`](crate::EntityGroup::snapshot)), and then, tick
//! by tick, every change that came from outside the group's own client paths, in order:
//! the sections accepted for client paths, spawns, despawns, owner changes, renames and body
//! states set from outside, the client pass, the command pass, and after the physics step
//! the world's hash and every entity's pose. A replay restores the initial world and runs
//! the same ops through the same client paths; no server path runs. Spawns and despawns
//! that client paths asked for are not recorded: the replay's client paths ask again.
//!
//! ```text
//! file   := "LNYR" version:u32 header_len:u32 header snapshot_len:u64 snapshot record*
//! record := len:u32 body[len] checksum:u64        (body: one tick, bincode 2)
//! ```
//!
//! A file of another version, a truncated file and a file with corrupted bytes each give
//! their own [`Error`]; the checksum of every record catches corruption where it happens.

use crate::hash::StateHasher;
use crate::pose::BodyState;
use crate::registry::KindRegistry;
use crate::{EntityGroup, Error, KindId, NetId, Owner, Vec3};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

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
    Config(crate::GroupConfig),
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
    /// [`EntityGroup::state_hash`] after the step.
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
    /// The initial world, as [`EntityGroup::snapshot`] bytes.
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

/// An entity whose pose differs between the recording and the replay.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityDiff {
    /// The entity.
    pub net: NetId,
    /// Where the recording has it (position, rotation), if it has it.
    pub recorded: Option<[f32; 7]>,
    /// Where the replay has it, if it has it.
    pub replayed: Option<[f32; 7]>,
    /// Distance between the two positions, metres (infinite if one side lacks it).
    pub distance: f32,
    /// Angle between the two rotations, radians.
    pub angle: f32,
}

/// Where a replay stopped agreeing with its recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// The first tick whose state differs.
    pub tick: u64,
    /// The recorded hash.
    pub expected: u64,
    /// The replayed hash.
    pub found: u64,
    /// The entities that differ (by pose, or by existing on one side only). Empty if only
    /// velocities differ.
    pub entities: Vec<EntityDiff>,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "diverged at tick {}: hash {:016x} recorded, {:016x} replayed",
            self.tick, self.expected, self.found
        )?;
        if self.entities.is_empty() {
            writeln!(f, "  every pose matches: velocities differ")?;
        }
        for d in &self.entities {
            match (d.recorded, d.replayed) {
                (Some(_), Some(_)) => writeln!(
                    f,
                    "  {}: position off by {:.6} m, rotation by {:.6} rad",
                    d.net, d.distance, d.angle
                )?,
                (Some(_), None) => {
                    writeln!(f, "  {}: in the recording, missing from the replay", d.net)?
                }
                _ => writeln!(f, "  {}: in the replay, missing from the recording", d.net)?,
            }
        }
        Ok(())
    }
}

/// The poses `EntityGroup` records after each step.
pub(crate) fn poses_of(group: &EntityGroup) -> Vec<(NetId, [f32; 7])> {
    group
        .iter()
        .map(|e| {
            let t = e.body().translation();
            let r = e.body().rotation();
            (e.net_id(), [t.x, t.y, t.z, r.x, r.y, r.z, r.w])
        })
        .collect()
}

fn diff(recorded: &[(NetId, [f32; 7])], replayed: &[(NetId, [f32; 7])]) -> Vec<EntityDiff> {
    let mut out = Vec::new();
    let find = |v: &[(NetId, [f32; 7])], n: NetId| v.iter().find(|(k, _)| *k == n).map(|(_, p)| *p);
    let mut ids: Vec<NetId> = recorded.iter().chain(replayed).map(|(n, _)| *n).collect();
    ids.sort_unstable();
    ids.dedup();
    for net in ids {
        let (a, b) = (find(recorded, net), find(replayed, net));
        if a.map(|p| p.map(f32::to_bits)) == b.map(|p| p.map(f32::to_bits)) {
            continue;
        }
        let (distance, angle) = match (a, b) {
            (Some(a), Some(b)) => {
                let d = (Vec3::new(a[0], a[1], a[2]) - Vec3::new(b[0], b[1], b[2])).length();
                let qa = crate::Quat::from_xyzw(a[3], a[4], a[5], a[6]);
                let qb = crate::Quat::from_xyzw(b[3], b[4], b[5], b[6]);
                (d, qa.angle_between(qb))
            }
            _ => (f32::INFINITY, 0.0),
        };
        out.push(EntityDiff {
            net,
            recorded: a,
            replayed: b,
            distance,
            angle,
        });
    }
    out
}

/// A recording being replayed through a group: step it, read its entities, assert.
///
/// ```no_run
/// # use std::sync::Arc;
/// # let registry = Arc::new(lanyard::KindRegistry::new());
/// use lanyard::record::Replay;
/// let bytes = std::fs::read("session.lnyr").unwrap();
/// let mut replay = Replay::open(&bytes, registry).unwrap();
/// replay.run_to(120).unwrap();               // checks the hash at every tick on the way
/// assert!(replay.group().len() > 0);
/// ```
pub struct Replay {
    recording: Recording,
    group: EntityGroup,
    next: usize,
    /// The recorded poses as of the last replayed tick.
    known: BTreeMap<NetId, [f32; 7]>,
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay")
            .field("header", &self.recording.header)
            .field("next", &self.next)
            .field("ticks", &self.recording.ticks.len())
            .finish()
    }
}

/// What [`Replay::step`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The tick replayed and its hash matched.
    Matched(u64),
    /// The tick replayed and differs from the recording.
    Diverged(Box<Divergence>),
    /// There are no more ticks.
    End,
}

impl Replay {
    /// Reads a recording and restores its initial world. The registry must hold every kind
    /// the recording lists.
    pub fn open(bytes: &[u8], registry: Arc<KindRegistry>) -> Result<Replay, Error> {
        Self::from_recording(Recording::from_bytes(bytes)?, registry)
    }

    /// Replays a recording already read.
    pub fn from_recording(
        recording: Recording,
        registry: Arc<KindRegistry>,
    ) -> Result<Replay, Error> {
        for (name, id) in &recording.header.kinds {
            if registry.id_of(name) != Some(*id) {
                return Err(Error::UnknownKindName(name.clone()));
            }
        }
        let group = EntityGroup::restore(registry, &recording.snapshot)?;
        Ok(Replay {
            recording,
            group,
            next: 0,
            known: BTreeMap::new(),
        })
    }

    /// The recording's header.
    pub fn header(&self) -> &RecordingHeader {
        &self.recording.header
    }

    /// How many ticks the recording holds.
    pub fn len(&self) -> usize {
        self.recording.ticks.len()
    }

    /// Whether the recording holds no ticks.
    pub fn is_empty(&self) -> bool {
        self.recording.ticks.is_empty()
    }

    /// The world as replayed so far.
    pub fn group(&self) -> &EntityGroup {
        &self.group
    }

    /// The world, mutably (to drain effects for drawing, say).
    pub fn group_mut(&mut self) -> &mut EntityGroup {
        &mut self.group
    }

    /// The next tick to replay.
    pub fn tick(&self) -> u64 {
        self.group.tick()
    }

    /// Replays one tick and checks it.
    pub fn step(&mut self) -> Result<Step, Error> {
        let Some(record) = self.recording.ticks.get(self.next) else {
            return Ok(Step::End);
        };
        self.next += 1;
        let bad_config = record
            .ops
            .iter()
            .any(|op| matches!(op, Op::Config(c) if !c.is_valid()));
        if bad_config {
            return Err(Error::RecordingCorrupted {
                tick: Some(record.tick),
            });
        }
        let g = &mut self.group;
        for op in &record.ops {
            // The ops did happen in the recorded session; one that cannot be redone here
            // leaves the replay to diverge, which the hash then reports.
            let _ = match op {
                Op::Section { net, payload } => {
                    g.offer_section(
                        crate::codec::Section {
                            net_id: *net,
                            payload,
                        },
                        Owner::Server,
                    );
                    Ok(())
                }
                Op::Spawn {
                    net,
                    kind,
                    owner,
                    params,
                } => g
                    .insert_with_net_id(*net, *kind, params.clone(), *owner)
                    .map(|_| ()),
                Op::Despawn { net } => match g.id_of(*net) {
                    Some(id) => g.despawn(id),
                    None => Ok(()),
                },
                Op::SetOwner { net, owner } => match g.id_of(*net) {
                    Some(id) => g.set_owner(id, *owner),
                    None => Ok(()),
                },
                Op::Rename { from, to } => g.rename_net_id(*from, *to).map(|_| ()),
                Op::BodyState { net, state } => match g.id_of(*net) {
                    Some(id) => g.set_body_state(id, state),
                    None => Ok(()),
                },
                Op::Config(c) => {
                    g.set_config(*c);
                    Ok(())
                }
                Op::ClientPass => {
                    g.run_client_paths();
                    Ok(())
                }
                Op::Commands => {
                    g.apply_commands();
                    g.take_spawn_requests();
                    Ok(())
                }
            };
        }
        g.step_physics();
        g.drain_changes().for_each(drop);
        for net in &record.gone {
            self.known.remove(net);
        }
        self.known.extend(record.poses.iter().copied());
        let found = g.state_hash();
        if found == record.hash && g.tick() == record.tick + 1 {
            return Ok(Step::Matched(record.tick));
        }
        Ok(Step::Diverged(Box::new(Divergence {
            tick: record.tick,
            expected: record.hash,
            found,
            entities: diff(
                &self.known.iter().map(|(n, p)| (*n, *p)).collect::<Vec<_>>(),
                &poses_of(g),
            ),
        })))
    }

    /// Replays up to (not including) tick `tick`, checking every tick; stops at the first
    /// divergence and returns it.
    pub fn run_to(&mut self, tick: u64) -> Result<Option<Divergence>, Error> {
        while self.group.tick() < tick {
            match self.step()? {
                Step::Matched(_) => {}
                Step::Diverged(d) => return Ok(Some(*d)),
                Step::End => break,
            }
        }
        Ok(None)
    }

    /// Replays every remaining tick, calling `progress(done, total)` now and then; returns
    /// the first divergence, if any.
    pub fn verify(
        &mut self,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<Option<Divergence>, Error> {
        let total = self.len();
        loop {
            if self.next.is_multiple_of(256) {
                progress(self.next, total);
            }
            match self.step()? {
                Step::Matched(_) => {}
                Step::Diverged(d) => return Ok(Some(*d)),
                Step::End => {
                    progress(total, total);
                    return Ok(None);
                }
            }
        }
    }
}
