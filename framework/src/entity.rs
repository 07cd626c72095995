//! Entities: a rigid body, its colliders, how it looks, and who owns it.

use crate::id::{EntityId, KindId, NetId, Owner};
use rapier3d::prelude::{RigidBody, RigidBodyHandle};
use serde::{Deserialize, Serialize};

/// The shape a renderer draws for an entity. The server never needs it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Shape {
    /// A box with these half extents.
    Cuboid {
        /// Half the size along x, y and z.
        half_extents: [f32; 3],
    },
    /// A sphere.
    Ball {
        /// Its radius.
        radius: f32,
    },
    /// A capsule along the local y axis.
    Capsule {
        /// Half the length of the cylindrical part.
        half_height: f32,
        /// The radius of the caps and the cylinder.
        radius: f32,
    },
}

/// How an entity looks: a shape and an sRGB colour with alpha.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Visual {
    /// What to draw.
    pub shape: Shape,
    /// Red, green, blue, alpha.
    pub color: [u8; 4],
}

/// One thing in the world.
///
/// The rigid body and colliders live in the group's physics world; the entity holds their
/// handle. An entity is only ever created by its group, together with its controller.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entity {
    pub(crate) id: EntityId,
    pub(crate) net_id: NetId,
    pub(crate) owner: Owner,
    pub(crate) kind: KindId,
    pub(crate) body: RigidBodyHandle,
    /// How many times it changed hands (see [`Entity::authority_seq`]). Not in snapshots
    /// (a restored world counts from 0; a claim naming a newer count is counted on from).
    #[serde(skip)]
    pub(crate) authority_seq: u16,
    /// The tick it last changed hands (or appeared); not in snapshots (0 when restored).
    #[serde(skip)]
    pub(crate) owner_since: u64,
    /// How it looks. Its controller may change it (a crate that glows when hit).
    pub visual: Visual,
}

impl Entity {
    /// The local generational id.
    pub fn id(&self) -> EntityId {
        self.id
    }

    /// The id every peer uses.
    pub fn net_id(&self) -> NetId {
        self.net_id
    }

    /// Who runs its server path.
    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// Its authority's sequence number: how many times it changed hands, wrapping. On a
    /// server it counts every change; a client takes the server's count with each change
    /// it hears of. A claim on a body (hand-off) names the number its claimer saw, and a
    /// claim that names an older one than the server's is stale: the body changed hands
    /// since.
    pub fn authority_seq(&self) -> u16 {
        self.authority_seq
    }

    /// The tick (of its group) since which its owner has had it: when it last changed
    /// hands, or appeared.
    pub fn owner_since(&self) -> u64 {
        self.owner_since
    }

    /// Its controller kind.
    pub fn kind(&self) -> KindId {
        self.kind
    }

    /// The handle of its rigid body in the group's physics world.
    pub fn body_handle(&self) -> RigidBodyHandle {
        self.body
    }
}

/// A shared view of an entity and its body, as a server path and readers see it.
#[derive(Debug, Clone, Copy)]
pub struct EntityRef<'a> {
    pub(crate) entity: &'a Entity,
    pub(crate) body: &'a RigidBody,
}

impl<'a> EntityRef<'a> {
    /// The entity's metadata.
    pub fn entity(&self) -> &'a Entity {
        self.entity
    }

    /// Its rigid body.
    pub fn body(&self) -> &'a RigidBody {
        self.body
    }
}

impl std::ops::Deref for EntityRef<'_> {
    type Target = Entity;

    fn deref(&self) -> &Entity {
        self.entity
    }
}

/// One place in a group's entity table: an entity (or none, when free), the generation that
/// tells a reused place from its earlier occupant, the spawn parameters, and the section
/// queued for this frame's client path.
pub(crate) struct Slot {
    pub(crate) generation: u32,
    pub(crate) entity: Option<Entity>,
    /// The encoded spawn parameters, to rebuild the controller on restore and to tell late
    /// joiners how to build the entity.
    pub(crate) params: Vec<u8>,
    /// The newest section received this frame.
    pub(crate) pending: Option<Pending>,
    /// Whether game code reached into its controller from outside the group's paths
    /// ([`controller_mut`](crate::EntityGroup::controller_mut)): its server path may then
    /// decide from what no recording holds, so a recording keeps its own sections from then
    /// on, and a replay takes them instead of writing them again.
    pub(crate) outside: bool,
    /// Whether its controller's motion is the default, which does nothing: found the first
    /// frame its client path runs, and not asked again.
    pub(crate) still: bool,
}

/// Where a section queued for a client path is: a range of the group's inbox, or, for the
/// group's own section looped back (`own`), of the packet its server paths just wrote
/// (not copied: it is still there when the client paths run).
#[derive(Clone, Copy)]
pub(crate) struct Pending {
    pub(crate) start: u32,
    pub(crate) len: u32,
    pub(crate) own: bool,
}

impl Pending {
    /// The group's own section, `len` bytes at `start` of its packet.
    pub(crate) fn own(start: u32, len: u32) -> Self {
        Pending {
            start,
            len,
            own: true,
        }
    }
}
