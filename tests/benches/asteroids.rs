//! Bodies that never rest: the asteroid benchmark. After the scene KinematicSoup published
//! for comparing networking libraries: 250 asteroids always moving around a static
//! planetoid, no gravity, 30 state broadcasts a second, one client; the precision asked
//! is 1 cm and 0.001 rad. Here on the in-memory hub with a virtual clock and a LAN link
//! (1 ± 0.5 ms, seeded), so the figures are the same on any machine.
//!
//! For the client, every tick (a frame drawn per tick) and every asteroid, what
//! [`lanyard::interp::Smoother`] draws is compared with where the server had the asteroid
//! at the instant shown (its poses interpolated at that instant):
//!
//! * **downstream**: every byte the client received while measured (UDP payload: headers,
//!   tags, acks and reliable messages included), kB/s (1000 B);
//! * **bytes per body per update**: that, per asteroid and broadcast;
//! * **position error**: p95 and max (cm), and the share of body-ticks over 1 cm;
//! * **rotation error**: p95 (rad);
//! * **view delay**: the render delay in use (mean, ms), and how far behind the server's
//!   present the shown instant is;
//! * **state age**: how old the newest state the client had of each asteroid was (p95, max);
//! * the client's own simulation of each asteroid against the server's at the same tick
//!   (what it could draw instead of its sparse poses).
//!
//! ```sh
//! cargo bench -p lanyard-tests --bench asteroids
//! ```
//!
//! Environment: `LANYARD_BENCH_SECONDS` (seconds measured, default 20),
//! `LANYARD_BENCH_BUDGET` (the server's state budget in B/s, default [`NetConfig`]'s),
//! `LANYARD_BENCH_BODIES` (default 250), `LANYARD_BENCH_TUNED` (1: the asteroid kind as one
//! would tune it for this scene, with the precision it asks as its tolerance,
//! [`asteroids::register_tuned`]; by default the kind as written, with nothing set).

use lanyard::interp::Smoother;
use lanyard::prelude::*;
use lanyard_demo::asteroids::{self, ASTEROID};
use lanyard_net::{Conditioned, Conditions, Hub, NetConfig, NetManager, Transport};
use lanyard_tests::demo_registry;
use lanyard_tests::measure::{BenchPeer, History, Stamps, p95, quantile};
use std::net::SocketAddr;

const DT: f32 = 1.0 / 60.0;
const RATE: f32 = 30.0;
/// Seconds to join and settle before measuring.
const JOIN: f32 = 4.0;

fn addr(i: u8) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, i], 4000))
}

/// A group with the planetoid. The client's is built with the default gravity: it takes
/// the server's (none) from the welcome.
fn world(role: Role, gravity: Vec3) -> EntityGroup {
    let config = GroupConfig {
        dt: DT,
        gravity,
        role,
        ..GroupConfig::default()
    };
    let mut g = EntityGroup::new(registry(), config);
    g.add_scenery(asteroids::planetoid());
    g
}

