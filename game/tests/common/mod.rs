//! Helpers for the tests that run the game binary as separate processes on 127.0.0.1.

#![allow(dead_code)] // Each test file uses its own subset.

use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_lanyard-game");

/// A UDP port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The loopback broadcast address on `port`: discovery never leaves this machine.
pub fn discovery(port: u16) -> String {
    format!("127.255.255.255:{port}")
}

/// A fresh scratch directory.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lanyard-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The game binary with `args`, with no display and discovery on loopback.
pub fn game(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_remove("DISPLAY")
        .env("LANYARD_DISCOVERY_ADDR", "127.255.255.255:1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// A child process that is killed if the test ends before it does.
pub struct Running(pub Option<Child>);

impl Running {
    /// Starts `cmd`.
    pub fn start(mut cmd: Command) -> Running {
        Running(Some(cmd.spawn().expect("the game binary starts")))
    }

    /// Waits for it to end by itself (killing it after `limit`), and returns its output.
    pub fn finish(mut self, limit: Duration) -> Output {
        let mut child = self.0.take().unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > limit {
                let _ = child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        child.wait_with_output().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The last line of a process's standard output, as JSON.
pub fn last_json(out: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_else(|| {
        panic!(
            "no output; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// Waits for every bot (a minute at most each), requires that each ran its full time, and
/// returns their JSON reports.
pub fn bot_reports(bots: Vec<Running>) -> Vec<serde_json::Value> {
    bots.into_iter()
        .map(|b| {
            let out = b.finish(Duration::from_secs(60));
            assert!(
                out.status.success(),
                "a bot failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            last_json(&out)
        })
        .collect()
}
