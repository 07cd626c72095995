//! A test harness for multi-peer sessions: one server and some clients on the in-memory
//! [`Hub`], each a [`NetManager`] with its own [`EntityGroup`] built from **your** kinds
//! and scenery, on a virtual clock, optionally behind the seeded [`Conditioned`] network.
//! Tests read as "build this, run for so long, expect that":
//!
//! ```
//! use lanyard::prelude::*;
//! use lanyard_net::NetConfig;
//! use lanyard_net::harness::Scenario;
//! use std::sync::Arc;
//!
//! let mut kinds = KindRegistry::new();
//! lanyard_demo::register(&mut kinds).unwrap();
//! let mut s = Scenario::with_registry(
//!     Arc::new(kinds),
//!     |_scenery: &mut EntityGroup| {},          // what every peer loads for itself
//!     NetConfig::default(),
//!     None,                                   // or Some((Conditions { .. }, seed))
//!     60.0,                                   // frames per second of the virtual clock
//!     |server: &mut EntityGroup| { /* the server's world */ },
//! );
//! s.add_client(NetConfig::default(), "ann", None);
//! s.wait_for(3.0, "ann to join", |s| s.all_joined()).unwrap();
//! let ticket = s.clients[0].group.request_spawn(lanyard_demo::MOVER, &lanyard_demo::MoverParams {
//!     pos: [0.0, 0.6, 0.0], half_extents: [0.5; 3], seed: 1, speed: 3.0, period: 40, moves_for: 60,
//! }).unwrap();
//! s.run_for(1.0);
//! let mover = s.clients[0].group.spawned(ticket).expect("confirmed by now");
//! assert!(!s.clients[0].group.get(mover).unwrap().net_id().is_provisional());
//! ```
//!
//! How it runs, so a test can count on it:
//!
//! * A client's group is built with `Role::Client(ClientId(0))`; the real id comes with the
//!   server's welcome.
//! * Each frame, every peer (the server first, then the clients in the order they were
//!   added) drains its transport into its NetManager, updates, and sends what it queued
//!   ([`crate::pump`] before and after [`NetManager::update`], as a game loop does).
//! * Peer order sets latency on a perfect hub: what the server sends in a frame reaches
//!   the clients the same frame; what a client sends reaches the server the next. With
//!   [`Scenario::even`] every peer updates before any sends or lets the frame's time pass,
//!   and a datagram takes a frame each way alike.
//! * [`Scenario::wait_for`] runs until a condition holds within a budget, and otherwise
//!   fails with a dump of every peer (connection, entities, last events).

use crate::{
    Conditioned, Conditions, Hub, NetConfig, NetEvent, NetFrame, NetManager, Transport, pump,
};
use lanyard::prelude::*;
use std::net::SocketAddr;
use std::sync::Arc;

/// One peer: its network manager, its world, its transport, and every event it reported.
pub struct Peer {
    /// The network manager.
    pub net: NetManager,
    /// Its world.
    pub group: EntityGroup,
    /// Its transport (a hub endpoint, perhaps conditioned).
    pub transport: Box<dyn Transport>,
    /// Every event it reported, in order.
    pub events: Vec<NetEvent>,
    /// Every frame report, in order.
    pub frames: Vec<NetFrame>,
    /// While false the peer is frozen: no datagrams in or out, no updates (a silent peer).
    pub alive: bool,
    /// While true the peer hears nothing (its incoming datagrams are lost) but goes on
    /// updating and sending: a one-way broken link.
    pub deaf: bool,
    /// While true the peer's link is cut both ways: it goes on updating, but nothing it
    /// sends arrives and nothing reaches it (a pulled cable, a Wi-Fi dropout).
    pub cut: bool,
}

impl Peer {
    /// What the conditioner on its outgoing datagrams did, if it has one.
    pub fn conditioner_stats(&self) -> Option<crate::ConditionerStats> {
        self.transport.conditioner_stats()
    }

    /// One frame: take in datagrams, update, send, then let the frame's time pass.
    pub fn step(&mut self, dt: f32) {
        self.take_in_and_update(dt);
        self.send_out();
        self.transport.advance(dt);
    }

    /// Takes in what came and updates, sending nothing yet.
    fn take_in_and_update(&mut self, dt: f32) {
        if !self.alive {
            // A frozen peer's datagrams pile up unread, like a hung process's socket.
            return;
        }
        if self.deaf || self.cut {
            while self.transport.recv().is_some() {}
        }
        pump(&mut self.net, self.transport.as_mut());
        let f = self.net.update(&mut self.group, dt);
        self.frames.push(f);
    }

