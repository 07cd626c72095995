//! Bodies that never rest, predicted by default: 250 asteroids always moving around a
//! planetoid (the scene KinematicSoup published for comparing networking libraries), one
//! client, 30 broadcasts a second, on the in-memory hub with a virtual clock. The asteroid
//! kind is written the plain way, with nothing set for prediction: its section starts with
//! a pose, and its `motion` pulls it toward the planetoid, so both ends predict it and the
//! server sends only what the prediction misses. Prints the bytes each body costs.
//!
//! `cargo run --release -p lanyard-net --example asteroids`
//! (`cargo bench -p lanyard-tests --bench asteroids` measures the view error as well.)

use lanyard::prelude::*;
use lanyard_demo::asteroids::{self, ASTEROID};
use lanyard_net::NetConfig;
use lanyard_net::harness::Scenario;

const BODIES: usize = 250;
const SECONDS: f32 = 10.0;

fn main() {
    let config = NetConfig {
        rate: 30.0,
        ..NetConfig::default()
    };
    let planetoid = |g: &mut EntityGroup| {
        g.add_scenery(asteroids::planetoid());
    };
    let mut s = Scenario::with_registry(
        lanyard_demo::registry(),
        planetoid,
        config.clone(),
        None,
        60.0,
        |g| {
            g.set_gravity(Vec3::ZERO).expect("no gravity is a gravity");
            g.add_scenery(asteroids::planetoid());
            for p in asteroids::field(BODIES, 1) {
                g.spawn(ASTEROID, &p, Owner::Server)
                    .expect("asteroids spawn");
            }
        },
    );
    s.add_client(config, "ann", None);
    s.wait_for(5.0, "ann to join and get the field", |s| {
        s.all_joined() && s.clients[0].group.len() == BODIES
    })
    .expect("ann joins");
    s.run_for(2.0); // the first whole states go by

    let ann = s.clients[0].net.client_id().expect("joined");
    let before = s.server.net.peer_stats(ann).expect("connected");
    let broadcasts = s.server.net.counters().broadcasts;
    s.run_for(SECONDS);
    let after = s.server.net.peer_stats(ann).expect("connected");
    let sent = (after.bytes_out - before.bytes_out) as f32;
    let updates = (s.server.net.counters().broadcasts - broadcasts) as f32;

    println!("{BODIES} asteroids for {SECONDS} s at 30 broadcasts a second:");
    println!("  to the client: {:.2} kB/s", sent / SECONDS / 1000.0);
    println!(
        "  per body: {:.1} B/s, {:.3} B per broadcast",
        sent / SECONDS / BODIES as f32,
        sent / updates / BODIES as f32
    );
    let held = after.predictions_held - before.predictions_held;
    let missed = after.predictions_missed - before.predictions_missed;
    println!("  predictions that held: {held}, that missed (sent as deltas): {missed}");
}
