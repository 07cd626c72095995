//! `host --headless`: a host with no window, whose own player a bot plays, as processes on
//! 127.0.0.1. A bot that joins sees the host's player and its grenades; the host ends well.
//! (Host migration will test with it: a host that can be killed with no display.)

mod common;

use common::*;
use std::time::Duration;

#[test]
fn a_headless_host_plays_its_own_player_with_a_bot_and_takes_a_joining_one() {
    let _one = one_at_a_time();
    let port = free_port().to_string();
    let disc = discovery(free_port());
    let host = Running::start(game(&[
        "host",
        "--headless",
        "--name",
        "ada",
        "--seed",
        "3",
        "--seconds",
        "14",
        "--port",
        &port,
        "--discovery-addr",
        &disc,
    ]));
    host.wait_for("playing as ada", Duration::from_secs(30));
    let addr = format!("127.0.0.1:{port}");
    let bob = Running::start(game(&[
        "bot",
        &addr,
        "--name",
        "bob",
        "--seed",
        "4",
        "--seconds",
        "9",
    ]));
    let report = bot_reports(vec![bob]).remove(0);
    assert_eq!(report["ended"], "time up", "{report}");
    assert_eq!(
        report["remote_players"],
        serde_json::json!(["ada"]),
        "{report}"
    );
    // The host's bot throws: bob saw its grenades go off.
    assert!(
        report["explosions_seen"].as_u64().unwrap_or(0) >= 1,
        "the host's player never threw: {report}"
    );
    let out = host.finish(Duration::from_secs(60));
    let stdout = succeeded(&out, "the headless host");
    assert!(stdout.contains("bob joined"), "{stdout}");
    assert!(stdout.contains("shutting down (time up)"), "{stdout}");
}
