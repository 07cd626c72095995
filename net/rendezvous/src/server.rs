//! The rendezvous server: registrations, listings and introductions. Sans-IO: the caller
//! feeds it datagrams with the time, and sends what it hands back.

use super::relay::{self, Asked, Relay};
use super::{Cookie, JOIN_BURST, JOIN_WINDOW, Message, REQUEST_LEN, Refusal, VERSION};
use crate::crypto::{self, Key};
use lanyard_net::MAX_DATAGRAM;
use lanyard_net::discovery::ServerInfo;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};

/// Cookies change every this many seconds; one from the epoch before is still good.
const COOKIE_EPOCH: f64 = 30.0;

/// How many IP addresses the join limit keeps track of at once.
const MAX_TRACKED: usize = 4096;

/// The largest page of a listing, in bytes of encoded games.
const PAGE_BYTES: usize = MAX_DATAGRAM - 100;

/// How a rendezvous server behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct RendezvousConfig {
    /// Seconds a registration lives unless refreshed (hosts refresh every third of it).
    pub ttl: f32,
    /// Games one IP address may have registered at once.
    pub max_per_address: u16,
    /// Games the server keeps in all.
    pub max_games: usize,
    /// Bytes a second one relay session may carry (both ways together); beyond that its
    /// datagrams are dropped and counted.
    pub relay_rate: u32,
    /// Bytes a second the relay carries in all.
    pub relay_total: u32,
    /// Relay sessions at once.
    pub max_relays: usize,
}

impl Default for RendezvousConfig {
    fn default() -> Self {
        RendezvousConfig {
            ttl: 30.0,
            max_per_address: 4,
            max_games: 1024,
            relay_rate: 64 * 1024,
            relay_total: 4 * 1024 * 1024,
            max_relays: 256,
        }
    }
}

impl RendezvousConfig {
    /// Checks the values: a time to live of 1 to 3600 seconds, at least one game per
    /// address and in all.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.ttl.is_finite() && (1.0..=3600.0).contains(&self.ttl)) {
            return Err(format!(
                "a registration lives 1 to 3600 seconds, not {}",
                self.ttl
            ));
        }
        if self.max_per_address == 0 || self.max_games == 0 {
            return Err("the server must take at least one game per address and in all".into());
        }
        if self.relay_rate < 2048 || self.relay_total < self.relay_rate {
            return Err(format!(
                "a relay session needs at least 2048 bytes a second, and the relay in all at \
                 least one session's ({} and {})",
                self.relay_rate, self.relay_total
            ));
        }
        Ok(())
    }
}

/// What a rendezvous server has done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RendezvousStats {
    /// Datagrams received.
    pub datagrams_in: u64,
    /// Their bytes.
    pub bytes_in: u64,
    /// Datagrams sent.
    pub datagrams_out: u64,
    /// Their bytes.
    pub bytes_out: u64,
    /// Datagrams dropped unanswered: not rendezvous datagrams, too short, malformed, or
    /// not requests.
    pub ignored: u64,
    /// Challenges sent (to hellos and to requests whose cookie was missing or stale).
    pub challenges: u64,
    /// Games registered (a refresh does not count).
    pub registrations: u64,
    /// Registrations refreshed.
    pub refreshes: u64,
    /// Registrations that expired.
    pub expired: u64,
    /// Registrations dropped by their hosts.
    pub unregistered: u64,
    /// Requests refused.
    pub refused: u64,
    /// Pages of the listing sent.
    pub lists: u64,
    /// Players introduced to hosts.
    pub introductions: u64,
    /// Games registered now.
    pub games: u64,
    /// Relay sessions opened.
    pub relay_sessions_opened: u64,
    /// Relay sessions running now.
    pub relay_sessions: u64,
    /// Datagrams relayed.
    pub relayed_datagrams: u64,
    /// Their bytes.
    pub relayed_bytes: u64,
    /// Relayed datagrams dropped over a session's rate or the relay's.
    pub relay_over_cap: u64,
    /// Relayed datagrams dropped because they came from neither address of their session,
    /// or for no session.
    pub relay_strangers: u64,
}

#[derive(Debug, Clone)]
struct Registration {
    owner: [u8; 16],
    /// The address it registered from last.
    addr: SocketAddr,
    /// Its address in each family (IPv4, IPv6), with when it last registered from it: a
    /// host on both registers over both.
    seen: [Option<(SocketAddr, f64)>; 2],
    info: ServerInfo,
    expires: f64,
}

