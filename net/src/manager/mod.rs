//! The [`NetManager`]: the thin facade a game uses, over the endpoint (who is who, and
//! admission), the connections (one per peer), and replication (what goes to whom). Its
//! update runs the group's one frame pipeline with a driver for its side.

use crate::config::{Entropy, NetConfig};
use crate::core::{Core, us};
use crate::endpoint::{ClientEndpoint, ServerEndpoint};
use crate::error::{DisconnectReason, NetError};
use crate::event::NetEvent;
use crate::replication::{Relevance, ServerReplication};
use crate::stats::{NetCounters, PeerStats};
use crate::wire::{self, Msg};
use lanyard::{ClientId, EntityGroup, EntityRef, FrameReport, Hook, Owner, WorldView};
use std::collections::VecDeque;
use std::net::SocketAddr;

mod client;
mod frame;
mod server;
mod step_down;
mod succession;

use crate::succession::Successor;
use client::Client;
use server::Server;

/// What one [`NetManager::update`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetFrame {
    /// What the group's frame did (empty while a client is not connected).
    pub frame: FrameReport,
    /// Whether this update broadcast (server) or sent its state up (client).
    pub sent: bool,
}

/// One session on a server, as [`NetManager::sessions`] lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// The client's id.
    pub client: ClientId,
    /// Its name.
    pub name: String,
    /// Whether it watches.
    pub spectator: bool,
    /// Whether it is silent and kept for a resume (its stats are from before).
    pub suspended: bool,
    /// Its link's counters (round trip, loss).
    pub stats: PeerStats,
    /// Its address (public, as this server sees it).
    pub addr: std::net::SocketAddr,
}

#[derive(Clone)]
enum Side {
    Server(Box<Server>),
    Client(Box<Client>),
}

/// Moves controller sections between a server and its clients. The same type serves both;
/// [`server`](NetManager::server) and [`client`](NetManager::client) pick the role.
///
/// It is sans-IO: it never touches a socket or a clock, and draws no randomness (the
/// caller gives it [`Entropy`]). Feed it what arrived with [`receive`](Self::receive), let
/// time pass and run the frame with [`update`](Self::update), and send what
/// [`drain_outgoing`](Self::drain_outgoing) gives.
///
/// `update` runs one frame of the [`EntityGroup`] it is given, through the group's one
/// pipeline ([`lanyard::pipeline`]):
///
/// * **Server**: take in what clients sent (handshakes; their owned entities' sections,
///   validated, applied and queued for forwarding; their spawn and despawn requests),
///   run the server paths, self-loopback, client paths and physics, announce spawns,
///   despawns and owner changes on the reliable channel, and, when the rate cap allows,
///   broadcast the packet and the forwarded sections to every client.
/// * **Client**: take in what the server sent (spawns, despawns, corrections, events, the
///   other entities' sections), run the server paths of its own entities and loop them back,
///   run every client path, step physics, and send its own sections up at the same cap.
///
/// With the feature `fuzzing` it is `Clone`, so a fuzz target builds a session once and
/// starts every input from a copy. Never clone one that sends: both copies would seal
/// different datagrams under the same nonces.
#[cfg_attr(feature = "fuzzing", derive(Clone))]
pub struct NetManager {
    core: Core,
    side: Side,
    /// Datagrams waiting for the next update: sender, bytes, and how long before it
    /// (microseconds) each arrived.
    inbox: VecDeque<(SocketAddr, Vec<u8>, u64)>,
    /// The group's tick after the last update: a group that ticked since ran frames
    /// something else drove.
    group_tick: Option<u64>,
}

impl std::fmt::Debug for NetManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetManager")
            .field("server", &self.is_server())
            .field("client_id", &self.client_id())
            .field("now_us", &self.core.now)
            .finish_non_exhaustive()
    }
}

impl NetManager {
    /// A server. Give it the group it is the authority of in every `update`. `entropy`
    /// keys its handshake cookies and key pairs: draw it from the operating system.
    pub fn server(config: NetConfig, entropy: Entropy) -> Self {
        NetManager {
            core: Core::new(config),
            side: Side::Server(Box::new(Server {
                endpoint: ServerEndpoint::new(entropy),
                repl: ServerReplication::default(),
                probe: step_down::Probe::new(&entropy, None),
                was: None,
                stepped_down: None,
            })),
            inbox: VecDeque::new(),
            group_tick: None,
        }
    }

