//! Replaying a recording headless, bit for bit, through the group's one frame pipeline
//! (the format it reads is [`record`](crate::record)'s).

use crate::codec::Section;
use crate::controller::SpawnRequest;
use crate::error::Error;
use crate::group::EntityGroup;
use crate::id::{NetId, Owner};
use crate::pipeline::{FrameDriver, FramePass};
use crate::record::{BodyBits, BodyFrame, Op, Recording, RecordingHeader, TickRecord};
use crate::registry::KindRegistry;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// An entity whose state differs between the recording and the replay.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityDiff {
    /// The entity.
    pub net: NetId,
    /// Which parts of its body's state differ, bit for bit: `"position"`, `"rotation"`,
    /// `"linear velocity"`, `"angular velocity"` (empty if one side lacks it).
    pub fields: Vec<&'static str>,
    /// Where the recording has it (position, rotation), if it has it.
    pub recorded: Option<[f32; 7]>,
    /// Where the replay has it, if it has it.
    pub replayed: Option<[f32; 7]>,
    /// Distance between the two positions, metres (infinite if one side lacks it),
    /// computed in double precision.
    pub distance: f64,
    /// Angle between the two rotations, radians, computed in double precision (a
    /// difference of 1e-4 rad is 1e-4, not rounded to zero as single precision does).
    pub angle: f64,
}

/// A small number as people read it: fixed point, or scientific when it would show as 0.
fn small(x: f64) -> String {
    if x == 0.0 || x >= 1e-3 {
        format!("{x:.6}")
    } else {
        format!("{x:.3e}")
    }
}

/// The angle between two rotations (x y z w), in double precision.
fn angle_between(a: [f32; 4], b: [f32; 4]) -> f64 {
    let [ax, ay, az, aw] = a.map(f64::from);
    let [bx, by, bz, bw] = b.map(f64::from);
    // The relative rotation conj(a) * b.
    let w = aw * bw + ax * bx + ay * by + az * bz;
    let x = aw * bx - ax * bw - ay * bz + az * by;
    let y = aw * by + ax * bz - ay * bw - az * bx;
    let z = aw * bz - ax * by + ay * bx - az * bw;
    2.0 * (x * x + y * y + z * z).sqrt().atan2(w.abs())
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
    /// The tick the entities were compared at: the recording's first body frame at or
    /// after the divergence (the replay runs on to it, on a copy). `None` if the recording
    /// has none that late (it was not stopped, but cut).
    pub compared_at: Option<u64>,
    /// The entities that differ there (by their body's state, or by existing on one side
    /// only).
    pub entities: Vec<EntityDiff>,
    /// In decision mode ([`Replay::rerun_decisions`]): the entities whose server path
    /// decided otherwise than the recording says, this tick.
    pub decisions: Vec<DecisionDiff>,
}

