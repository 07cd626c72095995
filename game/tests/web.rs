//! A browser plays: headless Chromium opens the page a native `server --web` serves and
//! plays over a WebRTC data channel.
//!
//! Network safety: Chromium and everything it talks to run in a network namespace the test
//! makes, which holds nothing but its own loopback (see `common/browser.rs`).
//!
//! The tests need Chromium (`apt-get install chromium`), root (for `ip netns`), and the
//! browser build (`cargo build --profile web --target wasm32-unknown-unknown -p
//! lanyard-game`, or `LANYARD_WEB_WASM`). Without them they say so and pass, except where
//! `LANYARD_REQUIRE_BROWSER` is set (CI), where they fail.

mod common;

use common::browser::{Lab, base64, built, can_run, console_line, save_shot};
use common::{BIN, Running, assert_crates_agree, crates, strings};
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The server's console: tells it to quit, and returns its output once it ended.
fn quit(server: Running) -> std::process::Output {
    let mut server = server;
    if let Some(mut console) = server.stdin() {
        let _ = console.write_all(b"quit\n");
    }
    server.finish(Duration::from_secs(30))
}

#[test]
fn a_browser_joins_a_native_server_beside_a_native_bot_and_its_crates_agree() {
    if !can_run() {
        return;
    }
    let _one = common::one_at_a_time();
    let mut lab = Lab::new("play");
    let summary = lab.dir.join("summary.json");
    let server = lab.server(&["--summary", summary.to_str().unwrap()]);
    let _bot = lab.start(lab.game(&["bot", "127.0.0.1:47810", "--seed", "3", "--seconds", "40"]));
    let started = Instant::now();
    let page = lab.start(lab.chromium(
        "play",
        "http://127.0.0.1:47811/?bot=5&seconds=20&name=webby&shot=12",
    ));
    lab.children[server].wait_for("webby joined", Duration::from_secs(60));
    eprintln!(
        "the page joined {:.1} s after Chromium started",
        started.elapsed().as_secs_f32()
    );

    // `browse` says the game can be joined from a browser, and where.
    let browse = lab
        .game(&["browse", "--wait", "1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&browse.stdout);
    assert!(
        listed.contains("from a browser: http://127.0.0.1:47811"),
        "browse: {listed}"
    );

    let shot = console_line(&lab.children[page], "lanyard-shot", Duration::from_secs(60));
    let png = lab.dir.join("page-mid-game.png");
    let (w, h, colours) = save_shot(&shot, &png);
    eprintln!(
        "the page mid-game: {} ({w}x{h}, {colours} colours)",
        png.display()
    );
    assert!(
        w >= 640 && h >= 400 && colours > 50,
        "a drawn yard, not a blank page"
    );

    let report = console_line(
        &lab.children[page],
        "lanyard-report",
        Duration::from_secs(60),
    );
    let report: Value = serde_json::from_str(&report)
        .unwrap_or_else(|e| panic!("the page's report is not JSON ({e}): {report}"));
    assert_eq!(
        report["ended"], "time up",
        "the page played its 20 s: {report}"
    );
    assert!(
        strings(&report["remote_players"]).contains(&"bot-3"),
        "the page saw the native bot: {report}"
    );
    assert!(report["bytes_in"].as_u64().unwrap_or(0) > 10_000);

    // The server listed the page as a player while it played (its status line).
    let out = quit(lab.children.remove(server));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("players 2/") && l.contains("| webby ")),
        "no status line with the page as a player:\n{stdout}"
    );
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert!(
        crates(&summary["entities"]).len() >= 20,
        "the yard has its crates"
    );
    assert_crates_agree("the page", &report, &summary);
}

/// Drops every datagram to or from UDP `port` in the namespace (the pages' channels), or
/// lets them through again.
fn cut(lab: &Lab, port: u16, on: bool) {
    let rules = match on {
        true => format!(
            "table inet lanyard_cut {{\n chain input {{\n type filter hook input priority 0;\n \
             udp dport {port} drop\n udp sport {port} drop\n }}\n}}\n"
        ),
        false => "delete table inet lanyard_cut\n".to_owned(),
    };
    let mut nft = lab.exec("nft");
    nft.args(["-f", "-"]).stdin(Stdio::piped());
    let mut child = nft.spawn().expect("nft runs");
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(rules.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "nft: {rules}");
}