    /// A client that will say hello to `server` as `name`, proving `password` if it has
    /// one (the password itself never travels). `entropy` makes this session's nonce and
    /// key pair: draw it from the operating system, anew for every session.
    pub fn client(
        config: NetConfig,
        server: SocketAddr,
        name: &str,
        password: Option<&str>,
        entropy: Entropy,
    ) -> Self {
        let core = Core::new(config);
        let endpoint = ClientEndpoint::new(&core, server, name, password, entropy);
        Self::client_of(core, endpoint)
    }

    /// A client of `core` on `endpoint`.
    fn client_of(core: Core, endpoint: ClientEndpoint) -> Self {
        NetManager {
            core,
            side: Side::Client(Box::new(Client::new(endpoint))),
            inbox: VecDeque::new(),
            group_tick: None,
        }
    }

    /// A client that takes up the session `claim` holds, which an earlier process had (a
    /// game that crashed or was killed, started again within the server's grace window):
    /// it says hello to `claim.server()` as `name`, and resumes there under the same
    /// client id with the entities it owned ([`NetEvent::Joined`] says `resumed`). The
    /// world and the reliable channel start afresh. If the server keeps no such session
    /// any more, it joins anew. Keep the claim of a running session with
    /// [`session_claim`](Self::session_claim).
    pub fn client_claiming(
        config: NetConfig,
        claim: &crate::SessionClaim,
        name: &str,
        password: Option<&str>,
        entropy: Entropy,
    ) -> Self {
        let core = Core::new(config);
        let endpoint = ClientEndpoint::restore(&core, claim, name, password, entropy);
        Self::client_of(core, endpoint)
    }

    /// Client: what a new process needs to take this session up again
    /// ([`client_claiming`](Self::client_claiming)), once the server welcomed us and
    /// while we reconnect; `None` before, after the session ended, and on a server. It
    /// changes when the game follows a new host: keep the newest.
    pub fn session_claim(&self) -> Option<crate::SessionClaim> {
        match &self.side {
            Side::Client(c) => c.endpoint.claim(),
            Side::Server(_) => None,
        }
    }

    /// Client: the server's clock (seconds, from the stamps its datagrams carry) when it
    /// sent the newest state the last [`update`](Self::update) applied; `None` on a server
    /// and in an update that applied no state. Feed it to a
    /// [`Smoother`](lanyard::interp::Smoother), which stamps the poses with it.
    pub fn remote_time(&self) -> Option<f64> {
        match &self.side {
            Side::Client(c) => c.remote_time,
            Side::Server(_) => None,
        }
    }

    /// Client: the other clients' sections the last [`update`](Self::update) applied that
    /// the server relayed with their times (it does where clients may hold its bodies,
    /// hand-off), each with when its client sent it, on the server's clock like
    /// [`remote_time`](Self::remote_time). Feed them to a
    /// [`Smoother`](lanyard::interp::Smoother) with
    /// [`after_frame_relayed`](lanyard::interp::Smoother::after_frame_relayed), which draws
    /// each at the instant its client had it. Empty on a server.
    pub fn relayed_times(&self) -> &[(lanyard::NetId, f64)] {
        match &self.side {
            Side::Client(c) => &c.repl.relayed,
            Side::Server(_) => &[],
        }
    }

    /// Whether this is the server.
    pub fn is_server(&self) -> bool {
        matches!(self.side, Side::Server(_))
    }

    /// Fuzzing only: the connection to `client` (a server), or to the server (a client,
    /// which ignores `client`).
    #[cfg(feature = "fuzzing")]
    pub(crate) fn connection_mut(
        &mut self,
        client: ClientId,
    ) -> Option<&mut crate::connection::Connection> {
        match &mut self.side {
            Side::Server(s) => s.endpoint.peers.get_mut(&client).map(|p| &mut p.conn),
            Side::Client(c) => Some(&mut c.endpoint.conn),
        }
    }

    /// A client's id once the server accepted it (kept while it reconnects).
    pub fn client_id(&self) -> Option<ClientId> {
        match &self.side {
            Side::Client(c) if c.endpoint.conn.is_connected() || c.endpoint.reconnecting() => {
                c.endpoint.id
            }
            _ => None,
        }
    }

    /// Client: the server's address.
    pub fn server_addr(&self) -> Option<SocketAddr> {
        match &self.side {
            Side::Client(c) => Some(c.endpoint.conn.addr),
            Side::Server(_) => None,
        }
    }

