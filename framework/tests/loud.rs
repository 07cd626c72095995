//! Misuses that used to show only in counters, or nowhere, are loud: an error, or an entry
//! in the frame's report naming the kind and the entity.

use lanyard::codec::{MAX_SECTION_LEN, SectionWriter};
use lanyard::prelude::*;
use lanyard::rapier3d::prelude::RigidBodyBuilder;
use std::sync::Arc;

/// A kind whose server path writes more than a section may hold.
struct Chatty;

impl Controller for Chatty {
    fn server_update(&mut self, _: EntityRef<'_>, _: &WorldView<'_>, out: &mut SectionWriter<'_>) {
        for _ in 0..=MAX_SECTION_LEN {
            out.u8(7);
        }
    }

    fn client_update(
        &mut self,
        _: &mut Entity,
        _: Option<Section<'_>>,
        _: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        Ok(())
    }
}

fn chatty_group() -> EntityGroup {
    let mut r = KindRegistry::new();
    r.register("test.chatty", |_: &u8| Blueprint {
        body: RigidBodyBuilder::fixed().build(),
        colliders: vec![],
        visual: Visual {
            shape: Shape::Ball { radius: 1.0 },
            color: [0; 4],
        },
        controller: Box::new(Chatty),
    })
    .unwrap();
    EntityGroup::new(Arc::new(r), GroupConfig::default())
}

#[test]
fn a_section_too_long_to_send_is_in_the_frames_report() {
    let mut g = chatty_group();
    let id = g.spawn("test.chatty", &0u8, Owner::Server).unwrap();
    let net = g.get(id).unwrap().net_id();
    let report = g.frame();
    assert_eq!(report.sections_written, 0, "nothing went out");
    assert_eq!(
        report.section_errors.len(),
        1,
        "{:?}",
        report.section_errors
    );
    let e = &report.section_errors[0];
    assert_eq!((e.net, e.kind.as_str()), (net, "test.chatty"));
    assert_eq!(
        e.error,
        Error::Codec(lanyard::CodecError::SectionTooLong {
            len: MAX_SECTION_LEN + 1,
            max: MAX_SECTION_LEN
        })
    );
    assert_eq!(g.counters().oversized_sections, 1);
}

#[test]
fn taking_a_recording_that_was_never_started_is_an_error() {
    let mut g = chatty_group();
    assert_eq!(
        g.take_recording(),
        Err(Error::Record(lanyard::RecordError::NotRecording))
    );
    g.start_recording("nowhere", "server").unwrap();
    assert!(g.take_recording().is_ok_and(|b| !b.is_empty()));
}

/// A kind whose server path writes two bytes and whose client path reads one, by hand,
/// and never calls `finish`.
struct Sloppy;

impl Controller for Sloppy {
    fn server_update(&mut self, _: EntityRef<'_>, _: &WorldView<'_>, out: &mut SectionWriter<'_>) {
        out.u8(1);
        out.u8(2);
    }

    fn client_update(
        &mut self,
        _: &mut Entity,
        section: Option<Section<'_>>,
        _: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        if let Some(s) = section {
            let mut r = s.reader();
            let _first = r.u8()?;
        }
        Ok(())
    }
}

fn sloppy_group() -> EntityGroup {
    let mut r = KindRegistry::new();
    r.register("test.sloppy", |_: &u8| {
        Blueprint::dynamic_box([0.0; 3], [0.5; 3], [0; 4], Sloppy)
    })
    .unwrap();
    EntityGroup::new(Arc::new(r), GroupConfig::default())
}

#[test]
fn a_client_path_that_reads_part_of_its_section_and_skips_finish_is_in_the_report() {
    let mut g = sloppy_group();
    let id = g.spawn("test.sloppy", &0u8, Owner::Server).unwrap();
    let net = g.get(id).unwrap().net_id();
    let report = g.frame();
    assert_eq!(report.section_errors.len(), 1, "{report:?}");
    let e = &report.section_errors[0];
    assert_eq!((e.net, e.kind.as_str()), (net, "test.sloppy"));
    assert_eq!(
        e.error,
        Error::Codec(lanyard::CodecError::SectionNotFinished { read: 1, len: 2 })
    );
    assert!(e.to_string().contains("call finish"), "{e}");
    // It was still applied: a forgotten finish is not a refusal.
    assert_eq!((report.sections_applied, report.bad_sections), (1, 0));
}

/// A [`Sloppy`] box whose client path first runs a whole frame of a group of its own (with
/// another `Sloppy` box in it), and only then reads its own section as `Sloppy` does.
struct Nesting {
    inner: EntityGroup,
}

impl Controller for Nesting {
    fn server_update(
        &mut self,
        me: EntityRef<'_>,
        world: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    ) {
        Sloppy.server_update(me, world, out);
    }

    fn client_update(
        &mut self,
        me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        let inner = self.inner.frame();
        assert_eq!(inner.section_errors.len(), 1, "the inner box: {inner:?}");
        Sloppy.client_update(me, section, ctx)
    }
}

