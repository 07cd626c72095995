//! Headless replay tests of recorded sessions of the sample game: a dedicated server and two
//! bots, a few seconds, each peer's own recording. They must replay bit-exact.
//!
//! Re-record with `tests/fixtures/record.sh` when the recording format or the game's kinds
//! change on purpose.

use lanyard::KindId;
use lanyard::record::{Op, Recording};
use lanyard_game::kinds;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/fixtures/{name}.lnyr", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn spawned(rec: &Recording, kind: &str) -> usize {
    let k = KindId::of_name(kind);
    rec.ticks
        .iter()
        .flat_map(|t| &t.ops)
        .filter(|op| matches!(op, Op::Spawn { kind, .. } if *kind == k))
        .count()
}

#[test]
fn the_recorded_sessions_replay_bit_exact() {
    for name in ["server", "bot1", "bot2"] {
        let bytes = fixture(name);
        // With the registry the game replays with: the recorded arena's (whether crates
        // may change hands is the arena's).
        let mut replay = kinds::open_replay(&bytes).unwrap();
        assert!(replay.len() >= 200, "{name}: only {} ticks", replay.len());
        assert_eq!(replay.verify(|_, _| {}).unwrap(), None, "{name} diverged");
    }
}

#[test]
fn the_fixtures_hold_a_real_game() {
    // Not an empty yard: both players joined and grenades were thrown and went off.
    let server = Recording::from_bytes(&fixture("server")).unwrap();
    assert_eq!(server.header.recorded_by, "server");
    assert_eq!(spawned(&server, kinds::PLAYER), 2);
    assert!(
        spawned(&server, kinds::GRENADE) >= 2,
        "no grenades in the session"
    );
    let gone = server
        .ticks
        .iter()
        .flat_map(|t| &t.ops)
        .filter(|op| matches!(op, Op::Despawn { .. }))
        .count();
    assert!(gone >= 2, "no grenade went off");
    for bot in ["bot1", "bot2"] {
        let rec = Recording::from_bytes(&fixture(bot)).unwrap();
        assert_eq!(rec.header.recorded_by, "client");
        // A client learns the world from the server's spawn messages and its id from the
        // welcome: both are in its recording.
        assert!(spawned(&rec, kinds::CRATE) >= 20);
        assert!(
            rec.ticks
                .iter()
                .flat_map(|t| &t.ops)
                .any(|op| matches!(op, Op::Config(_)))
        );
        assert!(
            rec.ticks
                .iter()
                .flat_map(|t| &t.ops)
                .any(|op| matches!(op, Op::Rename { .. })),
            "{bot}: no confirmed spawn"
        );
    }
}

#[test]
fn a_replay_test_reads_like_this() {
    // The test API: open, step to a tick (checking every tick on the way), look, assert.
    let bytes = fixture("server");
    let mut replay = kinds::open_replay(&bytes).unwrap();
    assert_eq!(replay.run_to(120).unwrap(), None);
    assert_eq!(replay.tick(), 120);
    let world = replay.group();
    let crates = world
        .iter()
        .filter(|e| e.kind() == KindId::of_name(kinds::CRATE))
        .count();
    assert!(crates >= 20);
    assert!(world.iter().all(|e| e.body().translation().y > -50.0));
}
