//! A browser plays: headless Chromium opens the page a native `server --web` serves and
//! plays over a WebRTC data channel.
//!
//! Network safety: Chromium and everything it talks to run in a network namespace this
//! test makes, which holds nothing but its own loopback (deleted when the test ends, also
//! on failure, and swept at the next run if a killed run left it). Chromium also runs with
//! its background networking off. Nothing can leave the namespace, even a flag missed.
//!
//! The tests need Chromium (`apt-get install chromium`), root (for `ip netns`), and the
//! browser build (`cargo build --profile web --target wasm32-unknown-unknown -p
//! lanyard-game`, or `LANYARD_WEB_WASM`). Without them they say so and pass, except where
//! `LANYARD_REQUIRE_BROWSER` is set (CI), where they fail.

mod common;

use common::{BIN, Running, assert_crates_agree, crates, scratch, strings};
use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every namespace of these tests is named so, then the test process's id.
const PREFIX: &str = "lanyard-web-";

/// The browser build, if it is there.
fn wasm() -> Option<PathBuf> {
    let p = match std::env::var_os("LANYARD_WEB_WASM") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../target/wasm32-unknown-unknown/web/lanyard-game.wasm"
        )),
    };
    p.is_file().then_some(p)
}

/// Whether this machine can run the browser tests; if not, says why (or fails, where
/// `LANYARD_REQUIRE_BROWSER` is set).
fn can_run() -> bool {
    let why = if Command::new("chromium").arg("--version").output().is_err() {
        Some("chromium is not installed".to_owned())
    } else if wasm().is_none() {
        Some("the browser build is not there (see the README)".to_owned())
    } else {
        let probe = format!("{PREFIX}{}-probe", std::process::id());
        match Command::new("ip").args(["netns", "add", &probe]).output() {
            Ok(o) if o.status.success() => {
                let _ = Command::new("ip").args(["netns", "del", &probe]).status();
                None
            }
            Ok(o) => Some(format!(
                "cannot make a network namespace: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Some(format!("cannot run ip: {e}")),
        }
    };
    match why {
        None => true,
        Some(why) => {
            assert!(
                std::env::var_os("LANYARD_REQUIRE_BROWSER").is_none(),
                "the browser tests must run here: {why}"
            );
            eprintln!("skipped: {why}");
            false
        }
    }
}

/// Deletes the namespaces a killed earlier run left behind (their process is gone).
fn sweep_stale() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = Command::new("ip").args(["netns", "del", name]).status();
        }
    }
}

/// A network namespace holding only its loopback, and the processes started in it
/// (killed, then the namespace deleted, when it is dropped).
struct Lab {
    ns: String,
    dir: PathBuf,
    children: Vec<Running>,
}

impl Lab {
    fn new(tag: &str) -> Lab {
        sweep_stale();
        let ns = format!("{PREFIX}{}-{tag}", std::process::id());
        let _ = Command::new("ip")
            .args(["netns", "del", &ns])
            .stderr(Stdio::null())
            .status();
        let made = Command::new("ip").args(["netns", "add", &ns]).status();
        assert!(made.is_ok_and(|s| s.success()), "ip netns add {ns}");
        let lab = Lab {
            dir: scratch(&format!("web-{tag}")),
            ns,
            children: Vec::new(),
        };
        let up = lab.exec("ip").args(["link", "set", "lo", "up"]).status();
        assert!(up.is_ok_and(|s| s.success()), "loopback up in {}", lab.ns);
        let links = lab.exec("ip").args(["-o", "link"]).output().unwrap();
        let links = String::from_utf8_lossy(&links.stdout);
        assert_eq!(
            links.lines().count(),
            1,
            "the namespace holds only its loopback: {links}"
        );
        lab
    }

