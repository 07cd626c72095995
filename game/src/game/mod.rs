//! A running Tumbleyard peer: its world, its NetManager and socket, and the rules.
//!
//! The same [`Game`] serves the dedicated server, the host of a listen-server game (a
//! server with a player of its own), a windowed client and a bot. The caller drives it
//! with [`Game::tick`] at a fixed rate and reads what it needs to draw or report.
//!
//! A game is made of parts, each a type with private fields in a file of its own, and
//! the game's methods only hand each what concerns it:
//!
//! | part | file | owns |
//! |---|---|---|
//! | the world | (`lanyard`) | the [`EntityGroup`] |
//! | `Link` | `link.rs` | the [`NetManager`], the socket, discovery, the rendezvous registration and relayed routes |
//! | `Rules` | `rules.rs` | server only: scores, who hit what, the chat rate limit, sessions lost |
//! | `Standing` | `standing.rs` | this peer's name, whether it joined, follows a new host, or ended and why |
//! | [`Presentation`] | `presentation.rs` | blasts, popups, the score table, lines to show, the net graph |
//! | `Arrival` | `arena.rs` | client: the server's arena as its parts come |
//! | `Recorder` | `recording.rs` | the recording file |
//!
//! Where the parts meet: `net_events.rs` dispatches each [`NetEvent`](lanyard_net::NetEvent)
//! to its owner (and takes a game over on host migration), `yard.rs` runs the rules on
//! the world, `console.rs` takes what people type (chat and the server's console),
//! `report.rs` writes what a game reports, and `start.rs` puts a game together.

use crate::game::arena::Arrival;
use crate::game::link::Link;
use crate::game::recording::{Recorder, Sink};
use crate::game::rules::Rules;
use crate::game::standing::Standing;
use crate::kinds::{self, Player, PlayerInput, PlayerParams};
use crate::scene::Scene;
use crate::witness::{SentLog, TakenPoses};
use lanyard::KindId;
use lanyard::prelude::*;
use lanyard_net::Addrs;
use lanyard_net::discovery::ServerInfo;
use lanyard_net::{Entropy, NetManager, PROTOCOL_VERSION, RejectReason};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

mod address;
mod arena;
#[cfg(not(target_arch = "wasm32"))]
pub mod claims;
mod console;
pub mod fuse;
mod link;
mod net_events;
mod presentation;
mod recording;
mod report;
mod rules;
mod standing;
mod start;
#[cfg(not(target_arch = "wasm32"))]
mod start_udp;
mod text;
mod throwing;
#[cfg(not(target_arch = "wasm32"))]
pub mod web;
mod yard;

pub use address::{rendezvous_addr, server_addr};
pub use presentation::{
    BLAST_SECONDS, Blast, GRAPH_SAMPLES, GraphSample, NOTICE_FADE, NOTICE_SECONDS, POPUP_SECONDS,
    Popup, Presentation, Seen, Traffic, popup_rows,
};
pub use recording::RecordingBuffer;
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
    /// Server: the port to serve the game's page on (TCP) and the pages' channels (UDP),
    /// for players in a browser (none: no page).
    pub web: Option<u16>,
    /// Client: the folder where a joined game keeps its session's claim, so that the game
    /// started again after a crash plays on as the same player (none: kept nowhere; see
    /// `claims`).
    pub sessions: Option<std::path::PathBuf>,
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
            web: None,
            sessions: None,
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

/// A running peer: its parts, each owning its state, and the tick that drives them.
pub struct Game {
    /// The arena.
    scene: Scene,
    options: Options,
    /// The world.
    group: EntityGroup,
    /// The network and the socket, discovery and the rendezvous side.
    link: Link,
    /// Server: the rules' bookkeeping (none on a client).
    rules: Option<Rules>,
    /// Where this peer stands in the session.
    standing: Standing,
    /// What this peer shows.
    presentation: Presentation,
    /// Client: the server's arena as it comes in.
    arena: Arrival,
    recorder: Recorder,
    input: PlayerInput,
    /// Server: the poses its recent broadcasts carried (for the summary).
    sent_log: SentLog,
    /// Client: the newest pose it took of each entity, by broadcast (for the report).
    received: TakenPoses,
    /// Client: the slot on disk where its session's claim is kept for a restart.
    #[cfg(not(target_arch = "wasm32"))]
    claim_slot: Option<claims::ClaimSlot>,
}

