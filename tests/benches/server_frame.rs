//! Criterion benchmark of the server frame with 1000 entities and 64 clients on the
//! in-memory hub.
//!
//! ```sh
//! cargo bench -p lanyard-tests --bench server_frame -- --save-baseline main
//! cargo bench -p lanyard-tests --bench server_frame -- --baseline main
//! ```
//!
//! `LANYARD_BENCH_CLIENTS=N` for another client count. The server's world is 1000 crates
//! that cannot sleep. The clients join and receive the world; then each measured frame is
//! the server's `NetManager::update` at 60 Hz (a broadcast every third frame at the default
//! 20 per second) while the clients keep up (their time is not counted), against the same
//! world's bare `EntityGroup::frame`. Before measuring, it prints the bytes each broadcast
//! sends each client.
//!
//! A crate at rest is predicted by every client, so the world as it is sends almost nothing.
//! `LANYARD_BENCH_STIR=N` throws `N` crates (chosen by a seeded generator) up and sideways
//! every second of the run, so that the broadcast carries what changed.

use criterion::{Criterion, criterion_group, criterion_main};
use lanyard::prelude::*;
use lanyard_demo::{self as demo, CrateParams};
use lanyard_net::NetConfig;
use lanyard_tests::scenario::{DemoScenario, Scenario, add_scenery};
use std::time::{Duration, Instant};

const ENTITIES: usize = 1000;

fn world(g: &mut EntityGroup) {
    add_scenery(g);
    for i in 0..ENTITIES {
        let p = CrateParams {
            pos: [
                (i % 20) as f32 * 1.5 - 14.0,
                0.6 + (i / 400) as f32 * 1.1,
                ((i / 20) % 20) as f32 * 1.5 - 14.0,
            ],
            half_extents: [0.5; 3],
            color: [200, 150, 90, 255],
            can_sleep: false,
        };
        g.spawn(demo::CRATE, &p, Owner::Server).expect("spawn");
    }
}

/// Throws `n` crates of `g` up and sideways, chosen by the generator `seed` (advanced).
fn stir(g: &mut EntityGroup, n: usize, seed: &mut u64) {
    let ids: Vec<_> = g.iter().map(|e| e.id()).collect();
    for _ in 0..n {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let r = (*seed >> 33) as usize;
        let id = ids[r % ids.len()];
        let Some(mut state) = g.get(id).map(|e| lanyard::pose::BodyState::of(e.body())) else {
            continue;
        };
        let side = |bits: usize| ((bits % 200) as f32 - 100.0) / 50.0;
        state.linvel = [side(r >> 8), 5.0, side(r >> 16)];
        g.set_body_state(id, &state).expect("a finite kick");
    }
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One frame of the session: the server's update (timed, returned), then its datagrams
/// out, the virtual clock on, and every client's step.
fn server_frame(s: &mut Scenario, stirred: usize, seed: &mut u64, frame: &mut u64) -> Duration {
    if frame.is_multiple_of(60) {
        stir(&mut s.server.group, stirred, seed);
    }
    *frame += 1;
    let dt = s.dt;
    lanyard_net::pump(&mut s.server.net, s.server.transport.as_mut());
    let t = Instant::now();
    let f = s.server.net.update(&mut s.server.group, dt);
    let took = t.elapsed();
    std::hint::black_box(f);
    for (to, d) in s.server.net.drain_outgoing().collect::<Vec<_>>() {
        s.server.transport.send(to, &d);
    }
    s.server.transport.advance(dt);
    for c in &mut s.clients {
        c.step(dt);
    }
    took
}

fn bench(c: &mut Criterion) {
    let clients = env("LANYARD_BENCH_CLIENTS", 64);
    let stirred = env("LANYARD_BENCH_STIR", 0);
    let mut seed = 0x5eed_u64;
    let config = NetConfig {
        max_clients: clients as u16,
        ..NetConfig::default()
    };
    let mut s = Scenario::new(config, None, 60.0, world);
    for i in 0..clients {
        s.add_client(NetConfig::default(), &format!("bot{i}"), None);
    }
    assert!(s.run_until(5.0, |s| s.all_joined()), "clients did not join");
    assert!(
        s.run_until(10.0, |s| s
            .clients
            .iter()
            .all(|c| c.group.len() == ENTITIES)),
        "clients did not receive the world"
    );
    // Stirred, the world runs two seconds of throws before it is measured; at rest, one.
    for _ in 0..if stirred > 0 { 2 } else { 1 } {
        stir(&mut s.server.group, stirred, &mut seed);
        s.run_for(1.0);
    }
    let first = s.server.net.clients()[0].0;
    let before = s.server.net.peer_stats(first).expect("connected").bytes_out;
    let broadcasts = s.server.net.counters().broadcasts;
    s.run_for(1.0);
    let bytes = s.server.net.peer_stats(first).expect("connected").bytes_out - before;
    let per_broadcast = bytes as f64 / (s.server.net.counters().broadcasts - broadcasts) as f64;
    eprintln!(
        "{ENTITIES} entities ({stirred} thrown a second), {clients} clients: {per_broadcast:.0} \
         bytes per broadcast per client ({:.2} per entity)",
        per_broadcast / ENTITIES as f64
    );

    let mut g = c.benchmark_group("server frame");
    g.sample_size(20);
    let mut frame = 0;
    g.bench_function(format!("NetManager::update, {clients} clients"), |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| server_frame(&mut s, stirred, &mut seed, &mut frame))
                .sum()
        })
    });
    assert_eq!(
        s.server.net.clients().len(),
        clients,
        "a client fell behind: the session measured was not the one asked for"
    );
    // The same group's bare frame (its clients time out meanwhile: nothing is sent).
    g.bench_function("bare EntityGroup::frame", |b| {
        b.iter(|| std::hint::black_box(s.server.group.frame()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
