//! The [`EntityGroup`]: every entity, its controller and the physics world, and the frame
//! that drives them.

use crate::codec::PacketWriter;
use crate::config::{GroupConfig, Role};
use crate::controller::{
    Command, Controller, Effect, SpawnRequest, SpawnTicket, WorldView, entity_ref,
};
use crate::entity::{Entity, EntityRef, Slot};
use crate::error::Error;
use crate::id::{ClientId, EntityId, KindId, NetId, Owner};
use crate::pose::{Observations, Observed};
use crate::record::format::{Op, Recorder};
use crate::registry::KindRegistry;
use rapier3d::glamx::glam::Vec3;
use rapier3d::prelude::{Collider, ColliderHandle, PhysicsWorld};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

mod contacts;
mod foresee;
pub(crate) mod pipeline;
mod replica;
mod snapshot;
mod store;

pub use foresee::PoseCodec;
pub use replica::Replica;
pub use snapshot::SNAPSHOT_VERSION;

/// Running totals of what the group refused or could not do. Nothing is dropped silently:
/// every skipped section lands in one of these.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Sections accepted for a client path.
    pub sections_in: u64,
    /// Sections for a network id no live entity has.
    pub unknown_entity: u64,
    /// Sections from a peer that does not own the entity.
    pub not_owner: u64,
    /// Sections from the owner that its controller's validation hook judged illegal.
    pub illegal: u64,
    /// Sections judged illegal but taken all the same, their entity being trusted for a
    /// while ([`Replica::trust_sections`]: a new host after a host migration). Not in
    /// the snapshot's counters, which keep format 1's fields; it travels beside them.
    #[serde(skip)]
    pub trusted: u64,
    /// Sections a controller could not read.
    pub bad_sections: u64,
    /// Packets whose framing broke (the rest of such a packet is lost).
    pub framing_errors: u64,
    /// Sections a server path wrote over the size limit (not sent).
    pub oversized_sections: u64,
    /// Spawns that failed (unknown kind, bad parameters).
    pub failed_spawns: u64,
    /// Controller hooks that panicked (caught: see [`Fault`]). Not in snapshots (whose
    /// format predates it).
    #[serde(skip)]
    pub faults: u64,
}

/// Which hook of a controller ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// Its server path.
    ServerPath,
    /// Its validation of a section from the entity's owner.
    Validate,
    /// Its client path, with a section (from the network or the loopback) or without.
    ClientPath {
        /// Whether it ran with a section.
        section: bool,
    },
}

/// A controller hook that panicked. The group catches the panic, skips what the hook was
/// doing (the section is dropped, or the entity writes nothing this frame) and goes on;
/// the frame's report lists it. A network layer disconnects the owner whose section made
/// a client path or a validation panic, so no client can bring a server down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The entity.
    pub net: NetId,
    /// Its kind, by name.
    pub kind: String,
    /// Who owns it.
    pub owner: Owner,
    /// Which hook panicked.
    pub hook: Hook,
    /// What the panic said.
    pub message: String,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hook = match self.hook {
            Hook::ServerPath => "server path",
            Hook::Validate => "validation",
            Hook::ClientPath { section: true } => "client path (with a section)",
            Hook::ClientPath { section: false } => "client path",
        };
        write!(
            f,
            "the {hook} of {} {} panicked: {}",
            self.kind, self.net, self.message
        )
    }
}

/// A section a client path refused: the error it returned, and whose it was.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionError {
    /// The entity.
    pub net: NetId,
    /// Its kind, by name.
    pub kind: String,
    /// What the client path said.
    pub error: Error,
}

impl std::fmt::Display for SectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.kind, self.net, self.error)
    }
}

/// A kind by its name, for messages (by its id if the registry does not know it).
fn kind_label(registry: &KindRegistry, kind: KindId) -> String {
    match registry.name_of(kind) {
        Some(n) => n.to_owned(),
        None => kind.to_string(),
    }
}

thread_local! {
    /// Whether this thread is inside a controller hook the group guards (see [`guarded`]).
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs a controller hook, catching a panic. The panic's own message (and the backtrace
/// note) is not printed: the group reports it as a [`Fault`] and logs it once, with the
/// kind and the entity. `RUST_BACKTRACE` set (and not 0) prints it as usual.
fn guarded<T>(hook: impl FnOnce() -> T) -> std::thread::Result<T> {
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let asked = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
            if asked || !GUARDED.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    let before = GUARDED.with(|g| g.replace(true));
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(hook));
    GUARDED.with(|g| g.set(before));
    out
}

