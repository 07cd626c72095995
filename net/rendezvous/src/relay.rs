//! When punching fails: the rendezvous server relays a session's datagrams, and the peers
//! keep trying a direct path.
//!
//! A relayed datagram is the game's own datagram (sealed end to end, so the relay can
//! neither read nor forge it) behind a 12-byte header: [`RELAY_MAGIC`] and the session's
//! token. The relay forwards it unchanged to the session's other address, so what it sends
//! is never larger than what it received, and only from the two addresses that asked for
//! the session (both proved with a cookie, and named by an introduction the server made
//! itself). Every session is rate-capped, and so is the relay in all
//! ([`RendezvousConfig::relay_rate`](super::RendezvousConfig::relay_rate),
//! [`RendezvousConfig::relay_total`](super::RendezvousConfig::relay_total)).
//!
//! On a peer, [`Routes`] sits between the game socket and the game: what the game sends
//! to a relayed peer goes to the relay, wrapped; what comes back is unwrapped and handed
//! to the game as if from the peer. Meanwhile both peers punch toward each other now and
//! then ([`DIRECT_EVERY`]); once a punch arrives straight from the peer, the route is
//! direct, with no break: the game sees the same peer address either way, and datagrams
//! still on their way through the relay are still unwrapped.

use super::Message;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

/// The first bytes of a relayed datagram.
pub const RELAY_MAGIC: [u8; 4] = *b"LYRD";
/// Bytes before the game's datagram: the magic and the session's token.
pub const RELAY_HEADER_LEN: usize = RELAY_MAGIC.len() + 8;
/// Seconds between a relayed peer's punches toward the other, looking for a direct path.
pub const DIRECT_EVERY: f64 = 1.0;
/// Seconds a relay session lives with nothing relayed.
pub const RELAY_IDLE: f64 = 30.0;

/// Whether `bytes` is a relayed datagram (by its magic).
pub fn is_relayed(bytes: &[u8]) -> bool {
    bytes.len() >= RELAY_HEADER_LEN && bytes.starts_with(&RELAY_MAGIC)
}

/// `payload` behind the header of session `token`.
pub fn wrap(token: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(RELAY_HEADER_LEN + payload.len());
    out.extend_from_slice(&RELAY_MAGIC);
    out.extend_from_slice(&token.to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The token and the game's datagram of a relayed datagram.
pub fn unwrap(bytes: &[u8]) -> Option<(u64, &[u8])> {
    if !is_relayed(bytes) {
        return None;
    }
    let (head, payload) = bytes.split_at(RELAY_HEADER_LEN);
    let token = u64::from_le_bytes(head[RELAY_MAGIC.len()..].try_into().ok()?);
    Some((token, payload))
}

/// A token bucket of bytes: `rate` a second, at most one second's worth saved up.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    level: f64,
    at: f64,
}

impl Bucket {
    fn full(rate: f64, now: f64) -> Bucket {
        Bucket {
            level: rate,
            at: now,
        }
    }

    fn refill(&mut self, rate: f64, now: f64) {
        if now > self.at {
            self.level = (self.level + (now - self.at) * rate).min(rate);
            self.at = now;
        }
    }
}

/// An introduction the server made: who may ask for a relay between whom.
#[derive(Debug, Clone)]
struct Introduced {
    player: SocketAddr,
    host: SocketAddr,
    owner: [u8; 16],
    asked: [bool; 2],
    expires: f64,
}

/// A relay session: two proven addresses and what passed between them.
#[derive(Debug, Clone)]
struct Session {
    name: String,
    player: SocketAddr,
    host: SocketAddr,
    last: f64,
    bucket: Bucket,
}

/// Seconds an introduction may lead to a relay session.
const ASK_WITHIN: f64 = 30.0;
/// Introductions the server keeps at once (the oldest goes first beyond that).
const MAX_INTRODUCED: usize = 4096;

/// What the relay did, for [`RendezvousStats`](super::RendezvousStats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct RelayCounts {
    pub(super) sessions_opened: u64,
    pub(super) datagrams: u64,
    pub(super) bytes: u64,
    pub(super) over_cap: u64,
    pub(super) strangers: u64,
}

/// The server's relay: introductions that may become sessions, and the sessions.
pub(super) struct Relay {
    /// By the join's name, nonce and the family the player asked over (a player joins
    /// over each family it has).
    introduced: BTreeMap<(String, u64, bool), Introduced>,
    sessions: HashMap<u64, Session>,
    total: Bucket,
    pub(super) counts: RelayCounts,
}

