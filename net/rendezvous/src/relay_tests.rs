//! The relay, sans-IO: a rendezvous server, a host and a player driven by hand with a
//! virtual clock, over a network that may let no direct datagram through (symmetric NATs).

use super::relay::{Received, Routes, is_relayed, unwrap, wrap};
use super::tests::{HOST, PLAYER, RV, addr};
use super::*;

const STRANGER: &str = "192.0.2.66:4000";

/// The game every test registers: "yard", no password.
fn info() -> ServerInfo {
    super::tests::info("yard", false)
}

fn server(config: RendezvousConfig) -> RendezvousServer {
    RendezvousServer::new(config, [9; 32]).unwrap()
}

/// Asks `rv` for a cookie from `from` and returns it.
fn cookie(rv: &mut RendezvousServer, now: f64, from: &str) -> Cookie {
    rv.receive(now, addr(from), &encode(&Message::Hello).unwrap());
    match rv.drain_outgoing().pop().map(|(_, b)| decode(&b)) {
        Some(Ok(Message::Challenge { cookie, .. })) => cookie,
        other => panic!("no challenge: {other:?}"),
    }
}

/// A server with "yard" registered from HOST (owner secret [1; 16]) and PLAYER introduced
/// to it with nonce 7: returns the server and both cookies.
fn introduced(config: RendezvousConfig) -> (RendezvousServer, Cookie, Cookie) {
    let mut rv = server(config);
    let host = cookie(&mut rv, 0.0, HOST);
    let reg = Message::Register {
        cookie: host,
        owner: [1; 16],
        info: info(),
    };
    rv.receive(0.0, addr(HOST), &encode(&reg).unwrap());
    let player = cookie(&mut rv, 0.0, PLAYER);
    let join = Message::Join {
        cookie: player,
        name: "yard".into(),
        nonce: 7,
    };
    rv.receive(0.0, addr(PLAYER), &encode(&join).unwrap());
    rv.drain_outgoing();
    (rv, host, player)
}

fn ask(rv: &mut RendezvousServer, now: f64, from: &str, cookie: Cookie) {
    let msg = Message::Relay {
        cookie,
        name: "yard".into(),
        nonce: 7,
    };
    rv.receive(now, addr(from), &encode(&msg).unwrap());
}

/// Both sides ask; returns the session's token (checking what each side was told).
fn open(rv: &mut RendezvousServer, (host, player): (Cookie, Cookie)) -> u64 {
    ask(rv, 1.0, PLAYER, player);
    assert!(rv.drain_outgoing().is_empty(), "no session until both ask");
    ask(rv, 1.0, HOST, host);
    let out = rv.drain_outgoing();
    assert_eq!(out.len(), 2, "{out:?}");
    let mut token = None;
    for (to, bytes) in out {
        let Ok(Message::Relaying {
            name,
            nonce,
            token: t,
            peer,
            proof,
        }) = decode(&bytes)
        else {
            panic!("not a relaying message");
        };
        assert_eq!((name.as_str(), nonce), ("yard", 7));
        if to == addr(HOST) {
            assert_eq!(peer, addr(PLAYER));
            assert_eq!(proof, relaying_proof(&[1; 16], "yard", peer, 7, t));
        } else {
            assert_eq!((to, peer), (addr(PLAYER), addr(HOST)));
        }
        assert!(token.is_none_or(|x| x == t));
        token = Some(t);
    }
    token.unwrap()
}

