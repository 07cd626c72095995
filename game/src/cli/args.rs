//! The command line: every command and its flag groups (each command takes only its own
//! flags), and the readers of flag values.

use crate::cli::*;
use clap::{Args, Parser, Subcommand};

/// Tumbleyard: throw grenades, knock the crates (and your friends) off the yard.
///
/// Without a command it opens the game's start screen (host a game or join one).
#[derive(Parser, Debug)]
#[command(name = "lanyard-game", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    #[command(flatten)]
    pub(crate) ident: Ident,
    #[command(flatten)]
    pub(crate) disc: Disc,
    #[command(flatten)]
    pub(crate) meet: Meet,
    #[command(flatten)]
    pub(crate) arena: Arena,
    #[command(flatten)]
    pub(crate) shot: Screenshot,
}

/// Where games meet beyond the LAN (host, server, browse, the start screen).
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct Meet {
    /// A rendezvous server (HOST[:PORT], port 47820 by default; or one IPv6 and one IPv4
    /// address, comma-separated, to register over both): a server registers its game
    /// there so players beyond its LAN can join it by name; browsing lists what is
    /// registered there beside the LAN games.
    #[arg(long, env = "LANYARD_RENDEZVOUS", value_name = "HOST:PORT")]
    pub(crate) rendezvous: Option<String>,
}

impl Meet {
    pub(crate) fn addr(&self) -> Result<Option<Addrs>, String> {
        self.rendezvous.as_deref().map(rendezvous_addr).transpose()
    }
}

/// Joining by name through a rendezvous server (join, bot).
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ByName {
    /// Join the game registered under the name given instead of an address, at this
    /// rendezvous server (HOST[:PORT], or an IPv6 and an IPv4 address comma-separated, to
    /// ask over both and try the host's IPv6 address first): a path is punched through
    /// both NATs first.
    #[arg(long, value_name = "HOST:PORT")]
    pub(crate) rendezvous: Option<String>,
}

/// Who you are.
/// What a game's host is told, with a window (`host`) or without (`server`).
#[derive(Args, Debug, Clone)]
pub(crate) struct Hosting {
    /// At exit, write the players and entities as JSON to this file.
    #[arg(long)]
    pub(crate) summary: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) ident: Ident,
    #[command(flatten)]
    pub(crate) serve: Serve,
    #[command(flatten)]
    pub(crate) disc: Disc,
    #[command(flatten)]
    pub(crate) arena: Arena,
    #[command(flatten)]
    pub(crate) timed: Timed,
    #[command(flatten)]
    pub(crate) rec: Rec,
}

impl Hosting {
    /// The settings it comes to (an error for a port or a session option that cannot be).
    pub(crate) fn common(&self) -> Result<Common, String> {
        let c = Common::new(&self.ident, Some(&self.arena)).serve(&self.serve)?;
        Ok(c.disc(&self.disc).run(&self.timed, &self.rec))
    }
}

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct Ident {
    /// Your player name.
    #[arg(long, env = "LANYARD_NAME")]
    pub(crate) name: Option<String>,
    /// The password to give when joining.
    #[arg(long, env = "LANYARD_PASSWORD", hide_env_values = true)]
    pub(crate) password: Option<String>,
}

/// How a server serves (host, server).
#[derive(Args, Debug, Clone)]
pub(crate) struct Serve {
    /// UDP port the game listens on.
    #[arg(long, env = "LANYARD_PORT", default_value_t = DEFAULT_PORT)]
    pub(crate) port: u16,
    /// Players the server takes (the host counts).
    #[arg(long, env = "LANYARD_MAX_PLAYERS", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub(crate) max_players: u16,
    /// State broadcasts per second (under 30 unless you mean it).
    #[arg(long, env = "LANYARD_RATE", default_value_t = 20.0, value_parser = parse_rate)]
    pub(crate) rate: f32,
    #[command(flatten)]
    pub(crate) session: SessionFlags,
    #[command(flatten)]
    pub(crate) meet: Meet,
    /// Also serve the game's page on this TCP port (and the pages' WebRTC channels on this
    /// UDP port), so that a browser on the LAN plays at http://HOST:PORT. Needs the browser
    /// build (see the book: docs/src/playing.md).
    #[arg(long, env = "LANYARD_WEB")]
    pub(crate) web: Option<u16>,
}

