//! The [`NetManager`]: one type for the server and its clients.

use crate::error::{DisconnectReason, NetError, RejectReason};
use crate::link::{Link, PeerStats};
use crate::wire::{self, Bye, Hello, Kind, Msg, Refusal, Welcome};
use lanyard::codec::{PacketReader, PacketWriter, Section};
use lanyard::pose::BodyState;
use lanyard::{
    Change, ClientId, EntityGroup, FrameReport, NetId, OnOwnerLeave, Owner, Role, Verdict,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::net::SocketAddr;

/// How a [`NetManager`] behaves. The defaults suit a LAN game.
#[derive(Debug, Clone, PartialEq)]
pub struct NetConfig {
    /// The protocol version spoken (tests change it to provoke a mismatch).
    pub version: u16,
    /// Broadcasts per second, on the server and for a client's own entities. Under 30 unless
    /// you mean it.
    pub rate: f32,
    /// Seconds of silence after which a peer is considered gone.
    pub timeout: f32,
    /// Seconds of idleness after which a heartbeat is sent.
    pub heartbeat: f32,
    /// Seconds after which an unacknowledged reliable message fails the session.
    pub reliable_expiry: f32,
    /// Seconds between a client's hello attempts.
    pub connect_retry: f32,
    /// Seconds a client tries to reach a server before giving up.
    pub connect_timeout: f32,
    /// Server: how many clients it takes.
    pub max_clients: u16,
    /// Server: the password clients must give, if any.
    pub password: Option<String>,
    /// Server: its name, shown to clients.
    pub server_name: String,
    /// Server: names no client may take (the host's own player).
    pub reserved_names: Vec<String>,
    /// Server: how many entities one client may own at once.
    pub max_owned_per_client: usize,
    /// Datagrams queued between two updates before more are dropped.
    pub inbox_limit: usize,
    /// Consecutive undecodable datagrams after which a client is dropped.
    pub bad_packet_limit: u32,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            version: wire::PROTOCOL_VERSION,
            rate: 20.0,
            timeout: 5.0,
            heartbeat: 0.5,
            reliable_expiry: 15.0,
            connect_retry: 0.25,
            connect_timeout: 5.0,
            max_clients: 8,
            password: None,
            server_name: "Lanyard server".into(),
            reserved_names: Vec::new(),
            max_owned_per_client: 64,
            inbox_limit: 4096,
            bad_packet_limit: 64,
        }
    }
}

/// What the user of a [`NetManager`] is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetEvent {
    /// Server: a client finished the handshake.
    ClientJoined {
        /// Its id.
        client: ClientId,
        /// Its player name.
        name: String,
    },
    /// Server: a client is gone; its entities were handled as their kinds say.
    ClientLeft {
        /// Its id.
        client: ClientId,
        /// Its player name.
        name: String,
        /// Why.
        reason: DisconnectReason,
    },
    /// Client: the server accepted us.
    Joined {
        /// Our id.
        client: ClientId,
        /// The server's name.
        server_name: String,
    },
    /// Client: the server refused us.
    Rejected {
        /// Why.
        reason: RejectReason,
    },
    /// Client: no server answered.
    ConnectFailed,
    /// Client: the session ended.
    ConnectionLost {
        /// Why.
        reason: DisconnectReason,
    },
    /// A game event from a peer (reliable, in order).
    Event {
        /// Who sent it: the server, or a client.
        from: Owner,
        /// The payload.
        bytes: Vec<u8>,
    },
}

/// Counters that belong to no peer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetCounters {
    /// Broadcasts (send opportunities used) so far.
    pub broadcasts: u64,
    /// Datagrams from addresses that are not peers and not a hello.
    pub strangers: u64,
    /// Datagrams dropped because the inbox was full.
    pub inbox_overflow: u64,
    /// Spawn messages that could not be carried out.
    pub failed_spawns: u64,
    /// Reliable messages too large to send.
    pub oversized_messages: u64,
    /// Bytes received, from anyone, since the start (never decreases).
    pub bytes_in: u64,
    /// Bytes sent, to anyone, since the start (never decreases).
    pub bytes_out: u64,
}

/// What one [`NetManager::update`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetFrame {
    /// What the group's frame did (empty while a client is not connected).
    pub frame: FrameReport,
    /// Whether this update broadcast (server) or sent its state up (client).
    pub sent: bool,
}

struct Common {
    config: NetConfig,
    now: u64,
    last_send: Option<u64>,
    outbox: Vec<(SocketAddr, Vec<u8>)>,
    events: VecDeque<NetEvent>,
    counters: NetCounters,
}

impl Common {
    fn us(secs: f32) -> u64 {
        (f64::from(secs) * 1e6).round() as u64
    }

    /// Whether the rate cap allows a send now. Broadcasts are at least a full interval
    /// apart, so no window of one second ever holds more than `rate` of them.
    fn send_due(&self) -> bool {
        let interval = (1e6 / f64::from(self.config.rate.max(0.001))).ceil() as u64;
        self.last_send.is_none_or(|t| self.now - t >= interval)
    }

