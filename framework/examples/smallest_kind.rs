//! The smallest kind, in one group: a box that carries its pose and picks a new spin from a
//! seeded stream every half second. No network: the group's frame runs the server path,
//! loops its section back through the client path, and steps the physics.
//!
//! `cargo run --release -p lanyard-core --example smallest_kind`

use lanyard::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What a spinner keeps: its seeded stream and its spin. `Posed` saves these fields in
/// snapshots and recordings, and carries the body's pose beside the decision.
#[derive(Serialize, Deserialize)]
struct Spinner {
    rng: SeededRng,
    spin: f32,
}

impl PoseKind for Spinner {
    /// What the server path decides and the section carries: the spin, in rad/s.
    type Decision = f32;

    // The server path: reads the world, decides. It changes nothing.
    fn decide(&mut self, _me: EntityRef<'_>, world: &WorldView<'_>) -> f32 {
        if world.tick() % 30 == 0 {
            self.spin = self.rng.range_f32(-3.0, 3.0);
        }
        self.spin
    }

    // The client path, on every peer (the server's own loopback too): applies it, or spins
    // on when no section came.
    fn apply(&mut self, spin: Option<f32>, ctx: &mut ClientContext<'_>) {
        self.spin = spin.unwrap_or(self.spin);
        ctx.set_angvel(Vec3::new(0.0, self.spin, 0.0));
    }
}

fn main() -> Result<(), lanyard::Error> {
    let mut kinds = KindRegistry::new();
    kinds.register("spinner", |seed: &u64| {
        let spinner = Spinner {
            rng: SeededRng::new(*seed),
            spin: 0.0,
        };
        Blueprint::dynamic_box([0.0, 0.5, 0.0], [0.5; 3], [200; 4], Posed(spinner))
    })?;
    let floating = GroupConfig {
        gravity: Vec3::ZERO,
        ..GroupConfig::default()
    };
    let mut world = EntityGroup::new(Arc::new(kinds), floating);
    let id = world.spawn("spinner", &7u64, Owner::Server)?;
    for second in 0..3 {
        for _ in 0..60 {
            world.frame();
        }
        let spin = world.get(id).expect("it is there").body().angvel().y;
        println!("after {} s: spinning at {spin:+.2} rad/s", second + 1);
    }
    // The same seed and the same code give the same world, bit for bit.
    let again = EntityGroup::restore(world.registry().clone(), &world.snapshot()?)?;
    assert_eq!(again.state_hash(), world.state_hash());
    println!(
        "state hash {:016x}, and a snapshot restores it",
        world.state_hash()
    );
    Ok(())
}
