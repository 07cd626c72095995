//! `lanyard-game`: Tumbleyard, the Lanyard sample game.

use clap::{Args, Parser, Subcommand};
use lanyard::replay::Replay;
use lanyard_game::agones::Agones;
use lanyard_game::bot::Bot;
use lanyard_game::game::{Console, DEFAULT_PORT, Game, Options, rendezvous_addr, server_addr};
use lanyard_game::runner;
use lanyard_game::scene::{DEFAULT_SCENE, Scene};
use lanyard_net::discovery;
use lanyard_net::rendezvous::{self, RendezvousConfig, RendezvousServer};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

#[cfg(feature = "client")]
mod window;

/// Tumbleyard: throw grenades, knock the crates (and your friends) off the yard.
///
/// Without a command it opens the game's start screen (host a game or join one).
#[derive(Parser, Debug)]
#[command(name = "lanyard-game", version, about, long_about = None, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    ident: Ident,
    #[command(flatten)]
    disc: Disc,
    #[command(flatten)]
    meet: Meet,
    #[command(flatten)]
    arena: Arena,
    #[command(flatten)]
    shot: Screenshot,
}

/// Where games meet beyond the LAN (host, server, browse, the start screen).
#[derive(Args, Debug, Clone, Default)]
struct Meet {
    /// A rendezvous server (HOST[:PORT], port 47820 by default): a server registers its
    /// game there so players beyond its LAN can join it by name; browsing lists what is
    /// registered there beside the LAN games.
    #[arg(long, env = "LANYARD_RENDEZVOUS", value_name = "HOST:PORT")]
    rendezvous: Option<String>,
}

impl Meet {
    fn addr(&self) -> Result<Option<SocketAddr>, String> {
        self.rendezvous.as_deref().map(rendezvous_addr).transpose()
    }
}

/// Joining by name through a rendezvous server (join, bot).
#[derive(Args, Debug, Clone, Default)]
struct ByName {
    /// Join the game registered under the name given instead of an address, at this
    /// rendezvous server (HOST[:PORT]): a path is punched through both NATs first.
    #[arg(long, value_name = "HOST:PORT")]
    rendezvous: Option<String>,
}

/// Who you are.
#[derive(Args, Debug, Clone, Default)]
struct Ident {
    /// Your player name (the server's name for `server`).
    #[arg(long, env = "LANYARD_NAME")]
    name: Option<String>,
    /// The password to give when joining (the one to ask for `host` and `server`).
    #[arg(long, env = "LANYARD_PASSWORD", hide_env_values = true)]
    password: Option<String>,
}

/// How a server serves (host, server).
#[derive(Args, Debug, Clone)]
struct Serve {
    /// UDP port the game listens on.
    #[arg(long, env = "LANYARD_PORT", default_value_t = DEFAULT_PORT)]
    port: u16,
    /// Players the server takes (the host counts).
    #[arg(long, env = "LANYARD_MAX_PLAYERS", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    max_players: u16,
    /// State broadcasts per second (under 30 unless you mean it).
    #[arg(long, env = "LANYARD_RATE", default_value_t = 20.0, value_parser = parse_rate)]
    rate: f32,
    #[command(flatten)]
    session: SessionFlags,
    #[command(flatten)]
    meet: Meet,
}

/// Where LAN discovery goes.
#[derive(Args, Debug, Clone)]
struct Disc {
    /// Where LAN discovery requests go (a broadcast address and port). Tests and CI use
    /// the loopback broadcast 127.255.255.255.
    #[arg(
        long,
        env = "LANYARD_DISCOVERY_ADDR",
        default_value = "255.255.255.255:47800"
    )]
    discovery_addr: SocketAddr,
}

/// The arena.
#[derive(Args, Debug, Clone)]
struct Arena {
    /// The arena file.
    #[arg(long, default_value = DEFAULT_SCENE)]
    scene: PathBuf,
}

/// A run that ends by itself.
#[derive(Args, Debug, Clone, Default)]
struct Timed {
    /// Stop by yourself after this many seconds.
    #[arg(long, value_parser = parse_seconds)]
    seconds: Option<f32>,
}

