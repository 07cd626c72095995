//! Shared scenes and helpers for Lanyard's cross-crate tests.
//!
//! The tests themselves live in `tests/tests/`. This library builds the scenes they share,
//! so each test reads as "build this, do that, expect this".
#![warn(missing_docs)]

use lanyard::demo::{self, BallParams, CrateParams, MoverParams};
use lanyard::prelude::*;
use lanyard::rapier3d::prelude::ColliderBuilder;
use std::sync::Arc;

/// A registry with the demo kinds.
pub fn demo_registry() -> Arc<KindRegistry> {
    let mut r = KindRegistry::new();
    demo::register(&mut r).expect("demo kinds register once");
    Arc::new(r)
}

/// A walled floor: a 40 m square pit with 2 m walls.
pub fn add_pit(group: &mut EntityGroup) {
    group.add_scenery(
        ColliderBuilder::cuboid(20.0, 0.5, 20.0).translation(Vec3::new(0.0, -0.5, 0.0)),
    );
    for (x, z, hx, hz) in [
        (20.5, 0.0, 0.5, 21.0),
        (-20.5, 0.0, 0.5, 21.0),
        (0.0, 20.5, 21.0, 0.5),
        (0.0, -20.5, 21.0, 0.5),
    ] {
        group.add_scenery(ColliderBuilder::cuboid(hx, 1.0, hz).translation(Vec3::new(x, 1.0, z)));
    }
}

/// The determinism scene: `n` bodies in a pit, a mix of crates, balls and movers (every
/// tenth body is a mover whose input stream is seeded from `seed` and its index), dropped
/// from a loose grid so they pile up and collide.
pub fn mixed_scene(n: usize, seed: u64) -> EntityGroup {
    let mut g = EntityGroup::new(demo_registry(), GroupConfig::default());
    add_pit(&mut g);
    for i in 0..n {
        let (gx, gy, gz) = ((i % 10) as f32, (i / 100) as f32, ((i / 10) % 10) as f32);
        let pos = [gx * 3.0 - 13.5 + 0.1 * gy, 1.0 + gy * 1.6, gz * 3.0 - 13.5];
        let r = match i % 10 {
            0 => g.spawn(
                demo::MOVER,
                &MoverParams {
                    pos,
                    half_extents: [0.5, 0.5, 0.5],
                    seed: seed.wrapping_mul(1_000_003).wrapping_add(i as u64),
                    speed: 4.0,
                    period: 45,
                },
                Owner::Server,
            ),
            1 | 4 | 7 => g.spawn(
                demo::BALL,
                &BallParams {
                    pos,
                    radius: 0.4,
                    restitution: 0.5,
                    color: [200, 200, 60, 255],
                },
                Owner::Server,
            ),
            _ => g.spawn(
                demo::CRATE,
                &CrateParams {
                    pos,
                    half_extents: [0.45, 0.45, 0.45],
                    color: [150, 100, 60, 255],
                    can_sleep: true,
                },
                Owner::Server,
            ),
        };
        r.expect("demo kinds spawn");
    }
    g
}

/// Steps `group` `ticks` frames and returns the state hash after each.
pub fn run_hashes(group: &mut EntityGroup, ticks: usize) -> Vec<u64> {
    (0..ticks)
        .map(|_| {
            group.frame();
            group.state_hash()
        })
        .collect()
}
