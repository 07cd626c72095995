//! The rendezvous path on one machine: a `rendezvous` process, a password-protected
//! `server` that registers with it, `browse` listing it, and bots joining by name, all on
//! 127.0.0.1. (The path through real NATs is `nat.rs`.)

mod common;

use common::{carried, game, last_json, server, signal, succeeded};
use std::time::Duration;

fn browse(rv: &str) -> String {
    let out = game(&["browse", "--wait", "0.3", "--rendezvous", rv])
        .output()
        .unwrap();
    succeeded(&out, "the process");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Browses `rv` (each waits 0.3 s) until `name` shows, as registration takes a round trip
/// or two, and returns the last listing.
fn listed(rv: &str, name: &str) -> String {
    let mut listed = String::new();
    for _ in 0..40 {
        listed = browse(rv);
        if listed.contains(&format!("{name}  via rendezvous")) {
            break;
        }
    }
    listed
}

#[test]
fn bots_find_a_server_by_name_through_a_rendezvous_server_and_a_wrong_password_is_refused() {
    let (rendezvous, rv) = common::rendezvous();
    let (server, _) = server(&format!(
        "--name 'far yard' --password sesame --rendezvous {rv} --seconds 60"
    ));
    let listed = listed(&rv, "far yard");
    assert!(
        listed.contains(&format!("far yard  via rendezvous {rv}  0/8 players"))
            && listed.contains("password"),
        "{listed}"
    );

    let bot = |name: &str, password: &str, seconds: &str| {
        game(&[
            "bot",
            "--rendezvous",
            &rv,
            name,
            "--password",
            password,
            "--seconds",
            seconds,
        ])
        .output()
        .unwrap()
    };
    // The wrong password travels the punched path to the server, which refuses it.
    let wrong = bot("far yard", "open up", "3");
    assert!(!wrong.status.success());
    assert_eq!(last_json(&wrong)["ended"], "refused: wrong password");
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("wrong password"),
        "{}",
        String::from_utf8_lossy(&wrong.stderr)
    );
    // A name nobody registered is refused by the rendezvous server, saying so.
    let nobody = bot("no such yard", "sesame", "3");
    assert!(!nobody.status.success());
    let said = String::from_utf8_lossy(&nobody.stderr);
    assert!(
        said.contains("no game is registered under that name"),
        "{said}"
    );
    // The right one plays.
    let right = bot("far yard", "sesame", "4");
    assert!(
        right.status.success(),
        "{}",
        String::from_utf8_lossy(&right.stderr)
    );
    let report = last_json(&right);
    assert_eq!(report["ended"], "time up");
    assert!(common::crates(&report["entities"]).len() >= 10);
    // The game both ways: a player that pushes crates holds them and sends their state.
    let bot_bytes = report["bytes_in"].as_u64().unwrap() + report["bytes_out"].as_u64().unwrap();

    // The server unregisters as it ends.
    signal(&server, "-TERM");
    let out = server.finish(Duration::from_secs(30));
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("registered as 'far yard'"), "{said}");
    signal(&rendezvous, "-TERM");
    let stats = last_json(&rendezvous.finish(Duration::from_secs(30)));
    eprintln!("rendezvous: {stats}");
    assert_eq!(stats["registrations"], 1);
    assert_eq!(
        stats["introductions"], 2,
        "the two bots that found the game"
    );
    assert_eq!(stats["unregistered"], 1);
    assert_eq!(stats["games"], 0);
    assert_eq!(stats["relayed_bytes"], 0);
    // It carried none of the game: all it saw is a few small requests.
    let carried = carried(&stats);
    assert!(
        carried * 10 < bot_bytes,
        "the rendezvous server moved {carried} bytes, the bot and the server {bot_bytes}"
    );
}

