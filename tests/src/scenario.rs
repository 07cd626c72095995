//! The project's own multi-peer scenarios: [`lanyard_net::harness`] (which users import
//! too) with the demo kinds and the demo pit.

use crate::demo_registry;
use lanyard::SpawnTicket;
use lanyard::prelude::*;
use lanyard_demo as demo;
pub use lanyard_net::harness::{Peer, Scenario, Stranger, Stuck, entropy, hub_addr, stranger_addr};
use lanyard_net::{Conditions, DisconnectReason, NetConfig, NetEvent};
use std::sync::Arc;

/// Scenarios of the demo kinds: `Scenario::new(...)` with this trait in scope.
pub trait DemoScenario {
    /// A server of the demo kinds whose world `world` builds, on a hub with `conditions`
    /// (seeded), at `fps` frames a second; clients load the demo pit.
    fn new(
        config: NetConfig,
        conditions: Option<(Conditions, u64)>,
        fps: f32,
        world: impl FnOnce(&mut EntityGroup),
    ) -> Self;

    /// [`new`](Self::new) with the default configuration at 60 frames a second, over a
    /// link with `conditions` seeded with `seed`.
    fn over(conditions: Conditions, seed: u64, world: impl FnOnce(&mut EntityGroup)) -> Self;

    /// Runs until every client joined, failing the test if that takes over `within` s.
    fn join_within(&mut self, within: f32);

    /// Asks client `client` for a mover of `params` (its player): the spawn's ticket.
    fn give_player(&mut self, client: usize, params: &demo::MoverParams) -> SpawnTicket;

    /// Whether client `client` heard that its session ended for `reason`.
    fn heard_lost(&self, client: usize, reason: DisconnectReason) -> bool;

    /// Asserts that client 0's entities went as their kinds say, on the server and on
    /// client 1: its `mover` is gone, its `ball` is the server's.
    fn assert_went_as_kinds_say(&self, mover: NetId, ball: NetId);
}

impl DemoScenario for Scenario {
    fn new(
        config: NetConfig,
        conditions: Option<(Conditions, u64)>,
        fps: f32,
        world: impl FnOnce(&mut EntityGroup),
    ) -> Self {
        Scenario::with_registry(demo_registry(), add_scenery, config, conditions, fps, world)
    }

    fn over(conditions: Conditions, seed: u64, world: impl FnOnce(&mut EntityGroup)) -> Self {
        Self::new(NetConfig::default(), Some((conditions, seed)), 60.0, world)
    }

    fn join_within(&mut self, within: f32) {
        assert!(
            self.run_until(within, |s| s.all_joined()),
            "not every client joined within {within} s"
        );
    }

    fn give_player(&mut self, client: usize, params: &demo::MoverParams) -> SpawnTicket {
        self.clients[client]
            .group
            .request_spawn(demo::MOVER, params)
            .expect("a mover is a registered kind")
    }

    fn heard_lost(&self, client: usize, reason: DisconnectReason) -> bool {
        let lost = NetEvent::ConnectionLost { reason };
        self.clients[client].events.contains(&lost)
    }

    fn assert_went_as_kinds_say(&self, mover: NetId, ball: NetId) {
        for (who, g) in [
            ("server", &self.server.group),
            ("client 1", &self.clients[1].group),
        ] {
            assert!(g.by_net(mover).is_none(), "{who} still has the mover");
            let owner = g.by_net(ball).map(|e| e.owner());
            assert_eq!(
                owner,
                Some(Owner::Server),
                "{who}: the ball was not handed over"
            );
        }
    }
}

/// The scene's scenery, which every peer loads for itself: a 40 m pit.
pub fn add_scenery(group: &mut EntityGroup) {
    for c in demo::pit(20.0) {
        group.add_scenery(c);
    }
}

/// The server's world: the scenery and a pile of `n` crates and balls.
pub fn crates_and_balls(group: &mut EntityGroup, n: usize) {
    pile(group, n, |i| i % 4 == 0);
}

