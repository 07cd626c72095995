//! The world as bytes: the recording a group writes, the hash of its state, and
//! snapshots that restore it exactly.

use super::{Counters, EntityGroup, kind_label};
use crate::config::GroupConfig;
use crate::entity::{Entity, Slot};
use crate::error::{Error, RecordError};
use crate::hash::StateHasher;
use crate::id::{KindId, NetId};
use crate::record::format::{self as rec, Op, Recorder, RecordingHeader};
use crate::registry::KindRegistry;
use rapier3d::prelude::PhysicsWorld;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

impl EntityGroup {
    /// Starts recording everything that happens to the group from now on (see
    /// [`crate::record`]). Call it between frames. The recorded bytes accumulate in memory;
    /// take them with [`take_recording`](Self::take_recording) and write them where you like,
    /// and end with [`stop_recording`](Self::stop_recording). Starting while recording is an
    /// error ([`RecordError::AlreadyRecording`]): it would drop what was not taken yet.
    pub fn start_recording(&mut self, scene: &str, recorded_by: &str) -> Result<(), Error> {
        if self.recorder.is_some() {
            // Starting again would drop what was recorded and not yet taken.
            return Err(Error::Record(RecordError::AlreadyRecording));
        }
        let header = RecordingHeader {
            scene: scene.to_owned(),
            recorded_by: recorded_by.to_owned(),
            kinds: self
                .registry
                .kinds()
                .map(|(id, n)| (n.to_owned(), id))
                .collect(),
            dt: self.config.dt,
            kind_states: self
                .registry
                .kinds()
                .filter_map(|(id, n)| {
                    let v = self.registry.options(id)?.state_version;
                    (v != 0).then(|| (n.to_owned(), v))
                })
                .collect(),
        };
        let out = rec::preamble(&header, &self.snapshot()?)?;
        let ticks = |seconds: f32| (seconds / self.config.dt).round().max(1.0) as u64;
        let mut r = Recorder {
            out,
            every: (ticks(rec::KEYFRAME_SECONDS), ticks(rec::BODIES_SECONDS)),
            bodies: self.body_bits().into_iter().collect(),
            ..Recorder::default()
        };
        // The leads set before now are not in the snapshot: a replay learns them first.
        if self.lead_ticks != 0 {
            r.op(Op::Lead(self.lead_ticks));
        }
        for (&holder, &ticks) in &self.holder_leads {
            r.op(Op::HolderLead { holder, ticks });
        }
        // Nor which entities game code changed from outside before now.
        for &(net, index) in &self.order {
            if self.slots[index as usize].outside {
                r.op(Op::Outside { net });
            }
        }
        self.recorder = Some(r);
        Ok(())
    }

    /// Whether the group is recording.
    pub fn is_recording(&self) -> bool {
        self.recorder.is_some()
    }

    /// The recorded bytes since the last call (append them to the recording's file). Ticks
    /// are packed in blocks of up to [`BLOCK_TICKS`](crate::record::BLOCK_TICKS): taking
    /// often makes small blocks that compress less; once a second is plenty.
    ///
    /// An error ([`RecordError::NotRecording`]) if the group is not recording: an empty take
    /// would look like a recording that had nothing in it.
    pub fn take_recording(&mut self) -> Result<Vec<u8>, Error> {
        let r = self
            .recorder
            .as_mut()
            .ok_or(Error::Record(RecordError::NotRecording))?;
        r.flush();
        Ok(std::mem::take(&mut r.out))
    }

    /// Ends the recording: the bytes recorded since the last
    /// [`take_recording`](Self::take_recording) (append them to the file, which is then
    /// complete). Its last tick, unless a take already wrote it, carries a body frame
    /// (every body as it ends), so a divergence after the last periodic one can still
    /// name the entities that differ. An error if the group is not recording.
    pub fn stop_recording(&mut self) -> Result<Vec<u8>, Error> {
        let now = self.body_bits();
        let Some(mut r) = self.recorder.take() else {
            return Err(Error::Record(RecordError::NotRecording));
        };
        if r.pending.last().is_some_and(|t| t.bodies.is_none()) {
            let frame = r.body_frame(now);
            if let Some(last) = r.pending.last_mut() {
                last.bodies = Some(frame);
            }
        }
        r.flush();
        Ok(std::mem::take(&mut r.out))
    }

    /// Every entity's body state (position, rotation, linear and angular velocity), in
    /// network-id order.
    pub(crate) fn body_bits(&self) -> Vec<(NetId, rec::BodyBits)> {
        self.iter()
            .map(|e| (e.net_id(), body_state(e.body())))
            .collect()
    }

    /// A hash over the exact bits of every entity body's pose and velocities, in
    /// network-id order. Two groups with the same hash are, for every practical purpose,
    /// in the same state; one flipped bit anywhere changes it.
    pub fn state_hash(&self) -> u64 {
        let mut h = StateHasher::new();
        for e in self.iter() {
            let s = body_state(e.body()).map(f32::to_bits);
            h.word(u64::from(e.net_id().0) | u64::from(s[0]) << 32);
            for pair in s[1..].chunks_exact(2) {
                h.word(u64::from(pair[0]) | u64::from(pair[1]) << 32);
            }
        }
        h.finish()
    }

