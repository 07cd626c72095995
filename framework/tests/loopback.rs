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

#[test]
fn the_authority_passes_over_its_own_pose_and_observes_the_body_exactly() {
    // A crate floats where no millimetre grid puts it. On the server its own section comes
    // back looped and is passed over: the pose it observes is the body's, exact. A group
    // handed the same packet from outside decodes it: the pose it observes is quantized.
    let floating_crate = || {
        let mut r = KindRegistry::new();
        demo::register(&mut r).unwrap();
        let config = GroupConfig {
            gravity: Vec3::ZERO,
            ..GroupConfig::default()
        };
        let mut g = EntityGroup::new(Arc::new(r), config);
        let params = demo::CrateParams {
            pos: [0.123_456, 2.0, -0.765_432],
            half_extents: [0.5; 3],
            color: [0, 0, 0, 255],
            can_sleep: false,
        };
        let id = g.spawn(demo::CRATE, &params, Owner::Server).unwrap();
        (g, id)
    };
    let (mut server, a) = floating_crate();
    let (mut mirror, _) = floating_crate();
    let mut capture = Feed::with_server_paths();
    server.run_frame(&mut capture);
    Feed::packet(&mut mirror, &capture.outbound, Owner::Server);
    let seen = |g: &EntityGroup| {
        let [o] = g.observed_poses() else {
            panic!("one observed pose, not {}", g.observed_poses().len())
        };
        o.authority.pos
    };
    let exact = server.get(a).unwrap().body().translation();
    assert_eq!(seen(&server), exact);
    assert_eq!(seen(&mirror), Vec3::new(0.123, 2.0, -0.765));
}