/// The kinds: the demo's, or the asteroid alone as tuned (`LANYARD_BENCH_TUNED=1`).
fn registry() -> std::sync::Arc<KindRegistry> {
    if env::<u8>("LANYARD_BENCH_TUNED") != Some(1) {
        return demo_registry();
    }
    let mut r = KindRegistry::new();
    asteroids::register_tuned(&mut r).expect("registered once");
    std::sync::Arc::new(r)
}

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn main() {
    let seconds: f32 = env("LANYARD_BENCH_SECONDS").unwrap_or(20.0);
    let bodies: usize = env("LANYARD_BENCH_BODIES").unwrap_or(250);
    let mut config = NetConfig {
        rate: RATE,
        ..NetConfig::default()
    };
    if let Some(budget) = env("LANYARD_BENCH_BUDGET") {
        config.budget = budget;
    }
    let hub = Hub::new();
    let link = Conditions {
        latency: 0.001,
        jitter: 0.0005,
        ..Conditions::PERFECT
    };
    let t = |i: u8| -> Box<dyn Transport> {
        Box::new(Conditioned::new(
            hub.endpoint(addr(i)),
            link,
            7 + u64::from(i),
        ))
    };
    let mut server = BenchPeer {
        net: NetManager::server(config.clone(), [1; 32]),
        group: world(Role::Server, Vec3::ZERO),
        transport: t(1),
    };
    for p in asteroids::field(bodies, 42) {
        server.group.spawn(ASTEROID, &p, Owner::Server).unwrap();
    }
    let mut client = BenchPeer {
        net: NetManager::client(config.clone(), addr(1), "watcher", None, [2; 32]),
        group: world(Role::Client(ClientId(0)), GroupConfig::default().gravity),
        transport: t(2),
    };
    let mut history = History::default();
    let mut smoother = Smoother::new(RATE);
    let (mut errors, mut turns, mut delays, mut behind, mut ages) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut present = Vec::new();
    let mut stamps = Stamps::default();
    let mut bytes_at_start = 0;
    let mut at_start = lanyard_net::PeerStats::default();
    let ticks = ((JOIN + seconds) / DT).round() as u32;
    let first = (JOIN / DT).round() as u32;
    for tick in 0..ticks {
        let stamp = stamps.tick(DT);
        history.note_all(&server.group, stamp);
        server.step(DT);
        client.step(DT);
        smoother.after_frame(&client.group, client.net.remote_time());
        if tick < first {
            continue;
        }
        if tick == first {
            bytes_at_start = client.net.counters().bytes_in;
            at_start = client.net.server_stats().unwrap_or_default();
        }
        let Some(shown) = smoother.advance(&client.group, 0.0) else {
            continue;
        };
        delays.push(smoother.clock().delay() as f32);
        behind.push((stamp - shown) as f32);
        let ids: Vec<(EntityId, NetId)> =
            client.group.iter().map(|e| (e.id(), e.net_id())).collect();
        // The client's own simulation against the server's, at the same tick.
        for e in client.group.iter() {
            if let Some(s) = server.group.by_net(e.net_id()) {
                present.push(e.body().translation().distance(s.body().translation()));
            }
        }
        let nobody = Owner::Client(ClientId(u16::MAX));
        for (id, net) in ids {
            let Some((p, r)) = smoother.pose(&client.group, id, nobody) else {
                continue;
            };
            if let Some(a) = history.at(net, shown) {
                errors.push(p.distance(a.pos));
                turns.push(r.angle_between(a.rot));
            }
            if let Some(age) = client.net.state_age(net) {
                ages.push(age as f32);
            }
        }
    }
    let received = client.net.counters().bytes_in - bytes_at_start;
    let per_second = received as f64 / f64::from(seconds);
    let updates = f64::from(seconds * RATE) * bodies as f64;
    let over = errors.iter().filter(|e| **e > 0.01).count() as f64 / errors.len().max(1) as f64;
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len().max(1) as f32;
    println!(
        "asteroids: {bodies} bodies, {RATE} broadcasts/s, one client, LAN link, {seconds} s measured after {JOIN} s; budget {} B/s; the kind {}",
        config.budget,
        match env::<u8>("LANYARD_BENCH_TUNED") {
            Some(1) => "tuned (its tolerance: 5 mm, 1 mrad)",
            _ => "as written (nothing set)",
        }
    );
    println!(
        "downstream:                 {:.1} kB/s",
        per_second / 1000.0
    );
    println!(
        "bytes per body per update:  {:.2}",
        received as f64 / updates
    );
    let st = client.net.server_stats().unwrap_or_default();
    let (entries, state, datagrams) = (
        st.entries - at_start.entries,
        st.state_bytes - at_start.state_bytes,
        st.packets_in - at_start.packets_in,
    );
    println!(
        "of which:                   {:.3} entries per body per update ({:.1} B each), {:.0} datagrams/s ({:.0} B of each besides its entries)",
        entries as f64 / updates,
        state as f64 / entries.max(1) as f64,
        datagrams as f64 / f64::from(seconds),
        (received - state) as f64 / datagrams.max(1) as f64
    );
    println!(
        "position error (cm):        p95 {:.2}, max {:.1}; body-ticks over 1 cm: {:.1}%",
        p95(&errors) * 100.0,
        quantile(&errors, 1.0) * 100.0,
        over * 100.0
    );
    println!("rotation error (rad):       p95 {:.4}", p95(&turns));
    println!(
        "view delay (ms):            {:.0} (shown instant {:.0} behind the server's present)",
        mean(&delays) * 1000.0,
        mean(&behind) * 1000.0
    );
    println!(
        "state age (ms):             p95 {:.0}, max {:.0}",
        p95(&ages) * 1000.0,
        quantile(&ages, 1.0) * 1000.0
    );
    println!(
        "client's bodies vs server's: p50 {:.2} cm, p95 {:.2} cm (its own simulation, same tick)",
        quantile(&present, 0.5) * 100.0,
        p95(&present) * 100.0
    );
    if let Some(id) = client.net.client_id()
        && let Some(st) = server.net.peer_stats(id)
    {
        println!(
            "server's view of its age:   p95 {:.0} ms, oldest {:.0} ms (PeerStats, last broadcast)",
            st.state_age_p95_ms, st.state_age_max_ms
        );
        println!(
            "link pace:                  {:.1} kB/s found (starts at 4, ceiling {:.0})",
            st.send_rate / 1000.0,
            config.link_ceiling as f32 / 1000.0
        );
    }
    println!(
        "client's gravity:           {:?} (the server's: none)",
        client.group.config().gravity.to_array()
    );
}
