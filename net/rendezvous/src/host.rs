//! A host's side of the rendezvous: keeps its game registered, and punches toward the
//! players the rendezvous server introduces.

use super::client::{PUNCH_EVERY, PUNCH_TIMEOUT, RELAY_AFTER, datagram};
use super::{Addrs, Cookie, Message, Refusal, decode, is_rendezvous};
use crate::crypto;
use lanyard_net::discovery::ServerInfo;
use std::net::SocketAddr;

/// Seconds a host waits for an answer before asking the rendezvous server again.
const RETRY: f64 = 1.0;
/// Seconds without an answer before a host hears that its rendezvous server is silent.
const SILENT_AFTER: f64 = 5.0;
/// Seconds before a host asks again after a refusal (the name may come free).
const REFUSED_RETRY: f64 = 10.0;
/// Seconds a host punches toward a player it was introduced to.
const HOST_PUNCH_FOR: f64 = PUNCH_TIMEOUT + 1.0;
/// Players a host punches toward at once (the oldest is dropped beyond that).
const MAX_PUNCHES: usize = 16;

/// What happened between a host and its rendezvous server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistrarEvent {
    /// The game is registered (first, or again after a refusal or a change of address),
    /// over one of the rendezvous server's addresses.
    Registered {
        /// The host's public address, as the rendezvous server saw it over that address.
        public: SocketAddr,
    },
    /// The rendezvous server refused the registration (it is asked again now and then).
    Refused(Refusal),
    /// The rendezvous server has not answered for a few seconds, at any of its addresses.
    Silent,
    /// A player is coming: the host punches toward it.
    Introduced {
        /// The player's public address.
        peer: SocketAddr,
    },
    /// A punch from that player arrived: the path is open.
    Opened {
        /// The player's public address.
        peer: SocketAddr,
    },
    /// Punching found no path to that player: the rendezvous server relays the session.
    /// Reach the player through [`Routes::relay`](super::relay::Routes::relay).
    Relayed {
        /// The player's public address, as the rendezvous server sees it.
        peer: SocketAddr,
        /// The rendezvous server's address that relays it.
        relay: SocketAddr,
        /// The session's token.
        token: u64,
        /// The join's nonce (the direct punches carry it).
        nonce: u64,
    },
}

struct Punching {
    peer: SocketAddr,
    nonce: u64,
    /// The rendezvous server's address that introduced it (relay requests go there).
    via: SocketAddr,
    since: f64,
    until: f64,
    next: f64,
    opened: bool,
    /// When to ask the rendezvous server to relay next.
    relay_next: f64,
}

/// The registration over one of the rendezvous server's addresses.
struct Over {
    addr: SocketAddr,
    cookie: Option<Cookie>,
    next: f64,
    asked_since: Option<f64>,
    silent: bool,
    public: Option<SocketAddr>,
}

/// A host's side: keeps its game registered, and punches toward the players the
/// rendezvous server introduces. Feed it every rendezvous datagram the game socket
/// receives ([`Registrar::receive`]), call [`Registrar::poll`] every tick, and send what
/// [`Registrar::drain_outgoing`] hands back **from the game socket** (the registration
/// must come from the address players will reach). Given both of the rendezvous server's
/// families ([`Addrs`]), it registers over each, so players get both of its addresses.
pub struct Registrar {
    rendezvous: Addrs,
    over: Vec<Over>,
    owner: [u8; 16],
    name: String,
    silent: bool,
    refused: Option<Refusal>,
    punches: Vec<Punching>,
    out: Vec<(SocketAddr, Vec<u8>)>,
    events: Vec<RegistrarEvent>,
}

impl Registrar {
    /// Registers with the rendezvous server at `rendezvous` (one address, or one of each
    /// family); `owner` is a secret of the caller's randomness that lets it refresh the
    /// registration from another address.
    pub fn new(rendezvous: impl Into<Addrs>, owner: [u8; 16]) -> Self {
        let rendezvous = rendezvous.into();
        Registrar {
            rendezvous,
            over: rendezvous
                .iter()
                .map(|addr| Over {
                    addr,
                    cookie: None,
                    next: f64::NEG_INFINITY,
                    asked_since: None,
                    silent: false,
                    public: None,
                })
                .collect(),
            owner,
            name: String::new(),
            silent: false,
            refused: None,
            punches: Vec::new(),
            out: Vec::new(),
            events: Vec::new(),
        }
    }

    /// The rendezvous server's addresses.
    pub fn rendezvous(&self) -> Addrs {
        self.rendezvous
    }

