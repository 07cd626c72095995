//! Sessions and authority on the hub: handshake refusals, timeouts and leaving, late
//! joiners, client spawns, forged sections and the validation hook.

use lanyard::pose::BodyState;
use lanyard::prelude::*;
use lanyard_demo::{self as demo, Mover};
use lanyard_net::{DisconnectReason, NetConfig, NetEvent, RejectReason};
use lanyard_tests::scenario::{DemoScenario, Scenario, crates_and_balls, player};

fn quiet_world(s: usize) -> Scenario {
    Scenario::new(NetConfig::default(), None, 60.0, move |g| {
        crates_and_balls(g, s)
    })
}

fn rejection(events: &[NetEvent]) -> Option<RejectReason> {
    events.iter().find_map(|e| match e {
        NetEvent::Rejected { reason } => Some(reason.clone()),
        _ => None,
    })
}

#[test]
fn a_wrong_version_is_refused_with_that_reason() {
    let mut s = quiet_world(2);
    let old = NetConfig {
        version: 99,
        ..NetConfig::default()
    };
    s.add_client(old, "ann", None);
    s.run_for(1.0);
    assert_eq!(
        rejection(&s.clients[0].events),
        Some(RejectReason::VersionMismatch {
            server: lanyard_net::PROTOCOL_VERSION,
            client: 99
        })
    );
    assert!(s.server.net.clients().is_empty());
}

#[test]
fn a_bad_password_is_refused_and_the_right_one_admitted() {
    let locked = NetConfig {
        password: Some("hunter2".into()),
        ..NetConfig::default()
    };
    let mut s = Scenario::new(locked, None, 60.0, |g| crates_and_balls(g, 2));
    s.add_client(NetConfig::default(), "ann", Some("hunter3"));
    s.add_client(NetConfig::default(), "bob", None);
    s.add_client(NetConfig::default(), "cat", Some("hunter2"));
    s.run_for(1.0);
    assert_eq!(
        rejection(&s.clients[0].events),
        Some(RejectReason::BadPassword)
    );
    assert_eq!(
        rejection(&s.clients[1].events),
        Some(RejectReason::BadPassword)
    );
    assert!(s.clients[2].net.is_connected());
    assert_eq!(s.server.net.clients().len(), 1);
}

/// The name a client was told it plays under, once it joined.
fn joined_as(events: &[NetEvent]) -> Option<String> {
    events.iter().find_map(|e| match e {
        NetEvent::Joined { name, .. } => Some(name.clone()),
        _ => None,
    })
}

#[test]
fn a_taken_name_is_offered_another_and_a_full_server_refuses() {
    let three = NetConfig {
        max_clients: 3,
        ..NetConfig::default()
    };
    let mut s = Scenario::new(three, None, 60.0, |g| crates_and_balls(g, 2));
    s.add_client(NetConfig::default(), "ann", None);
    s.run_for(0.5);
    s.add_client(NetConfig::default(), "ANN", None);
    s.run_for(0.5);
    s.add_client(NetConfig::default(), "ann", None);
    s.run_for(1.0);
    let names: Vec<_> = s.clients.iter().map(|c| joined_as(&c.events)).collect();
    assert_eq!(
        names,
        [
            Some("ann".into()),
            Some("ANN (2)".into()),
            Some("ann (3)".into())
        ],
        "the second and third are offered the first free name, not refused"
    );
    let mut on_server: Vec<_> = s
        .server
        .net
        .sessions()
        .into_iter()
        .map(|i| i.name)
        .collect();
    on_server.sort();
    assert_eq!(on_server, ["ANN (2)", "ann", "ann (3)"]);
    s.add_client(NetConfig::default(), "bob", None);
    s.run_for(1.0);
    assert_eq!(
        rejection(&s.clients[3].events),
        Some(RejectReason::ServerFull { max: 3 })
    );
}

#[test]
fn a_client_with_no_server_gives_up_clearly() {
    let mut s = quiet_world(0);
    s.add_client(NetConfig::default(), "ann", None);
    s.server.alive = false;
    s.run_for(6.0);
    assert!(s.clients[0].events.contains(&NetEvent::ConnectFailed));
}

/// ann joins and owns a player (despawned when she leaves) and a thrown ball (handed to the
/// server when she leaves); bob watches.
/// [`quiet_world`] of `n`, with ann and bob, ann owning a mover and a ball.
fn ann_in_world(n: usize) -> (Scenario, NetId, NetId) {
    let mut s = quiet_world(n);
    let (mover, ball) = ann_owns_two(&mut s);
    (s, mover, ball)
}

