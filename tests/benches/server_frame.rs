//! The server frame with 1000 entities and 64 clients on the in-memory hub.
//!
//! Run with `cargo bench -p lanyard-tests --bench server_frame` (`LANYARD_BENCH_CLIENTS=N`
//! for another client count). The server's world is 1000 crates that cannot sleep (every
//! one is awake and sends a section every broadcast). The clients join and receive the world; then the server runs 600 frames at 60 Hz (10 s,
//! 200 broadcasts at the default 20 per second) while the clients keep up (their time is not
//! counted). Reported: the server's `NetManager::update` per frame, the same world's bare
//! `EntityGroup::frame` for comparison, and the bytes each broadcast sends each client.
//!
//! A crate at rest is predicted by every client, so the world as it is sends almost nothing.
//! `LANYARD_BENCH_STIR=N` throws `N` crates (chosen by a seeded generator) up and sideways
//! every second of the run, so that the broadcast carries what changed.

use lanyard::prelude::*;
use lanyard_demo::{self as demo, CrateParams};
use lanyard_net::NetConfig;
use lanyard_tests::scenario::{DemoScenario, Scenario, add_scenery};
use std::time::Instant;

const ENTITIES: usize = 1000;
const FRAMES: usize = 600;

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

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let clients: usize = std::env::var("LANYARD_BENCH_CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let stirred: usize = std::env::var("LANYARD_BENCH_STIR")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
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

    let mut on_broadcast = Vec::new();
    let mut quiet = Vec::new();
    let mut broadcast_bytes = Vec::new();
    let dt = s.dt;
    let first_client = lanyard_tests::scenario::hub_addr(1);
    for frame in 0..FRAMES {
        if frame % 60 == 0 {
            stir(&mut s.server.group, stirred, &mut seed);
        }
        lanyard_net::pump(&mut s.server.net, s.server.transport.as_mut());
        let t = Instant::now();
        let f = s.server.net.update(&mut s.server.group, dt);
        let ns = t.elapsed().as_nanos() as f64;
        let out: Vec<_> = s.server.net.drain_outgoing().collect();
        if f.sent {
            on_broadcast.push(ns);
            broadcast_bytes.push(
                out.iter()
                    .filter(|(to, _)| *to == first_client)
                    .map(|(_, d)| d.len())
                    .sum::<usize>(),
            );
        } else {
            quiet.push(ns);
        }
        for (to, d) in out {
            s.server.transport.send(to, &d);
        }
        s.server.transport.advance(dt);
        for c in &mut s.clients {
            c.step(dt);
        }
    }
    let all_connected = s.server.net.clients().len() == clients;
    let resends = s
        .server
        .net
        .clients()
        .first()
        .and_then(|(id, _)| s.server.net.peer_stats(*id))
        .map_or(0, |p| p.resends);
    // The same group's bare frame, under the same conditions (the clients stepping their
    // worlds in between), for 4 s: less than the clients' timeout.
    let mut bare: Vec<f64> = (0..240)
        .map(|_| {
            let t = Instant::now();
            s.server.group.frame();
            let ns = t.elapsed().as_nanos() as f64;
            for c in &mut s.clients {
                c.step(dt);
            }
            ns
        })
        .collect();
    let awake = s
        .server
        .group
        .iter()
        .filter(|e| !e.body().is_sleeping())
        .count();
    let per_broadcast =
        broadcast_bytes.iter().sum::<usize>() as f64 / broadcast_bytes.len().max(1) as f64;
    let g = median(&mut bare);
    let b = median(&mut on_broadcast);
    let q = median(&mut quiet);
    let mean = (b * on_broadcast.len() as f64 + q * quiet.len() as f64) / FRAMES as f64;
    println!(
        "entities: {ENTITIES} ({awake} awake, {stirred} thrown a second), clients: {clients}, all connected: {all_connected}"
    );
    println!(
        "broadcasts: {} in {FRAMES} frames at 60 Hz; reliable resends to the first client: {resends}",
        on_broadcast.len()
    );
    println!(
        "bare EntityGroup::frame:              {:>8.1} us (median)",
        g / 1e3
    );
    println!(
        "server update, frames that broadcast: {:>8.1} us (median), +{:.1} us",
        b / 1e3,
        (b - g) / 1e3
    );
    println!(
        "server update, other frames:          {:>8.1} us (median), +{:.1} us",
        q / 1e3,
        (q - g) / 1e3
    );
    println!(
        "networking on top, averaged per frame: {:>7.1} us ({:.2}x the bare frame)",
        (mean - g) / 1e3,
        mean / g
    );
    println!(
        "bytes per broadcast per client: {per_broadcast:.0} ({:.1} datagrams of at most 1200)",
        per_broadcast / 1200.0
    );
    println!(
        "bytes per entity per broadcast: {:.2}",
        per_broadcast / ENTITIES as f64
    );
    println!(
        "downstream per client at 20 broadcasts/s: {:.0} kbit/s",
        per_broadcast * 20.0 * 8.0 / 1000.0
    );
    println!(
        "server upstream to {clients} clients at 20 broadcasts/s: {:.1} Mbit/s",
        per_broadcast * clients as f64 * 20.0 * 8.0 / 1e6
    );
}
