//! The game binary as separate processes on 127.0.0.1: a dedicated server and two bots
//! play for twenty seconds; `browse` finds a server; bad input gives clear errors.

mod common;

use common::*;
use serde_json::Value;
use std::time::Duration;

#[test]
fn the_ports_the_tests_give_games_are_never_handed_out_for_port_0() {
    // A port picked for a game to bind later must not be one the kernel may give any
    // socket bound to port 0 meanwhile (the discovery port of a migration test was, once).
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok());
    let Some(low) = low.filter(|&l| l >= 13_024) else {
        return;
    };
    let ports: Vec<u16> = (0..50).map(|_| free_port()).collect();
    assert!(
        ports.iter().all(|&p| p < low),
        "{ports:?} (ephemeral from {low})"
    );
    let mut distinct = ports.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), ports.len(), "{ports:?}");
}

#[test]
fn a_server_and_two_bots_play_together_for_twenty_seconds() {
    let _one = one_at_a_time();
    let dir = scratch("play");
    let summary = dir.join("summary.json");
    let disc = discovery(free_port());
    let (server, addr) = server(&format!(
        "--seconds 22 --discovery-addr {disc} --summary '{}'",
        summary.display()
    ));
    let bots: Vec<Running> = ["1", "2"]
        .iter()
        .map(|seed| Running::start(game(&["bot", &addr, "--seed", seed, "--seconds", "20"])))
        .collect();
    let reports = bot_reports(bots);
    let out = server.finish(Duration::from_secs(60));
    let stdout = succeeded(&out, "the server");
    assert!(
        stdout.contains("players 2/8"),
        "no status line with both players:\n{stdout}"
    );
    // Each player's part of the status line ends with the age of the state it holds.
    assert!(
        stdout
            .lines()
            .filter(|l| l.starts_with("players 2/8"))
            .all(|l| l.matches(" ms | ").count() >= 2 && l.trim_end().ends_with(" ms")),
        "no state age per player:\n{stdout}"
    );
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let server_crates = crates(&summary["entities"]);
    assert!(server_crates.len() >= 20, "the yard has its crates");

    for (i, r) in reports.iter().enumerate() {
        let other = format!("bot-{}", 2 - i);
        for key in [
            "client_id",
            "remote_players",
            "explosions_seen",
            "entities",
            "bytes_in",
            "bytes_out",
            "loss",
            "ping_ms",
        ] {
            assert!(r.get(key).is_some(), "bot {i} report lacks '{key}'");
        }
        let remote = strings(&r["remote_players"]);
        assert!(
            remote.contains(&other.as_str()),
            "bot {i} never saw {other}: {remote:?}"
        );
        assert!(
            r["explosions_seen"].as_u64().unwrap() >= 1,
            "bot {i} saw none of {other}'s explosions"
        );
        // `explosions` counts every one it saw, its own grenades' too.
        assert!(
            r["explosions"].as_u64().unwrap() > r["explosions_seen"].as_u64().unwrap(),
            "bot {i} counted none of its own grenades: {r}"
        );
        assert!(r["bytes_in"].as_u64().unwrap() > 10_000);
        assert_crates_agree(&format!("bot {i}"), r, &summary);
    }
    assert_ne!(reports[0]["client_id"], reports[1]["client_id"]);
}

#[test]
fn browse_lists_a_running_server_with_its_player_count() {
    let disc = discovery(free_port());
    let (_server, addr) = server(&format!(
        "--seconds 20 --discovery-addr {disc} --name 'Browse Yard' --max-players 6 --password pw"
    ));
    let _bot = Running::start(game(&["bot", &addr, "--password", "pw", "--seconds", "15"]));
    let mut last = String::new();
    for _ in 0..32 {
        let out = game(&["browse", "--discovery-addr", &disc, "--wait", "0.5"])
            .output()
            .unwrap();
        assert!(out.status.success());
        last = String::from_utf8_lossy(&out.stdout).into_owned();
        if last.contains("Browse Yard") && last.contains("1/6 players") {
            assert!(last.contains("password"), "{last}");
            assert!(last.contains(&addr), "{last}");
            return;
        }
    }
    panic!("browse never listed the server with its bot:\n{last}");
}

