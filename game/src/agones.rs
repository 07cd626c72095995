//! Readiness and health for an orchestrator: when `AGONES_SDK_HTTP_PORT` is set (Agones
//! sets it in a game server's pod), the dedicated server tells the Agones SDK sidecar's
//! local REST endpoints that it is ready once it listens, that it is healthy from its tick
//! loop (so a hung simulation stops the pings and fails the health check), and that it is
//! shutting down at the end. Plain HTTP/1.1 on 127.0.0.1 (through `ureq`, addressed by IP:
//! nothing is looked up), nothing else.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

/// How often the tick loop says it is healthy.
pub const HEALTH_EVERY: Duration = Duration::from_secs(2);

/// The Agones SDK sidecar, over its REST port.
pub struct Agones {
    addr: SocketAddr,
    agent: ureq::Agent,
    last_health: Option<Instant>,
}

impl std::fmt::Debug for Agones {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agones").field("addr", &self.addr).finish()
    }
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
        // A call that takes longer than this is a failed one: the tick loop waits on it.
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(2)))
            .build()
            .into();
        Agones {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            agent,
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
        let url = format!("http://{}{path}", self.addr);
        match self
            .agent
            .post(&url)
            .header("Content-Type", "application/json")
            .send("{}")
        {
            Ok(_) => Ok(()),
            Err(ureq::Error::StatusCode(code)) => {
                Err(format!("POST {path} to {}: answered {code}", self.addr))
            }
            Err(e) => Err(format!("POST {path} to {}: {e}", self.addr)),
        }
    }
}
