//! The peers' side of the rendezvous as a player joining by name ([`Joiner`]) or a
//! browser listing ([`Lister`]); and blocking helpers for tools. The host's side is
//! [`Registrar`](super::Registrar).

use super::relay::Routes;
use super::{Addrs, Cookie, Message, decode, encode, is_rendezvous};
use crate::error::RendezvousError;
use lanyard_net::discovery::ServerInfo;
use std::collections::BTreeMap;
use std::net::SocketAddr;

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
    fn outcome(&self) -> Option<Result<Self::Outcome, RendezvousError>>;
}

enum Phase {
    Asking,
    Punching { since: f64 },
    Open(Path),
    Failed(RendezvousError),
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

/// Seconds a player punches a host's IPv6 address alone before punching its IPv4 one
/// too (a head start, as "happy eyeballs" gives IPv6): where both work, the path is IPv6,
/// with no NAT in the way; where IPv6 fails, IPv4 costs this much more.
pub const V4_AFTER: f64 = 0.25;

/// Asking one of the rendezvous server's addresses.
struct Ask {
    addr: SocketAddr,
    cookie: Option<Cookie>,
    next: f64,
    /// It named the host.
    answered: bool,
}

impl Ask {
    fn all(rendezvous: Addrs) -> Vec<Ask> {
        rendezvous
            .iter()
            .map(|addr| Ask {
                addr,
                cookie: None,
                next: f64::NEG_INFINITY,
                answered: false,
            })
            .collect()
    }
}

/// A player's side: asks the rendezvous server for the game registered under a name,
/// then punches toward the host until a punch comes back. Its outcome is the host's
/// public address with the path open (run the handshake to it from the same socket), or
/// why not. Given both of the rendezvous server's families ([`Addrs`]), it asks over
/// each (so the host learns both of its addresses and punches toward both), and punches
/// the host's IPv6 address first ([`V4_AFTER`]).
pub struct Joiner {
    rendezvous: Addrs,
    asks: Vec<Ask>,
    name: String,
    nonce: u64,
    /// The host's addresses, IPv6 first.
    hosts: Vec<SocketAddr>,
    /// The rendezvous server's address that named the host first: relay requests go there.
    via: Option<SocketAddr>,
    /// An IPv4 address of the host whose punch came during IPv6's head start: the path,
    /// unless an IPv6 punch comes before the head start ends.
    fallback: Option<SocketAddr>,
    phase: Phase,
    start: Option<f64>,
    next: f64,
    relay_next: f64,
    out: Vec<(SocketAddr, Vec<u8>)>,
}

impl Joiner {
    /// Joins the game registered as `name` at `rendezvous` (one address, or one of each
    /// family); `nonce` is the caller's randomness.
    pub fn new(rendezvous: impl Into<Addrs>, name: &str, nonce: u64) -> Self {
        let rendezvous = rendezvous.into();
        Joiner {
            rendezvous,
            asks: Ask::all(rendezvous),
            name: name.to_owned(),
            nonce,
            hosts: Vec::new(),
            via: None,
            fallback: None,
            phase: Phase::Asking,
            start: None,
            next: f64::NEG_INFINITY,
            relay_next: f64::NEG_INFINITY,
            out: Vec::new(),
        }
    }

    /// The host's public address, once the rendezvous server named it (its IPv6 one, if
    /// it has one, until a path opens).
    pub fn peer(&self) -> Option<SocketAddr> {
        match self.phase {
            Phase::Open(Path { peer, .. }) => Some(peer),
            Phase::Punching { .. } => self.hosts.first().copied(),
            _ => None,
        }
    }

    /// Every address of the host the rendezvous server named, IPv6 first.
    pub fn hosts(&self) -> &[SocketAddr] {
        &self.hosts
    }

    fn push(&mut self, to: SocketAddr, msg: &Message) {
        self.out.push((to, datagram(msg)));
    }

