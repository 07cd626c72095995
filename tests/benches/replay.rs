//! Replay speed: how many simulated seconds of the sample game replay (and verify) per
//! wall-clock second.
//!
//! Run with `cargo bench -p lanyard-tests --bench replay`. Replays each recorded fixture
//! (`tests/fixtures/`: a dedicated server and two bots) several times, checking the hash at
//! every tick, and reports the median.
//!
//! Then the cost of a replay against stepping the same world bare: it records 12 s of the
//! cube field on a server, a bot throwing grenades into it (on 127.0.0.1), replays it
//! (checking every tick) and times that, and times a bare rapier step of a copy of the
//! replay's physics world before each of its ticks (the copy made outside the timing), so
//! both step the very same states.

use lanyard::rapier3d::prelude::PhysicsWorld;
use lanyard::replay::{Replay, Step};
use lanyard_game::bot::Bot;
use lanyard_game::game::{Game, Options, TICK_HZ};
use lanyard_game::kinds;
use lanyard_game::scene::Scene;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

const RUNS: usize = 15;

/// 12 s of the cube field with grenades, recorded on the server.
fn grenade_field() -> Vec<u8> {
    let path = format!("{}/../assets/cubes.toml", env!("CARGO_MANIFEST_DIR"));
    let scene = Scene::load(std::path::Path::new(&path)).expect("the cube field");
    let options = |name: &str| Options {
        port: 0,
        name: name.to_owned(),
        rate: 30.0,
        ..Options::new(scene.clone())
    };
    let mut server = Game::server(options("server"), None).expect("a server");
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, server.local_addr().port()));
    let mut player = Game::client(options("knocker"), addr, [3; 32]).expect("a client");
    let dt = 1.0 / TICK_HZ;
    for _ in 0..120 {
        server.tick(dt);
        player.tick(dt);
    }
    server
        .group_mut()
        .start_recording("cubes", "server")
        .expect("records");
    let mut bytes = server.group_mut().take_recording().expect("recording");
    let mut brain = Bot::new(5, None);
    for _ in 0..12 * TICK_HZ as usize {
        player.set_input(brain.input(&player, dt, f32::INFINITY));
        server.tick(dt);
        player.tick(dt);
    }
    bytes.extend(server.group_mut().stop_recording().expect("stops"));
    bytes
}

/// A copy of a physics world (through its serialisation: rapier's worlds are not `Clone`).
fn copy(world: &PhysicsWorld) -> PhysicsWorld {
    let cfg = bincode::config::standard();
    let bytes = bincode::serde::encode_to_vec(world, cfg).expect("encodes");
    bincode::serde::decode_from_slice(&bytes, cfg)
        .expect("decodes")
        .0
}

/// One bare pass: a copy of the replay's physics world at each tick, warmed by one step,
/// and the time of the next step, summed.
fn bare_pass(bytes: &[u8], registry: &Arc<lanyard::KindRegistry>) -> Duration {
    let mut bare = Duration::ZERO;
    let mut r = Replay::open(bytes, registry.clone()).expect("open");
    loop {
        // A fresh copy's first step runs on cold memory: it warms it, and the next one (a
        // tick on, as the replay's next) is timed.
        let mut world = copy(r.group().physics());
        world.step();
        let t = Instant::now();
        world.step();
        bare += t.elapsed();
        match r.step().expect("replay") {
            Step::Matched(_) => {}
            Step::Diverged(d) => panic!("{d}"),
            Step::End => return bare,
        }
    }
}

fn against_bare(registry: &Arc<lanyard::KindRegistry>) {
    let bytes = grenade_field();
    let (mut replays, mut bares) = (Vec::new(), Vec::new());
    let mut ticks = 0;
    // Interleaved, so that machine noise hits both alike.
    for _ in 0..5 {
        let mut r = Replay::open(&bytes, registry.clone()).expect("open");
        let t = Instant::now();
        assert_eq!(r.verify(|_, _| {}).expect("replay"), None, "diverged");
        replays.push(t.elapsed());
        ticks = r.len();
        bares.push(bare_pass(&bytes, registry));
    }
    replays.sort();
    bares.sort();
    let (replay, bare) = (replays[2], bares[2]);
    println!(
        "cube field, 12 s with grenades ({ticks} ticks, {} bytes): replay {:.1} ms, bare steps \
         of the same states {:.1} ms (medians of 5, interleaved): {:.3}x",
        bytes.len(),
        replay.as_secs_f64() * 1e3,
        bare.as_secs_f64() * 1e3,
        replay.as_secs_f64() / bare.as_secs_f64()
    );
}

fn main() {
    let registry = Arc::new(kinds::registry());
    against_bare(&registry);
    for name in ["server", "bot1", "bot2"] {
        let path = format!("{}/fixtures/{name}.lnyr", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).expect("fixture");
        let mut rates = Vec::new();
        let mut ticks = 0;
        let mut dt = 0.0;
        let mut entities = 0;
        for _ in 0..RUNS {
            let t = Instant::now();
            // With the kinds as the recording's arena set them (the Yard hands crates off),
            // as the fixture tests replay them.
            let mut r = kinds::open_replay(&bytes).expect("open");
            assert_eq!(
                r.verify(|_, _| {}).expect("replay"),
                None,
                "{name} diverged"
            );
            let wall = t.elapsed().as_secs_f64();
            ticks = r.len();
            dt = r.header().dt;
            entities = r.group().len();
            rates.push(ticks as f64 * f64::from(dt) / wall);
        }
        rates.sort_by(f64::total_cmp);
        println!(
            "{name:>6}: {ticks} ticks ({:.1} s simulated, {entities} entities at the end, {} bytes): {:.0}x real time (median of {RUNS})",
            ticks as f64 * f64::from(dt),
            bytes.len(),
            rates[RUNS / 2]
        );
    }
}
