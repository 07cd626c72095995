//! Readiness and health for an orchestrator: when `AGONES_SDK_HTTP_PORT` is set (Agones
//! sets it in a game server's pod), the dedicated server tells the Agones SDK sidecar's
//! local REST endpoints that it is ready once it listens, that it is healthy from its tick
//! loop (so a hung simulation stops the pings and fails the health check), and that it is
//! shutting down at the end. Plain HTTP/1.1 on 127.0.0.1, nothing else.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How often the tick loop says it is healthy.
pub const HEALTH_EVERY: Duration = Duration::from_secs(2);

/// The Agones SDK sidecar, over its REST port.
#[derive(Debug)]
pub struct Agones {
    addr: SocketAddr,
    last_health: Option<Instant>,
}

impl Agones {
    /// The sidecar named by `AGONES_SDK_HTTP_PORT`, if it is set; an error if it is not a
    /// port.
    pub fn from_env() -> Result<Option<Agones>, String> {
        let Some(v) = std::env::var_os("AGONES_SDK_HTTP_PORT") else {
            return Ok(None);
        };
        let v = v.to_string_lossy();
        let port: u16 = v
            .trim()
            .parse()
            .map_err(|_| format!("AGONES_SDK_HTTP_PORT='{v}' is not a port"))?;
        Ok(Some(Agones::at(port)))
    }

    /// The sidecar on 127.0.0.1:`port`.
    pub fn at(port: u16) -> Agones {
        Agones {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            last_health: None,
        }
    }

    /// The server listens: ready for players.
    pub fn ready(&mut self) -> Result<(), String> {
        self.post("/ready")
    }

    /// From the tick loop: a health ping, at most every [`HEALTH_EVERY`]. A failed ping is
    /// logged; the sidecar decides what a missing one means.
    pub fn tick(&mut self) {
        if self.last_health.is_some_and(|t| t.elapsed() < HEALTH_EVERY) {
            return;
        }
        self.last_health = Some(Instant::now());
        if let Err(e) = self.post("/health") {
            tracing::warn!("agones health: {e}");
        }
    }

    /// The server is ending.
    pub fn shutdown(&mut self) -> Result<(), String> {
        self.post("/shutdown")
    }

    fn post(&self, path: &str) -> Result<(), String> {
        let fail = |e: std::io::Error| format!("POST {path} to {}: {e}", self.addr);
        let mut s = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).map_err(fail)?;
        s.set_read_timeout(Some(Duration::from_secs(2)))
            .map_err(fail)?;
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        );
        s.write_all(request.as_bytes()).map_err(fail)?;
        let mut head = [0u8; 64];
        let n = s.read(&mut head).map_err(fail)?;
        let line = String::from_utf8_lossy(&head[..n]);
        match line.split_whitespace().nth(1) {
            Some("200") => Ok(()),
            other => Err(format!(
                "POST {path} to {}: answered {}",
                self.addr,
                other.unwrap_or("nothing")
            )),
        }
    }
}
