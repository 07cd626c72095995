//! Helpers for the tests that run the game binary as separate processes on 127.0.0.1.

#![allow(dead_code)] // Each test file uses its own subset.

pub mod browser;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Holds the tests of one file that compare a bot's crates with its server's to one at a
/// time: several servers and their bots at once on two cores fall behind the wall clock
/// (ticks are dropped), so crates may still move when a bot reports.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `xvfb-run` is here for a window test. Without it the test should say it
/// skipped and pass, except where `LANYARD_REQUIRE_XVFB` is set (CI): there this fails.
pub fn xvfb_or_skip() -> bool {
    let here = std::process::Command::new("xvfb-run")
        .arg("--help")
        .output()
        .is_ok();
    if !here {
        assert!(
            std::env::var_os("LANYARD_REQUIRE_XVFB").is_none(),
            "xvfb-run is required here but not installed"
        );
        eprintln!("skipped: xvfb-run is not installed");
    }
    here
}

/// A Tumbleyard game's options on the shipped arena, listening on any free port, named
/// `name`, for games run in the test's own process.
pub fn local_options(name: &str) -> lanyard_game::game::Options {
    use lanyard_game::scene::{DEFAULT_SCENE, Scene};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(DEFAULT_SCENE);
    lanyard_game::game::Options {
        port: 0,
        name: name.to_owned(),
        ..lanyard_game::game::Options::new(Scene::load(&path).unwrap())
    }
}

/// Ticks in-process games together for `seconds` of game time: on a hub, virtual time.
pub fn tick_together(games: &mut [&mut lanyard_game::game::Game], seconds: f32) {
    let tick_hz = lanyard_game::game::TICK_HZ;
    for _ in 0..(seconds * tick_hz) as usize {
        for g in games.iter_mut() {
            g.tick(1.0 / tick_hz);
        }
    }
}

/// An address on the in-memory hub (parsed, never looked up): `127.0.0.N:47810`.
pub fn hub_addr(n: u8) -> std::net::SocketAddr {
    std::net::SocketAddr::from(([127, 0, 0, n], 47810))
}

/// A host playing as `host_name` at [`hub_addr`]`(1)` on `hub`, and clients named
/// `clients` (each with its own entropy) at the next addresses: in-process games with no
/// socket and no real time.
pub fn hub_games(
    hub: &lanyard_net::Hub,
    host_name: &str,
    clients: &[&str],
) -> (lanyard_game::game::Game, Vec<lanyard_game::game::Game>) {
    use lanyard_game::game::Game;
    let host = Game::server_on(
        local_options("yard"),
        Some(host_name.into()),
        hub.endpoint(hub_addr(1)),
    )
    .unwrap();
    let clients = clients
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let n = i as u8 + 2;
            Game::client_on(
                local_options(name),
                hub.endpoint(hub_addr(n)),
                hub_addr(1),
                [n; 32],
            )
            .unwrap()
        })
        .collect();
    (host, clients)
}

/// Puts one of the host's crates below the yard, last pushed by `by`: the next tick's
/// rules score it.
pub fn knock_off(host: &mut lanyard_game::game::Game, by: lanyard::Owner) {
    let kind = lanyard::KindId::of_name(lanyard_game::kinds::CRATE);
    let (id, net) = host
        .group()
        .iter()
        .find(|e| e.kind() == kind)
        .map(|e| (e.id(), e.net_id()))
        .expect("a crate");
    host.note_crate_hit(net, by);
    let below = lanyard::pose::BodyState {
        pos: [0.0, host.scene().kill_y - 1.0, 0.0],
        rot: [0.0, 0.0, 0.0, 1.0],
        linvel: [0.0; 3],
        angvel: [0.0; 3],
    };
    host.group_mut().set_body_state(id, &below).expect("placed");
}

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_lanyard-game");

/// A UDP port free on 127.0.0.1 now, that no other socket of the machine will be given
/// before the game binds it (see [`pick_port`]).
pub fn free_port() -> u16 {
    pick_port(|p| UdpSocket::bind(("127.0.0.1", p)).is_ok()).unwrap_or_else(|| {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    })
}

