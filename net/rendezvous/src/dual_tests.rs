//! Both families, sans-IO: a rendezvous server reached over IPv4 and IPv6, a host and a
//! player that each have an address in both. The host registers over each, the server
//! hands out both of its addresses, and the player punches the IPv6 one first.

use super::tests::{Side, addr, info};
use super::*;

const RV4: &str = "203.0.113.1:47820";
const RV6: &str = "[2001:db8::1]:47820";
const HOST4: &str = "203.0.113.2:47810";
const HOST6: &str = "[2001:db8::2]:47810";
const PLAYER4: &str = "198.51.100.7:40000";
const PLAYER6: &str = "[2001:db8:1::7]:40000";

/// Seconds a step of the world lasts.
const STEP: f64 = 0.05;

fn both(v6: &str, v4: &str) -> Addrs {
    Addrs::new([addr(v4), addr(v6)]).unwrap()
}

/// A sent datagram, with the step it was sent at.
#[derive(Debug, Clone)]
struct Sent {
    at: f64,
    from: SocketAddr,
    to: SocketAddr,
    bytes: Vec<u8>,
}

/// The world: one socket per side, whose source address is the one of the family it
/// sends to.
struct Dual {
    now: f64,
    rv: RendezvousServer,
    host: Registrar,
    /// Whether the host reaches the rendezvous server over IPv6.
    host_rv6: bool,
    /// Whether IPv6 datagrams pass between the host and the player.
    direct_v6: bool,
    /// Whether IPv4 datagrams pass between the host and the player.
    direct_v4: bool,
    /// Every datagram sent, delivered or not.
    log: Vec<Sent>,
}

impl Dual {
    fn new() -> Dual {
        Dual {
            now: 0.0,
            rv: RendezvousServer::new(RendezvousConfig::default(), [9; 32]).unwrap(),
            host: Registrar::new(both(RV6, RV4), [1; 16]),
            host_rv6: true,
            direct_v6: true,
            direct_v4: true,
            log: Vec::new(),
        }
    }

    /// The source address of a side that has `pair` (IPv4, IPv6) sending to `to`.
    fn source(pair: (&str, &str), to: SocketAddr) -> SocketAddr {
        addr(if to.is_ipv6() { pair.1 } else { pair.0 })
    }

    fn passes(&self, from: SocketAddr, to: SocketAddr) -> bool {
        let rv = [addr(RV4), addr(RV6)];
        let host = [addr(HOST4), addr(HOST6)];
        if [from, to].contains(&addr(RV6)) && [from, to].iter().any(|a| host.contains(a)) {
            return self.host_rv6;
        }
        if rv.contains(&from) || rv.contains(&to) {
            return true;
        }
        if to.is_ipv6() {
            self.direct_v6
        } else {
            self.direct_v4
        }
    }

    /// One step: every side polls, and what they send is delivered until nothing is left.
    fn step(&mut self, player: Option<&mut dyn Side>) {
        self.now += STEP;
        let now = self.now;
        let mut player = player;
        self.host.poll(now, &info("yard", false));
        if let Some(p) = player.as_deref_mut() {
            p.poll(now);
        }
        for _ in 0..10 {
            let mut flight = Vec::new();
            for (to, bytes) in self.rv.drain_outgoing() {
                let from = Self::source((RV4, RV6), to);
                flight.push((from, to, bytes));
            }
            for (to, bytes) in self.host.drain_outgoing() {
                flight.push((Self::source((HOST4, HOST6), to), to, bytes));
            }
            if let Some(p) = player.as_deref_mut() {
                for (to, bytes) in p.drain() {
                    flight.push((Self::source((PLAYER4, PLAYER6), to), to, bytes));
                }
            }
            if flight.is_empty() {
                break;
            }
            for (from, to, bytes) in flight {
                self.log.push(Sent {
                    at: now,
                    from,
                    to,
                    bytes: bytes.clone(),
                });
                if !self.passes(from, to) {
                    continue;
                }
                if to == addr(RV4) || to == addr(RV6) {
                    self.rv.receive(now, from, &bytes);
                } else if to == addr(HOST4) || to == addr(HOST6) {
                    assert!(self.host.receive(now, from, &bytes));
                } else if (to == addr(PLAYER4) || to == addr(PLAYER6))
                    && let Some(p) = player.as_deref_mut()
                {
                    p.take(now, from, &bytes);
                }
            }
        }
    }

