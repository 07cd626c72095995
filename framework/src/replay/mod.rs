//! Replaying a recording headless, bit for bit, through the group's one frame pipeline
//! (the format it reads is [`record`](crate::record)'s).

mod report;

use crate::codec::Section;
use crate::controller::SpawnRequest;
use crate::error::{Error, RecordError};
use crate::group::EntityGroup;
use crate::id::{EntityId, NetId, Owner};
use crate::pipeline::{FrameDriver, FramePass};
use crate::record::{BodyBits, BodyFrame, Op, Recording, RecordingHeader, TickRecord};
use crate::registry::KindRegistry;
pub use report::{DecisionDiff, Divergence, EntityDiff, FieldDiff, FrameNote};
use report::{diff, note};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

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
    /// What the replayed frames reported lately (refused sections, faults, failed
    /// commands), for the divergence report.
    notes: std::collections::VecDeque<FrameNote>,
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

/// What a replay notes of a body put in a state from outside.
const PUT_FROM_OUTSIDE: &str = concat!(
    "its body was put in a state from outside ",
    "(a correction, or a new entity's state)"
);

/// What a replay notes of an entity that differs and whose sections it wrote again.
const WRITTEN_AGAIN: &str = concat!(
    "this replay wrote its sections again (its kind decides alone, the default), ",
    "from its saved state and the recorded inputs: if its server path reads anything ",
    "else (state its save_state leaves out, a value the game shares with it), ",
    "set KindOptions::decides_alone to false for it"
);