/// Where LAN discovery goes.
#[derive(Args, Debug, Clone)]
pub(crate) struct Disc {
    /// Where LAN discovery requests go (a broadcast address and port). Tests and CI use
    /// the loopback broadcast 127.255.255.255.
    #[arg(
        long,
        env = "LANYARD_DISCOVERY_ADDR",
        default_value = "255.255.255.255:47800"
    )]
    pub(crate) discovery_addr: SocketAddr,
    /// Where LAN discovery requests also go over IPv6 (none by default: IPv4 only), for
    /// example the link-local all-nodes group on an interface, `[ff02::1%2]:47800`, or a
    /// host's address; servers answer on the same port over both families.
    #[arg(long, env = "LANYARD_DISCOVERY_ADDR6")]
    pub(crate) discovery_addr6: Option<SocketAddr>,
}

/// The arena.
#[derive(Args, Debug, Clone)]
pub(crate) struct Arena {
    /// The arena file.
    #[arg(long, default_value = DEFAULT_SCENE)]
    pub(crate) scene: PathBuf,
}

/// A run that ends by itself.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct Timed {
    /// Stop by yourself after this many seconds.
    #[arg(long, value_parser = parse_seconds)]
    pub(crate) seconds: Option<f32>,
}

/// A recording.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct Rec {
    /// Record this peer's world into FILE, to replay headless later.
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
}

/// Everything one run was given, with the defaults for what its command does not take.
#[derive(Debug, Clone)]
pub(crate) struct Common {
    pub(crate) port: u16,
    pub(crate) name: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) max_players: u16,
    pub(crate) rate: f32,
    pub(crate) discovery_addr: SocketAddr,
    pub(crate) discovery_addr6: Option<SocketAddr>,
    pub(crate) scene: PathBuf,
    pub(crate) seconds: Option<f32>,
    pub(crate) record: Option<PathBuf>,
    pub(crate) rendezvous: Option<Addrs>,
    pub(crate) web: Option<u16>,
}

impl Common {
    pub(crate) fn new(ident: &Ident, arena: Option<&Arena>) -> Common {
        Common {
            port: DEFAULT_PORT,
            name: ident.name.clone(),
            password: ident.password.clone(),
            max_players: 8,
            rate: 20.0,
            discovery_addr: SocketAddr::from(([255, 255, 255, 255], discovery::DEFAULT_PORT)),
            discovery_addr6: None,
            scene: arena.map_or_else(|| DEFAULT_SCENE.into(), |a| a.scene.clone()),
            seconds: None,
            record: None,
            rendezvous: None,
            web: None,
        }
    }

    pub(crate) fn serve(mut self, s: &Serve) -> Result<Common, String> {
        self.port = s.port;
        self.max_players = s.max_players;
        self.rate = s.rate;
        self.rendezvous = s.meet.addr()?;
        self.web = s.web;
        Ok(self)
    }

    pub(crate) fn disc(mut self, d: &Disc) -> Common {
        self.discovery_addr = d.discovery_addr;
        self.discovery_addr6 = d.discovery_addr6;
        self
    }

    /// Where browsing asks: the discovery address, and the IPv6 one if there is one.
    pub(crate) fn discovery(&self) -> Addrs {
        Addrs::new(
            [self.discovery_addr]
                .into_iter()
                .chain(self.discovery_addr6),
        )
        .unwrap_or(Addrs::from(self.discovery_addr))
    }

