//! Self-loopback: on the authority, an entity changes only through its own packet fed back
//! through decode and its client path.

mod common;

use common::Feed;
use lanyard::prelude::*;
use lanyard_demo::{self as demo, Mover, MoverParams};
use std::sync::Arc;

fn floating_mover(loopback: bool) -> (EntityGroup, EntityId) {
    let mut r = KindRegistry::new();
    demo::register(&mut r).unwrap();
    let mut g = EntityGroup::new(
        Arc::new(r),
        GroupConfig {
            gravity: Vec3::ZERO,
            loopback,
            ..GroupConfig::default()
        },
    );
    let params = MoverParams {
        pos: [0.0, 5.0, 0.0],
        half_extents: [0.5, 0.5, 0.5],
        seed: 3,
        speed: 5.0,
        period: 20,
        moves_for: 0,
    };
    let id = g.spawn(demo::MOVER, &params, Owner::Server).unwrap();
    (g, id)
}

/// Runs a floating mover for a second, checking every frame wrote its section and applied
/// `applied` of them; returns the group, the mover, and how far it moved.
fn second_of(loopback: bool, applied: usize) -> (EntityGroup, EntityId, f32) {
    let (mut g, id) = floating_mover(loopback);
    let start = g.get(id).unwrap().body().translation();
    for _ in 0..60 {
        let report = g.frame();
        assert_eq!(
            (report.sections_written, report.sections_applied),
            (1, applied)
        );
    }
    let moved = (g.get(id).unwrap().body().translation() - start).length();
    (g, id, moved)
}

#[test]
fn mover_moves_through_the_loopback() {
    let (g, id, moved) = second_of(true, 1);
    assert!(moved > 1.0, "moved only {moved}");
    assert_ne!(g.controller::<Mover>(id).unwrap().target(), Vec3::ZERO);
}

#[test]
fn mover_does_not_move_without_the_loopback() {
    // The server path still decides and writes every frame, but nothing feeds it back, so
    // the client path never hears of it.
    let (g, id, moved) = second_of(false, 0);
    assert_eq!(moved, 0.0);
    assert_eq!(g.controller::<Mover>(id).unwrap().target(), Vec3::ZERO);
}

#[test]
fn a_group_fed_the_servers_packet_every_frame_follows_it_bit_for_bit() {
    // The loopback is nothing more than receiving the packet the server paths wrote: a
    // second group that runs no server path of its own and is handed that packet every
    // frame stays bit-identical to the server.
    let (mut server, a) = floating_mover(true);
    let (mut mirror, b) = floating_mover(true);
    for _ in 0..30 {
        let mut capture = Feed::with_server_paths();
        server.run_frame(&mut capture);
        let (report, received) = Feed::packet(&mut mirror, &capture.outbound, Owner::Server);
        assert_eq!((received.accepted, report.sections_applied), (1, 1));
    }
    assert_eq!(
        server.get(a).unwrap().body().translation(),
        mirror.get(b).unwrap().body().translation()
    );
    assert_eq!(server.state_hash(), mirror.state_hash());
}

/// A pushable box at 3 m.
fn pushable() -> demo::CrateParams {
    demo::CrateParams {
        pos: [0.0, 3.0, 0.0],
        half_extents: [0.5; 3],
        color: [255; 4],
        can_sleep: false,
    }
}

/// A server's group with `config` in which client 1 holds a pushable box: the group and
/// the box.
fn holding(config: GroupConfig) -> (EntityGroup, EntityId) {
    let mut r = KindRegistry::new();
    demo::register(&mut r).unwrap();
    let mut g = EntityGroup::new(Arc::new(r), config);
    g.replica().set_clients([ClientId(1)]);
    let held = g
        .spawn(demo::PUSHABLE, &pushable(), Owner::Client(ClientId(1)))
        .unwrap();
    (g, held)
}

