//! The [`Controller`] trait: everything an entity does, in two paths.

use crate::codec::{Section, SectionReader, SectionWriter};
use crate::entity::{Entity, EntityRef, Slot};
use crate::error::{CodecError, Error};
use crate::id::{EntityId, KindId, NetId, Owner};
use crate::params::encode_params;
use crate::pose::{Observations, Observed, PoseState};
use crate::predict::Steer;
use rapier3d::glamx::glam::Vec3;
use rapier3d::prelude::{PhysicsWorld, RigidBody, RigidBodyHandle, RigidBodySet};
use serde::Serialize;
use std::any::Any;

/// Everything an entity does.
///
/// * The **server path** ([`server_update`](Controller::server_update)) runs on the peer
///   that has authority over the entity. It reads the entity and the world (it cannot change
///   them) and writes what it decided into the entity's section of the outgoing packet.
/// * The **client path** ([`client_update`](Controller::client_update)) runs on every peer,
///   the authority included: the authority's own packet is looped back through it. With a
///   section it applies it; without one it simulates the entity as well as it can.
///
/// Nothing changes an entity except its client path, so the same sections replayed through
/// the same controllers give the same world, bit for bit.
///
/// The controller's own fields are its state (an input stream, a fuse timer). If they
/// matter for determinism, implement [`save_state`](Controller::save_state) and
/// [`load_state`](Controller::load_state) so snapshots carry them.
pub trait Controller: Any + Send {
    /// The server path: decide, and write the decision into `out`. Writing nothing sends no
    /// section this frame (the client path then runs without one).
    fn server_update(
        &mut self,
        me: EntityRef<'_>,
        world: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    );

    /// The client path: apply `section` if there is one, or simulate without it.
    ///
    /// Return an error if the section cannot be read; the group then counts it as a bad
    /// section. Parse the whole section before changing anything, so a bad one changes
    /// nothing.
    fn client_update(
        &mut self,
        me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error>;

    /// The entity's motion: what it does to its own body every tick, after its client path
    /// and before the physics step, on every peer (a pull toward a planet, a thrust toward
    /// its own target height). Read and steer through `body` alone: the same code runs on
    /// the body here and on a predicted state where the network layer foresees the body
    /// (see [`crate::predict`]), so a body that only moves as its motion and the physics
    /// step move it costs nothing on the wire. Read only `&self` (the spawn parameters and
    /// the state the paths keep): the prediction runs it many ticks ahead. The default does
    /// nothing.
    fn motion(&self, body: &mut Steer<'_>) {
        body.unsteered = true;
    }

    /// On the server, judges a section the entity's owner (a client) sent, before it is
    /// applied or forwarded. `me` is the server's own copy of the entity and `world` the
    /// server's world. An illegal section is dropped, counted, and the owner is sent the
    /// server's own state of the entity's body (a correction) to go back to.
    ///
    /// Judge everything the section can claim: a pose far from the server's copy, a speed
    /// nothing in the game could give, a teleport. The default trusts the owner.
    fn validate(&self, me: EntityRef<'_>, section: Section<'_>, world: &WorldView<'_>) -> Legality {
        let _ = (me, section, world);
        Legality::Legal
    }

    /// Appends the controller's own state for a snapshot. Stateless controllers keep the
    /// default, which writes nothing.
    fn save_state(&self, out: &mut Vec<u8>) {
        let _ = out;
    }

    /// Restores what [`save_state`](Controller::save_state) wrote, on a controller freshly
    /// built from the entity's spawn parameters.
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let _ = bytes;
        Ok(())
    }

    /// Takes an input handed to the entity from outside the group, through
    /// [`EntityGroup::send_input`](crate::EntityGroup::send_input): a key press, a push a
    /// game rule gives. Inputs that come this way are recorded, so a replay hands them
    /// over again, and a kind that [decides alone](crate::KindOptions::decides_alone) may
    /// take them. Parse the whole input before changing anything. The default takes none
    /// (an error).
    fn take_input(&mut self, input: &[u8]) -> Result<(), Error> {
        let _ = input;
        Err(Error::Codec(CodecError::InvalidValue(
            "this kind takes no input",
        )))
    }
}

/// Resolves a registered kind's name to its id (the registry implements it; the controller
/// module does not depend on the registry, which depends on it).
pub(crate) trait KindLookup {
    /// The id of the kind registered as `name`.
    fn kind_id(&self, name: &str) -> Option<KindId>;

    /// Encodes `params` (of the type named `given`) for the kind registered as `name`,
    /// refusing parameters of another type than its factory takes.
    fn check_params(&self, kind: KindId, given: &'static str) -> Result<(), Error>;
}

/// The server's judgement of a section a client sent for an entity it owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Legality {
    /// Apply and forward it.
    Legal,
    /// Drop it and correct the owner.
    Illegal,
}

