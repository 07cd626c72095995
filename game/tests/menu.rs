//! The start screen, for real: under Xvfb, the game with no command is driven by its input
//! script. The player types a name (which is remembered), picks a LAN game that asks for a
//! password (found through the loopback broadcast), types the password at the prompt, and
//! is in: the server says so under the typed name.
//!
//! Needs `xvfb-run`; skips without it unless `LANYARD_REQUIRE_XVFB` is set (as in CI).

mod common;

use common::*;
use std::io::Write;
use std::time::Duration;

#[test]
fn a_name_typed_and_a_password_at_the_prompt_take_the_player_into_a_locked_game() {
    let Some((_one, dir)) = window_test("menu") else {
        return;
    };
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let disc = discovery(free_port());
    let (server, _) = server(&format!(
        "--seconds 20 --discovery-addr {disc} --name 'Locked Yard' --password 'open sesame'"
    ));
    // At 30 frames a second: the name at once, the game (found within a few seconds) at
    // frame 150, its password at the prompt.
    let script = "10 n\n12 text zed\n14 enter\n150 1\n155 text open sesame\n157 enter\n";
    let mut window = menu_window(&dir, script, &format!("--discovery-addr {disc}"));
    window.env("HOME", &home);
    let out = Running::start(window).finish(Duration::from_secs(120));
    succeeded(&out, "the window");
    let remembered = std::fs::read_to_string(home.join(".config/tumbleyard/name")).unwrap();
    assert_eq!(remembered, "zed");
    let log = stop(server);
    let text = String::from_utf8_lossy(&log.stdout);
    assert!(
        text.contains("zed joined"),
        "the server never saw zed:\n{text}"
    );
}

/// The first run asks for a name before anything else, offering the OS user's: Enter
/// takes it, and it is remembered and played under.
#[test]
fn the_first_run_asks_for_a_name_and_offers_the_users() {
    let Some((_one, dir)) = window_test("menu-first-run") else {
        return;
    };
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let disc = discovery(free_port());
    let (server, _) = server(&format!("--seconds 15 --discovery-addr {disc}"));
    let mut window = menu_window(
        &dir,
        "30 enter\n150 1\n",
        &format!("--discovery-addr {disc}"),
    );
    window.env("HOME", &home).env("USER", "quinn");
    let out = Running::start(window).finish(Duration::from_secs(120));
    succeeded(&out, "the window");
    let remembered = std::fs::read_to_string(home.join(".config/tumbleyard/name")).unwrap();
    assert_eq!(remembered, "quinn");
    let log = stop(server);
    let text = String::from_utf8_lossy(&log.stdout);
    assert!(text.contains("quinn joined"), "{text}");
}

/// Two first-time players on machines with the same user name: each takes the offered
/// name, both pick the same LAN game, and both get in, the second as "quinn (2)".
#[test]
fn two_first_time_players_both_get_in_under_names_of_their_own() {
    let Some((_one, dir)) = window_test("menu-two-first") else {
        return;
    };
    let disc = discovery(free_port());
    let (server, _) = server(&format!("--seconds 20 --discovery-addr {disc}"));
    let windows: Vec<Running> = ["a", "b"]
        .iter()
        .map(|who| {
            let own = dir.join(who);
            std::fs::create_dir_all(own.join("home")).unwrap();
            let mut w = menu_window(
                &own,
                "30 enter\n150 1\n",
                &format!("--discovery-addr {disc}"),
            );
            w.env("HOME", own.join("home")).env("USER", "quinn");
            Running::start(w)
        })
        .collect();
    for w in windows {
        succeeded(&w.finish(Duration::from_secs(120)), "a window");
    }
    let log = stop(server);
    let text = String::from_utf8_lossy(&log.stdout);
    assert!(text.contains("quinn joined"), "{text}");
    assert!(text.contains("quinn (2) joined"), "{text}");
    assert!(!text.contains("taken"), "{text}");
}

/// `join ADDR` to a locked game, with no password given: the refusal opens the password
/// prompt, and the password typed there takes the player in.
#[test]
fn a_password_is_asked_for_on_join_by_address() {
    let Some((_one, dir)) = window_test("menu-join-addr") else {
        return;
    };
    let (server, addr) = server("--seconds 15 --password 'open sesame'");
    // Refused within a second or two; the prompt waits for the password.
    let script = "90 text open sesame\n92 enter\n";
    let flags = format!("join {addr} --name yan --frames 300");
    let mut window = menu_window(&dir, script, &flags);
    window.env("HOME", dir.join("home"));
    let out = Running::start(window).finish(Duration::from_secs(120));
    succeeded(&out, "the window");
    let log = stop(server);
    let text = String::from_utf8_lossy(&log.stdout);
    assert!(
        text.contains("yan joined"),
        "yan never got in with the password typed at the prompt:\n{text}"
    );
}