#[test]
fn a_client_path_that_runs_a_frame_of_its_own_is_still_watched_afterwards() {
    // The inner group's client pass watches its own sections while it runs; the outer one's
    // section is watched again when it ends.
    let mut r = KindRegistry::new();
    r.register("test.nesting", |_: &u8| {
        let mut inner = sloppy_group();
        inner.spawn("test.sloppy", &0u8, Owner::Server).unwrap();
        Blueprint::dynamic_box([0.0; 3], [0.5; 3], [0; 4], Nesting { inner })
    })
    .unwrap();
    let mut g = EntityGroup::new(Arc::new(r), GroupConfig::default());
    let id = g.spawn("test.nesting", &0u8, Owner::Server).unwrap();
    let net = g.get(id).unwrap().net_id();
    let report = g.frame();
    assert_eq!(report.faults, vec![], "the inner frame went as it should");
    assert_eq!(report.section_errors.len(), 1, "{report:?}");
    let e = &report.section_errors[0];
    assert_eq!((e.net, e.kind.as_str()), (net, "test.nesting"));
    assert_eq!(
        e.error,
        Error::Codec(lanyard::CodecError::SectionNotFinished { read: 1, len: 2 })
    );
}

#[test]
fn spawn_parameters_of_another_type_of_the_same_shape_are_refused_by_name() {
    #[derive(serde::Serialize)]
    struct Lookalike {
        size: u8,
    }
    let mut g = sloppy_group();
    for e in [
        g.spawn("test.sloppy", &(0u8,), Owner::Server).unwrap_err(),
        g.spawn("test.sloppy", &Lookalike { size: 0 }, Owner::Server)
            .unwrap_err(),
    ] {
        match &e {
            Error::ParamsType { kind, expected, .. } => {
                assert_eq!((kind.as_str(), expected.as_str()), ("test.sloppy", "u8"));
            }
            other => panic!("not refused by type: {other}"),
        }
    }
    assert_eq!(g.len(), 0, "nothing was spawned");
    // The right type, or a reference to it, spawns.
    g.spawn("test.sloppy", &0u8, Owner::Server).unwrap();
    g.spawn("test.sloppy", &&0u8, Owner::Server).unwrap();
}

/// A kind whose client path panics.
struct Panicky;

impl Controller for Panicky {
    fn server_update(&mut self, _: EntityRef<'_>, _: &WorldView<'_>, _: &mut SectionWriter<'_>) {}

    fn client_update(
        &mut self,
        _: &mut Entity,
        _: Option<Section<'_>>,
        _: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        panic!("boom in the client path");
    }
}

/// Not a test of its own: run by the next test in a child process, where it makes a
/// client path panic once (the group catches it) and prints nothing itself.
#[test]
fn a_panicking_hook_in_a_child_process() {
    if std::env::var_os("LANYARD_PANIC_CHILD").is_none() {
        return;
    }
    let mut r = KindRegistry::new();
    r.register("test.panicky", |_: &u8| {
        Blueprint::dynamic_box([0.0; 3], [0.5; 3], [0; 4], Panicky)
    })
    .unwrap();
    let mut g = EntityGroup::new(Arc::new(r), GroupConfig::default());
    g.spawn("test.panicky", &0u8, Owner::Server).unwrap();
    let report = g.frame();
    assert_eq!(report.faults.len(), 1);
}

#[test]
fn a_caught_panic_prints_no_panic_message_unless_rust_backtrace_asks() {
    let run = |backtrace: Option<&str>| {
        let mut c = std::process::Command::new(std::env::current_exe().unwrap());
        c.args([
            "--exact",
            "a_panicking_hook_in_a_child_process",
            "--nocapture",
        ])
        .env("LANYARD_PANIC_CHILD", "1")
        .env_remove("RUST_BACKTRACE");
        if let Some(b) = backtrace {
            c.env("RUST_BACKTRACE", b);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout)
    };
    let quiet = run(None);
    assert!(quiet.contains("1 passed"), "the child did not run: {quiet}");
    assert!(!quiet.contains("boom in the client path"), "{quiet}");
    assert!(!quiet.contains("panicked at"), "{quiet}");
    let asked = run(Some("1"));
    assert!(asked.contains("boom in the client path"), "{asked}");
}

/// A kind whose server path sends NaN in its serde extra, and whose client path reads it
/// with `PoseState::read_with`.
struct NanSender;

impl Controller for NanSender {
    fn server_update(&mut self, me: EntityRef<'_>, _: &WorldView<'_>, out: &mut SectionWriter<'_>) {
        lanyard::pose::PoseState::write_with(me.body(), &(1.0f32, [0.0f64, f64::NAN]), out);
    }

