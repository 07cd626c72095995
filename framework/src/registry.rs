//! The controller-kind registry: stable names and ids, and factories that build an entity
//! and its controller from serialisable spawn parameters.

use crate::codec::Section;
use crate::controller::{Controller, KindLookup, Legality, WorldView};
use crate::delta::{ByteDelta, DeltaCodec};
use crate::describe::{Describer, Fields};
use crate::entity::Visual;
use crate::error::Error;
use crate::id::{ClientId, KindId};
use crate::params::decode_params;
use crate::pose::BodyState;
use crate::predict::Tolerance;
use rapier3d::prelude::{Collider, RigidBody};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a factory builds: the body, its colliders, its looks, and its controller.
pub struct Blueprint {
    /// The rigid body, already placed.
    pub body: RigidBody,
    /// Its colliders (at least one for anything that collides).
    pub colliders: Vec<Collider>,
    /// How it looks.
    pub visual: Visual,
    /// What it does.
    pub controller: Box<dyn Controller>,
}

impl Blueprint {
    /// A dynamic box: its body at `pos`, a cuboid collider of `half_extents`, drawn in
    /// `color`, driven by `controller`.
    pub fn dynamic_box(
        pos: [f32; 3],
        half_extents: [f32; 3],
        color: [u8; 4],
        controller: impl Controller,
    ) -> Blueprint {
        let [x, y, z] = half_extents;
        Blueprint {
            body: rapier3d::prelude::RigidBodyBuilder::dynamic()
                .translation(rapier3d::glamx::glam::Vec3::from_array(pos))
                .build(),
            colliders: vec![rapier3d::prelude::ColliderBuilder::cuboid(x, y, z).build()],
            visual: Visual {
                shape: crate::entity::Shape::Cuboid { half_extents },
                color,
            },
            controller: Box::new(controller),
        }
    }
}

/// What happens to a client's entities of a kind when that client leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnOwnerLeave {
    /// They are despawned everywhere (a player's body).
    #[default]
    Despawn,
    /// The server takes them over (a grenade already in flight).
    HandToServer,
}

/// What happens to the server's own entities of a kind when the server goes and a client
/// takes the game over (host migration): the old host's player is its own, the world's
/// crates are everyone's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnHostLeave {
    /// They stay, with the new host (the world's bodies).
    #[default]
    Keep,
    /// They are despawned everywhere (the old host's player, its grenades).
    Despawn,
}

/// How the network layer treats a kind. The defaults trust clients with nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KindOptions {
    /// What happens to a leaving client's entities of this kind.
    pub on_owner_leave: OnOwnerLeave,
    /// What happens to the server's entities of this kind when a client takes the game
    /// over from a host that went (they stay by default).
    pub on_host_leave: OnHostLeave,
    /// Whether a client may ask to spawn entities of this kind that it will own.
    pub client_spawnable: bool,
    /// Whether a client that pushes one of the server's entities of this kind (its own
    /// body touches it, moving) may take it over for a while: it then simulates the body
    /// and streams its state, and the body returns to the server once at rest (see
    /// `lanyard-net`'s hand-off). Off by default; a crate wants it, a goal object not. The
    /// controller's [`validate`](crate::Controller::validate) then judges a client's
    /// sections: [`PoseState::plausible`](crate::pose::PoseState::plausible) bounds speed
    /// and jumps.
    pub hand_off: bool,
    /// How urgently a changed entity of this kind is sent when a client's byte budget
    /// cannot carry everything (1 is ordinary; a player other people watch wants more).
    /// The server adds it, scaled by the body's speed, to the entity's accumulated
    /// priority every broadcast its state is not sent.
    pub priority: f32,
    /// Whether its server path decides from the world alone: from its entity, the world it
    /// sees, its own saved state and the inputs handed to it through
    /// [`EntityGroup::send_input`](crate::EntityGroup::send_input) (which are recorded). A
    /// recording then keeps none of the sections its own server path writes: a replay runs
    /// that server path again and loops its section back, as the group did, so a body that
    /// moves costs a recording nothing a tick. **On by default.** An entity whose
    /// controller game code reaches into ([`controller_mut`](crate::EntityGroup::controller_mut))
    /// is noticed: its sections are recorded from then on, and its replay verifies all the
    /// same. Turn it off only for a kind whose server path reads something the group cannot
    /// see change (a channel or a shared value of the game's): every section it writes is
    /// then recorded. Left on for such a kind, its replay diverges at the first such change
    /// (and says at which tick).
    pub decides_alone: bool,
    /// The precision its bodies need on every screen, for a kind whose section starts with
    /// a pose: how far a prediction of the body may be from the authority's state before
    /// the authority sends a correction (see [`crate::predict`]). The default is
    /// [`Tolerance::default`]: 2 mm, 2 mrad, 5 cm/s and 0.05 rad/s. A value that is NaN,
    /// infinite, zero or negative is refused at registration ([`Error::BadTolerance`]).
    pub tolerance: Tolerance,
    /// The version of the state its controller saves (`save_state`). Raise it when that
    /// state's layout changes: a recording made with another version then says so by the
    /// kind's name and both versions when opened, unless the kind supplies a migration
    /// ([`KindRegistry::migrate_state`]). 0 by default.
    pub state_version: u16,
}

