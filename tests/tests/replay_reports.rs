//! Divergence reports a person can act on: a decision replay names the field that changed
//! with both values (when the kind describes its sections), or shows the bytes from the
//! first that differs; and a section the replay's client path refused is in the report
//! with its reason.

use lanyard::Error;
use lanyard::codec::{Section, SectionWriter};
use lanyard::pose::{CORRECTION_TOLERANCE, PoseState};
use lanyard::prelude::*;
use lanyard::replay::Replay;
use std::sync::Arc;

/// What a spinner's section carries after its pose.
#[derive(serde::Serialize, serde::Deserialize)]
struct Spin {
    rate: f32,
}

/// Picks a spin in `-RANGE..RANGE` rad/s every 30 ticks from its seeded stream, and writes
/// its pose first, as the README's layout does. `PICKY`: its client path refuses a spin
/// faster than 1 rad/s.
#[derive(serde::Serialize, serde::Deserialize)]
struct Spinner<const RANGE: u32, const PICKY: bool> {
    rng: SeededRng,
    countdown: u32,
    spin: f32,
}

impl<const RANGE: u32, const PICKY: bool> Controller for Spinner<RANGE, PICKY> {
    fn server_update(
        &mut self,
        me: EntityRef<'_>,
        _w: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    ) {
        if self.countdown == 0 {
            self.countdown = 30;
            let r = RANGE as f32;
            self.spin = self.rng.range_f32(-r, r);
        }
        self.countdown -= 1;
        PoseState::write_with(me.body(), &Spin { rate: self.spin }, out);
    }

    fn client_update(
        &mut self,
        _me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        if let Some(s) = section {
            let (pose, spin): (PoseState, Spin) = PoseState::read_with(&s)?;
            if PICKY && spin.rate.abs() > 1.0 {
                return Err(Error::Codec(lanyard::CodecError::InvalidValue(
                    "a spin over 1 rad/s",
                )));
            }
            pose.correct(ctx, CORRECTION_TOLERANCE);
            self.spin = spin.rate;
        }
        ctx.set_angvel(Vec3::new(0.0, self.spin, 0.0));
        Ok(())
    }

    lanyard::serde_state!();
}

/// The spinner kind; `described`: its sections are described by name.
fn kinds<const RANGE: u32, const PICKY: bool>(described: bool) -> Arc<KindRegistry> {
    let mut r = KindRegistry::new();
    r.register("test.spinner", |seed: &u64| Blueprint {
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
        controller: Box::new(Spinner::<RANGE, PICKY> {
            rng: SeededRng::new(*seed),
            countdown: 0,
            spin: 0.0,
        }),
    })
    .unwrap();
    // Decision mode compares each server path with the section the recording kept: kept
    // only for a kind that does not decide alone (one that does shows a change in the
    // state's hash, and its entities by name).
    r.set_decides_alone("test.spinner", false).unwrap();
    if described {
        r.describe_sections("test.spinner", PoseState::fields_with::<Spin>)
            .unwrap();
    }
    Arc::new(r)
}

/// One spinner recorded for 90 ticks, in a world with no gravity.
fn recording(kinds: Arc<KindRegistry>) -> Vec<u8> {
    let config = GroupConfig {
        gravity: Vec3::ZERO,
        ..GroupConfig::default()
    };
    let mut g = EntityGroup::new(kinds, config);
    g.spawn("test.spinner", &5u64, Owner::Server).unwrap();
    g.start_recording("spin", "server").unwrap();
    let mut bytes = g.take_recording().unwrap();
    for _ in 0..90 {
        g.frame();
    }
    bytes.extend(g.stop_recording().unwrap());
    bytes
}

#[test]
fn a_changed_decision_is_reported_by_its_field_name_with_both_values() {
    let bytes = recording(kinds::<3, false>(true));
    // The range doubles: the first decision already differs.
    let mut r = Replay::open(&bytes, kinds::<6, false>(true)).unwrap();
    r.rerun_decisions(true);
    let d = r.verify(|_, _| {}).unwrap().expect("the change is caught");
    assert_eq!(d.tick, 0);
    let fields = &d.decisions[0].fields;
    assert_eq!(fields.len(), 1, "only the spin changed: {d}");
    assert_eq!(fields[0].name, "extra.rate");
    let (was, now): (f32, f32) = (
        fields[0].recorded.as_deref().unwrap().parse().unwrap(),
        fields[0].rerun.as_deref().unwrap().parse().unwrap(),
    );
    // The same draw from the same stream, over twice the range.
    assert!((now - 2.0 * was).abs() < 1e-5, "was {was}, now {now}");
    let text = d.to_string();
    assert!(
        text.contains(&format!(
            "test.spinner {}: its server path decided otherwise",
            d.decisions[0].net
        )) && text.contains(&format!("extra.rate was {was}, now {now}")),
        "{text}"
    );
}