    fn client_update(
        &mut self,
        _: &mut Entity,
        section: Option<Section<'_>>,
        _: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        if let Some(s) = section {
            let _: (lanyard::pose::PoseState, (f32, [f64; 2])) =
                lanyard::pose::PoseState::read_with(&s)?;
        }
        Ok(())
    }
}

#[test]
fn a_nan_read_through_read_with_is_refused_as_r_f32_refuses_one() {
    let mut r = KindRegistry::new();
    r.register("test.nan", |_: &u8| {
        Blueprint::dynamic_box([0.0; 3], [0.5; 3], [0; 4], NanSender)
    })
    .unwrap();
    let mut g = EntityGroup::new(Arc::new(r), GroupConfig::default());
    g.spawn("test.nan", &0u8, Owner::Server).unwrap();
    let report = g.frame();
    assert_eq!(report.bad_sections, 1);
    assert_eq!(
        report.section_errors[0].error,
        Error::Codec(lanyard::CodecError::InvalidValue("non-finite float")),
        "{report:?}"
    );
}

#[test]
fn a_client_owned_spawn_on_a_group_no_network_layer_drives_is_refused() {
    let mut g = sloppy_group();
    let e = g
        .spawn("test.sloppy", &0u8, Owner::Client(ClientId(3)))
        .unwrap_err();
    assert_eq!(
        e,
        Error::NoNetwork {
            kind: "test.sloppy".into(),
            owner: 3
        }
    );
    assert!(e.to_string().contains("Owner::Server"), "{e}");
    // Told its clients (as a network layer tells it), the same spawn is fine.
    g.replica().set_clients([ClientId(3)]);
    g.spawn("test.sloppy", &0u8, Owner::Client(ClientId(3)))
        .unwrap();
}

#[test]
fn spawn_parameters_that_do_not_decode_name_the_field() {
    #[derive(serde::Serialize, serde::Deserialize)]
    enum Mode {
        Still,
        Spin,
    }
    #[derive(serde::Serialize, serde::Deserialize)]
    struct Buoy {
        pos: [f32; 3],
        mode: Mode,
        lift: f32,
    }
    let mut r = KindRegistry::new();
    r.register("test.buoy", |p: &Buoy| {
        let _ = (&p.mode, p.lift);
        Blueprint::dynamic_box(p.pos, [0.5; 3], [0; 4], Sloppy)
    })
    .unwrap();
    let good = Buoy {
        pos: [0.0; 3],
        mode: Mode::Spin,
        lift: 2.0,
    };
    let mut bytes = lanyard::encode_params(lanyard::KindId(0), &good).unwrap();
    let kind = r.id_of("test.buoy").unwrap();
    // The variant after the three floats (12 bytes) is one no `Mode` has.
    bytes[12] = 9;
    let e = r.build(kind, &bytes).err().expect("refused");
    assert!(e.to_string().contains("in the field `mode`"), "{e}");
    // Cut in the middle of `lift`.
    let mut cut = lanyard::encode_params(lanyard::KindId(0), &good).unwrap();
    cut.truncate(cut.len() - 2);
    let e = r.build(kind, &cut).err().expect("refused");
    assert!(e.to_string().contains("in the field `lift`"), "{e}");
    assert!(e.to_string().contains("for test.buoy"), "{e}");
}

#[test]
fn a_tolerance_that_means_nothing_is_refused_at_registration_naming_the_kind() {
    use lanyard::KindOptions;
    use lanyard::predict::{PredictedPose, Tolerance};
    let blueprint = |_: &u8| Blueprint::dynamic_box([0.0; 3], [0.5; 3], [0; 4], Sloppy);
    for (bad, says) in [
        (f32::NAN, "NaN"),
        (0.0, "not above zero"),
        (-1.0, "not above zero"),
        (f32::INFINITY, "infinite"),
    ] {
        let tolerance = Tolerance {
            pos: bad,
            ..Tolerance::default()
        };
        let options = KindOptions {
            tolerance,
            ..KindOptions::default()
        };
        let mut r = KindRegistry::new();
        let e = r
            .register_with("test.drone", options, blueprint)
            .unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(&e, Error::BadTolerance { kind, .. } if kind == "test.drone"),
            "{e:?}"
        );
        assert!(text.contains("pos") && text.contains(says), "{text}");
        assert!(
            r.id_of("test.drone").is_none(),
            "a refused kind is not registered"
        );
        // The explicit codec's tolerance is checked as well.
        r.register("test.kite", blueprint).unwrap();
        let e = r
            .set_delta_codec("test.kite", PredictedPose::default().within(tolerance))
            .unwrap_err();
        assert!(
            matches!(&e, Error::BadTolerance { kind, .. } if kind == "test.kite"),
            "{e:?}"
        );
    }
    // A sound one is taken.
    let mut r = KindRegistry::new();
    let fine = KindOptions {
        tolerance: Tolerance {
            pos: 0.01,
            ..Tolerance::default()
        },
        ..KindOptions::default()
    };
    r.register_with("test.drone", fine, blueprint).unwrap();
}
