//! Bodies that never rest: asteroids around a static planetoid, in a world with no gravity,
//! each pulled toward the planetoid's centre by its own controller. The scene of the
//! asteroid benchmark (`cargo bench -p lanyard-tests --bench asteroids`).

use super::{CORRECTION_TOLERANCE, dynamic_at};
use lanyard::codec::{Section, SectionWriter};
use lanyard::delta::PoseDelta;
use lanyard::pose::PoseState;
use lanyard::prelude::*;
use rapier3d::prelude::Collider;
use serde::{Deserialize, Serialize};

/// The kind name of an [`Asteroid`].
pub const ASTEROID: &str = "demo.asteroid";

/// The planetoid's radius, metres.
pub const PLANETOID_RADIUS: f32 = 10.0;

/// The strength of the planetoid's pull (its mass times the gravitational constant, m³/s²):
/// a circular orbit 25 m out takes 8 m/s.
pub const PULL: f32 = 1600.0;

/// Spawn parameters of an [`ASTEROID`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AsteroidParams {
    /// Where its centre starts.
    pub pos: [f32; 3],
    /// Its starting velocity.
    pub vel: [f32; 3],
    /// Its starting spin.
    pub spin: [f32; 3],
    /// Its radius.
    pub radius: f32,
}

/// An asteroid: the authority writes its pose, everyone else is corrected to it when they
/// drift; every peer pulls it toward the planetoid each tick, so a client's own simulation
/// follows the server's between states.
#[derive(Debug, Default)]
pub struct Asteroid;

impl Controller for Asteroid {
    fn server_update(
        &mut self,
        me: EntityRef<'_>,
        _world: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    ) {
        PoseState::of(me.body()).write(out);
    }

    fn client_update(
        &mut self,
        _me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        if let Some(s) = section {
            s.parse(PoseState::read)?.correct(ctx, CORRECTION_TOLERANCE);
        }
        let p = ctx.body().translation();
        let r = p.length().max(1.0);
        let v = ctx.body().linvel();
        ctx.set_linvel(v - p * (PULL * ctx.dt() / (r * r * r)));
        Ok(())
    }
}

/// The planetoid: scenery, which every peer adds to its own group.
pub fn planetoid() -> Collider {
    ColliderBuilder::ball(PLANETOID_RADIUS)
        .restitution(1.0)
        .friction(0.0)
        .build()
}

/// `n` asteroids in a shell 16 to 40 m from the planetoid's centre, each on a roughly
/// circular orbit in a plane of its own (so they cross, and now and then collide), drawn
/// from `seed`.
pub fn field(n: usize, seed: u64) -> Vec<AsteroidParams> {
    let mut rng = SeededRng::new(seed);
    (0..n)
        .map(|_| {
            let dir = loop {
                let v = Vec3::new(
                    rng.range_f32(-1.0, 1.0),
                    rng.range_f32(-1.0, 1.0),
                    rng.range_f32(-1.0, 1.0),
                );
                if (0.1..=1.0).contains(&v.length_squared()) {
                    break v.normalize();
                }
            };
            let r = rng.range_f32(16.0, 40.0);
            let pos = dir * r;
            // A direction across the radius, for the orbit.
            let side = dir.cross(Vec3::new(
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
            ));
            let tangent = side.normalize_or(dir.any_orthonormal_vector());
            let speed = (PULL / r).sqrt() * rng.range_f32(0.85, 1.1);
            let spin = Vec3::new(
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
            );
            AsteroidParams {
                pos: pos.to_array(),
                vel: (tangent * speed).to_array(),
                spin: spin.to_array(),
                radius: rng.range_f32(0.4, 1.2),
            }
        })
        .collect()
}

/// Registers [`ASTEROID`].
pub fn register(registry: &mut KindRegistry) -> Result<(), Error> {
    registry.register(ASTEROID, |p: &AsteroidParams| Blueprint {
        body: dynamic_at(p.pos)
            .linvel(Vec3::from_array(p.vel))
            .angvel(Vec3::from_array(p.spin))
            .can_sleep(false)
            .build(),
        colliders: vec![
            ColliderBuilder::ball(p.radius)
                .restitution(1.0)
                .friction(0.0)
                .build(),
        ],
        visual: Visual {
            shape: Shape::Ball { radius: p.radius },
            color: [150, 140, 130, 255],
        },
        controller: Box::new(Asteroid),
    })?;
    registry.set_delta_codec(ASTEROID, PoseDelta::default())
}
