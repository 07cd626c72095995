//! Self-loopback: on the authority, an entity changes only through its own packet fed back
//! through decode and its client path.

use lanyard::demo::{self, Mover, MoverParams};
use lanyard::prelude::*;
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

#[test]
fn mover_moves_through_the_loopback() {
    let (mut g, id) = floating_mover(true);
    let start = g.get(id).unwrap().body().translation();
    for _ in 0..60 {
        let report = g.frame();
        assert_eq!(report.sections_written, 1);
        assert_eq!(report.sections_applied, 1);
    }
    let end = g.get(id).unwrap().body().translation();
    assert!(
        (end - start).length() > 1.0,
        "moved only {}",
        (end - start).length()
    );
    assert_ne!(g.controller::<Mover>(id).unwrap().target(), Vec3::ZERO);
}

#[test]
fn mover_does_not_move_without_the_loopback() {
    let (mut g, id) = floating_mover(false);
    let start = g.get(id).unwrap().body().translation();
    for _ in 0..60 {
        let report = g.frame();
        // The server path still decides and writes every frame...
        assert_eq!(report.sections_written, 1);
        // ...but nothing feeds it back, so the client path never hears of it.
        assert_eq!(report.sections_applied, 0);
    }
    assert_eq!(g.get(id).unwrap().body().translation(), start);
    assert_eq!(g.controller::<Mover>(id).unwrap().target(), Vec3::ZERO);
}

#[test]
fn the_written_packet_applied_by_hand_moves_it_like_the_loopback() {
    // Drive the frame's steps one by one, as the network layer does, and compare with
    // `frame()`: the loopback is nothing more than this.
    let (mut by_hand, a) = floating_mover(false);
    let (mut looped, b) = floating_mover(true);
    for _ in 0..30 {
        let packet = by_hand.write_sections().to_vec();
        by_hand.receive_sections(&packet, Owner::Server);
        by_hand.run_client_paths();
        by_hand.apply_commands();
        by_hand.step_physics();
        looped.frame();
    }
    assert_eq!(
        by_hand.get(a).unwrap().body().translation(),
        looped.get(b).unwrap().body().translation()
    );
    assert_eq!(by_hand.state_hash(), looped.state_hash());
}
