//! Recording and headless replay: bit-exact replays of standalone and networked sessions,
//! divergence reports that name the right tick, and clear errors for bad files.

use lanyard::Error;
use lanyard::prelude::*;
use lanyard::record::{Op, Recording};
use lanyard::replay::{Replay, Step};
use lanyard_demo as demo;
use lanyard_demo::asteroids::{ASTEROID, AsteroidParams};
use lanyard_net::NetConfig;
use lanyard_tests::scenario::{DemoScenario, Scenario, crates_and_balls, player};
use lanyard_tests::{demo_registry, mixed_scene};

/// A recording taken tick by tick (so one block a tick) and stopped at the end.
fn recorded_scene(ticks: usize) -> Vec<u8> {
    recorded_scene_with(demo_registry(), ticks)
}

/// The demo's kinds with none deciding alone: a recording keeps every section.
fn sectioned() -> std::sync::Arc<KindRegistry> {
    let mut r = KindRegistry::new();
    demo::register(&mut r).unwrap();
    for kind in [
        demo::CRATE,
        demo::PUSHABLE,
        demo::BALL,
        demo::MOVER,
        ASTEROID,
    ] {
        r.set_decides_alone(kind, false).unwrap();
    }
    std::sync::Arc::new(r)
}

/// The mixed scene of `registry`'s kinds, recorded for `ticks` ticks.
fn recorded_scene_with(registry: std::sync::Arc<KindRegistry>, ticks: usize) -> Vec<u8> {
    let mut g = demo::mixed_scene(registry, 120, 3).unwrap();
    g.start_recording("demo pit", "test").unwrap();
    let mut bytes = g.take_recording().expect("recording");
    for t in 0..ticks {
        g.frame();
        if t + 1 < ticks {
            bytes.extend(g.take_recording().expect("recording"));
        }
    }
    bytes.extend(g.stop_recording().unwrap());
    bytes
}

#[test]
fn a_standalone_session_replays_bit_exact() {
    let bytes = recorded_scene(240);
    let mut r = Replay::open(&bytes, demo_registry()).unwrap();
    assert_eq!(r.len(), 240);
    assert_eq!(r.verify(|_, _| {}).unwrap(), None);
    assert_eq!(r.tick(), 240);
}

#[test]
fn a_networked_session_replays_bit_exact_on_the_server_and_on_a_client() {
    let mut s = Scenario::new(NetConfig::default(), None, 60.0, |g| {
        crates_and_balls(g, 20)
    });
    s.add_client(NetConfig::default(), "ann", None);
    s.add_client(NetConfig::default(), "bob", None);
    s.server.group.start_recording("pit", "server").unwrap();
    s.clients[1].group.start_recording("pit", "bob").unwrap();
    s.join_within(2.0);
    s.give_player(0, &player(0.0, 9, 240));
    s.give_player(1, &player(3.0, 4, 180));
    s.run_for(5.0);
    for (who, g) in [
        ("server", &mut s.server.group),
        ("bob", &mut s.clients[1].group),
    ] {
        let bytes = g.take_recording().expect("recording");
        // Re-running the recording peer's own server paths on the recorded inputs decides
        // exactly what was recorded.
        let mut d = Replay::open(&bytes, demo_registry()).unwrap();
        d.rerun_decisions(true);
        assert_eq!(d.verify(|_, _| {}).unwrap(), None, "{who}'s decisions");
        let mut r = Replay::open(&bytes, demo_registry()).unwrap();
        assert!(r.len() > 250, "{who}: {} ticks", r.len());
        assert_eq!(
            r.verify(|_, _| {}).unwrap(),
            None,
            "{who}'s replay diverged"
        );
        // The replay ends in the recorded world: same entities, same state.
        assert_eq!(r.group().state_hash(), g.state_hash(), "{who}");
        assert_eq!(r.group().len(), g.len(), "{who}");
    }
}