impl From<bool> for Legality {
    /// `true` is [`Legality::Legal`].
    fn from(legal: bool) -> Self {
        match legal {
            true => Legality::Legal,
            false => Legality::Illegal,
        }
    }
}

/// A read-only view of the world, for server paths.
#[derive(Clone, Copy)]
pub struct WorldView<'a> {
    pub(crate) slots: &'a [Slot],
    pub(crate) order: &'a [(NetId, u32)],
    pub(crate) physics: &'a PhysicsWorld,
    pub(crate) tick: u64,
    pub(crate) dt: f32,
}

impl<'a> WorldView<'a> {
    /// The tick being computed (0 for the first frame).
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// The fixed timestep in seconds.
    pub fn dt(&self) -> f32 {
        self.dt
    }

    /// The whole physics world (bodies, colliders, scenery), read-only.
    pub fn physics(&self) -> &'a PhysicsWorld {
        self.physics
    }

    /// An entity by local id.
    pub fn get(&self, id: EntityId) -> Option<EntityRef<'a>> {
        let slot = self.slots.get(id.index as usize)?;
        if slot.generation != id.generation {
            return None;
        }
        entity_ref(slot, self.physics)
    }

    /// An entity by network id.
    pub fn by_net(&self, net: NetId) -> Option<EntityRef<'a>> {
        let i = self.order.binary_search_by_key(&net, |e| e.0).ok()?;
        entity_ref(&self.slots[self.order[i].1 as usize], self.physics)
    }

    /// Every entity, in network-id order.
    pub fn iter(&self) -> impl Iterator<Item = EntityRef<'a>> + 'a {
        let slots = self.slots;
        let physics = self.physics;
        self.order
            .iter()
            .filter_map(move |&(_, i)| entity_ref(&slots[i as usize], physics))
    }
}

pub(crate) fn entity_ref<'a>(slot: &'a Slot, physics: &'a PhysicsWorld) -> Option<EntityRef<'a>> {
    let entity = slot.entity.as_ref()?;
    let body = physics.bodies.get(entity.body)?;
    Some(EntityRef { entity, body })
}

/// A client-side effect a client path emitted: something to show or play, not to simulate
/// ("sparks at p", "flash at p"). The renderer drains them after each frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    /// What kind of effect, as the game names it.
    pub name: &'static str,
    /// Where.
    pub at: Vec3,
    /// How strong (the game decides the unit).
    pub strength: f32,
    /// The entity that emitted it.
    pub source: NetId,
}

/// A spawn asked for by a client path, carried out after the client pass by whoever has
/// the authority to assign network ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnRequest {
    /// The kind to spawn.
    pub kind: KindId,
    /// Its spawn parameters, encoded.
    pub params: Vec<u8>,
    /// Who will own it.
    pub owner: Owner,
    /// The entity whose client path asked.
    pub requested_by: NetId,
    /// The ticket [`EntityGroup::request_spawn`](crate::EntityGroup::request_spawn) gave
    /// for it (none for a client path's spawn).
    pub ticket: Option<SpawnTicket>,
}

/// A spawn asked for with [`EntityGroup::request_spawn`](crate::EntityGroup::request_spawn).
/// On a client the entity appears a frame later under a provisional network id, and takes
/// the server's id when it confirms; [`EntityGroup::spawned`](crate::EntityGroup::spawned)
/// finds it by its ticket throughout (the local [`EntityId`] never changes), and says
/// `None` once it is gone (the server refused it, or it was despawned).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpawnTicket(pub u64);

/// What a client path asked the group to do once the pass is over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Spawn an entity.
    Spawn(SpawnRequest),
    /// Despawn the entity with this network id.
    Despawn(NetId),
}

