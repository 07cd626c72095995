//! Downstream bandwidth per client on the cube field (`assets/cubes.toml`, 900 one-metre
//! cubes), at 30 broadcasts per second: a server and two clients, real Tumbleyard games on
//! UDP sockets on 127.0.0.1, ticked in lockstep on simulated time. One client's player is a
//! bot that walks into the field and throws grenades (knocking cubes about); the other
//! stands still and watches. Then the bot goes home, the field settles, and the last
//! seconds measure a world at rest.
//!
//! ```sh
//! cargo bench -p lanyard-tests --bench bandwidth
//! ```
//!
//! Environment: `LANYARD_BENCH_ACTIVE` (seconds of play, default 20),
//! `LANYARD_BENCH_RATE` (broadcasts per second, default 30).

use lanyard_game::bot::Bot;
use lanyard_game::game::{Game, Options, TICK_HZ};
use lanyard_game::kinds::PlayerInput;
use lanyard_game::scene::Scene;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

fn env_f32(name: &str, default: f32) -> f32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn kbps(bytes: u64, seconds: f32) -> f32 {
    bytes as f32 * 8.0 / 1000.0 / seconds
}

/// Bytes received by a client in each simulated second.
struct Meter {
    per_second: Vec<u64>,
    last: u64,
}

impl Meter {
    fn tick(&mut self, total: u64) {
        self.per_second.push(total - self.last);
        self.last = total;
    }

    fn report(&self, who: &str, from: usize, to: usize) -> (f32, f32) {
        let w = &self.per_second[from..to];
        let avg = kbps(w.iter().sum(), w.len() as f32);
        let worst = w.iter().map(|b| kbps(*b, 1.0)).fold(0.0, f32::max);
        println!(
            "  {who:8} seconds {from:>2}..{to:<2}: average {avg:7.1} kbit/s, worst second {worst:7.1} kbit/s"
        );
        (avg, worst)
    }
}

fn main() {
    let active = env_f32("LANYARD_BENCH_ACTIVE", 20.0);
    let rate = env_f32("LANYARD_BENCH_RATE", 30.0);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/cubes.toml");
    let scene = Scene::load(&path).expect("the cube field loads");
    let options = |name: &str| Options {
        port: 0,
        name: name.to_owned(),
        rate,
        ..Options::new(scene.clone())
    };
    let mut server = Game::server(options("bench server"), None).expect("server starts");
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, server.local_addr().port()));
    let mut knocker = Game::client(options("knocker"), addr, [1; 32]).expect("client");
    let mut watcher = Game::client(options("watcher"), addr, [2; 32]).expect("client");
    let dt = 1.0 / TICK_HZ;
    let per_second = TICK_HZ as usize;
    let mut brain = Bot::new(7, Some(active));
    let mut meters = [0, 1].map(|_| Meter {
        per_second: Vec::new(),
        last: 0,
    });
    // Join, play, then rest: the bot's last third (at most 6 s) walks home and stands.
    let join = 3;
    let rest = 14;
    let total = join + active as usize + rest;
    let mut rest_start = None;
    for second in 0..total {
        if second == total - 6 {
            rest_start = watcher
                .net()
                .server_stats()
                .map(|s| (s.entries, s.packets_in));
        }
        for t in 0..per_second {
            let played = second as f32 - join as f32 + t as f32 * dt;
            let left = active - played;
            if played >= 0.0 && left > 0.0 {
                let input = brain.input(&knocker, dt, left);
                knocker.set_input(input);
            } else {
                knocker.set_input(PlayerInput::default());
            }
            server.tick(dt);
            knocker.tick(dt);
            watcher.tick(dt);
        }
        meters[0].tick(knocker.net().counters().bytes_in);
        meters[1].tick(watcher.net().counters().bytes_in);
    }
    let awake = server
        .group()
        .iter()
        .filter(|e| !e.body().is_sleeping())
        .count();
    println!(
        "cube field: {} entities, {rate} broadcasts/s, {active} s of play; awake at the end: {awake}",
        server.group().len()
    );
    println!("downstream per client (simulated seconds; 0..{join} is the join):");
    let play_end = join + active as usize;
    for (who, m) in ["knocker", "watcher"].iter().zip(&meters) {
        m.report(who, 0, play_end);
        m.report(who, join, play_end);
        m.report(who, total - 6, total);
    }
    if let (Some((e0, p0)), Some(s)) = (rest_start, watcher.net().server_stats()) {
        println!(
            "  at rest the watcher got {:.1} entries and {:.1} datagrams per second",
            (s.entries - e0) as f32 / 6.0,
            (s.packets_in - p0) as f32 / 6.0
        );
    }
    let largest = server.net().counters().largest_out;
    println!("largest datagram the server sent: {largest} bytes");
    for (who, g) in [("knocker", &knocker), ("watcher", &watcher)] {
        if let Some(s) = g.net().server_stats() {
            println!(
                "  {who}: {} entries received, {} bytes of them, {} missing baselines",
                s.entries, s.state_bytes, s.missing_baselines
            );
        }
    }
    for (id, name) in server.net().clients() {
        if let Some(s) = server.net().peer_stats(id) {
            println!(
                "  server to {name}: {} datagrams, {} reliable resends",
                s.packets_out, s.resends
            );
        }
    }
}