#[test]
fn a_changed_section_is_reported_at_its_tick_with_the_entity_that_moved() {
    // Recorded with every section kept (none of the kinds decides alone).
    let bytes = recorded_scene_with(sectioned(), 200);
    let mut rec = Recording::from_bytes(&bytes).unwrap();
    // Teleport one crate by 0.5 m in the section it receives at tick 119, which carries a
    // body frame (every 2 s of game time: ticks 119, 239, ...).
    assert!(rec.ticks[119].bodies.is_some());
    let target = rec.ticks[119]
        .ops
        .iter_mut()
        .find_map(|op| match op {
            Op::Section { net, payload } if payload.len() == lanyard::pose::PoseState::LEN => {
                Some((net, payload))
            }
            _ => None,
        })
        .unwrap();
    let net = *target.0;
    let x = i32::from_le_bytes(target.1[0..4].try_into().unwrap()) + 500;
    target.1[0..4].copy_from_slice(&x.to_le_bytes());
    let mut r = Replay::from_recording(rec, sectioned()).unwrap();
    let d = r
        .verify(|_, _| {})
        .unwrap()
        .expect("the replay must diverge");
    assert_eq!(d.tick, 119);
    assert_eq!(d.compared_at, Some(119), "compared where it diverged");
    let moved = d
        .entities
        .iter()
        .find(|e| e.net == net)
        .expect("the teleported crate is named");
    assert!((moved.distance - 0.5).abs() < 0.05, "{d}");
    assert!(moved.fields.contains(&"position"), "{d}");
    assert!(d.to_string().contains("tick 119"));
}

/// A mover whose client path drives a little harder than the demo's: one changed constant.
struct HardDriver {
    inner: demo::Mover,
}

const DRIVE: f32 = 1.001;

impl Controller for HardDriver {
    fn server_update(
        &mut self,
        me: EntityRef<'_>,
        world: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    ) {
        self.inner.server_update(me, world, out);
    }

    fn client_update(
        &mut self,
        me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        self.inner.client_update(me, section, ctx)?;
        if self.inner.target() != Vec3::ZERO {
            let v = ctx.body().linvel();
            ctx.set_linvel(Vec3::new(v.x * DRIVE, v.y, v.z * DRIVE));
        }
        Ok(())
    }
}

#[test]
fn a_changed_controller_constant_is_reported_at_the_first_tick_it_matters() {
    // Crates and balls settle; at tick 60 a mover arrives and starts driving.
    let mut g = EntityGroup::new(sectioned(), GroupConfig::default());
    crates_and_balls(&mut g, 20);
    g.start_recording("pit", "test").unwrap();
    let mut bytes = g.take_recording().expect("recording");
    for t in 0..150 {
        if t == 60 {
            g.spawn(demo::MOVER, &player(0.0, 2, 0), Owner::Server)
                .unwrap();
        }
        g.frame();
        bytes.extend(g.take_recording().expect("recording"));
    }
    // The first tick whose ops hand the mover a section: where its client path first runs
    // with a target, so where a changed driving constant first shows.
    let rec = Recording::from_bytes(&bytes).unwrap();
    let mover = rec
        .ticks
        .iter()
        .flat_map(|t| &t.ops)
        .find_map(|op| match op {
            Op::Spawn { net, kind, .. } if *kind == lanyard::KindId::of_name(demo::MOVER) => {
                Some(*net)
            }
            _ => None,
        })
        .unwrap();
    let expected = rec
        .ticks
        .iter()
        .find(|t| {
            t.ops
                .iter()
                .any(|op| matches!(op, Op::Section { net, .. } if *net == mover))
        })
        .unwrap()
        .tick;
    assert_eq!(expected, 60);

    // The same kinds, except that movers drive 0.1% harder.
    let base = sectioned();
    let build = move |name: &str, params: Vec<u8>| {
        base.build(lanyard::KindId::of_name(name), &params).unwrap()
    };
    let mut changed = KindRegistry::new();
    let b = build.clone();
    changed
        .register(demo::CRATE, move |p: &demo::CrateParams| {
            b(demo::CRATE, encode(p))
        })
        .unwrap();
    let b = build.clone();
    changed
        .register(demo::PUSHABLE, move |p: &demo::CrateParams| {
            b(demo::PUSHABLE, encode(p))
        })
        .unwrap();
    let b = build.clone();
    changed
        .register(demo::BALL, move |p: &demo::BallParams| {
            b(demo::BALL, encode(p))
        })
        .unwrap();
    let b = build.clone();
    changed
        .register(ASTEROID, move |p: &AsteroidParams| b(ASTEROID, encode(p)))
        .unwrap();
    let b = build;
    changed
        .register(demo::MOVER, move |p: &demo::MoverParams| Blueprint {
            controller: Box::new(HardDriver {
                inner: demo::Mover::from_params(p),
            }),
            ..b(demo::MOVER, encode(p))
        })
        .unwrap();
    for kind in [
        demo::CRATE,
        demo::PUSHABLE,
        demo::BALL,
        demo::MOVER,
        ASTEROID,
    ] {
        changed.set_decides_alone(kind, false).unwrap();
    }
    let mut r = Replay::open(&bytes, std::sync::Arc::new(changed)).unwrap();
    let d = r
        .verify(|_, _| {})
        .unwrap()
        .expect("a harder-driving mover must change the run");
    assert_eq!(d.tick, expected, "{d}");
    assert!(d.entities.iter().any(|e| e.net == mover), "{d}");
    // The unchanged kinds replay the same file to the end.
    assert_eq!(
        Replay::open(&bytes, sectioned())
            .unwrap()
            .verify(|_, _| {})
            .unwrap(),
        None
    );
}

