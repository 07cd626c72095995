//! Determinism: the same world and inputs give the same bits, a snapshot continues a run
//! exactly, and the check is sharp enough to see a single changed input.

use lanyard::prelude::*;
use lanyard_demo::Mover;
use lanyard_tests::{demo_registry, mixed_scene, run_hashes};

const BODIES: usize = 500;
const TICKS: usize = 1000;
const SNAP_AT: usize = 500;

#[test]
fn determinism_two_runs_match_at_every_tick() {
    let a = run_hashes(&mut mixed_scene(BODIES, 7), TICKS);
    let b = run_hashes(&mut mixed_scene(BODIES, 7), TICKS);
    assert_eq!(a.len(), TICKS);
    for (tick, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "runs diverged at tick {tick}");
    }
    // The scene really moves: the hash is not stuck.
    assert_ne!(a[10], a[TICKS - 1]);
}

#[test]
fn determinism_snapshot_restore_continues_exactly() {
    let mut straight = mixed_scene(BODIES, 11);
    let before = run_hashes(&mut straight, SNAP_AT);
    let snap = straight.snapshot().expect("snapshot");
    let after = run_hashes(&mut straight, TICKS - SNAP_AT);

    let mut restored = EntityGroup::restore(demo_registry(), &snap).expect("restore");
    assert_eq!(restored.tick(), SNAP_AT as u64);
    assert_eq!(restored.len(), BODIES);
    assert_eq!(
        restored.state_hash(),
        before[SNAP_AT - 1],
        "restored state differs"
    );
    let resumed = run_hashes(&mut restored, TICKS - SNAP_AT);
    for (i, (x, y)) in after.iter().zip(&resumed).enumerate() {
        assert_eq!(x, y, "restored run diverged at tick {}", SNAP_AT + i + 1);
    }
}

#[test]
fn determinism_one_changed_input_changes_the_hash() {
    let a = run_hashes(&mut mixed_scene(BODIES, 7), 300);
    let mut g = mixed_scene(BODIES, 7);
    // Re-seed one mover's input stream: everything else is identical.
    let first_mover = g
        .iter()
        .find(|e| e.kind() == lanyard::KindId::of_name(lanyard_demo::MOVER))
        .map(|e| e.id())
        .unwrap();
    *g.controller_mut::<Mover>(first_mover).unwrap() = Mover::new(999, 4.0, 45);
    let b = run_hashes(&mut g, 300);
    assert_ne!(
        a[299], b[299],
        "changing one input did not change the state hash"
    );
}
