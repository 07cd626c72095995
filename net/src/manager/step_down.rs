//! Two hosts of one game split it; the one nobody follows steps down.
//!
//! A host that hears none of its players for two heartbeats (spectators do not count)
//! asks at their addresses whether one of them hosts the game now: it may have been
//! stopped (or cut off) past their timeout while they took the game over at a successor.
//! A player that took the game over answers the question as any server answers a hello,
//! with a challenge; a client ignores it (it is not from one of its game's players).
//!
//! A player that took the game over also asks the host it took it from: it may have taken
//! over a game that lives on (the host was stopped for less than the others' timeout, but
//! long enough that nobody vouched for it). The old host answers with a challenge. It asks
//! even with no player of its own, for the old host's grace window, while no session at
//! all is heard (here a spectator's counts: seed 5947): a player cut off from the host
//! before another joined knew of nobody to ask before it took over, and a game of its own
//! is a split of the one that went on (explorer seed 3553).
//!
//! While it asks, a host answers no connect (a join or a resume) until a round of its
//! question has had [`HOLD_US`] to be answered: it keeps the connect and takes it then. A
//! host stopped past its players' timeout that thawed to a stale player's resume had
//! otherwise taken the player back before the new host's answer came, and two hosts had
//! players (explorer seed 5947).
//!
//! Two hosts may ask each other: a player that took the game over from us and has nobody
//! asks us (its former host) while we, thawed, ask it (one of our players). Each answers
//! the other as a server, and if both stepped down nobody would host (explorer seed 1411).
//! The one that took the game over yields: it steps down to its former host at the first
//! answer, and we step down to one of our own players only when it answers again
//! [`HOLD_US`] after its first answer: one that yielded to us answers no more.
//!
//! Only a challenge, echoing our nonce from an address we asked, makes the server step
//! down ([`NetEvent::Superseded`]): a server is there. A player's word that the old host
//! lives (`HostAlive`) is not enough: one that was stopped and has just thawed believes in
//! a host that is gone (explorer seed 1945: a new host stepped down to the dead host's
//! address on the word of a player frozen since before it died).

use super::client::Client;
use super::frame::Inbound;
use super::server::Server;
use super::{NetManager, Side};
use crate::config::Entropy;
use crate::core::{Core, us};
use crate::crypto;
use crate::endpoint::ClientEndpoint;
use crate::event::NetEvent;
use crate::session::ClientSession;
use crate::wire::{self, DatagramKind};
use std::net::SocketAddr;

/// How often a host that hears none of its players asks them (µs).
const ASK_EVERY_US: u64 = 250_000;

/// How long a host that asks keeps a connect before it answers it (µs): a round of its
/// question, asked when the connect came, and its answers' way back.
const HOLD_US: u64 = 2 * ASK_EVERY_US;

/// How long a player's first answer as a server counts (µs): an answer after that
/// starts the wait again.
const FORGET_US: u64 = 2 * HOLD_US;

/// The most connects kept at once (one an address): more wait for their clients to send
/// them again.
const HOLD_MOST: usize = 16;

/// A host's question to its silent players: whether one of them hosts the game now.
#[derive(Clone)]
pub(super) struct Probe {
    /// The nonce of our hellos, which an answer echoes.
    nonce: u64,
    /// When our hellos go next (µs), while the players are silent.
    next: u64,
    /// Whether we ask now (every player silent).
    asking: bool,
    /// The host we took the game over from, if we did, and until when (µs) we ask it.
    former_host: Option<(SocketAddr, u64)>,
    /// Connects that came while we asked, kept until `held_until` (µs).
    held: Vec<Inbound>,
    /// When the kept connects are taken (µs).
    held_until: u64,
    /// What keys the client we become should we step down having been no client of the
    /// game (we hosted it from the start).
    entropy: Entropy,
    /// One of our players that answered as a server, and when it first did (µs): we
    /// step down to it if it still answers [`HOLD_US`] later.
    answered: Option<(SocketAddr, u64)>,
}