fn encode<P: serde::Serialize>(p: &P) -> Vec<u8> {
    lanyard::encode_params(lanyard::KindId(0), p).unwrap()
}

#[test]
fn bad_files_each_give_their_own_error() {
    let bytes = recorded_scene(30);
    assert_eq!(
        Recording::from_bytes(b"GIF89a...").unwrap_err(),
        Error::Record(lanyard::RecordError::NotARecording)
    );
    // A newer format, and an older one whose poses read otherwise (format 6 carried
    // velocities on a linear scale), are refused alike.
    for found in [lanyard::record::RECORDING_VERSION + 1, 6] {
        let mut other = bytes.clone();
        other[4..8].copy_from_slice(&found.to_le_bytes());
        assert_eq!(
            Recording::from_bytes(&other).unwrap_err(),
            Error::Record(lanyard::RecordError::RecordingVersion {
                found,
                supported: lanyard::record::RECORDING_VERSION
            })
        );
    }
    let cut = &bytes[..bytes.len() - 10];
    assert_eq!(
        Recording::from_bytes(cut).unwrap_err(),
        Error::Record(lanyard::RecordError::RecordingTruncated { tick: Some(29) })
    );
    assert_eq!(
        Recording::from_bytes(&bytes[..10]).unwrap_err(),
        Error::Record(lanyard::RecordError::RecordingTruncated { tick: None })
    );
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 30] ^= 0x40;
    assert_eq!(
        Recording::from_bytes(&bad).unwrap_err(),
        Error::Record(lanyard::RecordError::RecordingCorrupted { tick: Some(29) })
    );
    for e in [
        Error::Record(lanyard::RecordError::NotARecording),
        Error::Record(lanyard::RecordError::RecordingVersion {
            found: 8,
            supported: lanyard::record::RECORDING_VERSION,
        }),
        Error::Record(lanyard::RecordError::RecordingTruncated { tick: Some(29) }),
        Error::Record(lanyard::RecordError::RecordingCorrupted { tick: Some(29) }),
    ] {
        assert!(!e.to_string().is_empty());
    }
    // And a replay of a good file runs to the end.
    let mut r = Replay::open(&bytes, demo_registry()).unwrap();
    while let Step::Matched(_) = r.step().unwrap() {}
}