    /// Captures the whole group: the physics world (rapier's own serialisation, so contacts
    /// and solver caches come along), every entity, and every controller's own state.
    ///
    /// Take it between frames. Sections received but not yet applied are not included.
    ///
    /// Layout: `"LNYS"`, the format version (u32), an FNV-1a checksum of the rest (u64),
    /// then the entity table's length (u64), the entity table and the physics world, both
    /// bincode 2.
    pub fn snapshot(&self) -> Result<Vec<u8>, Error> {
        let snap = SnapshotMeta {
            config: self.config,
            tick: self.tick,
            next_net_id: self.next_net_id,
            free: self.free.clone(),
            slots: self
                .slots
                .iter()
                .zip(&self.controllers)
                .map(|(s, c)| SlotSnapshot {
                    generation: s.generation,
                    entity: s.entity.clone(),
                    params: s.params.clone(),
                    state: c
                        .as_ref()
                        .map(|c| {
                            let mut out = Vec::new();
                            c.save_state(&mut out);
                            out
                        })
                        .unwrap_or_default(),
                })
                .collect(),
            counters: self.counters,
        };
        let trust = TrustMeta {
            taken: self.counters.trusted,
            entities: self.trusted.iter().map(|(n, left)| (*n, *left)).collect(),
        };
        let cfg = bincode::config::standard();
        let mut meta = bincode::serde::encode_to_vec(&snap, cfg)
            .map_err(|e| Error::BadSnapshot(e.to_string()))?;
        bincode::serde::encode_into_std_write(&trust, &mut meta, cfg)
            .map_err(|e| Error::BadSnapshot(e.to_string()))?;
        let mut body = (meta.len() as u64).to_le_bytes().to_vec();
        body.extend_from_slice(&meta);
        bincode::serde::encode_into_std_write(&self.physics, &mut body, cfg)
            .map_err(|e| Error::BadSnapshot(e.to_string()))?;
        let mut check = StateHasher::new();
        check.bytes(&body);
        let mut out = Vec::with_capacity(16 + body.len());
        out.extend_from_slice(SNAPSHOT_MAGIC);
        out.extend_from_slice(&SNAPSHOT_VERSION.to_le_bytes());
        out.extend_from_slice(&check.finish().to_le_bytes());
        out.extend_from_slice(&body);
        Ok(out)
    }

    /// Rebuilds a group from [`snapshot`](Self::snapshot) bytes. Controllers are built again
    /// by their kind's factory from the stored spawn parameters, then given their saved
    /// state. The registry must hold every kind the snapshot uses.
    ///
    /// A snapshot of another format version, a truncated one and a corrupted one (its
    /// checksum does not match) are each refused with their own [`Error::BadSnapshot`]
    /// message.
    pub fn restore(registry: Arc<KindRegistry>, bytes: &[u8]) -> Result<Self, Error> {
        Self::restore_versions(registry, bytes, &|_| None)
    }

    /// [`restore`](Self::restore) a snapshot whose kinds saved their state at the versions
    /// `version_of` says (`None`: this build's), migrating each to this build's version.
    pub(crate) fn restore_versions(
        registry: Arc<KindRegistry>,
        bytes: &[u8],
        version_of: &dyn Fn(KindId) -> Option<u16>,
    ) -> Result<Self, Error> {
        let (version, meta, world) = open_snapshot(bytes)?;
        let (snap, trust, physics) = decode_snapshot(version, meta, world)?;
        if !snap.config.is_valid() {
            return Err(bad("the configuration is not valid (timestep or gravity)"));
        }
        let mut group = EntityGroup::new(registry, snap.config);
        group.physics = physics;
        group.tick = snap.tick;
        group.next_net_id = snap.next_net_id;
        group.free = snap.free;
        group.counters = snap.counters;
        group.counters.trusted = trust.taken;
        group.trusted = trust.entities.into_iter().collect();
        for (index, s) in snap.slots.into_iter().enumerate() {
            group.restore_slot(index, s, version_of)?;
        }
        group.order.sort_unstable_by_key(|e| e.0);
        if group.order.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(bad("two entities share a network id"));
        }
        Ok(group)
    }

    /// Puts back slot `index` as `s` saved it: its entity's controller built again and
    /// given its saved state (migrated from the version `version_of` says).
    fn restore_slot(
        &mut self,
        index: usize,
        s: SlotSnapshot,
        version_of: &dyn Fn(KindId) -> Option<u16>,
    ) -> Result<(), Error> {
        let mut controller = None;
        if let Some(e) = &s.entity {
            if self.physics.bodies.get(e.body).is_none() {
                return Err(bad("an entity's body is missing from the physics world"));
            }
            let mut c = self.registry.build(e.kind, &s.params)?.controller;
            let state = match version_of(e.kind) {
                Some(v) => self.registry.migrate(e.kind, v, &s.state)?,
                None => s.state.clone(),
            };
            c.load_state(&state).map_err(|err| Error::BadState {
                kind: kind_label(&self.registry, e.kind),
                net: e.net_id,
                reason: err.to_string(),
            })?;
            controller = Some(c);
            self.order.push((e.net_id, index as u32));
        }
        self.slots.push(Slot {
            generation: s.generation,
            entity: s.entity,
            params: s.params,
            pending: None,
            outside: false,
            still: false,
        });
        self.controllers.push(controller);
        Ok(())
    }
}

