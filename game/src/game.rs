//! A running Tumbleyard peer: its world, its NetManager and socket, and the rules.
//!
//! The same [`Game`] serves the dedicated server, the host of a listen-server game (a
//! server with a player of its own), a windowed client and a bot. The caller drives it
//! with [`Game::tick`] at a fixed rate and reads what it needs to draw or report.

use crate::events::GameEvent;
use crate::kinds::{self, Crate, CrateParams, Grenade, Player, PlayerInput, PlayerParams};
use crate::scene::Scene;
use crate::witness::{Received, ServerLog};
use lanyard::prelude::*;
use lanyard::{KindId, decode_params};
use lanyard_net::discovery::{Responder, ServerInfo};
use lanyard_net::rendezvous::{self, Registrar, RegistrarEvent};
use lanyard_net::udp::UdpTransport;
use lanyard_net::{
    DisconnectReason, Entropy, NetConfig, NetEvent, NetManager, PROTOCOL_VERSION, Transport,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// The game's UDP port when none is given.
pub const DEFAULT_PORT: u16 = 47810;

/// Ticks per second.
pub const TICK_HZ: f32 = 60.0;

/// How a peer is set up.
#[derive(Debug, Clone)]
pub struct Options {
    /// The arena.
    pub scene: Scene,
    /// Server: the port to listen on.
    pub port: u16,
    /// The player's name (host and clients), or the server's name (dedicated server).
    pub name: String,
    /// Server: the password to ask; client: the password to give.
    pub password: Option<String>,
    /// Server: players it takes (the host counts).
    pub max_players: u16,
    /// Broadcasts per second.
    pub rate: f32,
    /// Server: the discovery address whose port it answers on (none: not discoverable).
    pub discovery: Option<SocketAddr>,
    /// Server: seconds a silent player's session is kept for a resume.
    pub grace: f32,
    /// Server: spectators it takes, on top of the players.
    pub max_spectators: u16,
    /// Client: join to watch, with no player.
    pub spectate: bool,
    /// Server: the rendezvous server to register with, so players beyond the LAN can
    /// join by name (none: LAN and typed addresses only).
    pub rendezvous: Option<SocketAddr>,
}

impl Options {
    /// Options for the given arena, with the defaults of the command line for the rest.
    pub fn new(scene: Scene) -> Options {
        Options {
            scene,
            port: DEFAULT_PORT,
            name: "player".into(),
            password: None,
            max_players: 8,
            rate: 20.0,
            discovery: None,
            grace: 30.0,
            max_spectators: 8,
            spectate: false,
            rendezvous: None,
        }
    }
}

/// What a server's console command came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Console {
    /// Lines to show the operator.
    Lines(Vec<String>),
    /// End the server gracefully.
    Quit,
}

/// An explosion as a peer saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Blast {
    /// Where.
    pub at: Vec3,
    /// Who threw the grenade.
    pub thrower: Owner,
    /// Seconds since it went off.
    pub age: f32,
}

/// One point of the net graph.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GraphSample {
    /// Round trip to the server, milliseconds (0 on a server).
    pub ping_ms: f32,
    /// Kilobits per second received.
    pub kbps_in: f32,
    /// Kilobits per second sent.
    pub kbps_out: f32,
    /// Estimated loss, 0 to 1.
    pub loss: f32,
}

/// The net graph keeps this many samples, four a second: the last ten seconds.
pub const GRAPH_SAMPLES: usize = 40;

/// Byte rates, measured over the last quarter second of simulated time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Traffic {
    /// Kilobits per second received.
    pub kbps_in: f32,
    /// Kilobits per second sent.
    pub kbps_out: f32,
    window: f32,
    bytes_in: u64,
    bytes_out: u64,
}

struct ServerRules {
    host_name: Option<String>,
    /// When each client's recent chat lines came (seconds), for the rate limit.
    chat_times: HashMap<ClientId, Vec<f64>>,
    scores: BTreeMap<String, u32>,
    /// Who last blew each player about, and when (seconds).
    player_hits: HashMap<NetId, (Owner, f64)>,
    fallen: BTreeSet<NetId>,
    scores_dirty: bool,
}

/// A running peer.
pub struct Game {
    /// The arena.
    pub scene: Scene,
    /// The world.
    pub group: EntityGroup,
    /// The network.
    pub net: NetManager,
    socket: UdpTransport,
    responder: Option<Responder>,
    /// Server: its registration with a rendezvous server, and the punching toward the
    /// players it introduces.
    registrar: Option<Registrar>,
    options: Options,
    server: Option<ServerRules>,
    /// This peer's player name (none on a dedicated server).
    pub my_name: Option<String>,
    input: PlayerInput,
    /// The score table, highest first.
    pub scores: Vec<(String, u32)>,
    /// Recent explosions (for drawing).
    pub blasts: Vec<Blast>,
    /// Explosions of grenades thrown by other players.
    pub explosions_by_others: u32,
    /// Every other player this peer has seen.
    pub remote_players: BTreeSet<String>,
    /// Lines for the screen or the log: joins, leaves, refusals.
    pub messages: Vec<String>,
    /// Why the session ended, if it did (a sentence for people).
    pub ended: Option<String>,
    /// Why the session ended, in the words a bot report's `ended` key uses: `"server shut
    /// down"`, `"kicked: REASON"`, `"session expired"`, `"connection lost"`, or
    /// `"refused: REASON"` and `"no server answered"` for a session that never started.
    pub end_reason: Option<String>,
    /// Byte rates.
    pub traffic: Traffic,
    /// Server: chat lines dropped by the rate limit.
    pub chat_dropped: u64,
    /// The last ten seconds of ping, traffic and loss, oldest first, for the net graph.
    pub graph: std::collections::VecDeque<GraphSample>,
    joined: bool,
    /// Our client id, kept after the session ends (for the report).
    client_id: Option<ClientId>,
    /// Client: the parts of the server's arena received so far, until it is whole.
    arena_parts: Vec<Option<Vec<u8>>>,
    /// Client: whether we play the server's arena (it came, and we loaded it if it differs
    /// from ours). The player is spawned only then.
    arena_ready: bool,
    /// Where the recording goes, to start it again when the arena changes.
    record_path: Option<std::path::PathBuf>,
    recording: Option<std::io::BufWriter<std::fs::File>>,
    /// Server: the poses its recent broadcasts carried (for the summary).
    sent_log: ServerLog,
    /// Client: the newest pose it took of each entity, by broadcast (for the report).
    received: Received,
}

