//! Bandwidth: state against acknowledged baselines, refreshes of what rests, the byte
//! budget, and relevance. On the in-memory hub with a virtual clock and a seeded
//! conditioner.

use lanyard::prelude::*;
use lanyard_net::{Conditions, MAX_DATAGRAM, NetConfig};
use lanyard_tests::demo_registry;
use lanyard_tests::scenario::{
    DemoScenario, Scenario, asteroid_field, crates_and_balls, crates_with_balls_on_top, player,
    unpredicted_registry, worst_state_age,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

fn config() -> NetConfig {
    NetConfig {
        rate: 30.0,
        ..NetConfig::default()
    }
}

/// The server's resting bodies, each with the client's copy of it.
fn resting_pairs(s: &Scenario, client: usize) -> Vec<(NetId, Vec3, Option<Vec3>)> {
    s.server
        .group
        .iter()
        .filter(|e| e.body().is_sleeping())
        .map(|e| {
            let net = e.net_id();
            (net, e.body().translation(), s.clients[client].pos(net))
        })
        .collect()
}

#[test]
fn over_a_bad_link_clients_converge_and_nothing_starves() {
    let bad = Conditions {
        latency: 0.08,
        jitter: 0.03,
        loss: 0.10,
        duplicate: 0.01,
        reorder: 0.02,
        ..Conditions::PERFECT
    };
    let mut s = Scenario::new(config(), Some((bad, 91)), 60.0, |g| {
        crates_with_balls_on_top(g, 100)
    });
    s.add_client(config(), "mover", None);
    s.add_client(config(), "watcher", None);
    s.join_within(5.0);
    // The mover wanders for 25 s, into the pile now and then.
    s.give_player(0, &player(0.0, 4, 25 * 60));
    let refresh = f64::from(config().refresh);
    let mut oldest: f64 = 0.0;
    let frames = (60.0 / s.dt) as usize;
    for f in 0..frames {
        s.step();
        // After a settling second, the oldest state any client holds of any entity.
        if f > 60 {
            for c in &s.clients {
                for e in c.group.iter() {
                    if let Some(age) = c.net.state_age(e.net_id()) {
                        oldest = oldest.max(age);
                    }
                }
            }
        }
    }
    eprintln!("oldest state held: {oldest:.2} s");

    assert!(
        oldest <= refresh + 1.0,
        "a client held state {oldest:.2} s old (refresh {refresh} s)"
    );
    for (i, c) in s.clients.iter().enumerate() {
        let stats = c.net.server_stats().expect("still connected");
        assert_eq!(stats.missing_baselines, 0, "client {i}");
        let pairs = resting_pairs(&s, i);
        assert!(pairs.len() >= 50, "most of the pile rests: {}", pairs.len());
        for (net, server, client) in pairs {
            let client = client.unwrap_or_else(|| panic!("client {i} lacks {net}"));
            let d = (server - client).length();
            assert!(d <= 0.01, "client {i}: {net} is {d:.4} m from the server's");
        }
    }
}

#[test]
fn over_a_lossy_link_a_resting_world_is_refreshed_in_runs_not_whole_sections() {
    // Acks that come late or not at all make the server send a refresh again; the client
    // then holds the same bytes under a newer broadcast than the one it acknowledged.
    let lossy = Conditions {
        latency: 0.12,
        jitter: 0.04,
        loss: 0.15,
        ..Conditions::PERFECT
    };
    let mut s = Scenario::new(config(), Some((lossy, 17)), 60.0, |g| {
        crates_and_balls(g, 40)
    });
    s.add_client(config(), "ann", None);
    assert!(s.run_until(20.0, |s| s.all_joined()
        && s.server.group.iter().all(|e| e.body().is_sleeping())));
    s.run_for(2.0);
    let stats = |s: &Scenario| s.clients[0].net.server_stats().unwrap();
    let before = stats(&s);
    s.run_for(16.0);
    let after = stats(&s);
    let entries = after.entries - before.entries;
    let bytes = after.state_bytes - before.state_bytes;
    eprintln!("at rest over a lossy link: {entries} entries in {bytes} bytes");
    // Every resting body was refreshed (four times)...
    let refresh = f64::from(config().refresh);
    for e in s.clients[0].group.iter() {
        let age = s.clients[0].net.state_age(e.net_id()).unwrap_or(f64::MAX);
        assert!(
            age <= refresh + 1.0,
            "{} last heard of {age:.2} s ago",
            e.net_id()
        );
    }
    // ...in runs of a few bytes: less in 16 s than two whole sections (31 bytes each).
    assert!(bytes < 2 * 31, "{bytes} bytes in {entries} entries");
    assert_eq!(after.missing_baselines, 0);
}

/// A crate at rest on the server is held where it rests on a client, with nothing sent:
/// the server's silence says its crate is still where the client's newest state has it.
/// Found by the explorer (seed 382): a copy balanced on an edge crept and slid off
/// between refreshes, 19 cm from where the server's slept.
#[test]
fn a_resting_crate_moved_on_a_client_is_held_where_the_server_rests_and_rest_costs_nothing() {
    let mut s = Scenario::new(config(), None, 60.0, |g| crates_and_balls(g, 40));
    s.add_client(config(), "ann", None);
    // Everything falls and comes to rest.
    assert!(s.run_until(20.0, |s| s.all_joined()
        && s.server.group.iter().all(|e| e.body().is_sleeping())));
    s.run_for(1.0);
    let (net, server_pos, _) = resting_pairs(&s, 0)[7];
    // Between refreshes nothing is sent for a world at rest.
    let entries = |s: &Scenario| s.clients[0].net.server_stats().unwrap().entries;
    let before = entries(&s);
    let bytes_before = s.clients[0].net.counters().bytes_in;
    s.run_for(1.0);
    let quiet = entries(&s) - before;
    let bytes = s.clients[0].net.counters().bytes_in - bytes_before;
    assert!(quiet <= 4, "{quiet} state entries in a second of rest");
    assert!(bytes <= 1000, "{bytes} bytes in a second of rest");
    // Something local moves the client's copy of a crate a metre aside.
    let c = &mut s.clients[0];
    let eid = c.group.id_of(net).unwrap();
    let mut state = lanyard::pose::BodyState::of(c.group.get(eid).unwrap().body());
    state.pos[0] += 1.0;
    c.group.set_body_state(eid, &state).unwrap();
    // The next frame puts it back where the server has it, with no word from the server.
    s.step();
    let off = (s.clients[0].pos(net).unwrap() - server_pos).length();
    assert!(
        off <= 0.01,
        "the copy is {off:.3} m from the server's crate"
    );
    s.run_for(0.5);
    let off = (s.clients[0].pos(net).unwrap() - server_pos).length();
    assert!(
        off <= 0.01,
        "the copy is {off:.3} m from the server's crate"
    );
    // Nothing of it came meanwhile: the client held it there itself.
    let age = s.clients[0].net.state_age(net).unwrap();
    assert!(age >= 0.5, "the server sent the crate {age:.2} s ago");
}

#[test]
fn a_busy_world_keeps_to_the_budget_and_the_datagram_size() {
    let budget = 6_000;
    let cfg = NetConfig { budget, ..config() };
    let mut s = Scenario::new(cfg.clone(), None, 60.0, |g| crates_and_balls(g, 300));
    s.add_client(cfg.clone(), "ann", None);
    s.add_client(cfg.clone(), "bob", None);
    s.join_within(5.0);
    let ids: Vec<_> = s.server.net.clients().into_iter().map(|c| c.0).collect();
    let before: Vec<_> = ids
        .iter()
        .map(|id| s.server.net.peer_stats(*id).unwrap())
        .collect();
    let broadcasts = s.server.net.counters().broadcasts;
    // 300 bodies tumbling down at once want far more than the budget.
    s.run_for(4.0);
    let n = (s.server.net.counters().broadcasts - broadcasts) as f32;
    for (id, b) in ids.iter().zip(before) {
        let a = s.server.net.peer_stats(*id).unwrap();
        let per_broadcast = (a.state_bytes - b.state_bytes) as f32 / n;
        let share = budget as f32 / cfg.rate;
        assert!(
            per_broadcast <= share,
            "{per_broadcast:.0} bytes of state per broadcast, budget {share:.0}"
        );
        assert!(per_broadcast >= share * 0.5, "the budget is used");
    }
    for p in [&s.server].into_iter().chain(&s.clients) {
        assert!(p.net.counters().largest_out <= MAX_DATAGRAM as u64);
        assert!(p.net.counters().largest_in <= MAX_DATAGRAM as u64);
    }
    // Nothing starved: every entity reached both clients.
    s.run_for(5.0);
    for i in 0..2 {
        assert_eq!(s.clients[i].net_ids(), s.server.net_ids());
        for e in s.server.group.iter() {
            let age = s.clients[i].net.state_age(e.net_id());
            assert!(age.is_some_and(|a| a <= 5.0), "{}: {age:?}", e.net_id());
        }
    }
}

#[test]
fn an_irrelevant_entity_is_withdrawn_from_a_client_and_comes_back_when_relevant() {
    let mut s = Scenario::new(config(), None, 60.0, |g| crates_and_balls(g, 20));
    // While `narrow` holds, a client needs only what lies at x < 0.
    let narrow = Arc::new(AtomicBool::new(true));
    let flag = narrow.clone();
    s.server
        .net
        .set_relevance(move |_, e, _| {
            !flag.load(Ordering::Relaxed) || e.body().translation().x < 0.0
        })
        .unwrap();
    s.add_client(config(), "ann", None);
    s.join_within(5.0);
    s.give_player(0, &player(5.0, 1, 0));
    s.run_for(3.0);
    let server_left: Vec<NetId> = s
        .server
        .group
        .iter()
        .filter(|e| e.body().translation().x < 0.0 && e.owner() == Owner::Server)
        .map(|e| e.net_id())
        .collect();
    let client_has = |s: &Scenario| -> Vec<NetId> {
        s.clients[0]
            .group
            .iter()
            .filter(|e| e.owner() == Owner::Server)
            .map(|e| e.net_id())
            .collect()
    };
    assert!(!server_left.is_empty());
    assert_eq!(client_has(&s), server_left, "only what lies at x < 0");
    // Its own mover stands at x = 5 and stays with it.
    assert_eq!(
        s.clients[0]
            .group
            .iter()
            .filter(|e| e.owner() != Owner::Server)
            .count(),
        1
    );
    // Everything becomes relevant: the rest arrives, where the server has it.
    narrow.store(false, Ordering::Relaxed);
    s.run_for(2.0);
    let all: Vec<NetId> = s
        .server
        .group
        .iter()
        .filter(|e| e.owner() == Owner::Server)
        .map(|e| e.net_id())
        .collect();
    assert_eq!(client_has(&s), all);
    for net in &all {
        let d = (s.server.pos(*net).unwrap() - s.clients[0].pos(*net).unwrap()).length();
        assert!(d <= 0.05, "{net} arrived {d:.3} m off");
    }
    // And narrowing again withdraws it.
    narrow.store(true, Ordering::Relaxed);
    s.run_for(1.0);
    assert!(client_has(&s).len() < all.len());
}

/// The server's stats of its one client after a few seconds of 100 asteroids (always
/// moving) with a state budget of `budget` B/s, predicted by both ends or not.
fn asteroids_with_budget(budget: u32, predicted: bool) -> lanyard_net::PeerStats {
    let config = NetConfig { budget, ..config() };
    let registry = if predicted {
        demo_registry()
    } else {
        unpredicted_registry()
    };
    let mut s = asteroid_field(registry, config.clone(), None, (100, 5));
    s.add_client(config, "ann", None);
    s.join_within(3.0);
    s.run_for(3.0);
    let ann = s.clients[0].net.client_id().unwrap();
    s.server.net.peer_stats(ann).unwrap()
}

#[test]
fn a_starved_client_shows_its_state_aging_and_a_fed_one_does_not() {
    let fed = asteroids_with_budget(1_000_000, false);
    let starved = asteroids_with_budget(3_000, false);
    // Fed, every change goes at once: the state a client holds is a round trip old.
    assert!(fed.state_age_p95_ms <= 100.0, "fed: {fed:?}");
    // Starved (100 bytes a broadcast for 100 moving bodies), bodies go in turn.
    assert!(starved.state_age_p95_ms >= 500.0, "starved: {starved:?}");
    assert!(starved.state_age_max_ms >= starved.state_age_p95_ms);
    // Predicted by both ends, the same budget starves nothing: what follows its
    // prediction costs nothing, and its state is as fresh as the prediction.
    let predicted = asteroids_with_budget(3_000, true);
    assert!(
        predicted.state_age_p95_ms <= 100.0,
        "predicted: {predicted:?}"
    );
}

/// A 64 kbit/s link (8000 B/s, a 0.2 s queue) from the server, carrying 100 asteroids
/// whose kind does not predict: they would take about 48 kB/s, and the budget allows 12 000
/// B/s of state, both more than the link carries. The server finds the link's rate by
/// itself, loses next to nothing, and says that the client's state goes stale.
#[test]
fn on_a_narrow_link_the_pace_settles_under_its_capacity_with_little_loss() {
    let narrow = Conditions {
        latency: 0.01,
        bandwidth: 8_000.0,
        queue: 0.2,
        ..Conditions::PERFECT
    };
    let conditions = Some((narrow, 3));
    let mut s = asteroid_field(unpredicted_registry(), config(), conditions, (100, 5));
    s.add_client(config(), "ann", None);
    s.join_within(5.0);
    s.run_for(10.0);
    let ann = s.clients[0].net.client_id().unwrap();
    let before = s.server.conditioner_stats().unwrap();
    // The pace, every half second: it saws up and down under the link's capacity.
    let mut paces = Vec::new();
    for _ in 0..40 {
        s.run_for(0.5);
        paces.push(s.server.net.peer_stats(ann).unwrap().send_rate);
    }
    let pace = paces.iter().sum::<f32>() / paces.len() as f32;
    let after = s.server.conditioner_stats().unwrap();
    let stats = s.server.net.peer_stats(ann).unwrap();
    let sent = after.sent - before.sent;
    let dropped = after.dropped - before.dropped;
    let carried = (after.bytes - before.bytes) as f32 / 20.0;
    eprintln!(
        "64 kbit/s link: {carried:.0} B/s carried, {dropped} of {sent} datagrams dropped, \
         pace {pace:.0} B/s on average, state age p95 {:.0} ms",
        stats.state_age_p95_ms
    );
    assert!(
        (dropped as f32) <= 0.02 * sent as f32,
        "{dropped} of {sent} datagrams dropped: {stats:?}"
    );
    assert!(carried <= 8_000.0, "{carried} B/s on an 8000 B/s link");
    assert!(carried >= 5_000.0, "{carried} B/s: the link is left idle");
    assert!(pace < 8_000.0, "pace {paces:?}");
    // The client is starved, and the server says so.
    assert!(stats.state_age_p95_ms > 300.0, "{stats:?}");
}

#[test]
fn bodies_knocked_after_a_long_rest_are_not_reported_as_old_as_the_rest() {
    // 100 bodies settle, most to rest for seconds, while one client is fed every change. Then
    // all are knocked at once: the client's copies went out of date at that moment, not
    // when it last heard of them, so its state age stays near a round trip (and the
    // server does not warn that its state goes stale).
    let config = NetConfig {
        budget: 1_000_000,
        ..config()
    };
    let mut s = Scenario::new(config.clone(), None, 60.0, |g| crates_and_balls(g, 100));
    s.add_client(config, "ann", None);
    s.join_within(3.0);
    s.run_for(6.0);
    let ann = s.clients[0].net.client_id().unwrap();
    let still = |s: &Scenario| {
        s.server
            .group
            .iter()
            .filter(|e| e.body().linvel().length() < 0.01)
            .count()
    };
    assert!(still(&s) >= 50, "only {} of 100 at rest", still(&s));
    let knocked: Vec<EntityId> = s
        .server
        .group
        .iter()
        .filter(|e| e.owner() == Owner::Server)
        .map(|e| e.id())
        .collect();
    for id in knocked {
        let body = s.server.group.get(id).unwrap().body();
        let state = lanyard::pose::BodyState {
            linvel: [0.0, 3.0, 0.0],
            ..lanyard::pose::BodyState::of(body)
        };
        s.server.group.set_body_state(id, &state).unwrap();
    }
    // Every broadcast until the client has them all again.
    let worst = worst_state_age(&mut s, ann, 30);
    assert!(worst.0 <= 100.0, "p95 age {} ms", worst.0);
    assert!(worst.1 <= 150.0, "oldest {} ms", worst.1);
}

#[test]
fn a_client_joining_a_world_at_rest_gets_each_body_once_in_its_spawn() {
    let n = 50;
    let mut s = Scenario::new(config(), None, 60.0, |g| crates_and_balls(g, n));
    // The pile settles before anyone joins.
    s.run_for(6.0);
    s.add_client(config(), "ann", None);
    s.join_within(3.0);
    s.run_for(2.0);
    let st = s.clients[0].net.server_stats().expect("joined");
    eprintln!(
        "{n} resting bodies: {} entries, {} B of state after their spawns",
        st.entries, st.state_bytes
    );
    // Each spawn carried its body's section, the client's first baseline: no whole
    // section follows (31 bytes and more a body, before).
    assert!(
        st.state_bytes < 10 * n as u64,
        "{} B of state for {n} bodies at rest",
        st.state_bytes
    );
    assert_eq!(st.missing_baselines, 0);
    for (net, server, client) in resting_pairs(&s, 0) {
        let client = client.expect("the client has every body");
        let gap = (server - client).length();
        assert!(gap <= 0.002, "{net}: {gap} m from the server's");
    }
}