impl Default for KindOptions {
    fn default() -> Self {
        KindOptions {
            on_owner_leave: OnOwnerLeave::default(),
            on_host_leave: OnHostLeave::default(),
            client_spawnable: false,
            hand_off: false,
            priority: 1.0,
            decides_alone: true,
            tolerance: Tolerance::default(),
            state_version: 0,
        }
    }
}

/// Turns a controller's saved state of one version into the next one's.
type Migration = Box<dyn Fn(&[u8]) -> Result<Vec<u8>, Error> + Send + Sync>;

type Factory = Box<dyn Fn(KindId, &[u8]) -> Result<Blueprint, Error> + Send + Sync>;
type Judge = Box<dyn Fn(KindId, &[u8], &SpawnClaim<'_>) -> Result<(), SpawnRefusal> + Send + Sync>;

struct Kind {
    name: String,
    options: KindOptions,
    factory: Factory,
    judge: Option<Judge>,
    /// The codec the kind set; `None`: the default (see
    /// [`has_own_codec`](KindRegistry::has_own_codec)).
    delta: Option<Arc<dyn DeltaCodec + Send + Sync>>,
    describe: Option<Box<Describer>>,
    /// Migrations of its saved state, by the version they start from (to the next).
    migrations: BTreeMap<u16, Migration>,
    /// The type its factory takes as parameters (`std::any::type_name`).
    params_type: &'static str,
}

/// What the server knows when it judges a client's request to spawn an entity it will own:
/// who asks, the name it plays under, where the client says the new body is, and the
/// server's world.
#[derive(Clone, Copy)]
pub struct SpawnClaim<'a> {
    /// The client asking.
    pub by: ClientId,
    /// The name the client joined under.
    pub name: &'a str,
    /// The body state the client claims for the new entity.
    pub state: &'a BodyState,
    /// The server's world.
    pub world: &'a WorldView<'a>,
}

/// Why the server refused a client's spawn request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpawnRefusal {
    /// The kind is not registered here.
    UnknownKind,
    /// Clients may not spawn this kind ([`KindOptions::client_spawnable`] is off).
    NotClientSpawnable,
    /// The parameters do not decode as the kind's parameters.
    BadParams,
    /// The kind's spawn judge called the parameters or the claimed state illegal.
    Illegal,
}

/// The registered controller kinds. Build one at start-up, identically on every peer, then
/// share it (in an `Arc`) with every group.
#[derive(Default)]
pub struct KindRegistry {
    kinds: BTreeMap<KindId, Kind>,
}

impl std::fmt::Debug for KindRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.kinds.iter().map(|(id, k)| (id, &k.name)))
            .finish()
    }
}