    /// Sends what the update queued (and takes in what came meanwhile), and keeps its
    /// events.
    fn send_out(&mut self) {
        if !self.alive {
            return;
        }
        if self.cut {
            self.net.drain_outgoing().for_each(drop);
        }
        pump(&mut self.net, self.transport.as_mut());
        while let Some(e) = self.net.poll_event() {
            self.events.push(e);
        }
    }

    /// The body position of the entity with network id `net`.
    pub fn pos(&self, net: NetId) -> Option<Vec3> {
        self.group.by_net(net).map(|e| e.body().translation())
    }

    /// The network ids of every entity this peer has, sorted.
    pub fn net_ids(&self) -> Vec<NetId> {
        self.group.iter().map(|e| e.net_id()).collect()
    }
}

/// The address of peer `i` on the hub: the server (0) at `127.0.0.1:7000`, client `i` at a
/// loopback address of its own, `127.1.(i / 256).(i % 256)`, port `7000 + i`, as players on
/// a LAN come from machines of their own (a server answers only so many hellos from one
/// source a second). Addresses grow with `i`, so peers sort as they were added.
pub fn hub_addr(i: usize) -> SocketAddr {
    let port = 7000 + i as u16;
    if i == 0 {
        return SocketAddr::from(([127, 0, 0, 1], port));
    }
    SocketAddr::from(([127, 1, (i >> 8) as u8, i as u8], port))
}

/// The stranger's address on the hub.
pub fn stranger_addr() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 9], 7999))
}

/// A server and its clients on one hub.
pub struct Scenario {
    /// The hub.
    pub hub: Hub,
    /// The server.
    pub server: Peer,
    /// The clients, in the order they were added.
    pub clients: Vec<Peer>,
    /// The frame time, seconds.
    pub dt: f32,
    /// Whether every peer updates before any sends or lets the frame's time pass, so a
    /// datagram waits for its reader alike both ways (a frame on a perfect hub). By default
    /// (false) peers step one after another, the server first: a client hears the server
    /// in the frame it sent, and the server hears a client only in the next, so the way up
    /// takes a frame more than the way down, a one-sided difference that anything splitting
    /// a round trip evenly reads as half a frame.
    pub even: bool,
    conditions: Option<(Conditions, u64)>,
    stranger: Option<Stranger>,
    registry: Arc<KindRegistry>,
    scenery: Arc<dyn Fn(&mut EntityGroup)>,
}

/// A host on the hub that is no peer: every frame it sprays datagrams of random bytes at
/// the server, half of them behind a valid header so they get past the first check.
pub struct Stranger {
    transport: Box<dyn Transport>,
    rng: SeededRng,
    /// Datagrams sent so far.
    pub sent: u64,
}

impl Stranger {
    fn spray(&mut self, to: SocketAddr) {
        for _ in 0..3 {
            let len = 1 + self.rng.below(400) as usize;
            let mut d: Vec<u8> = (0..len).map(|_| self.rng.below(256) as u8).collect();
            if self.rng.chance(0.5) && d.len() >= 5 {
                d[..4].copy_from_slice(&[b'L', b'Y', crate::PROTOCOL_VERSION as u8, 0]);
                d[4] = 1 + self.rng.below(7) as u8;
            }
            self.transport.send(to, &d);
            self.sent += 1;
        }
    }
}

fn transport(
    hub: &Hub,
    addr: SocketAddr,
    conditions: Option<(Conditions, u64)>,
    salt: u64,
) -> Box<dyn Transport> {
    let ep = hub.endpoint(addr);
    match conditions {
        Some((c, seed)) => Box::new(Conditioned::new(
            ep,
            c,
            seed.wrapping_mul(31).wrapping_add(salt),
        )),
        None => Box::new(ep),
    }
}

/// Seeded entropy for peer `i` of a scenario: every run makes the same session secrets.
pub fn entropy(i: u64) -> [u8; 32] {
    let mut e = [0u8; 32];
    for (k, b) in e.iter_mut().enumerate() {
        *b = (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> ((k % 8) * 8)) as u8 ^ k as u8;
    }
    e
}