/// The longest chat line, in characters.
pub const CHAT_MAX: usize = 120;
/// At most this many chat lines from one client...
pub const CHAT_BURST: usize = 5;
/// ... in this many seconds.
pub const CHAT_WINDOW: f64 = 10.0;

/// The bytes of the arena one reliable message carries.
const ARENA_PART: usize = 900;

const CONSOLE_HELP: &str =
    "commands: players | kick NAME [REASON] | ban NAME [REASON] | say TEXT | quit";

/// Reads a server's address typed as `HOST[:PORT]` (the game's port by default), on the
/// command line or the start screen. An address is parsed as an address; only a host name
/// is looked up, and a bad port is an error before any lookup.
pub fn server_addr(text: &str) -> Result<SocketAddr, String> {
    addr_or_default(text, DEFAULT_PORT)
}

/// Reads a rendezvous server's address typed as `HOST[:PORT]` (port 47820 by default), the
/// way [`server_addr`] reads a game's.
pub fn rendezvous_addr(text: &str) -> Result<SocketAddr, String> {
    addr_or_default(text, rendezvous::DEFAULT_PORT)
}

fn addr_or_default(text: &str, default_port: u16) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    let text = text.trim();
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, default_port));
    }
    let (host, port) = match text.rsplit_once(':') {
        Some((host, p)) => match p.parse::<u16>() {
            Ok(port) if port > 0 => (host, port),
            _ => return Err(format!("'{text}': '{p}' is not a port (1 to 65535)")),
        },
        None => (text, default_port),
    };
    if host.is_empty() {
        return Err(format!("'{text}' names no host"));
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve '{host}': {e}"))?
        .find(SocketAddr::is_ipv4)
        .ok_or_else(|| format!("'{host}' has no IPv4 address"))
}

/// `n` things, with the right plural.
pub fn count(n: usize, thing: &str) -> String {
    match n {
        1 => format!("1 {thing}"),
        _ => format!("{n} {thing}s"),
    }
}

/// A line fit to show: control characters removed, at most 200 characters.
pub fn clean_line(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(200).collect()
}

/// The colour of player number `n`.
pub fn player_color(n: u32) -> [u8; 4] {
    const C: [[u8; 4]; 6] = [
        [60, 140, 230, 255],
        [230, 70, 60, 255],
        [80, 200, 90, 255],
        [240, 200, 50, 255],
        [170, 90, 220, 255],
        [60, 210, 210, 255],
    ];
    C[n as usize % C.len()]
}

/// 32 bytes from the operating system's randomness, for a session's secrets (the network
/// core draws none itself). Falls back to the clock and process id if the system has none,
/// which only weakens the secrets, never breaks a session.
pub fn entropy() -> Entropy {
    let mut e = [0u8; 32];
    if getrandom::fill(&mut e).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        e[..16].copy_from_slice(&t.as_nanos().to_le_bytes());
        e[16..20].copy_from_slice(&std::process::id().to_le_bytes());
    }
    e
}

impl Game {
    fn net_config(o: &Options) -> NetConfig {
        NetConfig {
            rate: o.rate,
            max_clients: o.max_players,
            password: o.password.clone(),
            server_name: o.name.clone(),
            grace: o.grace,
            max_spectators: o.max_spectators,
            spectator: o.spectate,
            ..NetConfig::default()
        }
    }

    fn world(scene: &Scene, role: Role) -> EntityGroup {
        let mut g = EntityGroup::new(
            Arc::new(kinds::registry_for(scene)),
            GroupConfig {
                dt: 1.0 / TICK_HZ,
                role,
                ..GroupConfig::default()
            },
        );
        scene.add_scenery(&mut g);
        g
    }