    /// Client: asks the server for the whole world again, for a group that was rebuilt
    /// (a game that learned it must load another arena, say). Every entity comes again as a
    /// spawn, then whatever this client has beyond them is despawned; until then state
    /// for entities it lacks is dropped. The server grants this at most once every 5 s.
    pub fn resend_world(&mut self) -> Result<(), NetError> {
        match &mut self.side {
            Side::Client(c) if c.endpoint.conn.is_connected() => {
                c.repl.begin_resync();
                self.core.push(&mut c.endpoint.conn, &Msg::ResendWorld);
                Ok(())
            }
            _ => Err(NetError::NotConnected),
        }
    }

    /// Client: takes the server's body with network id `net` (a hand-off, as touching it
    /// with one of our moving bodies does when its kind allows it): from now on this
    /// client simulates it and streams its state, and the server is asked. The server
    /// grants the claim only for a body of a kind that allows hand-off, that nobody else
    /// holds, within reach of something this client owns or holds; otherwise the body is
    /// the server's again here (`PeerStats::refused_claims`).
    pub fn claim(&mut self, group: &mut EntityGroup, net: lanyard::NetId) -> Result<(), NetError> {
        let Side::Client(c) = &mut self.side else {
            return Err(NetError::NotConnected);
        };
        if !c.endpoint.conn.is_connected() {
            return Err(NetError::NotConnected);
        }
        let eid = group
            .id_of(net)
            .ok_or(NetError::Framework(lanyard::Error::NoSuchNetId(net)))?;
        c.repl
            .claim(&mut self.core, group, &mut c.endpoint.conn, eid, net);
        Ok(())
    }

    /// Client: whether the link is lost and the reconnect ladder runs (the world is
    /// frozen meanwhile).
    pub fn is_reconnecting(&self) -> bool {
        matches!(&self.side, Side::Client(c) if c.endpoint.reconnecting())
    }

    /// Client: how many times the session was resumed.
    pub fn resumes(&self) -> u32 {
        match &self.side {
            Side::Client(c) => c.endpoint.resumes,
            Side::Server(_) => 0,
        }
    }