    fn push(&mut self, link: &mut Link, msg: &Msg) {
        match wire::encode(msg) {
            Ok(b) if b.len() <= wire::MAX_MESSAGE => link.push_reliable(b),
            _ => {
                self.counters.oversized_messages += 1;
                tracing::error!("a reliable message does not fit in a datagram and was not sent");
            }
        }
    }

    fn send_all(&mut self, to: SocketAddr, datagrams: Vec<Vec<u8>>) {
        self.outbox.extend(datagrams.into_iter().map(|d| (to, d)));
    }
}

struct Remote {
    link: Link,
    name: String,
    nonce: u64,
}

struct Server {
    clients: BTreeMap<ClientId, Remote>,
    by_addr: HashMap<SocketAddr, ClientId>,
    next_client: u16,
    /// The newest accepted section of each client-owned entity, to forward.
    forward: BTreeMap<NetId, (ClientId, Vec<u8>)>,
    /// A client's provisional ids, mapped to the ids the server gave them.
    provisional: HashMap<(ClientId, NetId), NetId>,
    /// Spawns the requesting client learns of by confirmation, not by a spawn message.
    withhold: HashMap<NetId, ClientId>,
    /// Owners to send the server's view of an entity to.
    corrections: BTreeSet<(ClientId, NetId)>,
}

enum ClientState {
    Connecting {
        started: u64,
        last_hello: Option<u64>,
    },
    Connected {
        id: ClientId,
        link: Box<Link>,
    },
    Closed,
}

struct Client {
    server: SocketAddr,
    hello: Hello,
    state: ClientState,
    next_provisional: u32,
    /// Own entities the server corrected this frame: their loopback is skipped once.
    corrected: BTreeSet<NetId>,
    ack_owed: bool,
}

enum Side {
    Server(Server),
    Client(Client),
}

/// Moves controller sections between a server and its clients. The same type serves both;
/// [`server`](NetManager::server) and [`client`](NetManager::client) pick the role.
///
/// It is sans-IO: it never touches a socket or a clock. Feed it what arrived with
/// [`receive`](Self::receive), let time pass and run the frame with
/// [`update`](Self::update), and send what [`drain_outgoing`](Self::drain_outgoing) gives.
///
/// `update` runs the whole frame of the [`EntityGroup`] it is given:
///
/// * **Server**: take in what clients sent (handshakes; their owned entities' sections,
///   validated, applied and queued for forwarding; their spawn and despawn requests),
///   run the group's frame (server paths, self-loopback, client paths, physics), announce
///   spawns, despawns and owner changes on the reliable channel, and, when the rate cap
///   allows, broadcast the packet and the forwarded sections to every client.
/// * **Client**: take in what the server sent (spawns, despawns, corrections, events, the
///   other entities' sections), run the server paths of its own entities and loop them back,
///   run every client path, step physics, and send its own sections up at the same cap.
pub struct NetManager {
    common: Common,
    side: Side,
    inbox: VecDeque<(SocketAddr, Vec<u8>)>,
}

impl std::fmt::Debug for NetManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetManager")
            .field("server", &self.is_server())
            .field("client_id", &self.client_id())
            .field("now_us", &self.common.now)
            .finish_non_exhaustive()
    }
}

impl NetManager {
    fn with(config: NetConfig, side: Side) -> Self {
        NetManager {
            common: Common {
                config,
                now: 0,
                last_send: None,
                outbox: Vec::new(),
                events: VecDeque::new(),
                counters: NetCounters::default(),
            },
            side,
            inbox: VecDeque::new(),
        }
    }

    /// A server. Give it the group it is the authority of in every `update`.
    pub fn server(config: NetConfig) -> Self {
        Self::with(
            config,
            Side::Server(Server {
                clients: BTreeMap::new(),
                by_addr: HashMap::new(),
                next_client: 1,
                forward: BTreeMap::new(),
                provisional: HashMap::new(),
                withhold: HashMap::new(),
                corrections: BTreeSet::new(),
            }),
        )
    }

    /// A client that will say hello to `server` as `name`. `nonce` tells this session from
    /// an earlier one of the same address: draw it from any source of randomness.
    pub fn client(
        config: NetConfig,
        server: SocketAddr,
        name: &str,
        password: Option<&str>,
        nonce: u64,
    ) -> Self {
        Self::with(
            config,
            Side::Client(Client {
                server,
                hello: Hello {
                    name: name.to_owned(),
                    password: password.map(str::to_owned),
                    nonce,
                },
                state: ClientState::Connecting {
                    started: 0,
                    last_hello: None,
                },
                next_provisional: 1,
                corrected: BTreeSet::new(),
                ack_owed: false,
            }),
        )
    }

    /// Whether this is the server.
    pub fn is_server(&self) -> bool {
        matches!(self.side, Side::Server(_))
    }

    /// A client's id once the server accepted it.
    pub fn client_id(&self) -> Option<ClientId> {
        match &self.side {
            Side::Client(Client {
                state: ClientState::Connected { id, .. },
                ..
            }) => Some(*id),
            _ => None,
        }
    }