#[test]
fn browse_asks_over_ipv6_too_when_given_an_ipv6_discovery_address() {
    let port = free_port();
    let disc = discovery(port);
    let disc6 = format!("[::1]:{port}");
    let (_server, addr) = server(&format!("--seconds 20 --discovery-addr {disc} --name Twin"));
    let addr6 = addr.replace("127.0.0.1", "[::1]");
    let mut last = String::new();
    for _ in 0..32 {
        let out = game(&[
            "browse",
            "--discovery-addr",
            &disc,
            "--discovery-addr6",
            &disc6,
            "--wait",
            "0.5",
        ])
        .output()
        .unwrap();
        assert!(out.status.success());
        last = String::from_utf8_lossy(&out.stdout).into_owned();
        // One responder, dual-stack, answered both: the server is listed at each address.
        if last.contains(&format!("{addr}  Twin")) && last.contains(&format!("{addr6}  Twin")) {
            return;
        }
    }
    panic!("browse never listed the server at both of its addresses:\n{last}");
}

#[test]
fn bad_flags_and_unreachable_servers_are_clear_errors() {
    let out = game(&["server", "--rate", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rate"));

    let out = game(&["server", "--scene", "no/such/arena.toml", "--seconds", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read scene"));

    // No display: the window commands refuse plainly instead of crashing in X11.
    for cmd in [&["host", "--seconds", "1"][..], &["join", "127.0.0.1"][..]] {
        let out = game(cmd).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{cmd:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no display") && !err.contains("panicked"),
            "{err}"
        );
    }

    // Nobody listens on this port: the bot gives up after its connect timeout.
    let port = free_port();
    let out = game(&["bot", &format!("127.0.0.1:{port}"), "--seconds", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no server answered"), "{err}");
    assert!(
        err.contains(&format!("127.0.0.1:{port}")),
        "the error names the address: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // The report is printed however the session ends.
    assert_eq!(last_json(&out)["ended"], "no server answered");

    // A bad port is an error about the port, before any name lookup.
    let out = game(&["bot", "127.0.0.1:99999"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("'99999' is not a port"), "{err}");

    // Each command takes only its own flags.
    for cmd in [
        &["join", "--seconds", "3"][..],
        &["join", "--port", "4000"][..],
        &["bot", "127.0.0.1", "--max-players", "3"][..],
        &["browse", "--name", "x"][..],
        &["server", "--spectate"][..],
    ] {
        let out = game(cmd).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("unexpected argument"), "{cmd:?}: {err}");
    }
    let help = game(&["bot", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        !help.contains("--max-players") && !help.contains("--port"),
        "{help}"
    );
}

#[test]
fn a_refused_join_is_logged_by_the_server_and_reported_by_the_bot() {
    let (server, addr) = server("--seconds 4 --password 'open sesame'");
    let out = game(&[
        "bot",
        &addr,
        "--name",
        "mallory",
        "--password",
        "nope",
        "--seconds",
        "3",
    ])
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(last_json(&out)["ended"], "refused: wrong password");
    let log = server.finish(Duration::from_secs(20));
    let err = String::from_utf8_lossy(&log.stderr);
    assert!(
        err.contains("refused 'mallory' from 127.0.0.1:") && err.contains("wrong password"),
        "the server did not log the refusal: {err}"
    );
}

#[test]
fn a_bot_plays_the_servers_arena_whatever_file_it_has() {
    let _one = one_at_a_time();
    let dir = scratch("arena");
    let shipped =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/arena.toml"))
            .unwrap();
    // A smaller yard with a stack elsewhere: the bot has only the shipped one.
    let small = shipped
        .replace("name = \"The Yard\"", "name = \"The Small Yard\"")
        .replace(
            "half_extents = [11.0, 0.5, 11.0]",
            "half_extents = [9.0, 0.5, 9.0]",
        )
        .replace("base = [0.0, 7.0]", "base = [0.0, 4.5]");
    assert_ne!(small, shipped);
    let arena = dir.join("small.toml");
    std::fs::write(&arena, small).unwrap();
    let summary = dir.join("summary.json");
    let (server, addr) = server(&format!(
        "--seconds 18 --scene '{}' --summary '{}'",
        arena.display(),
        summary.display()
    ));
    let bot = Running::start(game(&["bot", &addr, "--seed", "3", "--seconds", "16"]));
    let reports = bot_reports(vec![bot]);
    let out = server.finish(Duration::from_secs(60));
    succeeded(&out, "the process");
    let r = &reports[0];
    assert_eq!(r["arena"], "The Small Yard", "the bot played its own arena");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_crates_agree("the bot", r, &summary);
    assert_eq!(r["network"]["server"]["missing_baselines"], 0);
}

/// The crate check itself, on a made-up summary: crate 3 falls off and leaves at broadcast
/// 105, and comes home as crate 11 at once. A bot whose newest state is from broadcast 103
/// may hold crate 3 and not 11 (they changed near then); it may not miss crate 2, which was
/// there all along, nor hold a crate with no state that came long before, nor one 5 cm from
/// where the server sent it; and a bot whose newest state is older than the log fails.
#[test]
fn the_crate_check_allows_only_what_came_or_left_near_the_bots_newest_state() {
    let crate_at = |x: f64| serde_json::json!({ "kind": "crate", "pos": [x, 0.5, 0.0] });
    let mut broadcasts: Vec<Value> = (101..=110)
        .map(|n| serde_json::json!({ "number": n, "tick": 3 * n, "moved": {}, "gone": [] }))
        .collect();
    broadcasts[4] = serde_json::json!({
        "number": 105, "tick": 315, "moved": { "11": [0.0, 0.5, 0.0] }, "gone": [3],
    });
    let summary = serde_json::json!({
        "entities": { "1": crate_at(1.0), "2": crate_at(2.0), "11": crate_at(0.0) },
        "broadcasts": {
            "base_number": 100,
            "base": { "1": [1.0, 0.5, 0.0], "2": [2.0, 0.5, 0.0], "3": [3.0, 0.5, 0.0] },
            "base_since": { "1": 90, "2": 100, "3": 97 },
            "broadcasts": broadcasts,
        },
    });
    let held = |x: f64, n: Option<u64>| {
        let mut e = crate_at(x);
        if let Some(n) = n {
            e["broadcast"] = n.into();
            e["received"] = serde_json::json!([x, 0.5, 0.0]);
        }
        e
    };
    let report = |entities: Value| serde_json::json!({ "entities": entities });
    let fails =
        |r: Value| std::panic::catch_unwind(|| assert_crates_agree("bot", &r, &summary)).is_err();

    let whole = report(serde_json::json!({
        "1": held(1.0, Some(103)), "2": held(2.0, Some(101)), "3": held(3.0, Some(102)),
    }));
    assert_crates_agree("bot", &whole, &summary);
    let with_the_new_one = report(serde_json::json!({
        "1": held(1.0, Some(103)), "2": held(2.0, Some(101)), "11": held(0.0, None),
    }));
    assert_crates_agree("bot", &with_the_new_one, &summary);

    assert!(fails(report(serde_json::json!({
        "1": held(1.0, Some(103)), "3": held(3.0, Some(102)),
    }))));
    assert!(fails(report(serde_json::json!({
        "1": held(1.0, Some(103)), "2": held(2.0, None), "3": held(3.0, Some(102)),
    }))));
    assert!(fails(report(serde_json::json!({
        "1": held(1.0, Some(103)), "2": held(2.05, Some(101)), "3": held(3.0, Some(102)),
    }))));
    // A crate's state from before the log's reach is judged if the crate has not moved
    // since (crate 1 rests where it was at broadcast 90), and fails if it has.
    assert_crates_agree(
        "bot",
        &report(serde_json::json!({
            "1": held(1.0, Some(95)), "2": held(2.0, Some(101)), "3": held(3.0, Some(102)),
        })),
        &summary,
    );
    assert!(fails(report(serde_json::json!({
        "1": held(1.0, Some(103)), "2": held(2.0, Some(95)), "3": held(3.0, Some(102)),
    }))));
    // A bot whose newest state is older than the server's log cannot be judged.
    assert!(fails(report(serde_json::json!({
        "1": held(1.0, Some(99)), "2": held(2.0, Some(99)), "3": held(3.0, Some(99)),
    }))));
}

#[test]
fn a_bot_no_server_answers_says_it_never_joined_and_fails() {
    let addr = format!("127.0.0.1:{}", free_port());
    let out = game(&["bot", &addr, "--seed", "1", "--seconds", "3"])
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "a bot that never got in did not run its time"
    );
    let report = last_json(&out);
    assert!(
        report["ended"]
            .as_str()
            .unwrap_or("")
            .starts_with("never joined"),
        "{report}"
    );
}
