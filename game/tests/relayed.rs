//! A relayed game on the in-memory hub: a host registered with a rendezvous server and a
//! player behind "NATs" that let no direct datagram through join by name, play through the
//! relay, and go direct when a path opens, with every chat line (reliable messages) both
//! ways delivered once and in order across the switch.

mod common;

use common::local_options;
use lanyard_game::game::{Game, TICK_HZ};
use lanyard_net::Transport;
use lanyard_net::transport::HubEndpoint;
use lanyard_rendezvous::{Exchange, Joiner, RendezvousConfig, RendezvousServer};
use std::cell::Cell;
use std::net::SocketAddr;
use std::rc::Rc;

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

const RV: &str = "203.0.113.1:47820";
const HOST: &str = "203.0.113.2:47810";
const PLAYER: &str = "198.51.100.7:40000";

/// A hub endpoint behind a "NAT" that, while `closed`, lets out only what goes to the
/// rendezvous server.
struct Nat {
    inner: HubEndpoint,
    closed: Rc<Cell<bool>>,
    dropped: Rc<Cell<u64>>,
}

impl Transport for Nat {
    fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr()
    }
    fn send(&mut self, to: SocketAddr, bytes: &[u8]) {
        if self.closed.get() && to != addr(RV) {
            self.dropped.set(self.dropped.get() + 1);
            return;
        }
        self.inner.send(to, bytes);
    }
    fn recv(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.inner.recv()
    }
}

/// The rendezvous server on the hub, driven by hand.
struct Rendezvous {
    server: RendezvousServer,
    ep: HubEndpoint,
}

impl Rendezvous {
    fn pump(&mut self, now: f64) {
        while let Some((from, bytes)) = self.ep.recv() {
            self.server.receive(now, from, &bytes);
        }
        for (to, bytes) in self.server.drain_outgoing() {
            self.ep.send(to, &bytes);
        }
    }
}

fn lines_from(g: &Game, who: &str) -> Vec<String> {
    let prefix = format!("{who}: ");
    g.presentation()
        .messages()
        .iter()
        .filter_map(|m| m.strip_prefix(&prefix).map(str::to_owned))
        .collect()
}

#[test]
fn a_player_no_punch_reaches_plays_through_the_relay_and_goes_direct_losing_no_message() {
    let hub = lanyard_net::Hub::new();
    let closed = Rc::new(Cell::new(true));
    let dropped = Rc::new(Cell::new(0));
    let nat = |at: &str| Nat {
        inner: hub.endpoint(addr(at)),
        closed: closed.clone(),
        dropped: dropped.clone(),
    };
    let mut rv = Rendezvous {
        server: RendezvousServer::new(RendezvousConfig::default(), [3; 32]).unwrap(),
        ep: hub.endpoint(addr(RV)),
    };
    let mut options = local_options("yard");
    options.rendezvous = Some(addr(RV).into());
    let mut host = Game::server_on(options, Some("hostess".into()), nat(HOST)).unwrap();
    let dt = 1.0 / TICK_HZ;
    let clock = Cell::new(0.0);
    let step = |host: &mut Game, player: Option<&mut Game>, rv: &mut Rendezvous| {
        let now = clock.get() + f64::from(dt);
        clock.set(now);
        host.tick(dt);
        if let Some(p) = player {
            p.tick(dt);
        }
        rv.pump(now);
        now
    };
    for _ in 0..60 {
        step(&mut host, None, &mut rv);
    }
    assert_eq!(rv.server.stats().games, 1, "the host registered");

    // The player asks for the game by name; no punch gets through.
    let mut socket = nat(PLAYER);
    let mut joiner = Joiner::new(addr(RV), "yard", 77);
    let start = clock.get();
    let path = loop {
        let t = step(&mut host, None, &mut rv);
        joiner.poll(t);
        for (to, bytes) in joiner.drain_outgoing() {
            socket.send(to, &bytes);
        }
        while let Some((from, bytes)) = socket.recv() {
            joiner.receive(t, from, &bytes);
        }
        if let Some(outcome) = joiner.outcome() {
            break outcome.unwrap();
        }
        assert!(t - start < 10.0, "no path");
    };
    assert!(dropped.get() > 0, "the punches were dropped");
    assert_eq!(path.peer, addr(HOST));
    assert_eq!(path.relay.map(|r| r.0), Some(addr(RV)));
    let took = clock.get() - start;
    assert!(took <= 5.0, "relayed {took:.1} s after the join");

    let mut player = Game::client_on_path(local_options("ada"), socket, path, [5; 32]).unwrap();
    let mut sent_by_host = Vec::new();
    let mut sent_by_player = Vec::new();
    let mut n = 0;
    let mut relayed_before_opening = 0;
    for i in 0..(12.0 * TICK_HZ) as usize {
        let seconds = i as f32 * dt;
        // Four seconds relayed, then the NATs let direct datagrams through.
        if seconds >= 4.0 && closed.get() {
            assert!(player.is_joined(), "joined through the relay");
            assert!(player.relayed(), "the player's link is relayed");
            assert!(host.relayed_to(addr(PLAYER)));
            relayed_before_opening = rv.server.stats().relayed_datagrams;
            closed.set(false);
        }
        if player.is_joined() && i % 15 == 0 && seconds < 11.0 {
            let line = format!("line {n}");
            host.chat(&line);
            sent_by_host.push(line);
            if n % 8 == 0 {
                let line = format!("mine {n}");
                player.chat(&line);
                sent_by_player.push(line);
            }
            n += 1;
        }
        step(&mut host, Some(&mut player), &mut rv);
    }
    assert!(relayed_before_opening > 100, "{:?}", rv.server.stats());
    assert!(!player.relayed(), "the player went direct");
    assert!(!host.relayed_to(addr(PLAYER)), "the host went direct");
    let relayed = rv.server.stats().relayed_datagrams;
    for _ in 0..60 {
        step(&mut host, Some(&mut player), &mut rv);
    }
    assert_eq!(
        rv.server.stats().relayed_datagrams,
        relayed,
        "nothing relayed once direct"
    );
    assert!(sent_by_host.len() > 20);
    assert_eq!(lines_from(&player, "hostess"), sent_by_host);
    assert_eq!(lines_from(&host, "ada"), sent_by_player);
    assert_eq!(player.sessions_lost(), 0);
}