impl Registration {
    /// Its address in the family of `v6`, if it registered from one within `ttl` seconds
    /// of `now` (a family it stopped registering over is not handed out).
    fn addr_in(&self, v6: bool, now: f64, ttl: f64) -> Option<SocketAddr> {
        self.seen[usize::from(v6)]
            .filter(|&(_, t)| now - t < ttl)
            .map(|(a, _)| a)
    }

    /// Where a player who asked over the family of `v6` reaches it: its address in that
    /// family if it has one, else the other; and its address in the other family.
    fn addrs_for(&self, v6: bool, now: f64, ttl: f64) -> (SocketAddr, Option<SocketAddr>) {
        match (self.addr_in(v6, now, ttl), self.addr_in(!v6, now, ttl)) {
            (Some(a), also) => (a, also),
            (None, Some(a)) => (a, None),
            (None, None) => (self.addr, None),
        }
    }

    fn registered_from(&self, ip: IpAddr) -> bool {
        self.seen.iter().flatten().any(|(a, _)| a.ip() == ip)
    }
}

/// A registered game as the server keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its public address (the one it registered from last).
    pub addr: SocketAddr,
    /// Its public address in the other family, if it registers over both.
    pub also: Option<SocketAddr>,
    /// What its host said.
    pub info: ServerInfo,
}

/// The rendezvous server.
pub struct RendezvousServer {
    config: RendezvousConfig,
    cookie_key: Key,
    games: BTreeMap<String, Registration>,
    /// Recent join requests per IP address (their times).
    joins: HashMap<IpAddr, VecDeque<f64>>,
    out: Vec<(SocketAddr, Vec<u8>)>,
    stats: RendezvousStats,
    relay: Relay,
}

impl RendezvousServer {
    /// A server with `config` (see [`RendezvousConfig::validate`]), its cookie secret
    /// drawn from the caller's 32 bytes of randomness.
    pub fn new(config: RendezvousConfig, entropy: [u8; 32]) -> Result<Self, String> {
        config.validate()?;
        Ok(RendezvousServer {
            config,
            cookie_key: blake3::derive_key("lanyard rendezvous cookie key", &entropy),
            games: BTreeMap::new(),
            joins: HashMap::new(),
            out: Vec::new(),
            stats: RendezvousStats::default(),
            relay: Relay::new(),
        })
    }

    /// What it has done so far.
    pub fn stats(&self) -> RendezvousStats {
        let r = self.relay.counts;
        RendezvousStats {
            games: self.games.len() as u64,
            relay_sessions_opened: r.sessions_opened,
            relay_sessions: self.relay.sessions() as u64,
            relayed_datagrams: r.datagrams,
            relayed_bytes: r.bytes,
            relay_over_cap: r.over_cap,
            relay_strangers: r.strangers,
            ..self.stats
        }
    }

    /// The games registered now, by name.
    pub fn games(&self, now: f64) -> Vec<Listed> {
        let ttl = f64::from(self.config.ttl);
        self.games
            .values()
            .map(|r| Listed {
                addr: r.addr,
                also: r.addr_in(!r.addr.is_ipv6(), now, ttl),
                info: r.info.clone(),
            })
            .collect()
    }

    /// The datagrams to send, with where to.
    pub fn drain_outgoing(&mut self) -> Vec<(SocketAddr, Vec<u8>)> {
        std::mem::take(&mut self.out)
    }

    /// The cookie an address gets at `now`.
    fn cookie(&self, now: f64, from: SocketAddr) -> Cookie {
        crypto::address_cookie(&self.cookie_key, from, epoch(now))
    }

    fn cookie_ok(&self, now: f64, from: SocketAddr, got: &Cookie) -> bool {
        let e = epoch(now);
        [e, e.saturating_sub(1)]
            .iter()
            .any(|&e| crypto::same(&crypto::address_cookie(&self.cookie_key, from, e), got))
    }

    fn send(&mut self, to: SocketAddr, msg: &Message) {
        if let Ok(bytes) = super::encode(msg) {
            self.stats.datagrams_out += 1;
            self.stats.bytes_out += bytes.len() as u64;
            self.out.push((to, bytes));
        }
    }

    fn refuse(&mut self, to: SocketAddr, about: &str, reason: Refusal) {
        self.stats.refused += 1;
        self.send(
            to,
            &Message::Refused {
                about: about.to_owned(),
                reason,
            },
        );
    }