    /// Asks every address of the rendezvous server that has not named the host yet.
    fn ask(&mut self, now: f64) {
        let mut sends = Vec::new();
        for a in &mut self.asks {
            if a.answered || now < a.next {
                continue;
            }
            let msg = match a.cookie {
                None => Message::Hello,
                Some(cookie) => Message::Join {
                    cookie,
                    name: self.name.clone(),
                    nonce: self.nonce,
                },
            };
            sends.push((a.addr, msg));
            a.next = now + ASK_RETRY;
        }
        for (to, msg) in sends {
            self.push(to, &msg);
        }
    }

    /// The host's addresses `found` join the ones known, IPv6 first.
    fn learn(&mut self, found: impl IntoIterator<Item = SocketAddr>) {
        for h in found {
            if !self.hosts.contains(&h) {
                self.hosts.push(h);
            }
        }
        // Stable: within a family, the order they came in.
        self.hosts.sort_by_key(|h| !h.is_ipv6());
    }

    /// Whether the host's address `h` is tried at `now`, punching since `since`: IPv6
    /// from the start, IPv4 after IPv6's head start (at once if the host has no IPv6
    /// address).
    fn tried(&self, h: SocketAddr, now: f64, since: f64) -> bool {
        h.is_ipv6() || now - since >= V4_AFTER || !self.hosts.iter().any(SocketAddr::is_ipv6)
    }

    /// Punches every address of the host that is due.
    fn punch(&mut self, now: f64, since: f64) {
        let due: Vec<SocketAddr> = self
            .hosts
            .iter()
            .copied()
            .filter(|&h| self.tried(h, now, since))
            .collect();
        for h in due {
            self.push(h, &Message::Punch { nonce: self.nonce });
        }
        self.next = now + PUNCH_EVERY;
    }

    /// The path to the host's address `peer` is open.
    fn open(&mut self, peer: SocketAddr) {
        self.phase = Phase::Open(Path {
            peer,
            nonce: self.nonce,
            relay: None,
        });
        // One more, which the host's NAT now lets in: the host stops punching.
        self.push(peer, &Message::Punch { nonce: self.nonce });
    }

    /// Asks the rendezvous server's address that named the host first to relay.
    fn ask_relay(&mut self, now: f64) {
        let Some(via) = self.via else {
            return;
        };
        let Some(cookie) = self
            .asks
            .iter()
            .find(|a| a.addr == via)
            .and_then(|a| a.cookie)
        else {
            return;
        };
        self.relay_next = now + ASK_RETRY;
        let msg = Message::Relay {
            cookie,
            name: self.name.clone(),
            nonce: self.nonce,
        };
        self.push(via, &msg);
    }

    /// A datagram from one of the rendezvous server's addresses, the `i`th.
    fn answered(&mut self, now: f64, i: usize, from: SocketAddr, msg: Message) {
        let asking = matches!(self.phase, Phase::Asking);
        match msg {
            Message::Challenge { cookie, .. } => {
                // First, or gone stale while punching.
                self.asks[i].cookie = Some(cookie);
                self.asks[i].next = now;
            }
            Message::Peer {
                addr, also, nonce, ..
            } if nonce == self.nonce => {
                self.asks[i].answered = true;
                self.learn([addr].into_iter().chain(also));
                if asking {
                    self.phase = Phase::Punching { since: now };
                    self.via = Some(from);
                    self.next = now;
                }
            }
            Message::Refused { about, reason }
                if asking && (about.is_empty() || about == self.name) =>
            {
                self.phase = Phase::Failed(RendezvousError::Refused { addr: from, reason });
            }
            Message::Relaying {
                nonce,
                token,
                peer: host,
                ..
            } if !asking
                && Some(from) == self.via
                && nonce == self.nonce
                && self.hosts.contains(&host) =>
            {
                self.phase = Phase::Open(Path {
                    peer: host,
                    nonce,
                    relay: Some((from, token)),
                });
            }
            _ => {}
        }
    }
}

impl Exchange for Joiner {
    type Outcome = Path;