/// On a server, a body a client holds (hand-off) that is shadowed has its server path run
/// too, into the shadow packet: the server's own copy, never looped back nor in the frame's
/// packet.
#[test]
fn a_shadowed_body_s_server_path_writes_the_server_s_copy_on_the_side() {
    let (mut g, held) = holding(GroupConfig::default());
    let mine = g.spawn(demo::PUSHABLE, &pushable(), Owner::Server).unwrap();
    let (held_net, mine_net) = (g.get(held).unwrap().net_id(), g.get(mine).unwrap().net_id());

    g.frame();
    assert_eq!(g.shadow_packet().section_count(), 0, "nothing shadowed yet");

    g.replica().set_shadowed([held_net]);
    let before = lanyard::pose::PoseState::of(g.get(held).unwrap().body());
    g.frame();
    let shadow: Vec<_> = g.shadow_packet().sections().collect();
    assert_eq!(shadow.len(), 1);
    assert_eq!(shadow[0].net_id, held_net);
    let mut r = shadow[0].reader();
    let pose = lanyard::pose::PoseState::read(&mut r).unwrap();
    assert!(
        pose.pos.distance(before.pos) < 0.001,
        "{pose:?} against {before:?}"
    );
    // The frame's own packet has the server's bodies only, and the shadowed body took no
    // section of its own through the loopback.
    let own: Vec<_> = g.last_packet().sections().map(|s| s.net_id).collect();
    assert_eq!(own, vec![mine_net]);
    assert!(g.observed_poses().iter().all(|o| o.id != held));
}

/// When a holder's section moves the server's copy of a body it holds (the first after a
/// claim comes a one-way trip late, tens of centimetres ahead on a bad link), the server's
/// world takes it at once, but the copy sent to the other clients (the shadow packet)
/// eases there: from where it was shown, never faster than `ease::EASE_SPEED` more than
/// the body moves.
#[test]
fn a_shadowed_copy_eases_from_where_it_was_to_where_the_holder_put_it() {
    use lanyard::pose::PoseState;
    let config = GroupConfig {
        gravity: Vec3::ZERO,
        ..GroupConfig::default()
    };
    let dt = config.dt;
    let (mut g, held) = holding(config);
    let holder = Owner::Client(ClientId(1));
    let net = g.get(held).unwrap().net_id();
    // Floating: no gravity moves it, so every motion here is the holder's or the easing's.
    g.replica().set_shadowed([net]);
    g.frame();
    let shown = |g: &EntityGroup| {
        let s = g.shadow_packet().sections().next().unwrap();
        PoseState::read(&mut s.reader()).unwrap().pos
    };
    let was = shown(&g);
    // The holder has it half a metre along, at rest.
    let there = PoseState {
        pos: was + Vec3::new(0.5, 0.0, 0.0),
        ..PoseState::of(g.get(held).unwrap().body())
    };
    let mut bytes = Vec::new();
    there.write(&mut SectionWriter::new(&mut bytes));
    let mut feed = Feed::with_server_paths();
    feed.sections.push((net, bytes, holder));
    g.run_frame(&mut feed);
    let body = g.get(held).unwrap().body().translation();
    assert!(
        body.distance(there.pos) < 0.01,
        "the world took it: {body:?}"
    );
    let mut path = vec![was, shown(&g)];
    for _ in 0..60 {
        g.frame();
        path.push(shown(&g));
        // What the group says it wrote of the copy is what the packet carries.
        let said = g.shadow_poses();
        assert_eq!(said.len(), 1);
        assert_eq!(said[0].0, net);
        assert!(said[0].1.distance(shown(&g)) < 0.001, "{said:?}");
    }
    let most = path
        .windows(2)
        .map(|w| w[0].distance(w[1]))
        .fold(0.0, f32::max);
    // Written to the millimetre: a frame's step may read a millimetre more.
    assert!(
        most <= lanyard::ease::EASE_SPEED * dt + 0.002,
        "a frame moved the copy {most} m: {path:?}"
    );
    assert!(
        path[1].distance(was) < 0.04,
        "shown near where it was: {path:?}"
    );
    assert!(
        path.last().unwrap().distance(there.pos) < 0.002,
        "then where the holder put it: {path:?}"
    );
}
