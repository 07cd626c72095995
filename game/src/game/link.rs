//! The link: everything between a game and the wire. It owns the [`NetManager`], the
//! socket, the discovery responder, the registration at a rendezvous server and the
//! relayed routes, and moves datagrams among them.

use crate::game::entropy;
use lanyard::prelude::*;
use lanyard_net::discovery::{Responder, ServerInfo};
use lanyard_net::{NetManager, Transport};
use lanyard_rendezvous::relay::{Received, Routes};
use lanyard_rendezvous::{self as rendezvous, Addrs, Registrar, RegistrarEvent};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

/// A game's link to the other peers.
pub(super) struct Link {
    net: NetManager,
    /// Where datagrams go: a UDP socket, or an endpoint of an in-memory hub in tests.
    socket: Box<dyn Transport>,
    responder: Option<Responder>,
    /// Server: its registration with a rendezvous server, and the punching toward the
    /// players it introduces.
    registrar: Option<Registrar>,
    /// The peers reached through the rendezvous server's relay (punching found no path),
    /// until a direct path opens.
    routes: Routes,
    /// The socket's clock at the last tick of a real-time loop ([`net_dt`](Self::net_dt)).
    wall: Option<Duration>,
}

/// A registration at `rv` under a fresh owner secret.
fn registrar(rv: Addrs) -> Registrar {
    let mut owner = [0; 16];
    owner.copy_from_slice(&entropy()[..16]);
    Registrar::new(rv, owner)
}

impl Link {
    /// A link of `net` over `socket`, answering discovery with `responder` if given and
    /// registering at the rendezvous server `rendezvous` if given.
    pub(super) fn new(
        net: NetManager,
        socket: Box<dyn Transport>,
        responder: Option<Responder>,
        rendezvous: Option<Addrs>,
    ) -> Link {
        Link {
            net,
            socket,
            responder,
            registrar: rendezvous.map(registrar),
            routes: Routes::new(),
            wall: None,
        }
    }

    /// The time the network's clock takes at a tick of a loop that runs in real time: what
    /// the socket's clock says passed since the last such tick, or `dt` on a transport
    /// with no clock of its own (the hub). A window's ticks come in bursts between drawn
    /// frames, all at one instant: what they stamp on the wire leaves together, and a round
    /// trip measured on a clock that stepped a tick between them would be a tick off.
    pub(super) fn net_dt(&mut self, dt: f32) -> f32 {
        let Some(now) = self.socket.wall_clock() else {
            return dt;
        };
        match self.wall.replace(now) {
            Some(then) => now.saturating_sub(then).as_secs_f32(),
            None => dt,
        }
    }

    /// The network layer.
    pub(super) fn net(&self) -> &NetManager {
        &self.net
    }

    /// The network layer, to change.
    pub(super) fn net_mut(&mut self) -> &mut NetManager {
        &mut self.net
    }

    /// Sends through `routes` from now on (a path the rendezvous server opened).
    pub(super) fn set_routes(&mut self, routes: Routes) {
        self.routes = routes;
    }

    /// This peer took the game over: it answers discovery on `discovery` and registers
    /// at `rendezvous`, if the game did and it does not yet.
    pub(super) fn host(&mut self, discovery: Option<SocketAddr>, rendezvous: Option<Addrs>) {
        if let Some(rv) = rendezvous
            && self.registrar.is_none()
        {
            self.registrar = Some(registrar(rv));
        }
        if let Some(d) = discovery
            && self.responder.is_none()
        {
            match Responder::bind(d) {
                Ok(r) => self.responder = Some(r),
                Err(e) => tracing::warn!("cannot answer discovery on {d}: {e}"),
            }
        }
    }

    /// This host stepped down (its NetManager is a client of the game's new host now, on
    /// the same socket): the link no longer answers discovery nor registers the game (the
    /// new host does).
    pub(super) fn stepped_down(&mut self) {
        self.responder = None;
        self.registrar = None;
    }

    /// Waits up to `timeout` for datagrams.
    pub(super) fn wait(&mut self, timeout: Duration) {
        self.socket.wait(timeout);
    }

    /// Lets `dt` seconds pass on the socket (an in-memory hub's clock; nothing on UDP).
    pub(super) fn advance(&mut self, dt: f32) {
        self.socket.advance(dt);
    }