/// What a relay request comes to.
pub(super) enum Asked {
    /// Not an introduction this server made between this address and another.
    Unknown,
    /// The other side has not asked yet.
    Waiting,
    /// A session runs: tell both sides (the host with `owner`'s proof).
    Open {
        token: u64,
        player: SocketAddr,
        host: SocketAddr,
        owner: [u8; 16],
    },
    /// No room for another session.
    Full,
}

impl Relay {
    pub(super) fn new() -> Relay {
        Relay {
            introduced: BTreeMap::new(),
            sessions: HashMap::new(),
            total: Bucket {
                level: 0.0,
                at: f64::NEG_INFINITY,
            },
            counts: RelayCounts::default(),
        }
    }

    /// Sessions running now.
    pub(super) fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// The server introduced `player` to the host of `name` at `host`.
    pub(super) fn introduced(
        &mut self,
        now: f64,
        (name, nonce): (&str, u64),
        player: SocketAddr,
        host: SocketAddr,
        owner: [u8; 16],
    ) {
        if self.introduced.len() >= MAX_INTRODUCED
            && let Some(oldest) = self
                .introduced
                .iter()
                .min_by(|a, b| a.1.expires.total_cmp(&b.1.expires))
                .map(|(k, _)| k.clone())
        {
            self.introduced.remove(&oldest);
        }
        self.introduced.insert(
            (name.to_owned(), nonce, player.is_ipv6()),
            Introduced {
                player,
                host,
                owner,
                asked: [false; 2],
                expires: now + ASK_WITHIN,
            },
        );
    }

    /// `from` (proved) asks to relay the session of the introduction `(name, nonce)`;
    /// `token` is what the session's token would be for a player who asked over IPv6 or
    /// not, and `max` the most sessions at once.
    pub(super) fn ask(
        &mut self,
        now: f64,
        from: SocketAddr,
        (name, nonce): (&str, u64),
        token: impl Fn(bool) -> u64,
        max: usize,
    ) -> Asked {
        // The introduction over either family that names `from`.
        let Some((key, side)) = [false, true].into_iter().find_map(|v6| {
            let key = (name.to_owned(), nonce, v6);
            let i = self.introduced.get(&key)?;
            let side = [i.player, i.host].iter().position(|&a| a == from)?;
            Some((key, side))
        }) else {
            return Asked::Unknown;
        };
        let token = token(key.2);
        let Some(i) = self.introduced.get_mut(&key) else {
            return Asked::Unknown;
        };
        i.asked[side] = true;
        if !(i.asked[0] && i.asked[1]) {
            return Asked::Waiting;
        }
        let (player, host, owner) = (i.player, i.host, i.owner);
        if !self.sessions.contains_key(&token) {
            if self.sessions.len() >= max {
                return Asked::Full;
            }
            self.counts.sessions_opened += 1;
            self.sessions.insert(
                token,
                Session {
                    name: name.to_owned(),
                    player,
                    host,
                    last: now,
                    bucket: Bucket {
                        level: 0.0,
                        at: f64::NEG_INFINITY,
                    },
                },
            );
        }
        Asked::Open {
            token,
            player,
            host,
            owner,
        }
    }

    /// A relayed datagram from `from`: where to send it unchanged, or nowhere (a stranger,
    /// an unknown session, or over a cap; counted).
    pub(super) fn forward(
        &mut self,
        now: f64,
        from: SocketAddr,
        bytes: &[u8],
        (rate, total): (f64, f64),
    ) -> Option<SocketAddr> {
        let (token, _) = unwrap(bytes)?;
        let Some(s) = self.sessions.get_mut(&token) else {
            self.counts.strangers += 1;
            return None;
        };
        let to = if from == s.player {
            s.host
        } else if from == s.host {
            s.player
        } else {
            self.counts.strangers += 1;
            return None;
        };
        if s.bucket.at == f64::NEG_INFINITY {
            s.bucket = Bucket::full(rate, now);
        }
        if self.total.at == f64::NEG_INFINITY {
            self.total = Bucket::full(total, now);
        }
        s.bucket.refill(rate, now);
        self.total.refill(total, now);
        let n = bytes.len() as f64;
        if s.bucket.level < n || self.total.level < n {
            self.counts.over_cap += 1;
            return None;
        }
        s.bucket.level -= n;
        self.total.level -= n;
        s.last = now;
        self.counts.datagrams += 1;
        self.counts.bytes += bytes.len() as u64;
        Some(to)
    }