/// The longest chat line, in characters.
pub const CHAT_MAX: usize = 120;
/// At most this many chat lines from one client...
pub const CHAT_BURST: usize = 5;
/// ... in this many seconds.
pub const CHAT_WINDOW: f64 = 10.0;

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
#[cfg(not(target_arch = "wasm32"))]
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

/// 32 bytes from the page's randomness (`crypto.getRandomValues`), for a session's secrets.
#[cfg(target_arch = "wasm32")]
pub fn entropy() -> Entropy {
    crate::page::random()
}

impl Game {
    /// The arena.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The world.
    pub fn group(&self) -> &EntityGroup {
        &self.group
    }

    /// The world, to change (tests and tools place bodies and spawn entities with it).
    pub fn group_mut(&mut self) -> &mut EntityGroup {
        &mut self.group
    }

    /// The network layer.
    pub fn net(&self) -> &NetManager {
        self.link.net()
    }

    /// The network layer, to change (tools and tests set a server's relevance filter
    /// with it, say).
    pub fn net_mut(&mut self) -> &mut NetManager {
        self.link.net_mut()
    }

    /// Server: the poses its recent broadcasts carried; client: the newest pose it took
    /// of each entity, by broadcast (see [`witness`](crate::witness)): what tests compare
    /// to find a state filed under the wrong broadcast.
    pub fn witness(&self) -> (&SentLog, &TakenPoses) {
        (&self.sent_log, &self.received)
    }

    /// What this peer shows: blasts, popups, the score table, lines, the net graph.
    pub fn presentation(&self) -> &Presentation {
        &self.presentation
    }

    /// Shows `line` (in the window's log, or the server's output).
    pub fn say(&mut self, line: String) {
        self.presentation.say(line);
    }

    /// Takes the lines to show that came since the last call, oldest first.
    pub fn take_messages(&mut self) -> Vec<String> {
        self.presentation.take_messages()
    }

    /// Forgets the lines to show so far.
    pub fn clear_messages(&mut self) {
        self.presentation.clear_messages();
    }

    /// This peer's player name (none on a dedicated server): the one the server gave, if
    /// the one asked for was taken.
    pub fn my_name(&self) -> Option<&str> {
        self.standing.my_name()
    }

    /// Why the session ended, if it did (a sentence for people).
    pub fn ended(&self) -> Option<&str> {
        self.standing.ended()
    }

    /// Why the session ended, in the words a bot report's `ended` key uses: `"server shut
    /// down"`, `"kicked: REASON"`, `"session expired"`, `"connection lost"`, or
    /// `"refused: REASON"` and `"no server answered"` for a session that never started.
    pub fn end_reason(&self) -> Option<&str> {
        self.standing.end_reason()
    }

    /// Why the server refused us, if it did.
    pub fn refused(&self) -> Option<&RejectReason> {
        self.standing.refused()
    }

    /// The game's name: the server's (from its welcome, on a client).
    pub fn server_name(&self) -> Option<&str> {
        self.standing.server_name()
    }

    /// Every host change seen (host migration): who left, and who hosts since.
    pub fn host_changes(&self) -> &[(String, String)] {
        self.standing.host_changes()
    }

    /// Server: sessions that ended without the player leaving or being sent away (timed
    /// out, expired, undeliverable, too many bad datagrams).
    pub fn sessions_lost(&self) -> u64 {
        self.rules.as_ref().map_or(0, Rules::sessions_lost)
    }

    /// Server: chat lines dropped by the rate limit.
    pub fn chat_dropped(&self) -> u64 {
        self.rules.as_ref().map_or(0, Rules::chat_dropped)
    }

    /// Records this peer's world from now on into `path` (see `lanyard::record`): the
    /// arena goes in the header, so the file replays on its own.
    pub fn record_to(&mut self, path: &std::path::Path) -> Result<(), String> {
        self.record_into(Sink::File(path.to_owned()))
    }

    /// Records the game into `buf` (a page's recording, which has no file to go to).
    pub fn record_to_buffer(&mut self, buf: RecordingBuffer) -> Result<(), String> {
        self.record_into(Sink::Memory(buf))
    }