    /// Whether a client is connected (always true for a server).
    pub fn is_connected(&self) -> bool {
        match &self.side {
            Side::Server(_) => true,
            Side::Client(c) => c.endpoint.conn.is_connected(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &NetConfig {
        &self.core.config
    }

    /// Seconds of simulated time so far.
    pub fn now(&self) -> f64 {
        self.core.now as f64 / 1e6
    }

    /// When (in seconds of this manager's time) the next deadline of any connection falls:
    /// a driver with nothing else to do may sleep until then.
    pub fn next_deadline(&self) -> Option<f64> {
        let t = match &self.side {
            Side::Server(s) => s
                .endpoint
                .peers
                .values()
                .filter_map(|p| p.conn.poll_timeout())
                .min(),
            Side::Client(c) => c.endpoint.conn.poll_timeout(),
        };
        t.map(|t| t as f64 / 1e6)
    }

    /// Client: seconds since state of the entity with network id `net` last came from the
    /// server (full, a delta, or a refresh of an unchanged one); `None` if none came yet.
    /// A server sends an entity's state when it changed and refreshes an unchanged one every
    /// [`NetConfig::refresh`] seconds, so on a working link this stays below about that.
    pub fn state_age(&self, net: lanyard::NetId) -> Option<f64> {
        match &self.side {
            Side::Client(c) => c
                .repl
                .state_at(net)
                .map(|t| self.core.now.saturating_sub(t) as f64 / 1e6),
            Side::Server(_) => None,
        }
    }

    /// The number of a server's newest state broadcast (the number its DATA datagrams
    /// carry; 0 before the first): an update whose [`NetFrame::sent`] is true made it.
    /// `None` on a client. With [`state_broadcast`](Self::state_broadcast) on a client, it
    /// lets two peers' views of an entity be compared at the same moment.
    pub fn broadcast_number(&self) -> Option<u32> {
        match &self.side {
            Side::Server(s) => Some(s.repl.number()),
            Side::Client(_) => None,
        }
    }

    /// Client: the number of the server broadcast ([`broadcast_number`](Self::broadcast_number)
    /// on the server) whose state of the entity with network id `net` this client applied
    /// last; `None` on a server, and before any state of it came (a spawn message's state
    /// has no number).
    pub fn state_broadcast(&self, net: lanyard::NetId) -> Option<u32> {
        match &self.side {
            Side::Client(c) => c.repl.applied_broadcast(net),
            Side::Server(_) => None,
        }
    }

    /// Counters that belong to no peer.
    pub fn counters(&self) -> NetCounters {
        self.core.counters
    }

    /// Server: how many sessions (live or suspended) play, and how many watch. Cheap
    /// enough for every frame (a discovery answer), unlike [`sessions`](Self::sessions).
    pub fn session_counts(&self) -> (usize, usize) {
        match &self.side {
            Side::Server(s) => s.endpoint.counts(),
            Side::Client(_) => (0, 0),
        }
    }

    /// Server: the peer at `addr` cannot host a game (a page behind a data channel, which
    /// nobody else can reach): it is never named in the succession. The edge says so as
    /// it hears from such a peer ([`Transport::can_host`](crate::Transport::can_host)).
    /// Clients ignore it.
    pub fn cannot_host(&mut self, addr: SocketAddr) {
        if let Side::Server(s) = &mut self.side
            && s.endpoint.cannot_host.insert(addr)
        {
            // The succession is told again.
            s.endpoint.epoch += 1;
        }
    }

    /// Who takes the game over if the server goes, in order: on the server, the list it
    /// keeps its clients told of; on a client, the list the server last sent (empty until
    /// one came). Players only, the longest in the game first (see [`Successor`]).
    pub fn succession(&self) -> Vec<Successor> {
        match &self.side {
            Side::Server(s) => s.succession(),
            Side::Client(c) => c.endpoint.succession.list.clone(),
        }
    }

    /// Server: every session, live or suspended, in client-id order.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        let Side::Server(s) = &self.side else {
            return Vec::new();
        };
        let now = self.core.now;
        let info = |id: &ClientId, p: &crate::session::ClientSession, suspended| SessionInfo {
            client: *id,
            name: p.name.clone(),
            spectator: p.spectator,
            suspended,
            stats: p.conn.stats_at(now),
            addr: p.conn.addr,
        };
        let mut all: Vec<SessionInfo> = s
            .endpoint
            .peers
            .iter()
            .map(|(id, p)| info(id, p, false))
            .chain(
                s.endpoint
                    .suspended
                    .iter()
                    .map(|(id, x)| info(id, &x.peer, true)),
            )
            .collect();
        all.sort_by_key(|i| i.client);
        all
    }

    /// Server: the connected clients and their names.
    pub fn clients(&self) -> Vec<(ClientId, String)> {
        match &self.side {
            Side::Server(s) => s
                .endpoint
                .peers
                .iter()
                .map(|(id, p)| (*id, p.name.clone()))
                .collect(),
            Side::Client(_) => Vec::new(),
        }
    }

    /// The counters of one peer: on a server a client's, on a client the server's (pass
    /// any id, or use [`server_stats`](Self::server_stats)).
    pub fn peer_stats(&self, client: ClientId) -> Option<PeerStats> {
        match &self.side {
            Side::Server(s) => s
                .endpoint
                .peers
                .get(&client)
                .map(|p| p.conn.stats_at(self.core.now)),
            Side::Client(_) => self.server_stats(),
        }
    }

    /// What it holds in its queues now (see [`Footprint`](crate::Footprint)).
    pub fn footprint(&self) -> crate::Footprint {
        let mut f = crate::Footprint {
            inbox: self.inbox.len(),
            events: self.core.events.len(),
            ..crate::Footprint::default()
        };
        match &self.side {
            Side::Server(s) => {
                let live = s.endpoint.peers.values();
                for p in live.chain(s.endpoint.suspended.values().map(|x| &x.peer)) {
                    p.conn.add_footprint(&mut f);
                }
            }
            Side::Client(c) => c.endpoint.conn.add_footprint(&mut f),
        }
        f
    }

    /// Client: the counters of the link to the server.
    pub fn server_stats(&self) -> Option<PeerStats> {
        match &self.side {
            Side::Client(c) if c.endpoint.conn.is_connected() => {
                Some(c.endpoint.conn.stats_at(self.core.now))
            }
            _ => None,
        }
    }

    /// Queues a datagram that arrived from `from`. Nothing is decoded until
    /// [`update`](Self::update). Past the inbox limit, datagrams are dropped and counted.
    pub fn receive(&mut self, from: SocketAddr, bytes: &[u8]) {
        self.receive_aged(from, bytes, std::time::Duration::ZERO);
    }

    /// The same, for a datagram that arrived `age` before the next
    /// [`update`](Self::update) (as [`Transport::recv_aged`](crate::Transport::recv_aged)
    /// says). The ping is then measured from when datagrams came and went, not from the
    /// frames that took them: on loopback it reads the wire's fraction of a millisecond,
    /// not the tick each side waited for.
    pub fn receive_aged(&mut self, from: SocketAddr, bytes: &[u8], age: std::time::Duration) {
        self.core.counters.bytes_in += bytes.len() as u64;
        let largest = &mut self.core.counters.largest_in;
        *largest = (*largest).max(bytes.len() as u64);
        if self.inbox.len() >= self.core.config.inbox_limit {
            self.core.counters.inbox_overflow += 1;
            return;
        }
        let age = u64::try_from(age.as_micros()).unwrap_or(u64::MAX);
        self.inbox.push_back((from, bytes.to_vec(), age));
    }

    /// The datagrams to send, with their destinations.
    pub fn drain_outgoing(&mut self) -> std::vec::Drain<'_, (SocketAddr, Vec<u8>)> {
        let sent: usize = self.core.outbox.iter().map(|(_, d)| d.len()).sum();
        self.core.counters.bytes_out += sent as u64;
        let largest = self.core.outbox.iter().map(|(_, d)| d.len()).max();
        let c = &mut self.core.counters;
        c.largest_out = c.largest_out.max(largest.unwrap_or(0) as u64);
        self.core.outbox.drain(..)
    }