    /// Moves datagrams between the socket and the NetManager (and the rendezvous side,
    /// which gets the rendezvous datagrams: a registration must come from the game
    /// socket, the address players reach); `now` is the game's clock in seconds.
    pub(super) fn pump(&mut self, now: f64) {
        while let Some((from, bytes, age)) = self.socket.recv_aged() {
            // Relayed datagrams come out as the peer's own; a relayed peer's punch opens
            // the direct path.
            let (from, bytes) = match self.routes.incoming(now, from, &bytes) {
                Received::Game(from, bytes) => (from, bytes),
                Received::Taken => continue,
            };
            if rendezvous::is_rendezvous(bytes) {
                // A server's registrar takes them; a client drops late punches.
                if let Some(r) = &mut self.registrar {
                    r.receive(now, from, bytes);
                }
                continue;
            }
            if !self.socket.can_host(from) {
                self.net.cannot_host(from);
            }
            self.net.receive_aged(from, bytes, age);
        }
        for (to, bytes) in self.net.drain_outgoing() {
            let (to, bytes) = self.routes.outgoing(to, bytes);
            self.socket.send(to, &bytes);
        }
        for (to, bytes) in self.routes.poll(now) {
            self.socket.send(to, &bytes);
        }
        if let Some(r) = &mut self.registrar {
            for (to, bytes) in r.drain_outgoing() {
                self.socket.send(to, &bytes);
            }
        }
    }

    /// Whether this peer announces its game (on the LAN or at a rendezvous server).
    pub(super) fn announces(&self) -> bool {
        self.responder.is_some() || self.registrar.is_some()
    }

    /// Answers discovery and keeps the registration alive with `info` (the game's name
    /// among it); returns what the rendezvous side did, as lines for the operator.
    pub(super) fn announce(&mut self, now: f64, info: &ServerInfo) -> Vec<String> {
        if let Some(r) = &mut self.responder {
            r.poll(info);
        }
        let Some(r) = &mut self.registrar else {
            return Vec::new();
        };
        r.poll(now, info);
        let rv = r.rendezvous();
        let name = &info.name;
        let mut lines = Vec::new();
        for e in r.events() {
            let line = match e {
                RegistrarEvent::Registered { public } => format!(
                    "registered as '{name}' at the rendezvous server {rv} (public address {public})"
                ),
                RegistrarEvent::Refused(why) => {
                    format!("the rendezvous server {rv} refused '{name}': {why}")
                }
                RegistrarEvent::Silent => {
                    format!("the rendezvous server {rv} does not answer (still trying)")
                }
                RegistrarEvent::Introduced { peer } => {
                    format!("a player at {peer} is joining through the rendezvous server")
                }
                RegistrarEvent::Opened { peer } => {
                    tracing::info!("the path to {peer} is open");
                    continue;
                }
                RegistrarEvent::Relayed {
                    peer,
                    relay,
                    token,
                    nonce,
                } => {
                    self.routes.relay(now, peer, relay, token, nonce);
                    format!(
                        "no direct path to the player at {peer}: the rendezvous server {relay} relays it (still looking for one)"
                    )
                }
            };
            lines.push(line);
        }
        lines
    }

    /// A host forgets the relayed routes of players that left.
    pub(super) fn forget_routes(&mut self, now: f64) {
        if self.routes.relayed_peers() > 0 {
            let live: BTreeSet<SocketAddr> = self.net.sessions().iter().map(|s| s.addr).collect();
            self.routes.retain(now, |p| live.contains(&p));
        }
    }

    /// Whether datagrams to `peer` go through the relay now.
    pub(super) fn relayed_to(&self, peer: SocketAddr) -> bool {
        self.routes.relayed(peer)
    }

    /// Whether any peer is reached through the relay now.
    pub(super) fn relays_any(&self) -> bool {
        self.routes.relayed_peers() > 0
    }

    /// The public address the rendezvous server saw, once registered.
    pub(super) fn public_addr(&self) -> Option<SocketAddr> {
        self.registrar.as_ref()?.public()
    }

    /// The address the socket is bound to.
    pub(super) fn local_addr(&self) -> SocketAddr {
        self.socket.local_addr()
    }

    /// Says goodbye (a client) or shuts down (a server), leaves the rendezvous server,
    /// and sends it all.
    pub(super) fn shutdown(&mut self, group: &mut EntityGroup, now: f64) {
        self.net.disconnect(group);
        if let Some(r) = &mut self.registrar {
            r.unregister();
        }
        self.pump(now);
    }
}
