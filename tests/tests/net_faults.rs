//! A controller that panics, or refuses a section, on input from the network: the server
//! keeps running, the client whose section did it is disconnected with a reason, everyone
//! else keeps playing, and the frame report says what happened, naming the kind.

use lanyard::codec::{Section, SectionWriter};
use lanyard::prelude::*;
use lanyard::{Blueprint, Hook, KindOptions, KindRegistry, Shape, Visual};
use lanyard_demo as demo;
use lanyard_net::{DisconnectReason, NetConfig, NetEvent};
use lanyard_tests::scenario::{DemoScenario, Scenario, add_scenery, crates_and_balls};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

const FRAGILE: &str = "test.fragile";

#[derive(Serialize, Deserialize)]
struct FragileParams {
    x: f32,
}

/// Reads a byte from its section and looks it up in a table of four, unchecked: a bug
/// waiting for a modified client. Its owner's server path sends `value`.
#[derive(Default)]
struct Fragile {
    value: u8,
    table: [u8; 4],
}

impl Controller for Fragile {
    fn server_update(
        &mut self,
        _me: EntityRef<'_>,
        _w: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    ) {
        out.u8(self.value);
    }

    fn client_update(
        &mut self,
        _me: &mut Entity,
        section: Option<Section<'_>>,
        _ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        if let Some(s) = section {
            let mut r = s.reader();
            let i = r.u8()?;
            if i == 200 {
                return Err(Error::Codec(lanyard::CodecError::InvalidValue(
                    "fragile index",
                )));
            }
            r.finish()?;
            // Panics for i >= 4: "index out of bounds".
            self.value = self.table[usize::from(i)];
        }
        Ok(())
    }
}

fn registry() -> Arc<KindRegistry> {
    let mut r = KindRegistry::new();
    demo::register(&mut r).unwrap();
    let options = KindOptions {
        client_spawnable: true,
        ..KindOptions::default()
    };
    r.register_with(FRAGILE, options, |p: &FragileParams| Blueprint {
        body: RigidBodyBuilder::fixed()
            .translation(Vec3::new(p.x, 0.5, 0.0))
            .build(),
        colliders: vec![ColliderBuilder::cuboid(0.2, 0.2, 0.2).build()],
        visual: Visual {
            shape: Shape::Cuboid {
                half_extents: [0.2; 3],
            },
            color: [255; 4],
        },
        controller: Box::new(Fragile::default()),
    })
    .unwrap();
    Arc::new(r)
}

fn fragile_of(s: &Scenario, client: usize) -> Option<EntityId> {
    let c = &s.clients[client];
    let me = c.net.client_id().map(Owner::Client)?;
    c.group
        .iter()
        .find(|e| e.owner() == me && c.group.registry().name_of(e.kind()) == Some(FRAGILE))
        .map(|e| e.id())
}

/// Client 0 spawns a fragile entity, waits for the server to confirm it, and from then on
/// sends `value` in its sections. Returns the index of the server's next frame report.
fn fragile_sends(s: &mut Scenario, value: u8) -> usize {
    s.clients[0]
        .group
        .request_spawn(FRAGILE, &FragileParams { x: 2.0 })
        .unwrap();
    let n = s.server.group.len();
    assert!(s.run_until(3.0, |s| s.server.group.len() > n));
    s.run_for(0.2);
    let id = fragile_of(s, 0).unwrap();
    s.clients[0]
        .group
        .controller_mut::<Fragile>(id)
        .unwrap()
        .value = value;
    s.server.frames.len()
}