/// A name typed on the start screen holds for the whole run: kicked back to the start
/// screen, the player joins again under it, not under the name the program started with.
#[test]
fn a_name_set_on_the_start_screen_survives_a_kick_and_a_rejoin() {
    let Some((_one, dir)) = window_test("menu-kick") else {
        return;
    };
    let disc = discovery(free_port());
    let (server, mut console, _) =
        server_with_console(&format!("--seconds 32 --discovery-addr {disc}"));
    // The name at once, the game at frame 150; once kicked, back on the start screen, a
    // digit joins again (pressed every 50 frames: in play a digit does nothing).
    let mut script = "10 n\n12 text zed\n14 enter\n150 1\n".to_owned();
    for frame in (400..=850).step_by(50) {
        script.push_str(&format!("{frame} 1\n"));
    }
    let flags = format!("--discovery-addr {disc} --frames 900");
    let mut window = menu_window(&dir, &script, &flags);
    window.env("HOME", dir.join("home"));
    let window = Running::start(window);
    server.wait_for("zed joined", Duration::from_secs(60));
    writeln!(console, "kick zed see you").unwrap();
    server.wait_for("kicked zed", Duration::from_secs(20));
    let out = window.finish(Duration::from_secs(120));
    succeeded(&out, "the window");
    drop(console);
    let log = stop(server);
    let text = String::from_utf8_lossy(&log.stdout);
    assert_eq!(
        text.matches("zed joined").count(),
        2,
        "zed joined once, was kicked, and joined again as zed:\n{text}"
    );
    assert!(!text.contains("player joined"), "{text}");
}

/// With a rendezvous server configured, the start screen lists its games under the LAN
/// games (here none answer), and a digit reaches one through it: the password prompt, the
/// punch, and the player is in.
#[test]
fn the_start_screen_lists_rendezvous_games_and_joins_one_by_its_digit() {
    let Some((_one, dir)) = window_test("menu-rendezvous") else {
        return;
    };
    let (rendezvous, rv) = common::rendezvous();
    let (server, _) = server(&format!(
        "--seconds 20 --name 'Far Yard' --password 'open sesame' --rendezvous {rv}"
    ));
    let script = "150 1\n155 text open sesame\n157 enter\n";
    // Discovery on a port of its own: no LAN game answers, so digit 1 is the far one.
    let disc = discovery(free_port());
    let flags = format!("--discovery-addr {disc} --rendezvous {rv} --name carol");
    let mut window = menu_window(&dir, script, &flags);
    window.env("HOME", dir.join("home"));
    let out = Running::start(window).finish(Duration::from_secs(120));
    succeeded(&out, "the window");
    let log = stop(server);
    let text = String::from_utf8_lossy(&log.stdout);
    assert!(
        text.contains("a player at 127.0.0.1:") && text.contains("carol joined"),
        "the server never saw carol come through the rendezvous server:\n{text}"
    );
    drop(rendezvous);
}

/// The window at 30 frames a second with `flags` (the start screen, unless they begin with
/// a command such as `join ADDR`), pressing what `script` says, for
/// 330 frames (or `--frames` among the flags) and a screenshot; no configuration folder
/// but the one a test gives as HOME.
fn menu_window(dir: &std::path::Path, script: &str, flags: &str) -> std::process::Command {
    let script_path = dir.join("script.txt");
    std::fs::write(&script_path, script).unwrap();
    let shot = dir.join("menu.png");
    let frames = if flags.contains("--frames") {
        ""
    } else {
        " --frames 330"
    };
    let line = format!(
        "{flags} --fps 30 --input-script '{}' --screenshot '{}'{frames}",
        script_path.display(),
        shot.display()
    );
    let mut window = windowed("1100x700", &line);
    window.env_remove("XDG_CONFIG_HOME");
    window
}

/// The server, once the window is done with it: stopped (SIGTERM ends it with its
/// summary), not left to run out its seconds.
fn stop(server: Running) -> std::process::Output {
    signal(&server, "-TERM");
    server.finish(Duration::from_secs(60))
}
