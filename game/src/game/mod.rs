//! A running Tumbleyard peer: its world, its NetManager and socket, and the rules.
//!
//! The same [`Game`] serves the dedicated server, the host of a listen-server game (a
//! server with a player of its own), a windowed client and a bot. The caller drives it
//! with [`Game::tick`] at a fixed rate and reads what it needs to draw or report.

use crate::kinds::{self, Player, PlayerInput, PlayerParams};
use crate::scene::Scene;
use crate::witness::{SentLog, TakenPoses};
use lanyard::KindId;
use lanyard::prelude::*;
use lanyard_net::discovery::{Responder, ServerInfo};
use lanyard_net::rendezvous::relay::{Received, Routes};
use lanyard_net::rendezvous::{self, Addrs, Registrar, RegistrarEvent};
use lanyard_net::{Entropy, NetManager, PROTOCOL_VERSION, Transport};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::time::Duration;

mod arena;
mod chat;
mod console;
mod effects;
mod migration;
mod net_events;
mod report;
mod rules;
mod start;
mod text;

pub use effects::{BLAST_SECONDS, Blast, POPUP_SECONDS, Popup, Seen};
pub use text::{SILENT_AFTER, clean_line, count, link_text, silent_for, wrap};

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
    pub rendezvous: Option<Addrs>,
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
    /// Who last blew each crate about (it scores if the crate goes off the yard).
    crate_hits: HashMap<NetId, Owner>,
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
    /// Where datagrams go: a UDP socket, or an endpoint of an in-memory hub in tests.
    socket: Box<dyn Transport>,
    responder: Option<Responder>,
    /// Server: its registration with a rendezvous server, and the punching toward the
    /// players it introduces.
    registrar: Option<Registrar>,
    /// The peers reached through the rendezvous server's relay (punching found no path),
    /// until a direct path opens.
    routes: Routes,
    options: Options,
    server: Option<ServerRules>,
    /// This peer's player name (none on a dedicated server).
    pub my_name: Option<String>,
    input: PlayerInput,
    /// The score table, highest first.
    pub scores: Vec<(String, u32)>,
    /// Recent explosions (for drawing).
    pub blasts: Vec<Blast>,
    /// Recent points (for drawing).
    pub popups: Vec<Popup>,
    /// Explosions and points seen so far (for sounds).
    pub seen: Seen,
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
    /// Server: sessions that ended without the player leaving or being sent away (timed
    /// out, expired, undeliverable, too many bad datagrams).
    pub sessions_lost: u64,
    /// Why the server refused us, if it did.
    pub refused: Option<lanyard_net::RejectReason>,
    /// The game's name: the server's (from its welcome, on a client).
    pub server_name: Option<String>,
    /// Every host change seen (host migration): who left, and who hosts since.
    pub host_changes: Vec<(String, String)>,
    /// Byte rates.
    pub traffic: Traffic,
    /// Server: chat lines dropped by the rate limit.
    pub chat_dropped: u64,
    /// The last ten seconds of ping, traffic and loss, oldest first, for the net graph.
    pub graph: std::collections::VecDeque<GraphSample>,
    joined: bool,
    /// Client: the host went and we follow the game to its successor.
    following: bool,
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
    sent_log: SentLog,
    /// Client: the newest pose it took of each entity, by broadcast (for the report).
    received: TakenPoses,
}

/// The longest chat line, in characters.
pub const CHAT_MAX: usize = 120;
/// At most this many chat lines from one client...
pub const CHAT_BURST: usize = 5;
/// ... in this many seconds.
pub const CHAT_WINDOW: f64 = 10.0;

/// Reads a server's address typed as `HOST[:PORT]` (the game's port by default), on the
/// command line or the start screen. An address is parsed as an address; only a host name
/// is looked up, and a bad port is an error before any lookup.
pub fn server_addr(text: &str) -> Result<SocketAddr, String> {
    addr_or_default(text, DEFAULT_PORT)
}

/// Reads a rendezvous server's addresses typed as `HOST[:PORT]` (port 47820 by default),
/// the way [`server_addr`] reads a game's, or a comma-separated list of them: a host name
/// gives its IPv6 and IPv4 addresses, and at most one of each family is kept (the first),
/// so a host registers, and a player joins, over both.
pub fn rendezvous_addr(text: &str) -> Result<Addrs, String> {
    let mut all = Vec::new();
    for part in text.split(',') {
        all.extend(addrs_or_default(part, rendezvous::DEFAULT_PORT)?);
    }
    Addrs::new(all).ok_or_else(|| format!("'{}' names no rendezvous server", text.trim()))
}

/// The address of `text`: of a host name's addresses, an IPv4 one if it has one.
fn addr_or_default(text: &str, default_port: u16) -> Result<SocketAddr, String> {
    let all = addrs_or_default(text, default_port)?;
    all.iter()
        .find(|a| a.is_ipv4())
        .or(all.first())
        .copied()
        .ok_or_else(|| format!("'{}' has no address", text.trim()))
}

