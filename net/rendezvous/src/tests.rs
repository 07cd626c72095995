//! The rendezvous protocol, sans-IO: every side driven by hand with a virtual clock.

use super::*;
use lanyard_net::PROTOCOL_VERSION;
use proptest::prelude::*;

pub(super) const RV: &str = "203.0.113.1:47820";
pub(super) const HOST: &str = "203.0.113.2:47810";
pub(super) const PLAYER: &str = "198.51.100.7:40000";

pub(super) fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

pub(super) fn info(name: &str, password: bool) -> ServerInfo {
    ServerInfo {
        name: name.into(),
        players: 1,
        max_players: 8,
        spectators: 0,
        max_spectators: 8,
        password,
        version: PROTOCOL_VERSION,
        game_port: 47810,
        web_port: None,
    }
}

fn server(ttl: f32) -> RendezvousServer {
    RendezvousServer::new(
        RendezvousConfig {
            ttl,
            ..RendezvousConfig::default()
        },
        [9; 32],
    )
    .unwrap()
}

/// A tiny network with no NAT: every side has one address.
struct World {
    now: f64,
    rv: RendezvousServer,
    host: Registrar,
    info: ServerInfo,
    /// Whether the host is running (polls and answers).
    host_up: bool,
}

impl World {
    fn new(ttl: f32) -> World {
        World {
            now: 0.0,
            rv: server(ttl),
            host: Registrar::new(addr(RV), [1; 16]),
            info: info("yard", true),
            host_up: true,
        }
    }

    fn exchange(&mut self, sides: &mut [(SocketAddr, &mut dyn Side)]) {
        if self.host_up {
            self.host.poll(self.now, &self.info);
        }
        for (_, s) in sides.iter_mut() {
            s.poll(self.now);
        }
        for _ in 0..10 {
            let mut flight: Vec<(SocketAddr, SocketAddr, Vec<u8>)> = Vec::new();
            flight.extend(
                self.rv
                    .drain_outgoing()
                    .into_iter()
                    .map(|(to, b)| (addr(RV), to, b)),
            );
            if self.host_up {
                flight.extend(
                    self.host
                        .drain_outgoing()
                        .into_iter()
                        .map(|(to, b)| (addr(HOST), to, b)),
                );
            }
            for (a, s) in sides.iter_mut() {
                flight.extend(s.drain().into_iter().map(|(to, b)| (*a, to, b)));
            }
            if flight.is_empty() {
                break;
            }
            for (from, to, bytes) in flight {
                if to == addr(RV) {
                    self.rv.receive(self.now, from, &bytes);
                } else if to == addr(HOST) {
                    if self.host_up {
                        assert!(self.host.receive(self.now, from, &bytes));
                    }
                } else if let Some((_, s)) = sides.iter_mut().find(|(a, _)| *a == to) {
                    s.take(self.now, from, &bytes);
                }
            }
            if self.host_up {
                self.host.poll(self.now, &self.info);
            }
            for (_, s) in sides.iter_mut() {
                s.poll(self.now);
            }
        }
    }
}

/// An [`Exchange`] with its outcome type erased, so a joiner and a lister share a world.
pub(super) trait Side {
    fn poll(&mut self, now: f64);
    fn drain(&mut self) -> Vec<(SocketAddr, Vec<u8>)>;
    fn take(&mut self, now: f64, from: SocketAddr, bytes: &[u8]);
}

impl<E: Exchange> Side for E {
    fn poll(&mut self, now: f64) {
        Exchange::poll(self, now);
    }
    fn drain(&mut self) -> Vec<(SocketAddr, Vec<u8>)> {
        self.drain_outgoing()
    }
    fn take(&mut self, now: f64, from: SocketAddr, bytes: &[u8]) {
        assert!(self.receive(now, from, bytes));
    }
}

fn run_until_registered(w: &mut World) {
    for _ in 0..5 {
        w.exchange(&mut []);
        if w.host.public().is_some() {
            return;
        }
        w.now += 0.1;
    }
    panic!("the host never registered");
}

fn listing(w: &mut World, from: &str) -> Vec<ServerInfo> {
    let mut l = Lister::new(addr(RV));
    for _ in 0..10 {
        w.exchange(&mut [(addr(from), &mut l)]);
        if let Some(r) = l.outcome() {
            return r.unwrap();
        }
        w.now += 0.1;
    }
    panic!("the listing never came: {:?}", w.rv.stats());
}