#[test]
fn the_relay_forwards_only_between_the_two_addresses_it_introduced_and_never_more_than_it_got() {
    let (mut rv, host, player) = introduced(RendezvousConfig::default());
    let payload = b"a sealed game datagram".to_vec();

    // Before any session: a relayed datagram goes nowhere and leaves nothing behind.
    rv.receive(0.5, addr(PLAYER), &wrap(1234, &payload));
    assert!(rv.drain_outgoing().is_empty());
    assert_eq!(rv.stats().relay_strangers, 1);

    // A relay request without a cookie only gets a challenge, and opens nothing.
    let stale = Message::Relay {
        cookie: [0; COOKIE_LEN],
        name: "yard".into(),
        nonce: 7,
    };
    rv.receive(0.5, addr(PLAYER), &encode(&stale).unwrap());
    let out = rv.drain_outgoing();
    assert!(matches!(decode(&out[0].1), Ok(Message::Challenge { .. })));
    // A stranger with a cookie of its own cannot ask for someone else's session: counted,
    // not answered (a host would read a refusal as its registration refused).
    let theirs = cookie(&mut rv, 0.5, STRANGER);
    let refused = rv.stats().refused;
    ask(&mut rv, 0.5, STRANGER, theirs);
    assert!(rv.drain_outgoing().is_empty());
    assert_eq!(rv.stats().refused, refused + 1);

    let token = open(&mut rv, (host, player));
    assert_eq!(rv.stats().relay_sessions, 1);
    for (from, to) in [(PLAYER, HOST), (HOST, PLAYER)] {
        let datagram = wrap(token, &payload);
        rv.receive(2.0, addr(from), &datagram);
        let out = rv.drain_outgoing();
        assert_eq!(out, vec![(addr(to), datagram)], "forwarded unchanged");
    }
    // The right token from any other address, or a made-up token: dropped, counted.
    rv.receive(2.0, addr(STRANGER), &wrap(token, &payload));
    rv.receive(2.0, addr(PLAYER), &wrap(token ^ 1, &payload));
    assert!(rv.drain_outgoing().is_empty());
    let s = rv.stats();
    assert_eq!(s.relay_strangers, 3);
    assert_eq!(s.relayed_datagrams, 2);
    assert_eq!(s.relayed_bytes, 2 * (payload.len() as u64 + 12));
    assert!(
        s.bytes_out <= s.bytes_in,
        "no amplification: {} out for {} in",
        s.bytes_out,
        s.bytes_in
    );

    // An idle session ends.
    rv.expire(2.0 + relay::RELAY_IDLE + 1.0);
    assert_eq!(rv.stats().relay_sessions, 0);
    rv.receive(40.0, addr(PLAYER), &wrap(token, &payload));
    assert!(rv.drain_outgoing().is_empty());
}

#[test]
fn a_session_that_sends_more_than_its_share_is_capped_and_so_is_the_relay_in_all() {
    let config = RendezvousConfig {
        relay_rate: 4000,
        relay_total: 6000,
        ..RendezvousConfig::default()
    };
    let (mut rv, host, player) = introduced(config);
    let token = open(&mut rv, (host, player));
    let datagram = wrap(token, &[0; 988]); // 1000 bytes
    // Two seconds of 20 datagrams a second (20 kB/s) from the player: the session carries
    // its 4000 bytes a second (and a second's worth saved up at the start).
    let mut forwarded = 0;
    for i in 0..40 {
        rv.receive(2.0 + f64::from(i) * 0.05, addr(PLAYER), &datagram);
        forwarded += rv.drain_outgoing().len();
    }
    let s = rv.stats();
    assert!((8..=12).contains(&forwarded), "{forwarded} of 40 forwarded");
    assert_eq!(s.relay_over_cap, 40 - forwarded as u64);

    // A second session: the two together are held to the relay's 6000 bytes a second.
    let mut rv2 = {
        let (mut rv, host, player) = introduced(RendezvousConfig {
            relay_rate: 4000,
            relay_total: 6000,
            ..RendezvousConfig::default()
        });
        let c = cookie(&mut rv, 0.0, "198.51.100.8:40000");
        let join = Message::Join {
            cookie: c,
            name: "yard".into(),
            nonce: 8,
        };
        rv.receive(0.0, addr("198.51.100.8:40000"), &encode(&join).unwrap());
        rv.drain_outgoing();
        let t1 = open(&mut rv, (host, player));
        let msg = |cookie| Message::Relay {
            cookie,
            name: "yard".into(),
            nonce: 8,
        };
        rv.receive(1.0, addr("198.51.100.8:40000"), &encode(&msg(c)).unwrap());
        rv.receive(1.0, addr(HOST), &encode(&msg(host)).unwrap());
        let t2 = rv
            .drain_outgoing()
            .iter()
            .find_map(|(_, b)| match decode(b) {
                Ok(Message::Relaying { token, .. }) => Some(token),
                _ => None,
            })
            .unwrap();
        (rv, t1, t2)
    };
    let mut both = 0;
    for i in 0..40 {
        let t = 2.0 + f64::from(i) * 0.05;
        rv2.0.receive(t, addr(PLAYER), &wrap(rv2.1, &[0; 988]));
        rv2.0
            .receive(t, addr("198.51.100.8:40000"), &wrap(rv2.2, &[0; 988]));
        both += rv2.0.drain_outgoing().len();
    }
    assert!((12..=18).contains(&both), "{both} of 80 forwarded");
    rv2.0.drain_outgoing();
}

/// A host (registrar and routes), a player (joiner, then routes) and the rendezvous
/// server, on a network that drops every direct datagram between the two while
/// `direct` is off.
struct Net {
    now: f64,
    rv: RendezvousServer,
    host: Registrar,
    host_routes: Routes,
    player_routes: Routes,
    direct: bool,
    /// Game datagrams each side got, with whom from.
    host_got: Vec<(SocketAddr, Vec<u8>)>,
    player_got: Vec<(SocketAddr, Vec<u8>)>,
    /// Direct datagrams dropped.
    dropped: usize,
}