/// A recording.
#[derive(Args, Debug, Clone, Default)]
struct Rec {
    /// Record this peer's world into FILE, to replay headless later.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
}

/// Everything one run was given, with the defaults for what its command does not take.
#[derive(Debug, Clone)]
struct Common {
    port: u16,
    name: Option<String>,
    password: Option<String>,
    max_players: u16,
    rate: f32,
    discovery_addr: SocketAddr,
    scene: PathBuf,
    seconds: Option<f32>,
    record: Option<PathBuf>,
    rendezvous: Option<SocketAddr>,
}

impl Common {
    fn new(ident: &Ident, arena: Option<&Arena>) -> Common {
        Common {
            port: DEFAULT_PORT,
            name: ident.name.clone(),
            password: ident.password.clone(),
            max_players: 8,
            rate: 20.0,
            discovery_addr: SocketAddr::from(([255, 255, 255, 255], discovery::DEFAULT_PORT)),
            scene: arena.map_or_else(|| DEFAULT_SCENE.into(), |a| a.scene.clone()),
            seconds: None,
            record: None,
            rendezvous: None,
        }
    }

    fn serve(mut self, s: &Serve) -> Result<Common, String> {
        self.port = s.port;
        self.max_players = s.max_players;
        self.rate = s.rate;
        self.rendezvous = s.meet.addr()?;
        Ok(self)
    }

    fn disc(mut self, d: &Disc) -> Common {
        self.discovery_addr = d.discovery_addr;
        self
    }