#[test]
fn messages_round_trip_and_requests_are_padded() {
    let all = [
        Message::Hello,
        Message::Challenge {
            cookie: [3; 16],
            you: addr(PLAYER),
        },
        Message::Register {
            cookie: [1; 16],
            owner: [2; 16],
            info: info("yard", false),
        },
        Message::Registered {
            name: "yard".into(),
            ttl_ms: 30_000,
            public: addr(HOST),
            proof: [4; 16],
        },
        Message::List {
            cookie: [1; 16],
            page: 2,
        },
        Message::Games {
            page: 0,
            pages: 1,
            games: vec![info("a", true), info("b", false)],
        },
        Message::Join {
            cookie: [1; 16],
            name: "yard".into(),
            nonce: 7,
        },
        Message::Peer {
            name: "yard".into(),
            addr: addr(HOST),
            also: Some(addr("[2001:db8::2]:47810")),
            nonce: 7,
        },
        Message::Introduce {
            name: "yard".into(),
            addr: addr(PLAYER),
            nonce: 7,
            proof: [5; 16],
        },
        Message::Refused {
            about: "yard".into(),
            reason: Refusal::TooMany { max: 4 },
        },
        Message::Punch { nonce: 7 },
        Message::Unregister {
            cookie: [1; 16],
            owner: [2; 16],
            name: "yard".into(),
        },
    ];
    for m in all {
        let bytes = encode(&m).unwrap();
        assert!(is_rendezvous(&bytes));
        assert_eq!(decode(&bytes).unwrap(), m);
        if m.is_request() {
            assert!(bytes.len() >= REQUEST_LEN, "{m:?} is {} bytes", bytes.len());
        }
    }
    assert!(decode(b"LYRV").is_err());
    assert!(decode(b"nope, not this").is_err());
    let mut trailing = encode(&Message::Punch { nonce: 1 }).unwrap();
    trailing.push(1);
    assert!(decode(&trailing).is_err(), "non-zero trailing bytes");
    assert!(!is_rendezvous(b"LY\x04\x00"), "a game datagram is not one");
}

#[test]
fn a_host_registers_a_browser_lists_it_and_a_player_is_introduced_and_punches_through() {
    let mut w = World::new(30.0);
    run_until_registered(&mut w);
    assert_eq!(
        w.host.events(),
        vec![RegistrarEvent::Registered { public: addr(HOST) }]
    );
    let games = listing(&mut w, "198.51.100.9:5000");
    assert_eq!(games.len(), 1);
    assert_eq!(games[0].name, "yard");
    assert!(
        games[0].password,
        "a listing says a game asks for a password"
    );
    assert_eq!(games[0].game_port, 0, "a listing gives no address");

    let mut j = Joiner::new(addr(RV), "yard", 42);
    for _ in 0..20 {
        w.exchange(&mut [(addr(PLAYER), &mut j)]);
        if j.outcome().is_some() {
            break;
        }
        w.now += 0.05;
    }
    assert_eq!(
        j.outcome(),
        Some(Ok(Path {
            peer: addr(HOST),
            nonce: 42,
            relay: None
        }))
    );
    assert_eq!(
        w.host.events(),
        vec![
            RegistrarEvent::Introduced { peer: addr(PLAYER) },
            RegistrarEvent::Opened { peer: addr(PLAYER) }
        ]
    );
    let s = w.rv.stats();
    assert_eq!((s.registrations, s.introductions, s.games), (1, 1, 1));
    // The host stops punching soon after the path opened.
    w.now += 1.0;
    w.exchange(&mut []);
    assert_eq!(w.host.punching(), 0);
}

#[test]
fn a_registration_nobody_refreshes_expires_and_a_refreshed_one_lives_on() {
    let mut w = World::new(5.0);
    run_until_registered(&mut w);
    // Refreshed every third of the time to live, it outlives it many times over.
    for _ in 0..200 {
        w.exchange(&mut []);
        w.now += 0.1;
    }
    assert_eq!(listing(&mut w, PLAYER).len(), 1);
    assert!(w.rv.stats().refreshes >= 5);
    // The host goes away without a word: the registration outlives it by its ttl.
    w.host_up = false;
    w.now += 2.0;
    assert_eq!(listing(&mut w, PLAYER).len(), 1, "not yet expired");
    w.now += 4.0;
    assert_eq!(listing(&mut w, PLAYER), vec![], "expired");
    assert_eq!(w.rv.stats().expired, 1);
    // A player asking for it now hears there is no such game.
    let mut j = Joiner::new(addr(RV), "yard", 1);
    for _ in 0..5 {
        w.exchange(&mut [(addr(PLAYER), &mut j)]);
        w.now += 0.1;
    }
    let err = j.outcome().unwrap().unwrap_err();
    assert_eq!(
        err,
        RendezvousError::Refused {
            addr: addr(RV),
            reason: Refusal::NoSuchGame
        }
    );
    assert!(
        err.to_string()
            .contains("no game is registered under that name")
    );
}