#[test]
fn a_kind_that_does_not_describe_its_sections_shows_the_bytes_from_the_first_that_differs() {
    let bytes = recording(kinds::<3, false>(false));
    let mut r = Replay::open(&bytes, kinds::<6, false>(false)).unwrap();
    r.rerun_decisions(true);
    let d = r.verify(|_, _| {}).unwrap().expect("the change is caught");
    assert!(d.decisions[0].fields.is_empty());
    // The pose (31 bytes) is the same; the spin after it is not (doubled, it differs in
    // its exponent, the last bytes).
    let (a, b) = (&d.decisions[0].recorded, &d.decisions[0].rerun);
    let rate = |v: &[u8]| f32::from_le_bytes(v[31..35].try_into().unwrap());
    assert!((rate(b) - 2.0 * rate(a)).abs() < 1e-5);
    let first = (0..a.len()).find(|&i| a[i] != b[i]).unwrap();
    assert!(first >= 31);
    let text = d.to_string();
    let shown = format!(
        "they differ from byte {first}: recorded {:02x?}, now {:02x?}",
        &a[first..],
        &b[first..]
    );
    assert!(text.contains(&shown), "{text}");
}

#[test]
fn a_section_the_replay_refused_is_in_the_divergence_report_with_its_reason() {
    let bytes = recording(kinds::<3, false>(true));
    // The replay's client path refuses what the recording's accepted.
    let mut r = Replay::open(&bytes, kinds::<3, true>(true)).unwrap();
    let d = r.verify(|_, _| {}).unwrap().expect("the refusal diverges");
    let refused = d
        .notes
        .iter()
        .find(|n| n.what.contains("section refused"))
        .unwrap_or_else(|| panic!("no refused section in the report: {d}"));
    assert!(refused.tick <= d.tick);
    assert!(
        refused.what.contains("test.spinner") && refused.what.contains("a spin over 1 rad/s"),
        "{}",
        refused.what
    );
    let text = d.to_string();
    assert!(text.contains("what the replayed frames reported"), "{text}");
    assert!(text.contains("a spin over 1 rad/s"), "{text}");
}

#[test]
fn a_correction_the_session_took_is_in_the_divergence_report() {
    use lanyard::record::{Op, Recording};
    let config = GroupConfig {
        gravity: Vec3::ZERO,
        ..GroupConfig::default()
    };
    let mut g = EntityGroup::new(kinds::<3, false>(true), config);
    let id = g.spawn("test.spinner", &5u64, Owner::Server).unwrap();
    let net = g.get(id).unwrap().net_id();
    g.start_recording("spin", "server").unwrap();
    let mut bytes = g.take_recording().unwrap();
    for tick in 0..60 {
        if tick == 30 {
            // The body is put in a state from outside, as a correction does.
            let mut s = lanyard::pose::BodyState::of(g.get(id).unwrap().body());
            s.pos[0] += 0.25;
            g.set_body_state(id, &s).unwrap();
        }
        g.frame();
    }
    bytes.extend(g.stop_recording().unwrap());
    // The replay that applies it replays bit for bit.
    let mut r = Replay::open(&bytes, kinds::<3, false>(true)).unwrap();
    assert_eq!(r.verify(|_, _| {}).unwrap(), None);
    // One whose correction went elsewhere diverges there, and says the body was set.
    let mut rec = Recording::from_bytes(&bytes).unwrap();
    let op = rec
        .ticks
        .iter_mut()
        .flat_map(|t| &mut t.ops)
        .find_map(|op| match op {
            Op::BodyState { state, .. } => Some(state),
            _ => None,
        })
        .expect("the correction is recorded");
    op.pos[0] += 1.0;
    let mut r = Replay::open(&rec.to_bytes().unwrap(), kinds::<3, false>(true)).unwrap();
    let d = r.verify(|_, _| {}).unwrap().expect("it diverges");
    let set = d
        .notes
        .iter()
        .find(|n| n.what.contains("put in a state from outside"))
        .unwrap_or_else(|| panic!("no correction in the report: {d}"));
    assert_eq!(set.tick, d.tick);
    assert!(
        set.what.starts_with(&format!("test.spinner {net}")),
        "{}",
        set.what
    );
}
