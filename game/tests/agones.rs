//! Ready for an orchestrator: with `AGONES_SDK_HTTP_PORT` set, the dedicated server talks
//! to a fake Agones SDK sidecar on 127.0.0.1: ready once it listens, health pings from its
//! tick loop (which stop while the process is stopped, as they would for a hung
//! simulation), and shutdown at the end.

mod common;

use common::*;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the fake SDK saw: (seconds since it started, path), in order.
type Seen = Arc<Mutex<Vec<(f64, String)>>>;

/// A fake SDK: answers every request 200 and records what it saw.
fn fake_sdk() -> (u16, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let start = Instant::now();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 1024];
            let n = s.read(&mut buf).unwrap_or(0);
            let text = String::from_utf8_lossy(&buf[..n]);
            let mut words = text.split_whitespace();
            if words.next() == Some("POST")
                && let Some(path) = words.next()
            {
                log.lock()
                    .unwrap()
                    .push((start.elapsed().as_secs_f64(), path.to_owned()));
            }
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
        }
    });
    (port, seen)
}

#[test]
fn the_server_says_ready_stays_healthy_from_its_tick_loop_and_says_shutdown() {
    let (sdk, seen) = fake_sdk();
    let port = free_port().to_string();
    let mut cmd = game(&["server", "--seconds", "14"]);
    cmd.env("AGONES_SDK_HTTP_PORT", sdk.to_string())
        .env("LANYARD_PORT", &port);
    let server = Running::start(cmd);
    // Its first status line comes after a few seconds of ticks, and health pings with them.
    server.wait_for("players 0/8", Duration::from_secs(20));
    // A hung simulation: no ticks, so no health pings. Only real time can show that.
    signal(&server, "-STOP");
    std::thread::sleep(Duration::from_secs(5));
    signal(&server, "-CONT");
    let out = server.finish(Duration::from_secs(60));
    let stdout = succeeded(&out, "the process");
    assert!(
        stdout.contains(&format!("UDP port {port}")),
        "LANYARD_PORT: {stdout}"
    );
    let seen = seen.lock().unwrap().clone();
    let paths: Vec<&str> = seen.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(paths.first(), Some(&"/ready"), "{paths:?}");
    assert_eq!(paths.last(), Some(&"/shutdown"), "{paths:?}");
    let health: Vec<f64> = seen
        .iter()
        .filter(|(_, p)| p == "/health")
        .map(|(t, _)| *t)
        .collect();
    assert!(health.len() >= 3, "{seen:?}");
    let widest = health.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    assert!(
        widest >= 4.5,
        "the pings went on while the process was stopped: {health:?}"
    );
}