#[test]
fn unregistering_drops_the_game_at_once() {
    let mut w = World::new(30.0);
    run_until_registered(&mut w);
    w.host.unregister();
    w.host_up = false;
    let out = w.host.drain_outgoing();
    for (to, bytes) in out {
        assert_eq!(to, addr(RV));
        w.rv.receive(w.now, addr(HOST), &bytes);
    }
    assert_eq!(w.rv.stats().unregistered, 1);
    assert_eq!(listing(&mut w, PLAYER), vec![]);
}

/// Registers `name` from `from` with `owner`, with a fresh cookie; returns the answer.
fn register(rv: &mut RendezvousServer, now: f64, from: &str, owner: u8, name: &str) -> Message {
    rv.receive(now, addr(from), &encode(&Message::Hello).unwrap());
    let Some((_, bytes)) = rv.drain_outgoing().pop() else {
        panic!("no challenge");
    };
    let Message::Challenge { cookie, you } = decode(&bytes).unwrap() else {
        panic!("not a challenge");
    };
    assert_eq!(you, addr(from));
    let msg = Message::Register {
        cookie,
        owner: [owner; 16],
        info: info(name, false),
    };
    rv.receive(now, addr(from), &encode(&msg).unwrap());
    decode(&rv.drain_outgoing().pop().expect("an answer").1).unwrap()
}

#[test]
fn names_belong_to_their_owner_and_one_address_registers_only_a_few() {
    let mut rv = server(30.0);
    assert!(matches!(
        register(&mut rv, 0.0, HOST, 1, "yard"),
        Message::Registered { .. }
    ));
    assert_eq!(
        register(&mut rv, 0.0, PLAYER, 2, "yard"),
        Message::Refused {
            about: "yard".into(),
            reason: Refusal::NameTaken
        },
        "another owner cannot take a live name"
    );
    // The owner moves (its NAT gave it a new port): the registration follows it.
    assert!(matches!(
        register(&mut rv, 1.0, "203.0.113.2:50000", 1, "yard"),
        Message::Registered { .. }
    ));
    assert_eq!(rv.games(1.0)[0].addr, addr("203.0.113.2:50000"));
    assert_eq!(rv.stats().refreshes, 1);
    for n in 1..4 {
        assert!(matches!(
            register(
                &mut rv,
                1.0,
                &format!("203.0.113.2:{}", 50000 + n),
                10 + n as u8,
                &format!("yard {n}")
            ),
            Message::Registered { .. }
        ));
    }
    assert_eq!(
        register(&mut rv, 1.0, "203.0.113.2:51000", 99, "one too many"),
        Message::Refused {
            about: "one too many".into(),
            reason: Refusal::TooMany { max: 4 }
        }
    );
    assert_eq!(
        register(&mut rv, 1.0, PLAYER, 3, "bad\nname"),
        Message::Refused {
            about: "bad\nname".into(),
            reason: Refusal::BadName
        }
    );
}

#[test]
fn before_a_cookie_an_address_gets_nothing_larger_than_it_sent_and_no_one_else_hears() {
    let mut rv = server(300.0);
    register(&mut rv, 0.0, HOST, 1, "yard");
    let victim = addr("192.0.2.50:9999");
    let spoofed = [
        Message::Hello,
        Message::Register {
            cookie: [0; 16],
            owner: [5; 16],
            info: info(&"x".repeat(32), true),
        },
        Message::List {
            cookie: [7; 16],
            page: 0,
        },
        Message::Join {
            cookie: [7; 16],
            name: "yard".into(),
            nonce: 1,
        },
        Message::Unregister {
            cookie: [0; 16],
            owner: [1; 16],
            name: "yard".into(),
        },
    ];
    for m in spoofed {
        let bytes = encode(&m).unwrap();
        rv.receive(1.0, victim, &bytes);
        let out = rv.drain_outgoing();
        assert_eq!(out.len(), 1, "{m:?}");
        assert_eq!(out[0].0, victim, "{m:?}: only the sender hears");
        assert!(
            out[0].1.len() <= bytes.len(),
            "{m:?}: {} bytes out for {} in",
            out[0].1.len(),
            bytes.len()
        );
        assert!(matches!(
            decode(&out[0].1).unwrap(),
            Message::Challenge { .. }
        ));
    }
    // Shorter than a padded request, or not ours at all: no answer.
    let mut short = encode(&Message::Hello).unwrap();
    short.truncate(REQUEST_LEN - 1);
    rv.receive(1.0, victim, &short);
    rv.receive(1.0, victim, &[0u8; 600]);
    assert!(rv.drain_outgoing().is_empty());
    assert_eq!(rv.games(1.0).len(), 1, "nothing registered or dropped");
    assert_eq!(rv.stats().introductions, 0, "no host was sent anything");
    // A cookie from another address, or from two epochs ago, is no cookie.
    let Message::Challenge { cookie, .. } = ({
        rv.receive(1.0, addr(PLAYER), &encode(&Message::Hello).unwrap());
        decode(&rv.drain_outgoing()[0].1).unwrap()
    }) else {
        panic!()
    };
    let join = encode(&Message::Join {
        cookie,
        name: "yard".into(),
        nonce: 1,
    })
    .unwrap();
    rv.receive(1.0, victim, &join);
    rv.receive(100.0, addr(PLAYER), &join);
    assert!(
        rv.drain_outgoing()
            .iter()
            .all(|(_, b)| matches!(decode(b), Ok(Message::Challenge { .. })))
    );
    rv.receive(31.0, addr(PLAYER), &join);
    assert_eq!(rv.stats().introductions, 1, "the epoch before still counts");
}

