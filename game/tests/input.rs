//! Key presses in the window, for real: under Xvfb, a host's window is driven by the
//! game's own input script (presses at given frames, read where the keyboard is read) with
//! the game advancing a fixed time per drawn frame, much faster and much slower than the
//! tick rate. Every press of F must throw exactly one grenade: none lost in frames that
//! run no tick, none doubled in frames that run several.
//!
//! Needs `xvfb-run`; skips without it unless `LANYARD_REQUIRE_XVFB` is set (as in CI).

mod common;

use common::*;
use std::time::Duration;

/// Hosts with a window for `seconds` of game time at `frame_time` seconds per frame,
/// pressing F every `every` frames, 20 times; returns the grenades the host's player threw.
fn throws(name: &str, frame_time: f32, every: u32, seconds: f32) -> u64 {
    let dir = scratch(name);
    // The shipped arena with a short throw cooldown, so presses can come quickly.
    let arena =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/arena.toml"))
            .unwrap();
    assert!(arena.contains("throw_cooldown = 1.2"));
    let arena_path = dir.join("arena.toml");
    std::fs::write(
        &arena_path,
        arena.replace("throw_cooldown = 1.2", "throw_cooldown = 0.1"),
    )
    .unwrap();
    let script: String = (0..20).map(|i| format!("{} f\n", 30 + i * every)).collect();
    let script_path = dir.join("presses.txt");
    std::fs::write(&script_path, script).unwrap();
    let summary = dir.join("summary.json");
    let host = windowed(
        "800x600",
        &format!(
            "host --port {} --name ada --discovery-addr {} --scene '{}' --fps 0 \
             --frame-time {frame_time} --input-script '{}' --seconds {seconds} --summary '{}'",
            free_port(),
            discovery(free_port()),
            arena_path.display(),
            script_path.display(),
            summary.display()
        ),
    );
    let out = Running::start(host).finish(Duration::from_secs(120));
    succeeded(&out, "host");
    let text = std::fs::read_to_string(&summary).expect("the host wrote its summary");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["my_throws"]
        .as_u64()
        .expect("the summary counts the host's throws")
}

#[test]
fn twenty_presses_throw_twenty_grenades_whether_frames_are_faster_or_slower_than_ticks() {
    if !xvfb_or_skip() {
        return;
    }
    // 250 frames a second against 60 ticks: most frames run no tick. A press every 40
    // frames is 0.16 s, past the 0.1 s cooldown.
    assert_eq!(throws("input-fast", 0.004, 40, 4.0), 20, "fast frames");
    // 20 frames a second: every frame runs three ticks. A press every 4 frames is 0.2 s.
    assert_eq!(throws("input-slow", 0.05, 4, 6.0), 20, "slow frames");
}
