//! The world's physics travels with the welcome: a client simulates with the server's
//! gravity and timestep whatever its own group was built with, so it cannot drift from the
//! server between states.

use lanyard::prelude::*;
use lanyard_demo as demo;
use lanyard_net::NetConfig;
use lanyard_tests::scenario::{DemoScenario, Scenario};

/// A server in zero gravity with a ball floating still above the pit's floor, and a client
/// whose group was built with the default gravity (−9.81 m/s²) and another timestep.
fn floating_ball() -> (Scenario, NetId) {
    let mut s = Scenario::new(NetConfig::default(), None, 60.0, |_| {});
    s.server.group.set_gravity(Vec3::ZERO).unwrap();
    let ball = demo::BallParams::new([0.0, 10.0, 0.0], 0.5, 0.2);
    let id = s
        .server
        .group
        .spawn(demo::BALL, &ball, Owner::Server)
        .unwrap();
    let net = s.server.group.get(id).unwrap().net_id();
    s.add_client(NetConfig::default(), "ann", None);
    s.clients[0].group.set_dt(1.0 / 30.0).unwrap();
    assert_eq!(
        s.clients[0].group.config().gravity,
        GroupConfig::default().gravity
    );
    (s, net)
}

#[test]
fn a_client_takes_the_servers_gravity_and_timestep_and_cannot_drift() {
    let (mut s, ball) = floating_ball();
    s.join_within(2.0);
    let (server, client) = (s.server.group.config(), s.clients[0].group.config());
    assert_eq!(
        client.gravity,
        Vec3::ZERO,
        "the client kept its own gravity"
    );
    assert_eq!(client.dt, server.dt, "the client kept its own timestep");
    // The ball never changes, so after its spawn the server only refreshes it every few
    // seconds: between those, the client's own simulation is all there is. Falling at
    // 9.81 m/s² it would be metres off within a second.
    let mut worst: f32 = 0.0;
    for _ in 0..(6 * 60) {
        s.step();
        let at = |g: &EntityGroup| g.by_net(ball).map(|e| e.body().translation());
        if let (Some(a), Some(b)) = (at(&s.server.group), at(&s.clients[0].group)) {
            worst = worst.max((a - b).length());
        }
    }
    assert!(
        s.clients[0].group.by_net(ball).is_some(),
        "the ball never reached the client"
    );
    assert!(
        worst < 0.001,
        "the client's ball drifted {worst} m from the server's"
    );
}