impl Replay {
    /// Reads a recording and restores its initial world. The registry must hold every kind
    /// the recording lists, at the state version the recording has for it or with
    /// migrations from it ([`KindRegistry::migrate_state`]); otherwise the error names the
    /// kind and both versions ([`Error::KindStateVersion`]).
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
            registry.check_state_version(*id, recording.header.state_version(name))?;
        }
        let group = restore(&recording, registry, &recording.snapshot)?;
        Ok(Replay {
            recording,
            known: group.body_bits().into_iter().collect(),
            group,
            next: 0,
            sections: HashMap::new(),
            decisions: false,
            notes: Default::default(),
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
            return Err(Error::Record(RecordError::ReplayPastEnd {
                asked: tick,
                end,
            }));
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
                    self.group = restore(&self.recording, registry, &k.snapshot)?;
                    self.sections = k.sections.iter().cloned().collect();
                    self.next = i + 1;
                }
                None => {
                    self.group = restore(&self.recording, registry, &self.recording.snapshot)?;
                    self.sections.clear();
                    self.next = 0;
                }
            }
            self.known = self.group.body_bits().into_iter().collect();
            self.notes.clear();
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
        let (decisions, report) =
            run_tick(&mut self.group, record, &mut self.sections, self.decisions)?;
        note(&mut self.notes, &report);
        // Bodies put in a state from outside: the corrections the session took (and the
        // states new entities came with).
        for op in &record.ops {
            if let Op::BodyState { net, .. } = op {
                let kind = self
                    .group
                    .by_net(*net)
                    .and_then(|e| self.group.registry().name_of(e.kind()))
                    .unwrap_or("?");
                self.notes.push_back(FrameNote {
                    tick: record.tick,
                    what: format!("{kind} {net}: {PUT_FROM_OUTSIDE}"),
                });
            }
        }
        if let Some(frame) = &record.bodies {
            fold(&mut self.known, frame);
        }
        let g = &self.group;
        let found = g.state_hash();
        if found == record.hash && g.tick() == record.tick + 1 && decisions.is_empty() {
            return Ok(Step::Matched(record.tick));
        }
        let (compared_at, entities) = self.explain()?;
        let mut notes: Vec<FrameNote> = self.notes.iter().cloned().collect();
        notes.extend(self.written_again(&entities, record.tick));
        Ok(Step::Diverged(Box::new(Divergence {
            tick: record.tick,
            expected: record.hash,
            found,
            compared_at,
            entities,
            decisions,
            notes,
        })))
    }

    /// Of the entities that differ, those whose sections this replay wrote again (their
    /// kind decides alone, nothing changed them from outside, and the recording peer had
    /// them): the likeliest cause, said with what to do about it.
    fn written_again(&self, entities: &[EntityDiff], tick: u64) -> Vec<FrameNote> {
        let g = &self.group;
        entities
            .iter()
            .filter_map(|d| {
                let e = g.by_net(d.net)?;
                let rewritten = g.has_authority(e.owner())
                    && g.registry().decides_alone(e.kind())
                    && !g.is_outside(e.id());
                let kind = g.registry().name_of(e.kind())?;
                rewritten.then(|| FrameNote {
                    tick,
                    what: format!("{kind} {}: {WRITTEN_AGAIN}", d.net),
                })
            })
            .collect()
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
    /// ([`RecordError::ReplayPastEnd`]), so a short or empty recording cannot pass a test that
    /// meant to check more; [`verify`](Self::verify) replays to the end, whatever it is.
    pub fn run_to(&mut self, tick: u64) -> Result<Option<Divergence>, Error> {
        let end = self.end_tick();
        if tick > end {
            return Err(Error::Record(RecordError::ReplayPastEnd {
                asked: tick,
                end,
            }));
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

/// Restores one of the recording's snapshots (its initial world, a keyframe), bringing
/// each kind's saved state from the version the recording has for it to this build's.
fn restore(
    recording: &Recording,
    registry: Arc<KindRegistry>,
    snapshot: &[u8],
) -> Result<EntityGroup, Error> {
    let header = &recording.header;
    let version_of = |kind: crate::id::KindId| {
        let name = header.kinds.iter().find(|(_, id)| *id == kind)?;
        Some(header.state_version(&name.0))
    };
    EntityGroup::restore_versions(registry, snapshot, &version_of)
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
) -> Result<(Vec<DecisionDiff>, crate::pipeline::FrameReport), Error> {
    let bad_config = record
        .ops
        .iter()
        .any(|op| matches!(op, Op::Config(c) if !c.is_valid()));
    if bad_config {
        return Err(Error::Record(RecordError::RecordingCorrupted {
            tick: Some(record.tick),
        }));
    }
    let mut driver = ReplayDriver {
        ops: &record.ops,
        next: 0,
        sections,
        decisions: decisions.then(HashMap::new),
        diffs: Vec::new(),
    };
    let report = g.run_frame(&mut driver);
    let diffs = std::mem::take(&mut driver.diffs);
    g.drain_changes().for_each(drop);
    Ok((diffs, report))
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
                    fields: Vec::new(),
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
            let kind = g.by_net(d.net).map(|e| e.kind());
            d.kind = kind
                .and_then(|k| g.registry().name_of(k))
                .unwrap_or("?")
                .to_owned();
            if let Some(k) = kind {
                d.describe(g.registry(), k);
            }
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
    let _ = redo(pass.group_mut(), op);
}

/// Runs `f` on the entity with network id `net`: an op on one that is not there (it went,
/// in a session that diverged) is none.
fn on(
    g: &mut EntityGroup,
    net: NetId,
    f: impl FnOnce(&mut EntityGroup, EntityId) -> Result<(), Error>,
) -> Result<(), Error> {
    g.id_of(net).map_or(Ok(()), |id| f(g, id))
}

/// Redoes an op that changes the group from outside its paths (not a section).
fn redo(g: &mut EntityGroup, op: &Op) -> Result<(), Error> {
    match op {
        Op::Spawn {
            net,
            kind,
            owner,
            params,
        } => g
            .replica()
            .insert_with_net_id(*net, *kind, params.clone(), *owner)
            .map(|_| ()),
        Op::Despawn { net } => on(g, *net, |g, id| g.despawn(id)),
        Op::SetOwner { net, owner } => on(g, *net, |g, id| g.set_owner(id, *owner)),
        Op::Rename { from, to } => g.rename_net_id(*from, *to).map(|_| ()),
        Op::BodyState { net, state } => on(g, *net, |g, id| g.set_body_state(id, state)),
        Op::Config(c) => g.set_config(*c),
        Op::Lead(ticks) => {
            g.set_lead(*ticks);
            Ok(())
        }
        Op::HolderLead { holder, ticks } => {
            g.set_holder_lead(*holder, *ticks);
            Ok(())
        }
        Op::SkipNetIds(n) => {
            g.replica().skip_net_ids(*n);
            Ok(())
        }
        Op::Input { net, input } => on(g, *net, |g, id| g.send_input(id, input)),
        Op::Restart { net } => on(g, *net, |g, id| g.replica().restart_copy(id)),
        Op::Outside { net } => {
            g.mark_outside(*net);
            Ok(())
        }
        Op::Section { .. } | Op::Repeat { .. } | Op::ClientPass | Op::Commands => Ok(()),
    }
}