impl Probe {
    /// A probe of a server whose handshakes `entropy` keys, which took the game over from
    /// `former_host` (if it did), asked until when (µs): the time its grace window for
    /// our session ends, past which the game there is no longer ours to go back to.
    pub(super) fn new(entropy: &Entropy, former_host: Option<(SocketAddr, u64)>) -> Self {
        let k = crypto::derive(entropy, "step down probe", 0);
        let nonce = u64::from_le_bytes([k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7]]);
        Probe {
            nonce,
            next: 0,
            asking: false,
            former_host,
            held: Vec::new(),
            held_until: 0,
            answered: None,
            entropy: crypto::derive(entropy, "stepped down", 0),
        }
    }
}

impl Server {
    /// Whom we ask, if none of the players spoke within two heartbeats: our players, live
    /// or waiting for a resume, and, while no session at all is heard, the host we took
    /// the game over from (for its grace window). Nobody if we have no player and took
    /// over from nobody: a game nobody plays is split from no one.
    ///
    /// A spectator heard does not stop the question to our players: it never takes a game
    /// over, and a new host that only a spectator came to may have a player hosting the
    /// game elsewhere (explorer seed 7746: the spectator resumed at the new host the moment
    /// a player, frozen past the host's death, took the game over alone; the new host
    /// stopped asking that player, and two hosts played on). It does stop the question to
    /// the host we took the game from, as before: yielding to it would take a spectator
    /// that resumed here back to a host that knows its session only under the token of
    /// before (a client keeps no older token), and end it (seed 5947).
    fn asked(&self, core: &Core) -> Vec<SocketAddr> {
        let quiet = 2 * us(core.config.heartbeat);
        let e = &self.endpoint;
        let heard: Vec<&ClientSession> = e
            .peers
            .values()
            .filter(|p| core.now.saturating_sub(p.conn.last_heard) <= quiet)
            .collect();
        if !core.config.host_migration || heard.iter().any(|p| !p.spectator) {
            return Vec::new();
        }
        let live = e.peers.values().filter(|p| !p.spectator);
        let mut addrs: Vec<SocketAddr> = live
            .map(|p| p.conn.addr)
            .chain(e.suspended_players())
            .collect();
        if heard.is_empty() {
            addrs.extend(self.former_host(core));
        }
        addrs.sort();
        addrs.dedup();
        addrs
    }

    /// Once a frame: while every player is silent, asks them (and the host we took the
    /// game from) every [`ASK_EVERY_US`] whether the game is hosted elsewhere (a hello
    /// each).
    pub(super) fn ask_whether_replaced(&mut self, core: &mut Core) {
        let asked = self.asked(core);
        if asked.is_empty() {
            self.probe.asking = false;
            self.probe.answered = None;
            return;
        }
        if !self.probe.asking {
            tracing::info!(
                "no player heard for {:.1} s: asking whether the game is hosted elsewhere",
                2.0 * core.config.heartbeat
            );
            self.probe.asking = true;
            self.probe.next = core.now;
        }
        if core.now < self.probe.next {
            return;
        }
        self.probe.next = core.now + ASK_EVERY_US;
        let hello = wire::Hello {
            nonce: self.probe.nonce,
            client_pub: [0; 32],
        };
        let d = wire::hello(core.config.version, &hello);
        core.outbox
            .extend(asked.into_iter().map(|to| (to, d.clone())));
    }

    /// Whether `d`, a client's connect that came while we ask whether we were replaced,
    /// is kept for [`HOLD_US`] (and a round of the question asked at once); a kept
    /// connect is taken by [`Server::held_connects`] when its time is up.
    pub(super) fn hold(&mut self, core: &Core, d: &Inbound) -> bool {
        let connect =
            wire::parse_header(&d.1).is_ok_and(|(_, kind, _)| kind == DatagramKind::Connect);
        if !connect || self.asked(core).is_empty() {
            return false;
        }
        let p = &mut self.probe;
        if p.held.is_empty() {
            p.held_until = core.now + HOLD_US;
            p.next = core.now;
        }
        match p.held.iter().position(|h| h.0 == d.0) {
            Some(i) => p.held[i] = d.clone(),
            None if p.held.len() < HOLD_MOST => p.held.push(d.clone()),
            None => {}
        }
        true
    }