/// A server path that, re-run on the recorded inputs, wrote another section than the
/// recorded one: a change in the controller's decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionDiff {
    /// The entity.
    pub net: NetId,
    /// Its kind, by name.
    pub kind: String,
    /// The section the recording has (empty: it wrote none).
    pub recorded: Vec<u8>,
    /// The section the server path wrote now (empty: none).
    pub rerun: Vec<u8>,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "diverged at tick {}: hash {:016x} recorded, {:016x} replayed",
            self.tick, self.expected, self.found
        )?;
        for d in &self.decisions {
            writeln!(
                f,
                "  {} {}: its server path decided otherwise: {} bytes recorded {:02x?}, {} bytes now {:02x?}",
                d.kind,
                d.net,
                d.recorded.len(),
                &d.recorded[..d.recorded.len().min(16)],
                d.rerun.len(),
                &d.rerun[..d.rerun.len().min(16)],
            )?;
        }
        match self.compared_at {
            Some(k) if k == self.tick => writeln!(f, "  against the recording's bodies here:")?,
            Some(k) => writeln!(
                f,
                "  against the recording's bodies at tick {k}, its next body frame (the replay \
                 ran on):"
            )?,
            None => writeln!(
                f,
                "  the recording has no body frame after it to say which entities differ"
            )?,
        }
        if self.compared_at.is_some() && self.entities.is_empty() {
            writeln!(f, "  every body matches there")?;
        }
        for d in &self.entities {
            match (d.recorded, d.replayed) {
                (Some(_), Some(_)) => writeln!(
                    f,
                    "  {}: {} differ; position off by {} m, rotation by {} rad",
                    d.net,
                    d.fields.join(", "),
                    small(d.distance),
                    small(d.angle)
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

fn diff(recorded: &[(NetId, BodyBits)], replayed: &[(NetId, BodyBits)]) -> Vec<EntityDiff> {
    let mut out = Vec::new();
    let find = |v: &[(NetId, BodyBits)], n: NetId| {
        v.binary_search_by_key(&n, |(k, _)| *k).ok().map(|i| v[i].1)
    };
    let bits = |x: &[f32]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    let mut ids: Vec<NetId> = recorded.iter().chain(replayed).map(|(n, _)| *n).collect();
    ids.sort_unstable();
    ids.dedup();
    for net in ids {
        let (a, b) = (find(recorded, net), find(replayed, net));
        let mut fields = Vec::new();
        if let (Some(a), Some(b)) = (a, b) {
            let parts: [(&'static str, &[f32], &[f32]); 4] = [
                ("position", &a[..3], &b[..3]),
                ("rotation", &a[3..7], &b[3..7]),
                ("linear velocity", &a[7..10], &b[7..10]),
                ("angular velocity", &a[10..], &b[10..]),
            ];
            fields = parts
                .iter()
                .filter(|(_, x, y)| bits(x) != bits(y))
                .map(|(name, _, _)| *name)
                .collect();
            if fields.is_empty() {
                continue;
            }
        }
        let pose = |s: BodyBits| -> [f32; 7] { [s[0], s[1], s[2], s[3], s[4], s[5], s[6]] };
        let (a, b) = (a.map(pose), b.map(pose));
        let (distance, angle) = match (a, b) {
            (Some(a), Some(b)) => {
                let d = (0..3)
                    .map(|i| (f64::from(a[i]) - f64::from(b[i])).powi(2))
                    .sum::<f64>()
                    .sqrt();
                (
                    d,
                    angle_between([a[3], a[4], a[5], a[6]], [b[3], b[4], b[5], b[6]]),
                )
            }
            _ => (f64::INFINITY, 0.0),
        };
        out.push(EntityDiff {
            net,
            fields,
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
/// use lanyard::replay::Replay;
/// let bytes = std::fs::read("session.lnyr").unwrap();
/// let mut replay = Replay::open(&bytes, registry).unwrap();
/// replay.run_to(120).unwrap();               // checks the hash at every tick on the way
/// assert!(replay.group().len() > 0);
/// ```
pub struct Replay {
    recording: Recording,
    group: EntityGroup,
    next: usize,
    /// The last section replayed for each entity.
    sections: HashMap<NetId, Vec<u8>>,
    /// Every body as the recording has it, as of its last body frame replayed.
    known: BTreeMap<NetId, BodyBits>,
    /// Whether the server paths of the recording peer's entities run again.
    decisions: bool,
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
            known: group.body_bits().into_iter().collect(),
            group,
            next: 0,
            sections: HashMap::new(),
            decisions: false,
        })
    }

    /// Moves the replay to tick `tick` (between the recording's first tick and its end):
    /// from the initial world or the last keyframe before it, whichever is nearer, and then
    /// tick by tick, checking each. Returns the first divergence on the way, if any.
    pub fn seek(&mut self, tick: u64) -> Result<Option<Divergence>, Error> {
        let start = self
            .recording
            .ticks
            .first()
            .map_or(self.group.tick(), |t| t.tick);
        let end = self.end_tick();
        if tick < start || tick > end {
            return Err(Error::ReplayPastEnd { asked: tick, end });
        }
        let registry = self.group.registry().clone();
        let from = self.recording.ticks[..(tick - start) as usize]
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, t)| t.keyframe.as_ref().map(|k| (i, k)));
        let behind = self.group.tick() > tick;
        let nearer = from.is_some_and(|(i, _)| i + 1 > self.next);
        if behind || nearer {
            match from {
                Some((i, k)) => {
                    self.group = EntityGroup::restore(registry, &k.snapshot)?;
                    self.sections = k.sections.iter().cloned().collect();
                    self.next = i + 1;
                }
                None => {
                    self.group = EntityGroup::restore(registry, &self.recording.snapshot)?;
                    self.sections.clear();
                    self.next = 0;
                }
            }
            self.known = self.group.body_bits().into_iter().collect();
        }
        self.run_to(tick)
    }

    /// Decision mode: instead of taking the recorded sections of the recording peer's own
    /// entities, re-run their server paths on the recorded inputs (what came from outside:
    /// other peers' sections, spawns, owner changes) and compare what they write with what
    /// was recorded. A change in a controller's decisions (a constant, a formula) is then
    /// reported at the first tick one of its sections differs
    /// ([`Divergence::decisions`]), even where the recorded sections alone would still
    /// replay bit-exact. Set it before the first step.
    pub fn rerun_decisions(&mut self, on: bool) {
        self.decisions = on;
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

    /// The tick after the last recorded one: where a full replay stops (the tick it
    /// started at, if it holds none).
    pub fn end_tick(&self) -> u64 {
        match self.recording.ticks.last() {
            Some(r) => r.tick + 1,
            None => self.group.tick(),
        }
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
        let decisions = run_tick(&mut self.group, record, &mut self.sections, self.decisions)?;
        if let Some(frame) = &record.bodies {
            fold(&mut self.known, frame);
        }
        let g = &self.group;
        let found = g.state_hash();
        if found == record.hash && g.tick() == record.tick + 1 && decisions.is_empty() {
            return Ok(Step::Matched(record.tick));
        }
        let (compared_at, entities) = self.explain()?;
        Ok(Step::Diverged(Box::new(Divergence {
            tick: record.tick,
            expected: record.hash,
            found,
            compared_at,
            entities,
            decisions,
        })))
    }

    /// After a divergence at the tick just replayed: runs a copy of the replay on to the
    /// recording's next body frame (this tick's, if it has one) and compares the bodies
    /// there, entity by entity.
    fn explain(&self) -> Result<(Option<u64>, Vec<EntityDiff>), Error> {
        let here = self.next - 1;
        let Some(offset) = self.recording.ticks[here..]
            .iter()
            .position(|t| t.bodies.is_some())
        else {
            return Ok((None, Vec::new()));
        };
        let at = here + offset;
        let mut known = self.known.clone();
        let replayed = if offset == 0 {
            self.group.body_bits()
        } else {
            let registry = self.group.registry().clone();
            let mut copy = EntityGroup::restore(registry, &self.group.snapshot()?)?;
            let mut sections = self.sections.clone();
            for record in &self.recording.ticks[here + 1..=at] {
                run_tick(&mut copy, record, &mut sections, false)?;
                if let Some(frame) = &record.bodies {
                    fold(&mut known, frame);
                }
            }
            copy.body_bits()
        };
        let recorded: Vec<(NetId, BodyBits)> = known.into_iter().collect();
        Ok((
            Some(self.recording.ticks[at].tick),
            diff(&recorded, &replayed),
        ))
    }

    /// Replays up to (not including) tick `tick`, checking every tick; stops at the first
    /// divergence and returns it. A tick past the end of the recording is an error
    /// ([`Error::ReplayPastEnd`]), so a short or empty recording cannot pass a test that
    /// meant to check more; [`verify`](Self::verify) replays to the end, whatever it is.
    pub fn run_to(&mut self, tick: u64) -> Result<Option<Divergence>, Error> {
        let end = self.end_tick();
        if tick > end {
            return Err(Error::ReplayPastEnd { asked: tick, end });
        }
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

/// Brings a table of bodies up to a body frame.
fn fold(known: &mut BTreeMap<NetId, BodyBits>, frame: &BodyFrame) {
    for net in &frame.gone {
        known.remove(net);
    }
    known.extend(frame.changed.iter().copied());
}

/// Replays one recorded tick through `g`; in decision mode, returns the server paths that
/// decided otherwise.
fn run_tick(
    g: &mut EntityGroup,
    record: &TickRecord,
    sections: &mut HashMap<NetId, Vec<u8>>,
    decisions: bool,
) -> Result<Vec<DecisionDiff>, Error> {
    let bad_config = record
        .ops
        .iter()
        .any(|op| matches!(op, Op::Config(c) if !c.is_valid()));
    if bad_config {
        return Err(Error::RecordingCorrupted {
            tick: Some(record.tick),
        });
    }
    let mut driver = ReplayDriver {
        ops: &record.ops,
        next: 0,
        sections,
        decisions: decisions.then(HashMap::new),
        diffs: Vec::new(),
    };
    g.run_frame(&mut driver);
    let diffs = std::mem::take(&mut driver.diffs);
    g.drain_changes().for_each(drop);
    Ok(diffs)
}

/// Drives a replayed frame from one tick's recorded ops: everything recorded before the
/// client pass comes in as the frame's inbound pass (the recorded sections stand for the
/// server paths and the network), everything recorded after the command pass comes in
/// before physics. The pass order itself is the pipeline's.
struct ReplayDriver<'r> {
    ops: &'r [Op],
    next: usize,
    /// The last section of each entity, for [`Op::Repeat`].
    sections: &'r mut HashMap<NetId, Vec<u8>>,
    /// In decision mode: the recorded sections of the group's own entities this tick,
    /// held back for the server paths' to be compared with.
    decisions: Option<HashMap<NetId, Vec<u8>>>,
    /// What the server paths decided otherwise.
    diffs: Vec<DecisionDiff>,
}

impl ReplayDriver<'_> {
    /// Applies ops until (and not including) the first `stop`, which is skipped.
    fn apply_until(&mut self, pass: &mut FramePass<'_>, stop: impl Fn(&Op) -> bool) {
        while let Some(op) = self.ops.get(self.next) {
            self.next += 1;
            if stop(op) {
                return;
            }
            apply(pass, op, self.sections, self.decisions.as_mut());
        }
    }
}

impl FrameDriver for ReplayDriver<'_> {
    fn only_deciding_alone(&self) -> bool {
        // In decision mode every server path of the recording peer runs again, to be
        // compared; otherwise those whose sections were not recorded.
        self.decisions.is_none()
    }

    fn outbound(&mut self, packet: &crate::codec::PacketWriter) {
        let Some(held) = &mut self.decisions else {
            return;
        };
        let mut produced: HashMap<NetId, Vec<u8>> = packet
            .sections()
            .map(|s| (s.net_id, s.payload.to_vec()))
            .collect();
        let mut nets: Vec<NetId> = held.keys().chain(produced.keys()).copied().collect();
        nets.sort_unstable();
        nets.dedup();
        for net in nets {
            let recorded = held.remove(&net).unwrap_or_default();
            let rerun = produced.remove(&net).unwrap_or_default();
            if recorded != rerun {
                self.diffs.push(DecisionDiff {
                    net,
                    kind: String::new(),
                    recorded,
                    rerun,
                });
            }
        }
    }

    fn inbound(&mut self, pass: &mut FramePass<'_>) {
        self.apply_until(pass, |op| matches!(op, Op::ClientPass));
    }

    fn after_commands(&mut self, pass: &mut FramePass<'_>, requests: &mut Vec<SpawnRequest>) {
        let g = pass.group();
        // A kind that decides alone has no recorded sections to compare with: its decisions
        // show in the state's hash.
        let alone = |net: NetId| {
            g.by_net(net)
                .is_some_and(|e| g.registry().decides_alone(e.kind()))
        };
        self.diffs
            .retain(|d| !(d.recorded.is_empty() && alone(d.net)));
        for d in &mut self.diffs {
            d.kind = g
                .by_net(d.net)
                .and_then(|e| g.registry().name_of(e.kind()))
                .unwrap_or("?")
                .to_owned();
        }
        // A client's spawn requests went to the network; what came of them is recorded.
        requests.clear();
        self.apply_until(pass, |op| matches!(op, Op::Commands));
        self.apply_until(pass, |_| false);
    }
}

/// Offers a recorded section to its entity, or, in decision mode (`held`), keeps one of
/// the group's own entities' sections instead: its server path writes its own, to be
/// compared with it.
fn offer(
    pass: &mut FramePass<'_>,
    net: NetId,
    payload: &[u8],
    held: Option<&mut HashMap<NetId, Vec<u8>>>,
) {
    let g = pass.group();
    let own = g.by_net(net).is_some_and(|e| g.has_authority(e.owner()));
    match held {
        Some(held) if own => {
            held.insert(net, payload.to_vec());
        }
        _ => {
            pass.offer_section(
                Section {
                    net_id: net,
                    payload,
                },
                Owner::Server,
            );
        }
    }
}

/// Redoes one recorded op. The ops did happen in the recorded session; one that cannot be
/// redone here leaves the replay to diverge, which the hash then reports.
fn apply(
    pass: &mut FramePass<'_>,
    op: &Op,
    sections: &mut HashMap<NetId, Vec<u8>>,
    mut held: Option<&mut HashMap<NetId, Vec<u8>>>,
) {
    match op {
        Op::Section { net, payload } => {
            sections.insert(*net, payload.clone());
            offer(pass, *net, payload, held);
            return;
        }
        Op::Repeat { first, count } => {
            for net in (0..*count)
                .filter_map(|k| first.0.checked_add(k))
                .map(NetId)
            {
                if let Some(payload) = sections.get(&net) {
                    offer(pass, net, payload, held.as_deref_mut());
                }
            }
            return;
        }
        Op::Rename { from, to } => {
            if let Some(s) = sections.remove(from) {
                sections.insert(*to, s);
            }
        }
        _ => {}
    }
    let g = pass.group_mut();
    let _ = match op {
        Op::Spawn {
            net,
            kind,
            owner,
            params,
        } => g
            .replica()
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
        Op::Config(c) => g.set_config(*c),
        Op::Lead(ticks) => {
            g.set_lead(*ticks);
            Ok(())
        }
        Op::Input { net, input } => match g.id_of(*net) {
            Some(id) => g.send_input(id, input),
            None => Ok(()),
        },
        Op::Section { .. } | Op::Repeat { .. } | Op::ClientPass | Op::Commands => Ok(()),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Quat;

    #[test]
    fn a_tiny_rotation_is_reported_as_itself_not_as_zero() {
        let q = |r: Quat| [r.x, r.y, r.z, r.w];
        let a = Quat::from_rotation_y(0.3);
        let b = Quat::from_rotation_y(0.3 + 1e-4);
        let d = diff(
            &[(
                NetId(7),
                [1.0, 2.0, 3.0, a.x, a.y, a.z, a.w, 0., 0., 0., 0., 0., 0.],
            )],
            &[(
                NetId(7),
                [1.0, 2.0, 3.0, b.x, b.y, b.z, b.w, 0., 0., 0., 0., 0., 0.],
            )],
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].fields, ["rotation"]);
        assert!((d[0].angle - 1e-4).abs() < 2e-6, "{}", d[0].angle);
        assert!(
            a.angle_between(b) == 0.0 || (f64::from(a.angle_between(b)) - 1e-4).abs() > 1e-5,
            "single precision cannot say it (the reason for doing it in double)"
        );
        let text = Divergence {
            tick: 5,
            expected: 1,
            found: 2,
            compared_at: Some(5),
            entities: d,
            decisions: Vec::new(),
        }
        .to_string();
        assert!(!text.contains("rotation by 0.000000"), "{text}");
        assert!(
            text.contains("rotation by 9.997e-5 rad") || text.contains("rotation by 1.000e-4 rad"),
            "{text}"
        );
        assert!(text.contains("position off by 0.000000 m"), "{text}");
        assert!((angle_between(q(a), q(a))).abs() < 1e-9);
        assert!(
            (angle_between(q(Quat::IDENTITY), q(Quat::from_rotation_x(1.0))) - 1.0).abs() < 1e-6
        );
    }
}