mod bad_bytes {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Cut anywhere, a recording is an error, or (cut between two blocks, as a file
        /// being written is) the ticks before the cut; damaged anywhere, it is an error or
        /// (in the header's text) a replay that still runs. Never a panic.
        #[test]
        fn damaged_recordings_are_errors_not_panics(cut in any::<prop::sample::Index>(), flip in any::<prop::sample::Index>(), bit in 0u8..8) {
            let bytes = recorded_scene(20);
            let short = &bytes[..cut.index(bytes.len())];
            if let Ok(r) = Recording::from_bytes(short) {
                prop_assert!(r.ticks.len() < 20, "a cut recording holds fewer ticks");
            }
            prop_assert!(Recording::from_bytes(&bytes[..bytes.len() - 1]).is_err());
            let mut flipped = bytes.clone();
            let at = flip.index(flipped.len());
            flipped[at] ^= 1 << bit;
            match Replay::open(&flipped, demo_registry()) {
                Err(_) => {}
                Ok(mut r) => {
                    // Only a flip inside the header's text (the scene's name, say) can
                    // still open; such a replay must still run to its end without a panic.
                    let _ = r.verify(|_, _| {});
                }
            }
        }
    }

    #[test]
    fn a_recorded_nonsense_timestep_is_corruption_not_a_crash() {
        let bytes = recorded_scene(5);
        let mut rec = Recording::from_bytes(&bytes).unwrap();
        let c = GroupConfig {
            dt: f32::NAN,
            ..GroupConfig::default()
        };
        rec.ticks[2].ops.insert(0, Op::Config(c));
        let mut r = Replay::from_recording(rec, demo_registry()).unwrap();
        assert_eq!(
            r.verify(|_, _| {}),
            Err(Error::Record(lanyard::RecordError::RecordingCorrupted {
                tick: Some(2)
            }))
        );
    }
}

#[test]
fn replaying_past_the_end_is_an_error_so_a_short_recording_cannot_pass() {
    let bytes = recorded_scene(240);
    let mut r = Replay::open(&bytes, demo_registry()).unwrap();
    assert_eq!(r.end_tick(), 240);
    assert_eq!(
        r.run_to(10_000).unwrap_err(),
        Error::Record(lanyard::RecordError::ReplayPastEnd {
            asked: 10_000,
            end: 240
        })
    );
    assert_eq!(r.run_to(240).unwrap(), None, "to the very end is fine");
    // An empty recording: nothing to replay, and asking for a tick says so.
    let mut g = mixed_scene(10, 1);
    g.start_recording("demo pit", "test").unwrap();
    let empty = g.stop_recording().unwrap();
    let mut r = Replay::open(&empty, demo_registry()).unwrap();
    assert!(r.is_empty());
    let e = r.run_to(120).unwrap_err();
    assert!(
        e.to_string().contains("cannot be replayed to tick 120"),
        "{e}"
    );
}

#[test]
fn recording_starts_and_stops_explicitly_and_refuses_misuse() {
    let mut g = mixed_scene(20, 2);
    assert_eq!(
        g.stop_recording().unwrap_err(),
        Error::Record(lanyard::RecordError::NotRecording)
    );
    g.start_recording("demo pit", "test").unwrap();
    let mut bytes = g.take_recording().expect("recording");
    for _ in 0..50 {
        g.frame();
    }
    // A second start would drop the 50 ticks not yet taken: refused, nothing lost.
    let e = g.start_recording("demo pit", "again").unwrap_err();
    assert_eq!(e, Error::Record(lanyard::RecordError::AlreadyRecording));
    assert!(e.to_string().contains("stop_recording"), "{e}");
    for _ in 0..50 {
        g.frame();
    }
    bytes.extend(g.stop_recording().unwrap());
    assert!(!g.is_recording());
    let mut r = Replay::open(&bytes, demo_registry()).unwrap();
    assert_eq!(r.len(), 100, "every tick is in the file");
    assert_eq!(r.verify(|_, _| {}).unwrap(), None);
    // Stopped, it can start again.
    g.start_recording("demo pit", "again").unwrap();
}

/// A kind whose server path decides a new spin every `PERIOD` ticks: a constant of the
/// code, not a spawn parameter or saved state.
#[derive(serde::Serialize, serde::Deserialize)]
struct Spinner<const PERIOD: u32> {
    rng: SeededRng,
    countdown: u32,
    spin: f32,
}