#[test]
fn one_address_may_ask_to_join_only_so_often() {
    let mut rv = server(30.0);
    register(&mut rv, 0.0, HOST, 1, "yard");
    rv.receive(0.0, addr(PLAYER), &encode(&Message::Hello).unwrap());
    let Message::Challenge { cookie, .. } = decode(&rv.drain_outgoing()[0].1).unwrap() else {
        panic!()
    };
    let join = |nonce| {
        encode(&Message::Join {
            cookie,
            name: "yard".into(),
            nonce,
        })
        .unwrap()
    };
    for n in 0..JOIN_BURST as u64 {
        rv.receive(1.0, addr(PLAYER), &join(n));
    }
    rv.drain_outgoing();
    assert_eq!(rv.stats().introductions, JOIN_BURST as u64);
    rv.receive(1.0, addr(PLAYER), &join(99));
    let out = rv.drain_outgoing();
    assert_eq!(out.len(), 1, "the host hears nothing more");
    assert!(matches!(
        decode(&out[0].1).unwrap(),
        Message::Refused {
            reason: Refusal::Busy,
            ..
        }
    ));
    rv.receive(1.0 + JOIN_WINDOW, addr(PLAYER), &join(100));
    assert_eq!(
        rv.stats().introductions,
        JOIN_BURST as u64 + 1,
        "later it may"
    );
}

#[test]
fn a_player_hears_clearly_when_the_rendezvous_is_silent_or_the_punch_finds_no_path() {
    // Nobody answers at all.
    let mut j = Joiner::new(addr(RV), "yard", 1);
    let mut t = 0.0;
    while j.outcome().is_none() && t < 60.0 {
        Exchange::poll(&mut j, t);
        t += 0.1;
    }
    assert_eq!(
        j.outcome(),
        Some(Err(RendezvousError::Silent { addr: addr(RV) }))
    );
    assert!(t <= JOIN_TIMEOUT + 0.2);

    // The host was introduced, but none of its punches arrive (a symmetric NAT).
    let mut w = World::new(30.0);
    run_until_registered(&mut w);
    let mut j = Joiner::new(addr(RV), "yard", 2);
    w.host_up = false;
    w.exchange(&mut [(addr(PLAYER), &mut j)]);
    assert_eq!(j.peer(), Some(addr(HOST)));
    let start = w.now;
    while j.outcome().is_none() {
        w.now += 0.1;
        w.exchange(&mut [(addr(PLAYER), &mut j)]);
    }
    let err = j.outcome().unwrap().unwrap_err();
    assert!(
        matches!(err, RendezvousError::PunchFailed { .. }),
        "{err:?}"
    );
    assert!(w.now - start <= PUNCH_TIMEOUT + 0.2);
    let text = err.to_string();
    assert!(
        text.contains("'yard'") && text.contains("symmetric NAT"),
        "{text}"
    );
}

