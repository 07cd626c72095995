//! The controller-kind registry: stable names and ids, and factories that build an entity
//! and its controller from serialisable spawn parameters.

use crate::controller::Controller;
use crate::entity::Visual;
use crate::{Error, KindId};
use rapier3d::prelude::{Collider, RigidBody};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;

/// Spawn parameters larger than this are refused when decoding.
pub const MAX_PARAMS_LEN: usize = 16 * 1024;

fn config() -> bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Varint,
    bincode::config::Limit<MAX_PARAMS_LEN>,
> {
    bincode::config::standard().with_limit::<MAX_PARAMS_LEN>()
}

/// Encodes spawn parameters the way every peer decodes them.
pub fn encode_params<P: Serialize>(kind: KindId, params: &P) -> Result<Vec<u8>, Error> {
    bincode::serde::encode_to_vec(params, config()).map_err(|e| Error::BadSpawnParams {
        kind,
        reason: e.to_string(),
    })
}

/// Decodes spawn parameters encoded by [`encode_params`] (refusing oversized input and
/// trailing bytes).
pub fn decode_params<P: DeserializeOwned>(kind: KindId, bytes: &[u8]) -> Result<P, Error> {
    if bytes.len() > MAX_PARAMS_LEN {
        return Err(Error::BadSpawnParams {
            kind,
            reason: format!("{} bytes is over the limit", bytes.len()),
        });
    }
    match bincode::serde::decode_from_slice::<P, _>(bytes, config()) {
        Ok((p, used)) if used == bytes.len() => Ok(p),
        Ok((_, used)) => Err(Error::BadSpawnParams {
            kind,
            reason: format!("{} trailing bytes", bytes.len() - used),
        }),
        Err(e) => Err(Error::BadSpawnParams {
            kind,
            reason: e.to_string(),
        }),
    }
}

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

/// What happens to a client's entities of a kind when that client leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnOwnerLeave {
    /// They are despawned everywhere (a player's body).
    #[default]
    Despawn,
    /// The server takes them over (a grenade already in flight).
    HandToServer,
}

/// How the network layer treats a kind. The defaults trust clients with nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KindOptions {
    /// What happens to a leaving client's entities of this kind.
    pub on_owner_leave: OnOwnerLeave,
    /// Whether a client may ask to spawn entities of this kind that it will own.
    pub client_spawnable: bool,
}

type Factory = Box<dyn Fn(KindId, &[u8]) -> Result<Blueprint, Error> + Send + Sync>;

struct Kind {
    name: String,
    options: KindOptions,
    factory: Factory,
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
            },
        );
        Ok(id)
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

    /// Every registered kind, by id.
    pub fn kinds(&self) -> impl Iterator<Item = (KindId, &str)> {
        self.kinds.iter().map(|(id, k)| (*id, k.name.as_str()))
    }

    /// Builds an entity of `kind` from encoded parameters.
    pub fn build(&self, kind: KindId, params: &[u8]) -> Result<Blueprint, Error> {
        let k = self.kinds.get(&kind).ok_or(Error::UnknownKind(kind))?;
        (k.factory)(kind, params)
    }
}