    pub(crate) fn run(mut self, t: &Timed, r: &Rec) -> Common {
        self.seconds = t.seconds;
        self.record = r.record.clone();
        self
    }
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Host a game in a window: a listen-server where you play too.
    #[command(
        mut_arg("name", |a| a.help("Your player name, which also names the game in lists")),
        mut_arg("password", |a| a.help("The password players must give to join"))
    )]
    Host {
        #[command(flatten)]
        hosting: Hosting,
        /// Host with no window: the host's player is played by a bot (its choices seeded
        /// by --seed), and standard input is the console, as on `server`. Works in the
        /// headless build too.
        #[arg(long)]
        headless: bool,
        /// With --headless: the seed of the host's bot.
        #[arg(long, default_value_t = 1, requires = "headless")]
        seed: u64,
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
    #[command(
        mut_arg("name", |a| a.help("The server's name, as browse and the start screen list it")),
        mut_arg("password", |a| a.help("The password players must give to join")),
        mut_arg("max_players", |a| a.help("Players the server takes (spectators aside)")),
        mut_arg("seconds", |a| a.help(
            "Shut down gracefully after this many seconds [default: serve until Ctrl-C, SIGTERM or `quit`]"
        ))
    )]
    Server {
        #[command(flatten)]
        hosting: Hosting,
        /// Serve the server's figures (players, frame time, kbit/s, state age, sessions
        /// lost, refused hellos) in the Prometheus text format over HTTP on this address:
        /// PORT (on 127.0.0.1) or IP:PORT.
        #[arg(long, env = "LANYARD_METRICS", value_name = "ADDR", value_parser = crate::cli::metrics::parse_metrics_addr)]
        metrics: Option<std::net::SocketAddr>,
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
    /// reach them. It carries game traffic only when punching fails (it relays it then).
    /// Ctrl-C, SIGTERM or --seconds end it, and it prints what it did as JSON.
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
        /// Bytes a second one relayed session may carry (when punching fails).
        #[arg(long, default_value_t = 64 * 1024, value_name = "BYTES", value_parser = clap::value_parser!(u32).range(2048..))]
        relay_rate: u32,
        /// Bytes a second the relay carries in all.
        #[arg(long, default_value_t = 4 * 1024 * 1024, value_name = "BYTES", value_parser = clap::value_parser!(u32).range(2048..))]
        relay_total: u32,
        #[command(flatten)]
        timed: Timed,
    },
    /// Replay a recording headless and check it bit for bit, or watch it.
    Replay {
        /// The recording.
        file: PathBuf,
        /// Check the world hash at every tick, and exit non-zero at the first divergence,
        /// naming the tick and the entities that differ. This is what `replay` does without
        /// `--view`: the flag only says so.
        #[arg(long)]
        verify: bool,
        /// Show the replay in a window instead.
        #[arg(long, conflicts_with = "verify")]
        view: bool,
        #[command(flatten)]
        shot: Screenshot,
    },
    /// Join a game as a scripted player with no window; print a JSON report at the end.
    #[command(mut_arg("seconds", |a| a.help(
        "Leave after this many seconds [default: play until the session ends]"
    )))]
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
        /// Where LAN discovery goes: a bot that takes a game over answers it there.
        #[command(flatten)]
        disc: Disc,
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
pub(crate) struct SessionFlags {
    /// Seconds a player whose link dropped keeps its session (id, player, score) to
    /// resume it; 0 ends the session when it times out.
    #[arg(long, env = "LANYARD_GRACE", default_value_t = 30.0, value_name = "SECONDS", value_parser = parse_grace)]
    pub(crate) grace: f32,
    /// Spectators the server takes, on top of the players.
    #[arg(long, env = "LANYARD_MAX_SPECTATORS", default_value_t = 8, value_parser = clap::value_parser!(u16).range(0..=64))]
    pub(crate) max_spectators: u16,
}

impl SessionFlags {
    pub(crate) fn apply(&self, o: &mut Options) {
        o.grace = self.grace;
        o.max_spectators = self.max_spectators;
    }
}

pub(crate) fn parse_grace(s: &str) -> Result<f32, String> {
    let v: f32 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(v.is_finite() && (0.0..=3600.0).contains(&v)) {
        return Err("the grace window is 0 to 3600 seconds".into());
    }
    Ok(v)
}

#[derive(Args, Debug, Clone)]
pub(crate) struct Screenshot {
    /// Render `--frames` frames, save a PNG here and exit.
    #[arg(long, requires = "frames")]
    pub(crate) screenshot: Option<PathBuf>,
    /// Frames to render before the screenshot.
    #[arg(long)]
    pub(crate) frames: Option<u32>,
    /// The most frames the window draws per second (0: no cap).
    #[arg(long, default_value_t = 120)]
    pub(crate) fps: u32,
    /// For tests: advance the game by exactly this many seconds per drawn frame, whatever
    /// the wall clock says.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, hide = true)]
    pub(crate) frame_time: Option<f32>,
    /// For tests: key presses to make, as lines of `FRAME KEY` (KEY: f, space).
    #[arg(long, value_name = "FILE", hide = true)]
    pub(crate) input_script: Option<PathBuf>,
}

impl Screenshot {
    #[cfg(feature = "client")]
    pub(crate) fn window(&self) -> Result<window::WindowOpts, String> {
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
            shot_after: None,
        })
    }
}

pub(crate) fn parse_rate(s: &str) -> Result<f32, String> {
    let r: f32 = s.parse().map_err(|_| format!("'{s}' is not a number"))?;
    if !(r.is_finite() && r > 0.0 && r <= 120.0) {
        return Err("the rate must be above 0 and at most 120 per second".into());
    }
    Ok(r)
}

pub(crate) fn parse_ttl(s: &str) -> Result<f32, String> {
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

pub(crate) fn parse_seconds(s: &str) -> Result<f32, String> {
    let v: f32 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err("seconds must be a positive number".into());
    }
    Ok(v)
}
