//! A kind's saved state has a version (`KindOptions::state_version`). A recording made
//! with version 1 of a kind, opened by a build whose kind is version 2, names the kind and
//! both versions; with the kind's migration from 1 it opens and replays bit for bit.

use lanyard::prelude::*;
use lanyard::replay::Replay;
use lanyard::{Error, KindOptions};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Version 1 of the kind's state: a stream and a countdown.
#[derive(Serialize, Deserialize)]
struct TickerV1 {
    rng: SeededRng,
    countdown: u32,
}

/// Version 2 adds the step the countdown goes down by (1 does what version 1 did).
#[derive(Serialize, Deserialize)]
struct TickerV2 {
    rng: SeededRng,
    countdown: u32,
    step: u32,
}

/// Picks a new spin every 30 ticks.
#[derive(Serialize, Deserialize)]
struct Spin {
    rate: f32,
}

/// The kind at either version: `V2` picks its state's layout.
#[derive(Serialize, Deserialize)]
struct Ticker<const V2: bool> {
    rng: SeededRng,
    countdown: u32,
    step: u32,
    spin: f32,
}

impl<const V2: bool> PoseKind for Ticker<V2> {
    type Decision = Spin;

    fn decide(&mut self, _me: EntityRef<'_>, _world: &WorldView<'_>) -> Spin {
        if self.countdown == 0 {
            self.countdown = 30;
            self.spin = self.rng.range_f32(-3.0, 3.0);
        }
        self.countdown = self.countdown.saturating_sub(self.step);
        Spin { rate: self.spin }
    }

    fn apply(&mut self, spin: Option<Spin>, ctx: &mut ClientContext<'_>) {
        self.spin = spin.map_or(self.spin, |s| s.rate);
        ctx.set_angvel(Vec3::new(0.0, self.spin, 0.0));
    }
}

/// The controller, saving its state in the layout of its version.
struct Versioned<const V2: bool>(Posed<Ticker<V2>>);

impl<const V2: bool> Controller for Versioned<V2> {
    fn server_update(&mut self, me: EntityRef<'_>, w: &WorldView<'_>, out: &mut SectionWriter<'_>) {
        self.0.server_update(me, w, out)
    }

    fn client_update(
        &mut self,
        me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        self.0.client_update(me, section, ctx)
    }

    fn save_state(&self, out: &mut Vec<u8>) {
        let t = &self.0.0;
        let rng = t.rng.clone();
        match V2 {
            false => lanyard::state::save(
                &TickerV1 {
                    rng,
                    countdown: t.countdown,
                },
                out,
            ),
            true => lanyard::state::save(
                &TickerV2 {
                    rng,
                    countdown: t.countdown,
                    step: t.step,
                },
                out,
            ),
        }
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let t = &mut self.0.0;
        if V2 {
            let s: TickerV2 = lanyard::state::load(bytes)?;
            (t.rng, t.countdown, t.step) = (s.rng, s.countdown, s.step);
        } else {
            let s: TickerV1 = lanyard::state::load(bytes)?;
            (t.rng, t.countdown) = (s.rng, s.countdown);
        }
        Ok(())
    }
}

/// The kind with the state layout of version 2 or 1 (`V2`), registered as `version`.
fn kinds<const V2: bool>(version: u16, migrate: bool) -> Arc<KindRegistry> {
    kinds_deciding::<V2>(version, migrate, false)
}

/// The same, deciding alone (`alone`) or not.
fn kinds_deciding<const V2: bool>(version: u16, migrate: bool, alone: bool) -> Arc<KindRegistry> {
    let mut r = KindRegistry::new();
    let options = KindOptions {
        state_version: version,
        // Its saved state leaves out the spin it decided last (it is in its sections), so
        // its server path cannot be run again on replay: its sections are recorded.
        decides_alone: alone,
        ..KindOptions::default()
    };
    r.register_with("test.ticker", options, |seed: &u64| {
        let t = Ticker::<V2> {
            rng: SeededRng::new(*seed),
            countdown: 0,
            step: 1,
            spin: 0.0,
        };
        Blueprint::dynamic_box([0.0, 0.5, 0.0], [0.5; 3], [9; 4], Versioned(Posed(t)))
    })
    .unwrap();
    if migrate {
        r.migrate_state("test.ticker", 1, |bytes| {
            let v1: TickerV1 = lanyard::state::load(bytes)?;
            let mut out = Vec::new();
            let v2 = TickerV2 {
                rng: v1.rng,
                countdown: v1.countdown,
                step: 1,
            };
            lanyard::state::save(&v2, &mut out);
            Ok(out)
        })
        .unwrap();
    }
    Arc::new(r)
}

