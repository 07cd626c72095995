//! `lanyard-game replay FILE --verify` on the recorded fixtures: exit codes and messages;
//! and `replay --view` under Xvfb, driven by its keys.

mod common;

use common::*;
use lanyard::record::{Op, Recording};

fn fixture() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/server.lnyr"
    ))
    .unwrap()
}

fn verify(bytes: &[u8], name: &str) -> (Option<i32>, String, String) {
    let dir = scratch(name);
    let path = dir.join("rec.lnyr");
    std::fs::write(&path, bytes).unwrap();
    let out = game(&["replay", path.to_str().unwrap(), "--verify"])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_good_recording_verifies() {
    let (code, out, _) = verify(&fixture(), "good");
    assert_eq!(code, Some(0));
    assert!(out.contains("ticks match"), "{out}");
}

#[test]
fn a_changed_section_is_named_with_its_tick_and_entity() {
    // A bot's recording: the crates' sections came from the server, so they are in it (the
    // server's own recording has none: its crates decide alone, and its replay writes them).
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/bot1.lnyr"
    ))
    .unwrap();
    let mut rec = Recording::from_bytes(&bytes).unwrap();
    // Push one crate's reported position 30 cm along x in the first section it is given
    // from tick 100 on.
    let (tick, net, payload) = rec.ticks[100..]
        .iter_mut()
        .find_map(|t| {
            let tick = t.tick;
            t.ops.iter_mut().find_map(|op| match op {
                Op::Section { net, payload }
                    if payload.len() == lanyard::pose::PoseState::LEN + 1 =>
                {
                    Some((tick, *net, payload))
                }
                _ => None,
            })
        })
        .expect("a crate section from tick 100 on");
    let x = i32::from_le_bytes(payload[0..4].try_into().unwrap()) + 300;
    payload[0..4].copy_from_slice(&x.to_le_bytes());
    let (code, _, err) = verify(&rec.to_bytes().unwrap(), "changed");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("diverged at tick {tick}")), "{err}");
    // Named at the next body frame, with what differs.
    let prefix = format!("  {net}: ");
    let line = err
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{net} not named: {err}"));
    assert!(
        line.contains("position") && line.contains(" m, rotation by "),
        "{line}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn wrong_version_truncated_and_corrupted_files_each_say_so() {
    let good = fixture();
    let mut other = good.clone();
    let next = lanyard::record::RECORDING_VERSION + 1;
    other[4..8].copy_from_slice(&next.to_le_bytes());
    let unknown = format!("recording format version {next}");
    let mut corrupted = good.clone();
    let n = corrupted.len();
    corrupted[n / 2] ^= 0x20;
    for (bytes, name, says) in [
        (other, "version", unknown.as_str()),
        (
            good[..good.len() - 5].to_vec(),
            "truncated",
            "truncated at tick",
        ),
        (corrupted, "corrupted", "corrupted at tick"),
        (b"hello".to_vec(), "alien", "not a Lanyard recording"),
    ] {
        let (code, _, err) = verify(&bytes, name);
        assert_eq!(code, Some(1), "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}

/// `replay --view` under Xvfb, driven by an input script: the tick it stopped at, as it
/// prints at the end, after `frames` frames of one tick each.
fn view_stops_at(script: &str, frames: u32) -> u64 {
    let Some((_one, dir)) = common::window_test("replay-view") else {
        return u64::MAX;
    };
    let script_path = dir.join("script.txt");
    std::fs::write(&script_path, script).unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/server.lnyr");
    let line = format!(
        "replay {fixture} --view --input-script '{}' --screenshot '{}' --frames {frames}",
        script_path.display(),
        dir.join("replay.png").display()
    );
    let out = common::Running::start(common::windowed("1100x700", &line))
        .finish(std::time::Duration::from_secs(120));
    let text = common::succeeded(&out, "the viewer");
    let stopped = text
        .lines()
        .find_map(|l| l.strip_prefix("the replay stopped at tick "))
        .unwrap_or_else(|| panic!("no stop line:\n{text}"));
    stopped.split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn the_viewer_pauses_steps_and_jumps_as_its_keys_say() {
    if !common::xvfb_or_skip() {
        return;
    }
    // Played alone, a tick a frame.
    assert_eq!(view_stops_at("", 60), 60);
    // Paused at frame 30, then two ticks on by hand.
    assert_eq!(view_stops_at("30 space\n40 right\n41 right\n", 60), 32);
    // Right while playing jumps 5 s (300 ticks) on: past the end, it stops there.
    assert_eq!(view_stops_at("10 right\n", 60), 299);
    // Up twice plays at 4x: frame 0 at 2x (the first press), then 4x.
    assert_eq!(view_stops_at("0 up\n1 up\n", 40), 2 + 39 * 4);
}
