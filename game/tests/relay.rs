//! A dedicated server and two bots as processes, the bots reaching the server through a
//! relay on 127.0.0.1 that corrupts 3% of the datagrams in both directions, while a
//! stranger sprays random datagrams at the server's port: no session is lost, nothing
//! corrupted is applied (the bots' crates agree with the server's), and the drops are
//! counted in the reports.

mod common;

use common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// A small seeded generator (xorshift), so every run corrupts alike.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Flips one to three bytes of `d` with probability 3%; returns whether it did.
fn corrupt(rng: &mut Rng, d: &mut [u8]) -> bool {
    if d.is_empty() || rng.below(100) >= 3 {
        return false;
    }
    for _ in 0..1 + rng.below(3) {
        let i = rng.below(d.len() as u64) as usize;
        d[i] ^= 1 + rng.below(255) as u8;
    }
    true
}

/// The relay: clients talk to `listen`; each client gets its own socket towards `server`,
/// so the server sees one address per client. Runs until `stop`.
fn relay(listen: UdpSocket, server: SocketAddr, stop: Arc<AtomicBool>, corrupted: Arc<AtomicU64>) {
    listen
        .set_read_timeout(Some(Duration::from_millis(2)))
        .unwrap();
    let mut rng = Rng(0x5eed_1234_abcd);
    let mut uplinks: HashMap<SocketAddr, UdpSocket> = HashMap::new();
    let mut buf = [0u8; 2048];
    while !stop.load(Ordering::Relaxed) {
        if let Ok((n, from)) = listen.recv_from(&mut buf) {
            let up = uplinks.entry(from).or_insert_with(|| {
                let s = UdpSocket::bind("127.0.0.1:0").unwrap();
                s.set_nonblocking(true).unwrap();
                s
            });
            let mut d = buf[..n].to_vec();
            if corrupt(&mut rng, &mut d) {
                corrupted.fetch_add(1, Ordering::Relaxed);
            }
            let _ = up.send_to(&d, server);
        }
        for (client, up) in &uplinks {
            while let Ok((n, _)) = up.recv_from(&mut buf) {
                let mut d = buf[..n].to_vec();
                if corrupt(&mut rng, &mut d) {
                    corrupted.fetch_add(1, Ordering::Relaxed);
                }
                let _ = listen.send_to(&d, client);
            }
        }
    }
}

/// Sprays random datagrams (half behind a valid header) at `server` until `stop`.
fn stranger(server: SocketAddr, stop: Arc<AtomicBool>, sent: Arc<AtomicU64>) {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut rng = Rng(0xdead_beef_f00d);
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..10 {
            let len = 1 + rng.below(500) as usize;
            let mut d: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            if len >= 5 && rng.below(2) == 0 {
                d[..4].copy_from_slice(&[b'L', b'Y', lanyard_net::PROTOCOL_VERSION as u8, 0]);
                d[4] = 1 + rng.below(7) as u8;
            }
            let _ = s.send_to(&d, server);
            sent.fetch_add(1, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn bots_play_through_a_corrupting_relay_while_a_stranger_sprays_the_server() {
    let dir = scratch("relay");
    let summary = dir.join("summary.json");
    let port = free_port();
    let server_addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let server = Running::start(game(&[
        "server",
        "--port",
        &port.to_string(),
        "--seconds",
        "24",
        "--summary",
        summary.to_str().unwrap(),
    ]));
    let stop = Arc::new(AtomicBool::new(false));
    let corrupted = Arc::new(AtomicU64::new(0));
    let sprayed = Arc::new(AtomicU64::new(0));
    let listen = UdpSocket::bind("127.0.0.1:0").unwrap();
    let relay_addr = listen.local_addr().unwrap().to_string();
    let threads = [
        {
            let (stop, corrupted) = (stop.clone(), corrupted.clone());
            std::thread::spawn(move || relay(listen, server_addr, stop, corrupted))
        },
        {
            let (stop, sprayed) = (stop.clone(), sprayed.clone());
            std::thread::spawn(move || stranger(server_addr, stop, sprayed))
        },
    ];
    let bots: Vec<Running> = ["1", "2"]
        .iter()
        .map(|seed| {
            Running::start(game(&[
                "bot",
                &relay_addr,
                "--seed",
                seed,
                "--seconds",
                "18",
            ]))
        })
        .collect();
    let reports = bot_reports(bots);
    let out = server.finish(Duration::from_secs(60));
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    assert!(out.status.success(), "the server failed");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let net = &summary["network"];
    let corrupted = corrupted.load(Ordering::Relaxed);
    let sprayed = sprayed.load(Ordering::Relaxed);
    eprintln!(
        "relay corrupted {corrupted} datagrams, the stranger sent {sprayed}; server: {net}; bots: {}, {}",
        reports[0]["network"], reports[1]["network"]
    );
    assert!(corrupted > 5, "the relay corrupted only {corrupted}");
    // The drops were counted on both sides: nearly every corrupted datagram is a bad tag
    // (the rest were handshake datagrams, refused as bad cookies or strangers).
    let up = net["bad_tags"].as_u64().unwrap();
    let down: u64 = reports
        .iter()
        .map(|r| r["network"]["server"]["bad_tags"].as_u64().unwrap())
        .sum();
    assert!(
        up > 0 && down > 0 && up + down >= corrupted / 2,
        "bad tags: up {up}, down {down}, of {corrupted} corrupted"
    );
    assert!(net["strangers"].as_u64().unwrap() > sprayed / 4);
    // Nothing corrupted was applied: no section on any peer failed to decode, and every
    // crate a bot has is where the server had it at the same broadcast (a corrupted pose
    // applied would put a crate anywhere).
    for n in [net, &reports[0]["network"], &reports[1]["network"]] {
        assert_eq!(n["bad_sections"], 0, "{n}");
        assert_eq!(n["framing_errors"], 0, "{n}");
        assert!(n["largest_datagram_out"].as_u64().unwrap() <= 1200, "{n}");
    }
    // Every delta the bots got named a baseline they held.
    for r in &reports {
        assert_eq!(r["network"]["server"]["missing_baselines"], 0, "{r}");
    }
    for (i, r) in reports.iter().enumerate() {
        assert_crates_agree(&format!("bot {i}"), r, &summary);
        assert!(
            r["explosions_seen"].as_u64().unwrap() >= 1,
            "bot {i} saw no explosion"
        );
    }
}