    /// Forgets old introductions, idle sessions and the sessions of games no longer
    /// registered.
    pub(super) fn expire(&mut self, now: f64, registered: impl Fn(&str) -> bool) {
        self.introduced.retain(|_, i| i.expires > now);
        self.sessions
            .retain(|_, s| now - s.last < RELAY_IDLE && registered(&s.name));
    }
}

/// One relayed peer, as a [`Routes`] keeps it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Route {
    relay: SocketAddr,
    token: u64,
    nonce: u64,
    /// A punch came straight from the peer: send to it directly.
    direct: bool,
    next_punch: f64,
    /// When the route began.
    since: f64,
}

/// A peer's routes: which of its peers it reaches through a relay, and the watch for a
/// direct path to each. The game socket's edge puts every datagram through it.
#[derive(Debug, Default)]
pub struct Routes {
    routes: BTreeMap<SocketAddr, Route>,
}

/// What a datagram the game socket received is.
#[derive(Debug, PartialEq, Eq)]
pub enum Received<'a> {
    /// The game's: from this peer, these bytes (unwrapped if it came through the relay).
    Game(SocketAddr, &'a [u8]),
    /// Taken here (a relayed peer's punch, or a relayed datagram of no session of ours).
    Taken,
}

impl Routes {
    /// No routes: everything goes direct.
    pub fn new() -> Routes {
        Routes::default()
    }

    /// Reaches `peer` through the relay at `relay` in session `token`, and punches toward
    /// it with `nonce` until a direct path opens.
    pub fn relay(&mut self, now: f64, peer: SocketAddr, relay: SocketAddr, token: u64, nonce: u64) {
        self.routes.insert(
            peer,
            Route {
                relay,
                token,
                nonce,
                direct: false,
                next_punch: now,
                since: now,
            },
        );
    }

    /// Keeps the routes of the peers `live` says still play, and those that began less
    /// than [`RELAY_IDLE`] ago (a player still joining): a host forgets the players that
    /// left.
    pub fn retain(&mut self, now: f64, mut live: impl FnMut(SocketAddr) -> bool) {
        self.routes
            .retain(|peer, r| live(*peer) || now - r.since < RELAY_IDLE);
    }

    /// Whether datagrams to `peer` go through a relay now.
    pub fn relayed(&self, peer: SocketAddr) -> bool {
        self.routes.get(&peer).is_some_and(|r| !r.direct)
    }

    /// Peers reached through a relay now.
    pub fn relayed_peers(&self) -> usize {
        self.routes.values().filter(|r| !r.direct).count()
    }

    /// Forgets `peer` (its session ended).
    pub fn forget(&mut self, peer: SocketAddr) {
        self.routes.remove(&peer);
    }

    /// Where to send the game's datagram `bytes` for `to`, and what to send.
    pub fn outgoing(&self, to: SocketAddr, bytes: Vec<u8>) -> (SocketAddr, Vec<u8>) {
        match self.routes.get(&to) {
            Some(r) if !r.direct => (r.relay, wrap(r.token, &bytes)),
            _ => (to, bytes),
        }
    }

    /// A datagram the game socket received from `from`.
    pub fn incoming<'a>(&mut self, now: f64, from: SocketAddr, bytes: &'a [u8]) -> Received<'a> {
        if let Some((token, payload)) = unwrap(bytes) {
            return match self
                .routes
                .iter()
                .find(|(_, r)| r.relay == from && r.token == token)
            {
                Some((peer, _)) => Received::Game(*peer, payload),
                None => Received::Taken,
            };
        }
        if super::is_rendezvous(bytes)
            && let Some(r) = self.routes.get_mut(&from)
            && let Ok(Message::Punch { nonce }) = super::decode(bytes)
            && nonce == r.nonce
        {
            // Straight from the peer: the direct path is open. Answer at once, so the
            // other side hears a punch too.
            r.direct = true;
            r.next_punch = now;
            return Received::Taken;
        }
        Received::Game(from, bytes)
    }

    /// The punches due at `now`: toward every relayed peer now and then, and one answer to
    /// a peer whose punch just came in.
    pub fn poll(&mut self, now: f64) -> Vec<(SocketAddr, Vec<u8>)> {
        let mut out = Vec::new();
        for (peer, r) in &mut self.routes {
            if now >= r.next_punch {
                r.next_punch = if r.direct {
                    f64::INFINITY
                } else {
                    now + DIRECT_EVERY
                };
                out.push((
                    *peer,
                    super::encode(&Message::Punch { nonce: r.nonce }).unwrap_or_default(),
                ));
            }
        }
        out
    }
}
