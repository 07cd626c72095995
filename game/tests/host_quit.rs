//! Esc on a host with players in its game asks first: one Esc does not end the game for
//! everyone, a second one within a few seconds does. Under Xvfb, with scripted presses.
//!
//! Needs `xvfb-run`; skips without it unless `LANYARD_REQUIRE_XVFB` is set (as in CI).

mod common;

use common::*;
use std::time::Duration;

/// Hosts with a bot joined, pressing Esc at the frames given, for 300 frames at 30 a
/// second; whether the window got to its last frame (its screenshot is taken there).
fn host_pressing_esc(name: &str, frames: &[u32]) -> bool {
    let (_one, dir) = window_test(name).expect("xvfb");
    let script = dir.join("script.txt");
    let lines: String = frames.iter().map(|f| format!("{f} esc\n")).collect();
    std::fs::write(&script, lines).unwrap();
    let shot = dir.join("host.png");
    let port = free_port().to_string();
    let disc = discovery(free_port());
    let host = Running::start(windowed(
        "1100x700",
        &format!(
            "host --port {port} --name host --discovery-addr {disc} --fps 30 --input-script '{}' \
             --screenshot '{}' --frames 300",
            script.display(),
            shot.display()
        ),
    ));
    let _bot = Running::start(game(&[
        "bot",
        &format!("127.0.0.1:{port}"),
        "--seconds",
        "30",
    ]));
    let out = host.finish(Duration::from_secs(120));
    succeeded(&out, "host");
    shot.exists()
}

#[test]
fn one_esc_on_a_host_with_players_asks_and_a_second_one_ends_the_game() {
    if !xvfb_or_skip() {
        return;
    }
    assert!(
        host_pressing_esc("esc-once", &[200]),
        "one Esc ended the game for everyone"
    );
    assert!(
        !host_pressing_esc("esc-twice", &[200, 215]),
        "a second Esc did not end it"
    );
}
