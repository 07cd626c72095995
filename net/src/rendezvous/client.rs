//! The peers' side of the rendezvous as a player joining by name ([`Joiner`]) or a
//! browser listing ([`Lister`]); and blocking helpers for tools. The host's side is
//! [`Registrar`](super::Registrar).

use super::relay::Routes;
use super::{Cookie, Message, decode, encode, is_rendezvous};
use crate::discovery::ServerInfo;
use crate::error::NetError;
use crate::transport::Transport;
use crate::udp::UdpTransport;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Seconds a player or browser waits before asking again.
const ASK_RETRY: f64 = 0.5;
/// Seconds between punches.
pub(super) const PUNCH_EVERY: f64 = 0.1;

/// Seconds a player or browser waits for the rendezvous server before giving up.
pub const JOIN_TIMEOUT: f64 = 5.0;
/// Seconds a player punches toward a host before giving up.
pub const PUNCH_TIMEOUT: f64 = 5.0;
/// Seconds of punching with no path before both sides ask the rendezvous server to relay
/// (and go on punching).
pub const RELAY_AFTER: f64 = 2.0;

pub(super) fn datagram(msg: &Message) -> Vec<u8> {
    // Every message a peer sends has a bounded size and encodes.
    encode(msg).unwrap_or_default()
}

/// Something a peer asks a rendezvous server, driven to an outcome.
pub trait Exchange {
    /// What it comes to.
    type Outcome;
    /// Sends what is due at `now`, or gives up.
    fn poll(&mut self, now: f64);
    /// One datagram; returns whether it was a rendezvous datagram.
    fn receive(&mut self, now: f64, from: SocketAddr, bytes: &[u8]) -> bool;
    /// The datagrams to send.
    fn drain_outgoing(&mut self) -> Vec<(SocketAddr, Vec<u8>)>;
    /// Its outcome, once it has one.
    fn outcome(&self) -> Option<Result<Self::Outcome, NetError>>;
}

enum Phase {
    Asking,
    Punching { peer: SocketAddr, since: f64 },
    Open(Path),
    Failed(NetError),
}

/// How a player reaches the host it joined by name: the outcome of a [`Joiner`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Path {
    /// The host's public address: the game's handshake goes to it (through the relay or
    /// not, the game sees this address).
    pub peer: SocketAddr,
    /// The join's nonce (the peers' punches carry it).
    pub nonce: u64,
    /// Punching found no path: the rendezvous server at this address relays the session
    /// with this token.
    pub relay: Option<(SocketAddr, u64)>,
}

impl Path {
    /// The routes a game socket reaches the host by: through the relay until a direct
    /// path opens, or direct.
    pub fn routes(&self, now: f64) -> Routes {
        let mut routes = Routes::new();
        if let Some((relay, token)) = self.relay {
            routes.relay(now, self.peer, relay, token, self.nonce);
        }
        routes
    }
}

/// A player's side: asks the rendezvous server for the game registered under a name,
/// then punches toward the host until a punch comes back. Its outcome is the host's
/// public address with the path open (run the handshake to it from the same socket), or
/// why not.
pub struct Joiner {
    rendezvous: SocketAddr,
    name: String,
    nonce: u64,
    cookie: Option<Cookie>,
    phase: Phase,
    start: Option<f64>,
    next: f64,
    relay_next: f64,
    out: Vec<(SocketAddr, Vec<u8>)>,
}

impl Joiner {
    /// Joins the game registered as `name` at `rendezvous`; `nonce` is the caller's
    /// randomness.
    pub fn new(rendezvous: SocketAddr, name: &str, nonce: u64) -> Self {
        Joiner {
            rendezvous,
            name: name.to_owned(),
            nonce,
            cookie: None,
            phase: Phase::Asking,
            start: None,
            next: f64::NEG_INFINITY,
            relay_next: f64::NEG_INFINITY,
            out: Vec::new(),
        }
    }

    /// The host's public address, once the rendezvous server named it.
    pub fn peer(&self) -> Option<SocketAddr> {
        match self.phase {
            Phase::Punching { peer, .. } | Phase::Open(Path { peer, .. }) => Some(peer),
            _ => None,
        }
    }

    fn push(&mut self, to: SocketAddr, msg: &Message) {
        self.out.push((to, datagram(msg)));
    }
}

impl Exchange for Joiner {
    type Outcome = Path;