impl<const PERIOD: u32> Controller for Spinner<PERIOD> {
    fn server_update(
        &mut self,
        _me: EntityRef<'_>,
        _w: &WorldView<'_>,
        out: &mut lanyard::codec::SectionWriter<'_>,
    ) {
        if self.countdown == 0 {
            self.countdown = PERIOD;
            self.spin = self.rng.range_f32(-3.0, 3.0);
        }
        self.countdown -= 1;
        out.f32(self.spin);
    }

    fn client_update(
        &mut self,
        _me: &mut Entity,
        section: Option<lanyard::codec::Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        if let Some(s) = section {
            self.spin = s.parse(|r| r.f32())?;
        }
        ctx.set_angvel(Vec3::new(0.0, self.spin, 0.0));
        Ok(())
    }

    lanyard::serde_state!();
}

fn spinner_kinds<const PERIOD: u32>() -> std::sync::Arc<KindRegistry> {
    spinners::<PERIOD>(false)
}

/// The spinner kind; `alone`: registered as deciding alone, so recordings keep none of
/// its sections.
fn spinners<const PERIOD: u32>(alone: bool) -> std::sync::Arc<KindRegistry> {
    let mut r = KindRegistry::new();
    demo::register(&mut r).unwrap();
    let options = lanyard::KindOptions {
        decides_alone: alone,
        ..Default::default()
    };
    r.register_with("test.spinner", options, move |seed: &u64| Blueprint {
        body: RigidBodyBuilder::dynamic()
            .translation(Vec3::new(0.0, 0.5, 0.0))
            .build(),
        colliders: vec![ColliderBuilder::cuboid(0.5, 0.5, 0.5).build()],
        visual: Visual {
            shape: Shape::Cuboid {
                half_extents: [0.5; 3],
            },
            color: [200; 4],
        },
        controller: Box::new(Spinner::<PERIOD> {
            rng: SeededRng::new(*seed),
            countdown: 0,
            spin: 0.0,
        }),
    })
    .unwrap();
    std::sync::Arc::new(r)
}

/// Two spinners of `kinds` in a world with no gravity, recorded for `ticks` ticks.
fn spin_recording(kinds: std::sync::Arc<KindRegistry>, ticks: usize) -> Vec<u8> {
    let mut g = EntityGroup::new(
        kinds,
        GroupConfig {
            gravity: Vec3::ZERO,
            ..GroupConfig::default()
        },
    );
    g.spawn("test.spinner", &5u64, Owner::Server).unwrap();
    g.spawn("test.spinner", &6u64, Owner::Server).unwrap();
    g.start_recording("spin", "server").unwrap();
    let mut bytes = g.take_recording().expect("recording");
    for _ in 0..ticks {
        g.frame();
    }
    bytes.extend(g.stop_recording().unwrap());
    bytes
}

#[test]
fn decision_mode_catches_a_changed_decision_constant_that_section_replay_cannot() {
    let bytes = spin_recording(spinner_kinds::<30>(), 120);

    // The same code: both modes replay bit-exact.
    for decisions in [false, true] {
        let mut r = Replay::open(&bytes, spinner_kinds::<30>()).unwrap();
        r.rerun_decisions(decisions);
        assert_eq!(r.verify(|_, _| {}).unwrap(), None, "decisions: {decisions}");
    }
    // Someone changes the period from 30 to 20 ticks. The recorded sections still carry
    // the old decisions, so replaying them alone passes...
    let mut r = Replay::open(&bytes, spinner_kinds::<20>()).unwrap();
    assert_eq!(r.verify(|_, _| {}).unwrap(), None);
    // ...but re-running the server paths finds the first tick they decide otherwise.
    let mut r = Replay::open(&bytes, spinner_kinds::<20>()).unwrap();
    r.rerun_decisions(true);
    let d = r
        .verify(|_, _| {})
        .unwrap()
        .expect("the changed decision is caught");
    assert_eq!(d.tick, 20, "{d}");
    assert_eq!(d.decisions.len(), 2, "{d}");
    assert!(d.decisions.iter().all(|x| x.kind == "test.spinner"));
    let text = d.to_string();
    assert!(
        text.contains("test.spinner") && text.contains("decided otherwise"),
        "{text}"
    );
}