/// The addresses of `text`: the one it is, or all a host name has.
fn addrs_or_default(text: &str, default_port: u16) -> Result<Vec<SocketAddr>, String> {
    use std::net::ToSocketAddrs;
    let text = text.trim();
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Ok(vec![a]);
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, default_port)]);
    }
    // An IPv6 address in brackets with no port: `[::1]`.
    if let Some(ip) = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .and_then(|t| t.parse::<Ipv6Addr>().ok())
    {
        return Ok(vec![SocketAddr::new(IpAddr::V6(ip), default_port)]);
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
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let all: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve '{host}': {e}"))?
        .collect();
    if all.is_empty() {
        return Err(format!("'{host}' has no address"));
    }
    Ok(all)
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
    lanyard_net::os_entropy().unwrap_or_else(|_| {
        let mut e = [0u8; 32];
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        e[..16].copy_from_slice(&t.as_nanos().to_le_bytes());
        e[16..20].copy_from_slice(&std::process::id().to_le_bytes());
        e
    })
}

impl Game {
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
            let written = self
                .group
                .take_recording()
                .map_err(|e| e.to_string())
                .and_then(|bytes| w.write_all(&bytes).map_err(|e| e.to_string()));
            if let Err(e) = written {
                self.messages.push(format!("recording stopped: {e}"));
                self.recording = None;
            }
        }
    }

    /// Whether this peer is the server (dedicated or host).
    pub fn is_server(&self) -> bool {
        self.server.is_some()
    }

    /// Clients: the server's address, if it refused us for the password (none given, or
    /// a wrong one): where to ask for it and try again.
    pub fn wants_password(&self) -> Option<std::net::SocketAddr> {
        match self.refused {
            Some(lanyard_net::RejectReason::BadPassword) => self.net.server_addr(),
            _ => None,
        }
    }

    /// Seconds until this peer's player may throw again (0 when it may now); none without
    /// a player.
    pub fn throw_cooldown(&self) -> Option<f32> {
        let id = self.my_player()?;
        let ticks = self.group.controller::<Player>(id)?.cooldown_ticks();
        Some(ticks as f32 * self.group.config().dt)
    }

    /// Servers: whether joining this game takes a password.
    pub fn is_locked(&self) -> bool {
        self.options.password.is_some()
    }

    /// Whether this peer watches without a player of its own.
    pub fn is_spectator(&self) -> bool {
        self.options.spectate
    }

    /// Client: whether the host went and we follow the game to its successor (host
    /// migration) right now.
    pub fn is_following(&self) -> bool {
        self.following
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
        self.socket.advance(dt);
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
            // A host forgets the relayed routes of players that left.
            if self.server.is_some() && self.routes.relayed_peers() > 0 {
                let live: BTreeSet<SocketAddr> =
                    self.net.sessions().iter().map(|s| s.addr).collect();
                let now = self.clock();
                self.routes.retain(now, |p| live.contains(&p));
            }
            self.flush_recording();
        }
        self.age_effects(dt);
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
        while let Some((from, bytes, age)) = self.socket.recv_aged() {
            // Relayed datagrams come out as the peer's own; a relayed peer's punch opens
            // the direct path.
            let (from, bytes) = match self.routes.incoming(now, from, &bytes) {
                Received::Game(from, bytes) => (from, bytes),
                Received::Taken => continue,
            };
            if rendezvous::is_rendezvous(bytes) {
                // A server's registrar takes them; a client drops late punches.
                if let Some(r) = &mut self.registrar {
                    r.receive(now, from, bytes);
                }
                continue;
            }
            self.net.receive_aged(from, bytes, age);
        }
        for (to, bytes) in self.net.drain_outgoing() {
            let (to, bytes) = self.routes.outgoing(to, bytes);
            self.socket.send(to, &bytes);
        }
        for (to, bytes) in self.routes.poll(now) {
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
                RegistrarEvent::Relayed {
                    peer,
                    relay,
                    token,
                    nonce,
                } => {
                    self.routes.relay(
                        self.group.tick() as f64 / f64::from(TICK_HZ),
                        peer,
                        relay,
                        token,
                        nonce,
                    );
                    format!(
                        "no direct path to the player at {peer}: the rendezvous server {relay} relays it (still looking for one)"
                    )
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
        // Through the group, so a recording keeps it.
        if let Err(e) = self.group.send_input(id, &input.to_input()) {
            tracing::warn!("the player did not take its input: {e}");
        }
    }

    /// Says goodbye (a client) or shuts down (a server), and sends it.
    pub fn shutdown(&mut self) {
        self.net.disconnect(&mut self.group);
        if let Some(r) = &mut self.registrar {
            r.unregister();
        }
        self.pump();
        // Stopping (not only taking) ends the file with a body frame of the world as it is.
        if let Some(mut w) = self.recording.take() {
            use std::io::Write;
            if let Ok(bytes) = self.group.stop_recording() {
                let _ = w.write_all(&bytes);
            }
            let _ = w.flush();
        }
    }
}

#[cfg(test)]
mod tests;
