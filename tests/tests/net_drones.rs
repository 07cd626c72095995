//! Prediction with nothing to opt into: drones under gravity, each holding its own target
//! height, predicted by both ends through their kind's motion and rapier's free flight;
//! and a kind whose client path does more than its motion says is warned about by name.
//! On the in-memory hub with a virtual clock.

use lanyard::codec::{Section, SectionWriter};
use lanyard::prelude::*;
use lanyard_demo::drones::{self, DRONE, Drone, DroneParams};
use lanyard_net::{NetConfig, NetEvent, PeerStats};
use lanyard_tests::scenario::{DemoScenario, Scenario};
use std::sync::Arc;

/// 30 broadcasts a second, and a budget nothing fills.
fn config() -> NetConfig {
    NetConfig {
        rate: 30.0,
        budget: 1_000_000,
        ..NetConfig::default()
    }
}

/// A drone written the way a kind was before motions: it lifts itself in its client path
/// and declares no motion, so the prediction lets it fall.
struct Lying(Drone);

impl Controller for Lying {
    fn server_update(&mut self, me: EntityRef<'_>, w: &WorldView<'_>, out: &mut SectionWriter<'_>) {
        self.0.server_update(me, w, out);
    }

    fn client_update(
        &mut self,
        me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        self.0.client_update(me, section, ctx)?;
        let mut s = lanyard::pose::PoseState::of(ctx.body());
        drones::lift(self.0.target_height, &mut Steer::state(&mut s, ctx.dt()));
        ctx.set_linvel(s.linvel);
        Ok(())
    }
}

/// A server with `n` drones (of the lying kind if `lying`) in the default gravity, and
/// one joined client.
fn swarm(n: usize, lying: bool) -> Scenario {
    let mut r = KindRegistry::new();
    drones::register(&mut r).unwrap();
    r.register("liar", |p: &DroneParams| {
        let d = Drone {
            target_height: p.target_height,
        };
        drones::blueprint(p, Lying(d))
    })
    .unwrap();
    let kind = if lying { "liar" } else { DRONE };
    let mut s = Scenario::with_registry(
        Arc::new(r),
        |_| {},
        config(),
        None,
        60.0,
        |g| {
            for p in drones::swarm(n, 3) {
                g.spawn(kind, &p, Owner::Server).unwrap();
            }
        },
    );
    s.add_client(config(), "ann", None);
    s.join_within(3.0);
    s
}

fn stats(s: &Scenario) -> PeerStats {
    let ann = s.clients[0].net.client_id().expect("joined");
    s.server.net.peer_stats(ann).expect("connected")
}

fn mispredicted(s: &Scenario) -> Vec<(String, u8)> {
    s.server
        .events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Mispredicted { kind, percent } => Some((kind.clone(), *percent)),
            _ => None,
        })
        .collect()
}

#[test]
fn drones_holding_their_own_heights_under_gravity_cost_almost_nothing() {
    let n = 100;
    let mut s = swarm(n, false);
    // Settling toward their heights is motion too: measured from the first second on.
    s.run_for(1.0);
    let before = stats(&s).entries;
    let seconds = 6.0;
    s.run_for(seconds);
    let entries = stats(&s).entries - before;
    let per = entries as f64 / (n as f64 * 30.0 * f64::from(seconds));
    eprintln!("{n} drones, {seconds} s: {entries} entries, {per:.4} per body per broadcast");
    assert!(per <= 0.05, "{per:.4} entries per body per broadcast");
    // And where the client has them is where the server has them.
    let mut worst = 0.0f32;
    for e in s.server.group.iter() {
        let c = s.clients[0]
            .pos(e.net_id())
            .expect("the client has every drone");
        worst = worst.max((e.body().translation() - c).length());
    }
    assert!(
        worst <= 0.01,
        "a client's drone is {worst} m from the server's"
    );
    let st = stats(&s);
    assert!(st.predictions_held > 0);
    assert!(
        mispredicted(&s).is_empty(),
        "honest drones were called mispredicted: {:?}",
        mispredicted(&s)
    );
}

#[test]
fn a_kind_that_steers_in_its_client_path_but_declares_no_motion_is_warned_about_by_name() {
    let mut s = swarm(20, true);
    s.run_for(6.0);
    let warned = mispredicted(&s);
    eprintln!("{warned:?}; {:?}", stats(&s));
    assert_eq!(warned.len(), 1, "warned once: {warned:?}");
    let (kind, percent) = &warned[0];
    assert_eq!(kind, "liar");
    assert!(*percent >= 50, "{percent}%");
    let st = stats(&s);
    assert!(
        st.predictions_missed > st.predictions_held,
        "{} missed, {} held",
        st.predictions_missed,
        st.predictions_held
    );
}

#[test]
fn every_broadcast_reaches_the_client_while_a_prediction_moves_on() {
    // Five drones rising toward their heights follow their predictions: most broadcasts
    // carry no entry, and each must come all the same, or the client would move its
    // predictions on only at the next entry (drawing a stale state until then).
    let mut s = swarm(5, false);
    let before = stats(&s);
    let seconds = 2.0;
    s.run_for(seconds);
    let st = stats(&s);
    let (datagrams, entries) = (
        st.packets_out - before.packets_out,
        st.entries - before.entries,
    );
    let broadcasts = (30.0 * seconds) as u64;
    eprintln!("{datagrams} datagrams, {entries} entries in {broadcasts} broadcasts");
    assert!(
        entries * 2 < broadcasts,
        "{entries} entries: most broadcasts carry one"
    );
    assert!(
        datagrams + 2 >= broadcasts,
        "{datagrams} datagrams for {broadcasts} broadcasts"
    );
}