    /// Drops the registrations nobody refreshed in time, and forgets old join requests.
    pub fn expire(&mut self, now: f64) {
        let before = self.games.len();
        self.games.retain(|_, r| r.expires > now);
        self.stats.expired += (before - self.games.len()) as u64;
        self.joins.retain(|_, times| {
            while times.front().is_some_and(|&t| now - t >= JOIN_WINDOW) {
                times.pop_front();
            }
            !times.is_empty()
        });
        let games = &self.games;
        self.relay.expire(now, |name| games.contains_key(name));
    }

    /// One datagram from `from`, at `now` seconds (any clock that only goes forward).
    /// Whatever the bytes, this never panics, and an address that has not echoed a cookie
    /// gets at most one answer no larger than what it sent.
    pub fn receive(&mut self, now: f64, from: SocketAddr, bytes: &[u8]) {
        self.stats.datagrams_in += 1;
        self.stats.bytes_in += bytes.len() as u64;
        if relay::is_relayed(bytes) {
            let caps = (
                f64::from(self.config.relay_rate),
                f64::from(self.config.relay_total),
            );
            if let Some(to) = self.relay.forward(now, from, bytes, caps) {
                // Unchanged: never more than came in.
                self.stats.datagrams_out += 1;
                self.stats.bytes_out += bytes.len() as u64;
                self.out.push((to, bytes.to_vec()));
            }
            return;
        }
        // Cheap checks first: anything short or foreign costs a comparison.
        if bytes.len() < REQUEST_LEN || !super::is_rendezvous(bytes) {
            self.stats.ignored += 1;
            return;
        }
        if super::version_of(bytes) != Some(VERSION) {
            self.refuse(from, "", Refusal::Version { server: VERSION });
            return;
        }
        let msg = match super::decode(bytes) {
            Ok(m) if m.is_request() => m,
            _ => {
                self.stats.ignored += 1;
                return;
            }
        };
        let cookie = match &msg {
            Message::Register { cookie, .. }
            | Message::List { cookie, .. }
            | Message::Join { cookie, .. }
            | Message::Unregister { cookie, .. }
            | Message::Relay { cookie, .. } => Some(*cookie),
            _ => None,
        };
        if !cookie.is_some_and(|c| self.cookie_ok(now, from, &c)) {
            self.stats.challenges += 1;
            let cookie = self.cookie(now, from);
            self.send(from, &Message::Challenge { cookie, you: from });
            return;
        }
        self.expire(now);
        match msg {
            Message::Register { owner, info, .. } => self.register(now, from, owner, info),
            Message::List { page, .. } => self.list(from, page),
            Message::Join { name, nonce, .. } => self.join(now, from, name, nonce),
            Message::Relay { name, nonce, .. } => self.relay(now, from, name, nonce),
            Message::Unregister { owner, name, .. }
                if self
                    .games
                    .get(&name)
                    .is_some_and(|r| crypto::same(&r.owner, &owner)) =>
            {
                self.games.remove(&name);
                self.stats.unregistered += 1;
            }
            _ => {}
        }
    }

    fn register(&mut self, now: f64, from: SocketAddr, owner: [u8; 16], info: ServerInfo) {
        let name = info.name.clone();
        if !super::valid_name(&name) {
            return self.refuse(from, &name, Refusal::BadName);
        }
        let expires = now + f64::from(self.config.ttl);
        let family = usize::from(from.is_ipv6());
        match self.games.get_mut(&name) {
            Some(r) if crypto::same(&r.owner, &owner) => {
                // A refresh, perhaps from a new address (the host's NAT mapping changed),
                // or over the other family.
                r.addr = from;
                r.seen[family] = Some((from, now));
                r.info = info;
                r.expires = expires;
                self.stats.refreshes += 1;
            }
            Some(_) => return self.refuse(from, &name, Refusal::NameTaken),
            None => {
                let max = self.config.max_per_address;
                let mine = self
                    .games
                    .values()
                    .filter(|r| r.registered_from(from.ip()))
                    .count();
                if mine >= usize::from(max) {
                    return self.refuse(from, &name, Refusal::TooMany { max });
                }
                if self.games.len() >= self.config.max_games {
                    return self.refuse(from, &name, Refusal::Full);
                }
                let mut seen = [None; 2];
                seen[family] = Some((from, now));
                self.games.insert(
                    name.clone(),
                    Registration {
                        owner,
                        addr: from,
                        seen,
                        info,
                        expires,
                    },
                );
                self.stats.registrations += 1;
            }
        }
        let ttl_ms = (self.config.ttl * 1000.0) as u32;
        let proof = super::registered_proof(&owner, &name, ttl_ms, from);
        self.send(
            from,
            &Message::Registered {
                name,
                ttl_ms,
                public: from,
                proof,
            },
        );
    }

