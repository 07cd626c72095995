//! Replay speed: how many simulated seconds of the sample game replay (and verify) per
//! wall-clock second.
//!
//! Run with `cargo bench -p lanyard-tests --bench replay`. Replays each recorded fixture
//! (`tests/fixtures/`: a dedicated server and two bots) several times, checking the hash at
//! every tick, and reports the median.

use lanyard::replay::Replay;
use lanyard_game::kinds;
use std::sync::Arc;
use std::time::Instant;

const RUNS: usize = 15;

fn main() {
    let registry = Arc::new(kinds::registry());
    for name in ["server", "bot1", "bot2"] {
        let path = format!("{}/fixtures/{name}.lnyr", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).expect("fixture");
        let mut rates = Vec::new();
        let mut ticks = 0;
        let mut dt = 0.0;
        let mut entities = 0;
        for _ in 0..RUNS {
            let t = Instant::now();
            let mut r = Replay::open(&bytes, registry.clone()).expect("open");
            assert_eq!(
                r.verify(|_, _| {}).expect("replay"),
                None,
                "{name} diverged"
            );
            let wall = t.elapsed().as_secs_f64();
            ticks = r.len();
            dt = r.header().dt;
            entities = r.group().len();
            rates.push(ticks as f64 * f64::from(dt) / wall);
        }
        rates.sort_by(f64::total_cmp);
        println!(
            "{name:>6}: {ticks} ticks ({:.1} s simulated, {entities} entities at the end, {} bytes): {:.0}x real time (median of {RUNS})",
            ticks as f64 * f64::from(dt),
            bytes.len(),
            rates[RUNS / 2]
        );
    }
}
