//! The [`EntityGroup`]: every entity, its controller and the physics world, and the frame
//! that drives them.

use crate::Vec3;
use crate::codec::{PacketReader, PacketWriter, Section};
use crate::config::{GroupConfig, Role};
use crate::controller::{
    ClientContext, Command, Controller, Effect, Legality, SpawnRequest, SpawnTicket, WorldView,
    entity_ref,
};
use crate::entity::{Entity, EntityRef, Slot};
use crate::error::Error;
use crate::hash::StateHasher;
use crate::id::{ClientId, EntityId, KindId, NetId, Owner};
use crate::params::encode_params;
use crate::pose::{BodyState, Observed};
use crate::record::format::{self as rec, Op, Recorder, RecordingHeader, TickRecord};
use crate::registry::KindRegistry;
use rapier3d::prelude::{Collider, ColliderHandle, PhysicsWorld};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
    inbox: Vec<u8>,
    commands: Vec<Command>,
    effects: Vec<Effect>,
    requests: Vec<SpawnRequest>,
    journal: Vec<Change>,
    counters: Counters,
    recorder: Option<Recorder>,
    /// Ticks the sections from outside are behind this peer's present (see
    /// [`ClientContext::lead`]).
    lead_ticks: u32,
    /// Poses client paths took from their authorities in the last frame.
    observed: Vec<Observed>,
    /// Hooks that panicked this frame.
    faults: Vec<Fault>,
    /// The clients with a session, when a network layer says (a server's spawns may name
    /// only them as owners); `None` for a group with no network.
    clients: Option<std::collections::BTreeSet<ClientId>>,
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
            inbox: Vec::new(),
            commands: Vec::new(),
            effects: Vec::new(),
            requests: Vec::new(),
            journal: Vec::new(),
            counters: Counters::default(),
            recorder: None,
            lead_ticks: 0,
            observed: Vec::new(),
            faults: Vec::new(),
            section_errors: Vec::new(),
            tickets: std::collections::HashMap::new(),
            next_ticket: 0,
            clients: None,
        }
    }

    /// Tells a server's group which clients have a session (the network layer does, every
    /// frame): a spawn owned by any other client is refused ([`Error::NoSuchOwner`]).
    pub fn set_clients(&mut self, clients: impl IntoIterator<Item = ClientId>) {
        self.clients = Some(clients.into_iter().collect());
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
    pub fn set_role(&mut self, role: Role) {
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
    /// round trip it measures). Client paths read it as [`ClientContext::lead`] and bring
    /// states forward by it; a recording notes each change, so a replay does the same.
    pub fn set_lead(&mut self, ticks: u32) {
        if ticks == self.lead_ticks {
            return;
        }
        self.lead_ticks = ticks;
        if let Some(r) = &mut self.recorder {
            r.op(Op::Lead(ticks));
        }
    }

    /// The lead set by [`set_lead`](Self::set_lead), in ticks.
    pub fn lead_ticks(&self) -> u32 {
        self.lead_ticks
    }

    /// The poses client paths took from their authorities in the last frame, with any
    /// correction they made (see [`PoseState::correct`](crate::pose::PoseState::correct)),
    /// and the bodies put in a state from outside (a correction of an owned body, a
    /// spawn's state): what a [`Smoother`](crate::interp::Smoother) draws from.
    pub fn observed_poses(&self) -> &[Observed] {
        &self.observed
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

    /// Spawns an entity of the kind registered as `kind_name`, with a new network id.
    pub fn spawn<P: Serialize>(
        &mut self,
        kind_name: &str,
        params: &P,
        owner: Owner,
    ) -> Result<EntityId, Error> {
        let kind = self
            .registry
            .id_of(kind_name)
            .ok_or_else(|| Error::UnknownKindName(kind_name.to_owned()))?;
        let params = encode_params(kind, params).map_err(|e| e.naming_kind(kind_name))?;
        self.spawn_encoded(kind, params, owner)
    }

    /// Asks for an entity this group's side will own, the way a client path does with
    /// [`ClientContext::spawn`]: on the server it is spawned at once (owned by the server);
    /// on a client it waits for the next frame's
    /// [`FrameDriver::after_commands`](crate::FrameDriver::after_commands), where the network
    /// layer spawns it under a provisional id and asks the server. The ticket finds the
    /// entity once it exists ([`spawned`](Self::spawned)), before and after the server
    /// confirms it.
    pub fn request_spawn<P: Serialize>(
        &mut self,
        kind_name: &str,
        params: &P,
    ) -> Result<SpawnTicket, Error> {
        let kind = self
            .registry
            .id_of(kind_name)
            .ok_or_else(|| Error::UnknownKindName(kind_name.to_owned()))?;
        let params = encode_params(kind, params).map_err(|e| e.naming_kind(kind_name))?;
        self.next_ticket += 1;
        let ticket = SpawnTicket(self.next_ticket);
        match self.config.role {
            Role::Server => {
                let id = self.spawn_encoded(kind, params, Owner::Server)?;
                self.note_spawned(ticket, id);
            }
            Role::Client(c) => self.requests.push(SpawnRequest {
                kind,
                params,
                owner: Owner::Client(c),
                requested_by: NetId(0),
                ticket: Some(ticket),
            }),
        }
        Ok(ticket)
    }

    /// Notes the entity a [`SpawnTicket`] became (the network layer calls it when it
    /// carries out a request).
    pub fn note_spawned(&mut self, ticket: SpawnTicket, id: EntityId) {
        if self.tickets.len() >= 1024 {
            // Forget the tickets of entities that are gone.
            let live: Vec<(SpawnTicket, EntityId)> = self
                .tickets
                .iter()
                .filter(|(_, id)| self.get(**id).is_some())
                .map(|(t, id)| (*t, *id))
                .collect();
            self.tickets = live.into_iter().collect();
        }
        self.tickets.insert(ticket, id);
    }

    /// The entity a [`request_spawn`](Self::request_spawn) became, if it exists (yet, and
    /// still): under its provisional network id until the server confirms it, then under
    /// the server's.
    pub fn spawned(&self, ticket: SpawnTicket) -> Option<EntityId> {
        let id = *self.tickets.get(&ticket)?;
        self.get(id).map(|_| id)
    }

    /// Spawns an entity from encoded parameters, with a new network id. Only the server's
    /// group (or a standalone one) gives out network ids: on a client's group this is an
    /// error that points to [`request_spawn`](Self::request_spawn).
    pub fn spawn_encoded(
        &mut self,
        kind: KindId,
        params: Vec<u8>,
        owner: Owner,
    ) -> Result<EntityId, Error> {
        if let Role::Client(_) = self.config.role {
            return Err(Error::SpawnOnClient {
                kind: kind_label(&self.registry, kind),
            });
        }
        if let (Owner::Client(c), Some(known)) = (owner, &self.clients)
            && !known.contains(&c)
        {
            return Err(Error::NoSuchOwner {
                kind: kind_label(&self.registry, kind),
                owner: c.0,
            });
        }
        let net = NetId(self.next_net_id);
        self.insert_with_net_id(net, kind, params, owner)
    }

    /// The network id the next [`spawn`](Self::spawn) will use.
    pub fn next_net_id(&self) -> NetId {
        NetId(self.next_net_id)
    }

    /// Spawns an entity under a network id someone else assigned (a server's spawn message
    /// on a client). Later local spawns use ids above it.
    pub fn insert_with_net_id(
        &mut self,
        net: NetId,
        kind: KindId,
        params: Vec<u8>,
        owner: Owner,
    ) -> Result<EntityId, Error> {
        let pos = match self.order.binary_search_by_key(&net, |e| e.0) {
            Ok(_) => return Err(Error::NetIdInUse(net)),
            Err(pos) => pos,
        };
        let bp = self.registry.build(kind, &params)?;
        let b = &bp.body;
        let r = b.rotation();
        let bad = [
            (b.translation().is_finite(), "position"),
            (r.is_finite() && r.length_squared() > 1e-6, "rotation"),
            (b.linvel().is_finite(), "linear velocity"),
            (b.angvel().is_finite(), "angular velocity"),
        ]
        .into_iter()
        .find(|(ok, _)| !ok);
        if let Some((_, what)) = bad {
            return Err(Error::NonFinite {
                kind: kind_label(&self.registry, kind),
                what,
            });
        }
        let body = self.physics.insert_body(bp.body);
        for c in bp.colliders {
            self.physics.insert_collider(c, Some(body));
        }
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    entity: None,
                    params: Vec::new(),
                    pending: None,
                });
                self.controllers.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        let slot = &mut self.slots[index as usize];
        let id = EntityId {
            index,
            generation: slot.generation,
        };
        slot.entity = Some(Entity {
            id,
            net_id: net,
            owner,
            kind,
            body,
            visual: bp.visual,
        });
        slot.params = params;
        slot.pending = None;
        self.controllers[index as usize] = Some(bp.controller);
        self.order.insert(pos, (net, index));
        self.journal.push(Change::Spawned(net));
        if let Some(r) = &mut self.recorder {
            r.op(Op::Spawn {
                net,
                kind,
                owner,
                params: self.slots[index as usize].params.clone(),
            });
        }
        if !net.is_provisional() && net.0 >= self.next_net_id {
            self.next_net_id = net.0.saturating_add(1);
        }
        Ok(id)
    }

    /// Despawns an entity now, with its body and colliders. Its slot is reused later under
    /// a new generation, so `id` never resolves again. (Inside a frame, controllers ask for
    /// despawns through their [`ClientContext`]; those wait until the pass is over.)
    pub fn despawn(&mut self, id: EntityId) -> Result<(), Error> {
        let slot = self
            .slots
            .get_mut(id.index as usize)
            .filter(|s| s.generation == id.generation && s.entity.is_some())
            .ok_or(Error::NoSuchEntity(id))?;
        let Some(entity) = slot.entity.take() else {
            return Err(Error::NoSuchEntity(id));
        };
        slot.generation = slot.generation.wrapping_add(1);
        slot.params = Vec::new();
        slot.pending = None;
        self.controllers[id.index as usize] = None;
        self.physics.remove_body(entity.body);
        if let Ok(pos) = self.order.binary_search_by_key(&entity.net_id, |e| e.0) {
            self.order.remove(pos);
        }
        self.free.push(id.index);
        self.journal.push(Change::Despawned {
            net: entity.net_id,
            owner: entity.owner,
        });
        if let Some(r) = &mut self.recorder {
            r.op(Op::Despawn { net: entity.net_id });
        }
        Ok(())
    }

    /// Hands an entity to another owner (a leaving client's entity to the server).
    pub fn set_owner(&mut self, id: EntityId, owner: Owner) -> Result<(), Error> {
        let entity = self.entity_mut(id)?;
        entity.owner = owner;
        let net = entity.net_id;
        self.journal.push(Change::OwnerChanged { net, owner });
        if let Some(r) = &mut self.recorder {
            r.op(Op::SetOwner { net, owner });
        }
        Ok(())
    }

    /// Gives an entity a new network id: a client's provisional id becomes the one the
    /// server assigned.
    pub fn rename_net_id(&mut self, from: NetId, to: NetId) -> Result<EntityId, Error> {
        if self.order.binary_search_by_key(&to, |e| e.0).is_ok() {
            return Err(Error::NetIdInUse(to));
        }
        let pos = self
            .order
            .binary_search_by_key(&from, |e| e.0)
            .map_err(|_| Error::NoSuchNetId(from))?;
        let (_, index) = self.order.remove(pos);
        let slot = &mut self.slots[index as usize];
        let Some(entity) = slot.entity.as_mut() else {
            return Err(Error::NoSuchNetId(from));
        };
        entity.net_id = to;
        let id = entity.id;
        let at = self
            .order
            .binary_search_by_key(&to, |e| e.0)
            .unwrap_or_else(|p| p);
        self.order.insert(at, (to, index));
        if !to.is_provisional() && to.0 >= self.next_net_id {
            self.next_net_id = to.0.saturating_add(1);
        }
        self.journal.push(Change::Renamed { from, to });
        if let Some(r) = &mut self.recorder {
            r.op(Op::Rename { from, to });
        }
        Ok(id)
    }

    /// Puts an entity's body in `state` (a spawn message's snapshot of where it is now).
    /// Refuses non-finite values.
    pub fn set_body_state(&mut self, id: EntityId, state: &BodyState) -> Result<(), Error> {
        let entity = self.entity_mut(id)?;
        let (handle, net) = (entity.body, entity.net_id);
        let body = self
            .physics
            .bodies
            .get_mut(handle)
            .ok_or(Error::NoSuchEntity(id))?;
        let before = (body.translation(), *body.rotation());
        state.apply(body)?;
        let now = crate::pose::PoseState::of(body);
        self.observed.push(Observed {
            id,
            authority: now,
            applied: now,
            corrected_from: Some(before),
        });
        if let Some(r) = &mut self.recorder {
            r.op(Op::BodyState { net, state: *state });
        }
        Ok(())
    }

    /// Forgets the last frame's observed poses: a frame begins.
    pub(crate) fn begin_frame(&mut self) {
        self.observed.clear();
        self.faults.clear();
        self.section_errors.clear();
    }

    /// The changes to the set of entities since the last call, oldest first.
    pub fn drain_changes(&mut self) -> std::vec::Drain<'_, Change> {
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

    /// An entity's controller, if it is of type `T`.
    pub fn controller<T: Controller>(&self, id: EntityId) -> Option<&T> {
        self.get(id)?;
        let c: &dyn Controller = self.controllers.get(id.index as usize)?.as_deref()?;
        (c as &dyn std::any::Any).downcast_ref::<T>()
    }

    /// An entity's controller, mutably, if it is of type `T`.
    pub fn controller_mut<T: Controller>(&mut self, id: EntityId) -> Option<&mut T> {
        self.get(id)?;
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

    /// Runs the server path of every entity this group has authority over, in network-id
    /// order, into one packet (kept as [`last_packet`](Self::last_packet) until the next
    /// call).
    pub(crate) fn write_sections(&mut self) {
        self.outgoing.clear();
        let local = self.local_owner();
        let view = WorldView {
            slots: &self.slots,
            order: &self.order,
            physics: &self.physics,
            tick: self.tick,
            dt: self.config.dt,
        };
        for &(net, index) in &self.order {
            let i = index as usize;
            let Some(me) = entity_ref(&self.slots[i], &self.physics) else {
                continue;
            };
            if me.owner() != local {
                continue;
            }
            let Some(ctrl) = self.controllers[i].as_deref_mut() else {
                continue;
            };
            let outgoing = &mut self.outgoing;
            let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                outgoing.section(net, |w| ctrl.server_update(me, &view, w))
            }));
            match written {
                Ok(Ok(_)) => {}
                Ok(Err(_)) => self.counters.oversized_sections += 1,
                Err(payload) => {
                    // The half-written section is dropped with the panic's unwinding
                    // (`section` only commits what returned).
                    self.counters.faults += 1;
                    self.faults.push(Fault {
                        net,
                        kind: kind_label(&self.registry, me.kind()),
                        owner: me.owner(),
                        hook: Hook::ServerPath,
                        message: panic_message(payload.as_ref()),
                    });
                }
            }
        }
    }

    /// The packet the server paths of the last frame wrote (the sections this group has
    /// authority over).
    pub fn last_packet(&self) -> &PacketWriter {
        &self.outgoing
    }

    /// Offers the packet the server paths just wrote to this group's own client paths, as
    /// if it had come from the network (self-loopback), without parsing it again.
    pub(crate) fn loop_back(&mut self) {
        let packet = std::mem::take(&mut self.outgoing);
        let local = self.local_owner();
        let mut hint = 0;
        for section in packet.sections() {
            self.offer_at(section, local, &mut hint);
        }
        self.outgoing = packet;
    }

    /// Decodes a packet body from `from` and offers each section to its entity
    /// ([`offer_section`](Self::offer_section)). Bad sections are skipped and counted; the
    /// rest of the packet still counts.
    pub(crate) fn receive_sections(&mut self, bytes: &[u8], from: Owner) -> ReceiveReport {
        let mut report = ReceiveReport::default();
        // Packets are written in network-id order, so the next section's entity is usually
        // the one after the last: try there before searching.
        let mut hint = 0;
        for section in PacketReader::new(bytes) {
            let Ok(section) = section else {
                report.framing_error = true;
                self.counters.framing_errors += 1;
                break;
            };
            match self.offer_at(section, from, &mut hint) {
                Verdict::Accepted => report.accepted += 1,
                Verdict::UnknownEntity => report.unknown_entity += 1,
                Verdict::NotOwner => report.not_owner += 1,
                Verdict::Illegal => report.illegal += 1,
            }
        }
        report
    }

    /// Judges one section from `from` and, if it is accepted, queues it for its entity's
    /// client path this frame (see [`FramePass::offer_section`](crate::FramePass::offer_section)).
    pub(crate) fn offer_section(&mut self, section: Section<'_>, from: Owner) -> Verdict {
        self.offer_at(section, from, &mut 0)
    }

    fn offer_at(&mut self, section: Section<'_>, from: Owner, hint: &mut usize) -> Verdict {
        let pos = match self.order.get(*hint) {
            Some(&(net, _)) if net == section.net_id => *hint,
            _ => match self.order.binary_search_by_key(&section.net_id, |e| e.0) {
                Ok(pos) => pos,
                Err(_) => {
                    self.counters.unknown_entity += 1;
                    return Verdict::UnknownEntity;
                }
            },
        };
        *hint = pos + 1;
        let i = self.order[pos].1 as usize;
        let Some(me) = entity_ref(&self.slots[i], &self.physics) else {
            self.counters.unknown_entity += 1;
            return Verdict::UnknownEntity;
        };
        if from != Owner::Server {
            if me.owner() != from {
                self.counters.not_owner += 1;
                return Verdict::NotOwner;
            }
            let view = self.view();
            let judged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.controllers[i]
                    .as_deref()
                    .is_some_and(|c| c.validate(me, section, &view) == Legality::Legal)
            }));
            let legal = match judged {
                Ok(legal) => legal,
                Err(payload) => {
                    let fault = Fault {
                        net: section.net_id,
                        kind: kind_label(&self.registry, me.kind()),
                        owner: me.owner(),
                        hook: Hook::Validate,
                        message: panic_message(payload.as_ref()),
                    };
                    self.counters.faults += 1;
                    self.faults.push(fault);
                    false
                }
            };
            if !legal {
                self.counters.illegal += 1;
                return Verdict::Illegal;
            }
        }
        let start = self.inbox.len() as u32;
        self.inbox.extend_from_slice(section.payload);
        self.slots[i].pending = Some((start, section.payload.len() as u32));
        self.counters.sections_in += 1;
        if let Some(r) = &mut self.recorder {
            r.section(section.net_id, section.payload);
        }
        Verdict::Accepted
    }

    /// Whether a section is queued for the entity with network id `net` this frame.
    pub fn has_pending_section(&self, net: NetId) -> bool {
        self.order
            .binary_search_by_key(&net, |e| e.0)
            .is_ok_and(|pos| self.slots[self.order[pos].1 as usize].pending.is_some())
    }

    /// Runs every entity's client path once, in network-id order, with its queued section
    /// or without one. Returns how many ran with a section and how many rejected theirs.
    pub(crate) fn run_client_paths(&mut self) -> (usize, usize) {
        if let Some(r) = &mut self.recorder {
            r.op(Op::ClientPass);
        }
        let local = self.local_owner();
        let mut applied = 0;
        let mut bad = 0;
        let lead = self.lead_ticks as f32 * self.config.dt;
        for &(net, index) in &self.order {
            let i = index as usize;
            let slot = &mut self.slots[i];
            let pending = slot.pending.take();
            let Some(entity) = slot.entity.as_mut() else {
                continue;
            };
            if self.physics.bodies.get(entity.body).is_none() {
                continue;
            }
            let Some(ctrl) = self.controllers[i].as_deref_mut() else {
                continue;
            };
            let section = pending.and_then(|(start, len)| {
                let payload = self.inbox.get(start as usize..(start + len) as usize)?;
                Some(Section {
                    net_id: net,
                    payload,
                })
            });
            let had_section = section.is_some();
            let authority = entity.owner == local;
            let mut ctx = ClientContext {
                authority,
                bodies: &mut self.physics.bodies,
                handle: entity.body,
                me: entity.id,
                net_id: net,
                owner: entity.owner,
                tick: self.tick,
                dt: self.config.dt,
                kinds: &*self.registry,
                commands: &mut self.commands,
                effects: &mut self.effects,
                lead: if authority || !had_section { 0.0 } else { lead },
                gravity: self.config.gravity,
                observed: &mut self.observed,
            };
            let kind = entity.kind;
            let owner = entity.owner;
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                ctrl.client_update(entity, section, &mut ctx)
            }));
            match ran {
                Ok(Ok(())) if had_section => applied += 1,
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    bad += 1;
                    self.counters.bad_sections += 1;
                    self.section_errors.push(SectionError {
                        net,
                        kind: kind_label(&self.registry, kind),
                        error,
                    });
                }
                Err(payload) => {
                    bad += usize::from(had_section);
                    self.counters.faults += 1;
                    self.faults.push(Fault {
                        net,
                        kind: kind_label(&self.registry, kind),
                        owner,
                        hook: Hook::ClientPath {
                            section: had_section,
                        },
                        message: panic_message(payload.as_ref()),
                    });
                }
            }
        }
        self.inbox.clear();
        (applied, bad)
    }

    /// Carries out what client paths asked for: despawns first, then spawns. On the server
    /// a spawn happens at once with a new network id; on a client a spawn of an entity this
    /// client will own waits in [`take_spawn_requests`](Self::take_spawn_requests) for the
    /// network layer, and other spawns are left to the server. Returns the spawn count, the
    /// despawn count, and the errors of failed spawns.
    pub(crate) fn apply_commands(&mut self) -> (usize, usize, Vec<Error>) {
        if let Some(r) = &mut self.recorder {
            r.op(Op::Commands);
            r.quiet = true;
        }
        let result = self.carry_out_commands();
        if let Some(r) = &mut self.recorder {
            r.quiet = false;
        }
        result
    }

    fn carry_out_commands(&mut self) -> (usize, usize, Vec<Error>) {
        let mut spawned = 0;
        let mut despawned = 0;
        let mut errors = Vec::new();
        let commands = std::mem::take(&mut self.commands);
        for c in &commands {
            // A client despawns only its own entities: the server's word decides the rest.
            if let Command::Despawn(net) = c
                && let Some(e) = self.by_net(*net)
                && (self.config.role == Role::Server || e.owner() == self.local_owner())
                && self.despawn(e.id()).is_ok()
            {
                despawned += 1;
            }
        }
        for c in commands {
            if let Command::Spawn(req) = c {
                match self.config.role {
                    Role::Server => match self.spawn_encoded(req.kind, req.params, req.owner) {
                        Ok(_) => spawned += 1,
                        Err(e) => {
                            self.counters.failed_spawns += 1;
                            errors.push(e);
                        }
                    },
                    Role::Client(_) if req.owner == self.local_owner() => self.requests.push(req),
                    Role::Client(_) => {}
                }
            }
        }
        (spawned, despawned, errors)
    }

    /// Spawns this client asked for that the network layer has to send up.
    pub(crate) fn take_spawn_requests(&mut self) -> Vec<SpawnRequest> {
        std::mem::take(&mut self.requests)
    }

    /// Puts back the spawn requests a driver did not carry out, ahead of newer ones.
    pub(crate) fn requeue_spawn_requests(&mut self, mut requests: Vec<SpawnRequest>) {
        if !requests.is_empty() {
            requests.append(&mut self.requests);
            self.requests = requests;
        }
    }

    /// The effects client paths emitted since the last call.
    pub fn drain_effects(&mut self) -> std::vec::Drain<'_, Effect> {
        self.effects.drain(..)
    }

    /// Steps physics once with the fixed timestep and advances the tick.
    pub(crate) fn step_physics(&mut self) {
        self.physics.step();
        self.tick += 1;
        if self.recorder.is_some() {
            let hash = self.state_hash();
            let now = self.poses();
            let tick = self.tick - 1;
            if let Some(r) = &mut self.recorder {
                let (poses, gone) = r.delta(now);
                let ops = std::mem::take(&mut r.ops);
                r.tick(TickRecord {
                    tick,
                    ops,
                    hash,
                    poses,
                    gone,
                });
            }
        }
    }

    /// Starts recording everything that happens to the group from now on (see
    /// [`crate::record`]). Call it between frames. The recorded bytes accumulate in memory;
    /// take them with [`take_recording`](Self::take_recording) and write them where you like,
    /// and end with [`stop_recording`](Self::stop_recording). Starting while recording is an
    /// error ([`Error::AlreadyRecording`]): it would drop what was not taken yet.
    pub fn start_recording(&mut self, scene: &str, recorded_by: &str) -> Result<(), Error> {
        if self.recorder.is_some() {
            // Starting again would drop what was recorded and not yet taken.
            return Err(Error::AlreadyRecording);
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
        };
        let out = rec::preamble(&header, &self.snapshot()?)?;
        self.recorder = Some(Recorder {
            out,
            ..Recorder::default()
        });
        Ok(())
    }

    /// Whether the group is recording.
    pub fn is_recording(&self) -> bool {
        self.recorder.is_some()
    }

    /// The recorded bytes since the last call (append them to the recording's file). Ticks
    /// are packed in blocks of up to [`BLOCK_TICKS`](crate::record::BLOCK_TICKS): taking
    /// often makes small blocks that compress less; once a second is plenty.
    pub fn take_recording(&mut self) -> Vec<u8> {
        self.recorder
            .as_mut()
            .map(|r| {
                r.flush();
                std::mem::take(&mut r.out)
            })
            .unwrap_or_default()
    }

    /// Ends the recording: the bytes recorded since the last
    /// [`take_recording`](Self::take_recording) (append them to the file, which is then
    /// complete). An error if the group is not recording.
    pub fn stop_recording(&mut self) -> Result<Vec<u8>, Error> {
        let bytes = self.take_recording();
        match self.recorder.take() {
            Some(_) => Ok(bytes),
            None => Err(Error::NotRecording),
        }
    }

    /// Every entity's position and rotation (x y z, qx qy qz qw), in network-id order.
    pub(crate) fn poses(&self) -> Vec<(NetId, [f32; 7])> {
        self.iter()
            .map(|e| {
                let t = e.body().translation();
                let r = e.body().rotation();
                (e.net_id(), [t.x, t.y, t.z, r.x, r.y, r.z, r.w])
            })
            .collect()
    }

    /// A hash over the exact bits of every entity body's pose and velocities, in
    /// network-id order. Two groups with the same hash are, for every practical purpose,
    /// in the same state; one flipped bit anywhere changes it.
    pub fn state_hash(&self) -> u64 {
        let mut h = StateHasher::new();
        for e in self.iter() {
            h.u32(e.net_id().0);
            let b = e.body();
            let t = b.translation();
            let r = b.rotation();
            let v = b.linvel();
            let w = b.angvel();
            for f in [
                t.x, t.y, t.z, r.x, r.y, r.z, r.w, v.x, v.y, v.z, w.x, w.y, w.z,
            ] {
                h.f32(f);
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
        let cfg = bincode::config::standard();
        let meta = bincode::serde::encode_to_vec(&snap, cfg)
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
        let bad = |m: &str| Error::BadSnapshot(m.to_owned());
        let rest = bytes
            .strip_prefix(SNAPSHOT_MAGIC)
            .ok_or_else(|| bad("not a Lanyard snapshot"))?;
        let (version, rest) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| bad("truncated header"))?;
        let version = u32::from_le_bytes(*version);
        if version != SNAPSHOT_VERSION {
            return Err(Error::BadSnapshot(format!(
                "format version {version}, this build reads {SNAPSHOT_VERSION}"
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
        let cfg = bincode::config::standard();
        let (snap, _): (SnapshotMeta, usize) = bincode::serde::decode_from_slice(meta, cfg)
            .map_err(|e| Error::BadSnapshot(e.to_string()))?;
        let (physics, _): (PhysicsWorld, usize) = bincode::serde::decode_from_slice(world, cfg)
            .map_err(|e| Error::BadSnapshot(e.to_string()))?;
        if !snap.config.is_valid() {
            return Err(bad("the configuration is not valid (timestep or gravity)"));
        }
        let mut group = EntityGroup::new(registry, snap.config);
        group.physics = physics;
        group.tick = snap.tick;
        group.next_net_id = snap.next_net_id;
        group.free = snap.free;
        group.counters = snap.counters;
        for (index, s) in snap.slots.into_iter().enumerate() {
            let mut controller = None;
            if let Some(e) = &s.entity {
                if group.physics.bodies.get(e.body).is_none() {
                    return Err(bad("an entity's body is missing from the physics world"));
                }
                let mut c = group.registry.build(e.kind, &s.params)?.controller;
                c.load_state(&s.state)?;
                controller = Some(c);
                group.order.push((e.net_id, index as u32));
            }
            group.slots.push(Slot {
                generation: s.generation,
                entity: s.entity,
                params: s.params,
                pending: None,
            });
            group.controllers.push(controller);
        }
        group.order.sort_unstable_by_key(|e| e.0);
        if group.order.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(bad("two entities share a network id"));
        }
        Ok(group)
    }
}

const SNAPSHOT_MAGIC: &[u8; 4] = b"LNYS";
/// The snapshot format version this build writes and reads.
pub const SNAPSHOT_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct SnapshotMeta {
    config: GroupConfig,
    tick: u64,
    next_net_id: u32,
    free: Vec<u32>,
    slots: Vec<SlotSnapshot>,
    counters: Counters,
}

#[derive(Serialize, Deserialize)]
struct SlotSnapshot {
    generation: u32,
    entity: Option<Entity>,
    params: Vec<u8>,
    state: Vec<u8>,
}