impl KindRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a kind under `name`, with a factory that builds it from parameters of type
    /// `P`. Returns its stable id.
    ///
    /// Fails if the name is taken, or (very unlikely) if it hashes to the id of another name.
    pub fn register<P, F>(&mut self, name: &str, factory: F) -> Result<KindId, Error>
    where
        P: DeserializeOwned + 'static,
        F: Fn(&P) -> Blueprint + Send + Sync + 'static,
    {
        self.register_with(name, KindOptions::default(), factory)
    }

    /// Registers a kind like [`register`](Self::register), with network options.
    pub fn register_with<P, F>(
        &mut self,
        name: &str,
        options: KindOptions,
        factory: F,
    ) -> Result<KindId, Error>
    where
        P: DeserializeOwned + 'static,
        F: Fn(&P) -> Blueprint + Send + Sync + 'static,
    {
        let id = KindId::of_name(name);
        options
            .tolerance
            .check()
            .map_err(|why| Error::BadTolerance {
                kind: name.to_owned(),
                why,
            })?;
        if let Some(existing) = self.kinds.get(&id) {
            return Err(if existing.name == name {
                Error::DuplicateKind(name.to_owned())
            } else {
                Error::KindIdCollision {
                    existing: existing.name.clone(),
                    new: name.to_owned(),
                }
            });
        }
        let factory: Factory =
            Box::new(move |kind, bytes| Ok(factory(&decode_params::<P>(kind, bytes)?)));
        self.kinds.insert(
            id,
            Kind {
                name: name.to_owned(),
                options,
                factory,
                judge: None,
                delta: None,
                describe: None,
                migrations: BTreeMap::new(),
                params_type: std::any::type_name::<P>(),
            },
        );
        Ok(id)
    }

    /// Sets the judge of clients' spawn requests for the kind registered as `name`: on the
    /// server, before an entity a client asked for is built, `judge` sees its decoded
    /// parameters and the [`SpawnClaim`] and calls them legal or not. A refused request is
    /// counted for the client and the client removes its provisional entity.
    ///
    /// Without a judge, a client-spawnable kind accepts any parameters that decode: give
    /// every such kind a judge unless its parameters cannot hurt (a player's size, a
    /// grenade's speed and thrower all can).
    pub fn judge_spawns<P, F>(&mut self, name: &str, judge: F) -> Result<(), Error>
    where
        P: DeserializeOwned + 'static,
        F: Fn(&P, &SpawnClaim<'_>) -> Legality + Send + Sync + 'static,
    {
        let id = self
            .id_of(name)
            .ok_or_else(|| Error::UnknownKindName(name.to_owned()))?;
        let kind = self.kinds.get_mut(&id).ok_or(Error::UnknownKind(id))?;
        kind.judge = Some(Box::new(move |kind, bytes, claim| {
            let p = decode_params::<P>(kind, bytes).map_err(|_| SpawnRefusal::BadParams)?;
            match judge(&p, claim) {
                Legality::Legal => Ok(()),
                Legality::Illegal => Err(SpawnRefusal::Illegal),
            }
        }));
        Ok(())
    }

    /// Whether any kind allows hand-off ([`KindOptions::hand_off`]): a network layer looks
    /// for nothing to take over when none does.
    pub fn any_hand_off(&self) -> bool {
        self.kinds.values().any(|k| k.options.hand_off)
    }

    /// Turns [`KindOptions::hand_off`] on or off for the kind registered as `name`, after
    /// its registration (a game that lets a setting decide). Every peer of a game must
    /// agree: a claim on a kind the server forbids hand-off for is refused.
    pub fn set_hand_off(&mut self, name: &str, on: bool) -> Result<(), Error> {
        let id = self
            .id_of(name)
            .ok_or_else(|| Error::UnknownKindName(name.to_owned()))?;
        let kind = self.kinds.get_mut(&id).ok_or(Error::UnknownKind(id))?;
        kind.options.hand_off = on;
        Ok(())
    }

    /// Turns [`KindOptions::decides_alone`] on or off for the kind registered as `name`,
    /// after its registration. Off, a recording keeps every section its server path writes
    /// (a test that tampers with recorded sections, a kind fed from outside the group).
    pub fn set_decides_alone(&mut self, name: &str, on: bool) -> Result<(), Error> {
        let id = self
            .id_of(name)
            .ok_or_else(|| Error::UnknownKindName(name.to_owned()))?;
        let kind = self.kinds.get_mut(&id).ok_or(Error::UnknownKind(id))?;
        kind.options.decides_alone = on;
        Ok(())
    }

    /// Sets how sections of the kind registered as `name` travel as deltas against a
    /// baseline (see [`crate::delta`]), in place of the default. A kind needs none: by
    /// default a section that starts with a [`PoseState`](crate::pose::PoseState) is
    /// predicted and travels as a [`PoseDelta`](crate::delta::PoseDelta) against its
    /// prediction (see [`crate::predict`]), and any other as a [`ByteDelta`]. Set one for a
    /// kind that knows its own bytes better. A codec's precision
    /// ([`DeltaCodec::tolerance`]) is checked as a kind's is at registration.
    pub fn set_delta_codec(
        &mut self,
        name: &str,
        codec: impl DeltaCodec + Send + Sync + 'static,
    ) -> Result<(), Error> {
        let id = self
            .id_of(name)
            .ok_or_else(|| Error::UnknownKindName(name.to_owned()))?;
        if let Some(Err(why)) = codec.tolerance().map(|t| t.check()) {
            return Err(Error::BadTolerance {
                kind: name.to_owned(),
                why,
            });
        }
        let kind = self.kinds.get_mut(&id).ok_or(Error::UnknownKind(id))?;
        kind.delta = Some(Arc::new(codec));
        Ok(())
    }

    /// Sets how sections of the kind registered as `name` read as named fields, for the
    /// reports of a decision replay: a server path that decided otherwise is reported by
    /// the fields that changed, with both values, not only by its bytes. For a section
    /// [`PoseState::write_with`](crate::pose::PoseState::write_with) wrote, pass
    /// `PoseState::fields_with::<E>` with its extra type.
    pub fn describe_sections<F>(&mut self, name: &str, describe: F) -> Result<(), Error>
    where
        F: Fn(&Section<'_>) -> Result<Fields, Error> + Send + Sync + 'static,
    {
        let id = self
            .id_of(name)
            .ok_or_else(|| Error::UnknownKindName(name.to_owned()))?;
        let kind = self.kinds.get_mut(&id).ok_or(Error::UnknownKind(id))?;
        kind.describe = Some(Box::new(describe));
        Ok(())
    }

    /// A section of `kind` as named fields, if the kind describes its sections (see
    /// [`describe_sections`](Self::describe_sections)).
    pub fn describe_section(
        &self,
        kind: KindId,
        section: &Section<'_>,
    ) -> Option<Result<Fields, Error>> {
        let describe = self.kinds.get(&kind)?.describe.as_ref()?;
        Some(describe(section))
    }

    /// Sets how the saved state of the kind registered as `name` moves from version `from`
    /// to `from + 1` (see [`KindOptions::state_version`]): a recording made with an older
    /// version is brought up to this one, step by step, as it is opened.
    pub fn migrate_state<F>(&mut self, name: &str, from: u16, migrate: F) -> Result<(), Error>
    where
        F: Fn(&[u8]) -> Result<Vec<u8>, Error> + Send + Sync + 'static,
    {
        let id = self
            .id_of(name)
            .ok_or_else(|| Error::UnknownKindName(name.to_owned()))?;
        let kind = self.kinds.get_mut(&id).ok_or(Error::UnknownKind(id))?;
        kind.migrations.insert(from, Box::new(migrate));
        Ok(())
    }

    /// Whether a saved state of `kind` at version `from` can be brought to this build's
    /// version: it is that version, or a migration covers every step. An error naming the
    /// kind and both versions if not.
    pub(crate) fn check_state_version(&self, kind: KindId, from: u16) -> Result<(), Error> {
        let Some(k) = self.kinds.get(&kind) else {
            return Ok(());
        };
        let current = k.options.state_version;
        if from == current
            || (from < current && (from..current).all(|v| k.migrations.contains_key(&v)))
        {
            return Ok(());
        }
        Err(Error::KindStateVersion {
            kind: k.name.clone(),
            recorded: from,
            current,
        })
    }

    /// A saved state of `kind` at version `from`, brought to this build's version.
    pub(crate) fn migrate(&self, kind: KindId, from: u16, state: &[u8]) -> Result<Vec<u8>, Error> {
        self.check_state_version(kind, from)?;
        let Some(k) = self.kinds.get(&kind) else {
            return Ok(state.to_vec());
        };
        let mut state = state.to_vec();
        for v in from..k.options.state_version {
            if let Some(m) = k.migrations.get(&v) {
                state = m(&state).map_err(|e| Error::KindStateMigration {
                    kind: k.name.clone(),
                    from: v,
                    reason: e.to_string(),
                })?;
            }
        }
        Ok(state)
    }

    /// The delta codec a kind set ([`set_delta_codec`](Self::set_delta_codec)), or else
    /// [`ByteDelta`], what a section that does not start with a pose travels as. (A kind
    /// with no codec of its own whose sections start with a pose is predicted: the network
    /// layer asks the group, [`EntityGroup::pose_codec`](crate::EntityGroup::pose_codec).)
    pub fn delta_codec(&self, id: KindId) -> &dyn DeltaCodec {
        match self.kinds.get(&id).and_then(|k| k.delta.as_deref()) {
            Some(codec) => codec,
            None => &ByteDelta,
        }
    }

    /// Whether a kind set a delta codec of its own. One that did not, and whose sections
    /// start with a pose, is predicted by default.
    pub fn has_own_codec(&self, id: KindId) -> bool {
        self.kinds.get(&id).is_some_and(|k| k.delta.is_some())
    }

    /// The precision a kind's bodies need ([`KindOptions::tolerance`]); the default for a
    /// kind not registered.
    pub fn tolerance(&self, id: KindId) -> Tolerance {
        self.kinds
            .get(&id)
            .map_or_else(Tolerance::default, |k| k.options.tolerance)
    }

    /// Judges a client's request to spawn `kind` with encoded `params`: the kind must be
    /// registered and client-spawnable, the parameters must decode, and the kind's judge
    /// (if it has one, see [`judge_spawns`](Self::judge_spawns)) must call them legal.
    pub fn judge_spawn(
        &self,
        kind: KindId,
        params: &[u8],
        claim: &SpawnClaim<'_>,
    ) -> Result<(), SpawnRefusal> {
        let k = self.kinds.get(&kind).ok_or(SpawnRefusal::UnknownKind)?;
        if !k.options.client_spawnable {
            return Err(SpawnRefusal::NotClientSpawnable);
        }
        match &k.judge {
            Some(judge) => judge(kind, params, claim),
            None => (k.factory)(kind, params)
                .map(|_| ())
                .map_err(|_| SpawnRefusal::BadParams),
        }
    }

    /// The id of the kind registered under `name`.
    pub fn id_of(&self, name: &str) -> Option<KindId> {
        let id = KindId::of_name(name);
        self.kinds.get(&id).filter(|k| k.name == name).map(|_| id)
    }

    /// The name a kind was registered under.
    pub fn name_of(&self, id: KindId) -> Option<&str> {
        self.kinds.get(&id).map(|k| k.name.as_str())
    }

    /// The network options of a kind.
    pub fn options(&self, id: KindId) -> Option<KindOptions> {
        self.kinds.get(&id).map(|k| k.options)
    }

    /// Whether a kind's server path decides from the world alone
    /// ([`KindOptions::decides_alone`]); false for a kind not registered.
    pub fn decides_alone(&self, id: KindId) -> bool {
        self.kinds.get(&id).is_some_and(|k| k.options.decides_alone)
    }

    /// Every registered kind, by id.
    pub fn kinds(&self) -> impl Iterator<Item = (KindId, &str)> {
        self.kinds.iter().map(|(id, k)| (*id, k.name.as_str()))
    }

    /// Builds an entity of `kind` from encoded parameters.
    pub fn build(&self, kind: KindId, params: &[u8]) -> Result<Blueprint, Error> {
        let k = self.kinds.get(&kind).ok_or(Error::UnknownKind(kind))?;
        (k.factory)(kind, params).map_err(|e| e.naming_kind(&k.name))
    }
}

impl KindLookup for KindRegistry {
    fn kind_id(&self, name: &str) -> Option<KindId> {
        self.id_of(name)
    }

    fn check_params(&self, kind: KindId, given: &'static str) -> Result<(), Error> {
        let Some(k) = self.kinds.get(&kind) else {
            return Ok(());
        };
        // A reference to the parameters encodes as they do.
        let bare = |t: &'static str| t.trim_start_matches('&');
        if bare(given) == bare(k.params_type) {
            return Ok(());
        }
        Err(Error::ParamsType {
            kind: k.name.clone(),
            given: given.to_owned(),
            expected: k.params_type.to_owned(),
        })
    }
}