impl Scenario {
    /// A server of the kinds in `registry` whose world `world` builds (scenery included:
    /// `world` gets an empty group), on a hub with `conditions` (seeded) on every peer's
    /// outgoing datagrams, stepping at `1/fps` seconds a frame. `scenery` is what each
    /// client loads for itself (scenery is not sent over the network).
    pub fn with_registry(
        registry: Arc<KindRegistry>,
        scenery: impl Fn(&mut EntityGroup) + 'static,
        config: NetConfig,
        conditions: Option<(Conditions, u64)>,
        fps: f32,
        world: impl FnOnce(&mut EntityGroup),
    ) -> Self {
        let hub = Hub::new();
        let mut group = EntityGroup::new(
            registry.clone(),
            GroupConfig {
                dt: 1.0 / fps,
                ..GroupConfig::default()
            },
        );
        // Strict: every section refused is in the frame's report, not only counted.
        group.set_strict(true);
        world(&mut group);
        let server = Peer {
            net: NetManager::server(config, [0x5e; 32]),
            group,
            transport: transport(&hub, hub_addr(0), conditions, 0),
            events: Vec::new(),
            frames: Vec::new(),
            alive: true,
            deaf: false,
            cut: false,
        };
        Scenario {
            hub,
            server,
            clients: Vec::new(),
            dt: 1.0 / fps,
            even: false,
            conditions,
            stranger: None,
            registry,
            scenery: Arc::new(scenery),
        }
    }

    /// Adds a client that says hello as `name`; returns its index. It loads the scenery
    /// itself (scenery is not sent over the network).
    pub fn add_client(&mut self, config: NetConfig, name: &str, password: Option<&str>) -> usize {
        let registry = self.registry.clone();
        self.add_client_with(registry, config, name, password)
    }

    /// [`add_client`](Self::add_client) with a world of other kinds than the server's (a
    /// client built from another version of the game).
    pub fn add_client_with(
        &mut self,
        registry: Arc<KindRegistry>,
        config: NetConfig,
        name: &str,
        password: Option<&str>,
    ) -> usize {
        let i = self.clients.len() + 1;
        let net = NetManager::client(config, hub_addr(0), name, password, entropy(i as u64));
        self.push_client(registry, net)
    }

    /// Adds a client that takes up the session `claim` holds (another client's, whose
    /// process died: mark it not `alive`), as `name`, from an address of its own; returns
    /// its index.
    pub fn add_client_claiming(
        &mut self,
        config: NetConfig,
        claim: &crate::SessionClaim,
        name: &str,
    ) -> usize {
        let i = self.clients.len() + 1;
        let net = NetManager::client_claiming(config, claim, name, None, entropy(i as u64));
        let registry = self.registry.clone();
        self.push_client(registry, net)
    }

    /// Adds a client peer on the next address, with a world of `registry`'s kinds and the
    /// scenery, driven by `net`.
    fn push_client(&mut self, registry: Arc<KindRegistry>, net: NetManager) -> usize {
        let i = self.clients.len() + 1;
        let mut group = EntityGroup::new(
            registry,
            GroupConfig {
                dt: self.dt,
                role: Role::Client(ClientId(0)),
                ..GroupConfig::default()
            },
        );
        group.set_strict(true);
        (self.scenery)(&mut group);
        self.clients.push(Peer {
            net,
            group,
            transport: transport(&self.hub, hub_addr(i), self.conditions, i as u64),
            events: Vec::new(),
            frames: Vec::new(),
            alive: true,
            deaf: false,
            cut: false,
        });
        i - 1
    }

    /// Adds a [`Stranger`] spraying random datagrams at the server from its own address on
    /// the hub, drawing from `seed`.
    pub fn add_stranger(&mut self, seed: u64) {
        self.stranger = Some(Stranger {
            transport: Box::new(self.hub.endpoint(stranger_addr())),
            rng: SeededRng::new(seed),
            sent: 0,
        });
    }

    /// How many datagrams the stranger has sent.
    pub fn stranger_sent(&self) -> u64 {
        self.stranger.as_ref().map_or(0, |s| s.sent)
    }

    /// One frame of every peer: the server first, then the clients (all before the
    /// frame's time passes on any link, if [`even`](Self::even)).
    pub fn step(&mut self) {
        if let Some(st) = &mut self.stranger {
            st.spray(hub_addr(0));
            while st.transport.recv().is_some() {}
            st.transport.advance(self.dt);
        }
        if self.even {
            for p in std::iter::once(&mut self.server).chain(&mut self.clients) {
                p.take_in_and_update(self.dt);
            }
            for p in std::iter::once(&mut self.server).chain(&mut self.clients) {
                p.send_out();
                p.transport.advance(self.dt);
            }
            return;
        }
        self.server.step(self.dt);
        for c in &mut self.clients {
            c.step(self.dt);
        }
    }