    /// The next event for the user, if any.
    pub fn poll_event(&mut self) -> Option<NetEvent> {
        self.core.events.pop_front()
    }

    /// Sends a game event on the reliable channel: a server sends it to every client, a
    /// client to the server. A session waiting for its client to resume gets it too, once
    /// the client is back; one that expires never does.
    pub fn send_event(&mut self, bytes: Vec<u8>) -> Result<(), NetError> {
        check_size(&bytes)?;
        let msg = Msg::Event { bytes };
        match &mut self.side {
            Side::Server(s) => {
                let e = &mut s.endpoint;
                let waiting = e.suspended.values_mut().map(|w| &mut w.peer);
                for p in e.peers.values_mut().chain(waiting) {
                    self.core.push(&mut p.conn, &msg);
                }
                Ok(())
            }
            Side::Client(c) if c.endpoint.conn.is_connected() => {
                self.core.push(&mut c.endpoint.conn, &msg);
                Ok(())
            }
            Side::Client(_) => Err(NetError::NotConnected),
        }
    }

    /// Server: sends a game event to one client (one waiting to resume gets it once back).
    pub fn send_event_to(&mut self, client: ClientId, bytes: Vec<u8>) -> Result<(), NetError> {
        check_size(&bytes)?;
        let Side::Server(s) = &mut self.side else {
            return Err(NetError::NotConnected);
        };
        let e = &mut s.endpoint;
        let p = match e.peers.get_mut(&client) {
            Some(p) => p,
            None => e
                .suspended
                .get_mut(&client)
                .map(|w| &mut w.peer)
                .ok_or(NetError::NoSuchClient(client))?,
        };
        self.core.push(&mut p.conn, &Msg::Event { bytes });
        Ok(())
    }

    /// Server: sets which entities each client needs (a fog of war, a large arena). The
    /// filter is asked every broadcast, for every client and entity, whether the client
    /// needs the entity; a client's own entities are always relevant to it. An entity that
    /// stops being relevant to a client is despawned there (the client's copy is gone, as
    /// if the entity were); once it is relevant again it is spawned there anew, where it is
    /// then. Without a filter (the default) every client needs everything. A client has no
    /// use for one: it returns [`NetError::NotConnected`].
    pub fn set_relevance(
        &mut self,
        filter: impl Fn(ClientId, EntityRef<'_>, &WorldView<'_>) -> bool + Send + Sync + 'static,
    ) -> Result<(), NetError> {
        let Side::Server(s) = &mut self.side else {
            return Err(NetError::NotConnected);
        };
        let filter: Relevance = std::sync::Arc::new(filter);
        s.repl.set_relevance(Some(filter));
        Ok(())
    }

    /// Server: removes a client (live or suspended), telling it `reason` (it may be
    /// empty; it is cut to 200 characters). Its entities go as their kinds say.
    pub fn kick(
        &mut self,
        group: &mut EntityGroup,
        client: ClientId,
        reason: &str,
    ) -> Result<(), NetError> {
        let Side::Server(s) = &mut self.side else {
            return Err(NetError::NotConnected);
        };
        if !s.endpoint.peers.contains_key(&client) && !s.endpoint.suspended.contains_key(&client) {
            return Err(NetError::NoSuchClient(client));
        }
        let reason = reason
            .chars()
            .filter(|c| !c.is_control())
            .take(200)
            .collect();
        s.leave(
            &mut self.core,
            group,
            client,
            DisconnectReason::Kicked { reason },
        );
        Ok(())
    }

