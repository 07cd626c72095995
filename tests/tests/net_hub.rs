//! Multi-peer behaviour on the in-memory hub with a virtual clock: convergence, reliable
//! delivery under a bad network, and the rate cap.

use lanyard::prelude::*;
use lanyard_demo as demo;
use lanyard_net::{Conditions, NetConfig, NetEvent};
use lanyard_tests::scenario::{DemoScenario, Scenario, crates_and_balls, player};

/// Pose agreement for an entity whose owner streams its pose: PoseState quantizes positions
/// to 1 mm (error up to 0.5 mm), and a peer is only corrected once it drifts more than
/// `demo::CORRECTION_TOLERANCE` (2 mm) from the stream. So peers agree within 2.5 mm.
const POSE_TOLERANCE: f32 = demo::CORRECTION_TOLERANCE + 0.0005;

fn events_of(p: &lanyard_tests::scenario::Peer, from: Owner) -> Vec<Vec<u8>> {
    p.events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Event { from: f, bytes } if *f == from => Some(bytes.clone()),
            _ => None,
        })
        .collect()
}

/// Runs the 60-second session the convergence tests share: three clients join, the first
/// spawns a player that wanders for 20 s and stops, the server despawns a crate and spawns a
/// ball, and events go both ways. Returns the scenario and the player's network id.
fn sixty_seconds(conditions: Option<(Conditions, u64)>) -> (Scenario, NetId) {
    sixty_seconds_with(conditions, None)
}

/// [`sixty_seconds`], with a stranger spraying random datagrams at the server if
/// `stranger` gives its seed.
fn sixty_seconds_with(
    conditions: Option<(Conditions, u64)>,
    stranger: Option<u64>,
) -> (Scenario, NetId) {
    let mut s = Scenario::new(NetConfig::default(), conditions, 60.0, |g| {
        crates_and_balls(g, 40)
    });
    if let Some(seed) = stranger {
        s.add_stranger(seed);
    }
    for name in ["ann", "bob", "cat"] {
        s.add_client(NetConfig::default(), name, None);
    }
    assert!(
        s.run_until(5.0, |s| s.all_joined()),
        "the clients did not all join"
    );
    let ann = s.clients[0].net.client_id().unwrap();
    s.give_player(0, &player(0.0, 5, 20 * 60));
    s.run_for(5.0);

    // Mid-session: a despawn, a spawn, and events both ways.
    let victim = s.server.net_ids()[3];
    let victim_id = s.server.group.id_of(victim).unwrap();
    s.server.group.despawn(victim_id).unwrap();
    s.server
        .group
        .spawn(
            demo::BALL,
            &demo::BallParams::new([3.0, 6.0, 3.0], 0.5, 0.6),
            Owner::Server,
        )
        .unwrap();
    s.server.net.send_event(b"boom".to_vec()).unwrap();
    s.clients[1]
        .net
        .send_event(b"hi from bob".to_vec())
        .unwrap();
    s.run_for(53.0);

    let player = s
        .server
        .group
        .iter()
        .find(|e| e.owner() == Owner::Client(ann))
        .map(|e| e.net_id())
        .expect("the server has ann's player");
    assert!(s.server.group.by_net(victim).is_none());
    (s, player)
}

fn assert_converged(s: &Scenario, player: NetId) {
    let ids = s.server.net_ids();
    assert_eq!(
        ids.len(),
        41,
        "40 crates and balls, minus one, plus one ball, plus the player"
    );
    for (i, c) in s.clients.iter().enumerate() {
        assert_eq!(
            c.net_ids(),
            ids,
            "client {i} does not have the server's entities"
        );
        assert!(c.net.is_connected(), "client {i} lost its session");
    }
    // The player, owned and moved by ann, is where ann says on every peer.
    let at_owner = s.clients[0].pos(player).unwrap();
    let mut seen = vec![s.server.pos(player).unwrap()];
    seen.extend(s.clients[1..].iter().map(|c| c.pos(player).unwrap()));
    for p in seen {
        assert!(
            (p - at_owner).length() <= POSE_TOLERANCE,
            "player at {p} here, {at_owner} at its owner"
        );
    }
    // It really went somewhere first.
    assert!((at_owner - Vec3::new(0.0, 0.6, 12.0)).length() > 1.0);
    // Every event arrived once, in order, everywhere.
    for c in &s.clients {
        assert_eq!(events_of(c, Owner::Server), vec![b"boom".to_vec()]);
    }
    let bob = s.clients[1].net.client_id().unwrap();
    assert_eq!(
        events_of(&s.server, Owner::Client(bob)),
        vec![b"hi from bob".to_vec()]
    );
}