/// A snapshot's refusal, saying why.
fn bad(m: &str) -> Error {
    Error::BadSnapshot(m.to_owned())
}

/// A snapshot's header checked (its magic, its format version, its checksum): the format
/// version, the entity table's bytes and the physics world's.
fn open_snapshot(bytes: &[u8]) -> Result<(u32, &[u8], &[u8]), Error> {
    let rest = bytes
        .strip_prefix(SNAPSHOT_MAGIC)
        .ok_or_else(|| bad("not a Lanyard snapshot"))?;
    let (version, rest) = rest
        .split_first_chunk::<4>()
        .ok_or_else(|| bad("truncated header"))?;
    let version = u32::from_le_bytes(*version);
    if !(1..=SNAPSHOT_VERSION).contains(&version) {
        return Err(Error::BadSnapshot(format!(
            "format version {version}, this build reads 1 to {SNAPSHOT_VERSION}"
        )));
    }
    let (sum, rest) = rest
        .split_first_chunk::<8>()
        .ok_or_else(|| bad("truncated header"))?;
    let mut check = StateHasher::new();
    check.bytes(rest);
    if check.finish() != u64::from_le_bytes(*sum) {
        return Err(bad(
            "checksum mismatch: the snapshot is truncated or corrupted",
        ));
    }
    let (len, rest) = rest
        .split_first_chunk::<8>()
        .ok_or_else(|| bad("truncated header"))?;
    let len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| bad("bad length"))?;
    if len > rest.len() {
        return Err(bad("truncated entity table"));
    }
    let (meta, world) = rest.split_at(len);
    Ok((version, meta, world))
}

/// A snapshot's entity table (`meta`, of format `version`) and physics world decoded,
/// within limits on what a damaged snapshot may claim, so it cannot make us allocate more.
fn decode_snapshot(
    version: u32,
    meta: &[u8],
    world: &[u8],
) -> Result<(SnapshotMeta, TrustMeta, PhysicsWorld), Error> {
    let cfg = bincode::config::standard().with_limit::<{ 1 << 28 }>();
    let (snap, read): (SnapshotMeta, usize) = bincode::serde::decode_from_slice(meta, cfg)
        .map_err(|e| Error::BadSnapshot(e.to_string()))?;
    // Format 1 ends there; format 2 adds who is trusted after a host migration.
    let trust = match version {
        1 => TrustMeta::default(),
        _ => {
            bincode::serde::decode_from_slice::<TrustMeta, _>(&meta[read..], cfg)
                .map_err(|e| Error::BadSnapshot(e.to_string()))?
                .0
        }
    };
    let cfg = bincode::config::standard().with_limit::<{ 1 << 30 }>();
    let (physics, _): (PhysicsWorld, usize) = bincode::serde::decode_from_slice(world, cfg)
        .map_err(|e| Error::BadSnapshot(e.to_string()))?;
    Ok((snap, trust, physics))
}

/// A body's position, rotation, linear and angular velocity, as floats.
fn body_state(b: &rapier3d::prelude::RigidBody) -> rec::BodyBits {
    let (t, r, v, w) = (b.translation(), b.rotation(), b.linvel(), b.angvel());
    [
        t.x, t.y, t.z, r.x, r.y, r.z, r.w, v.x, v.y, v.z, w.x, w.y, w.z,
    ]
}

const SNAPSHOT_MAGIC: &[u8; 4] = b"LNYS";
/// The snapshot format version this build writes; it reads every version from 1 on.
///
/// 2 added `TrustMeta` after the entity table's fields (1 has none: nobody trusted).
pub const SNAPSHOT_VERSION: u32 = 2;

#[derive(Serialize, Deserialize)]
struct SnapshotMeta {
    config: GroupConfig,
    tick: u64,
    next_net_id: u32,
    free: Vec<u32>,
    slots: Vec<SlotSnapshot>,
    counters: Counters,
}

/// Format 2's addition, written after [`SnapshotMeta`]: the sections taken on trust so far
/// ([`Counters::trusted`]) and the entities still trusted, with how many more of their
/// sections are (see [`Replica::trust_sections`](crate::Replica::trust_sections)).
#[derive(Serialize, Deserialize, Default)]
struct TrustMeta {
    taken: u64,
    entities: Vec<(NetId, u32)>,
}

#[derive(Serialize, Deserialize)]
struct SlotSnapshot {
    generation: u32,
    entity: Option<Entity>,
    params: Vec<u8>,
    state: Vec<u8>,
}