    fn record_into(&mut self, sink: Sink) -> Result<(), String> {
        let scene = toml::to_string(&self.scene).map_err(|e| e.to_string())?;
        let who = if self.is_server() { "server" } else { "client" };
        self.recorder.start(&mut self.group, &scene, who, sink)
    }

    /// Writes out what the recording holds so far.
    fn flush_recording(&mut self) {
        if let Err(e) = self.recorder.flush(&mut self.group) {
            self.say(format!("recording stopped: {e}"));
        }
    }

    /// Whether this peer is the server (dedicated or host).
    pub fn is_server(&self) -> bool {
        self.rules.is_some()
    }

    /// Clients: the server's address, if it refused us for the password (none given, or
    /// a wrong one): where to ask for it and try again.
    pub fn wants_password(&self) -> Option<SocketAddr> {
        match self.standing.refused() {
            Some(RejectReason::BadPassword) => self.net().server_addr(),
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
        self.standing.is_following()
    }

    /// Whether a client is in a session (always true for a server).
    pub fn is_joined(&self) -> bool {
        self.standing.is_joined()
    }

    /// The owner this peer's entities have.
    pub fn me(&self) -> Option<Owner> {
        if self.is_server() {
            return Some(Owner::Server);
        }
        self.net().client_id().map(Owner::Client)
    }

    /// This peer's player entity, if it has one.
    pub fn my_player(&self) -> Option<EntityId> {
        let me = self.me()?;
        self.standing.my_name()?;
        let player = KindId::of_name(kinds::PLAYER);
        self.group
            .iter()
            .find(|e| e.kind() == player && e.owner() == me)
            .map(|e| e.id())
    }

    /// Where this peer's player appears.
    pub fn my_spawn(&self) -> [f32; 3] {
        let n = self.net().client_id().map_or(0, |c| usize::from(c.0));
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
                Owner::Server => self.host_name().map(str::to_owned),
                Owner::Client(c) => self
                    .net()
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

    /// Server: the host's player name, if the host plays.
    fn host_name(&self) -> Option<&str> {
        self.rules.as_ref()?.host_name()
    }

    /// Every player's name: the host's and the connected clients' (on a server), or the
    /// players seen (on a client).
    pub fn player_names(&self) -> Vec<String> {
        let mut names = self.players_here();
        if self.is_server() {
            names.extend(self.host_name().map(str::to_owned));
            names.extend(self.playing());
        }
        names.into_iter().collect()
    }

    /// Server: the names of the clients that play (live or waiting for a resume).
    fn playing(&self) -> Vec<String> {
        let sessions = self.net().sessions().into_iter();
        sessions.filter(|s| !s.spectator).map(|s| s.name).collect()
    }

    /// Server: the names of the clients that watch.
    pub fn spectator_names(&self) -> Vec<String> {
        let sessions = self.net().sessions().into_iter();
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
        self.link.wait(timeout);
    }

    /// One tick: datagrams in, the networked frame, the rules, datagrams out. `dt` is the
    /// time since the last tick (seconds): the world steps one tick whatever it is, and the
    /// network's clock takes all of it (more than a tick after a stall, see
    /// [`FixedStep::take_stall`](crate::runner::FixedStep::take_stall)).
    pub fn tick(&mut self, dt: f32) {
        self.tick_with(dt, dt);
    }

    /// One tick of a loop that runs in real time (a window, the headless modes): as
    /// [`tick`](Self::tick), but the network's clock takes what the socket's clock says
    /// passed since the last such tick (a stall included), so a burst of ticks between
    /// two drawn frames stamps the wire with when its datagrams really leave. On a
    /// transport with no clock of its own it takes `dt`.
    pub fn tick_live(&mut self, dt: f32) {
        let net_dt = self.link.net_dt(dt);
        self.tick_with(dt, net_dt);
    }

    /// One tick, the network's clock taking `net_dt` seconds.
    fn tick_with(&mut self, dt: f32, net_dt: f32) {
        self.link.advance(dt);
        self.pump();
        self.feed_my_player();
        let sent = self.link.net_mut().update(&mut self.group, net_dt).sent;
        self.note_witness(sent);
        self.handle_events();
        self.keep_claim();
        if self.is_server() {
            self.server_rules();
        }
        self.pump();
        if self.link.announces() {
            let info = self.server_info();
            for line in self.link.announce(self.clock(), &info) {
                self.say(line);
            }
            self.pump();
        }
        // Once a second: the recording packs what it gets in one go.
        if self.group.tick().is_multiple_of(TICK_HZ as u64) {
            if self.is_server() {
                self.link.forget_routes(self.clock());
            }
            self.flush_recording();
        }
        self.presentation.age(dt);
        let (ping, loss) = (self.ping_ms().unwrap_or(0.0), self.loss());
        self.presentation.measure(dt, self.bytes(), ping, loss);
    }

    /// Notes the poses this frame sent (server, when it broadcast) or took (client), for
    /// reports that compare peers at the same broadcast.
    fn note_witness(&mut self, sent: bool) {
        let net = self.link.net();
        if let Some(n) = net.broadcast_number() {
            self.sent_log.observe(&self.group);
            if sent {
                self.sent_log.broadcast(n, &self.group);
            }
        } else {
            let me = self.me();
            self.received
                .note(&self.group, me, |id| net.state_broadcast(id));
        }
    }

    /// Seconds of game time (ticks of the world): the rendezvous side's clock.
    fn clock(&self) -> f64 {
        self.group.tick() as f64 / f64::from(TICK_HZ)
    }

    /// Moves datagrams between the socket and the network layer.
    fn pump(&mut self) {
        let now = self.clock();
        self.link.pump(now);
    }

    /// The server as discovery answers and the rendezvous listing show it.
    fn server_info(&self) -> ServerInfo {
        let (playing, watching) = self.net().session_counts();
        ServerInfo {
            name: self.options.name.clone(),
            players: playing as u16 + u16::from(self.standing.my_name().is_some()),
            max_players: self.options.max_players,
            spectators: watching as u16,
            max_spectators: self.options.max_spectators,
            password: self.options.password.is_some(),
            version: PROTOCOL_VERSION,
            game_port: self.local_addr().port(),
            web_port: self.options.web,
        }
    }

    /// Whether this client gave the server a password.
    pub fn gave_password(&self) -> bool {
        self.options.password.is_some()
    }

    /// The names of the players in the game now (each one's player body is in the world).
    pub fn players_here(&self) -> BTreeSet<String> {
        let player = KindId::of_name(kinds::PLAYER);
        let names = self.group.iter().filter(|e| e.kind() == player);
        names
            .filter_map(|e| self.group.controller::<Player>(e.id()))
            .map(|p| p.name.clone())
            .collect()
    }

    /// The port the game's page is served on, for players in a browser (`--web`).
    pub fn web_port(&self) -> Option<u16> {
        self.options.web
    }

    /// The public address the rendezvous server saw, once registered.
    pub fn public_addr(&self) -> Option<SocketAddr> {
        self.link.public_addr()
    }

    /// The address the game socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.link.local_addr()
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
        if self.standing.fell(fallen) {
            self.say("you fell off the yard: back at your spawn point".into());
        }
        // Through the group, so a recording keeps it.
        if let Err(e) = self.group.send_input(id, &input.to_input()) {
            tracing::warn!("the player did not take its input: {e}");
        }
    }

    /// Keeps the session's newest claim in its slot on disk, for the game started again
    /// after a crash; empties the slot once the session is over or this peer hosts.
    fn keep_claim(&mut self) {
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(slot) = &mut self.claim_slot {
            match self.link.net().session_claim() {
                _ if self.standing.ended().is_some() || self.link.net().is_server() => {
                    slot.forget()
                }
                Some(claim) => slot.keep(claim),
                None => {}
            }
        }
    }

    /// Says goodbye (a client) or shuts down (a server), and sends it.
    pub fn shutdown(&mut self) {
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(slot) = &mut self.claim_slot {
            // Left on purpose: nothing to take up again.
            slot.forget();
        }
        let now = self.clock();
        self.link.shutdown(&mut self.group, now);
        // Stopping (not only taking) ends the file with a body frame of the world as it is.
        self.recorder.stop(&mut self.group);
    }
}

#[cfg(test)]
mod tests;