    fn poll(&mut self, now: f64) {
        match self.phase {
            Phase::Asking => {
                let start = *self.start.get_or_insert(now);
                if now - start >= JOIN_TIMEOUT {
                    self.phase = Phase::Failed(NetError::RendezvousSilent {
                        addr: self.rendezvous,
                    });
                } else if now >= self.next {
                    let msg = match self.cookie {
                        None => Message::Hello,
                        Some(cookie) => Message::Join {
                            cookie,
                            name: self.name.clone(),
                            nonce: self.nonce,
                        },
                    };
                    self.push(self.rendezvous, &msg);
                    self.next = now + ASK_RETRY;
                }
            }
            Phase::Punching { peer, since } => {
                if now - since >= PUNCH_TIMEOUT {
                    self.phase = Phase::Failed(NetError::PunchFailed {
                        name: self.name.clone(),
                        peer,
                    });
                } else if now >= self.next {
                    self.push(peer, &Message::Punch { nonce: self.nonce });
                    self.next = now + PUNCH_EVERY;
                }
                // No path yet: ask for a relay as well, twice a second.
                if now - since >= RELAY_AFTER
                    && now >= self.relay_next
                    && let Some(cookie) = self.cookie
                {
                    self.relay_next = now + ASK_RETRY;
                    let msg = Message::Relay {
                        cookie,
                        name: self.name.clone(),
                        nonce: self.nonce,
                    };
                    self.push(self.rendezvous, &msg);
                }
            }
            Phase::Open(_) | Phase::Failed(_) => {}
        }
    }

    fn receive(&mut self, now: f64, from: SocketAddr, bytes: &[u8]) -> bool {
        if !is_rendezvous(bytes) {
            return false;
        }
        let Ok(msg) = decode(bytes) else {
            return true;
        };
        match (&self.phase, msg) {
            (Phase::Asking, Message::Challenge { cookie, .. }) if from == self.rendezvous => {
                self.cookie = Some(cookie);
                self.next = now;
            }
            (Phase::Asking, Message::Peer { addr, nonce, .. })
                if from == self.rendezvous && nonce == self.nonce =>
            {
                self.phase = Phase::Punching {
                    peer: addr,
                    since: now,
                };
                self.next = now;
            }
            (Phase::Asking, Message::Refused { about, reason })
                if from == self.rendezvous && (about.is_empty() || about == self.name) =>
            {
                self.phase = Phase::Failed(NetError::RendezvousRefused {
                    addr: self.rendezvous,
                    reason,
                });
            }
            (Phase::Punching { peer, .. }, Message::Punch { nonce })
                if from == *peer && nonce == self.nonce =>
            {
                let peer = *peer;
                self.phase = Phase::Open(Path {
                    peer,
                    nonce,
                    relay: None,
                });
                // One more, which the host's NAT now lets in: the host stops punching.
                self.push(peer, &Message::Punch { nonce });
            }
            (Phase::Punching { .. }, Message::Challenge { cookie, .. })
                if from == self.rendezvous =>
            {
                // The cookie went stale while punching: the next relay request has a new one.
                self.cookie = Some(cookie);
            }
            (
                Phase::Punching { peer, .. },
                Message::Relaying {
                    nonce,
                    token,
                    peer: host,
                    ..
                },
            ) if from == self.rendezvous && nonce == self.nonce && host == *peer => {
                self.phase = Phase::Open(Path {
                    peer: host,
                    nonce,
                    relay: Some((self.rendezvous, token)),
                });
            }
            _ => {}
        }
        true
    }

    fn drain_outgoing(&mut self) -> Vec<(SocketAddr, Vec<u8>)> {
        std::mem::take(&mut self.out)
    }

    fn outcome(&self) -> Option<Result<Path, NetError>> {
        match &self.phase {
            Phase::Open(path) => Some(Ok(*path)),
            Phase::Failed(e) => Some(Err(e.clone())),
            _ => None,
        }
    }
}

/// A browser's side: every page of the listing.
pub struct Lister {
    rendezvous: SocketAddr,
    cookie: Option<Cookie>,
    pages: Option<u16>,
    got: BTreeMap<u16, Vec<ServerInfo>>,
    start: Option<f64>,
    next: f64,
    failed: Option<NetError>,
    out: Vec<(SocketAddr, Vec<u8>)>,
}