    /// Server: refuses `name` (in any case) to every later handshake for this server's
    /// lifetime, with [`RejectReason::Banned`](crate::RejectReason::Banned). Kick its session first if it has one.
    pub fn ban(&mut self, name: &str) -> Result<(), NetError> {
        let Side::Server(s) = &mut self.side else {
            return Err(NetError::NotConnected);
        };
        s.endpoint.banned.insert(name.trim().to_lowercase());
        Ok(())
    }

    /// Ends the session: a client says goodbye to the server, a server to every client.
    pub fn disconnect(&mut self, group: &mut EntityGroup) {
        match &mut self.side {
            Side::Server(s) => {
                let live = s.endpoint.peers.keys();
                let ids: Vec<ClientId> = live.chain(s.endpoint.suspended.keys()).copied().collect();
                for id in ids {
                    s.leave(&mut self.core, group, id, DisconnectReason::ServerShutdown);
                }
            }
            Side::Client(c) => {
                if c.endpoint.conn.is_connected() {
                    self.core.goodbye(&c.endpoint.conn, DisconnectReason::Left);
                }
                c.endpoint.conn.close();
            }
        }
    }

    /// Lets `dt` seconds pass and runs one frame of `group` (see the type's docs).
    pub fn update(&mut self, group: &mut EntityGroup, dt: f32) -> NetFrame {
        self.core.now += us(dt);
        self.core.know_kinds(group.registry());
        self.core.physics = wire::Physics::of(group.config());
        let elsewhere = self
            .group_tick
            .map_or(0, |t| group.tick().saturating_sub(t));
        let now = self.core.now;
        let inbox: Vec<_> = self
            .inbox
            .drain(..)
            .map(|(from, bytes, age)| (from, bytes, now.saturating_sub(age)))
            .collect();
        let mut frame = match &mut self.side {
            Side::Server(s) => s.update(&mut self.core, group, inbox),
            Side::Client(c) => c.update(&mut self.core, group, inbox),
        };
        let (promote, handed) = match &mut self.side {
            Side::Client(c) => (c.endpoint.promote.take(), std::mem::take(&mut c.handed)),
            Side::Server(_) => (None, Vec::new()),
        };
        if let Side::Server(s) = &mut self.side
            && let Some(host) = s.stepped_down.take()
        {
            self.become_client(host);
        }
        if let Some(left) = promote {
            // The host went and we take over: this frame runs as the server's, with the
            // hellos of the players who came to us.
            self.promote(group, left);
            if let Side::Server(s) = &mut self.side {
                frame = s.update(&mut self.core, group, handed);
            }
        }
        self.after_faults(group, &frame.frame);
        self.group_tick = Some(group.tick());
        if elsewhere > 0 {
            let e = lanyard::Error::FramesElsewhere { frames: elsewhere };
            tracing::warn!("{e}");
            frame.frame.errors.push(e);
        }
        frame
    }

    /// Logs the frame's refused sections; on a server, a client whose
    /// section made a controller panic (its client path or its validation) is
    /// disconnected, saying why: a modified client must not bring the server down.
    fn after_faults(&mut self, group: &mut EntityGroup, frame: &FrameReport) {
        for e in &frame.section_errors {
            tracing::debug!("refused section: {e}");
        }
        // The group logged each caught panic once already.
        for fault in &frame.faults {
            let theirs = matches!(
                fault.hook,
                Hook::Validate | Hook::ClientPath { section: true }
            );
            if let (true, true, Owner::Client(c)) = (self.is_server(), theirs, fault.owner) {
                let reason = format!(
                    "a section for your {} {} made its controller panic on the server",
                    fault.kind, fault.net
                );
                tracing::warn!("disconnecting client {}: {reason}", c.0);
                let _ = self.kick(group, c, &reason);
            }
        }
    }
}

fn check_size(bytes: &[u8]) -> Result<(), NetError> {
    // The message's own framing takes a few bytes on top of the payload.
    let max = wire::MAX_MESSAGE - 8;
    if bytes.len() > max {
        return Err(NetError::MessageTooLarge {
            len: bytes.len(),
            max,
        });
    }
    Ok(())
}