/// Lists a caught panic in the frame's report, and logs it (once: its own message was not
/// printed).
fn push_fault(faults: &mut Vec<Fault>, fault: Fault) {
    tracing::warn!("{fault}");
    faults.push(fault);
}

/// The text of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// A change to the set of entities, as the group's journal records it. The network layer
/// announces these to peers; a recorder writes them down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// An entity was spawned (look it up for its kind, owner and parameters).
    Spawned(NetId),
    /// An entity was despawned.
    Despawned {
        /// Its network id.
        net: NetId,
        /// Who owned it.
        owner: Owner,
    },
    /// An entity changed hands.
    OwnerChanged {
        /// Its network id.
        net: NetId,
        /// The new owner.
        owner: Owner,
        /// Its [authority sequence](crate::Entity::authority_seq) now.
        seq: u16,
    },
    /// A provisional network id was replaced by the one the server assigned.
    Renamed {
        /// The provisional id.
        from: NetId,
        /// The confirmed id.
        to: NetId,
    },
}

/// What became of one offered section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Queued for the entity's client path.
    Accepted,
    /// No live entity has that network id.
    UnknownEntity,
    /// The sender does not own the entity.
    NotOwner,
    /// The owner sent it, but the entity's validation hook judged it illegal.
    Illegal,
}

/// What [`FramePass::receive_packet`](crate::FramePass::receive_packet) did with a packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiveReport {
    /// Sections queued for their entity's client path.
    pub accepted: usize,
    /// Sections for unknown network ids.
    pub unknown_entity: usize,
    /// Sections from a sender that does not own the entity.
    pub not_owner: usize,
    /// Sections the entity's validation hook judged illegal.
    pub illegal: usize,
    /// Whether the packet's framing broke (sections after the break were lost).
    pub framing_error: bool,
}

/// All entities, their controllers and the physics world.
///
/// The frame without networking is [`frame`](EntityGroup::frame): run the server paths of
/// every entity this group has authority over into one packet, loop that packet back
/// through decode and the client paths, carry out spawns and despawns, step physics. The
/// network layer and replays run the same frame with a [`FrameDriver`](crate::FrameDriver)
/// ([`run_frame`](EntityGroup::run_frame)); the pass order is defined once, in
/// [`crate::pipeline`].
///
/// Entities are iterated in network-id order everywhere, so two groups given the same
/// history do the same work in the same order.
pub struct EntityGroup {
    registry: Arc<KindRegistry>,
    config: GroupConfig,
    physics: PhysicsWorld,
    slots: Vec<Slot>,
    controllers: Vec<Option<Box<dyn Controller>>>,
    free: Vec<u32>,
    /// Live entities sorted by network id: (net id, slot index).
    order: Vec<(NetId, u32)>,
    next_net_id: u32,
    tick: u64,
    outgoing: PacketWriter,
    /// The slot of each section in `outgoing`, in order.
    written: Vec<u32>,
    inbox: Vec<u8>,
    commands: Vec<Command>,
    effects: Vec<Effect>,
    requests: Vec<SpawnRequest>,
    journal: Vec<Change>,
    counters: Counters,
    recorder: Option<Recorder>,
    /// Inside [`loop_back`](Self::loop_back): the sections offered are this group's own.
    looping_back: bool,
    /// Set by [`loop_back`](Self::loop_back) on a server that records nothing: its own
    /// sections were not queued, and the client pass takes them from `outgoing` in step
    /// with `written` (both are in network-id order, as the client pass is).
    own_in_step: bool,
    /// Ticks the sections from outside are behind this peer's present (see
    /// [`ClientContext::lead`](crate::controller::ClientContext::lead)).
    lead_ticks: u32,
    /// On a server: ticks the sections of each client are behind its present, for the
    /// bodies a client holds (hand-off; see [`Replica::set_holder_lead`]).
    holder_leads: std::collections::BTreeMap<Owner, u32>,
    /// Entities whose owner's sections are taken even when their controller refuses them,
    /// and how many more (a new host's first words from each client after a migration).
    trusted: std::collections::BTreeMap<NetId, u32>,
    /// Poses client paths took from their authorities in the last frame.
    observed: Observations,
    /// Hooks that panicked this frame.
    faults: Vec<Fault>,
    /// The clients with a session, sorted, when a network layer says (a server's spawns may
    /// name only them as owners); `None` for a group with no network. Told every frame, so
    /// the list is refilled in place.
    clients: Option<Vec<ClientId>>,
    /// Strict mode: sections refused for coming from a peer that does not own their entity,
    /// or for an entity this group does not have, are listed in the frame's report too,
    /// not only counted.
    strict: bool,
    /// What each spawn ticket became.
    tickets: std::collections::HashMap<SpawnTicket, EntityId>,
    next_ticket: u64,
    /// Sections client paths refused this frame.
    section_errors: Vec<SectionError>,
}