/// A TCP port free on 127.0.0.1 now, as [`free_port`] picks them.
pub fn free_port_tcp() -> u16 {
    let free = |p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
    pick_port(free).unwrap_or_else(|| {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    })
}

/// A port for a game process to bind later, for which `free` holds.
///
/// Not one the kernel hands out for port 0: between the pick and the game's bind (a
/// process start, seconds on a busy machine) any socket bound to port 0 on the machine,
/// another test's bot for one, could be given an ephemeral port just released, and the
/// game's bind then fails ("Address already in use"). So the ports come from the 12 000
/// below the ephemeral range (Linux's starts at 32768), which nothing is given unasked.
/// Each test process starts at its own place there (by its id) and counts on, so two
/// tests of a process never pick the same port, and a port is checked free before it is
/// given. `None` where the ephemeral range leaves no such room (the kernel picks then).
fn pick_port(free: impl Fn(u16) -> bool) -> Option<u16> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    const SPAN: u32 = 12_000;
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32_768);
    let low = ephemeral_low.checked_sub(SPAN).filter(|&low| low >= 1024)?;
    let start = std::process::id().wrapping_mul(2_654_435_761) % SPAN;
    (0..SPAN)
        .map(|_| low + (start + NEXT.fetch_add(1, Ordering::Relaxed)) % SPAN)
        .map(|p| p as u16)
        .find(|&p| free(p))
}

/// Whether a network namespace can be made here (`probe` is its name, deleted at once):
/// `None`, or why not.
pub fn netns_refused(probe: &str) -> Option<String> {
    match Command::new("ip").args(["netns", "add", probe]).output() {
        Ok(o) if o.status.success() => {
            let _ = Command::new("ip").args(["netns", "del", probe]).status();
            None
        }
        Ok(o) => Some(format!(
            "cannot make a network namespace: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Some(format!("ip (iproute2) is not installed: {e}")),
    }
}

/// Deletes the namespaces named `prefix` then a process id that a killed earlier run left
/// behind (their process is gone).
pub fn sweep_netns(prefix: &str) {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(rest) = name.strip_prefix(prefix) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = Command::new("ip").args(["netns", "del", name]).status();
        }
    }
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
        .env_remove("LANYARD_DISCOVERY_ADDR6")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// For a test that opens a window: `None` without a virtual display (saying why, as
/// [`xvfb_or_skip`] does); else its turn among the process tests and its scratch folder.
pub fn window_test(name: &str) -> Option<(std::sync::MutexGuard<'static, ()>, PathBuf)> {
    if !xvfb_or_skip() {
        return None;
    }
    Some((one_at_a_time(), scratch(name)))
}

/// The words of a command line: split at whitespace, except inside single quotes
/// (`--name 'Far Yard'`), which are removed.
pub fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            c if c.is_whitespace() && !quoted => out.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word);
    out
}

