//! Come back as yourself: a game that crashed or was killed, started again within the
//! server's grace window, plays on as the same player with the same score, and the table
//! shows no ghost. In one process on the hub (the claim handed over by hand), and as
//! processes on 127.0.0.1 (a bot killed with SIGKILL; the claim kept on disk).

mod common;

use common::*;
use lanyard::KindId;
use lanyard::prelude::*;
use lanyard_game::game::Game;
use lanyard_game::kinds::PLAYER;
use std::time::Duration;

/// How many player bodies named `name` a game's world holds.
fn players_named(g: &Game, name: &str) -> usize {
    let kind = KindId::of_name(PLAYER);
    g.group()
        .iter()
        .filter(|e| e.kind() == kind)
        .filter(|e| g.name_of(e.owner()) == name)
        .count()
}

#[test]
fn a_player_whose_game_crashed_comes_back_with_her_score_and_no_ghost() {
    let hub = lanyard_net::Hub::new();
    let (mut host, mut clients) = hub_games(&hub, "hostess", &["ada"]);
    let mut ada = clients.remove(0);
    tick_together(&mut [&mut host, &mut ada], 2.0);
    let id = ada.net().client_id().expect("ada joined");
    knock_off(&mut host, Owner::Client(id));
    tick_together(&mut [&mut host, &mut ada], 1.0);
    let claim = ada
        .net()
        .session_claim()
        .expect("a joined game has a claim");
    // Her game dies without a word; a new one starts from another port with the claim.
    drop(ada);
    tick_together(&mut [&mut host], 1.0);
    let mut again = Game::client_claiming_on(
        local_options("ada"),
        hub.endpoint(hub_addr(7)),
        (hub_addr(1), Some(&claim)),
        [7; 32],
    )
    .expect("a client");
    tick_together(&mut [&mut host, &mut again], 3.0);
    assert!(again.is_joined());
    assert_eq!(again.net().client_id(), Some(id), "the same player");
    assert_eq!(again.my_name(), Some("ada"));
    let table = [("ada".to_owned(), 1), ("hostess".to_owned(), 0)];
    assert_eq!(host.presentation().scores(), table, "her point, no ghost");
    assert_eq!(again.presentation().scores(), table);
    assert_eq!(players_named(&host, "ada"), 1, "one body of hers");
    assert_eq!(players_named(&again, "ada"), 1);
    let mine = again.my_player().expect("her player came with the world");
    let owner = again.group().get(mine).map(|e| e.owner());
    assert_eq!(owner, Some(Owner::Client(id)));
    assert_eq!(host.net().sessions().len(), 1, "one session");
    // She plays on: another point of hers counts on the same row.
    knock_off(&mut host, Owner::Client(id));
    tick_together(&mut [&mut host, &mut again], 1.0);
    assert_eq!(host.presentation().scores()[0], ("ada".to_owned(), 2));
}

/// A bot named ada against the server at `addr`, for `seconds`, with its configuration
/// folder (where it keeps its session's claim) in `home`.
fn ada(addr: &str, home: &std::path::Path, seconds: &str) -> Running {
    let mut c = game(&[
        "bot",
        addr,
        "--name",
        "ada",
        "--seed",
        "1",
        "--seconds",
        seconds,
    ]);
    c.env("XDG_CONFIG_HOME", home);
    Running::start(c)
}