#[test]
fn three_clients_converge_over_sixty_seconds() {
    let (s, player) = sixty_seconds(None);
    assert_converged(&s, player);
    // The server-owned bodies agree too: crates at rest are where the server has them.
    for c in &s.clients {
        for e in s.server.group.iter() {
            let here = c.pos(e.net_id()).unwrap();
            assert!(
                (here - e.body().translation()).length() <= POSE_TOLERANCE,
                "{} at {here}",
                e.net_id()
            );
        }
    }
}

#[test]
fn nothing_reliable_is_lost_and_poses_converge_on_a_bad_network() {
    let bad = Conditions {
        latency: 0.150,
        jitter: 0.040,
        loss: 0.20,
        duplicate: 0.0,
        reorder: 0.0,
        corrupt: 0.0,
        ..Conditions::PERFECT
    };
    let (s, player) = sixty_seconds(Some((bad, 42)));
    assert_converged(&s, player);
    // The server's view of its link to cat: spawns and events to her were resent.
    let cat = s.clients[2].net.client_id().unwrap();
    let to_cat = s.server.net.peer_stats(cat).unwrap();
    assert!(
        to_cat.resends > 0,
        "with 20% loss something must have been resent"
    );
    // Cat's view of her link to the server: the estimates reflect the conditions.
    let stats = s.clients[2].net.server_stats().unwrap();
    assert!(
        stats.loss > 0.05 && stats.loss < 0.5,
        "loss estimate {}",
        stats.loss
    );
    assert!(
        stats.rtt_ms > 250.0 && stats.rtt_ms < 600.0,
        "rtt estimate {}",
        stats.rtt_ms
    );
    eprintln!(
        "cat: rtt from acks {:.0} ms, ping from echoes {:.0} ms",
        stats.rtt_ms, stats.ping_ms
    );
    // The ping from echoed clock stamps leaves out the time the server held her stamp
    // before its next send, which the ack round trip counts.
    assert!(
        stats.ping_ms > 250.0 && stats.ping_ms < stats.rtt_ms,
        "ping {} against rtt {}",
        stats.ping_ms,
        stats.rtt_ms
    );
}

#[test]
fn the_rate_cap_holds_at_240_frames_per_second() {
    let mut s = Scenario::new(NetConfig::default(), None, 240.0, |g| {
        crates_and_balls(g, 10)
    });
    for name in ["ann", "bob", "cat"] {
        s.add_client(NetConfig::default(), name, None);
    }
    s.join_within(2.0);
    s.give_player(0, &player(0.0, 1, 0));
    s.run_for(10.0);
    let cap = NetConfig::default().rate as usize;
    let peers = std::iter::once(&s.server).chain(&s.clients);
    for (i, p) in peers.enumerate() {
        let sends: Vec<usize> = p
            .frames
            .iter()
            .enumerate()
            .filter(|(_, f)| f.sent)
            .map(|(t, _)| t)
            .collect();
        // The server and ann (who owns a mover) stream all the time; the others only ack
        // and send heartbeats, but the cap binds them all.
        if i <= 1 {
            assert!(sends.len() > 150, "peer {i} hardly sent anything");
        }
        // Every window of 240 frames (one second) holds at most `cap` sends.
        for (k, &start) in sends.iter().enumerate() {
            let in_window = sends[k..].iter().take_while(|&&t| t < start + 240).count();
            assert!(
                in_window <= cap,
                "peer {i}: {in_window} sends in the second after frame {start}"
            );
        }
    }
    // And the server does use its budget: 20 a second over the 10 s.
    let server_sends = s
        .server
        .frames
        .iter()
        .rev()
        .take(2400)
        .filter(|f| f.sent)
        .count();
    assert!(
        (195..=200).contains(&server_sends),
        "{server_sends} broadcasts in 10 s"
    );
}