impl Net {
    fn new() -> Net {
        Net {
            now: 0.0,
            rv: server(RendezvousConfig::default()),
            host: Registrar::new(addr(RV), [1; 16]),
            host_routes: Routes::new(),
            player_routes: Routes::new(),
            direct: false,
            host_got: Vec::new(),
            player_got: Vec::new(),
            dropped: 0,
        }
    }

    /// 0.1 s: every side polls, and what they send is delivered (or dropped).
    fn step(
        &mut self,
        joiner: Option<&mut Joiner>,
        game: &mut Vec<(SocketAddr, SocketAddr, Vec<u8>)>,
    ) {
        self.now += 0.1;
        let now = self.now;
        self.host.poll(now, &info());
        let mut joiner = joiner;
        if let Some(j) = joiner.as_deref_mut() {
            Exchange::poll(j, now);
        }
        let mut flight: Vec<(SocketAddr, SocketAddr, Vec<u8>)> = std::mem::take(game);
        for _ in 0..10 {
            flight.extend(
                self.host
                    .drain_outgoing()
                    .into_iter()
                    .map(|(t, b)| (addr(HOST), t, b)),
            );
            flight.extend(
                self.host_routes
                    .poll(now)
                    .into_iter()
                    .map(|(t, b)| (addr(HOST), t, b)),
            );
            flight.extend(
                self.player_routes
                    .poll(now)
                    .into_iter()
                    .map(|(t, b)| (addr(PLAYER), t, b)),
            );
            if let Some(j) = joiner.as_deref_mut() {
                flight.extend(
                    j.drain_outgoing()
                        .into_iter()
                        .map(|(t, b)| (addr(PLAYER), t, b)),
                );
            }
            flight.extend(
                self.rv
                    .drain_outgoing()
                    .into_iter()
                    .map(|(t, b)| (addr(RV), t, b)),
            );
            if flight.is_empty() {
                break;
            }
            for (from, to, bytes) in std::mem::take(&mut flight) {
                let direct = from != addr(RV) && to != addr(RV);
                if direct && !self.direct {
                    self.dropped += 1;
                    continue;
                }
                if to == addr(RV) {
                    self.rv.receive(now, from, &bytes);
                } else if to == addr(HOST) {
                    match self.host_routes.incoming(now, from, &bytes) {
                        Received::Game(from, b) if is_rendezvous(b) => {
                            self.host.receive(now, from, b);
                        }
                        Received::Game(from, b) => self.host_got.push((from, b.to_vec())),
                        Received::Taken => {}
                    }
                } else if to == addr(PLAYER) {
                    match self.player_routes.incoming(now, from, &bytes) {
                        Received::Game(from, b) if is_rendezvous(b) => {
                            if let Some(j) = joiner.as_deref_mut() {
                                j.receive(now, from, b);
                            }
                        }
                        Received::Game(from, b) => self.player_got.push((from, b.to_vec())),
                        Received::Taken => {}
                    }
                }
            }
        }
        for e in self.host.events() {
            if let RegistrarEvent::Relayed {
                peer,
                relay,
                token,
                nonce,
            } = e
            {
                assert_eq!(relay, addr(RV));
                self.host_routes.relay(now, peer, relay, token, nonce);
            }
        }
    }

    /// A game datagram from one side to the other, through its routes.
    fn send(&self, from_host: bool, n: u8) -> (SocketAddr, SocketAddr, Vec<u8>) {
        let (from, to, routes) = if from_host {
            (addr(HOST), addr(PLAYER), &self.host_routes)
        } else {
            (addr(PLAYER), addr(HOST), &self.player_routes)
        };
        let (via, bytes) = routes.outgoing(to, vec![b'L', b'Y', 9, n]);
        (from, via, bytes)
    }
}