/// What a client path may touch besides its entity: the entity's rigid body, the frame's
/// time, and the queues for spawns, despawns and effects.
///
/// Reading the body is free; the first mutable access tells rapier the body changed (so a
/// controller that only looks costs the physics step nothing extra).
pub struct ClientContext<'a> {
    /// The group's bodies. Invariant: while a client path runs, `handle` is in it (the
    /// group checks, or its server path found the body this frame, before it sets `handle`
    /// for that client path; nothing reachable from here removes bodies).
    pub(crate) bodies: &'a mut RigidBodySet,
    pub(crate) handle: RigidBodyHandle,
    pub(crate) me: EntityId,
    pub(crate) net_id: NetId,
    pub(crate) owner: Owner,
    pub(crate) tick: u64,
    pub(crate) dt: f32,
    pub(crate) authority: bool,
    /// Whether the section is this group's own, looped back.
    pub(crate) own_section: bool,
    /// Where an own section's payload starts in the group's own packet.
    pub(crate) own_at: u32,
    pub(crate) kinds: &'a dyn KindLookup,
    pub(crate) commands: &'a mut Vec<Command>,
    pub(crate) effects: &'a mut Vec<Effect>,
    /// How far behind this peer's present the section is, seconds (0 without one, and on
    /// the authority).
    pub(crate) lead: f32,
    /// The world's gravity.
    pub(crate) gravity: Vec3,
    /// Poses taken from the authority this frame (see [`crate::pose::Observed`]).
    pub(crate) observed: &'a mut Observations,
}

impl ClientContext<'_> {
    /// Aims the context of a pass at `entity` (network id `net`), whose section is
    /// `pending` (its own looped back, or received), this peer being its authority or not,
    /// the section brought forward by `lead` seconds.
    #[inline]
    pub(crate) fn aim(
        &mut self,
        entity: &crate::entity::Entity,
        net: NetId,
        (authority, pending): (bool, Option<crate::entity::Pending>),
        lead: f32,
    ) {
        self.authority = authority;
        self.own_section = pending.is_some_and(|p| p.own);
        self.own_at = pending.map_or(0, |p| p.start);
        self.handle = entity.body;
        self.me = entity.id;
        self.net_id = net;
        self.owner = entity.owner;
        self.lead = lead;
    }

    /// The entity's rigid body, read-only.
    pub fn body(&self) -> &RigidBody {
        &self.bodies[self.handle]
    }

    /// The entity's rigid body, to apply forces and velocities or set its pose.
    pub fn body_mut(&mut self) -> &mut RigidBody {
        &mut self.bodies[self.handle]
    }

    /// The tick being computed.
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// Whether this peer has authority over the entity (runs its server path). Every peer
    /// runs the client path; decisions with consequences elsewhere, such as spawning a
    /// thrown grenade, belong to the authority alone.
    pub fn is_authority(&self) -> bool {
        self.authority
    }

    /// Whether this frame's section is this peer's own: what the entity's server path
    /// wrote this frame, looped back (self-loopback). It describes the body as it is now,
    /// so a pose in it can be skipped rather than read (see
    /// [`PoseState::take`](crate::pose::PoseState::take)). False without a section.
    pub fn section_is_own(&self) -> bool {
        self.own_section
    }

    /// Who owns the entity.
    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// The fixed timestep in seconds.
    pub fn dt(&self) -> f32 {
        self.dt
    }

    /// How long ago, in seconds, the state in this frame's section was its authority's:
    /// what a state should be brought forward by to stand for this peer's present (see
    /// [`PoseState::correct`](crate::pose::PoseState::correct)). Zero on the authority and
    /// without a section; set by the network layer from the measured round trip, in whole
    /// ticks, and recorded, so a replay brings states forward exactly as the session did.
    pub fn lead(&self) -> f32 {
        self.lead
    }

    /// The world's gravity.
    pub fn gravity(&self) -> Vec3 {
        self.gravity
    }

    /// Sets the linear velocity (and wakes the body).
    pub fn set_linvel(&mut self, v: Vec3) {
        self.body_mut().set_linvel(v, true);
    }

    /// Sets the angular velocity, radians per second about each axis (and wakes the body).
    pub fn set_angvel(&mut self, w: Vec3) {
        self.body_mut().set_angvel(w, true);
    }

    /// Adds a torque for the next physics step (and wakes the body).
    pub fn add_torque(&mut self, torque: Vec3) {
        self.body_mut().add_torque(torque, true);
    }

    /// Applies an impulse at the centre of mass (and wakes the body).
    pub fn apply_impulse(&mut self, impulse: Vec3) {
        self.body_mut().apply_impulse(impulse, true);
    }

    /// Adds a force for the next physics step (and wakes the body).
    pub fn add_force(&mut self, force: Vec3) {
        self.body_mut().add_force(force, true);
    }

    /// Emits a client-side effect.
    pub fn effect(&mut self, name: &'static str, at: Vec3, strength: f32) {
        self.effects.push(Effect {
            name,
            at,
            strength,
            source: self.net_id,
        });
    }

    /// Asks for an entity of kind `kind_name` owned by this entity's owner. On the
    /// authority the spawn happens after the client pass; on a client the request waits for
    /// the network layer to send it up.
    pub fn spawn<P: Serialize>(&mut self, kind_name: &str, params: &P) -> Result<(), Error> {
        let kind = self
            .kinds
            .kind_id(kind_name)
            .ok_or_else(|| Error::UnknownKindName(kind_name.to_owned()))?;
        self.kinds.check_params(kind, std::any::type_name::<P>())?;
        let params = encode_params(kind, params)?;
        self.commands.push(Command::Spawn(SpawnRequest {
            kind,
            params,
            owner: self.owner,
            requested_by: self.net_id,
            ticket: None,
        }));
        Ok(())
    }

    /// Asks for this entity to be despawned after the pass.
    pub fn despawn_self(&mut self) {
        self.commands.push(Command::Despawn(self.net_id));
    }

    /// Asks for another entity to be despawned after the pass.
    pub fn despawn(&mut self, net: NetId) {
        self.commands.push(Command::Despawn(net));
    }

    /// This entity's local id.
    pub fn id(&self) -> EntityId {
        self.me
    }

    /// This entity's network id.
    pub fn net_id(&self) -> NetId {
        self.net_id
    }

    /// Reports the pose this peer's own section starts with as its authority's, for
    /// [`EntityGroup::observed_poses`](crate::EntityGroup::observed_poses), which decodes
    /// it when asked.
    fn observe_own(&mut self) {
        self.observed.push_own(self.me, self.own_at);
    }
}