    /// `program` run inside the namespace.
    fn exec(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns, program]);
        c
    }

    /// The game binary with `args` in the namespace, with no display, discovery on the
    /// loopback broadcast, and its standard input piped (a server's console).
    fn game(&self, args: &[&str]) -> Command {
        let mut c = self.exec(BIN);
        c.args(args)
            .env_remove("DISPLAY")
            .env("LANYARD_DISCOVERY_ADDR", "127.255.255.255:47800")
            .env_remove("LANYARD_DISCOVERY_ADDR6")
            .env_remove("LANYARD_RENDEZVOUS")
            .env("LANYARD_WEB_WASM", wasm().expect("checked by can_run"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Headless Chromium in the namespace at `url`, its background networking off and
    /// its console written to its standard error.
    fn chromium(&self, profile: &str, url: &str) -> Command {
        let profile = self.dir.join(profile);
        let _ = std::fs::remove_dir_all(&profile);
        let mut c = self.exec("chromium");
        c.args([
            "--headless",
            "--no-sandbox",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-domain-reliability",
            "--disable-breakpad",
            "--metrics-recording-only",
            "--no-pings",
            // WebGL on the CPU: the page draws in software.
            "--enable-unsafe-swiftshader",
            "--use-angle=swiftshader",
            // WebRTC over loopback, with the host candidates as they are (no mDNS names:
            // the namespace has no mDNS to resolve them).
            "--allow-loopback-in-peer-connection",
            "--force-webrtc-ip-handling-policy=default",
            "--disable-features=WebRtcHideLocalIpsWithMdns,Translate,OptimizationHints,MediaRouter",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1100,700",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        c
    }

    fn start(&mut self, cmd: Command) -> usize {
        self.children.push(Running::start(cmd));
        self.children.len() - 1
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // The processes first (they are inside the namespace), then the namespace.
        self.children.clear();
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).status();
    }
}

/// What a page wrote to its console after `tag ` (a report, a screenshot), once it came:
/// the page's standard error (Chromium's log) is searched for a console line holding it.
fn console_line(page: &Running, tag: &str, limit: Duration) -> String {
    let needle = format!("\"{tag} ");
    // Chromium writes the console line quoted: `"lanyard-report {...}", source: ...`; a
    // long one (a recording) arrives in pieces, so the wait is for its end.
    let line = |text: &str| -> Option<String> {
        let at = text.find(&needle)? + needle.len();
        let rest = &text[at..];
        Some(rest[..rest.find("\", source:")?].to_owned())
    };
    page.wait_until(&format!("console line {tag}"), |t| line(t).is_some(), limit);
    line(&page.so_far()).expect("waited for")
}

/// A page's screenshot (a `data:image/png;base64,` URL), decoded and written to `path`;
/// its size and how many distinct colours it has.
fn save_shot(data_url: &str, path: &std::path::Path) -> (u32, u32, usize) {
    let b64 = data_url
        .strip_prefix("data:image/png;base64,")
        .expect("a PNG data URL");
    let bytes = base64(b64);
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(&bytes))
        .unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("its pixels");
    let colours: std::collections::BTreeSet<&[u8]> = buf[..info.buffer_size()].chunks(4).collect();
    (info.width, info.height, colours.len())
}

/// Standard base64, decoded (padding and anything else outside the alphabet skipped).
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for v in text.bytes().filter_map(value) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

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
    let server = lab.start(lab.game(&[
        "server",
        "--port",
        "47810",
        "--web",
        "47811",
        "--seconds",
        "120",
        "--summary",
        summary.to_str().unwrap(),
    ]));
    lab.children[server].wait_for("browsers join at", Duration::from_secs(30));
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
    let host = lab.start(lab.game(&[
        "host",
        "--headless",
        "--name",
        "hosty",
        "--password",
        "open sesame",
        "--port",
        "47810",
        "--web",
        "47811",
        "--seconds",
        "120",
    ]));
    lab.children[host].wait_for("browsers join at", Duration::from_secs(30));
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
    let wrong = lab.start(lab.chromium(
        "wrong",
        "http://127.0.0.1:47811/?bot=3&seconds=20&name=pagec&password=nope",
    ));
    lab.children[host].wait_for("pagea joined", Duration::from_secs(60));
    lab.children[host].wait_for("pageb joined", Duration::from_secs(60));
    let refused = report(&lab.children[wrong], Duration::from_secs(60));
    assert!(
        refused["ended"]
            .as_str()
            .unwrap_or("")
            .contains("wrong password"),
        "a wrong password is refused as such: {refused}"
    );

    // Both pages' links cut for 5 s: the host finds them silent, and both resume.
    std::thread::sleep(Duration::from_secs(3));
    cut(&lab, 47811, true);
    let cut_at = Instant::now();
    lab.children[host].wait_for("pagea went silent", Duration::from_secs(20));
    lab.children[host].wait_for("pageb went silent", Duration::from_secs(20));
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

/// The verifier built for WebAssembly (`lanyard-game-verify`), if it is there.
fn verify_wasm() -> Option<PathBuf> {
    let p = match std::env::var_os("LANYARD_VERIFY_WASM") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../target/wasm32-unknown-unknown/web/lanyard_game_verify.wasm"
        )),
    };
    p.is_file().then_some(p)
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
    let (Some(verifier), true) = (verify_wasm(), node) else {
        assert!(
            std::env::var_os("LANYARD_REQUIRE_BROWSER").is_none(),
            "node and the WebAssembly verifier are required here"
        );
        eprintln!("skipped: node or the WebAssembly verifier is missing (see the README)");
        return;
    };
    let _one = common::one_at_a_time();
    let mut lab = Lab::new("verify");
    let server_rec = lab.dir.join("server.lyr");
    let server = lab.start(lab.game(&[
        "server",
        "--port",
        "47810",
        "--web",
        "47811",
        "--seconds",
        "120",
        "--record",
        server_rec.to_str().unwrap(),
    ]));
    lab.children[server].wait_for("browsers join at", Duration::from_secs(30));
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