    /// Whether a client is connected (always true for a server).
    pub fn is_connected(&self) -> bool {
        match &self.side {
            Side::Server(_) => true,
            Side::Client(c) => matches!(c.state, ClientState::Connected { .. }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &NetConfig {
        &self.common.config
    }

    /// Seconds of simulated time so far.
    pub fn now(&self) -> f64 {
        self.common.now as f64 / 1e6
    }

    /// Counters that belong to no peer.
    pub fn counters(&self) -> NetCounters {
        self.common.counters
    }

    /// Server: the connected clients and their names.
    pub fn clients(&self) -> Vec<(ClientId, String)> {
        match &self.side {
            Side::Server(s) => s
                .clients
                .iter()
                .map(|(id, r)| (*id, r.name.clone()))
                .collect(),
            Side::Client(_) => Vec::new(),
        }
    }

    /// The counters of one peer: on a server a client's, on a client the server's (pass
    /// any id, or use [`server_stats`](Self::server_stats)).
    pub fn peer_stats(&self, client: ClientId) -> Option<PeerStats> {
        match &self.side {
            Side::Server(s) => s.clients.get(&client).map(|r| r.link.stats),
            Side::Client(_) => self.server_stats(),
        }
    }

    /// Client: the counters of the link to the server.
    pub fn server_stats(&self) -> Option<PeerStats> {
        match &self.side {
            Side::Client(Client {
                state: ClientState::Connected { link, .. },
                ..
            }) => Some(link.stats),
            _ => None,
        }
    }

    /// Queues a datagram that arrived from `from`. Nothing is decoded until
    /// [`update`](Self::update). Past the inbox limit, datagrams are dropped and counted.
    pub fn receive(&mut self, from: SocketAddr, bytes: &[u8]) {
        self.common.counters.bytes_in += bytes.len() as u64;
        if self.inbox.len() >= self.common.config.inbox_limit {
            self.common.counters.inbox_overflow += 1;
            return;
        }
        self.inbox.push_back((from, bytes.to_vec()));
    }

    /// The datagrams to send, with their destinations.
    pub fn drain_outgoing(&mut self) -> std::vec::Drain<'_, (SocketAddr, Vec<u8>)> {
        let sent: usize = self.common.outbox.iter().map(|(_, d)| d.len()).sum();
        self.common.counters.bytes_out += sent as u64;
        self.common.outbox.drain(..)
    }

    /// The next event for the user, if any.
    pub fn poll_event(&mut self) -> Option<NetEvent> {
        self.common.events.pop_front()
    }

    /// Sends a game event on the reliable channel: a server sends it to every client, a
    /// client to the server.
    pub fn send_event(&mut self, bytes: Vec<u8>) -> Result<(), NetError> {
        check_size(&bytes)?;
        let msg = Msg::Event { bytes };
        match &mut self.side {
            Side::Server(s) => {
                for r in s.clients.values_mut() {
                    self.common.push(&mut r.link, &msg);
                }
                Ok(())
            }
            Side::Client(c) => match &mut c.state {
                ClientState::Connected { link, .. } => {
                    self.common.push(link, &msg);
                    Ok(())
                }
                _ => Err(NetError::NotConnected),
            },
        }
    }

    /// Server: sends a game event to one client.
    pub fn send_event_to(&mut self, client: ClientId, bytes: Vec<u8>) -> Result<(), NetError> {
        check_size(&bytes)?;
        let Side::Server(s) = &mut self.side else {
            return Err(NetError::NotConnected);
        };
        let r = s
            .clients
            .get_mut(&client)
            .ok_or(NetError::NoSuchClient(client))?;
        self.common.push(&mut r.link, &Msg::Event { bytes });
        Ok(())
    }

    /// Server: removes a client, telling it why.
    pub fn kick(&mut self, group: &mut EntityGroup, client: ClientId) -> Result<(), NetError> {
        let Side::Server(s) = &mut self.side else {
            return Err(NetError::NotConnected);
        };
        let addr = s
            .clients
            .get(&client)
            .ok_or(NetError::NoSuchClient(client))?
            .link
            .addr;
        goodbye(&mut self.common, addr, DisconnectReason::Kicked);
        s.leave(&mut self.common, group, client, DisconnectReason::Kicked);
        Ok(())
    }

    /// Ends the session: a client says goodbye to the server, a server to every client.
    pub fn disconnect(&mut self, group: &mut EntityGroup) {
        match &mut self.side {
            Side::Server(s) => {
                let ids: Vec<ClientId> = s.clients.keys().copied().collect();
                for id in ids {
                    let addr = s.clients[&id].link.addr;
                    goodbye(&mut self.common, addr, DisconnectReason::ServerShutdown);
                    s.leave(
                        &mut self.common,
                        group,
                        id,
                        DisconnectReason::ServerShutdown,
                    );
                }
            }
            Side::Client(c) => {
                if matches!(c.state, ClientState::Connected { .. }) {
                    goodbye(&mut self.common, c.server, DisconnectReason::Left);
                }
                c.state = ClientState::Closed;
            }
        }
    }

    /// Lets `dt` seconds pass and runs one frame of `group` (see the type's docs).
    pub fn update(&mut self, group: &mut EntityGroup, dt: f32) -> NetFrame {
        self.common.now += Common::us(dt);
        let inbox: Vec<_> = self.inbox.drain(..).collect();
        match &mut self.side {
            Side::Server(s) => s.frame(&mut self.common, group, inbox),
            Side::Client(c) => c.frame(&mut self.common, group, inbox),
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

/// Sends a goodbye three times: it is unreliable, and the peer times out if all are lost.
fn goodbye(c: &mut Common, to: SocketAddr, reason: DisconnectReason) {
    if let Ok(d) = wire::control(Kind::Disconnect, c.config.version, &Bye { reason }) {
        for _ in 0..3 {
            c.outbox.push((to, d.clone()));
        }
    }
}

fn spawn_msg(group: &EntityGroup, net: NetId) -> Option<Msg> {
    let e = group.by_net(net)?;
    Some(Msg::Spawn {
        net,
        kind: e.kind(),
        owner: e.owner(),
        params: group.spawn_params(e.id())?.to_vec(),
        state: BodyState::of(e.body()),
    })
}

impl Server {
    fn frame(
        &mut self,
        c: &mut Common,
        group: &mut EntityGroup,
        inbox: Vec<(SocketAddr, Vec<u8>)>,
    ) -> NetFrame {
        group.set_role(Role::Server);
        self.announce(c, group);
        for (from, bytes) in inbox {
            self.datagram(c, group, from, &bytes);
        }
        self.check_links(c, group);
        let frame = group.frame();
        self.announce(c, group);
        let sent = c.send_due();
        if sent {
            c.last_send = Some(c.now);
            c.counters.broadcasts += 1;
            self.broadcast(c, group);
        } else {
            self.heartbeats(c);
        }
        NetFrame { frame, sent }
    }

    /// Tells every client what changed in the world since the last call.
    fn announce(&mut self, c: &mut Common, group: &mut EntityGroup) {
        let changes: Vec<Change> = group.drain_changes().collect();
        for change in changes {
            let (msg, skip) = match change {
                Change::Spawned(net) => match spawn_msg(group, net) {
                    Some(m) => (m, self.withhold.remove(&net)),
                    None => continue,
                },
                Change::Despawned { net, .. } => {
                    self.forward.remove(&net);
                    self.provisional.retain(|_, v| *v != net);
                    self.withhold.remove(&net);
                    (Msg::Despawn { net }, None)
                }
                Change::OwnerChanged { net, owner } => (Msg::SetOwner { net, owner }, None),
                Change::Renamed { .. } => continue,
            };
            for (id, r) in self.clients.iter_mut() {
                if Some(*id) != skip {
                    c.push(&mut r.link, &msg);
                }
            }
        }
    }

    fn datagram(
        &mut self,
        c: &mut Common,
        group: &mut EntityGroup,
        from: SocketAddr,
        bytes: &[u8],
    ) {
        let known = self.by_addr.get(&from).copied();
        let parsed = wire::parse_header(bytes);
        let (version, kind, body) = match parsed {
            Ok(h) => h,
            Err(_) => {
                self.garbage(c, group, known);
                return;
            }
        };
        if version != c.config.version {
            if kind == Kind::Hello {
                let reason = RejectReason::VersionMismatch {
                    server: c.config.version,
                    client: version,
                };
                if let Ok(d) = wire::control(
                    Kind::Reject,
                    c.config.version,
                    &Refusal { reason, nonce: 0 },
                ) {
                    c.outbox.push((from, d));
                }
            } else {
                self.garbage(c, group, known);
            }
            return;
        }
        match (kind, known) {
            (Kind::Hello, _) => match wire::decode::<Hello>(body) {
                Ok(h) => self.hello(c, group, from, h),
                Err(_) => self.garbage(c, group, known),
            },
            (Kind::Data, Some(id)) => match wire::parse_data(body) {
                Ok(d) => self.data(c, group, id, d, bytes.len()),
                Err(_) => self.garbage(c, group, known),
            },
            (Kind::Disconnect, Some(id)) => {
                if wire::decode::<Bye>(body).is_ok() {
                    self.leave(c, group, id, DisconnectReason::Left);
                } else {
                    self.garbage(c, group, known);
                }
            }
            _ => self.garbage(c, group, known),
        }
    }

    fn garbage(&mut self, c: &mut Common, group: &mut EntityGroup, known: Option<ClientId>) {
        let Some(id) = known else {
            c.counters.strangers += 1;
            return;
        };
        let Some(r) = self.clients.get_mut(&id) else {
            return;
        };
        r.link.stats.bad_datagrams += 1;
        r.link.bad_streak += 1;
        if r.link.bad_streak > c.config.bad_packet_limit {
            let addr = r.link.addr;
            goodbye(c, addr, DisconnectReason::TooManyBadPackets);
            self.leave(c, group, id, DisconnectReason::TooManyBadPackets);
        }
    }

    fn reject(c: &mut Common, to: SocketAddr, reason: RejectReason, nonce: u64) {
        if let Ok(d) = wire::control(Kind::Reject, c.config.version, &Refusal { reason, nonce }) {
            c.outbox.push((to, d));
        }
    }

    fn hello(&mut self, c: &mut Common, group: &mut EntityGroup, from: SocketAddr, h: Hello) {
        if let Some(&id) = self.by_addr.get(&from) {
            if self.clients.get(&id).is_some_and(|r| r.nonce == h.nonce) {
                // Our welcome was lost: say it again.
                self.welcome(c, group, id);
                return;
            }
            // The same address started a new session.
            self.leave(c, group, id, DisconnectReason::Replaced);
        }
        if let Some(pw) = &c.config.password
            && h.password.as_deref() != Some(pw.as_str())
        {
            return Self::reject(c, from, RejectReason::BadPassword, h.nonce);
        }
        let name = h.name.trim();
        if name.is_empty() || name.chars().count() > 32 {
            return Self::reject(c, from, RejectReason::BadName, h.nonce);
        }
        if self.clients.len() >= usize::from(c.config.max_clients) {
            let max = c.config.max_clients;
            return Self::reject(c, from, RejectReason::ServerFull { max }, h.nonce);
        }
        let mut taken = self
            .clients
            .values()
            .map(|r| r.name.as_str())
            .chain(c.config.reserved_names.iter().map(String::as_str));
        if taken.any(|n: &str| n.eq_ignore_ascii_case(name)) {
            return Self::reject(c, from, RejectReason::NameTaken, h.nonce);
        }
        let id = loop {
            let id = ClientId(self.next_client);
            self.next_client = self.next_client.wrapping_add(1).max(1);
            if !self.clients.contains_key(&id) {
                break id;
            }
        };
        let mut remote = Remote {
            link: Link::new(from, c.now),
            name: name.to_owned(),
            nonce: h.nonce,
        };
        // A late joiner receives every live entity, in network-id order.
        let world: Vec<NetId> = group.iter().map(|e| e.net_id()).collect();
        for net in world {
            if let Some(m) = spawn_msg(group, net) {
                c.push(&mut remote.link, &m);
            }
        }
        self.clients.insert(id, remote);
        self.by_addr.insert(from, id);
        self.welcome(c, group, id);
        tracing::info!("{} joined as {id}", name);
        c.events.push_back(NetEvent::ClientJoined {
            client: id,
            name: name.to_owned(),
        });
    }

    fn welcome(&mut self, c: &mut Common, group: &EntityGroup, id: ClientId) {
        let Some(r) = self.clients.get(&id) else {
            return;
        };
        let owned = group
            .iter()
            .filter(|e| e.owner() == Owner::Client(id))
            .map(|e| e.net_id())
            .collect();
        let w = Welcome {
            client: id,
            nonce: r.nonce,
            server_name: c.config.server_name.clone(),
            owned,
        };
        if let Ok(d) = wire::control(Kind::Welcome, c.config.version, &w) {
            c.outbox.push((r.link.addr, d));
        }
    }

    fn data(
        &mut self,
        c: &mut Common,
        group: &mut EntityGroup,
        id: ClientId,
        d: wire::Data<'_>,
        len: usize,
    ) {
        let Some(r) = self.clients.get_mut(&id) else {
            return;
        };
        if !r.link.on_data_header(&d.header, c.now, len) {
            return;
        }
        let mut delivered = Vec::new();
        for (mid, m) in &d.messages {
            r.link.on_reliable(*mid, m, &mut delivered);
        }
        let fresh = r.link.accept_frame(d.header.frame);
        for m in delivered {
            match wire::decode::<Msg>(&m) {
                Ok(msg) => self.message(c, group, id, msg),
                Err(_) => {
                    if let Some(r) = self.clients.get_mut(&id) {
                        r.link.stats.refused_messages += 1;
                    }
                }
            }
        }
        let Some(r) = self.clients.get_mut(&id) else {
            return;
        };
        let owner = Owner::Client(id);
        for s in PacketReader::new(d.sections) {
            let Ok(s) = s else {
                r.link.stats.bad_datagrams += 1;
                break;
            };
            if !fresh {
                r.link.stats.dropped_stale += 1;
                continue;
            }
            let net = self
                .provisional
                .get(&(id, s.net_id))
                .copied()
                .unwrap_or(s.net_id);
            let section = Section {
                net_id: net,
                payload: s.payload,
            };
            match group.offer_section(section, owner) {
                Verdict::Accepted => {
                    self.forward.insert(net, (id, s.payload.to_vec()));
                }
                Verdict::UnknownEntity => r.link.stats.dropped_unknown_entity += 1,
                Verdict::NotOwner => {
                    r.link.stats.dropped_not_owner += 1;
                    if r.link.stats.dropped_not_owner.is_power_of_two() {
                        tracing::warn!(
                            "{id} sent a section for {net}, which it does not own ({} so far)",
                            r.link.stats.dropped_not_owner
                        );
                    }
                }
                Verdict::Illegal => {
                    r.link.stats.dropped_illegal += 1;
                    self.corrections.insert((id, net));
                }
            }
        }
    }

    fn message(&mut self, c: &mut Common, group: &mut EntityGroup, id: ClientId, msg: Msg) {
        let owner = Owner::Client(id);
        match msg {
            Msg::SpawnRequest {
                provisional,
                kind,
                params,
                state,
            } => {
                let allowed = group
                    .registry()
                    .options(kind)
                    .is_some_and(|o| o.client_spawnable);
                let owned = group.iter().filter(|e| e.owner() == owner).count();
                let result = if !allowed || owned >= c.config.max_owned_per_client {
                    None
                } else {
                    group.spawn_encoded(kind, params, owner).ok()
                };
                let Some(r) = self.clients.get_mut(&id) else {
                    return;
                };
                match result {
                    Some(eid) => {
                        // A bad body state leaves the entity where its parameters put it.
                        let _ = group.set_body_state(eid, &state);
                        let net = group.get(eid).map(|e| e.net_id()).unwrap_or(NetId(0));
                        self.provisional.insert((id, provisional), net);
                        self.withhold.insert(net, id);
                        c.push(&mut r.link, &Msg::SpawnConfirmed { provisional, net });
                    }
                    None => {
                        r.link.stats.refused_messages += 1;
                        c.push(&mut r.link, &Msg::SpawnRefused { provisional });
                    }
                }
            }
            Msg::DespawnRequest { net } => {
                let net = self.provisional.get(&(id, net)).copied().unwrap_or(net);
                match group.by_net(net) {
                    Some(e) if e.owner() == owner => {
                        let eid = e.id();
                        // Already gone is fine: the request is satisfied.
                        let _ = group.despawn(eid);
                    }
                    Some(_) => {
                        if let Some(r) = self.clients.get_mut(&id) {
                            r.link.stats.refused_messages += 1;
                        }
                    }
                    None => {}
                }
            }
            Msg::Event { bytes } => c.events.push_back(NetEvent::Event { from: owner, bytes }),
            _ => {
                if let Some(r) = self.clients.get_mut(&id) {
                    r.link.stats.refused_messages += 1;
                }
            }
        }
    }

    fn check_links(&mut self, c: &mut Common, group: &mut EntityGroup) {
        let timeout = Common::us(c.config.timeout);
        let expiry = Common::us(c.config.reliable_expiry);
        let gone: Vec<(ClientId, DisconnectReason)> = self
            .clients
            .iter()
            .filter_map(|(id, r)| {
                if c.now.saturating_sub(r.link.last_heard) > timeout {
                    Some((*id, DisconnectReason::TimedOut))
                } else if r.link.reliable_expired(c.now, expiry) {
                    Some((*id, DisconnectReason::ReliableExpired))
                } else {
                    None
                }
            })
            .collect();
        for (id, reason) in gone {
            if reason != DisconnectReason::TimedOut
                && let Some(r) = self.clients.get(&id)
            {
                let addr = r.link.addr;
                goodbye(c, addr, reason);
            }
            self.leave(c, group, id, reason);
        }
    }

    /// Removes a client and hands its entities over or despawns them, as their kinds say.
    fn leave(
        &mut self,
        c: &mut Common,
        group: &mut EntityGroup,
        id: ClientId,
        reason: DisconnectReason,
    ) {
        let Some(r) = self.clients.remove(&id) else {
            return;
        };
        self.by_addr.remove(&r.link.addr);
        let owned: Vec<_> = group
            .iter()
            .filter(|e| e.owner() == Owner::Client(id))
            .map(|e| (e.id(), e.kind()))
            .collect();
        for (eid, kind) in owned {
            let rule = group.registry().options(kind).map(|o| o.on_owner_leave);
            // The entity exists: it was just listed.
            let _ = match rule {
                Some(OnOwnerLeave::HandToServer) => group.set_owner(eid, Owner::Server),
                _ => group.despawn(eid),
            };
        }
        self.forward.retain(|_, (from, _)| *from != id);
        self.provisional.retain(|(c, _), _| *c != id);
        self.withhold.retain(|_, c| *c != id);
        self.corrections.retain(|(c, _)| *c != id);
        tracing::info!("{} ({id}) left: {reason}", r.name);
        c.events.push_back(NetEvent::ClientLeft {
            client: id,
            name: r.name,
            reason,
        });
    }

    fn broadcast(&mut self, c: &mut Common, group: &mut EntityGroup) {
        for (id, net) in std::mem::take(&mut self.corrections) {
            if let (Some(section), Some(r)) =
                (group.write_section_of(net), self.clients.get_mut(&id))
            {
                r.link.stats.corrections += 1;
                c.push(&mut r.link, &Msg::Correction { net, section });
            }
        }
        let base = group.last_packet();
        let version = c.config.version;
        let mut packet = PacketWriter::new();
        for (id, r) in self.clients.iter_mut() {
            packet.clear();
            for s in PacketReader::new(base).flatten() {
                // Our own packet: always well formed and within limits.
                let _ = packet.raw_section(s);
            }
            for (net, (from, payload)) in &self.forward {
                if from != id {
                    let _ = packet.raw_section(Section {
                        net_id: *net,
                        payload,
                    });
                }
            }
            let datagrams = r.link.build_data(c.now, version, packet.as_bytes());
            c.send_all(r.link.addr, datagrams);
        }
        self.forward.clear();
    }

    fn heartbeats(&mut self, c: &mut Common) {
        let idle = Common::us(c.config.heartbeat);
        let version = c.config.version;
        for r in self.clients.values_mut() {
            if c.now.saturating_sub(r.link.last_sent) >= idle {
                let d = r.link.build_data(c.now, version, &[]);
                c.send_all(r.link.addr, d);
            }
        }
    }
}

impl Client {
    fn frame(
        &mut self,
        c: &mut Common,
        group: &mut EntityGroup,
        inbox: Vec<(SocketAddr, Vec<u8>)>,
    ) -> NetFrame {
        for (from, bytes) in inbox {
            if from != self.server {
                c.counters.strangers += 1;
                continue;
            }
            self.datagram(c, group, &bytes);
        }
        match &mut self.state {
            ClientState::Closed => return NetFrame::default(),
            ClientState::Connecting {
                started,
                last_hello,
            } => {
                if c.now.saturating_sub(*started) > Common::us(c.config.connect_timeout) {
                    self.state = ClientState::Closed;
                    c.events.push_back(NetEvent::ConnectFailed);
                    return NetFrame::default();
                }
                if last_hello.is_none_or(|t| c.now - t >= Common::us(c.config.connect_retry)) {
                    *last_hello = Some(c.now);
                    if let Ok(d) = wire::control(Kind::Hello, c.config.version, &self.hello) {
                        c.outbox.push((self.server, d));
                    }
                }
                return NetFrame::default();
            }
            ClientState::Connected { link, .. } => {
                if c.now.saturating_sub(link.last_heard) > Common::us(c.config.timeout) {
                    self.state = ClientState::Closed;
                    c.events.push_back(NetEvent::ConnectionLost {
                        reason: DisconnectReason::TimedOut,
                    });
                    return NetFrame::default();
                }
                if link.reliable_expired(c.now, Common::us(c.config.reliable_expiry)) {
                    goodbye(c, self.server, DisconnectReason::ReliableExpired);
                    self.state = ClientState::Closed;
                    c.events.push_back(NetEvent::ConnectionLost {
                        reason: DisconnectReason::ReliableExpired,
                    });
                    return NetFrame::default();
                }
            }
        }
        self.connected_frame(c, group)
    }

    fn connected_frame(&mut self, c: &mut Common, group: &mut EntityGroup) -> NetFrame {
        let ClientState::Connected { id, link } = &mut self.state else {
            return NetFrame::default();
        };
        let me = Owner::Client(*id);
        // Our own entities: server paths, looped back here (unless the server just corrected
        // one), and sent up below.
        let tick = group.tick();
        let own = group.write_sections().to_vec();
        let mut written = 0;
        for s in PacketReader::new(&own).flatten() {
            written += 1;
            if !self.corrected.contains(&s.net_id) {
                group.offer_section(s, me);
            }
        }
        self.corrected.clear();
        let (sections_applied, bad_sections) = group.run_client_paths();
        let (spawned, despawned, errors) = group.apply_commands();
        for req in group.take_spawn_requests() {
            let provisional = NetId(NetId::PROVISIONAL_BIT | self.next_provisional);
            self.next_provisional = self.next_provisional.wrapping_add(1) & !NetId::PROVISIONAL_BIT;
            match group.insert_with_net_id(provisional, req.kind, req.params.clone(), me) {
                Ok(eid) => {
                    let state = group.get(eid).map(|e| BodyState::of(e.body()));
                    if let Some(state) = state {
                        c.push(
                            link,
                            &Msg::SpawnRequest {
                                provisional,
                                kind: req.kind,
                                params: req.params,
                                state,
                            },
                        );
                    }
                }
                Err(_) => c.counters.failed_spawns += 1,
            }
        }
        let changes: Vec<Change> = group.drain_changes().collect();
        for change in changes {
            if let Change::Despawned { net, owner } = change
                && owner == me
            {
                c.push(link, &Msg::DespawnRequest { net });
            }
        }
        group.step_physics();
        let frame = FrameReport {
            tick,
            sections_written: written,
            sections_applied,
            bad_sections,
            spawned,
            despawned,
            errors,
        };
        let sent = c.send_due();
        if sent {
            let has_work = !own.is_empty() || link.unacked() > 0 || self.ack_owed;
            let idle = c.now.saturating_sub(link.last_sent) >= Common::us(c.config.heartbeat);
            if has_work || idle {
                c.last_send = Some(c.now);
                c.counters.broadcasts += 1;
                let d = link.build_data(c.now, c.config.version, &own);
                c.send_all(self.server, d);
                self.ack_owed = false;
                return NetFrame { frame, sent: true };
            }
        }
        NetFrame { frame, sent: false }
    }

    fn datagram(&mut self, c: &mut Common, group: &mut EntityGroup, bytes: &[u8]) {
        let Ok((version, kind, body)) = wire::parse_header(bytes) else {
            self.bad(c);
            return;
        };
        match (kind, &mut self.state) {
            (Kind::Reject, ClientState::Connecting { .. }) => {
                let Ok(r) = wire::decode::<Refusal>(body) else {
                    return self.bad(c);
                };
                let ours = r.nonce == self.hello.nonce
                    || matches!(r.reason, RejectReason::VersionMismatch { .. });
                if ours {
                    self.state = ClientState::Closed;
                    c.events.push_back(NetEvent::Rejected { reason: r.reason });
                }
            }
            _ if version != c.config.version => self.bad(c),
            (Kind::Welcome, ClientState::Connecting { .. }) => {
                let Ok(w) = wire::decode::<Welcome>(body) else {
                    return self.bad(c);
                };
                if w.nonce != self.hello.nonce {
                    return;
                }
                group.set_role(Role::Client(w.client));
                self.state = ClientState::Connected {
                    id: w.client,
                    link: Box::new(Link::new(self.server, c.now)),
                };
                c.events.push_back(NetEvent::Joined {
                    client: w.client,
                    server_name: w.server_name,
                });
            }
            (Kind::Data, ClientState::Connected { .. }) => match wire::parse_data(body) {
                Ok(d) => self.data(c, group, d, bytes.len()),
                Err(_) => self.bad(c),
            },
            (Kind::Disconnect, ClientState::Connected { .. }) => {
                if let Ok(b) = wire::decode::<Bye>(body) {
                    self.state = ClientState::Closed;
                    c.events
                        .push_back(NetEvent::ConnectionLost { reason: b.reason });
                }
            }
            _ => {}
        }
    }

    fn bad(&mut self, c: &mut Common) {
        match self.link_mut() {
            Some(link) => link.stats.bad_datagrams += 1,
            None => c.counters.strangers += 1,
        }
    }

    fn link_mut(&mut self) -> Option<&mut Link> {
        match &mut self.state {
            ClientState::Connected { link, .. } => Some(link),
            _ => None,
        }
    }

    fn data(&mut self, c: &mut Common, group: &mut EntityGroup, d: wire::Data<'_>, len: usize) {
        let Some(link) = self.link_mut() else {
            return;
        };
        if !link.on_data_header(&d.header, c.now, len) {
            return;
        }
        let mut delivered = Vec::new();
        for (mid, m) in &d.messages {
            link.on_reliable(*mid, m, &mut delivered);
        }
        let fresh = link.accept_frame(d.header.frame);
        if !d.messages.is_empty() {
            self.ack_owed = true;
        }
        for m in delivered {
            match wire::decode::<Msg>(&m) {
                Ok(msg) => self.message(c, group, msg),
                Err(_) => {
                    if let Some(link) = self.link_mut() {
                        link.stats.refused_messages += 1;
                    }
                }
            }
        }
        let Some(link) = self.link_mut() else {
            return;
        };
        if !fresh {
            link.stats.dropped_stale += PacketReader::new(d.sections).count() as u64;
            return;
        }
        let report = group.receive_sections(d.sections, Owner::Server);
        link.stats.dropped_unknown_entity += report.unknown_entity as u64;
        if report.framing_error {
            link.stats.bad_datagrams += 1;
        }
    }

    fn message(&mut self, c: &mut Common, group: &mut EntityGroup, msg: Msg) {
        match msg {
            Msg::Spawn {
                net,
                kind,
                owner,
                params,
                state,
            } => {
                if group.by_net(net).is_some() {
                    return;
                }
                match group.insert_with_net_id(net, kind, params, owner) {
                    Ok(eid) => {
                        // A bad body state leaves it where its parameters put it; the next
                        // section corrects it.
                        let _ = group.set_body_state(eid, &state);
                    }
                    Err(e) => {
                        c.counters.failed_spawns += 1;
                        tracing::warn!("cannot spawn {net}: {e}");
                    }
                }
            }
            Msg::Despawn { net } => {
                if let Some(e) = group.by_net(net) {
                    let eid = e.id();
                    let _ = group.despawn(eid);
                }
            }
            Msg::SetOwner { net, owner } => {
                if let Some(e) = group.by_net(net) {
                    let eid = e.id();
                    let _ = group.set_owner(eid, owner);
                }
            }
            Msg::SpawnConfirmed { provisional, net } => {
                if group.rename_net_id(provisional, net).is_err() {
                    c.counters.failed_spawns += 1;
                }
            }
            Msg::SpawnRefused { provisional } => {
                c.counters.failed_spawns += 1;
                if let Some(e) = group.by_net(provisional) {
                    let eid = e.id();
                    let _ = group.despawn(eid);
                }
            }
            Msg::Correction { net, section } => {
                let s = Section {
                    net_id: net,
                    payload: &section,
                };
                if group.offer_section(s, Owner::Server) == Verdict::Accepted {
                    self.corrected.insert(net);
                    if let Some(link) = self.link_mut() {
                        link.stats.corrections += 1;
                    }
                }
            }
            Msg::Event { bytes } => c.events.push_back(NetEvent::Event {
                from: Owner::Server,
                bytes,
            }),
            Msg::SpawnRequest { .. } | Msg::DespawnRequest { .. } => {
                if let Some(link) = self.link_mut() {
                    link.stats.refused_messages += 1;
                }
            }
        }
    }
}
