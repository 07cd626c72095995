//! A client's process dies and a new one takes its session up with the claim the old one
//! kept (`NetManager::session_claim`, `NetManager::client_claiming`), on the hub with a
//! virtual clock: the same id, the same entities, the world afresh, and no second player;
//! a claim that comes too late joins anew.

use lanyard::KindId;
use lanyard::prelude::*;
use lanyard_demo as demo;
use lanyard_net::{DisconnectReason, NetConfig, NetEvent, SessionClaim};
use lanyard_tests::scenario::{DemoScenario, Scenario, crates_and_balls, player};

/// A server with 20 s of grace and a few crates; ann joined and owns a mover that wanders
/// for a minute. Returns the scenario, ann's claim and her mover's network id.
fn ann_with_a_mover() -> (Scenario, SessionClaim, NetId) {
    let config = NetConfig {
        grace: 20.0,
        ..NetConfig::default()
    };
    let mut s = Scenario::new(config, None, 60.0, |g| crates_and_balls(g, 4));
    s.add_client(NetConfig::default(), "ann", None);
    s.join_within(2.0);
    s.clients[0]
        .group
        .request_spawn(demo::MOVER, &player(0.0, 3, 3600))
        .expect("a mover spawns");
    s.run_for(2.0);
    let ann = s.clients[0].net.client_id().expect("ann joined");
    let mover = s
        .server
        .group
        .iter()
        .find(|e| e.owner() == Owner::Client(ann) && e.kind() == KindId::of_name(demo::MOVER))
        .map(|e| e.net_id())
        .expect("the server spawned ann's mover");
    let claim = s.clients[0]
        .net
        .session_claim()
        .expect("a joined client has a claim");
    assert_eq!(claim.client(), ann);
    (s, claim, mover)
}

/// Ann's process dies; after `dead` seconds a new one starts with her claim. Returns the
/// new client's index once it joined.
fn restart_ann(s: &mut Scenario, claim: &SessionClaim, dead: f32) -> usize {
    s.clients[0].alive = false;
    s.run_for(dead);
    let again = s.add_client_claiming(NetConfig::default(), claim, "ann");
    assert!(
        s.run_until(5.0, |s| s.clients[again].net.is_connected()),
        "the new process never joined: {}",
        s.dump()
    );
    again
}

fn joined(events: &[NetEvent]) -> Option<(ClientId, String, bool)> {
    events.iter().find_map(|e| match e {
        NetEvent::Joined {
            client,
            name,
            resumed,
            ..
        } => Some((*client, name.clone(), *resumed)),
        _ => None,
    })
}

/// The new process took ann's session up: her id and name, her mover (which it now
/// drives: the server's copy moves with it), and no second session.
fn assert_ann_is_back(s: &mut Scenario, again: usize, claim: &SessionClaim, mover: NetId) {
    let ann = claim.client();
    assert_eq!(
        joined(&s.clients[again].events),
        Some((ann, "ann".to_owned(), true))
    );
    assert!(s.server.events.contains(&NetEvent::ClientResumed {
        client: ann,
        name: "ann".into(),
        restarted: true,
    }));
    let joins = s
        .server
        .events
        .iter()
        .filter(|e| matches!(e, NetEvent::ClientJoined { .. }))
        .count();
    assert_eq!(joins, 1, "a second session was opened");
    assert_eq!(s.server.net.sessions().len(), 1);
    s.run_for(2.0);
    let theirs = s.clients[again].group.by_net(mover).map(|e| e.owner());
    assert_eq!(
        theirs,
        Some(Owner::Client(ann)),
        "the world brought ann's mover"
    );
    let movers = |g: &EntityGroup| {
        g.iter()
            .filter(|e| e.kind() == KindId::of_name(demo::MOVER))
            .count()
    };
    assert_eq!(movers(&s.server.group), 1);
    assert_eq!(movers(&s.clients[again].group), 1);
    let at = s.server.pos(mover).expect("the server keeps the mover");
    s.run_for(2.0);
    let moved = (s.server.pos(mover).expect("still there") - at).length();
    assert!(
        moved > 1.0,
        "the new process does not drive ann's mover: it moved {moved} m in 2 s"
    );
    let here = s.clients[again].pos(mover).expect("the new process has it");
    let gap = (s.server.pos(mover).expect("still there") - here).length();
    assert!(
        gap < 1.0,
        "the server's copy trails the new process's by {gap} m"
    );
}

#[test]
fn a_client_started_again_before_the_server_noticed_plays_on_as_itself() {
    let (mut s, claim, mover) = ann_with_a_mover();
    // The new process reads the claim from the file the old one wrote.
    let read = SessionClaim::parse(&claim.to_text()).expect("its own text");
    // Well inside the 5 s timeout: the server still takes ann's session for live.
    let again = restart_ann(&mut s, &read, 1.0);
    assert_ann_is_back(&mut s, again, &claim, mover);
    // Her new game's goodbye ends the session at once.
    let c = &mut s.clients[again];
    c.net.disconnect(&mut c.group);
    s.run_for(0.5);
    let left = s.server.events.iter().find_map(|e| match e {
        NetEvent::ClientLeft { client, reason, .. } if *client == claim.client() => {
            Some(reason.clone())
        }
        _ => None,
    });
    assert_eq!(left, Some(DisconnectReason::Left));
}

#[test]
fn a_client_started_again_inside_the_grace_window_plays_on_as_itself() {
    let (mut s, claim, mover) = ann_with_a_mover();
    let again = restart_ann(&mut s, &claim, 9.0);
    assert!(
        s.server.events.iter().any(|e| matches!(
            e,
            NetEvent::ClientSuspended { client, .. } if *client == claim.client()
        )),
        "the server never suspended the dead process's session"
    );
    assert_ann_is_back(&mut s, again, &claim, mover);
}

#[test]
fn a_claim_that_comes_after_the_grace_window_joins_anew() {
    let (mut s, claim, mover) = ann_with_a_mover();
    let again = restart_ann(&mut s, &claim, 30.0);
    let (id, name, resumed) = joined(&s.clients[again].events).expect("joined");
    assert!(!resumed);
    assert_ne!(id, claim.client());
    assert_eq!(name, "ann", "the expired session's name is free again");
    assert!(
        s.server.group.by_net(mover).is_none(),
        "the expired session's mover stayed"
    );
}