    /// Steps for `seconds` of simulated time.
    pub fn run_for(&mut self, seconds: f32) {
        let n = (seconds / self.dt).round() as usize;
        for _ in 0..n {
            self.step();
        }
    }

    /// Steps until `done` holds or `seconds` pass; returns whether it held.
    pub fn run_until(&mut self, seconds: f32, mut done: impl FnMut(&Scenario) -> bool) -> bool {
        let n = (seconds / self.dt).round() as usize;
        for _ in 0..n {
            if done(self) {
                return true;
            }
            self.step();
        }
        done(self)
    }

    /// Steps until `done` holds, for at most `seconds` of simulated time. If it never
    /// does, the error says what was awaited and dumps every peer, to read in the test's
    /// failure.
    pub fn wait_for(
        &mut self,
        seconds: f32,
        what: &str,
        done: impl FnMut(&Scenario) -> bool,
    ) -> Result<(), Stuck> {
        if self.run_until(seconds, done) {
            return Ok(());
        }
        Err(Stuck {
            what: what.to_owned(),
            seconds,
            dump: self.dump(),
        })
    }

    /// Every peer as text: its connection, its world, its last events.
    pub fn dump(&self) -> String {
        let mut out = String::new();
        let peers = std::iter::once(("server".to_owned(), &self.server)).chain(
            self.clients
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("client {i}"), c)),
        );
        for (who, p) in peers {
            let names: Vec<String> = p
                .group
                .iter()
                .take(12)
                .map(|e| {
                    let kind = p.group.registry().name_of(e.kind()).unwrap_or("?");
                    format!("{kind} {} ({:?})", e.net_id(), e.owner())
                })
                .collect();
            let last: Vec<String> = p
                .events
                .iter()
                .rev()
                .take(5)
                .map(|e| format!("{e:?}"))
                .collect();
            out.push_str(&format!(
                "{who}: {} tick {}, {} entities [{}{}], last events {:?}\n",
                if p.net.is_server() || p.net.is_connected() {
                    "connected,"
                } else {
                    "not connected,"
                },
                p.group.tick(),
                p.group.len(),
                names.join(", "),
                if p.group.len() > 12 { ", ..." } else { "" },
                last,
            ));
        }
        out
    }

    /// Whether every client has joined.
    pub fn all_joined(&self) -> bool {
        self.clients.iter().all(|c| c.net.is_connected())
    }

    /// Who holds the body with network id `net` on the server (its owner: the server, the
    /// client that owns it, or one that took it over by pushing it), if the server has it.
    pub fn holder(&self, net: NetId) -> Option<Owner> {
        self.server.group.by_net(net).map(|e| e.owner())
    }

    /// Who holds the body `net` on the server, its authority's sequence number and the
    /// server's tick since when (see [`lanyard::Entity::authority_seq`]).
    pub fn authority(&self, net: NetId) -> Option<(Owner, u16, u64)> {
        let e = self.server.group.by_net(net)?;
        Some((e.owner(), e.authority_seq(), e.owner_since()))
    }

    /// Asserts that `holder` holds the body `net` on the server and on every connected
    /// client's screen (hand-off), with the server's authority sequence number everywhere,
    /// naming the first peer that thinks otherwise.
    pub fn assert_held_by(&self, net: NetId, holder: Owner) {
        assert_eq!(self.holder(net), Some(holder), "{net} on the server");
        let seq = self.authority(net).map(|a| a.1);
        for (i, c) in self.clients.iter().enumerate() {
            if c.net.is_connected() {
                let theirs = c.group.by_net(net).map(|e| (e.owner(), e.authority_seq()));
                assert_eq!(theirs.map(|t| t.0), Some(holder), "{net} on client {i}");
                assert_eq!(
                    theirs.map(|t| t.1),
                    seq,
                    "{net}'s authority sequence on client {i}"
                );
            }
        }
    }
}

/// What [`Scenario::wait_for`] waited for in vain, with every peer's state.
#[derive(Debug, Clone)]
pub struct Stuck {
    /// What was awaited.
    pub what: String,
    /// For how long.
    pub seconds: f32,
    /// Every peer, as [`Scenario::dump`] says.
    pub dump: String,
}

impl std::fmt::Display for Stuck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "waited {} s for {}, in vain:\n{}",
            self.seconds, self.what, self.dump
        )
    }
}

impl std::error::Error for Stuck {}