#[test]
fn a_client_whose_section_makes_a_controller_panic_is_disconnected_and_the_server_plays_on() {
    let mut s = Scenario::with_registry(
        registry(),
        add_scenery,
        NetConfig::default(),
        None,
        60.0,
        |g| {
            crates_and_balls(g, 6);
            g.spawn(
                demo::MOVER,
                &lanyard_tests::scenario::player(0.0, 3, 600),
                Owner::Server,
            )
            .unwrap();
        },
    );
    s.add_client(NetConfig::default(), "mallory", None);
    s.add_client(NetConfig::default(), "bob", None);
    s.join_within(3.0);
    // Mallory's modified client sends an index past the table. (Her own client path
    // panics on it too: that is her problem, caught there.)
    let before = fragile_sends(&mut s, 9);
    s.run_for(1.0);
    let faults: Vec<_> = server_reports(&s, before, |f| f.faults.clone());
    assert!(!faults.is_empty(), "the server caught the panic");
    let f = &faults[0];
    assert_eq!(f.kind, FRAGILE, "named by its kind");
    assert_eq!(f.hook, Hook::ClientPath { section: true });
    assert!(f.message.contains("index out of bounds"), "{}", f.message);
    assert!(f.to_string().contains("test.fragile"));
    // Mallory is gone, saying why; bob stays and keeps getting the world.
    assert!(
        s.server.events.iter().any(|e| matches!(
            e,
            NetEvent::ClientLeft { reason: DisconnectReason::Kicked { reason }, .. }
                if reason.contains("test.fragile") && reason.contains("panic")
        )),
        "{:?}",
        s.server.events
    );
    assert!(!s.clients[0].net.is_connected());
    assert!(s.clients[1].net.is_connected());
    let mover_on_bob = |s: &Scenario| {
        let g = &s.clients[1].group;
        g.iter()
            .find(|e| g.registry().name_of(e.kind()) == Some(demo::MOVER))
            .map(|e| e.body().translation())
    };
    let a = mover_on_bob(&s).unwrap();
    s.run_for(1.0);
    let b = mover_on_bob(&s).unwrap();
    assert!(a.distance(b) > 0.1, "bob's world still moves: {a} -> {b}");
    assert!(s.server.net.is_server());
}

#[test]
fn the_frame_report_carries_a_refused_sections_error_with_the_kinds_name() {
    let mut s = fragile_world();
    s.add_client(NetConfig::default(), "ann", None);
    s.join_within(3.0);
    let before = fragile_sends(&mut s, 200);
    s.run_for(0.5);
    let errors = server_reports(&s, before, |f| f.section_errors.clone());
    let e = errors.first().expect("the refusal reached the report");
    assert_eq!(e.kind, FRAGILE);
    assert_eq!(
        e.error,
        Error::Codec(lanyard::CodecError::InvalidValue("fragile index"))
    );
    assert!(
        e.to_string().starts_with("test.fragile "),
        "named by its kind: {e}"
    );
    assert!(
        s.clients[0].net.is_connected(),
        "a refusal alone ends nothing"
    );
}

#[test]
fn a_client_whose_world_lacks_a_kind_is_refused_naming_it() {
    let mut s = fragile_world();
    // Built from an older game: the demo kinds, without the fragile one.
    s.add_client_with(
        lanyard_tests::demo_registry(),
        NetConfig::default(),
        "old",
        None,
    );
    s.run_for(1.0);
    let reason = s.clients[0]
        .events
        .iter()
        .find_map(|e| match e {
            NetEvent::Rejected { reason } => Some(reason.clone()),
            _ => None,
        })
        .expect("refused");
    assert_eq!(
        reason,
        lanyard_net::RejectReason::KindMismatch {
            kind: FRAGILE.into(),
            server_has_it: true
        }
    );
    let said = reason.to_string();
    assert!(said.contains("'test.fragile'"), "{said}");
    assert!(!s.clients[0].net.is_connected());
    // And the other way round: a client with a kind the server lacks.
    let mut s = Scenario::new(NetConfig::default(), None, 60.0, |g| crates_and_balls(g, 2));
    s.add_client_with(registry(), NetConfig::default(), "new", None);
    s.run_for(1.0);
    assert!(s.clients[0].events.iter().any(|e| matches!(
        e,
        NetEvent::Rejected {
            reason: lanyard_net::RejectReason::KindMismatch { kind, server_has_it: false }
        } if kind == FRAGILE
    )));
}

/// What the server's frames from `before` on reported, by `what`.
fn server_reports<T>(
    s: &Scenario,
    before: usize,
    what: impl Fn(&lanyard::FrameReport) -> Vec<T>,
) -> Vec<T> {
    s.server.frames[before..]
        .iter()
        .flat_map(|f| what(&f.frame))
        .collect()
}

/// A server with the fragile kind registered too, and a few crates and balls.
fn fragile_world() -> Scenario {
    let config = NetConfig::default();
    let world = |g: &mut EntityGroup| crates_and_balls(g, 2);
    Scenario::with_registry(registry(), add_scenery, config, None, 60.0, world)
}