    fn register(&mut self) {
        for _ in 0..20 {
            self.step(None);
        }
    }

    /// Steps until `player` has an outcome (at most 10 s).
    fn run<E: Exchange>(&mut self, player: &mut E) -> Result<E::Outcome, RendezvousError> {
        for _ in 0..200 {
            self.step(Some(player));
            if let Some(o) = player.outcome() {
                return o;
            }
        }
        panic!("no outcome in 10 s");
    }

    /// The punches sent from `from` to `to`, with when.
    fn punches(&self, from: &str, to: &str) -> Vec<f64> {
        self.log
            .iter()
            .filter(|s| s.from == addr(from) && s.to == addr(to))
            .filter(|s| matches!(decode(&s.bytes), Ok(Message::Punch { .. })))
            .map(|s| s.at)
            .collect()
    }
}

#[test]
fn a_host_registers_over_both_families_and_the_server_hands_out_both_addresses() {
    let mut w = Dual::new();
    w.register();
    let mut events = w.host.events();
    events.sort_by_key(|e| format!("{e:?}"));
    assert_eq!(
        events,
        vec![
            RegistrarEvent::Registered {
                public: addr(HOST4)
            },
            RegistrarEvent::Registered {
                public: addr(HOST6)
            },
        ]
    );
    assert_eq!(w.host.public(), Some(addr(HOST6)), "IPv6 first");
    assert_eq!(w.host.publics(), vec![addr(HOST6), addr(HOST4)]);
    let games = w.rv.games(w.now);
    assert_eq!(games.len(), 1, "one game, registered over two addresses");
    let mut addrs = [Some(games[0].addr), games[0].also];
    addrs.sort();
    assert_eq!(addrs, [Some(addr(HOST4)), Some(addr(HOST6))]);
    assert_eq!(
        w.rv.stats().registrations,
        1,
        "the second family refreshes it"
    );
}

#[test]
fn a_player_on_both_families_punches_ipv6_first_and_the_path_is_ipv6() {
    let mut w = Dual::new();
    w.register();
    w.host.events();
    let mut j = Joiner::new(both(RV6, RV4), "yard", 42);
    let path = w.run(&mut j).unwrap();
    assert_eq!(
        path,
        Path {
            peer: addr(HOST6),
            nonce: 42,
            relay: None
        }
    );
    assert_eq!(j.hosts(), &[addr(HOST6), addr(HOST4)], "both, IPv6 first");
    assert!(
        w.punches(PLAYER4, HOST4).is_empty(),
        "IPv6 answered within IPv4's head start: nothing went over IPv4"
    );
    // The host heard of the player over each family, and punches on only where it opened.
    let events = w.host.events();
    assert!(events.contains(&RegistrarEvent::Introduced {
        peer: addr(PLAYER6)
    }));
    assert!(events.contains(&RegistrarEvent::Introduced {
        peer: addr(PLAYER4)
    }));
    assert!(events.contains(&RegistrarEvent::Opened {
        peer: addr(PLAYER6)
    }));
    assert_eq!(w.host.punching(), 1, "not toward the player's IPv4 address");
    for _ in 0..40 {
        w.step(None);
    }
    assert_eq!(w.host.punching(), 0);
    assert_eq!(w.rv.stats().relay_sessions_opened, 0);
}