#[test]
fn a_server_a_bot_and_the_rendezvous_server_all_on_ipv6_loopback() {
    let (rendezvous, rv) = common::rendezvous();
    // Every socket here binds dual-stack (or the loopback of its peer's family): the same
    // processes reached at [::1].
    let rv6 = rv.replace("127.0.0.1", "[::1]");
    let (server, addr) = server(&format!("--name six --rendezvous {rv6} --seconds 60"));
    let addr6 = addr.replace("127.0.0.1", "[::1]");
    let bot = |args: &[&str]| {
        let mut all = vec!["bot", "--seconds", "3"];
        all.extend_from_slice(args);
        game(&all).output().unwrap()
    };
    // Directly, at its IPv6 address.
    let direct = bot(&[&addr6]);
    succeeded(&direct, "the bot joining at [::1]");
    assert_eq!(last_json(&direct)["ended"], "time up");
    // By name, once the server has registered with the rendezvous server over IPv6.
    let listed = listed(&rv6, "six");
    assert!(
        listed.contains(&format!("six  via rendezvous {rv6}")),
        "{listed}"
    );
    let named = bot(&["--rendezvous", &rv6, "six"]);
    succeeded(&named, "the bot joining by name over [::1]");
    let report = last_json(&named);
    assert_eq!(report["ended"], "time up");
    assert_eq!(report["relayed"], false);
    assert!(common::crates(&report["entities"]).len() >= 10);

    signal(&server, "-TERM");
    let out = server.finish(Duration::from_secs(30));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!(
            "registered as 'six' at the rendezvous server {rv6} (public address {addr6})"
        )),
        "{said}"
    );
    assert!(said.contains("a player at [::1]:"), "{said}");
    signal(&rendezvous, "-TERM");
    let stats = last_json(&rendezvous.finish(Duration::from_secs(30)));
    assert_eq!(stats["introductions"], 1, "{stats}");
    assert_eq!(stats["relayed_bytes"], 0, "{stats}");
}

#[test]
fn a_server_registered_over_both_families_is_joined_over_ipv6_first() {
    let (rendezvous, rv4) = common::rendezvous();
    // One rendezvous server (dual-stack), named by both of its loopback addresses.
    let rv6 = rv4.replace("127.0.0.1", "[::1]");
    let both = format!("{rv4},{rv6}");
    let (server, addr4) = server(&format!("--name twin --rendezvous {both} --seconds 60"));
    let addr6 = addr4.replace("127.0.0.1", "[::1]");
    let listed = listed(&both, "twin");
    // IPv6 first, as it prints.
    assert!(
        listed.contains(&format!("twin  via rendezvous {rv6},{rv4}")),
        "{listed}"
    );
    let bot = |rv: &str| {
        game(&["bot", "--seconds", "3", "--rendezvous", rv, "twin"])
            .output()
            .unwrap()
    };
    // Given both, the bot asks over both, hears both of the server's addresses and
    // reaches it at its IPv6 one.
    let named = bot(&both);
    succeeded(&named, "the bot joining by name over both families");
    assert_eq!(last_json(&named)["ended"], "time up");
    let said = String::from_utf8_lossy(&named.stderr);
    assert!(said.contains(&format!("(at {addr6})")), "{said}");
    // Given the IPv4 address only, its socket is IPv4: the IPv6 address it hears goes
    // nowhere, and IPv4 takes over after its head start.
    let four = bot(&rv4);
    succeeded(&four, "the bot joining by name over IPv4");
    let said = String::from_utf8_lossy(&four.stderr);
    assert!(said.contains(&format!("(at {addr4})")), "{said}");

    signal(&server, "-TERM");
    let out = server.finish(Duration::from_secs(30));
    let said = String::from_utf8_lossy(&out.stdout);
    for public in [&addr4, &addr6] {
        assert!(
            said.contains(&format!("(public address {public})")),
            "registered over each family: {said}"
        );
    }
    signal(&rendezvous, "-TERM");
    let stats = last_json(&rendezvous.finish(Duration::from_secs(30)));
    assert_eq!(stats["registrations"], 1, "one game: {stats}");
    assert_eq!(
        stats["introductions"], 3,
        "the first bot over each family, the second over IPv4: {stats}"
    );
    assert_eq!(stats["unregistered"], 1, "{stats}");
    assert_eq!(stats["relayed_bytes"], 0, "{stats}");
}