/// Taking a pose from the authority lives here, beside the context it writes to.
impl PoseState {
    /// Applies this state, brought forward to this peer's present, only if the body has
    /// drifted from it beyond `tolerance` (see [`differs_from`](Self::differs_from)).
    /// Returns whether it corrected the body.
    ///
    /// A section from the network describes its authority's body a moment ago:
    /// [`ClientContext::lead`] says how long. The state is advanced ballistically by that
    /// much first ([`advanced`](Self::advanced)), so a body this peer's own player is
    /// pushing is not a round trip behind. On the authority the lead is zero and the
    /// looped-back state is its own, quantized, so this changes nothing.
    ///
    /// It also reports the authority's pose, and any correction, to the group
    /// ([`EntityGroup::observed_poses`](crate::EntityGroup::observed_poses)): that is how a
    /// [`Smoother`](crate::interp::Smoother) draws the entity without code of the kind's own.
    pub fn correct(&self, ctx: &mut ClientContext<'_>, tolerance: f32) -> bool {
        let lead = ctx.lead();
        let now = if lead > 0.0 {
            self.advanced(lead, ctx.gravity)
        } else {
            *self
        };
        let body = ctx.body();
        let before = (body.translation(), *body.rotation());
        let off = now.differs_from(body, tolerance);
        if off {
            now.apply(ctx.body_mut());
        }
        let id = ctx.id();
        ctx.observed.push(Observed {
            id,
            authority: *self,
            applied: now,
            corrected_from: off.then_some(before),
        });
        off
    }

    /// Takes a section that is a pose alone: reads it whole and
    /// [corrects](Self::correct) the body to it. See [`take_then`](Self::take_then).
    pub fn take(
        section: &Section<'_>,
        ctx: &mut ClientContext<'_>,
        tolerance: f32,
    ) -> Result<(), Error> {
        // The peer's own pose, whole (anything else is refused below as a parse would).
        if ctx.section_is_own() && section.payload.len() == PoseState::LEN {
            ctx.observe_own();
            return Ok(());
        }
        Self::take_then(section, ctx, tolerance, |_| Ok(()))
    }

    /// Takes a section that starts with a pose: reads the pose, then the rest with
    /// `rest` (nothing may be left over), and only then [corrects](Self::correct) the body
    /// to the pose, so a section refused anywhere changes nothing. Returns what `rest`
    /// read.
    ///
    /// A section that is the peer's own, looped back ([`ClientContext::section_is_own`]),
    /// has its pose passed over instead of decoded: it was written from the body this very
    /// frame, so it could never correct it. It is reported as the authority's pose all the
    /// same ([`EntityGroup::observed_poses`](crate::EntityGroup::observed_poses) decodes it
    /// when asked).
    pub fn take_then<'a, T>(
        section: &Section<'a>,
        ctx: &mut ClientContext<'_>,
        tolerance: f32,
        rest: impl FnOnce(&mut SectionReader<'a>) -> Result<T, CodecError>,
    ) -> Result<T, Error> {
        if ctx.section_is_own() {
            let value = section.parse(|r| {
                r.skip(PoseState::LEN)?;
                rest(r)
            })?;
            ctx.observe_own();
            return Ok(value);
        }
        let (pose, value) = section.parse(|r| Ok((PoseState::read(r)?, rest(r)?)))?;
        pose.correct(ctx, tolerance);
        Ok(value)
    }
}