#[test]
fn where_ipv6_does_not_pass_ipv4_takes_over_after_its_head_start() {
    let mut w = Dual::new();
    w.direct_v6 = false;
    w.register();
    let mut j = Joiner::new(both(RV6, RV4), "yard", 7);
    let path = w.run(&mut j).unwrap();
    assert_eq!(path.peer, addr(HOST4));
    assert_eq!(path.relay, None);
    // Punching starts when the rendezvous server names the host.
    let named = w
        .log
        .iter()
        .find(|s| matches!(decode(&s.bytes), Ok(Message::Peer { .. })))
        .map(|s| s.at)
        .unwrap();
    let (first6, first4) = (w.punches(PLAYER6, HOST6)[0], w.punches(PLAYER4, HOST4)[0]);
    assert!(
        first6 < first4 && first4 - named >= V4_AFTER - 1e-9,
        "IPv6 was punched first, IPv4 only {V4_AFTER} s after the host was named at {named} \
         (at {first6} and {first4})"
    );
    assert!(first4 - named < V4_AFTER + 2.0 * STEP, "and not much later");
}

#[test]
fn a_player_given_one_family_of_the_rendezvous_server_still_reaches_a_host_on_both() {
    // The player knows the rendezvous server's IPv4 address only: it gets both of the
    // host's, punches IPv6 first (the host, not introduced over IPv6, ignores it), and
    // joins over IPv4.
    let mut w = Dual::new();
    w.register();
    let mut j = Joiner::new(addr(RV4), "yard", 8);
    let path = w.run(&mut j).unwrap();
    assert_eq!(j.hosts(), &[addr(HOST6), addr(HOST4)]);
    assert_eq!(path.peer, addr(HOST4));
    assert!(!w.punches(PLAYER6, HOST6).is_empty(), "IPv6 was tried");
}

#[test]
fn an_address_the_host_stopped_registering_from_is_no_longer_handed_out() {
    let mut w = Dual::new();
    w.register();
    // The host loses its IPv6 route; it keeps refreshing over IPv4.
    w.host_rv6 = false;
    let ttl = f64::from(RendezvousConfig::default().ttl);
    for _ in 0..((ttl + 1.0) / STEP) as usize {
        w.step(None);
    }
    let games = w.rv.games(w.now);
    assert_eq!((games[0].addr, games[0].also), (addr(HOST4), None));
    let mut j = Joiner::new(both(RV6, RV4), "yard", 9);
    let path = w.run(&mut j).unwrap();
    assert_eq!(j.hosts(), &[addr(HOST4)]);
    assert_eq!(path.peer, addr(HOST4));
    assert!(
        w.punches(PLAYER6, HOST6).is_empty(),
        "no stale address tried"
    );
}

#[test]
fn with_no_direct_path_in_either_family_one_relay_session_opens() {
    let mut w = Dual::new();
    w.direct_v4 = false;
    w.direct_v6 = false;
    w.register();
    w.host.events();
    let mut j = Joiner::new(both(RV6, RV4), "yard", 11);
    let path = w.run(&mut j).unwrap();
    let (relay, token) = path.relay.expect("relayed");
    // Relayed over the family the player heard of the host first, with its address in it.
    assert_eq!(path.peer.is_ipv6(), relay.is_ipv6());
    let relayed: Vec<_> = w
        .host
        .events()
        .into_iter()
        .filter_map(|e| match e {
            RegistrarEvent::Relayed {
                relay: r, token: t, ..
            } => Some((r, t)),
            _ => None,
        })
        .collect();
    assert_eq!(relayed, vec![(relay, token)], "once, the same session");
    for _ in 0..60 {
        w.step(None);
    }
    assert_eq!(w.rv.stats().relay_sessions_opened, 1);
    assert_eq!(
        w.host.punching(),
        0,
        "the other family's punching stopped too"
    );
}

#[test]
fn a_browser_given_both_families_lists_over_the_one_that_answers() {
    let mut w = Dual::new();
    w.register();
    // The browser's IPv6 requests go unanswered: it is a stranger to the server's IPv6
    // address (a rendezvous server on a host with no IPv6 route answers nothing there).
    let mut l = Lister::new(both("[2001:db8::99]:47820", RV4));
    let games = w.run(&mut l).unwrap();
    assert_eq!(games.len(), 1);
    assert_eq!(games[0].name, "yard");
}