    fn run(mut self, t: &Timed, r: &Rec) -> Common {
        self.seconds = t.seconds;
        self.record = r.record.clone();
        self
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Host a game in a window: a listen-server where you play too.
    Host {
        /// At exit, write the players and entities as JSON to this file.
        #[arg(long)]
        summary: Option<PathBuf>,
        #[command(flatten)]
        ident: Ident,
        #[command(flatten)]
        serve: Serve,
        #[command(flatten)]
        disc: Disc,
        #[command(flatten)]
        arena: Arena,
        #[command(flatten)]
        timed: Timed,
        #[command(flatten)]
        rec: Rec,
        #[command(flatten)]
        shot: Screenshot,
    },
    /// Join a game in a window. Without an address, find LAN games and pick one.
    Join {
        /// The server: HOST[:PORT] (with --rendezvous: the name it registered under).
        addr: Option<String>,
        #[command(flatten)]
        by_name: ByName,
        /// Watch the game: no player of your own, and no player slot taken.
        #[arg(long)]
        spectate: bool,
        #[command(flatten)]
        ident: Ident,
        #[command(flatten)]
        disc: Disc,
        #[command(flatten)]
        arena: Arena,
        #[command(flatten)]
        rec: Rec,
        #[command(flatten)]
        shot: Screenshot,
    },
    /// Run a dedicated server with no window. Its standard input is a console: `players`,
    /// `kick NAME [REASON]`, `ban NAME [REASON]`, `say TEXT`, `quit`. Ctrl-C, SIGTERM,
    /// `quit` and `--seconds` all end it gracefully: clients are told, the summary and the
    /// recording are written, and it exits with status 0.
    Server {
        /// At exit, write the players and entities as JSON to this file.
        #[arg(long)]
        summary: Option<PathBuf>,
        #[command(flatten)]
        ident: Ident,
        #[command(flatten)]
        serve: Serve,
        #[command(flatten)]
        disc: Disc,
        #[command(flatten)]
        arena: Arena,
        #[command(flatten)]
        timed: Timed,
        #[command(flatten)]
        rec: Rec,
    },
    /// List the LAN games that answer (and those registered at a rendezvous server, with
    /// --rendezvous), then exit.
    Browse {
        /// Seconds to wait for answers.
        #[arg(long, default_value_t = 1.0, value_parser = parse_seconds)]
        wait: f32,
        #[command(flatten)]
        disc: Disc,
        #[command(flatten)]
        meet: Meet,
    },
    /// Run a rendezvous server (headless, no physics): on a public address, it lets
    /// servers behind home routers register by name and players elsewhere find and
    /// reach them. It carries no game traffic. Ctrl-C, SIGTERM or --seconds end it, and it
    /// prints what it did as JSON.
    Rendezvous {
        /// UDP port it listens on.
        #[arg(long, env = "LANYARD_RENDEZVOUS_PORT", default_value_t = rendezvous::DEFAULT_PORT)]
        port: u16,
        /// Seconds a registration lives unless its server refreshes it (every third of it).
        #[arg(long, default_value_t = 30.0, value_name = "SECONDS", value_parser = parse_ttl)]
        ttl: f32,
        /// Games one IP address may register at once.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
        max_per_address: u16,
        #[command(flatten)]
        timed: Timed,
    },
    /// Replay a recording headless and check it bit for bit, or watch it.
    Replay {
        /// The recording.
        file: PathBuf,
        /// Check the world hash at every tick (the default); exit non-zero at the first
        /// divergence, naming the tick and the entities that differ.
        #[arg(long)]
        verify: bool,
        /// Show the replay in a window instead.
        #[arg(long, conflicts_with = "verify")]
        view: bool,
        #[command(flatten)]
        shot: Screenshot,
    },
    /// Join a game as a scripted player with no window; print a JSON report at the end.
    Bot {
        /// The server: HOST[:PORT] (with --rendezvous: the name it registered under).
        addr: String,
        #[command(flatten)]
        by_name: ByName,
        /// The seed of the bot's choices.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Watch instead of playing: no player, no throws; the report still lists what
        /// it saw.
        #[arg(long)]
        spectate: bool,
        #[command(flatten)]
        ident: Ident,
        #[command(flatten)]
        arena: Arena,
        #[command(flatten)]
        timed: Timed,
        #[command(flatten)]
        rec: Rec,
    },
}

/// How a server keeps sessions (server, host).
#[derive(Args, Debug, Clone)]
struct SessionFlags {
    /// Seconds a player whose link dropped keeps its session (id, player, score) to
    /// resume it; 0 ends the session when it times out.
    #[arg(long, env = "LANYARD_GRACE", default_value_t = 30.0, value_name = "SECONDS", value_parser = parse_grace)]
    grace: f32,
    /// Spectators the server takes, on top of the players.
    #[arg(long, env = "LANYARD_MAX_SPECTATORS", default_value_t = 8, value_parser = clap::value_parser!(u16).range(0..=64))]
    max_spectators: u16,
}

impl SessionFlags {
    fn apply(&self, o: &mut Options) {
        o.grace = self.grace;
        o.max_spectators = self.max_spectators;
    }
}

fn parse_grace(s: &str) -> Result<f32, String> {
    let v: f32 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(v.is_finite() && (0.0..=3600.0).contains(&v)) {
        return Err("the grace window is 0 to 3600 seconds".into());
    }
    Ok(v)
}

/// A flag that SIGINT (Ctrl-C) and SIGTERM raise instead of killing the process, so it
/// can end gracefully.
fn stop_flag() -> Result<Arc<AtomicBool>, String> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&flag))
            .map_err(|e| format!("cannot handle signal {sig}: {e}"))?;
    }
    Ok(flag)
}

/// The lines typed on standard input, read on a thread of their own.
fn console_lines() -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

#[derive(Args, Debug, Clone)]
struct Screenshot {
    /// Render `--frames` frames, save a PNG here and exit.
    #[arg(long, requires = "frames")]
    screenshot: Option<PathBuf>,
    /// Frames to render before the screenshot.
    #[arg(long)]
    frames: Option<u32>,
    /// The most frames the window draws per second (0: no cap).
    #[arg(long, default_value_t = 120)]
    fps: u32,
    /// For tests: advance the game by exactly this many seconds per drawn frame, whatever
    /// the wall clock says.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, hide = true)]
    frame_time: Option<f32>,
    /// For tests: key presses to make, as lines of `FRAME KEY` (KEY: f, space).
    #[arg(long, value_name = "FILE", hide = true)]
    input_script: Option<PathBuf>,
}

impl Screenshot {
    #[cfg(feature = "client")]
    fn window(&self) -> Result<window::WindowOpts, String> {
        let script = match &self.input_script {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
                window::InputScript::parse(&text)?
            }
            None => window::InputScript::default(),
        };
        Ok(window::WindowOpts {
            screenshot: self.screenshot.clone(),
            frames: self.frames,
            fps: self.fps,
            frame_time: self.frame_time,
            script,
        })
    }
}