    /// A server. With `host_player`, the host plays too, under that name.
    pub fn server(options: Options, host_player: Option<String>) -> Result<Game, String> {
        let mut group = Self::world(&options.scene, Role::Server);
        for (pos, size, color) in options.scene.crate_slots() {
            group
                .spawn(
                    kinds::CRATE,
                    &CrateParams { pos, size, color },
                    Owner::Server,
                )
                .map_err(|e| e.to_string())?;
        }
        let mut config = Self::net_config(&options);
        if let Some(h) = &host_player {
            config.reserved_names.push(h.clone());
            // The host takes one of the places.
            config.max_clients = config.max_clients.saturating_sub(1);
        }
        let bind = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), options.port);
        let socket = UdpTransport::bind(bind)
            .map_err(|e| format!("cannot listen on UDP port {}: {e}", options.port))?;
        let responder = match options.discovery {
            Some(d) => Some(
                Responder::bind(d).map_err(|e| format!("cannot answer discovery on {d}: {e}"))?,
            ),
            None => None,
        };
        let rules = ServerRules {
            host_name: host_player.clone(),
            chat_times: HashMap::new(),
            scores: BTreeMap::new(),
            player_hits: HashMap::new(),
            fallen: BTreeSet::new(),
            scores_dirty: true,
        };
        let me = host_player.clone();
        let net = NetManager::server(config, entropy());
        let registrar = options.rendezvous.map(|rv| {
            let mut owner = [0; 16];
            owner.copy_from_slice(&entropy()[..16]);
            Registrar::new(rv, owner)
        });
        let mut game = Self::assemble(options, group, net, socket, responder, Some(rules), me);
        game.registrar = registrar;
        if let Some(name) = host_player {
            game.spawn_my_player(0, &name, Owner::Server)
                .map_err(|e| e.to_string())?;
        }
        Ok(game)
    }

    /// A client of the server at `server`, playing as `options.name`.
    pub fn client(options: Options, server: SocketAddr, entropy: Entropy) -> Result<Game, String> {
        let socket = Self::client_socket(server)?;
        Self::client_on(options, socket, server, entropy)
    }

    /// A socket for a client talking to `toward` (a game or a rendezvous server).
    pub fn client_socket(toward: SocketAddr) -> Result<UdpTransport, String> {
        UdpTransport::bind(lanyard_net::udp::local_for(toward))
            .map_err(|e| format!("cannot open a UDP socket: {e}"))
    }

    /// A client of the game registered as `name` at the rendezvous server at
    /// `rendezvous`: asks for it, punches a path through the NATs between the two (this
    /// blocks for up to ten seconds), then joins it over that path as
    /// [`Game::client`] does.
    pub fn client_by_name(
        options: Options,
        rendezvous: SocketAddr,
        name: &str,
        entropy: Entropy,
    ) -> Result<Game, String> {
        let mut socket = Self::client_socket(rendezvous)?;
        let server = Self::punch(&mut socket, rendezvous, name)?;
        Self::client_on(options, socket, server, entropy)
    }

    /// Opens a path from `socket` to the game registered as `name` (see
    /// [`lanyard_net::rendezvous::punch`]), with a nonce from the system's randomness.
    pub fn punch(
        socket: &mut UdpTransport,
        rendezvous: SocketAddr,
        name: &str,
    ) -> Result<SocketAddr, String> {
        let mut n = [0; 8];
        n.copy_from_slice(&entropy()[..8]);
        rendezvous::punch(socket, rendezvous, name, u64::from_le_bytes(n))
            .map_err(|e| e.to_string())
    }

    /// A client of the server at `server` on `socket` (one a path was punched from).
    pub fn client_on(
        options: Options,
        socket: UdpTransport,
        server: SocketAddr,
        entropy: Entropy,
    ) -> Result<Game, String> {
        let group = Self::world(&options.scene, Role::Client(ClientId(0)));
        let net = NetManager::client(
            Self::net_config(&options),
            server,
            &options.name,
            options.password.as_deref(),
            entropy,
        );
        let me = Some(options.name.clone());
        Ok(Self::assemble(options, group, net, socket, None, None, me))
    }

    fn assemble(
        options: Options,
        group: EntityGroup,
        net: NetManager,
        socket: UdpTransport,
        responder: Option<Responder>,
        server: Option<ServerRules>,
        my_name: Option<String>,
    ) -> Game {
        Game {
            scene: options.scene.clone(),
            joined: server.is_some(),
            client_id: None,
            arena_parts: Vec::new(),
            arena_ready: false,
            record_path: None,
            group,
            net,
            socket,
            responder,
            registrar: None,
            server,
            my_name,
            options,
            input: PlayerInput::default(),
            scores: Vec::new(),
            blasts: Vec::new(),
            explosions_by_others: 0,
            remote_players: BTreeSet::new(),
            messages: Vec::new(),
            ended: None,
            end_reason: None,
            chat_dropped: 0,
            graph: std::collections::VecDeque::new(),
            traffic: Traffic::default(),
            recording: None,
            sent_log: ServerLog::default(),
            received: Received::default(),
        }
    }

    /// Records this peer's world from now on into `path` (see `lanyard::record`): the
    /// arena goes in the header, so the file replays on its own.
    pub fn record_to(&mut self, path: &std::path::Path) -> Result<(), String> {
        let scene = toml::to_string(&self.scene).map_err(|e| e.to_string())?;
        let who = if self.is_server() { "server" } else { "client" };
        self.group
            .start_recording(&scene, who)
            .map_err(|e| e.to_string())?;
        let file = std::fs::File::create(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        self.recording = Some(std::io::BufWriter::new(file));
        self.record_path = Some(path.to_owned());
        self.flush_recording();
        Ok(())
    }

    fn flush_recording(&mut self) {
        use std::io::Write;
        if let Some(w) = &mut self.recording {
            let bytes = self.group.take_recording();
            if let Err(e) = w.write_all(&bytes) {
                self.messages.push(format!("recording stopped: {e}"));
                self.recording = None;
            }
        }
    }

    /// Whether this peer is the server (dedicated or host).
    pub fn is_server(&self) -> bool {
        self.server.is_some()
    }

    /// Whether a client is in a session (always true for a server).
    pub fn is_joined(&self) -> bool {
        self.joined && self.ended.is_none()
    }

    /// The owner this peer's entities have.
    pub fn me(&self) -> Option<Owner> {
        if self.is_server() {
            return Some(Owner::Server);
        }
        self.net.client_id().map(Owner::Client)
    }

    /// This peer's player entity, if it has one.
    pub fn my_player(&self) -> Option<EntityId> {
        let me = self.me()?;
        self.my_name.as_ref()?;
        let player = KindId::of_name(kinds::PLAYER);
        self.group
            .iter()
            .find(|e| e.kind() == player && e.owner() == me)
            .map(|e| e.id())
    }

    /// Where this peer's player appears.
    pub fn my_spawn(&self) -> [f32; 3] {
        let n = self.net.client_id().map_or(0, |c| usize::from(c.0));
        self.scene.spawn_point(n)
    }

    /// The name of the player an owner stands for.
    pub fn name_of(&self, owner: Owner) -> String {
        let player = KindId::of_name(kinds::PLAYER);
        self.group
            .iter()
            .find(|e| e.kind() == player && e.owner() == owner)
            .and_then(|e| self.group.controller::<Player>(e.id()))
            .map(|p| p.name.clone())
            .or_else(|| match owner {
                Owner::Server => self.server.as_ref().and_then(|s| s.host_name.clone()),
                Owner::Client(c) => self
                    .net
                    .sessions()
                    .into_iter()
                    .find(|s| s.client == c)
                    .map(|s| s.name),
            })
            .unwrap_or_else(|| match owner {
                Owner::Server => "server".into(),
                Owner::Client(c) => format!("player {}", c.0),
            })
    }

    /// Every player's name: the host's and the connected clients' (on a server), or the
    /// players seen (on a client).
    pub fn player_names(&self) -> Vec<String> {
        let player = KindId::of_name(kinds::PLAYER);
        let mut names: BTreeSet<String> = self
            .group
            .iter()
            .filter(|e| e.kind() == player)
            .filter_map(|e| {
                self.group
                    .controller::<Player>(e.id())
                    .map(|p| p.name.clone())
            })
            .collect();
        if let Some(s) = &self.server {
            names.extend(s.host_name.clone());
            names.extend(self.playing());
        }
        names.into_iter().collect()
    }

    /// Server: the names of the clients that play (live or waiting for a resume).
    fn playing(&self) -> Vec<String> {
        let sessions = self.net.sessions().into_iter();
        sessions.filter(|s| !s.spectator).map(|s| s.name).collect()
    }

    /// Server: the names of the clients that watch.
    pub fn spectator_names(&self) -> Vec<String> {
        let sessions = self.net.sessions().into_iter();
        sessions.filter(|s| s.spectator).map(|s| s.name).collect()
    }

    /// Server: one command of the operator's console (`players`, `kick NAME [REASON]`,
    /// `ban NAME [REASON]`, `say TEXT`, `quit`, `help`).
    pub fn console(&mut self, line: &str) -> Console {
        let line = line.trim();
        let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let lines = match cmd {
            "" => Vec::new(),
            "players" => self.players_table(),
            "kick" | "ban" => {
                let (name, reason) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                if name.is_empty() {
                    vec![format!("usage: {cmd} NAME [REASON]")]
                } else {
                    self.kick(name, reason.trim(), cmd == "ban")
                }
            }
            "say" => {
                let text = clean_line(rest);
                let _ = self
                    .net
                    .send_event(GameEvent::Say { text: text.clone() }.encode());
                self.messages.push(format!("[server] {text}"));
                vec![format!("said: {text}")]
            }
            "quit" | "exit" => return Console::Quit,
            "help" => vec![CONSOLE_HELP.to_owned()],
            other => vec![format!("unknown command '{other}'. {CONSOLE_HELP}")],
        };
        Console::Lines(lines)
    }

    /// Server: every session, one line each: id, name, ping, loss, score, and whether it
    /// plays, watches or waits for a resume.
    pub fn players_table(&self) -> Vec<String> {
        let sessions = self.net.sessions();
        let watching = sessions.iter().filter(|s| s.spectator).count();
        let host = usize::from(self.server.as_ref().is_some_and(|s| s.host_name.is_some()));
        let playing = sessions.len() - watching + host;
        let mut out = vec![format!(
            "{} playing, {} watching",
            count(playing, "player"),
            count(watching, "spectator")
        )];
        if let Some(h) = self.server.as_ref().and_then(|s| s.host_name.clone()) {
            let score = self.score_of(&h);
            out.push(format!(
                "   0  {h:<16} ping    - ms  loss  -%  score {score:>3}  host"
            ));
        }
        for s in sessions {
            let score = self.score_of(&s.name);
            let what = match (s.spectator, s.suspended) {
                (_, true) => "reconnecting",
                (true, false) => "spectator",
                (false, false) => "player",
            };
            out.push(format!(
                "{:>4}  {:<16} ping {:>4.0} ms  loss {:>2.0}%  score {score:>3}  {what}",
                s.client.0,
                s.name,
                s.stats.ping_ms,
                s.stats.loss * 100.0,
            ));
        }
        out
    }

    /// Server: the points of the player named `name`.
    pub fn score_of(&self, name: &str) -> u32 {
        let scores = self.server.as_ref().map(|s| &s.scores);
        scores.and_then(|t| t.get(name)).copied().unwrap_or(0)
    }

    /// Server: removes the client named `name` (any case), telling it `reason`; with
    /// `ban`, the name is refused for the server's lifetime too. Returns lines to show.
    pub fn kick(&mut self, name: &str, reason: &str, ban: bool) -> Vec<String> {
        let mut out = Vec::new();
        if ban {
            let _ = self.net.ban(name);
            out.push(format!("{name} is banned until the server stops"));
        }
        let who = self
            .net
            .sessions()
            .into_iter()
            .find(|s| s.name.eq_ignore_ascii_case(name));
        match who {
            Some(s) => match self.net.kick(&mut self.group, s.client, reason) {
                Ok(()) => out.push(format!("kicked {}", s.name)),
                Err(e) => out.push(format!("cannot kick {}: {e}", s.name)),
            },
            None if !ban => out.push(format!("no client is named {name}")),
            None => {}
        }
        out
    }

    fn spawn_my_player(&mut self, n: u32, name: &str, owner: Owner) -> Result<(), Error> {
        let params = PlayerParams {
            name: name.to_owned(),
            pos: self.scene.spawn_point(n as usize),
            color: player_color(n),
            tuning: self.scene.tuning.clone(),
        };
        match owner {
            Owner::Server => self.group.spawn(kinds::PLAYER, &params, owner).map(|_| ()),
            Owner::Client(_) => self.group.request_spawn(kinds::PLAYER, &params).map(|_| ()),
        }
    }

    /// Sets what this peer's player does next tick (walking, jumping, throwing).
    pub fn set_input(&mut self, input: PlayerInput) {
        let keep_throw = self.input.throw;
        self.input = input;
        self.input.throw = input.throw.or(keep_throw);
    }

    /// Waits up to `timeout` for datagrams (for loops with time to spare).
    pub fn wait(&mut self, timeout: Duration) {
        self.socket.wait(timeout);
    }

    /// One tick of `dt` seconds: datagrams in, the networked frame, the rules, datagrams out.
    pub fn tick(&mut self, dt: f32) {
        self.pump();
        self.feed_my_player();
        let sent = self.net.update(&mut self.group, dt).sent;
        self.witness(sent);
        self.handle_events();
        if self.server.is_some() {
            self.server_rules();
        }
        self.pump();
        if self.responder.is_some() || self.registrar.is_some() {
            let info = self.server_info();
            let now = self.clock();
            if let Some(r) = &mut self.responder {
                r.poll(&info);
            }
            if let Some(r) = &mut self.registrar {
                r.poll(now, &info);
            }
            self.rendezvous_events();
            self.pump();
        }
        // Once a second: the recording packs what it gets in one go.
        if self.group.tick().is_multiple_of(TICK_HZ as u64) {
            self.flush_recording();
        }
        for b in &mut self.blasts {
            b.age += dt;
        }
        self.blasts.retain(|b| b.age < 1.5);
        self.measure(dt);
    }

    /// Notes the poses this frame sent (server, when it broadcast) or took (client), for
    /// reports that compare peers at the same broadcast.
    fn witness(&mut self, sent: bool) {
        if let Some(n) = self.net.broadcast_number() {
            if sent {
                self.sent_log.broadcast(n, &self.group);
            }
        } else {
            let net = &self.net;
            self.received
                .note(&self.group, self.me(), |id| net.state_broadcast(id));
        }
    }

    /// Seconds of game time (ticks of the world): the rendezvous side's clock.
    fn clock(&self) -> f64 {
        self.group.tick() as f64 / f64::from(TICK_HZ)
    }

    /// Moves datagrams between the game socket and the NetManager (and the rendezvous
    /// side, which gets the rendezvous datagrams: a registration must come from the game
    /// socket, the address players reach).
    fn pump(&mut self) {
        let now = self.clock();
        while let Some((from, bytes)) = self.socket.recv() {
            if rendezvous::is_rendezvous(&bytes) {
                // A server's registrar takes them; a client drops late punches.
                if let Some(r) = &mut self.registrar {
                    r.receive(now, from, &bytes);
                }
                continue;
            }
            self.net.receive(from, &bytes);
        }
        for (to, bytes) in self.net.drain_outgoing() {
            self.socket.send(to, &bytes);
        }
        if let Some(r) = &mut self.registrar {
            for (to, bytes) in r.drain_outgoing() {
                self.socket.send(to, &bytes);
            }
        }
    }

    /// The server as discovery answers and the rendezvous listing show it.
    fn server_info(&self) -> ServerInfo {
        let (playing, watching) = self.net.session_counts();
        ServerInfo {
            name: self.options.name.clone(),
            players: playing as u16 + u16::from(self.my_name.is_some()),
            max_players: self.options.max_players,
            spectators: watching as u16,
            max_spectators: self.options.max_spectators,
            password: self.options.password.is_some(),
            version: PROTOCOL_VERSION,
            game_port: self.local_addr().port(),
        }
    }

    /// What the rendezvous side did, as lines for the operator.
    fn rendezvous_events(&mut self) {
        let Some(r) = &mut self.registrar else {
            return;
        };
        let rv = r.rendezvous();
        let name = &self.options.name;
        for e in r.events() {
            let line = match e {
                RegistrarEvent::Registered { public } => format!(
                    "registered as '{name}' at the rendezvous server {rv} (public address {public})"
                ),
                RegistrarEvent::Refused(why) => {
                    format!("the rendezvous server {rv} refused '{name}': {why}")
                }
                RegistrarEvent::Silent => {
                    format!("the rendezvous server {rv} does not answer (still trying)")
                }
                RegistrarEvent::Introduced { peer } => {
                    format!("a player at {peer} is joining through the rendezvous server")
                }
                RegistrarEvent::Opened { peer } => {
                    tracing::info!("the path to {peer} is open");
                    continue;
                }
            };
            tracing::info!("{line}");
            self.messages.push(line);
        }
    }

    /// The public address the rendezvous server saw, once registered.
    pub fn public_addr(&self) -> Option<SocketAddr> {
        self.registrar.as_ref()?.public()
    }

    /// The address the game socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.socket.local_addr()
    }

    fn feed_my_player(&mut self) {
        let Some(id) = self.my_player() else {
            return;
        };
        let mut input = std::mem::take(&mut self.input);
        let fallen = self
            .group
            .get(id)
            .is_some_and(|e| e.body().translation().y < self.scene.kill_y);
        if fallen {
            input.respawn = true;
        }
        if let Some(p) = self.group.controller_mut::<Player>(id) {
            p.set_input(input);
        }
    }

    fn handle_events(&mut self) {
        while let Some(e) = self.net.poll_event() {
            match e {
                NetEvent::Joined {
                    client,
                    server_name,
                } => {
                    self.joined = true;
                    self.client_id = Some(client);
                    if self.options.spectate {
                        self.messages.push(format!("watching {server_name}"));
                    } else {
                        self.messages
                            .push(format!("joined {server_name} as player {}", client.0));
                    }
                    // The player comes once the server's arena is in.
                }
                NetEvent::Rejected { reason } => {
                    self.ended = Some(format!("the server refused us: {reason}"));
                    self.end_reason = Some(format!("refused: {reason}"));
                }
                NetEvent::ConnectFailed => {
                    let server = self
                        .net
                        .server_addr()
                        .map_or(String::new(), |a| format!(" at {a}"));
                    self.ended = Some(format!("no server answered{server}"));
                    self.end_reason = Some("no server answered".into());
                }
                NetEvent::ConnectionLost { reason } => {
                    let key = match &reason {
                        DisconnectReason::ServerShutdown => "server shut down".to_owned(),
                        DisconnectReason::Kicked { .. } => clean_line(&reason.to_string()),
                        DisconnectReason::SessionExpired => "session expired".to_owned(),
                        _ => "connection lost".to_owned(),
                    };
                    self.ended = Some(match &reason {
                        DisconnectReason::Kicked { .. } | DisconnectReason::SessionExpired => {
                            key.clone()
                        }
                        _ => format!("connection lost: {reason}"),
                    });
                    self.end_reason = Some(key);
                }
                NetEvent::Reconnecting { attempt } => {
                    if attempt == 1 {
                        self.messages.push("lost the server: reconnecting".into());
                    }
                }
                NetEvent::Resumed { .. } => self.messages.push("reconnected".into()),
                NetEvent::ClientJoined {
                    name,
                    spectator: true,
                    client,
                } => {
                    self.send_arena(client);
                    self.messages.push(format!("{name} joined to watch"))
                }
                NetEvent::ClientJoined { client, name, .. } => {
                    self.send_arena(client);
                    self.messages.push(format!("{name} joined"));
                    if let Some(s) = &mut self.server {
                        s.scores.entry(name).or_insert(0);
                        s.scores_dirty = true;
                    }
                }
                NetEvent::ClientSuspended { name, .. } => self.messages.push(format!(
                    "{name} went silent: keeping the session {:.0} s for a resume",
                    self.options.grace
                )),
                NetEvent::ClientResumed { name, .. } => {
                    self.messages.push(format!("{name} resumed the session"))
                }
                NetEvent::ClientLeft { name, reason, .. } => {
                    self.messages.push(format!("{name} left ({reason})"));
                    if let Some(s) = &mut self.server {
                        s.scores.remove(&name);
                        s.scores_dirty = true;
                    }
                }
                NetEvent::Event {
                    from: Owner::Server,
                    bytes,
                } => match GameEvent::decode(&bytes) {
                    Some(GameEvent::Explosion { at, thrower, .. }) => {
                        self.on_blast(Vec3::from_array(at), thrower)
                    }
                    Some(GameEvent::Scores { table }) => self.scores = table,
                    Some(GameEvent::Arena { part, parts, bytes }) => {
                        self.arena_part(part, parts, bytes)
                    }
                    // A client's message, not the server's: ignored.
                    Some(GameEvent::Chat { .. }) => {}
                    Some(GameEvent::ChatLine { from, text }) => {
                        self.messages
                            .push(format!("{}: {}", clean_line(&from), clean_line(&text)))
                    }
                    Some(GameEvent::Say { text }) => self
                        .messages
                        .push(format!("[server] {}", clean_line(&text))),
                    None => {}
                },
                NetEvent::Event {
                    from: Owner::Client(client),
                    bytes,
                } => {
                    if let Some(GameEvent::Chat { text }) = GameEvent::decode(&bytes) {
                        self.relay_chat(client, &text);
                    }
                }
            }
        }
        // Who else is playing.
        let me = self.me();
        let player = KindId::of_name(kinds::PLAYER);
        let others: Vec<String> = self
            .group
            .iter()
            .filter(|e| e.kind() == player && Some(e.owner()) != me)
            .filter_map(|e| {
                self.group
                    .controller::<Player>(e.id())
                    .map(|p| p.name.clone())
            })
            .collect();
        self.remote_players.extend(others);
    }

    /// Sends a chat line from this peer's player: a client sends it to the server, which
    /// passes it on to everyone; a host passes it on itself. Control characters are
    /// removed and it is cut to [`CHAT_MAX`] characters; empty lines are not sent.
    pub fn chat(&mut self, text: &str) {
        let text: String = clean_line(text).chars().take(CHAT_MAX).collect();
        if text.trim().is_empty() {
            return;
        }
        if self.is_server() {
            let from = self.my_name.clone().unwrap_or_else(|| "server".into());
            self.messages.push(format!("{from}: {text}"));
            let _ = self
                .net
                .send_event(GameEvent::ChatLine { from, text }.encode());
        } else if let Err(e) = self.net.send_event(GameEvent::Chat { text }.encode()) {
            self.messages.push(format!("cannot chat: {e}"));
        }
    }

    /// Server: a chat line from a client: cleaned, cut, rate-limited (at most
    /// [`CHAT_BURST`] lines in [`CHAT_WINDOW`] seconds; more are dropped and counted), then
    /// sent to everyone with the client's name.
    fn relay_chat(&mut self, client: ClientId, text: &str) {
        let now = self.net.now();
        let Some(s) = &mut self.server else {
            return;
        };
        let times = s.chat_times.entry(client).or_default();
        times.retain(|t| now - t < CHAT_WINDOW);
        if times.len() >= CHAT_BURST {
            self.chat_dropped += 1;
            return;
        }
        times.push(now);
        let text: String = clean_line(text).chars().take(CHAT_MAX).collect();
        if text.trim().is_empty() {
            return;
        }
        let from = self.name_of(Owner::Client(client));
        self.messages.push(format!("{from}: {text}"));
        let _ = self
            .net
            .send_event(GameEvent::ChatLine { from, text }.encode());
    }

    /// Server: sends a client that just joined the arena it plays, in parts.
    fn send_arena(&mut self, client: ClientId) {
        let bytes = self.scene.encode();
        let chunks: Vec<&[u8]> = bytes.chunks(ARENA_PART).collect();
        let parts = chunks.len() as u16;
        for (part, chunk) in chunks.into_iter().enumerate() {
            let event = GameEvent::Arena {
                part: part as u16,
                parts,
                bytes: chunk.to_vec(),
            };
            if let Err(e) = self.net.send_event_to(client, event.encode()) {
                self.messages.push(format!("cannot send the arena: {e}"));
                return;
            }
        }
    }

    /// Client: a part of the server's arena. Once it is whole: if it is not ours, the
    /// world is rebuilt on it and the server asked for everything again; then our player
    /// comes.
    fn arena_part(&mut self, part: u16, parts: u16, bytes: Vec<u8>) {
        if self.is_server() || self.arena_ready || parts == 0 || part >= parts {
            return;
        }
        if self.arena_parts.len() != usize::from(parts) {
            self.arena_parts = vec![None; usize::from(parts)];
        }
        self.arena_parts[usize::from(part)] = Some(bytes);
        if self.arena_parts.iter().any(Option::is_none) {
            return;
        }
        let whole: Vec<u8> = self.arena_parts.drain(..).flatten().flatten().collect();
        let theirs = match Scene::decode(&whole) {
            Ok(s) => s,
            Err(e) => {
                self.ended = Some(format!("the server's arena is broken: {e}"));
                self.end_reason = Some("connection lost".into());
                return;
            }
        };
        self.arena_ready = true;
        let Some(client) = self.net.client_id() else {
            return;
        };
        if theirs != self.scene {
            self.messages
                .push(format!("the server plays '{}': loading it", theirs.name));
            self.group = Self::world(&theirs, Role::Client(client));
            self.received = Received::default();
            self.scene = theirs.clone();
            self.options.scene = theirs;
            if let Err(e) = self.net.resend_world() {
                self.messages.push(format!("cannot reload the world: {e}"));
            }
            if let Some(path) = self.record_path.clone() {
                // The recording names its arena at the start: start it again on this one.
                if let Err(e) = self.record_to(&path) {
                    self.messages.push(format!("recording stopped: {e}"));
                }
            }
        }
        if !self.options.spectate {
            let name = self.my_name.clone().unwrap_or_default();
            if let Err(e) = self.spawn_my_player(u32::from(client.0), &name, Owner::Client(client))
            {
                self.messages.push(format!("cannot spawn the player: {e}"));
            }
        }
    }

    /// An explosion happened: show it, and push our own player if it is in reach.
    fn on_blast(&mut self, at: Vec3, thrower: Owner) {
        self.blasts.push(Blast {
            at,
            thrower,
            age: 0.0,
        });
        if Some(thrower) != self.me() {
            self.explosions_by_others += 1;
        }
        if self.is_server() {
            return; // The server pushed everything it owns when it set the grenade off.
        }
        if let Some(id) = self.my_player()
            && let Some(push) =
                self.blast_push(at, self.group.get(id).map(|e| e.body().translation()))
        {
            self.input.push = Some(self.input.push.unwrap_or(Vec3::ZERO) + push);
        }
    }

    fn blast_push(&self, at: Vec3, body: Option<Vec3>) -> Option<Vec3> {
        let p = body?;
        let t = &self.scene.tuning;
        let d = p - at;
        let dist = d.length();
        if dist >= t.blast_radius {
            return None;
        }
        let dir = (d.normalize_or_zero() + Vec3::Y * 0.6).normalize_or_zero();
        Some(dir * t.blast_impulse * (1.0 - dist / t.blast_radius))
    }

    fn server_rules(&mut self) {
        let now = self.net.now();
        let grenade = KindId::of_name(kinds::GRENADE);
        let crate_kind = KindId::of_name(kinds::CRATE);
        let player = KindId::of_name(kinds::PLAYER);
        // Grenades whose fuse has burnt down go off.
        let due: Vec<(EntityId, NetId, Vec3, Owner)> = self
            .group
            .iter()
            .filter(|e| e.kind() == grenade)
            .filter_map(|e| {
                let g = self.group.controller::<Grenade>(e.id())?;
                (g.fuse() == 0).then(|| (e.id(), e.net_id(), e.body().translation(), g.thrower))
            })
            .collect();
        for (id, net, at, thrower) in due {
            let _ = self.group.despawn(id);
            self.explode(at, thrower, net, now);
        }
        let kill_y = self.scene.kill_y;
        // Crates off the yard score for whoever last blew them about, and come back home.
        let off: Vec<(EntityId, Option<Owner>, Vec<u8>)> = self
            .group
            .iter()
            .filter(|e| e.kind() == crate_kind && e.body().translation().y < kill_y)
            .map(|e| {
                let by = self
                    .group
                    .controller::<Crate>(e.id())
                    .and_then(|c| c.last_hit_by);
                (
                    e.id(),
                    by,
                    self.group.spawn_params(e.id()).unwrap_or_default().to_vec(),
                )
            })
            .collect();
        for (id, by, params) in off {
            let _ = self.group.despawn(id);
            let _ = self.group.spawn_encoded(crate_kind, params, Owner::Server);
            if let Some(by) = by {
                let name = self.name_of(by);
                self.add_point(name);
            }
        }
        // Players off the yard score for whoever blew them off in the last 8 seconds.
        let falling: Vec<(NetId, Owner, bool)> = self
            .group
            .iter()
            .filter(|e| e.kind() == player)
            .map(|e| (e.net_id(), e.owner(), e.body().translation().y < kill_y))
            .collect();
        let mut points = Vec::new();
        if let Some(s) = &mut self.server {
            for (net, owner, below) in falling {
                if !below {
                    s.fallen.remove(&net);
                    continue;
                }
                if s.fallen.insert(net)
                    && let Some(&(by, when)) = s.player_hits.get(&net)
                    && by != owner
                    && now - when < 8.0
                {
                    points.push(by);
                }
            }
        }
        for by in points {
            let name = self.name_of(by);
            self.add_point(name);
        }
        if self.server.as_ref().is_some_and(|s| s.scores_dirty) {
            self.publish_scores();
        }
    }

    fn add_point(&mut self, name: String) {
        if let Some(s) = &mut self.server {
            *s.scores.entry(name).or_insert(0) += 1;
            s.scores_dirty = true;
        }
    }

    fn publish_scores(&mut self) {
        let Some(s) = &mut self.server else {
            return;
        };
        s.scores_dirty = false;
        let sessions = self.net.sessions();
        let players = sessions.iter().filter(|x| !x.spectator).map(|x| &x.name);
        for n in s.host_name.iter().chain(players) {
            s.scores.entry(n.clone()).or_insert(0);
        }
        let mut table: Vec<(String, u32)> = s.scores.iter().map(|(n, p)| (n.clone(), *p)).collect();
        table.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        self.scores = table.clone();
        let _ = self.net.send_event(GameEvent::Scores { table }.encode());
    }

    fn explode(&mut self, at: Vec3, thrower: Owner, grenade: NetId, now: f64) {
        let in_reach: Vec<(EntityId, NetId, KindId, Owner, Vec3)> = self
            .group
            .iter()
            .map(|e| {
                (
                    e.id(),
                    e.net_id(),
                    e.kind(),
                    e.owner(),
                    e.body().translation(),
                )
            })
            .collect();
        let crate_kind = KindId::of_name(kinds::CRATE);
        let player = KindId::of_name(kinds::PLAYER);
        for (id, net, kind, owner, pos) in in_reach {
            let Some(push) = self.blast_push(at, Some(pos)) else {
                continue;
            };
            if kind == crate_kind
                && let Some(c) = self.group.controller_mut::<Crate>(id)
            {
                c.push(push);
                c.last_hit_by = Some(thrower);
            } else if kind == player {
                if let Some(s) = &mut self.server {
                    s.player_hits.insert(net, (thrower, now));
                }
                // The host's own player is pushed here; clients push their own.
                if owner == Owner::Server
                    && let Some(p) = self.group.controller_mut::<Player>(id)
                {
                    p.set_input(PlayerInput {
                        push: Some(push),
                        ..PlayerInput::default()
                    });
                }
            }
        }
        let _ = self.net.send_event(
            GameEvent::Explosion {
                at: at.to_array(),
                thrower,
                grenade,
            }
            .encode(),
        );
        self.on_blast(at, thrower);
    }

    fn measure(&mut self, dt: f32) {
        let (bin, bout) = self.bytes();
        let (ping_ms, loss) = (self.ping_ms().unwrap_or(0.0), self.loss());
        let t = &mut self.traffic;
        t.window += dt;
        if t.window >= 0.25 {
            t.kbps_in = (bin - t.bytes_in) as f32 * 8.0 / 1000.0 / t.window;
            t.kbps_out = (bout - t.bytes_out) as f32 * 8.0 / 1000.0 / t.window;
            t.bytes_in = bin;
            t.bytes_out = bout;
            t.window = 0.0;
            let sample = GraphSample {
                ping_ms,
                kbps_in: t.kbps_in,
                kbps_out: t.kbps_out,
                loss,
            };
            if self.graph.len() >= GRAPH_SAMPLES {
                self.graph.pop_front();
            }
            self.graph.push_back(sample);
        }
    }

    /// Bytes received and sent so far (all peers, never decreasing).
    pub fn bytes(&self) -> (u64, u64) {
        let c = self.net.counters();
        (c.bytes_in, c.bytes_out)
    }

    /// Round trip to the server (clients), milliseconds: from clock stamps echoed on the
    /// wire, so it leaves out the time the server waits for its next send (the ack round
    /// trip stands in until the first echo).
    pub fn ping_ms(&self) -> Option<f32> {
        let s = self.net.server_stats()?;
        Some(if s.ping_ms > 0.0 { s.ping_ms } else { s.rtt_ms })
    }

    /// Estimated loss towards the server (clients), 0 to 1. It rises when the server
    /// falls silent: from a quarter second of silence to all lost two seconds later.
    pub fn loss(&self) -> f32 {
        self.net.server_stats().map_or(0.0, |s| {
            let silent = ((s.silence_ms - 250.0) / 2000.0).clamp(0.0, 1.0);
            s.loss.max(silent)
        })
    }

    /// Says goodbye (a client) or shuts down (a server), and sends it.
    pub fn shutdown(&mut self) {
        self.net.disconnect(&mut self.group);
        if let Some(r) = &mut self.registrar {
            r.unregister();
        }
        self.pump();
        self.flush_recording();
        if let Some(mut w) = self.recording.take() {
            use std::io::Write;
            let _ = w.flush();
        }
    }

    /// The entities in the machine-readable shape: net id -> kind and position; on a
    /// client also the newest state it took from the server, if any came: the number of
    /// the `broadcast` that carried it and the position it `received` (see
    /// [`witness`](crate::witness)).
    pub fn entities_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for e in self.group.iter() {
            let kind = self.group.registry().name_of(e.kind()).unwrap_or("?");
            let p = e.body().translation();
            let mut v = serde_json::json!({ "kind": kind, "pos": [p.x, p.y, p.z] });
            if let Some((n, r)) = self.received.of(e.net_id()) {
                v["broadcast"] = n.into();
                v["received"] = serde_json::json!(r);
            }
            m.insert(e.net_id().0.to_string(), v);
        }
        serde_json::Value::Object(m)
    }

    /// The summary a server writes at exit: players, entities, and the poses of its
    /// broadcasts of the last 10 s ([`ServerLog::to_json`]).
    pub fn summary_json(&self) -> serde_json::Value {
        let my_throws = self
            .my_player()
            .and_then(|id| self.group.controller::<Player>(id))
            .map(Player::throws);
        serde_json::json!({
            "players": self.player_names(),
            "spectators": self.spectator_names(),
            "my_throws": my_throws,
            "entities": self.entities_json(),
            "broadcasts": self.sent_log.to_json(),
            "network": self.network_json(),
        })
    }

    /// What the network layer refused and dropped: on a server per client (by name), plus
    /// the strangers' datagrams and stale or forged handshakes; on a client, its link's.
    pub fn network_json(&self) -> serde_json::Value {
        let peer = |s: lanyard_net::PeerStats| {
            serde_json::json!({
                "bad_tags": s.bad_tags,
                "bad_datagrams": s.bad_datagrams,
                "duplicates": s.duplicates,
                "dropped_illegal": s.dropped_illegal,
                "dropped_not_owner": s.dropped_not_owner,
                "refused_spawns": s.refused_spawns,
                "corrections": s.corrections,
                "resends": s.resends,
                "state_entries": s.entries,
                "missing_baselines": s.missing_baselines,
            })
        };
        let c = self.net.counters();
        let clients: serde_json::Map<String, serde_json::Value> = self
            .net
            .clients()
            .into_iter()
            .filter_map(|(id, name)| Some((name, peer(self.net.peer_stats(id)?))))
            .collect();
        let g = self.group.counters();
        serde_json::json!({
            "bad_sections": g.bad_sections,
            "framing_errors": g.framing_errors,
            "strangers": c.strangers,
            "bad_cookies": c.bad_cookies,
            "bad_tags": c.bad_tags,
            "duplicates": c.duplicates,
            "largest_datagram_in": c.largest_in,
            "largest_datagram_out": c.largest_out,
            "clients": clients,
            "server": self.net.server_stats().map(peer),
        })
    }

    /// The report a bot prints at exit; `ended` says why the run ended (`"time up"`, or
    /// [`end_reason`](Self::end_reason)).
    pub fn bot_report_json(&self, ended: &str) -> serde_json::Value {
        let (bytes_in, bytes_out) = self.bytes();
        serde_json::json!({
            "ended": ended,
            "resumes": self.net.resumes(),
            "spectator": self.options.spectate,
            "arena": self.scene.name,
            "client_id": self.client_id.map(|c| c.0),
            "remote_players": self.remote_players.iter().collect::<Vec<_>>(),
            "explosions_seen": self.explosions_by_others,
            "entities": self.entities_json(),
            "bytes_in": bytes_in,
            "bytes_out": bytes_out,
            "loss": self.loss(),
            "network": self.network_json(),
        })
    }

    /// The spawn parameters of a player entity, decoded.
    pub fn player_params(&self, id: EntityId) -> Option<PlayerParams> {
        let kind = KindId::of_name(kinds::PLAYER);
        decode_params(kind, self.group.spawn_params(id)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::GrenadeParams;
    use crate::scene::DEFAULT_SCENE;
    use lanyard::pose::BodyState;

    fn host() -> Game {
        let options = Options {
            port: 0,
            name: "test yard".into(),
            max_players: 4,
            ..Options::new(Scene::load(std::path::Path::new(DEFAULT_SCENE)).unwrap())
        };
        Game::server(options, Some("hostess".into())).unwrap()
    }

    fn first_crate(g: &Game) -> (EntityId, NetId, Vec3) {
        let k = KindId::of_name(kinds::CRATE);
        let e = g.group.iter().find(|e| e.kind() == k).unwrap();
        (e.id(), e.net_id(), e.body().translation())
    }

    #[test]
    fn a_grenade_goes_off_when_its_fuse_burns_down_and_pushes_the_crates_near_it() {
        let mut g = host();
        let (id, _, at) = first_crate(&g);
        let params = GrenadeParams {
            pos: [at.x + 1.0, at.y, at.z],
            vel: [0.0; 3],
            fuse_ticks: 3,
            thrower: Owner::Server,
        };
        g.group
            .spawn(kinds::GRENADE, &params, Owner::Server)
            .unwrap();
        for _ in 0..6 {
            g.tick(1.0 / TICK_HZ);
        }
        assert_eq!(g.blasts.len(), 1, "the grenade did not go off");
        assert!(
            g.group
                .iter()
                .all(|e| e.kind() != KindId::of_name(kinds::GRENADE))
        );
        let c = g.group.controller::<Crate>(id).unwrap();
        assert_eq!(c.last_hit_by, Some(Owner::Server));
        assert!(
            g.group.get(id).unwrap().body().linvel().length() > 1.0,
            "the crate was not pushed"
        );
    }

    #[test]
    fn a_crate_off_the_yard_scores_for_whoever_blew_it_off_and_comes_back_home() {
        let mut g = host();
        let (id, net, home) = first_crate(&g);
        g.group.controller_mut::<Crate>(id).unwrap().last_hit_by = Some(Owner::Server);
        let mut fell = BodyState::of(g.group.get(id).unwrap().body());
        fell.pos = [30.0, g.scene.kill_y - 1.0, 0.0];
        g.group.set_body_state(id, &fell).unwrap();
        let before = g.group.len();
        g.tick(1.0 / TICK_HZ);
        assert!(g.group.by_net(net).is_none());
        assert_eq!(g.group.len(), before, "the crate was not replaced");
        let k = KindId::of_name(kinds::CRATE);
        let back = g
            .group
            .iter()
            .filter(|e| e.kind() == k)
            .any(|e| (e.body().translation() - home).length() < 0.1);
        assert!(back, "no crate back at its home");
        assert_eq!(g.scores.first(), Some(&("hostess".to_string(), 1)));
    }
}