/// The game in a virtual X display of `size` (`"1100x700"`), with the flags of `line`
/// (see [`words`]), discovery on loopback.
pub fn windowed(size: &str, line: &str) -> Command {
    let mut c = Command::new("xvfb-run");
    c.args(["-a", "-s", &format!("-screen 0 {size}x24"), BIN])
        .args(words(line))
        .env("LANYARD_DISCOVERY_ADDR", "127.255.255.255:1")
        .env_remove("LANYARD_DISCOVERY_ADDR6")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// A dedicated server on a free port, started with the flags of `line` (see [`words`])
/// after `--port`; and its address.
pub fn server(line: &str) -> (Running, String) {
    let port = free_port().to_string();
    let mut args = vec!["server".to_owned(), "--port".to_owned(), port.clone()];
    args.extend(words(line));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (Running::start(game(&args)), format!("127.0.0.1:{port}"))
}

/// The same, with its console (its standard input) to write commands to.
pub fn server_with_console(line: &str) -> (Running, std::process::ChildStdin, String) {
    let port = free_port().to_string();
    let mut args = vec!["server".to_owned(), "--port".to_owned(), port.clone()];
    args.extend(words(line));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = game(&args);
    cmd.stdin(Stdio::piped());
    let mut server = Running::start(cmd);
    let console = server.stdin().expect("a piped console");
    (server, console, format!("127.0.0.1:{port}"))
}

/// The bytes a rendezvous server's `stats` say it carried, in and out.
pub fn carried(stats: &Value) -> u64 {
    let count = |k: &str| stats[k].as_u64().expect("the stats count bytes");
    count("bytes_in") + count("bytes_out")
}

/// The strings of a JSON array (none if it is not one).
pub fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Asserts that a process `what` ended well (showing its standard error if not), and
/// returns its standard output.
pub fn succeeded(out: &Output, what: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what} failed: {err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What a child wrote so far to its standard output (0) and error (1), each with whether
/// it ended; filled by a thread per stream.
#[derive(Default)]
struct Captured {
    streams: Mutex<[(Vec<u8>, bool); 2]>,
    grew: Condvar,
}

impl Captured {
    /// Reads `from` into stream `i` to its end, in a thread of its own.
    fn read(self: &Arc<Self>, i: usize, from: Option<impl Read + Send + 'static>) {
        let Some(mut from) = from else {
            self.streams.lock().unwrap()[i].1 = true;
            return;
        };
        let fill = Arc::clone(self);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                let n = from.read(&mut buf).unwrap_or(0);
                let mut t = fill.streams.lock().unwrap();
                t[i].0.extend_from_slice(&buf[..n]);
                t[i].1 = n == 0;
                fill.grew.notify_all();
                if n == 0 {
                    return;
                }
            }
        });
    }

    /// Waits until either stream holds `needle` (true), or both ended or `limit` passed
    /// without it (false).
    fn wait_for(&self, needle: &str, limit: Duration) -> bool {
        self.wait_until(|text| text.contains(needle), limit)
    }

    /// Waits until `holds` is true of either stream's text (true), or both ended or
    /// `limit` passed first (false).
    fn wait_until(&self, holds: impl Fn(&str) -> bool, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        let mut t = self.streams.lock().unwrap();
        loop {
            if t.iter().any(|(b, _)| holds(&String::from_utf8_lossy(b))) {
                return true;
            }
            let left = end.saturating_duration_since(Instant::now());
            if t.iter().all(|(_, ended)| *ended) || left.is_zero() {
                return false;
            }
            t = self.grew.wait_timeout(t, left).unwrap().0;
        }
    }

    /// All of stream `i`, once it ended.
    fn all(&self, i: usize) -> Vec<u8> {
        let mut t = self.streams.lock().unwrap();
        while !t[i].1 {
            t = self.grew.wait(t).unwrap();
        }
        std::mem::take(&mut t[i].0)
    }

    /// Both streams so far, as text.
    fn so_far(&self) -> String {
        let t = self.streams.lock().unwrap();
        let [out, err] = &*t;
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.0),
            String::from_utf8_lossy(&err.0)
        )
    }
}

/// A child process that is killed if the test ends before it does. What it writes to a
/// piped standard output or error is read as it comes, so a test can wait for a line.
pub struct Running {
    child: Option<Child>,
    output: Arc<Captured>,
}

impl Running {
    /// Starts `cmd`.
    pub fn start(mut cmd: Command) -> Running {
        let mut child = cmd.spawn().expect("the game binary starts");
        let output = Arc::new(Captured::default());
        output.read(0, child.stdout.take());
        output.read(1, child.stderr.take());
        Running {
            child: Some(child),
            output,
        }
    }

    /// A child that is already gone (a placeholder).
    pub fn none() -> Running {
        Running {
            child: None,
            output: Arc::default(),
        }
    }

    /// Its standard input, if it was piped and not yet taken.
    pub fn stdin(&mut self) -> Option<std::process::ChildStdin> {
        self.child.as_mut()?.stdin.take()
    }