#[test]
fn behind_nats_that_let_no_punch_through_the_peers_are_relayed_and_go_direct_once_a_path_opens() {
    let mut net = Net::new();
    let mut none = Vec::new();
    for _ in 0..5 {
        net.step(None, &mut none);
    }
    assert!(net.host.public().is_some(), "registered");
    let mut joiner = Joiner::new(addr(RV), "yard", 7);
    let start = net.now;
    while joiner.outcome().is_none() {
        net.step(Some(&mut joiner), &mut none);
        assert!(net.now - start < 10.0, "no outcome");
    }
    let path = joiner.outcome().unwrap().unwrap();
    assert!(net.dropped > 0, "the punches were dropped");
    assert_eq!(path.peer, addr(HOST));
    assert!(path.relay.is_some(), "{path:?}");
    assert!(
        net.now - start <= 5.0,
        "relayed {:.1} s after the join",
        net.now - start
    );
    net.player_routes = path.routes(net.now);
    // The host hears of it too.
    for _ in 0..3 {
        net.step(Some(&mut joiner), &mut none);
    }
    assert!(net.host_routes.relayed(addr(PLAYER)));
    assert!(net.player_routes.relayed(addr(HOST)));

    // Game datagrams both ways: through the relay, and seen as the peer's own.
    let mut sent = 0u8;
    for _ in 0..10 {
        let mut game = vec![net.send(false, sent), net.send(true, sent)];
        assert!(
            game.iter()
                .all(|(_, via, b)| *via == addr(RV) && is_relayed(b))
        );
        sent += 1;
        net.step(None, &mut game);
    }
    let relayed = net.rv.stats().relayed_datagrams;
    assert!(relayed >= 20, "{:?}", net.rv.stats());

    // A path opens (a router restarted in a kinder mode): the punches get through and
    // both sides go direct, and nothing of the game is lost on the way.
    net.direct = true;
    for _ in 0..30 {
        let mut game = vec![net.send(false, sent), net.send(true, sent)];
        sent += 1;
        net.step(None, &mut game);
    }
    assert!(!net.host_routes.relayed(addr(PLAYER)));
    assert!(!net.player_routes.relayed(addr(HOST)));
    let after = net.rv.stats().relayed_datagrams;
    for _ in 0..10 {
        let mut game = vec![net.send(false, sent), net.send(true, sent)];
        assert!(
            game.iter()
                .all(|(_, via, b)| *via != addr(RV) && !is_relayed(b))
        );
        sent += 1;
        net.step(None, &mut game);
    }
    assert_eq!(
        net.rv.stats().relayed_datagrams,
        after,
        "nothing relayed now"
    );
    for (got, from) in [(&net.host_got, PLAYER), (&net.player_got, HOST)] {
        let numbers: Vec<u8> = got
            .iter()
            .map(|(f, b)| {
                assert_eq!(*f, addr(from));
                b[3]
            })
            .collect();
        assert_eq!(
            numbers,
            (0..sent).collect::<Vec<_>>(),
            "every datagram, in order"
        );
    }
    assert!(unwrap(&wrap(5, b"x")).is_some_and(|(t, p)| t == 5 && p == b"x"));
}

#[test]
fn a_host_answers_a_player_s_punch_from_another_port_of_its_address_and_no_other() {
    let mut host = Registrar::new(addr(RV), [1; 16]);
    let player = addr(PLAYER);
    let intro = Message::Introduce {
        name: "yard".into(),
        addr: player,
        nonce: 5,
        proof: introduce_proof(&[1; 16], "yard", player, 5),
    };
    assert!(host.receive(0.0, addr(RV), &encode(&intro).unwrap()));
    host.poll(0.0, &info());
    host.drain_outgoing();
    // Behind a NAT that gives each destination a port of its own, the player's punch comes
    // from another port than the rendezvous server saw; a stranger's, from another address.
    let punch = encode(&Message::Punch { nonce: 5 }).unwrap();
    let stranger = addr("198.51.100.8:40001");
    assert!(host.receive(0.1, stranger, &punch));
    assert!(
        host.events()
            .iter()
            .all(|e| !matches!(e, RegistrarEvent::Opened { .. }))
    );
    let other_port = addr("198.51.100.7:51234");
    assert!(host.receive(0.1, other_port, &punch));
    assert_eq!(
        host.events(),
        vec![RegistrarEvent::Opened { peer: other_port }]
    );
    host.poll(0.2, &info());
    let out = host.drain_outgoing();
    assert!(
        out.iter().any(|(to, _)| *to == other_port) && out.iter().all(|(to, _)| *to != stranger),
        "{out:?}"
    );
}

#[test]
fn a_host_forgets_the_routes_of_players_that_left_but_not_of_one_still_joining() {
    let mut routes = Routes::new();
    routes.relay(0.0, addr(PLAYER), addr(RV), 1, 7);
    routes.relay(100.0, addr(STRANGER), addr(RV), 2, 8);
    // At 110 s: the first player left long ago; the second is still joining.
    routes.retain(110.0, |_| false);
    assert!(!routes.relayed(addr(PLAYER)));
    assert!(routes.relayed(addr(STRANGER)));
    // A player that still plays keeps its route however old.
    routes.retain(200.0, |p| p == addr(STRANGER));
    assert!(routes.relayed(addr(STRANGER)));
    routes.retain(200.0, |_| false);
    assert_eq!(routes.relayed_peers(), 0);
}