#[test]
fn corruption_both_ways_and_a_strangers_spray_lose_no_session_and_apply_nothing_corrupted() {
    // Every peer's outgoing datagrams: 3% arrive with one to three bytes changed. A
    // stranger sprays random datagrams (half behind a valid header) at the server.
    let corrupting = Conditions {
        corrupt: 0.03,
        ..Conditions::PERFECT
    };
    let (s, player) = sixty_seconds_with(Some((corrupting, 11)), Some(5));
    assert_converged(&s, player);
    // No session lost, on either side.
    assert_eq!(s.server.net.clients().len(), 3);
    for c in &s.clients {
        assert!(c.net.is_connected());
        let lost = c
            .events
            .iter()
            .find(|e| matches!(e, NetEvent::ConnectionLost { .. }));
        assert!(lost.is_none(), "a client lost its session: {lost:?}");
    }
    let left = s
        .server
        .events
        .iter()
        .find(|e| matches!(e, NetEvent::ClientLeft { .. }));
    assert!(left.is_none(), "the server dropped a client: {left:?}");
    // The corrupted datagrams were dropped and counted, both ways.
    let up: u64 = s
        .server
        .net
        .clients()
        .iter()
        .map(|(id, _)| s.server.net.peer_stats(*id).unwrap().bad_tags)
        .sum();
    let down: u64 = s
        .clients
        .iter()
        .map(|c| c.net.server_stats().unwrap().bad_tags)
        .sum();
    assert!(
        up > 10 && down > 10,
        "bad tags counted: up {up}, down {down}"
    );
    assert!(s.server.net.counters().strangers > s.stranger_sent() / 2);
    // Nothing corrupted reached a client path: no section anywhere failed to decode, and
    // every reliable message decoded.
    for p in std::iter::once(&s.server).chain(&s.clients) {
        let c = p.group.counters();
        assert_eq!((c.bad_sections, c.framing_errors), (0, 0));
    }
    for c in &s.clients {
        assert_eq!(c.net.server_stats().unwrap().refused_messages, 0);
    }
}

#[test]
fn a_resent_message_the_client_already_has_is_acked_so_resends_stop() {
    // A world so large that a broadcast takes more datagrams than an ack covers: spawn
    // messages in datagrams the client's acks never reach are resent, and the client,
    // which has them already, must ack the resends too, or the server resends them until
    // the session expires.
    let mut s = Scenario::new(NetConfig::default(), None, 60.0, |g| {
        crates_and_balls(g, 1000)
    });
    s.add_client(NetConfig::default(), "ann", None);
    s.join_within(3.0);
    assert!(s.run_until(5.0, |s| s.clients[0].group.len() == 1000));
    s.run_for(2.0);
    let ann = s.clients[0].net.client_id().unwrap();
    let settled = s.server.net.peer_stats(ann).unwrap().resends;
    s.run_for(5.0);
    let later = s.server.net.peer_stats(ann).unwrap().resends;
    assert_eq!(later, settled, "the server kept resending what ann had");
}

/// `request_spawn` gives a ticket that finds the entity: under its provisional id first,
/// then, the same local entity, under the id the server gave it.
#[test]
fn a_spawn_ticket_follows_the_provisional_id_to_the_confirmed_one() {
    let mut s = Scenario::new(NetConfig::default(), None, 60.0, |g| crates_and_balls(g, 2));
    s.add_client(NetConfig::default(), "ann", None);
    s.join_within(3.0);
    let ticket = s.give_player(0, &player(0.0, 1, 60));
    assert_eq!(
        s.clients[0].group.spawned(ticket),
        None,
        "not before the frame"
    );
    s.step();
    let id = s.clients[0].group.spawned(ticket).expect("spawned locally");
    let first = s.clients[0].group.get(id).unwrap().net_id();
    assert!(first.is_provisional(), "{first}");
    assert!(s.run_until(2.0, |s| {
        s.clients[0]
            .group
            .spawned(ticket)
            .and_then(|id| s.clients[0].group.get(id))
            .is_some_and(|e| !e.net_id().is_provisional())
    }));
    assert_eq!(
        s.clients[0].group.spawned(ticket),
        Some(id),
        "the same entity"
    );
    let confirmed = s.clients[0].group.get(id).unwrap().net_id();
    assert!(
        s.server.group.by_net(confirmed).is_some(),
        "the server's id"
    );
    s.clients[0].group.despawn(id).unwrap();
    assert_eq!(s.clients[0].group.spawned(ticket), None, "gone");
}

