//! Deterministic simulation testing of whole sessions: from a seed, a Tumbleyard session on
//! the in-memory hub in virtual time (a host or a dedicated server, bots that play, late
//! joins, spectators) and a schedule of faults (loss bursts, partitions, delay spikes,
//! freezes, kills and quits, a host that goes, a shrinking MTU), with invariants checked
//! every tick and at the end (the reliable channel's through the players' chat, `chat`). A seed is the whole run: a failing one replays exactly, and
//! [`shrink`] removes faults while it still fails the same way.
//!
//! The `explore` binary (`cargo run --release -p lanyard-tests --bin explore -- --seeds N`)
//! runs many seeds; `tests/tests/explore.rs` runs a fixed few in CI.

mod chat;
mod link;
mod plan;
mod run;

pub use link::{Dropped, FaultyLink, KnobHandle, Knobs};
pub use plan::{Fault, HOST_CUT_MAX, Joiner, Plan, QUIET, SERVER, SESSION_SECONDS};
pub use run::{Outcome, TOLERANCE, Violation, run, widen};

/// Removes faults from `plan` one at a time while it still fails the same way (a
/// schedule that fails otherwise is another finding, not a smaller one): the smallest
/// schedule that fails, and its violation (`violation` is the plan's own).
pub fn shrink(plan: &Plan, violation: Violation, dir: &std::path::Path) -> (Plan, Violation) {
    let kind = failure_kind(&violation.what);
    let mut best = (plan.clone(), violation);
    loop {
        let mut smaller = None;
        for i in 0..best.0.faults.len() {
            let mut p = best.0.clone();
            p.faults.remove(i);
            if let Err(v) = run(&p, dir)
                && failure_kind(&v.what) == kind
            {
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

/// What kind of failure a violation's message tells: its words without the numbers in them
/// (ids, broadcasts, positions, distances), as far as its first 40 characters go.
fn failure_kind(what: &str) -> String {
    what.chars()
        .filter(|c| !c.is_ascii_digit() && !matches!(c, '.' | '-'))
        .take(40)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::failure_kind;

    #[test]
    fn failures_of_one_kind_differ_only_in_their_numbers() {
        let a = "#13 holds a state marked as broadcast 420 at [9.097, 0.408, 3.397], 0.073 m";
        let b = "#25 holds a state marked as broadcast 441 at [-5.538, -34.1, 3.951], 34.561 m";
        assert_eq!(failure_kind(a), failure_kind(b));
        let c = "its session ended: connection lost: timed out";
        let d = "its session ended: no server answered at 127.0.0.1:7000";
        assert_ne!(failure_kind(c), failure_kind(d));
        assert_ne!(
            failure_kind(a),
            failure_kind("more than one host has players")
        );
    }
}