impl std::fmt::Debug for EntityGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntityGroup")
            .field("config", &self.config)
            .field("tick", &self.tick)
            .field("entities", &self.order.len())
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl EntityGroup {
    /// An empty world using the kinds in `registry`.
    ///
    /// # Panics
    ///
    /// If `config` makes no sense (a timestep that is not finite and in (0, 1] seconds,
    /// gravity that is not finite): a programming error, said at once rather than as a
    /// world that never moves. [`try_new`](Self::try_new) returns it as an error instead.
    pub fn new(registry: Arc<KindRegistry>, config: GroupConfig) -> Self {
        match Self::try_new(registry, config) {
            Ok(g) => g,
            Err(e) => panic!("EntityGroup::new: {e}"),
        }
    }

    /// An empty world using the kinds in `registry`, or the reason `config` is invalid.
    pub fn try_new(registry: Arc<KindRegistry>, config: GroupConfig) -> Result<Self, Error> {
        config.check()?;
        Ok(Self::build(registry, config))
    }

    fn build(registry: Arc<KindRegistry>, config: GroupConfig) -> Self {
        let mut physics = PhysicsWorld {
            gravity: config.gravity,
            ..PhysicsWorld::default()
        };
        physics.integration_parameters.dt = config.dt;
        EntityGroup {
            registry,
            config,
            physics,
            slots: Vec::new(),
            controllers: Vec::new(),
            free: Vec::new(),
            order: Vec::new(),
            next_net_id: 1,
            tick: 0,
            outgoing: PacketWriter::new(),
            written: Vec::new(),
            inbox: Vec::new(),
            commands: Vec::new(),
            effects: Vec::new(),
            requests: Vec::new(),
            journal: Vec::new(),
            counters: Counters::default(),
            recorder: None,
            looping_back: false,
            own_in_step: false,
            lead_ticks: 0,
            holder_leads: std::collections::BTreeMap::new(),
            trusted: std::collections::BTreeMap::new(),
            observed: Observations::default(),
            faults: Vec::new(),
            section_errors: Vec::new(),
            tickets: std::collections::HashMap::new(),
            next_ticket: 0,
            clients: None,
            strict: cfg!(debug_assertions),
        }
    }

    /// Strict mode (on in debug builds, off in release ones): every section this group
    /// refuses is an entry in the
    /// frame's report ([`FrameReport::section_errors`](crate::FrameReport::section_errors)),
    /// including those only counted otherwise: from a peer that does not own the entity
    /// ([`Error::NotTheOwner`]), and for an entity this group does not have
    /// ([`Error::SectionForNoEntity`]). Those happen in a healthy session too (a section
    /// crossing a despawn on the wire): the network layer logs them at debug level only.
    pub fn set_strict(&mut self, on: bool) {
        self.strict = on;
    }

    /// Tells a server's group which clients have a session (the network layer does, every
    /// frame): a spawn owned by any other client is refused ([`Error::NoSuchOwner`]).
    pub(crate) fn set_clients(&mut self, clients: impl IntoIterator<Item = ClientId>) {
        let known = self.clients.get_or_insert_with(Vec::new);
        known.clear();
        known.extend(clients);
        known.sort_unstable();
        known.dedup();
    }

    /// The hooks that panicked and the sections refused this frame, for its report.
    pub(crate) fn take_frame_problems(&mut self) -> (Vec<Fault>, Vec<SectionError>) {
        (
            std::mem::take(&mut self.faults),
            std::mem::take(&mut self.section_errors),
        )
    }

    /// The registered kinds.
    pub fn registry(&self) -> &Arc<KindRegistry> {
        &self.registry
    }

    /// The configuration.
    pub fn config(&self) -> &GroupConfig {
        &self.config
    }

    /// Changes the role (a client learns its id when the server accepts it).
    pub(crate) fn set_role(&mut self, role: Role) {
        // The rest of the configuration was checked when it was set.
        let _ = self.set_config(GroupConfig {
            role,
            ..self.config
        });
    }

    /// Turns the self-loopback of [`frame`](Self::frame) on or off.
    pub fn set_loopback(&mut self, on: bool) {
        let _ = self.set_config(GroupConfig {
            loopback: on,
            ..self.config
        });
    }

    /// Changes the fixed timestep (refused unless finite and in (0, 1] seconds).
    pub fn set_dt(&mut self, dt: f32) -> Result<(), Error> {
        self.set_config(GroupConfig { dt, ..self.config })
    }

    /// Changes gravity (refused unless finite).
    pub fn set_gravity(&mut self, gravity: Vec3) -> Result<(), Error> {
        self.set_config(GroupConfig {
            gravity,
            ..self.config
        })
    }

    /// Changes the whole configuration (a recording notes the change). A configuration
    /// that makes no sense ([`GroupConfig::is_valid`]) is refused and changes nothing.
    pub fn set_config(&mut self, config: GroupConfig) -> Result<(), Error> {
        config.check()?;
        if config == self.config {
            return Ok(());
        }
        self.config = config;
        self.physics.gravity = config.gravity;
        self.physics.integration_parameters.dt = config.dt;
        if let Some(r) = &mut self.recorder {
            r.op(Op::Config(config));
        }
        Ok(())
    }

    /// The next tick to be computed (the number of frames stepped so far).
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// Says that the sections this group takes from outside describe their authorities'
    /// bodies `ticks` ticks before this peer's present (a network layer sets it from the
    /// round trip it measures). Client paths read it as [`ClientContext::lead`](crate::controller::ClientContext::lead) and bring
    /// states forward by it; a recording notes each change, so a replay does the same.
    pub(crate) fn set_lead(&mut self, ticks: u32) {
        if ticks == self.lead_ticks {
            return;
        }
        self.lead_ticks = ticks;
        if let Some(r) = &mut self.recorder {
            r.op(Op::Lead(ticks));
        }
    }

    /// Says that the sections `holder` sends of the bodies it holds (hand-off) describe
    /// them `ticks` ticks before this peer's present; a recording notes each change.
    pub(crate) fn set_holder_lead(&mut self, holder: Owner, ticks: u32) {
        if self.holder_leads.get(&holder) == Some(&ticks) {
            return;
        }
        self.holder_leads.insert(holder, ticks);
        if let Some(r) = &mut self.recorder {
            r.op(Op::HolderLead { holder, ticks });
        }
    }

    /// The lead set by [`Replica::set_lead`], in ticks.
    pub fn lead_ticks(&self) -> u32 {
        self.lead_ticks
    }

    /// The poses client paths took from their authorities in the last frame, with any
    /// correction they made (see [`PoseState::correct`](crate::pose::PoseState::correct)),
    /// and the bodies put in a state from outside (a correction of an owned body, a
    /// spawn's state): what a [`Smoother`](crate::interp::Smoother) draws from.
    pub fn observed_poses(&self) -> &[Observed] {
        self.observed.all(self.outgoing.as_bytes())
    }

    /// Running totals of refused and failed work.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// The number of live entities.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there are no entities.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The physics world, read-only.
    pub fn physics(&self) -> &PhysicsWorld {
        &self.physics
    }

    /// Adds a fixed collider that belongs to no entity (floors, walls: the scenery).
    /// Scenery is part of snapshots but not of the state hash.
    pub fn add_scenery(&mut self, collider: impl Into<Collider>) -> ColliderHandle {
        self.physics.insert_collider(collider, None)
    }

    /// The owner this group runs server paths for.
    pub fn local_owner(&self) -> Owner {
        match self.config.role {
            Role::Server => Owner::Server,
            Role::Client(c) => Owner::Client(c),
        }
    }

    /// Whether this group runs the server path of entities owned by `owner`.
    pub fn has_authority(&self, owner: Owner) -> bool {
        owner == self.local_owner()
    }

    /// The changes to the set of entities since the last call, oldest first.
    pub(crate) fn drain_changes(&mut self) -> std::vec::Drain<'_, Change> {
        self.journal.drain(..)
    }

    fn entity_mut(&mut self, id: EntityId) -> Result<&mut Entity, Error> {
        self.slots
            .get_mut(id.index as usize)
            .filter(|s| s.generation == id.generation)
            .and_then(|s| s.entity.as_mut())
            .ok_or(Error::NoSuchEntity(id))
    }

    /// An entity by local id.
    pub fn get(&self, id: EntityId) -> Option<EntityRef<'_>> {
        self.view().get(id)
    }

    /// An entity by network id.
    pub fn by_net(&self, net: NetId) -> Option<EntityRef<'_>> {
        self.view().by_net(net)
    }

    /// The local id of the entity with network id `net`.
    pub fn id_of(&self, net: NetId) -> Option<EntityId> {
        self.by_net(net).map(|e| e.id())
    }

    /// Every entity, in network-id order.
    pub fn iter(&self) -> impl Iterator<Item = EntityRef<'_>> {
        let slots = &self.slots;
        let physics = &self.physics;
        self.order
            .iter()
            .filter_map(move |&(_, i)| entity_ref(&slots[i as usize], physics))
    }

    /// The encoded spawn parameters an entity was built from.
    pub fn spawn_params(&self, id: EntityId) -> Option<&[u8]> {
        let slot = self.slots.get(id.index as usize)?;
        (slot.generation == id.generation && slot.entity.is_some())
            .then_some(slot.params.as_slice())
    }

    /// Whether entity `id` was changed from outside (see
    /// [`controller_mut`](Self::controller_mut)).
    pub(crate) fn is_outside(&self, id: EntityId) -> bool {
        self.slots
            .get(id.index as usize)
            .is_some_and(|s| s.generation == id.generation && s.outside)
    }

    /// Marks the entity with network id `net` as changed from outside (see
    /// [`controller_mut`](Self::controller_mut)): a replay does so at [`Op::Outside`].
    pub(crate) fn mark_outside(&mut self, net: NetId) {
        if let Ok(pos) = self.order.binary_search_by_key(&net, |e| e.0) {
            let index = self.order[pos].1 as usize;
            self.slots[index].outside = true;
        }
    }

    /// An entity's controller, if it is of type `T`.
    pub fn controller<T: Controller>(&self, id: EntityId) -> Option<&T> {
        self.get(id)?;
        let c: &dyn Controller = self.controllers.get(id.index as usize)?.as_deref()?;
        (c as &dyn std::any::Any).downcast_ref::<T>()
    }

    /// Hands `input` to an entity's controller from outside the group
    /// ([`Controller::take_input`]), between frames. A recording keeps it with the next
    /// tick, so a replay hands it over again at the same point. Use this, rather than
    /// changing a controller through [`controller_mut`](Self::controller_mut), for
    /// anything that changes what its server path writes.
    pub fn send_input(&mut self, id: EntityId, input: &[u8]) -> Result<(), Error> {
        let net = self.get(id).ok_or(Error::NoSuchEntity(id))?.net_id();
        let c = self
            .controllers
            .get_mut(id.index as usize)
            .and_then(|c| c.as_deref_mut())
            .ok_or(Error::NoSuchEntity(id))?;
        c.take_input(input)?;
        if let Some(r) = &mut self.recorder {
            r.op(Op::Input {
                net,
                input: input.to_vec(),
            });
        }
        Ok(())
    }

    /// An entity's controller, mutably, if it is of type `T`.
    ///
    /// Whatever is changed here no recording sees, so from now on a recording keeps the
    /// sections this group's own server path writes for the entity (instead of leaving
    /// them for a replay to write again, as it does for every kind that
    /// [decides alone](crate::KindOptions::decides_alone)), and its replay verifies bit
    /// for bit. A change that only the game's own rules read (a score, a last hitter) is
    /// better kept outside the controller; one the server path acts on travels best as an
    /// input ([`send_input`](Self::send_input)), which costs a recording only the input.
    pub fn controller_mut<T: Controller>(&mut self, id: EntityId) -> Option<&mut T> {
        let net = self.get(id)?.net_id();
        if let Some(slot) = self.slots.get_mut(id.index as usize)
            && !slot.outside
        {
            slot.outside = true;
            if let Some(r) = &mut self.recorder {
                r.op(Op::Outside { net });
            }
        }
        let c: &mut dyn Controller = self
            .controllers
            .get_mut(id.index as usize)?
            .as_deref_mut()?;
        (c as &mut dyn std::any::Any).downcast_mut::<T>()
    }

    /// A read-only view of the world, as server paths see it.
    pub fn view(&self) -> WorldView<'_> {
        WorldView {
            slots: &self.slots,
            order: &self.order,
            physics: &self.physics,
            tick: self.tick,
            dt: self.config.dt,
        }
    }
}