/// [`crates_and_balls`] with its balls in the top layer only. Below, a crate lands on a ball
/// exactly centred and stays balanced there, on the server; a client's copy (its poses
/// to the millimetre) falls the first time anything wakes it, and a tower rebuilt body
/// by body by corrections falls again: a pile that cannot converge anywhere but where it
/// was never touched.
pub fn crates_with_balls_on_top(group: &mut EntityGroup, n: usize) {
    let top = n.saturating_sub(1) / 25;
    pile(group, n, |i| i % 4 == 0 && i / 25 == top);
}

/// `n` bodies in layers of 5 by 5, a ball where `ball` says and a crate elsewhere.
fn pile(group: &mut EntityGroup, n: usize, ball: impl Fn(usize) -> bool) {
    add_scenery(group);
    for i in 0..n {
        let pos = [
            (i % 5) as f32 * 2.0 - 4.0,
            0.6 + (i / 25) as f32 * 1.2,
            ((i / 5) % 5) as f32 * 2.0 - 4.0,
        ];
        let r = if ball(i) {
            group.spawn(
                demo::BALL,
                &demo::BallParams {
                    pos,
                    radius: 0.4,
                    restitution: 0.3,
                    color: [255; 4],
                },
                Owner::Server,
            )
        } else {
            group.spawn(
                demo::CRATE,
                &demo::CrateParams {
                    pos,
                    half_extents: [0.5; 3],
                    color: [255; 4],
                    can_sleep: true,
                },
                Owner::Server,
            )
        };
        r.expect("demo kinds spawn");
    }
}

/// Mover parameters for a client's "player": it wanders for `ticks` ticks, then stops.
pub fn player(x: f32, seed: u64, ticks: u32) -> demo::MoverParams {
    demo::MoverParams {
        pos: [x, 0.6, 12.0],
        half_extents: [0.5, 0.5, 0.5],
        seed,
        speed: 3.0,
        period: 40,
        moves_for: ticks,
    }
}

/// A server of `registry`'s kinds with the demo's planetoid and `n` asteroids
/// ([`demo::asteroids::field`] of `seed`) in a world with no gravity, on a hub with
/// `conditions`, at 60 frames a second; its clients add the planetoid too.
pub fn asteroid_field(
    registry: Arc<KindRegistry>,
    config: NetConfig,
    conditions: Option<(Conditions, u64)>,
    (n, seed): (usize, u64),
) -> Scenario {
    use demo::asteroids::{self, ASTEROID};
    let planetoid = |g: &mut EntityGroup| {
        g.add_scenery(asteroids::planetoid());
    };
    Scenario::with_registry(registry, planetoid, config, conditions, 60.0, |g| {
        g.set_gravity(Vec3::ZERO)
            .expect("zero gravity is a gravity");
        for p in asteroids::field(n, seed) {
            g.spawn(ASTEROID, &p, Owner::Server)
                .expect("asteroids spawn");
        }
    })
}

/// The demo's kinds, with asteroids written as plain pose deltas: nobody predicts them.
pub fn unpredicted_registry() -> Arc<KindRegistry> {
    let mut registry = KindRegistry::new();
    demo::register(&mut registry).expect("demo kinds register once");
    registry
        .set_delta_codec(demo::asteroids::ASTEROID, lanyard::delta::PoseDelta)
        .expect("asteroids are registered");
    Arc::new(registry)
}

/// The largest state age (the 95th percentile's and the oldest's, ms) the server reports
/// for client `client` over the next `frames` frames.
pub fn worst_state_age(s: &mut Scenario, client: lanyard::ClientId, frames: usize) -> (f32, f32) {
    let mut worst = (0.0f32, 0.0f32);
    for _ in 0..frames {
        s.step();
        let st = s.server.net.peer_stats(client).expect("connected");
        worst = (
            worst.0.max(st.state_age_p95_ms),
            worst.1.max(st.state_age_max_ms),
        );
    }
    worst
}
