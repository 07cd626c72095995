//! A replay test that catches a changed constant. A world is recorded with a kind that picks
//! a new spin every `PERIOD` ticks, then replayed headless twice: with the same code it
//! matches bit for bit; with `PERIOD` changed, as a new build of the game would change it,
//! the replay names the first tick that differs and the decision that changed. A game's
//! test does the same with a recording kept beside it, so a change to what a kind does
//! cannot land unnoticed.
//!
//! `cargo run --release -p lanyard-core --example replay_test`

use lanyard::pose::PoseState;
use lanyard::prelude::*;
use lanyard::replay::Replay;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A constant of the game's code (a static here, so that one process can run two builds).
static PERIOD: AtomicU64 = AtomicU64::new(30);

/// Picks a new spin from its seeded stream every `PERIOD` ticks.
#[derive(Serialize, Deserialize)]
struct Spinner {
    rng: SeededRng,
    spin: f32,
}

impl PoseKind for Spinner {
    type Decision = f32;

    fn decide(&mut self, _me: EntityRef<'_>, world: &WorldView<'_>) -> f32 {
        if world.tick() % PERIOD.load(Ordering::Relaxed) == 0 {
            self.spin = self.rng.range_f32(-3.0, 3.0);
        }
        self.spin
    }

    fn apply(&mut self, spin: Option<f32>, ctx: &mut ClientContext<'_>) {
        self.spin = spin.unwrap_or(self.spin);
        ctx.set_angvel(Vec3::new(0.0, self.spin, 0.0));
    }
}

/// The kinds, as the game registers them.
fn kinds() -> Result<Arc<KindRegistry>, lanyard::Error> {
    let mut kinds = KindRegistry::new();
    kinds.register("spinner", |seed: &u64| {
        let rng = SeededRng::new(*seed);
        let spinner = Spinner { rng, spin: 0.0 };
        Blueprint::dynamic_box([0.0, 0.5, 0.0], [0.5; 3], [200; 4], Posed(spinner))
    })?;
    // Divergence reports name the section's fields: "extra was 1.27, now 2.54".
    kinds.describe_sections("spinner", PoseState::fields_with::<f32>)?;
    Ok(Arc::new(kinds))
}

fn main() -> Result<(), lanyard::Error> {
    // Record four seconds of a world with PERIOD at 30.
    let mut world = EntityGroup::new(kinds()?, GroupConfig::default());
    world.spawn("spinner", &7u64, Owner::Server)?;
    world.start_recording("four spinning seconds", "example")?;
    for _ in 0..240 {
        world.frame();
    }
    let recording = world.stop_recording()?;
    println!("recorded 240 ticks in {} bytes", recording.len());

    // The same code: every tick's hash matches.
    let mut same = Replay::open(&recording, kinds()?)?;
    match same.verify(|_, _| {})? {
        None => println!("replayed with the same code: bit for bit"),
        Some(d) => panic!("the same code diverged: {d}"),
    }

    // A changed constant: the replay runs the kind's server path again and catches it.
    PERIOD.store(31, Ordering::Relaxed);
    let mut changed = Replay::open(&recording, kinds()?)?;
    changed.rerun_decisions(true);
    let divergence = changed
        .verify(|_, _| {})?
        .expect("a changed PERIOD is caught");
    println!("replayed with PERIOD at 31: {divergence}");
    Ok(())
}