fn parse_rate(s: &str) -> Result<f32, String> {
    let r: f32 = s.parse().map_err(|_| format!("'{s}' is not a number"))?;
    if !(r.is_finite() && r > 0.0 && r <= 120.0) {
        return Err("the rate must be above 0 and at most 120 per second".into());
    }
    Ok(r)
}

fn parse_ttl(s: &str) -> Result<f32, String> {
    let v: f32 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    RendezvousConfig {
        ttl: v,
        ..RendezvousConfig::default()
    }
    .validate()?;
    Ok(v)
}

fn parse_seconds(s: &str) -> Result<f32, String> {
    let v: f32 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err("seconds must be a positive number".into());
    }
    Ok(v)
}

fn options(c: &Common, default_name: &str) -> Result<Options, String> {
    let scene = Scene::load(&c.scene).map_err(|e| e.to_string())?;
    if c.rate >= 30.0 {
        eprintln!(
            "note: --rate {} is 30 or more broadcasts per second",
            c.rate
        );
    }
    Ok(Options {
        port: c.port,
        name: c.name.clone().unwrap_or_else(|| default_name.to_owned()),
        password: c.password.clone(),
        max_players: c.max_players,
        rate: c.rate,
        discovery: Some(c.discovery_addr),
        rendezvous: c.rendezvous,
        ..Options::new(scene)
    })
}

