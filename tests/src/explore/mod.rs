//! Deterministic simulation testing of whole sessions: from a seed, a Tumbleyard session on
//! the in-memory hub in virtual time (a host or a dedicated server, bots that play, late
//! joins, spectators) and a schedule of faults (loss bursts, partitions, delay spikes,
//! freezes, kills and quits, a host that goes, a shrinking MTU), with invariants checked
//! every tick and at the end. A seed is the whole run: a failing one replays exactly, and
//! [`shrink`] removes faults while it still fails.
//!
//! The `explore` binary (`cargo run --release -p lanyard-tests --bin explore -- --seeds N`)
//! runs many seeds; `tests/tests/explore.rs` runs a fixed few in CI.

mod link;
mod plan;
mod run;

pub use link::{Dropped, FaultyLink, KnobHandle, Knobs};
pub use plan::{Fault, HOST_CUT_MAX, Joiner, Plan, QUIET, SERVER, SESSION_SECONDS};
pub use run::{Outcome, TOLERANCE, Violation, run, widen};

/// Removes faults from `plan` one at a time while it still fails: the smallest schedule
/// that fails, and its violation (`violation` is the plan's own).
pub fn shrink(plan: &Plan, violation: Violation, dir: &std::path::Path) -> (Plan, Violation) {
    let mut best = (plan.clone(), violation);
    loop {
        let mut smaller = None;
        for i in 0..best.0.faults.len() {
            let mut p = best.0.clone();
            p.faults.remove(i);
            if let Err(v) = run(&p, dir) {
                smaller = Some((p, v));
                break;
            }
        }
        match smaller {
            Some(s) => best = s,
            None => return best,
        }
    }
}