impl Lister {
    /// Lists the games registered at `rendezvous`.
    pub fn new(rendezvous: SocketAddr) -> Self {
        Lister {
            rendezvous,
            cookie: None,
            pages: None,
            got: BTreeMap::new(),
            start: None,
            next: f64::NEG_INFINITY,
            failed: None,
            out: Vec::new(),
        }
    }

    fn missing(&self) -> Option<u16> {
        match self.pages {
            None => Some(0),
            Some(n) => (0..n).find(|p| !self.got.contains_key(p)),
        }
    }
}

impl Exchange for Lister {
    type Outcome = Vec<ServerInfo>;

    fn poll(&mut self, now: f64) {
        if self.outcome().is_some() {
            return;
        }
        let start = *self.start.get_or_insert(now);
        if now - start >= JOIN_TIMEOUT {
            self.failed = Some(NetError::RendezvousSilent {
                addr: self.rendezvous,
            });
            return;
        }
        if now >= self.next {
            let msg = match (self.cookie, self.missing()) {
                (Some(cookie), Some(page)) => Message::List { cookie, page },
                _ => Message::Hello,
            };
            self.out.push((self.rendezvous, datagram(&msg)));
            self.next = now + ASK_RETRY;
        }
    }

    fn receive(&mut self, now: f64, from: SocketAddr, bytes: &[u8]) -> bool {
        if !is_rendezvous(bytes) {
            return false;
        }
        if from != self.rendezvous {
            return true;
        }
        match decode(bytes) {
            Ok(Message::Challenge { cookie, .. }) => {
                self.cookie = Some(cookie);
                self.next = now;
            }
            Ok(Message::Games { page, pages, games }) => {
                // The listing may change between pages; the last count wins.
                self.pages = Some(pages.max(1));
                self.got.insert(page, games);
                self.next = now;
            }
            Ok(Message::Refused { reason, .. }) => {
                self.failed = Some(NetError::RendezvousRefused {
                    addr: self.rendezvous,
                    reason,
                });
            }
            _ => {}
        }
        true
    }

    fn drain_outgoing(&mut self) -> Vec<(SocketAddr, Vec<u8>)> {
        std::mem::take(&mut self.out)
    }

    fn outcome(&self) -> Option<Result<Vec<ServerInfo>, NetError>> {
        if let Some(e) = &self.failed {
            return Some(Err(e.clone()));
        }
        if self.missing().is_some() {
            return None;
        }
        let mut games: Vec<ServerInfo> = self.got.values().flatten().cloned().collect();
        games.sort_by(|a, b| a.name.cmp(&b.name));
        games.dedup_by(|a, b| a.name == b.name);
        Some(Ok(games))
    }
}

/// Runs `e` over `socket` against the wall clock until it has an outcome. Datagrams that
/// are not rendezvous datagrams are dropped. Edge code: it blocks, for up to
/// [`JOIN_TIMEOUT`] plus [`PUNCH_TIMEOUT`] seconds.
pub fn drive<E: Exchange>(socket: &mut UdpTransport, e: &mut E) -> Result<E::Outcome, NetError> {
    let start = Instant::now();
    loop {
        let now = start.elapsed().as_secs_f64();
        e.poll(now);
        for (to, bytes) in e.drain_outgoing() {
            socket.send(to, &bytes);
        }
        if let Some(outcome) = e.outcome() {
            return outcome;
        }
        socket.wait(Duration::from_millis(10));
        while let Some((from, bytes)) = socket.recv() {
            e.receive(start.elapsed().as_secs_f64(), from, &bytes);
        }
    }
}

/// The games registered at the rendezvous server at `rendezvous`, by name. Blocks for at
/// most [`JOIN_TIMEOUT`] seconds.
pub fn list(rendezvous: SocketAddr) -> Result<Vec<ServerInfo>, NetError> {
    let mut socket = UdpTransport::bind(crate::udp::local_for(rendezvous))?;
    drive(&mut socket, &mut Lister::new(rendezvous))
}

/// Opens a path from `socket` to the game registered as `name` at `rendezvous`, punched or
/// relayed, and returns it: run the game's handshake to its peer from the same socket,
/// through its [`Path::routes`]. Blocks for at most [`JOIN_TIMEOUT`] plus
/// [`PUNCH_TIMEOUT`] seconds.
pub fn punch(
    socket: &mut UdpTransport,
    rendezvous: SocketAddr,
    name: &str,
    nonce: u64,
) -> Result<Path, NetError> {
    drive(socket, &mut Joiner::new(rendezvous, name, nonce))
}
