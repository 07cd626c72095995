//! The smoother's render clock, fed as a game feeds it.

use lanyard::interp::Smoother;
use lanyard::prelude::*;
use lanyard_demo::{self as demo, CrateParams};
use std::sync::Arc;

#[test]
fn the_clock_learns_the_authoritys_interval_after_stamping_its_own_frames() {
    // Until the first state from an authority arrives, what a peer observes is stamped
    // with its own clock, a frame apart (here a group's own loopback). Once the authority's
    // stamps come, 50 ms apart, the clock must read 50 ms, not the frame it learned first:
    // it sizes the render delay, and says how long a body at rest was held.
    let mut r = KindRegistry::new();
    demo::register(&mut r).unwrap();
    let mut g = EntityGroup::new(Arc::new(r), GroupConfig::default());
    let params = CrateParams {
        pos: [0.0, 0.5, 0.0],
        half_extents: [0.5; 3],
        color: [0, 0, 0, 255],
        can_sleep: false,
    };
    g.spawn(demo::CRATE, &params, Owner::Server).unwrap();
    let mut smoother = Smoother::new(20.0);
    for _ in 0..60 {
        g.frame();
        smoother.after_frame(&g, None);
    }
    let own = smoother.clock().config().interval;
    assert!(own < 0.02, "stamped a frame apart, the clock read {own} s");
    let mut stamp = 100.0;
    for i in 0..90 {
        g.frame();
        let remote = i % 3 == 0;
        if remote {
            stamp += 0.05;
        }
        smoother.after_frame(&g, remote.then_some(stamp));
    }
    let interval = smoother.clock().config().interval;
    assert!(
        (interval - 0.05).abs() < 0.005,
        "the authority's interval read as {interval} s"
    );
}