    /// Its process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Waits until its standard output or error shows `needle`, failing the test if it
    /// does not within `limit` (or the process ends first).
    pub fn wait_for(&self, needle: &str, limit: Duration) {
        if !self.output.wait_for(needle, limit) {
            panic!("no '{needle}' within {limit:?}:\n{}", self.output.so_far());
        }
    }

    /// Waits until `holds` is true of its standard output or error, failing the test if
    /// it is not within `limit` (or the process ends first); `what` says what was awaited.
    pub fn wait_until(&self, what: &str, holds: impl Fn(&str) -> bool, limit: Duration) {
        if !self.output.wait_until(holds, limit) {
            panic!("no {what} within {limit:?}:\n{}", self.output.so_far());
        }
    }

    /// What it wrote so far, its standard output then its standard error.
    pub fn so_far(&self) -> String {
        self.output.so_far()
    }

    /// Waits for it to end by itself (killing it after `limit`), and returns its output.
    pub fn finish(mut self, limit: Duration) -> Output {
        let mut child = self.child.take().expect("still running");
        let pid = child.id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        let status = match rx.recv_timeout(limit) {
            Ok(status) => status,
            Err(_) => {
                let _ = Command::new("sh")
                    .args(["-c", &format!("kill -KILL {pid}")])
                    .status();
                rx.recv().expect("the waiting thread answers")
            }
        };
        Output {
            status: status.expect("the child is waited for"),
            stdout: self.output.all(0),
            stderr: self.output.all(1),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Sends `sig` (`-STOP`, `-CONT`, `-TERM`) to a running child, with the shell's own `kill`
/// (no package needed beyond `sh`).
pub fn signal(r: &Running, sig: &str) {
    let pid = r.pid().expect("still running");
    let ok = Command::new("sh")
        .args(["-c", &format!("kill {sig} {pid}")])
        .status()
        .expect("sh runs");
    assert!(ok.success(), "kill {sig} {pid} failed");
}

/// A `rendezvous` process on 127.0.0.1 (for at most a minute), and its address.
pub fn rendezvous() -> (Running, String) {
    let port = free_port().to_string();
    let r = Running::start(game(&["rendezvous", "--port", &port, "--seconds", "60"]));
    (r, format!("127.0.0.1:{port}"))
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

/// How far the state a bot took of a crate may be from the server's at the same broadcast:
/// the server streams each crate's pose quantized to 1 mm, so the two agree within 0.5 mm
/// unless a state was lost, corrupted or decoded against the wrong baseline. 1 cm bounds
/// that with margin while staying far below a crate's 0.8 m.
pub const CRATE_TOLERANCE: f64 = 0.01;

/// How many broadcasts older than the newest a bot took a crate's state may be: 8 s at the
/// default 20 a second, twice the interval at which a resting entity is refreshed.
pub const STALE_BROADCASTS: u64 = 160;

/// Every crate in a report's or a summary's `entities`, by network id.
pub fn crates(entities: &Value) -> BTreeMap<String, [f64; 3]> {
    entities
        .as_object()
        .expect("entities is an object")
        .iter()
        .filter(|(_, e)| e["kind"] == "crate")
        .map(|(id, e)| (id.clone(), xyz(&e["pos"])))
        .collect()
}

fn xyz(p: &Value) -> [f64; 3] {
    let f = |i: usize| p[i].as_f64().expect("a position is three numbers");
    [f(0), f(1), f(2)]
}

fn gap(p: [f64; 3], q: [f64; 3]) -> f64 {
    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
}

/// What a server's summary says it sent in its last seconds (`broadcasts`): every entity's
/// position as of the broadcast `base_number`, then each later broadcast's moves and
/// arrivals, and the entities that left.
pub struct SentLog {
    base_number: u64,
    base: BTreeMap<String, [f64; 3]>,
    /// For each entity in `base`, the broadcast from which it held that position.
    base_since: BTreeMap<String, u64>,
    broadcasts: Vec<Logged>,
}

/// One broadcast in a [`SentLog`].
struct Logged {
    number: u64,
    moved: BTreeMap<String, [f64; 3]>,
    gone: BTreeSet<String>,
}

impl SentLog {
    /// Reads a server's summary.
    pub fn of(summary: &Value) -> SentLog {
        let log = &summary["broadcasts"];
        let poses = |v: &Value| -> BTreeMap<String, [f64; 3]> {
            v.as_object()
                .expect("poses are an object")
                .iter()
                .map(|(id, p)| (id.clone(), xyz(p)))
                .collect()
        };
        SentLog {
            base_number: log["base_number"]
                .as_u64()
                .expect("the summary logs broadcasts"),
            base: poses(&log["base"]),
            base_since: log["base_since"]
                .as_object()
                .expect("the log says since when each base position held")
                .iter()
                .map(|(id, n)| (id.clone(), n.as_u64().expect("a broadcast number")))
                .collect(),
            broadcasts: log["broadcasts"]
                .as_array()
                .expect("a list of broadcasts")
                .iter()
                .map(|b| Logged {
                    number: b["number"].as_u64().expect("a broadcast's number"),
                    moved: poses(&b["moved"]),
                    gone: b["gone"]
                        .as_array()
                        .expect("a broadcast lists what left")
                        .iter()
                        .map(|n| n.to_string())
                        .collect(),
                })
                .collect(),
        }
    }

    /// Where broadcast `n` had entity `id`: `None` if the entity was not in the world
    /// then, or `n` is older than the log and the entity moved since.
    pub fn at(&self, id: &str, n: u64) -> Option<[f64; 3]> {
        if n < self.base_number {
            let since = *self.base_since.get(id)?;
            return (since <= n).then(|| self.base[id]);
        }
        let mut at = self.base.get(id).copied();
        for b in self.broadcasts.iter().take_while(|b| b.number <= n) {
            if b.gone.contains(id) {
                at = None;
            } else if let Some(p) = b.moved.get(id) {
                at = Some(*p);
            }
        }
        at
    }

    /// What the log says of `id` from broadcast `from` to `to`: where it started, and each
    /// broadcast that moved it or saw it go (for a failure's message).
    pub fn history(&self, id: &str, from: u64, to: u64) -> String {
        let mut out = format!("at {from}: {:?}", self.at(id, from));
        for b in self.broadcasts.iter() {
            if b.number > from && b.number <= to {
                if let Some(p) = b.moved.get(id) {
                    out += &format!("; {}: {p:?}", b.number);
                }
                if b.gone.contains(id) {
                    out += &format!("; {}: gone", b.number);
                }
            }
        }
        out
    }

    /// The net ids of every entity in the world at broadcast `n` (`n` not older than the
    /// log: then the base is the world at the log's start).
    pub fn world_at(&self, n: u64) -> BTreeSet<String> {
        let mut world: BTreeSet<String> = self.base.keys().cloned().collect();
        for b in self.broadcasts.iter().take_while(|b| b.number <= n) {
            world.extend(b.moved.keys().cloned());
            for id in &b.gone {
                world.remove(id);
            }
        }
        world
    }

    /// Whether entity `id` came into the world or left it at a broadcast within `k` of `n`.
    pub fn came_or_left_near(&self, id: &str, n: u64, k: u64) -> bool {
        let mut seen = self.base.contains_key(id);
        self.broadcasts.iter().any(|b| {
            let came = !seen && b.moved.contains_key(id);
            seen |= came;
            (came || b.gone.contains(id)) && b.number.abs_diff(n) <= k
        })
    }

    /// Whether entity `id` came into the world at most `k` broadcasts before `n` (or after).
    pub fn came_since(&self, id: &str, n: u64, k: u64) -> bool {
        if self.base.contains_key(id) {
            return false;
        }
        self.broadcasts
            .iter()
            .find(|b| b.moved.contains_key(id))
            .is_some_and(|b| b.number + k >= n)
    }
}

/// How many broadcasts apart a bot's newest state and its list of entities may be: its
/// report lists the entities it holds as it ends, and a crate knocked off the edge near the
/// end comes home as a new entity (a higher id), or one left, a moment before or after the
/// newest state it took. A second at the default 20 broadcasts a second.
pub const LIST_SLACK: u64 = 20;

/// Asserts that the crates in a bot's report `r` agree with the server's `summary`, each
/// compared with the server at the same moment (`who` names the bot in failures):
///
/// - the bot holds the crates the server's world held at the newest broadcast the bot took
///   anything from, but for crates that came or left within [`LIST_SLACK`] broadcasts of it;
/// - every crate the bot has holds a state from a server broadcast at most
///   [`STALE_BROADCASTS`] older than that newest (a crate never updated, or no longer, fails;
///   one that came home so lately that no refresh was due yet holds none);
/// - that state is where the server's broadcast of the same number had the crate, within
///   [`CRATE_TOLERANCE`].
///
/// That state is what the bot shows: a window draws an entity it does not own from the
/// poses it took. The bot's bodies are its own prediction between states (a resting crate
/// nudged by an extrapolated player is put back by the next state, within the 4 s refresh),
/// so they belong to no moment of the server's and are not compared; no position taken at
/// one moment is compared with one taken at another.
pub fn assert_crates_agree(who: &str, r: &Value, summary: &Value) {
    let server_crates = crates(&summary["entities"]);
    let sent = SentLog::of(summary);
    let all_mine = r["entities"].as_object().expect("entities is an object");
    let mine = crates(&r["entities"]);
    // The newest broadcast the bot took anything from.
    let newest = all_mine
        .values()
        .filter_map(|e| e["broadcast"].as_u64())
        .max()
        .unwrap_or_else(|| panic!("{who} took no state from any broadcast: {r}"));
    // The server's world then, against the bot's list. An entity the server's summary no
    // longer holds may have been a crate (its kind is not logged): it counts as one if the
    // bot does not hold it under any kind.
    assert!(
        newest >= sent.base_number,
        "{who}'s newest state is from broadcast {newest}, before the server's log ({})",
        sent.base_number
    );
    let world = sent.world_at(newest);
    let only_bot: Vec<&String> = mine.keys().filter(|k| !world.contains(*k)).collect();
    let only_server: Vec<&String> = world
        .iter()
        .filter(|k| !all_mine.contains_key(*k))
        .filter(|k| server_crates.contains_key(*k) || summary["entities"].get(k).is_none())
        .collect();
    let unexplained: Vec<&&String> = only_bot
        .iter()
        .chain(&only_server)
        .filter(|k| !sent.came_or_left_near(k, newest, LIST_SLACK))
        .collect();
    assert!(
        unexplained.is_empty(),
        "{who} has other crates than the server at broadcast {newest}: only the bot \
         {only_bot:?}, only the server {only_server:?}; of those, {unexplained:?} neither \
         came nor left near then"
    );
    let mut widest: f64 = 0.0;
    for id in mine.keys() {
        let e = &r["entities"][id];
        let Some(n) = e["broadcast"].as_u64() else {
            assert!(
                sent.came_since(id, newest, STALE_BROADCASTS),
                "{who}: crate {id} holds no state from any broadcast, and did not come lately: {e}"
            );
            continue;
        };
        assert!(
            newest - n <= STALE_BROADCASTS,
            "{who}: crate {id}'s state is from broadcast {n}, {} before the newest it took",
            newest - n
        );
        let q = sent.at(id, n).unwrap_or_else(|| {
            panic!(
                "{who}: crate {id}'s state is from broadcast {n}, when the server's world held \
                 no such entity, or before its log and the crate moved since"
            )
        });
        let d = gap(xyz(&e["received"]), q);
        assert!(
            d <= CRATE_TOLERANCE,
            "{who}: crate {id} as broadcast {n} reached the bot is {d} m from what the server sent\n\
             the bot's entry: {e}\nthe server's log of it: {}",
            sent.history(id, n.saturating_sub(60), newest)
        );
        widest = widest.max(d);
    }
    eprintln!(
        "{who}: {} crates, each as the server sent it at broadcast {newest} or before, \
         {} came or left near then; widest gap {:.2} mm",
        mine.len(),
        only_bot.len() + only_server.len(),
        widest * 1000.0
    );
}