fn write_summary(game: &Game, path: &Path) -> Result<(), String> {
    let text = serde_json::to_string_pretty(&game.summary_json()).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn server(c: &Common, summary: Option<&Path>, flags: &SessionFlags) -> Result<(), String> {
    let mut o = options(c, "Tumbleyard server")?;
    flags.apply(&mut o);
    let name = o.name.clone();
    let stop = stop_flag()?;
    let mut game = Game::server(o, None)?;
    if let Some(r) = &c.record {
        game.record_to(r)?;
    }
    println!(
        "{name}: serving '{}' on UDP port {} (discovery on {}{}), up to {} players and {} spectators; type 'help' for the console",
        game.scene.name,
        game.local_addr().port(),
        c.discovery_addr,
        c.rendezvous
            .map(|r| format!(", registering at the rendezvous server {r}"))
            .unwrap_or_default(),
        c.max_players,
        flags.max_spectators,
    );
    let mut agones = Agones::from_env()?;
    if let Some(a) = &mut agones {
        a.ready()?;
        println!("told the Agones SDK the server is ready");
    }
    let console = console_lines();
    let mut why = "time up";
    let mut since = 0;
    runner::run(
        &mut game,
        c.seconds,
        |g, _| {
            while let Ok(line) = console.try_recv() {
                match g.console(&line) {
                    Console::Lines(lines) => lines.iter().for_each(|l| println!("{l}")),
                    Console::Quit => {
                        why = "quit";
                        return false;
                    }
                }
            }
            if stop.load(Ordering::Relaxed) {
                why = "a signal";
                return false;
            }
            if let Some(a) = &mut agones {
                a.tick();
            }
            true
        },
        |g, ms| {
            for m in g.messages.drain(..) {
                println!("{m}");
            }
            since += 1;
            if since >= 5 {
                since = 0;
                let sessions = g.net.sessions();
                let watching = sessions.iter().filter(|s| s.spectator).count();
                let each: String = sessions
                    .iter()
                    .map(|s| {
                        format!(
                            " | {} {:.0} ms {:.0}% {}",
                            s.name,
                            s.stats.ping_ms,
                            s.stats.loss * 100.0,
                            g.score_of(&s.name)
                        )
                    })
                    .collect();
                println!(
                    "players {}/{} | spectators {} | entities {} | frame {:.2} ms | in {:.1} kbit/s | out {:.1} kbit/s{each}",
                    sessions.len() - watching,
                    c.max_players,
                    watching,
                    g.group.len(),
                    ms,
                    g.traffic.kbps_in,
                    g.traffic.kbps_out
                );
            }
        },
    );
    println!(
        "shutting down ({why}): telling {} clients",
        game.net.sessions().len()
    );
    // The summary is the world as it ended, before the players' sessions are closed.
    let written = summary.map_or(Ok(()), |p| write_summary(&game, p));
    game.shutdown();
    if let Some(a) = &mut agones
        && let Err(e) = a.shutdown()
    {
        eprintln!("lanyard-game: {e}");
    }
    written
}

fn bot(c: &Common, addr: &str, by_name: &ByName, seed: u64, spectate: bool) -> Result<(), String> {
    let mut o = options(c, &format!("bot-{seed}"))?;
    o.spectate = spectate;
    let entropy = lanyard_game::game::entropy();
    let mut game = match &by_name.rendezvous {
        Some(rv) => {
            let rv = rendezvous_addr(rv)?;
            let game = Game::client_by_name(o, rv, addr, entropy)?;
            eprintln!("reached '{addr}' through the rendezvous server {rv}");
            game
        }
        None => Game::client(o, server_addr(addr)?, entropy)?,
    };
    if let Some(r) = &c.record {
        game.record_to(r)?;
    }
    let mut brain = Bot::new(seed, c.seconds);
    let dt = 1.0 / lanyard_game::game::TICK_HZ;
    runner::run(
        &mut game,
        c.seconds,
        |g, left| {
            if !spectate {
                let input = brain.input(g, dt, left);
                g.set_input(input);
            }
            true
        },
        |g, _| {
            for m in g.messages.drain(..) {
                eprintln!("{m}");
            }
        },
    );
    // However the run ended, the report is printed; the exit status says whether the bot
    // ran its full time.
    let ended = game.end_reason.clone().unwrap_or_else(|| "time up".into());
    let report = game.bot_report_json(&ended);
    game.shutdown();
    println!("{report}");
    match ended.as_str() {
        "time up" => Ok(()),
        _ => Err(game.ended.clone().unwrap_or(ended)),
    }
}

fn browse(c: &Common, wait: f32, meet: &Meet) -> Result<(), String> {
    let rv = meet.addr()?;
    // The rendezvous server is asked while the LAN answers.
    let remote = rv.map(|rv| std::thread::spawn(move || rendezvous::list(rv)));
    let found = discovery::browse(c.discovery_addr, Duration::from_secs_f32(wait))
        .map_err(|e| format!("cannot browse: {e}"))?;
    if found.is_empty() {
        println!("no games found on {}", c.discovery_addr);
    }
    for f in found {
        println!(
            "{}  {}  {}/{} players  {}/{} spectators  {}  {:.0} ms{}",
            f.addr,
            f.info.name,
            f.info.players,
            f.info.max_players,
            f.info.spectators,
            f.info.max_spectators,
            if f.info.password { "password" } else { "open" },
            f.ping_ms,
            if f.compatible() {
                String::new()
            } else {
                format!("  incompatible (protocol {})", f.info.version)
            }
        );
    }
    let (Some(rv), Some(remote)) = (rv, remote) else {
        return Ok(());
    };
    let games = remote
        .join()
        .map_err(|_| "the rendezvous listing failed".to_owned())?
        .map_err(|e| format!("cannot list the games at {rv}: {e}"))?;
    if games.is_empty() {
        println!("no games registered at the rendezvous server {rv}");
    }
    for g in &games {
        println!(
            "{}  via rendezvous {rv}  {}/{} players  {}/{} spectators  {}{}",
            g.name,
            g.players,
            g.max_players,
            g.spectators,
            g.max_spectators,
            if g.password { "password" } else { "open" },
            if g.version == lanyard_net::PROTOCOL_VERSION {
                String::new()
            } else {
                format!("  incompatible (protocol {})", g.version)
            }
        );
    }
    if let Some(g) = games.first() {
        println!(
            "join one with: lanyard-game join --rendezvous {rv} '{}'",
            g.name
        );
    }
    Ok(())
}

/// Runs a rendezvous server on `port` until `seconds` pass or a signal comes, then prints
/// what it did as one JSON line.
fn rendezvous_server(
    port: u16,
    config: RendezvousConfig,
    seconds: Option<f32>,
) -> Result<(), String> {
    use lanyard_net::Transport;
    use lanyard_net::udp::UdpTransport;
    let (ttl, per) = (config.ttl, config.max_per_address);
    let mut rv = RendezvousServer::new(config, lanyard_game::game::entropy())?;
    let any = SocketAddr::from(([0, 0, 0, 0], port));
    let mut socket =
        UdpTransport::bind(any).map_err(|e| format!("cannot listen on UDP port {port}: {e}"))?;
    println!(
        "rendezvous server on UDP port {} (registrations live {ttl} s unless refreshed, at most {per} per address)",
        socket.local_addr().port()
    );
    let stop = stop_flag()?;
    let start = std::time::Instant::now();
    let mut last = (0.0, rv.stats());
    loop {
        let now = start.elapsed().as_secs_f64();
        if stop.load(Ordering::Relaxed) || seconds.is_some_and(|s| now >= f64::from(s)) {
            break;
        }
        socket.wait(Duration::from_millis(100));
        while let Some((from, bytes)) = socket.recv() {
            rv.receive(start.elapsed().as_secs_f64(), from, &bytes);
        }
        for (to, bytes) in rv.drain_outgoing() {
            socket.send(to, &bytes);
        }
        if now - last.0 >= 10.0 {
            rv.expire(now);
            let s = rv.stats();
            if s != last.1 {
                println!(
                    "games {} | registered {} | expired {} | introductions {} | in {} B | out {} B | ignored {}",
                    s.games,
                    s.registrations,
                    s.expired,
                    s.introductions,
                    s.bytes_in,
                    s.bytes_out,
                    s.ignored
                );
            }
            last = (now, s);
        }
    }
    let s = rv.stats();
    println!(
        "{}",
        serde_json::json!({
            "games": s.games,
            "registrations": s.registrations,
            "refreshes": s.refreshes,
            "expired": s.expired,
            "unregistered": s.unregistered,
            "refused": s.refused,
            "introductions": s.introductions,
            "lists": s.lists,
            "challenges": s.challenges,
            "ignored": s.ignored,
            "datagrams_in": s.datagrams_in,
            "bytes_in": s.bytes_in,
            "datagrams_out": s.datagrams_out,
            "bytes_out": s.bytes_out,
            "relayed_bytes": 0,
        })
    );
    Ok(())
}

/// On Linux a window needs an X11 or Wayland display; without one, macroquad would panic
/// deep inside X11. Say so plainly instead.
#[cfg(feature = "client")]
fn check_display() -> Result<(), String> {
    let missing = |v: &str| std::env::var_os(v).is_none_or(|s| s.is_empty());
    if cfg!(target_os = "linux") && missing("DISPLAY") && missing("WAYLAND_DISPLAY") {
        return Err(
            "there is no display to open a window on (DISPLAY is not set). \
             On a machine without one, run the dedicated server: \
             `lanyard-game server` (or build with --no-default-features)"
                .into(),
        );
    }
    Ok(())
}

fn replay_verify(file: &Path) -> Result<(), String> {
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let registry = std::sync::Arc::new(lanyard_game::kinds::registry());
    let mut replay =
        Replay::open(&bytes, registry).map_err(|e| format!("{}: {e}", file.display()))?;
    let total = replay.len();
    let long = total > 2000;
    let outcome = replay
        .verify(|done, total| {
            if long && done < total {
                eprint!(
                    "\rreplaying {done}/{total} ticks ({:.0}%)",
                    done as f64 * 100.0 / total as f64
                );
            }
        })
        .map_err(|e| format!("{}: {e}", file.display()))?;
    if long {
        eprintln!();
    }
    match outcome {
        None => {
            println!(
                "{}: all {total} ticks match (recorded by {}, final hash {:016x})",
                file.display(),
                replay.header().recorded_by,
                replay.group().state_hash()
            );
            Ok(())
        }
        Some(d) => Err(format!("{}: {d}", file.display()).trim_end().to_owned()),
    }
}

/// Without `--name`, a window plays under the name remembered from the start screen.
#[cfg(feature = "client")]
fn remembered(o: &mut Options, ident: &Ident) {
    if ident.name.is_none()
        && let Some(name) = window::remembered_name()
    {
        o.name = name;
    }
}

/// Logs go to standard error, filtered by `RUST_LOG` (by default: what Lanyard does at
/// the info level, and warnings from everything else).
fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("warn,lanyard_net=info,lanyard_game=info")
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs();
    let result = match &cli.command {
        Some(Command::Server {
            summary,
            ident,
            serve,
            disc,
            arena,
            timed,
            rec,
        }) => Common::new(ident, Some(arena))
            .serve(serve)
            .map(|c| c.disc(disc).run(timed, rec))
            .and_then(|c| server(&c, summary.as_deref(), &serve.session)),
        Some(Command::Bot {
            addr,
            by_name,
            seed,
            spectate,
            ident,
            arena,
            timed,
            rec,
        }) => {
            let c = Common::new(ident, Some(arena)).run(timed, rec);
            bot(&c, addr, by_name, *seed, *spectate)
        }
        Some(Command::Browse { wait, disc, meet }) => browse(
            &Common::new(&Ident::default(), None).disc(disc),
            *wait,
            meet,
        ),
        Some(Command::Rendezvous {
            port,
            ttl,
            max_per_address,
            timed,
        }) => rendezvous_server(
            *port,
            RendezvousConfig {
                ttl: *ttl,
                max_per_address: *max_per_address,
                ..RendezvousConfig::default()
            },
            timed.seconds,
        ),
        Some(Command::Replay {
            file, view: false, ..
        }) => replay_verify(file),
        #[cfg(feature = "client")]
        Some(Command::Replay {
            file,
            view: true,
            shot,
            ..
        }) => check_display().and_then(|()| window::replay(file, shot.window()?)),
        #[cfg(not(feature = "client"))]
        Some(Command::Replay { view: true, .. }) => {
            Err("this build has no window: use `replay FILE --verify`".into())
        }
        #[cfg(feature = "client")]
        Some(Command::Host {
            summary,
            ident,
            serve,
            disc,
            arena,
            timed,
            rec,
            shot,
        }) => (|| {
            check_display()?;
            let c = Common::new(ident, Some(arena))
                .serve(serve)?
                .disc(disc)
                .run(timed, rec);
            let mut o = options(&c, "host")?;
            remembered(&mut o, ident);
            serve.session.apply(&mut o);
            let stop = stop_flag()?;
            window::host(
                o,
                c.seconds,
                summary.clone(),
                shot.window()?,
                c.record.clone(),
                stop,
            )
        })(),
        #[cfg(feature = "client")]
        Some(Command::Join {
            addr,
            by_name,
            spectate,
            ident,
            disc,
            arena,
            rec,
            shot,
        }) => (|| {
            check_display()?;
            let c = Common::new(ident, Some(arena))
                .disc(disc)
                .run(&Timed::default(), rec);
            let mut o = options(&c, "player")?;
            remembered(&mut o, ident);
            o.spectate = *spectate;
            let rv = by_name
                .rendezvous
                .as_deref()
                .map(rendezvous_addr)
                .transpose()?;
            let target = match (rv, addr) {
                (Some(rv), Some(name)) => Some(window::Target::Named(rv, name.clone())),
                (None, Some(a)) => Some(window::Target::Addr(server_addr(a)?)),
                // The start screen, listing the rendezvous server's games too.
                (rv, None) => {
                    o.rendezvous = rv;
                    None
                }
            };
            window::join(
                o,
                target,
                c.discovery_addr,
                shot.window()?,
                c.record.clone(),
            )
        })(),
        #[cfg(feature = "client")]
        None => (|| {
            check_display()?;
            let mut c = Common::new(&cli.ident, Some(&cli.arena)).disc(&cli.disc);
            c.rendezvous = cli.meet.addr()?;
            let mut o = options(&c, "player")?;
            remembered(&mut o, &cli.ident);
            window::menu(o, c.discovery_addr, cli.shot.window()?)
        })(),
        #[cfg(not(feature = "client"))]
        Some(Command::Host { .. }) | Some(Command::Join { .. }) | None => {
            let _ = (&cli.ident, &cli.disc, &cli.meet, &cli.arena, &cli.shot);
            Err(
            "this build has no window (it was built without the `client` feature): use `server`, `bot` or `browse`"
                .into(),
        )
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lanyard-game: {e}");
            ExitCode::FAILURE
        }
    }
}