    /// The public address the rendezvous server saw, once registered (over its IPv6
    /// address, if it has one and that registration holds).
    pub fn public(&self) -> Option<SocketAddr> {
        self.over.iter().find_map(|o| o.public)
    }

    /// Every public address the rendezvous server saw (one per family it was reached over).
    pub fn publics(&self) -> Vec<SocketAddr> {
        self.over.iter().filter_map(|o| o.public).collect()
    }

    /// Players being punched toward now.
    pub fn punching(&self) -> usize {
        self.punches.len()
    }

    fn push(&mut self, to: SocketAddr, msg: &Message) {
        self.out.push((to, datagram(msg)));
    }

    /// Registers or refreshes when due (with `info`, the game as it is now), and punches.
    pub fn poll(&mut self, now: f64, info: &ServerInfo) {
        if self.name != info.name {
            self.name = info.name.clone();
        }
        let mut sends = Vec::new();
        for o in &mut self.over {
            if now < o.next {
                continue;
            }
            let msg = match o.cookie {
                None => Message::Hello,
                Some(cookie) => Message::Register {
                    cookie,
                    owner: self.owner,
                    info: info.clone(),
                },
            };
            sends.push((o.addr, msg));
            o.next = now + RETRY;
            let since = *o.asked_since.get_or_insert(now);
            o.silent = now - since >= SILENT_AFTER;
        }
        for (to, msg) in sends {
            self.push(to, &msg);
        }
        if !self.silent && self.over.iter().all(|o| o.silent) {
            self.silent = true;
            self.events.push(RegistrarEvent::Silent);
        }
        let mut due = Vec::new();
        for p in &mut self.punches {
            if now >= p.next && now < p.until {
                due.push((p.peer, p.nonce));
                p.next = now + PUNCH_EVERY;
            }
        }
        for (peer, nonce) in due {
            self.push(peer, &Message::Punch { nonce });
        }
        // Punching found nothing for a while: ask for a relay too, where the player was
        // introduced.
        let mut asks = Vec::new();
        for p in &mut self.punches {
            if !p.opened && now - p.since >= RELAY_AFTER && now >= p.relay_next {
                p.relay_next = now + RETRY;
                asks.push((p.via, p.nonce));
            }
        }
        for (via, nonce) in asks {
            let Some(cookie) = self
                .over
                .iter()
                .find(|o| o.addr == via)
                .and_then(|o| o.cookie)
            else {
                continue;
            };
            let msg = Message::Relay {
                cookie,
                name: self.name.clone(),
                nonce,
            };
            self.push(via, &msg);
        }
        self.punches.retain(|p| now < p.until);
    }

    /// One datagram the game socket received. Returns whether it was a rendezvous
    /// datagram (consumed here); anything else belongs to the game.
    pub fn receive(&mut self, now: f64, from: SocketAddr, bytes: &[u8]) -> bool {
        if !is_rendezvous(bytes) {
            return false;
        }
        let Ok(msg) = decode(bytes) else {
            return true;
        };
        if let Some(i) = self.over.iter().position(|o| o.addr == from) {
            self.answered(now, i, msg);
        } else if let Message::Punch { nonce } = msg
            && let Some(p) = self
                .punches
                .iter_mut()
                .find(|p| p.peer.ip() == from.ip() && p.nonce == nonce)
            && !p.opened
        {
            // Perhaps from another port than the rendezvous server saw: a player behind a
            // NAT that gives each destination a port of its own reaches a host whose router
            // lets it in (a forwarded port). Answer where it came from.
            p.peer = from;
            p.opened = true;
            // A few more, so the player hears one now that its NAT lets them in.
            p.until = p.until.min(now + 0.5);
            p.next = now;
            self.events.push(RegistrarEvent::Opened { peer: from });
            // The same player introduced over the other family is not punched on.
            self.forget_others(nonce, from);
        }
        true
    }

    /// Stops punching toward the player of the join `nonce` at any address but `peer`.
    fn forget_others(&mut self, nonce: u64, peer: SocketAddr) {
        self.punches
            .retain(|p| p.nonce != nonce || p.peer == peer || p.opened);
    }

