//! Smooth drawing on the hub with a virtual clock: one clock for arrivals and drawing,
//! whatever time a client spent joining; states brought forward on a slow link, and the
//! session still replaying bit for bit.

use lanyard::interp::Smoother;
use lanyard::prelude::*;
use lanyard::replay::Replay;
use lanyard_demo as demo;
use lanyard_net::{Conditions, NetConfig};
use lanyard_tests::demo_registry;
use lanyard_tests::scenario::{DemoScenario, Scenario, crates_and_balls, player};

fn link(latency: f32, jitter: f32, loss: f32) -> Conditions {
    Conditions {
        latency,
        jitter,
        loss,
        ..Conditions::PERFECT
    }
}

/// A client whose link is cut for its first two seconds joins late: its world starts
/// ticking long after its process did. The window used to count its own frames for the
/// render clock, and drew everything those two seconds off. The smoother reads the
/// world's ticks for both the arrivals and the drawing, so the time it shows stays tied
/// to what arrives: never ahead of the newest stamp by more than extrapolation allows,
/// never further behind it than the largest delay plus the link.
#[test]
fn arrivals_and_drawing_run_on_one_clock_even_after_a_slow_join() {
    let mut s = Scenario::over(link(0.008, 0.006, 0.01), 3, |g| {
        crates_and_balls(g, 10);
        g.spawn(demo::MOVER, &player(0.0, 5, 600), Owner::Server)
            .unwrap();
    });
    s.add_client(NetConfig::default(), "late", None);
    s.clients[0].cut = true;
    let mut smoother = Smoother::new(20.0);
    let mut frames_drawn = 0u32;
    let mut checked = 0;
    let mut newest: Option<f64> = None;
    for step in 0..(8 * 60) {
        if step == 120 {
            s.clients[0].cut = false;
        }
        s.step();
        let c = &s.clients[0];
        smoother.after_frame(&c.group, c.net.remote_time());
        let dt = f64::from(c.group.config().dt);
        assert_eq!(
            smoother.local_time(),
            c.group.tick() as f64 * dt,
            "arrivals are stamped on the world's clock"
        );
        // A frame drawn half a tick into the next tick.
        let shown = smoother.advance(&c.group, 0.5);
        frames_drawn += 1;
        assert_eq!(
            smoother.local_time(),
            (c.group.tick() as f64 + 0.5) * dt,
            "and drawn on it"
        );
        if let Some(r) = c.net.remote_time() {
            newest = Some(newest.map_or(r, |n: f64| n.max(r)));
        }
        let (Some(shown), Some(newest)) = (shown, newest) else {
            continue;
        };
        let behind = newest - shown;
        let max = smoother.clock().config().max_delay;
        assert!(
            (-0.05..=max + 0.1).contains(&behind),
            "at step {step} the shown time is {behind} s behind the newest stamp"
        );
        checked += 1;
    }
    assert!(checked > 200, "only {checked} frames had state to check");
    let c = &s.clients[0];
    let world_time = c.group.tick() as f64 / 60.0;
    let counted = f64::from(frames_drawn) / 60.0;
    assert!(
        counted - world_time > 1.5,
        "the join took time ({counted} s of frames, {world_time} s of world)"
    );
    // Everything the client drew came from the server's poses, at the delay the link asks.
    let delay = smoother.clock().delay();
    assert!(
        (0.05..0.2).contains(&delay),
        "a Wi-Fi link's render delay: {delay}"
    );
}

/// Over a slow link the client brings the server's states forward (the lead), and a
/// recording of that client replays bit for bit, the lead included.
#[test]
fn a_client_that_brings_states_forward_replays_bit_exact() {
    let mut s = Scenario::over(link(0.08, 0.01, 0.0), 5, |g| crates_and_balls(g, 20));
    s.add_client(NetConfig::default(), "ann", None);
    s.add_client(NetConfig::default(), "far", None);
    s.clients[1].group.start_recording("pit", "far").unwrap();
    s.join_within(5.0);
    s.give_player(0, &player(0.0, 9, 400));
    s.run_for(6.0);
    let g = &mut s.clients[1].group;
    assert!(
        g.lead_ticks() >= 4,
        "an 80 ms link leads by about 5 ticks: {}",
        g.lead_ticks()
    );
    let bytes = g.take_recording().expect("recording");
    let mut r = Replay::open(&bytes, demo_registry()).unwrap();
    assert_eq!(r.verify(|_, _| {}).unwrap(), None, "the replay diverged");
    assert_eq!(r.group().state_hash(), g.state_hash());
    assert_eq!(r.group().lead_ticks(), g.lead_ticks());
}
