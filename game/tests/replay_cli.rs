//! `lanyard-game replay FILE --verify` on the recorded fixtures: exit codes and messages.

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
    other[4..8].copy_from_slice(&9u32.to_le_bytes());
    let mut corrupted = good.clone();
    let n = corrupted.len();
    corrupted[n / 2] ^= 0x20;
    for (bytes, name, says) in [
        (other, "version", "recording format version 9"),
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