    fn poll(&mut self, now: f64) {
        match self.phase {
            Phase::Asking => {
                let start = *self.start.get_or_insert(now);
                if now - start >= JOIN_TIMEOUT {
                    self.phase = Phase::Failed(RendezvousError::Silent {
                        addr: self.rendezvous.first(),
                    });
                } else {
                    self.ask(now);
                }
            }
            Phase::Punching { since } => {
                if now - since >= PUNCH_TIMEOUT {
                    let peer = self.hosts.first().copied();
                    self.phase = Phase::Failed(RendezvousError::PunchFailed {
                        name: self.name.clone(),
                        peer: peer.unwrap_or(self.rendezvous.first()),
                    });
                    return;
                }
                // The host's IPv4 punch came during IPv6's head start, and no IPv6 one
                // since: the path is IPv4.
                if let Some(h) = self.fallback
                    && self.tried(h, now, since)
                {
                    self.open(h);
                    return;
                }
                // The other family's address may name the host still: the host then
                // punches toward this player's address in that family too.
                self.ask(now);
                if now >= self.next {
                    self.punch(now, since);
                }
                // No path yet: ask for a relay as well, twice a second.
                if now - since >= RELAY_AFTER && now >= self.relay_next {
                    self.ask_relay(now);
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
        if !matches!(self.phase, Phase::Asking | Phase::Punching { .. }) {
            return true;
        }
        if let Some(i) = self.asks.iter().position(|a| a.addr == from) {
            self.answered(now, i, from, msg);
        } else if let (&Phase::Punching { since }, Message::Punch { nonce }) = (&self.phase, msg)
            && nonce == self.nonce
            && self.hosts.contains(&from)
        {
            if self.tried(from, now, since) {
                self.open(from);
            } else {
                self.fallback.get_or_insert(from);
            }
        }
        true
    }

    fn drain_outgoing(&mut self) -> Vec<(SocketAddr, Vec<u8>)> {
        std::mem::take(&mut self.out)
    }

    fn outcome(&self) -> Option<Result<Path, RendezvousError>> {
        match &self.phase {
            Phase::Open(path) => Some(Ok(*path)),
            Phase::Failed(e) => Some(Err(e.clone())),
            _ => None,
        }
    }
}

/// A browser's side: every page of the listing. Given both of the rendezvous server's
/// families, it says hello over each and lists over the first that answers.
pub struct Lister {
    rendezvous: Addrs,
    /// The address that answered first.
    at: Option<SocketAddr>,
    cookie: Option<Cookie>,
    pages: Option<u16>,
    got: BTreeMap<u16, Vec<ServerInfo>>,
    start: Option<f64>,
    next: f64,
    failed: Option<RendezvousError>,
    out: Vec<(SocketAddr, Vec<u8>)>,
}

impl Lister {
    /// Lists the games registered at `rendezvous` (one address, or one of each family).
    pub fn new(rendezvous: impl Into<Addrs>) -> Self {
        Lister {
            rendezvous: rendezvous.into(),
            at: None,
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
            self.failed = Some(RendezvousError::Silent {
                addr: self.at.unwrap_or(self.rendezvous.first()),
            });
            return;
        }
        if now >= self.next {
            match (self.at, self.cookie, self.missing()) {
                (Some(at), Some(cookie), Some(page)) => {
                    self.out
                        .push((at, datagram(&Message::List { cookie, page })));
                }
                (Some(at), ..) => self.out.push((at, datagram(&Message::Hello))),
                (None, ..) => {
                    for a in self.rendezvous.iter() {
                        self.out.push((a, datagram(&Message::Hello)));
                    }
                }
            }
            self.next = now + ASK_RETRY;
        }
    }

    fn receive(&mut self, now: f64, from: SocketAddr, bytes: &[u8]) -> bool {
        if !is_rendezvous(bytes) {
            return false;
        }
        if !self.rendezvous.contains(from) || self.at.is_some_and(|at| at != from) {
            return true;
        }
        match decode(bytes) {
            Ok(Message::Challenge { cookie, .. }) => {
                self.at = Some(from);
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
                self.failed = Some(RendezvousError::Refused { addr: from, reason });
            }
            _ => {}
        }
        true
    }

    fn drain_outgoing(&mut self) -> Vec<(SocketAddr, Vec<u8>)> {
        std::mem::take(&mut self.out)
    }

    fn outcome(&self) -> Option<Result<Vec<ServerInfo>, RendezvousError>> {
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