    /// Splits the listing into pages that each fit a datagram.
    fn pages(&self) -> Vec<Vec<ServerInfo>> {
        let mut pages = vec![Vec::new()];
        let mut size = 0;
        for r in self.games.values() {
            let info = ServerInfo {
                game_port: 0,
                web_port: None,
                ..r.info.clone()
            };
            let n = crate::encode_body(&info).map_or(PAGE_BYTES, |b| b.len());
            if size + n > PAGE_BYTES
                && let Some(last) = pages.last()
                && !last.is_empty()
            {
                pages.push(Vec::new());
                size = 0;
            }
            size += n;
            if let Some(last) = pages.last_mut() {
                last.push(info);
            }
        }
        pages
    }

    fn list(&mut self, from: SocketAddr, page: u16) {
        let mut pages = self.pages();
        let count = pages.len().min(usize::from(u16::MAX)) as u16;
        let games = match pages.get_mut(usize::from(page)) {
            Some(p) => std::mem::take(p),
            None => Vec::new(),
        };
        self.stats.lists += 1;
        self.send(
            from,
            &Message::Games {
                page,
                pages: count,
                games,
            },
        );
    }

    fn join(&mut self, now: f64, from: SocketAddr, name: String, nonce: u64) {
        if !self.joins.contains_key(&from.ip()) && self.joins.len() >= MAX_TRACKED {
            return self.refuse(from, &name, Refusal::Busy);
        }
        let recent = self.joins.entry(from.ip()).or_default();
        if recent.len() >= JOIN_BURST {
            return self.refuse(from, &name, Refusal::Busy);
        }
        recent.push_back(now);
        let ttl = f64::from(self.config.ttl);
        let Some(((host, also), owner)) = self
            .games
            .get(&name)
            .map(|r| (r.addrs_for(from.is_ipv6(), now, ttl), r.owner))
        else {
            return self.refuse(from, &name, Refusal::NoSuchGame);
        };
        self.stats.introductions += 1;
        self.relay
            .introduced(now, (&name, nonce), from, host, owner);
        self.send(
            from,
            &Message::Peer {
                name: name.clone(),
                addr: host,
                also,
                nonce,
            },
        );
        self.send(
            host,
            &Message::Introduce {
                proof: super::introduce_proof(&owner, &name, from, nonce),
                name,
                addr: from,
                nonce,
            },
        );
    }
}

impl RendezvousServer {
    /// A relay request from `from` (proved) for the session of the join `(name, nonce)`.
    fn relay(&mut self, now: f64, from: SocketAddr, name: String, nonce: u64) {
        let tokens = [false, true].map(|v6| self.relay_token(&name, nonce, v6));
        let token = |v6| tokens[usize::from(v6)];
        match self
            .relay
            .ask(now, from, (&name, nonce), token, self.config.max_relays)
        {
            // Counted, not answered: a refusal would read to a host as a refused
            // registration, and a player still punching has nothing to do with one.
            Asked::Unknown | Asked::Full => self.stats.refused += 1,
            Asked::Waiting => {}
            Asked::Open {
                token,
                player,
                host,
                owner,
            } => {
                self.send(
                    player,
                    &Message::Relaying {
                        name: name.clone(),
                        nonce,
                        token,
                        peer: host,
                        proof: [0; 16],
                    },
                );
                let proof = super::relaying_proof(&owner, &name, player, nonce, token);
                self.send(
                    host,
                    &Message::Relaying {
                        name,
                        nonce,
                        token,
                        peer: player,
                        proof,
                    },
                );
            }
        }
    }

    /// The token of the relay session of the join `(name, nonce)` asked over the family
    /// of `v6`: keyed by the server's secret, so nobody else can name a session.
    fn relay_token(&self, name: &str, nonce: u64, v6: bool) -> u64 {
        let mut h = blake3::Hasher::new_keyed(&self.cookie_key);
        h.update(b"relay token");
        h.update(&nonce.to_le_bytes());
        h.update(&[u8::from(v6)]);
        h.update(name.as_bytes());
        let mut t = [0; 8];
        t.copy_from_slice(&h.finalize().as_bytes()[..8]);
        u64::from_le_bytes(t)
    }
}

fn epoch(now: f64) -> u64 {
    if now.is_finite() && now > 0.0 {
        (now / COOKIE_EPOCH) as u64
    } else {
        0
    }
}
