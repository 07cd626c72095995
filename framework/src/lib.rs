//! Lanyard: entities, controllers and a deterministic physics world for networked LAN
//! physics games.
//!
//! Every [`Entity`] (a rapier3d rigid body, its colliders, and how it looks) has exactly one
//! [`Controller`], which does everything the entity does, in two paths:
//!
//! * the **server path** reads the entity and writes what it decided into the entity's
//!   section of the outgoing packet;
//! * the **client path** applies a section if one came, or simulates the entity without one.
//!
//! An [`EntityGroup`] owns the entities, their controllers and the physics world. Its
//! [`frame`](EntityGroup::frame) runs the server paths into one packet, feeds that packet
//! back through decode and the client paths (self-loopback: the server is its own client),
//! and steps physics with a fixed timestep. The pass order is defined once, in
//! [`pipeline`]: the network layer (`lanyard-net`) and [`replay::Replay`] run the same frame
//! through a [`FrameDriver`] that supplies what comes from outside.
//!
//! # Invariants
//!
//! * **No I/O, no clock, no unseeded randomness.** Time is the fixed `dt` and the tick
//!   count; randomness comes from a [`SeededRng`] a controller carries as state.
//! * **Determinism.** rapier3d runs with `enhanced-determinism`, and entities are visited in
//!   network-id order, so the same world and the same sections give bit-identical state
//!   ([`EntityGroup::state_hash`]); [`EntityGroup::snapshot`] and
//!   [`EntityGroup::restore`] continue a run exactly.
//! * **Bad input never hurts.** Decoding a packet ([`codec::PacketReader`]) borrows from the
//!   input, checks every length before using it, never panics and never allocates more
//!   than the input justifies. A bad section is skipped and counted; the sections after it
//!   still apply as long as the framing is intact.
//!
//! # Writing a controller
//!
//! ```
//! use lanyard::codec::{Section, SectionWriter};
//! use lanyard::prelude::*;
//!
//! /// Pushes its entity up at a speed its server path decides.
//! struct Lift { speed: f32 }
//!
//! impl Controller for Lift {
//!     fn server_update(&mut self, _me: EntityRef<'_>, _world: &WorldView<'_>, out: &mut SectionWriter<'_>) {
//!         out.f32(self.speed);
//!     }
//!     fn client_update(&mut self, _me: &mut Entity, section: Option<Section<'_>>, ctx: &mut ClientContext<'_>) -> Result<(), Error> {
//!         if let Some(s) = section {
//!             let mut r = s.reader();
//!             let speed = r.f32()?;
//!             r.finish()?;
//!             ctx.set_linvel(Vec3::new(0.0, speed, 0.0));
//!         }
//!         Ok(())
//!     }
//! }
//! ```
//!
//! The `lanyard-demo` crate (in `framework/demo/`) has complete kinds with factories, and the
//! book (`docs/`) a walkthrough, from the smallest kind to prediction and hand-off.
#![warn(missing_docs)]

pub mod codec;
mod config;
mod controller;
pub mod delta;
pub mod describe;
mod entity;
mod error;
mod group;
mod hash;
mod id;
pub mod interp;
mod params;
pub mod pipeline;
pub mod pose;
mod posed;
pub mod predict;
pub mod record;
mod registry;
pub mod replay;
mod rng;
pub mod state;

pub use config::{GroupConfig, Role};
pub use controller::{
    ClientContext, Command, Controller, Effect, Legality, SpawnRequest, SpawnTicket, WorldView,
};
pub use entity::{Entity, EntityRef, Shape, Visual};
pub use error::{CodecError, Error, RecordError};
pub use group::{
    Change, Counters, EntityGroup, Fault, Hook, PoseCodec, ReceiveReport, Replica,
    SNAPSHOT_VERSION, SectionError, Verdict,
};
pub use hash::StateHasher;
pub use id::{ClientId, EntityId, KindId, NetId, Owner};
pub use params::{MAX_PARAMS_LEN, decode_params, encode_params};
pub use pipeline::{FrameDriver, FramePass, FrameReport};
pub use posed::{PoseKind, Posed, SectionClaim};
pub use registry::{
    Blueprint, KindOptions, KindRegistry, OnHostLeave, OnOwnerLeave, SpawnClaim, SpawnRefusal,
};
pub use rng::SeededRng;

/// The physics engine Lanyard is built on, re-exported so games use the same version.
pub use rapier3d;
/// The math library of rapier3d's public API.
pub use rapier3d::glamx::glam;
pub use rapier3d::glamx::glam::{Quat, Vec3};
/// A rigid-body pose (rotation and translation), as rapier3d uses it.
pub use rapier3d::math::Pose;

/// The names a controller author needs, in one import.
pub mod prelude {
    pub use crate::codec::{Section, SectionReader, SectionWriter};
    pub use crate::predict::Steer;
    pub use crate::{
        Blueprint, ClientContext, ClientId, CodecError, Controller, Entity, EntityGroup, EntityId,
        EntityRef, Error, GroupConfig, KindRegistry, Legality, NetId, Owner, PoseKind, Posed, Quat,
        Role, SectionClaim, SeededRng, Shape, Vec3, Visual, WorldView,
    };
    pub use rapier3d::prelude::{ColliderBuilder, RigidBodyBuilder};
}
