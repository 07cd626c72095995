//! Sessions as players live them, with the game binary as separate processes on
//! 127.0.0.1: a bot stopped with SIGSTOP resumes its session; the server's console kicks a
//! player and lists a spectator; SIGTERM ends the server gracefully and every bot says so.

mod common;

use common::*;
use serde_json::Value;
use std::io::Write;
use std::process::Output;
use std::time::Duration;

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn read_summary(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).expect("the server wrote its summary");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_bot_stopped_until_the_server_keeps_its_session_resumes_it_and_finishes() {
    let _one = one_at_a_time();
    let dir = scratch("resume");
    let summary = dir.join("summary.json");
    let (server, addr) = server(&format!("--seconds 30 --summary '{}'", summary.display()));
    let bot = |name: &str, seed: &str| {
        Running::start(game(&[
            "bot",
            &addr,
            "--name",
            name,
            "--seed",
            seed,
            "--seconds",
            "28",
        ]))
    };
    let ada = bot("ada", "1");
    let bob = bot("bob", "2");
    // Both play for a moment; then ada's process freezes until the server has stopped
    // hearing her and keeps her session for a resume.
    server.wait_for("players 2/8", Duration::from_secs(20));
    signal(&ada, "-STOP");
    server.wait_for("ada went silent", Duration::from_secs(20));
    signal(&ada, "-CONT");
    let ada = ada.finish(Duration::from_secs(60));
    let bob = bob.finish(Duration::from_secs(60));
    let server = server.finish(Duration::from_secs(60));
    assert!(server.status.success(), "server: {}", stderr(&server));
    assert!(
        ada.status.success(),
        "ada did not run her full time: {}",
        stderr(&ada)
    );
    assert!(bob.status.success(), "bob: {}", stderr(&bob));
    let report = last_json(&ada);
    assert_eq!(report["ended"], "time up");
    assert!(
        report["resumes"].as_u64().unwrap() >= 1,
        "ada never resumed: {report}"
    );
    // The id she joined with is the one she ends with.
    let joined = stderr(&ada)
        .lines()
        .find_map(|l| {
            l.split_once(" as player ")
                .map(|(_, n)| n.trim().to_owned())
        })
        .expect("ada says whom she joined as");
    assert_eq!(report["client_id"].to_string(), joined);
    let log = stdout(&server);
    assert!(log.contains("ada went silent"), "{log}");
    assert!(log.contains("ada resumed the session"), "{log}");
    // Her session ended once: when she left at the end of her time.
    assert_eq!(log.matches("ada left").count(), 1, "{log}");
    assert!(log.contains("ada left (left the game)"), "{log}");
    let summary = read_summary(&summary);
    assert_crates_agree("ada", &report, &summary);
    assert_crates_agree("bob", &last_json(&bob), &summary);
}

#[test]
fn the_console_kicks_a_player_and_lists_a_spectator_who_sees_everyone() {
    let _one = one_at_a_time();
    let dir = scratch("console");
    let summary = dir.join("summary.json");
    let (server, mut console, addr) =
        server_with_console(&format!("--seconds 23 --summary '{}'", summary.display()));
    let start = |args: &[&str]| {
        let mut all = vec!["bot", addr.as_str()];
        all.extend_from_slice(args);
        Running::start(game(&all))
    };
    let ada = start(&["--name", "ada", "--seed", "1", "--seconds", "24"]);
    let bob = start(&["--name", "bob", "--seed", "2", "--seconds", "15"]);
    let eve = start(&["--name", "eve", "--spectate", "--seconds", "21"]);
    server.wait_for("eve joined to watch", Duration::from_secs(20));
    server.wait_for("players 2/8", Duration::from_secs(20));
    writeln!(console, "players").unwrap();
    server.wait_for("spectator\n", Duration::from_secs(20));
    writeln!(console, "kick ada too many grenades").unwrap();
    let ada = ada.finish(Duration::from_secs(60));
    let bob = bob.finish(Duration::from_secs(60));
    let eve = eve.finish(Duration::from_secs(60));
    drop(console);
    let server = server.finish(Duration::from_secs(60));
    assert!(server.status.success(), "server: {}", stderr(&server));

    assert!(
        !ada.status.success(),
        "a kicked bot did not run its full time"
    );
    let kicked = last_json(&ada);
    assert_eq!(kicked["ended"], "kicked: too many grenades");
    let log = stdout(&server);
    let eve_line = log
        .lines()
        .find(|l| l.contains(" eve ") && l.contains("ping"))
        .unwrap_or_else(|| panic!("`players` did not list eve:\n{log}"));
    assert!(eve_line.trim_end().ends_with("spectator"), "{eve_line}");
    assert!(log.contains("kicked ada"), "{log}");
    assert!(
        log.contains("2 players playing, 1 spectator watching"),
        "{log}"
    );

    assert!(eve.status.success(), "eve: {}", stderr(&eve));
    let watched = last_json(&eve);
    assert_eq!(watched["ended"], "time up");
    assert_eq!(watched["spectator"], true);
    let seen = strings(&watched["remote_players"]);
    assert!(
        seen.contains(&"ada") && seen.contains(&"bob"),
        "eve saw {seen:?}"
    );
    assert_crates_agree("eve", &watched, &read_summary(&summary));
    assert!(bob.status.success(), "bob: {}", stderr(&bob));
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert!(
        !summary["players"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "eve"),
        "a spectator is no player: {summary}"
    );
}

#[test]
fn sigterm_ends_the_server_gracefully_and_every_bot_hears_it() {
    let _one = one_at_a_time();
    let dir = scratch("sigterm");
    let summary = dir.join("summary.json");
    let record = dir.join("server.lnyr");
    let (server, addr) = server(&format!(
        "--seconds 60 --summary '{}' --record '{}'",
        summary.display(),
        record.display()
    ));
    let bots: Vec<Running> = ["1", "2"]
        .iter()
        .map(|seed| Running::start(game(&["bot", &addr, "--seed", seed, "--seconds", "30"])))
        .collect();
    server.wait_for("players 2/8", Duration::from_secs(20));
    signal(&server, "-TERM");
    let out = server.finish(Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0), "server: {}", stderr(&out));
    assert!(stdout(&out).contains("shutting down (a signal)"));
    // It says where the recording went, and how to replay it.
    let r = record.display();
    assert!(
        stdout(&out).contains(&format!("the recording is in {r} (",))
            && stdout(&out).contains(&format!("replay it with `lanyard-game replay {r}`")),
        "{}",
        stdout(&out)
    );
    let text = std::fs::read_to_string(&summary).expect("the summary is written");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["players"].as_array().unwrap().len(), 2);
    // The recording is complete: it replays to its end.
    let replay = game(&["replay", record.to_str().unwrap(), "--verify"])
        .output()
        .unwrap();
    assert!(replay.status.success(), "{}", stderr(&replay));
    for b in bots {
        let out = b.finish(Duration::from_secs(20));
        assert!(!out.status.success(), "a bot claims it ran its full time");
        assert_eq!(
            last_json(&out)["ended"],
            "server shut down",
            "{}",
            stderr(&out)
        );
    }
}
