//! `server --metrics ADDR`: the dedicated server's figures in the Prometheus text format,
//! served over HTTP on a thread of its own (the binary's edge; the game loop only sets the
//! figures, once a second).

use lanyard_game::game::Game;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The figures, as the game loop last set them.
pub(crate) struct Metrics {
    addr: SocketAddr,
    registry: Arc<Mutex<Registry>>,
    players: Gauge,
    spectators: Gauge,
    entities: Gauge,
    frame_ms: Gauge<f64, AtomicU64>,
    kbps_in: Gauge<f64, AtomicU64>,
    kbps_out: Gauge<f64, AtomicU64>,
    bytes_in: Gauge,
    bytes_out: Gauge,
    state_age_ms: Gauge<f64, AtomicU64>,
    sessions_lost: Gauge,
    hellos_refused: Gauge,
}

/// `ADDR` as an address to serve the figures on: `HOST:PORT` (an address, never looked
/// up), or a bare port on 127.0.0.1.
pub(crate) fn parse_metrics_addr(s: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse()
        .map_err(|_| format!("'{s}' is not PORT or IP:PORT (for example 127.0.0.1:9100)"))
}

impl Metrics {
    /// Starts serving on `addr`; the figures read 0 until the first [`set`](Self::set).
    pub(crate) fn serve(addr: SocketAddr) -> Result<Metrics, String> {
        let listener = TcpListener::bind(addr)
            .map_err(|e| format!("cannot serve the metrics on {addr}: {e}"))?;
        let addr = listener.local_addr().unwrap_or(addr);
        let mut registry = Registry::with_prefix("tumbleyard");
        let m = Metrics {
            addr,
            registry: Arc::new(Mutex::new(Registry::default())),
            players: Gauge::default(),
            spectators: Gauge::default(),
            entities: Gauge::default(),
            frame_ms: Gauge::default(),
            kbps_in: Gauge::default(),
            kbps_out: Gauge::default(),
            bytes_in: Gauge::default(),
            bytes_out: Gauge::default(),
            state_age_ms: Gauge::default(),
            sessions_lost: Gauge::default(),
            hellos_refused: Gauge::default(),
        };
        registry.register("players", "Players in the game", m.players.clone());
        registry.register("spectators", "Spectators watching", m.spectators.clone());
        registry.register("entities", "Entities in the world", m.entities.clone());
        registry.register(
            "frame_milliseconds",
            "Mean time of a tick over the last second",
            m.frame_ms.clone(),
        );
        registry.register(
            "in_kilobits_per_second",
            "Traffic in, last second",
            m.kbps_in.clone(),
        );
        registry.register(
            "out_kilobits_per_second",
            "Traffic out, last second",
            m.kbps_out.clone(),
        );
        registry.register(
            "in_bytes",
            "Bytes received since the start",
            m.bytes_in.clone(),
        );
        registry.register(
            "out_bytes",
            "Bytes sent since the start",
            m.bytes_out.clone(),
        );
        registry.register(
            "state_age_milliseconds",
            "The oldest of the players' state ages (95th percentile each)",
            m.state_age_ms.clone(),
        );
        registry.register(
            "sessions_lost",
            "Sessions that ended without the player leaving or being sent away",
            m.sessions_lost.clone(),
        );
        registry.register(
            "hellos_refused",
            "Hellos (of any version) and connects not answered (past the rate one address or everyone may ask at)",
            m.hellos_refused.clone(),
        );
        *m.registry.lock().map_err(|_| "metrics lock")? = registry;
        let shared = m.registry.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                answer(stream, &shared);
            }
        });
        Ok(m)
    }

    /// Where it serves.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Sets the figures from `game`, whose ticks took `frame_ms` on average.
    pub(crate) fn set(&self, game: &Game, frame_ms: f32) {
        let sessions = game.net().sessions();
        let watching = sessions.iter().filter(|s| s.spectator).count();
        let counters = game.net().counters();
        let as_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.players.set((sessions.len() - watching) as i64);
        self.spectators.set(watching as i64);
        self.entities.set(game.group().len() as i64);
        self.frame_ms.set(f64::from(frame_ms));
        self.kbps_in
            .set(f64::from(game.presentation().traffic().kbps_in));
        self.kbps_out
            .set(f64::from(game.presentation().traffic().kbps_out));
        self.bytes_in.set(as_i64(counters.bytes_in));
        self.bytes_out.set(as_i64(counters.bytes_out));
        let age = sessions
            .iter()
            .map(|s| s.stats.state_age_p95_ms)
            .fold(0.0f32, f32::max);
        self.state_age_ms.set(f64::from(age));
        self.sessions_lost.set(as_i64(game.sessions_lost()));
        self.hellos_refused.set(as_i64(counters.hellos_dropped));
    }
}

/// Answers one HTTP request, whatever it asks, with the figures (a scraper asks for
/// `/metrics`; nothing else is served).
fn answer(mut stream: TcpStream, registry: &Mutex<Registry>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    // The whole request first (up to its blank line): answering and closing while the
    // scraper still sends would reset its connection.
    let mut request = Vec::new();
    let mut chunk = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16 * 1024 {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => request.extend_from_slice(&chunk[..n]),
        }
    }
    let mut body = String::new();
    if let Ok(r) = registry.lock() {
        let _ = encode(&mut body, &r);
    }
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}