/// The client id a bot said it joined as ("joined NAME as player N").
fn joined_as(out: &str) -> String {
    out.lines()
        .find_map(|l| {
            l.split_once(" as player ")
                .map(|(_, n)| n.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no 'as player' line:\n{out}"))
}

#[test]
fn a_bot_killed_and_started_again_plays_on_as_the_same_player_and_a_second_one_is_another() {
    let _one = one_at_a_time();
    let dir = scratch("restart");
    let (server, addr) = server("--seconds 40");
    let first = ada(&addr, &dir, "60");
    server.wait_for("ada joined", Duration::from_secs(20));
    first.wait_for(" as player ", Duration::from_secs(20));
    let id = joined_as(&first.so_far());
    signal(&first, "-KILL");
    let _ = first.finish(Duration::from_secs(5));
    let again = ada(&addr, &dir, "12");
    server.wait_for(
        "ada is back (its game started again)",
        Duration::from_secs(20),
    );
    // A second game of the same user while the first runs: another player.
    let other = ada(&addr, &dir, "6");
    let other = other.finish(Duration::from_secs(60));
    let again = again.finish(Duration::from_secs(60));
    // Done once the server took the goodbye (a SIGTERM first would stop it with the
    // goodbye unread): SIGTERM then ends it gracefully, with its log whole.
    server.wait_for("ada left (left the game)", Duration::from_secs(20));
    signal(&server, "-TERM");
    let server = server.finish(Duration::from_secs(60));
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let report = last_json(&again);
    assert_eq!(report["ended"], "time up");
    assert_eq!(report["restarted_session"], true, "{report}");
    assert_eq!(report["client_id"].to_string(), id, "the same player");
    assert_eq!(report["name"], "ada");
    let second = last_json(&other);
    assert_eq!(second["restarted_session"], false);
    assert_eq!(
        second["name"], "ada (2)",
        "two games of one user are two players"
    );
    assert_ne!(second["client_id"], report["client_id"]);
    let log = String::from_utf8_lossy(&server.stdout);
    assert_eq!(log.matches("ada joined").count(), 1, "{log}");
    assert_eq!(log.matches("ada (2) joined").count(), 1, "{log}");
    // ada's one session ended once, when the restarted game ran its time; the killed
    // game's session never ended on its own.
    assert_eq!(log.matches("ada left").count(), 1, "{log}");
    // Both games ended on purpose: nothing is left to take up.
    let slots = std::fs::read_dir(dir.join("tumbleyard").join("sessions")).expect("the slots");
    for slot in slots {
        let text = std::fs::read_to_string(slot.expect("a slot").path()).expect("readable");
        assert!(text.is_empty(), "a slot kept a claim: {text}");
    }
}

#[test]
fn ctrl_c_in_a_joined_window_leaves_the_game_with_no_ghost_and_the_name_stays_free() {
    let Some((_one, dir)) = window_test("ctrl-c") else {
        return;
    };
    let (server, addr) = server("--seconds 40");
    let mut window = windowed("800x500", &format!("join {addr} --name bob --fps 30"));
    window.env("XDG_CONFIG_HOME", &dir);
    let window = Running::start(window);
    server.wait_for("bob joined", Duration::from_secs(30));
    // Playing (a Ctrl-C before the welcome came leaves no session of ours to end).
    window.wait_for("the succession: bob", Duration::from_secs(30));
    // Ctrl-C reaches the game, a child of xvfb-run.
    let xvfb = window.pid().expect("running");
    let sent = std::process::Command::new("pkill")
        .args(["-INT", "-P", &xvfb.to_string(), "lanyard-game"])
        .status()
        .expect("pkill runs");
    assert!(sent.success(), "no game under xvfb-run {xvfb}");
    let out = window.finish(Duration::from_secs(30));
    assert!(
        out.status.success(),
        "the window did not end well: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    server.wait_for("bob left (left the game)", Duration::from_secs(10));
    // Back at once, as bob again (his row and points are the name's).
    let mut bob = game(&["bot", &addr, "--name", "bob", "--seconds", "3"]);
    bob.env("XDG_CONFIG_HOME", &dir);
    let report = last_json(&Running::start(bob).finish(Duration::from_secs(30)));
    assert_eq!(report["name"], "bob", "{report}");
    assert_eq!(
        report["restarted_session"], false,
        "the window left on purpose"
    );
    signal(&server, "-TERM");
    let log = String::from_utf8_lossy(&server.finish(Duration::from_secs(30)).stdout).into_owned();
    assert!(!log.contains("bob went silent"), "a ghost stayed: {log}");
    assert!(!log.contains("bob (2)"), "{log}");
}