fn ann_owns_two(s: &mut Scenario) -> (NetId, NetId) {
    s.add_client(NetConfig::default(), "ann", None);
    s.add_client(NetConfig::default(), "bob", None);
    s.join_within(2.0);
    let ann = s.clients[0].net.client_id().unwrap();
    s.give_player(0, &player(0.0, 3, 0));
    let ball = demo::BallParams::new([5.0, 3.0, 5.0], 0.3, 0.5);
    s.clients[0].group.request_spawn(demo::BALL, &ball).unwrap();
    s.step();
    // She uses both at once, under provisional ids.
    let provisional: Vec<NetId> = s.clients[0]
        .net_ids()
        .into_iter()
        .filter(|n| n.is_provisional())
        .collect();
    assert_eq!(provisional.len(), 2);
    s.run_for(1.0);
    let owned: Vec<(NetId, lanyard::KindId)> = s
        .server
        .group
        .iter()
        .filter(|e| e.owner() == Owner::Client(ann))
        .map(|e| (e.net_id(), e.kind()))
        .collect();
    assert_eq!(owned.len(), 2, "the server did not spawn ann's entities");
    // The confirmations renamed them on ann's side; bob has them under the same ids.
    for (net, _) in &owned {
        assert!(!net.is_provisional());
        assert!(s.clients[0].group.by_net(*net).is_some());
        assert!(s.clients[1].group.by_net(*net).is_some());
    }
    let pick = |name: &str| {
        owned
            .iter()
            .find(|(_, k)| *k == lanyard::KindId::of_name(name))
            .unwrap()
            .0
    };
    (pick(demo::MOVER), pick(demo::BALL))
}

#[test]
fn without_a_grace_window_a_silent_client_times_out_and_its_entities_go_as_their_kinds_say() {
    let no_grace = NetConfig {
        grace: 0.0,
        ..NetConfig::default()
    };
    let mut s = Scenario::new(no_grace, None, 60.0, |g| crates_and_balls(g, 4));
    let (mover, ball) = ann_owns_two(&mut s);
    let ann = s.clients[0].net.client_id().unwrap();
    s.clients[0].alive = false;
    s.run_for(NetConfig::default().timeout + 1.0);
    assert!(s.server.events.contains(&NetEvent::ClientLeft {
        client: ann,
        name: "ann".into(),
        reason: DisconnectReason::TimedOut
    }));
    s.assert_went_as_kinds_say(mover, ball);
    assert!(s.clients[1].net.is_connected(), "bob must keep his session");
    // ann wakes up to a dead session.
    s.clients[0].alive = true;
    s.run_for(NetConfig::default().timeout + 1.0);
    assert!(s.heard_lost(0, DisconnectReason::TimedOut));
}

#[test]
fn leaving_and_shutting_down_are_announced() {
    let (mut s, mover, _) = ann_in_world(4);
    let ann = s.clients[0].net.client_id().unwrap();
    let ann_peer = &mut s.clients[0];
    ann_peer.net.disconnect(&mut ann_peer.group);
    s.run_for(0.5);
    assert!(s.server.events.contains(&NetEvent::ClientLeft {
        client: ann,
        name: "ann".into(),
        reason: DisconnectReason::Left
    }));
    assert!(s.clients[1].group.by_net(mover).is_none());
    s.server.net.disconnect(&mut s.server.group);
    s.run_for(0.5);
    assert!(s.heard_lost(1, DisconnectReason::ServerShutdown));
}

#[test]
fn a_late_joiner_receives_every_live_entity_where_it_is() {
    let (mut s, mover, _) = ann_in_world(30);
    s.run_for(8.0);
    s.add_client(NetConfig::default(), "dan", None);
    s.join_within(2.0);
    s.run_for(1.0);
    let dan = &s.clients[2];
    assert_eq!(dan.net_ids(), s.server.net_ids());
    // The wandering player is near where its owner has it (one broadcast of motion apart).
    let gap = (dan.pos(mover).unwrap() - s.clients[0].pos(mover).unwrap()).length();
    assert!(gap < 0.5, "dan sees ann's player {gap} m away");
}

#[test]
fn forged_sections_change_nothing_anywhere_and_are_counted() {
    let (mut s, mover, _) = ann_in_world(6);
    let crate_net = s.server.net_ids()[1];
    s.run_for(1.0);
    // bob hacks his client: he claims ann's player and a server crate, and lifts both 50 m.
    let bob = &mut s.clients[1];
    let bob_id = bob.net.client_id().unwrap();
    for net in [mover, crate_net] {
        let id = bob.group.id_of(net).unwrap();
        bob.group.set_owner(id, Owner::Client(bob_id)).unwrap();
        let mut st = BodyState::of(bob.group.get(id).unwrap().body());
        st.pos[1] = 50.0;
        bob.group.set_body_state(id, &st).unwrap();
    }
    for _ in 0..180 {
        s.step();
        for net in [mover, crate_net] {
            for (who, p) in [("server", &s.server), ("ann", &s.clients[0])] {
                let y = p.pos(net).unwrap().y;
                assert!(y < 5.0, "{who} saw {net} lifted to {y}");
            }
        }
    }
    let stats = s.server.net.peer_stats(bob_id).unwrap();
    assert!(
        stats.dropped_not_owner >= 2 * 50,
        "forged sections counted: {}",
        stats.dropped_not_owner
    );
    assert_eq!(s.server.group.counters().not_owner, stats.dropped_not_owner);
}