/// Two tickers recorded by the layout of version 1 (registered as `version`) for 100
/// ticks, starting mid-countdown (so the saved state matters).
fn recorded_by_v1(version: u16) -> Vec<u8> {
    recorded_with(kinds::<false>(version, false))
}

/// Two tickers of `kinds` recorded for 100 ticks, starting mid-countdown.
fn recorded_with(kinds: Arc<KindRegistry>) -> Vec<u8> {
    let config = GroupConfig {
        gravity: Vec3::ZERO,
        ..GroupConfig::default()
    };
    let mut g = EntityGroup::new(kinds, config);
    g.spawn("test.ticker", &1u64, Owner::Server).unwrap();
    g.spawn("test.ticker", &2u64, Owner::Server).unwrap();
    for _ in 0..45 {
        g.frame();
    }
    g.start_recording("tickers", "server").unwrap();
    let mut bytes = g.take_recording().unwrap();
    for _ in 0..100 {
        g.frame();
    }
    bytes.extend(g.stop_recording().unwrap());
    bytes
}

#[test]
fn a_recording_of_an_older_state_version_names_the_kind_and_replays_after_its_migration() {
    let bytes = recorded_by_v1(1);
    // The same version replays.
    let mut same = Replay::open(&bytes, kinds::<false>(1, false)).unwrap();
    assert_eq!(same.verify(|_, _| {}).unwrap(), None);

    // Version 2 without a migration: refused, by name and both versions.
    let e = Replay::open(&bytes, kinds::<true>(2, false)).unwrap_err();
    assert_eq!(
        e,
        Error::KindStateVersion {
            kind: "test.ticker".into(),
            recorded: 1,
            current: 2
        }
    );
    let text = e.to_string();
    assert!(
        text.contains("'test.ticker'") && text.contains("version 1") && text.contains("version 2"),
        "{text}"
    );

    // With the migration from 1, it opens and replays bit for bit: the countdowns it
    // carried over decide as version 1 did.
    let mut migrated = Replay::open(&bytes, kinds::<true>(2, true)).unwrap();
    assert_eq!(migrated.verify(|_, _| {}).unwrap(), None);
    assert_eq!(migrated.tick(), same.tick());
    assert_eq!(migrated.group().state_hash(), same.group().state_hash());
}

#[test]
fn a_state_that_does_not_load_names_the_kind_and_the_entity() {
    // The layout changed and nobody raised the version: both say 0.
    let bytes = recorded_by_v1(0);
    let e = Replay::open(&bytes, kinds::<true>(0, false)).unwrap_err();
    match &e {
        Error::BadState { kind, net, .. } => {
            assert_eq!(kind, "test.ticker");
            assert!(
                e.to_string().contains(&format!("'test.ticker' {net}")),
                "{e}"
            );
        }
        other => panic!("not a state error naming the kind: {other}"),
    }
}

#[test]
fn a_kind_left_deciding_alone_whose_state_misses_a_decision_diverges_and_says_what_to_do() {
    // The ticker's saved state leaves out its last spin: run again on replay, its server
    // path starts from no spin, and the replay cannot follow.
    let kinds = kinds_deciding::<false>(0, false, true);
    let bytes = recorded_with(kinds.clone());
    let mut replay = Replay::open(&bytes, kinds).unwrap();
    let d = replay.verify(|_, _| {}).unwrap().expect("it diverges");
    let text = d.to_string();
    assert!(
        text.contains("test.ticker")
            && text.contains("wrote its sections again")
            && text.contains("decides_alone to false"),
        "{text}"
    );
}
