//! A recording is small with nothing to opt into: every kind decides alone by default, so
//! a recording keeps none of the sections its own server paths write; an entity whose
//! controller game code changes through `controller_mut` has its sections recorded from
//! then on, and the replay verifies bit for bit all the same.

use lanyard::prelude::*;
use lanyard::record::{Op, Recording};
use lanyard::replay::Replay;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A body that thrusts up as hard as game code says.
#[derive(Serialize, Deserialize)]
struct Thruster {
    thrust: f32,
}

impl PoseKind for Thruster {
    type Decision = f32;

    fn decide(&mut self, _me: EntityRef<'_>, _world: &WorldView<'_>) -> f32 {
        self.thrust
    }

    fn apply(&mut self, thrust: Option<f32>, ctx: &mut ClientContext<'_>) {
        self.thrust = thrust.unwrap_or(self.thrust);
        ctx.add_force(Vec3::new(0.0, self.thrust, 0.0));
    }
}

fn kinds() -> Arc<KindRegistry> {
    let mut r = KindRegistry::new();
    r.register("test.thruster", |x: &f32| {
        Blueprint::dynamic_box(
            [*x, 3.0, 0.0],
            [0.5; 3],
            [9; 4],
            Posed(Thruster { thrust: 0.0 }),
        )
    })
    .unwrap();
    Arc::new(r)
}

/// The network ids of the entities whose sections `ops` hold, tick by tick.
fn recorded_sections(rec: &Recording) -> Vec<(u64, NetId)> {
    rec.ticks
        .iter()
        .flat_map(|t| {
            t.ops.iter().filter_map(move |op| match op {
                Op::Section { net, .. } => Some((t.tick, *net)),
                Op::Repeat { first, .. } => Some((t.tick, *first)),
                _ => None,
            })
        })
        .collect()
}

#[test]
fn a_controller_changed_from_outside_is_recorded_from_then_on_and_replays_bit_for_bit() {
    let mut g = EntityGroup::new(kinds(), GroupConfig::default());
    let pushed = g.spawn("test.thruster", &0.0f32, Owner::Server).unwrap();
    let left = g.spawn("test.thruster", &3.0f32, Owner::Server).unwrap();
    let (pushed_net, left_net) = (
        g.get(pushed).unwrap().net_id(),
        g.get(left).unwrap().net_id(),
    );
    g.start_recording("thrusters", "test").unwrap();
    let mut bytes = g.take_recording().unwrap();
    for tick in 0..120 {
        if tick == 40 || tick == 80 {
            // Game code reaches into the controller: no input, no flag.
            let c = g.controller_mut::<Posed<Thruster>>(pushed).unwrap();
            c.0.thrust += 15.0;
        }
        g.frame();
    }
    bytes.extend(g.stop_recording().unwrap());
    let rec = Recording::from_bytes(&bytes).unwrap();
    let sections = recorded_sections(&rec);
    assert!(!sections.is_empty(), "the changed thruster is recorded");
    assert!(
        sections
            .iter()
            .all(|(t, net)| *net == pushed_net && *t >= 40),
        "only the changed one, from its change on: {sections:?}"
    );
    assert!(sections.iter().all(|(_, net)| *net != left_net));
    // It did move: the change was a decision that mattered.
    let y = |id| g.get(id).unwrap().body().translation().y;
    assert!(y(pushed) > y(left) + 1.0, "{} vs {}", y(pushed), y(left));
    // And the replay, with the same kinds and nothing set, verifies.
    let mut replay = Replay::open(&bytes, kinds()).unwrap();
    assert_eq!(replay.verify(|_, _| {}).unwrap(), None);
    assert_eq!(replay.group().state_hash(), g.state_hash());
}