#[test]
fn an_illegal_section_is_not_forwarded_and_its_owner_is_corrected() {
    let mut s = quiet_world(4);
    s.add_client(NetConfig::default(), "cat", None);
    let (mover, _) = ann_owns_two(&mut s);
    let ann_id = s.clients[0].net.client_id().unwrap();
    s.run_for(1.0);
    let legal_limit = s
        .server
        .group
        .controller::<Mover>(s.server.group.id_of(mover).unwrap())
        .unwrap()
        .speed_limit();
    assert_eq!(s.server.net.peer_stats(ann_id).unwrap().dropped_illegal, 0);
    // ann's client is modified to run at 100 m/s; the server's copy knows the limit.
    let ann = &mut s.clients[0];
    let id = ann.group.id_of(mover).unwrap();
    *ann.group.controller_mut::<Mover>(id).unwrap() = Mover::new(7, 100.0, 30);
    for _ in 0..180 {
        s.step();
        let watcher = &s.clients[2];
        let t = watcher
            .group
            .controller::<Mover>(watcher.group.id_of(mover).unwrap())
            .unwrap()
            .target();
        assert!(
            t.length() <= legal_limit,
            "cat was forwarded a target of {} m/s",
            t.length()
        );
        let v = watcher.group.by_net(mover).unwrap().body().linvel();
        assert!(
            Vec3::new(v.x, 0.0, v.z).length() <= legal_limit + 0.5,
            "cat sees {v}"
        );
    }
    let to_ann = s.server.net.peer_stats(ann_id).unwrap();
    assert!(
        to_ann.dropped_illegal > 40,
        "illegal sections counted: {}",
        to_ann.dropped_illegal
    );
    assert!(to_ann.corrections > 0);
    assert!(
        s.clients[0].net.server_stats().unwrap().corrections > 0,
        "ann never received a correction"
    );
    assert_eq!(s.clients[2].group.counters().bad_sections, 0);
}

#[test]
fn an_undeliverable_reliable_message_ends_the_session_with_that_reason() {
    let patient = NetConfig {
        timeout: 60.0,
        reliable_expiry: 3.0,
        grace: 0.0,
        ..NetConfig::default()
    };
    let mut s = Scenario::new(patient.clone(), None, 60.0, |g| crates_and_balls(g, 2));
    s.add_client(patient, "ann", None);
    s.join_within(2.0);
    s.run_for(1.0);
    let ann = s.clients[0].net.client_id().unwrap();
    // ann stops hearing the server but keeps talking, so she never times out; the event
    // the server sends her is never acknowledged.
    s.clients[0].deaf = true;
    s.server.net.send_event(b"are you there".to_vec()).unwrap();
    s.run_for(2.0);
    assert_eq!(s.server.net.clients().len(), 1, "dropped before the expiry");
    s.run_for(2.0);
    assert!(s.server.events.contains(&NetEvent::ClientLeft {
        client: ann,
        name: "ann".into(),
        reason: DisconnectReason::ReliableExpired
    }));
}

#[test]
fn correcting_an_owner_does_not_advance_the_servers_rng() {
    // The mover's controller holds a seeded RNG that its server path draws from. A
    // correction is the server's own body state: the server never runs the owner's server
    // path, so its copy of the RNG (saved state) stays exactly where it was.
    let (mut s, mover, _) = ann_in_world(4);
    let ann_id = s.clients[0].net.client_id().unwrap();
    s.run_for(1.0);
    let saved = |s: &Scenario| {
        let g = &s.server.group;
        let mut out = Vec::new();
        g.controller::<Mover>(g.id_of(mover).unwrap())
            .unwrap()
            .save_state(&mut out);
        out
    };
    let before = saved(&s);
    let ann = &mut s.clients[0];
    let id = ann.group.id_of(mover).unwrap();
    *ann.group.controller_mut::<Mover>(id).unwrap() = Mover::new(7, 100.0, 30);
    s.run_for(3.0);
    let corrections = s.server.net.peer_stats(ann_id).unwrap().corrections;
    assert!(corrections > 10, "only {corrections} corrections");
    // The RNG state is the first 8 bytes of the mover's saved state.
    assert_eq!(saved(&s)[..8], before[..8], "the server's RNG moved");
}

#[test]
fn a_group_driven_outside_its_net_manager_is_reported_in_the_next_frame() {
    let mut s = quiet_world(2);
    s.add_client(NetConfig::default(), "ann", None);
    s.run_for(2.0);
    let elsewhere = |p: &lanyard_net::harness::Peer| {
        p.frames
            .iter()
            .flat_map(|f| &f.frame.errors)
            .filter(|e| matches!(e, Error::FramesElsewhere { .. }))
            .count()
    };
    assert_eq!(
        elsewhere(&s.server),
        0,
        "joins and play drive nothing twice"
    );
    assert_eq!(elsewhere(&s.clients[0]), 0);
    // The game loop also calls frame() on the server's group: one frame too many.
    s.server.group.frame();
    s.step();
    let last = &s.server.frames.last().unwrap().frame.errors;
    assert_eq!(last, &[Error::FramesElsewhere { frames: 1 }]);
    s.step();
    assert_eq!(
        elsewhere(&s.server),
        1,
        "said once, for the frame it happened"
    );
}