/// A page's report, as JSON.
fn report(page: &Running, limit: Duration) -> Value {
    let line = console_line(page, "lanyard-report", limit);
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

#[test]
fn two_browsers_and_a_native_host_play_through_a_cut_link_and_a_kick() {
    if !can_run() {
        return;
    }
    if Command::new("nft").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("LANYARD_REQUIRE_BROWSER").is_none(),
            "nft (nftables) is required here"
        );
        eprintln!("skipped: nft is not installed");
        return;
    }
    let _one = common::one_at_a_time();
    let mut lab = Lab::new("two");
    let locked = ["--name", "hosty", "--password", "open sesame"];
    let host = lab.serve(&["host", "--headless"], &locked);
    // The game is locked: the pages give the password in their query (`%20` and `+`
    // both a space), and a page with the wrong one is refused.
    let a = lab.start(lab.chromium(
        "a",
        "http://127.0.0.1:47811/?bot=1&seconds=35&name=pagea&password=open%20sesame",
    ));
    let b = lab.start(lab.chromium(
        "b",
        "http://127.0.0.1:47811/?bot=2&seconds=60&name=pageb&password=open+sesame",
    ));
    lab.children[host].wait_for("pagea joined", Duration::from_secs(60));
    lab.children[host].wait_for("pageb joined", Duration::from_secs(60));
    // (One page at a time on two cores: each draws in software.)
    let wrong = lab.start(lab.chromium(
        "wrong",
        "http://127.0.0.1:47811/?bot=3&seconds=20&name=pagec&password=nope",
    ));
    let refused = report(&lab.children[wrong], Duration::from_secs(60));
    assert!(
        refused["ended"]
            .as_str()
            .unwrap_or("")
            .contains("wrong password"),
        "a wrong password is refused as such: {refused}"
    );

    // Both pages' links cut for 5 s: the host finds them silent, and both resume.
    cut(&lab, 47811, true);
    let cut_at = Instant::now();
    lab.children[host].wait_for("pagea went silent", Duration::from_secs(20));
    lab.children[host].wait_for("pageb went silent", Duration::from_secs(20));
    // The one wait on the wall clock here: the cut is 5 s of a real link.
    std::thread::sleep(Duration::from_secs(5).saturating_sub(cut_at.elapsed()));
    cut(&lab, 47811, false);
    eprintln!(
        "the pages' links were cut for {:.1} s",
        cut_at.elapsed().as_secs_f32()
    );
    lab.children[host].wait_for("pagea resumed the session", Duration::from_secs(30));
    lab.children[host].wait_for("pageb resumed the session", Duration::from_secs(30));

    // The host's console kicks one page; the other plays on to its time.
    let mut console = lab.children[host].stdin().expect("the host's console");
    console.write_all(b"kick pageb testing kicks\n").unwrap();
    let kicked = report(&lab.children[b], Duration::from_secs(30));
    assert!(
        kicked["ended"]
            .as_str()
            .unwrap_or("")
            .contains("testing kicks"),
        "the kicked page says why: {kicked}"
    );
    let played = report(&lab.children[a], Duration::from_secs(60));
    assert_eq!(played["ended"], "time up", "{played}");
    assert!(
        played["resumes"].as_u64().unwrap_or(0) >= 1,
        "the page resumed its session after the cut: {played}"
    );
    assert!(
        strings(&played["remote_players"]).contains(&"hosty"),
        "the page saw the host play: {played}"
    );
    console.write_all(b"quit\n").unwrap();
}

/// `lanyard-game replay FILE` natively: the number of ticks and the final hash it prints.
fn verify_natively(file: &std::path::Path) -> (u64, String) {
    let out = Command::new(BIN).arg("replay").arg(file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{} does not verify natively: {}{}",
        file.display(),
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    let ticks = text
        .split("all ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no tick count in: {text}"));
    let hash = text
        .split("final hash ")
        .nth(1)
        .map(|h| h.trim().trim_end_matches(')').to_owned())
        .unwrap_or_else(|| panic!("no hash in: {text}"));
    (ticks, hash)
}

#[test]
fn a_server_s_recording_verifies_in_webassembly_and_a_page_s_natively() {
    if !can_run() {
        return;
    }
    let node = Command::new("node").arg("--version").output().is_ok();
    let verifier = built("LANYARD_VERIFY_WASM", "lanyard_game_verify.wasm");
    let (Some(verifier), true) = (verifier, node) else {
        assert!(
            std::env::var_os("LANYARD_REQUIRE_BROWSER").is_none(),
            "node and the WebAssembly verifier are required here"
        );
        eprintln!("skipped: node or the WebAssembly verifier is missing (see docs/src/playing.md)");
        return;
    };
    let _one = common::one_at_a_time();
    let mut lab = Lab::new("verify");
    let server_rec = lab.dir.join("server.lyr");
    let server = lab.server(&["--record", server_rec.to_str().unwrap()]);
    let page = lab.start(lab.chromium(
        "verify",
        "http://127.0.0.1:47811/?bot=7&seconds=12&name=recorder&record=1",
    ));
    let page_rec = console_line(
        &lab.children[page],
        "lanyard-recording",
        Duration::from_secs(60),
    );
    let report = report(&lab.children[page], Duration::from_secs(10));
    assert_eq!(report["ended"], "time up", "{report}");
    let out = quit(lab.children.remove(server));
    assert!(out.status.success(), "the server ended well");

    // The server's recording: natively, then in WebAssembly, with the same final hash.
    let (ticks, hash) = verify_natively(&server_rec);
    let wasm = Command::new("node")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/verify/verify.mjs"))
        .arg(&verifier)
        .arg(&server_rec)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&wasm.stdout);
    let outcome: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {text}{}",
            String::from_utf8_lossy(&wasm.stderr)
        )
    });
    assert_eq!(
        outcome["diverged"],
        Value::Null,
        "WebAssembly diverged: {outcome}"
    );
    assert_eq!(outcome["ticks"].as_u64(), Some(ticks), "{outcome}");
    assert_eq!(outcome["hash"].as_str(), Some(hash.as_str()), "{outcome}");
    eprintln!(
        "the server's recording: {ticks} ticks, final hash {hash} natively and in WebAssembly"
    );

    // The page's own recording (made in WebAssembly) verifies natively.
    let page_file = lab.dir.join("page.lyr");
    std::fs::write(&page_file, base64(&page_rec)).unwrap();
    let (ticks, hash) = verify_natively(&page_file);
    assert!(ticks > 300, "the page recorded its game: {ticks} ticks");
    eprintln!("the page's recording: {ticks} ticks verify natively, final hash {hash}");
}