    /// The connects kept by [`Server::hold`] whose time is up, to be taken now (none while
    /// a player's answer as a server waits: we may step down to it).
    pub(super) fn held_connects(&mut self, core: &Core) -> Vec<Inbound> {
        let waiting = self
            .probe
            .answered
            .is_some_and(|(_, first)| core.now <= first + FORGET_US);
        match core.now >= self.probe.held_until && !waiting {
            true => std::mem::take(&mut self.probe.held),
            false => Vec::new(),
        }
    }

    /// Where the game is hosted now, if `bytes` from `from` says so in answer to our
    /// question: a challenge of our version (a server is there), echoing our nonce, from
    /// the host we took the game over from, or from one of our players that answered so
    /// [`HOLD_US`] before too (see the module's note).
    pub(super) fn hosted_at(
        &mut self,
        core: &Core,
        from: SocketAddr,
        bytes: &[u8],
    ) -> Option<SocketAddr> {
        if !self.probe.asking {
            return None;
        }
        let (version, kind, body) = wire::parse_header(bytes).ok()?;
        let nonce = self.probe.nonce;
        // The cheap tests first: every datagram of the frame passes here while we ask.
        let challenge = version == core.config.version
            && kind == DatagramKind::Challenge
            && wire::parse_challenge(body).is_ok_and(|c| c.nonce == nonce);
        if !challenge || !self.asked(core).contains(&from) {
            return None;
        }
        if self.former_host(core) == Some(from) {
            return Some(from);
        }
        // An answer older than FORGET_US (from before it yielded to us and took the game
        // over again, say) counts for nothing: this one starts the wait again.
        let now = core.now;
        let first = self
            .probe
            .answered
            .filter(|(_, first)| now <= first + FORGET_US);
        match first {
            // It answers still: it hosts the game.
            Some((at, first)) if at == from && now >= first + HOLD_US => return Some(from),
            Some(_) => {}
            None => {
                tracing::info!("{from} answers as a server: stepping down if it goes on");
                self.probe.answered = Some((from, now));
            }
        }
        None
    }

    /// The host we took the game over from, while we ask it.
    fn former_host(&self, core: &Core) -> Option<SocketAddr> {
        let former = self.probe.former_host;
        former
            .filter(|(_, until)| core.now < *until)
            .map(|(a, _)| a)
    }

    /// The game is hosted at `host`: every session ends here with no goodbye (the players
    /// are there), and the user is told to play there ([`NetEvent::Superseded`]).
    pub(super) fn step_down(&mut self, core: &mut Core, host: SocketAddr) {
        let ids: Vec<_> = self
            .endpoint
            .peers
            .keys()
            .chain(self.endpoint.suspended.keys())
            .copied()
            .collect();
        for id in ids {
            self.endpoint.remove(id);
        }
        self.probe.asking = false;
        self.probe.answered = None;
        // The connects kept are to the game there.
        self.probe.held.clear();
        tracing::info!("the game is hosted at {host}: stepping down");
        core.events.push_back(NetEvent::Superseded { host });
        self.stepped_down = Some(host);
    }
}

impl NetManager {
    /// We stepped down to the game at `host`: this manager becomes a client of it. The
    /// client we were before we took the game over claims its session there (at the host
    /// we took it from, ours; at another player that took it over from that host, the one
    /// it awaits us in), and a server that was never a client of this game joins it under
    /// the name its host played as. A claim refused as expired joins anew; one the host
    /// kicked us from while we could not hear it stays ended (explorer seed 1344).
    pub(super) fn become_client(&mut self, host: SocketAddr) {
        let Side::Server(s) = &mut self.side else {
            return;
        };
        let core = &mut self.core;
        let endpoint = match s.was.take() {
            Some(was) => {
                let (mut endpoint, config) = *was;
                core.config = config;
                endpoint.go_back(core, host);
                endpoint
            }
            None => {
                let c = &mut core.config;
                // Should it take the game over again, it plays there too, and counts.
                if c.host_name.is_some() {
                    c.max_clients = c.max_clients.saturating_sub(1);
                }
                c.spectator = false;
                let name = c.host_name.clone().unwrap_or_else(|| c.server_name.clone());
                let password = c.password.clone();
                let entropy = s.probe.entropy;
                ClientEndpoint::new(core, host, &name, password.as_deref(), entropy)
            }
        };
        self.side = Side::Client(Box::new(Client::new(endpoint)));
        // The game gives the client a world of its own.
        self.group_tick = None;
    }
}