/// The harness's `wait_for` fails with what it waited for and a dump of every peer.
#[test]
fn a_wait_in_vain_says_what_it_waited_for_and_dumps_every_peer() {
    let mut s = Scenario::new(NetConfig::default(), None, 60.0, |g| crates_and_balls(g, 3));
    s.add_client(NetConfig::default(), "ann", None);
    s.wait_for(3.0, "ann to join", |s| s.all_joined()).unwrap();
    let stuck = s
        .wait_for(0.5, "a fourth crate", |s| s.server.group.len() > 3)
        .unwrap_err();
    let text = stuck.to_string();
    assert!(
        text.starts_with("waited 0.5 s for a fourth crate, in vain"),
        "{text}"
    );
    assert!(text.contains("server: connected, tick"), "{text}");
    assert!(text.contains("client 0: connected"), "{text}");
    assert!(text.contains("demo.crate"), "{text}");
}

/// On a perfect hub, stepped in turn, what the server sends reaches a client in the frame it
/// was sent and what a client sends reaches the server a frame later: the wire's round trip
/// reads one frame. With `Scenario::even` every peer updates before any sends, so a
/// datagram takes a frame each way: two.
#[test]
fn stepped_evenly_a_datagram_takes_a_frame_each_way() {
    let ping = |even: bool| {
        let mut s = Scenario::new(NetConfig::default(), None, 60.0, |g| crates_and_balls(g, 4));
        s.even = even;
        s.add_client(NetConfig::default(), "ann", None);
        s.join_within(3.0);
        s.run_for(2.0);
        let id = s.clients[0].net.client_id().unwrap();
        s.server.net.peer_stats(id).unwrap().ping_ms
    };
    let frame = 1000.0 / 60.0;
    let (turns, even) = (ping(false), ping(true));
    assert!((turns - frame).abs() < 1.5, "in turn: {turns} ms");
    assert!((even - 2.0 * frame).abs() < 1.5, "evenly: {even} ms");
}

/// `len` bytes that differ from place to place, so a fragment out of place shows.
fn patterned(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[1] ^ salt)
        .collect()
}

#[test]
fn a_64_kb_message_crosses_a_bad_link_intact_and_in_order_and_an_oversized_one_is_refused() {
    let bad = Conditions {
        latency: 0.08,
        jitter: 0.03,
        loss: 0.10,
        ..Conditions::PERFECT
    };
    let mut s = Scenario::new(NetConfig::default(), Some((bad, 64)), 60.0, |g| {
        crates_and_balls(g, 20)
    });
    s.add_client(NetConfig::default(), "ann", None);
    s.add_client(NetConfig::default(), "bob", None);
    assert!(
        s.run_until(10.0, |s| s.all_joined()),
        "the clients did not join"
    );
    let big = patterned(64 * 1024, 0x5a);
    let back = patterned(64 * 1024, 0xa5);
    // Small messages on each side of the large one: the order holds across it.
    for bytes in [b"before".to_vec(), big.clone(), b"after".to_vec()] {
        s.server.net.send_event(bytes).unwrap();
    }
    s.clients[1].net.send_event(back.clone()).unwrap();
    let want = vec![b"before".to_vec(), big, b"after".to_vec()];
    let bob = Owner::Client(s.clients[1].net.client_id().unwrap());
    let arrived = |s: &Scenario| {
        s.clients
            .iter()
            .all(|c| events_of(c, Owner::Server).len() == 3)
            && !events_of(&s.server, bob).is_empty()
    };
    assert!(
        s.run_until(20.0, arrived),
        "the large messages did not arrive"
    );
    s.run_for(2.0);
    for (i, c) in s.clients.iter().enumerate() {
        assert_eq!(events_of(c, Owner::Server), want, "client {i}");
        assert!(c.net.is_connected());
    }
    assert_eq!(events_of(&s.server, bob), vec![back]);
    let to_ann = s.clients[0].net.client_id().unwrap();
    assert!(
        s.server.net.peer_stats(to_ann).unwrap().resends > 0,
        "with 10% loss some fragments went again"
    );

    // One byte over the cap is refused, and the error names the size and the cap.
    let cap = lanyard_net::MAX_MESSAGE;
    let err = s.server.net.send_event(vec![0; cap]).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, lanyard_net::NetError::MessageTooLarge { len, max } if len == cap && max < cap),
        "{err:?}"
    );
    assert!(text.contains(&cap.to_string()), "{text}");
}