#[test]
fn a_host_punches_only_where_its_rendezvous_server_says_and_answers_only_those() {
    let mut host = Registrar::new(addr(RV), [1; 16]);
    let stranger = addr("192.0.2.66:4000");
    let victim = addr("192.0.2.50:9999");
    let intro = |proof| {
        encode(&Message::Introduce {
            name: "yard".into(),
            addr: victim,
            nonce: 5,
            proof,
        })
        .unwrap()
    };
    let right = introduce_proof(&[1; 16], "yard", victim, 5);
    // From a stranger, even with the right proof; from the rendezvous server's address
    // (spoofed), with any other proof.
    assert!(host.receive(0.0, stranger, &intro(right)));
    assert!(host.receive(0.0, addr(RV), &intro([0; 16])));
    assert!(host.receive(
        0.0,
        addr(RV),
        &intro(introduce_proof(&[2; 16], "yard", victim, 5))
    ));
    let forged = Message::Registered {
        name: "yard".into(),
        ttl_ms: u32::MAX,
        public: victim,
        proof: [0; 16],
    };
    assert!(host.receive(0.0, addr(RV), &encode(&forged).unwrap()));
    assert_eq!(host.public(), None, "a forged registration is not believed");
    assert!(host.receive(
        0.0,
        stranger,
        &encode(&Message::Punch { nonce: 5 }).unwrap()
    ));
    host.poll(0.0, &info("yard", false));
    let out = host.drain_outgoing();
    assert!(
        out.iter().all(|(to, _)| *to == addr(RV)),
        "only the registration goes out: {out:?}"
    );
    assert_eq!(host.punching(), 0);
    assert!(host.events().is_empty());
    assert!(!host.receive(0.0, stranger, b"LY\x04\x00 a game datagram"));
    // The real introduction is believed.
    assert!(host.receive(0.0, addr(RV), &intro(right)));
    assert_eq!(host.punching(), 1);
    host.poll(0.0, &info("yard", false));
    assert!(host.drain_outgoing().iter().any(|(to, _)| *to == victim));
}

#[test]
fn a_listing_longer_than_a_datagram_comes_in_pages() {
    let mut rv = RendezvousServer::new(
        RendezvousConfig {
            max_per_address: 200,
            ..RendezvousConfig::default()
        },
        [1; 32],
    )
    .unwrap();
    for i in 0..60u8 {
        let name = format!("{i:02} {}", "é".repeat(14));
        assert!(matches!(
            register(
                &mut rv,
                0.0,
                &format!("203.0.113.{}:4000", i % 200 + 1),
                i,
                &name
            ),
            Message::Registered { .. }
        ));
    }
    let mut w = World::new(30.0);
    w.rv = rv;
    w.host_up = false;
    let games = listing(&mut w, PLAYER);
    assert_eq!(games.len(), 60);
    assert!(w.rv.stats().lists >= 3, "{} pages", w.rv.stats().lists);
    for (_, b) in w.rv.drain_outgoing() {
        assert!(b.len() <= lanyard_net::MAX_DATAGRAM);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Whatever a stranger sends, the decoder returns, the server never panics, and it
    /// sends no more bytes than it got, to the sender alone.
    #[test]
    fn arbitrary_datagrams_never_amplify(
        bytes in proptest::collection::vec(any::<u8>(), 0..1300),
        header in any::<bool>(),
        kind in 0u8..16,
    ) {
        let mut bytes = bytes;
        if header {
            // Give the bytes a valid header and a plausible enum tag, so the decoder
            // gets past the cheap checks.
            let mut b = MAGIC.to_vec();
            b.push(VERSION);
            b.push(kind);
            b.extend_from_slice(&bytes);
            bytes = b;
        }
        let _ = decode(&bytes);
        let mut rv = server(30.0);
        register(&mut rv, 0.0, HOST, 1, "yard");
        let from = addr("192.0.2.50:9999");
        rv.receive(1.0, from, &bytes);
        let out = rv.drain_outgoing();
        let sent: usize = out.iter().map(|(_, b)| b.len()).sum();
        prop_assert!(out.iter().all(|(to, _)| *to == from));
        prop_assert!(sent <= bytes.len());
        prop_assert_eq!(rv.stats().introductions, 0);
    }

    /// Valid messages with their fields mutated decode to a message or an error.
    #[test]
    fn mutated_messages_decode_or_fail_cleanly(
        name in ".{0,40}",
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
    ) {
        let m = Message::Register { cookie: [1; 16], owner: [2; 16], info: info(&name, true) };
        let mut bytes = encode(&m).unwrap();
        for (at, x) in flips {
            let n = bytes.len();
            bytes[at % n] ^= x;
        }
        let _ = decode(&bytes);
        let mut rv = server(30.0);
        rv.receive(0.0, addr(PLAYER), &bytes);
        prop_assert!(rv.drain_outgoing().iter().map(|(_, b)| b.len()).sum::<usize>() <= bytes.len());
    }
}