    /// The rendezvous server over `self.over[i]` answered `msg`: a dispatch on what it
    /// says; what carries an owner proof counts only with a right one.
    fn answered(&mut self, now: f64, i: usize, msg: Message) {
        let o = &mut self.over[i];
        let via = o.addr;
        o.asked_since = None;
        o.silent = false;
        self.silent = false;
        match msg {
            Message::Challenge { cookie, .. } => {
                o.cookie = Some(cookie);
                o.next = now;
            }
            Message::Registered {
                name,
                ttl_ms,
                public,
                proof,
            } if crypto::same(
                &proof,
                &super::registered_proof(&self.owner, &name, ttl_ms, public),
            ) =>
            {
                self.on_registered(now, i, ttl_ms, public)
            }
            Message::Refused { reason, .. } => self.on_refused(now, i, reason),
            Message::Introduce {
                name,
                addr,
                nonce,
                proof,
            } if crypto::same(
                &proof,
                &super::introduce_proof(&self.owner, &name, addr, nonce),
            ) =>
            {
                self.on_introduce(now, via, addr, nonce)
            }
            Message::Relaying {
                name,
                nonce,
                token,
                peer,
                proof,
            } if crypto::same(
                &proof,
                &super::relaying_proof(&self.owner, &name, peer, nonce, token),
            ) =>
            {
                self.on_relaying(via, peer, nonce, token)
            }
            _ => {}
        }
    }

    /// Registered over `self.over[i]` for `ttl_ms`, seen at `public`: refresh at a third
    /// of it.
    fn on_registered(&mut self, now: f64, i: usize, ttl_ms: u32, public: SocketAddr) {
        let o = &mut self.over[i];
        o.next = now + (f64::from(ttl_ms) / 3000.0).max(0.5);
        self.refused = None;
        if o.public != Some(public) {
            o.public = Some(public);
            self.events.push(RegistrarEvent::Registered { public });
        }
    }

    /// Refused over `self.over[i]`: try again in [`REFUSED_RETRY`], and say so once.
    fn on_refused(&mut self, now: f64, i: usize, reason: Refusal) {
        let o = &mut self.over[i];
        o.next = now + REFUSED_RETRY;
        o.public = None;
        if self.refused != Some(reason) {
            self.refused = Some(reason);
            self.events.push(RegistrarEvent::Refused(reason));
        }
    }

    /// The rendezvous server at `via` introduces a player at `addr` (join `nonce`):
    /// punch toward it for [`HOST_PUNCH_FOR`], or longer if it is punched already.
    fn on_introduce(&mut self, now: f64, via: SocketAddr, addr: SocketAddr, nonce: u64) {
        if let Some(p) = self
            .punches
            .iter_mut()
            .find(|p| p.peer == addr && p.nonce == nonce)
        {
            p.until = now + HOST_PUNCH_FOR;
            return;
        }
        if self.punches.len() >= MAX_PUNCHES {
            self.punches.remove(0);
        }
        self.punches.push(Punching {
            peer: addr,
            nonce,
            via,
            since: now,
            until: now + HOST_PUNCH_FOR,
            next: now,
            opened: false,
            relay_next: now + RELAY_AFTER,
        });
        self.events.push(RegistrarEvent::Introduced { peer: addr });
    }

    /// The rendezvous server at `via` relays the player at `peer` (join `nonce`) under
    /// `token`: only for a player still being punched toward, and only once.
    fn on_relaying(&mut self, via: SocketAddr, peer: SocketAddr, nonce: u64, token: u64) {
        let Some(i) = self
            .punches
            .iter()
            .position(|p| p.peer == peer && p.nonce == nonce && !p.opened)
        else {
            return;
        };
        self.punches.remove(i);
        self.punches.retain(|p| p.nonce != nonce || p.opened);
        self.events.push(RegistrarEvent::Relayed {
            peer,
            relay: via,
            token,
            nonce,
        });
    }

    /// Drops the registration (the game is ending). Send what
    /// [`Registrar::drain_outgoing`] hands back before closing the socket.
    pub fn unregister(&mut self) {
        let asks: Vec<_> = self
            .over
            .iter()
            .filter_map(|o| Some((o.addr, o.cookie?)))
            .collect();
        for (to, cookie) in asks {
            let msg = Message::Unregister {
                cookie,
                owner: self.owner,
                name: self.name.clone(),
            };
            self.push(to, &msg);
        }
        self.punches.clear();
    }

    /// The datagrams to send from the game socket, with where to.
    pub fn drain_outgoing(&mut self) -> Vec<(SocketAddr, Vec<u8>)> {
        std::mem::take(&mut self.out)
    }

    /// What happened since the last call.
    pub fn events(&mut self) -> Vec<RegistrarEvent> {
        std::mem::take(&mut self.events)
    }
}
