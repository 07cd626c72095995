//! Real key presses: X key events sent by `xdotool` to a host's window under Xvfb (not the
//! game's own input script, which never reaches the keyboard state the camera reads).
//! Q and E held while a chat line is open are letters of it: the camera does not turn,
//! and the line goes out. Held with no chat line open, they turn it. Letters pressed
//! while playing stay out of the next chat line.
//!
//! Needs `xvfb-run` and `xdotool` (Debian: xvfb, xdotool); skips without them unless
//! `LANYARD_REQUIRE_XVFB` is set, as in CI.

mod common;

use common::*;
use std::process::Command;
use std::time::Duration;

fn xdotool_or_skip() -> bool {
    let here = Command::new("xdotool").arg("version").output().is_ok();
    if !here {
        assert!(
            std::env::var_os("LANYARD_REQUIRE_XVFB").is_none(),
            "xdotool is required here but not installed"
        );
        eprintln!("skipped: xdotool is not installed");
    }
    here
}

/// Hosts alone in a window and, once it shows, presses `keys` (xdotool commands); Esc
/// then quits. Returns the host's log.
fn host_pressing(dir: &std::path::Path, keys: &str) -> String {
    let port = free_port();
    // The host's window and the key presses share one virtual display. A host that never
    // saw the Esc ends after a minute: a failure, not a test that hangs.
    let script = format!(
        "timeout 60 '{BIN}' host --port {port} --name host --discovery-addr {disc} & game=$!\n\
         xdotool search --sync --name Tumbleyard >/dev/null\n\
         {keys}\n\
         xdotool key Escape\n\
         wait $game",
        disc = discovery(free_port()),
    );
    let mut c = Command::new("xvfb-run");
    c.args(["-a", "-s", "-screen 0 1100x700x24", "sh", "-c", &script])
        .env("HOME", dir)
        .env("RUST_LOG", "info,lanyard_game::window=debug")
        .env("LANYARD_DISCOVERY_ADDR", "127.255.255.255:1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let out = Running::start(c).finish(Duration::from_secs(90));
    succeeded(&out, "the host");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Holds Q, then E, for a while each.
const HOLD_Q_AND_E: &str = "xdotool keydown q sleep 0.4 keyup q keydown e sleep 0.2 keyup e";

#[test]
fn q_and_e_typed_in_the_chat_line_are_letters_not_camera_turns() {
    let Some((_turn, dir)) = window_test("real-keys") else {
        return;
    };
    if !xdotool_or_skip() {
        return;
    }
    let chatting = host_pressing(
        &dir,
        &format!("xdotool key Return\n{HOLD_Q_AND_E}\nxdotool key Return"),
    );
    assert!(
        chatting.contains("the window closed with the camera turned 0.000 rad"),
        "the camera turned while typing:\n{chatting}"
    );
    // The line that went out is the letters typed: a q, then an e (each perhaps repeated
    // while held).
    let line = chatting
        .lines()
        .find_map(|l| l.split_once("chat host: ").map(|(_, text)| text.trim()))
        .unwrap_or_else(|| panic!("no chat line went out:\n{chatting}"));
    let letters: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(
        letters.starts_with('q')
            && letters.ends_with('e')
            && letters.trim_matches(['q', 'e']).is_empty(),
        "the chat line was '{line}'"
    );

    // The same keys with no chat line open do turn it: the keys reach the window.
    let walking = host_pressing(&dir, HOLD_Q_AND_E);
    assert!(walking.contains("the window closed with the camera turned"));
    assert!(
        !walking.contains("the window closed with the camera turned 0.000 rad"),
        "the keys never reached the window:\n{walking}"
    );
    assert!(!walking.contains("chat host:"));
}

#[test]
fn letters_typed_while_playing_stay_out_of_the_next_chat_line() {
    let Some((_turn, dir)) = window_test("real-keys-typed") else {
        return;
    };
    if !xdotool_or_skip() {
        return;
    }
    // Walking keys and C (the overview) first, frames before the chat line opens.
    let log = host_pressing(
        &dir,
        "xdotool type --delay 80 wasdc\nxdotool sleep 0.5 key Return sleep 0.3\n\
         xdotool type hi\nxdotool sleep 0.3 key Return",
    );
    let line = log
        .lines()
        .find_map(|l| l.split_once("chat host: ").map(|(_, text)| text.trim()))
        .unwrap_or_else(|| panic!("no chat line went out:\n{log}"));
    assert_eq!(
        line, "hi",
        "the keys pressed before the line opened went into it"
    );
}