#[test]
fn a_kind_that_decides_alone_records_no_sections_and_a_changed_decision_is_still_found() {
    let alone = spin_recording(spinners::<30>(true), 150);
    let sectioned = spin_recording(spinners::<30>(false), 150);
    let sections = |bytes: &[u8]| {
        let rec = Recording::from_bytes(bytes).unwrap();
        rec.ticks
            .iter()
            .flat_map(|t| &t.ops)
            .filter(|op| matches!(op, Op::Section { .. }))
            .count()
    };
    assert_eq!(sections(&alone), 0, "the replay writes them again");
    assert!(sections(&sectioned) > 0);
    // The same code replays bit-exact, running the server paths again.
    let mut r = Replay::open(&alone, spinners::<30>(true)).unwrap();
    assert_eq!(r.verify(|_, _| {}).unwrap(), None);
    // A changed period shows at the first tick it decides otherwise, without decision
    // mode, and the spinners are named at the next body frame (tick 119).
    let mut r = Replay::open(&alone, spinners::<20>(true)).unwrap();
    let d = r.verify(|_, _| {}).unwrap().expect("caught");
    assert_eq!(d.tick, 20, "{d}");
    assert_eq!(d.compared_at, Some(119), "{d}");
    assert_eq!(d.entities.len(), 2, "{d}");
    assert!(
        d.entities
            .iter()
            .all(|e| e.fields.contains(&"angular velocity")),
        "{d}"
    );
}

#[test]
fn seeking_starts_from_the_nearest_keyframe_and_lands_bit_exact() {
    use demo::asteroids;
    let mut g = EntityGroup::new(
        demo_registry(),
        GroupConfig {
            gravity: Vec3::ZERO,
            ..GroupConfig::default()
        },
    );
    g.add_scenery(asteroids::planetoid());
    for p in asteroids::field(40, 9) {
        g.spawn(ASTEROID, &p, Owner::Server).unwrap();
    }
    g.start_recording("asteroids", "test").unwrap();
    let mut bytes = g.take_recording().expect("recording");
    // 35 s: a keyframe at 30 s (tick 1799).
    for _ in 0..35 * 60 {
        g.frame();
    }
    bytes.extend(g.stop_recording().unwrap());
    let rec = Recording::from_bytes(&bytes).unwrap();
    let keyframes: Vec<u64> = rec
        .ticks
        .iter()
        .filter(|t| t.keyframe.is_some())
        .map(|t| t.tick)
        .collect();
    assert_eq!(keyframes, [1799]);
    let mut straight = Replay::from_recording(rec.clone(), demo_registry()).unwrap();
    assert_eq!(straight.run_to(2000).unwrap(), None);
    // From the start, a seek past the keyframe restores it and replays 200 ticks: a tick
    // before the keyframe whose hash is wrong is not even looked at.
    let mut wrong = rec.clone();
    wrong.ticks[500].hash ^= 1;
    let mut r = Replay::from_recording(wrong.clone(), demo_registry()).unwrap();
    assert_eq!(r.seek(2000).unwrap(), None);
    let d = Replay::from_recording(wrong, demo_registry())
        .unwrap()
        .run_to(2000);
    assert_eq!(
        d.unwrap().map(|d| d.tick),
        Some(500),
        "run_to checks every tick"
    );
    let mut r = Replay::from_recording(rec, demo_registry()).unwrap();
    assert_eq!(r.seek(2000).unwrap(), None);
    assert_eq!(r.tick(), 2000);
    assert_eq!(r.group().state_hash(), straight.group().state_hash());
    // Back, to before the keyframe: from the initial world.
    assert_eq!(r.seek(100).unwrap(), None);
    assert_eq!(r.tick(), 100);
    // And on to the end, checking every tick.
    assert_eq!(r.verify(|_, _| {}).unwrap(), None);
    assert_eq!(r.group().state_hash(), g.state_hash());
}
