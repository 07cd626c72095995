//! The browser tests' lab (`web.rs`, and the browser bench): a network namespace holding
//! only its loopback, headless Chromium in it, and what a page writes to its console.
//!
//! Network safety: Chromium and everything it talks to run in a namespace made here,
//! which holds nothing but its own loopback (deleted when the lab is dropped, also on
//! failure, and swept at the next run if a killed run left it). Chromium also runs with
//! its background networking off. Nothing can leave the namespace, even a flag missed.

use super::{BIN, Running, scratch};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Every namespace of these tests is named so, then the test process's id.
const PREFIX: &str = "lanyard-web-";

/// A module of the browser build, if it is there: at `$var` if set, else `file` where
/// the build command in docs/src/playing.md writes it.
pub fn built(var: &str, file: &str) -> Option<PathBuf> {
    let p = match std::env::var_os(var) {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../target/wasm32-unknown-unknown/web/"
        ))
        .join(file),
    };
    p.is_file().then_some(p)
}

/// The browser build of the game, if it is there.
pub fn wasm() -> Option<PathBuf> {
    built("LANYARD_WEB_WASM", "lanyard-game.wasm")
}

/// Whether this machine can run the browser tests; if not, says why (or fails, where
/// `LANYARD_REQUIRE_BROWSER` is set).
pub fn can_run() -> bool {
    let why = if Command::new("chromium").arg("--version").output().is_err() {
        Some("chromium is not installed".to_owned())
    } else if wasm().is_none() {
        Some("the browser build is not there (see docs/src/playing.md)".to_owned())
    } else {
        // One probe name per call: the tests of a file ask at once.
        use std::sync::atomic::{AtomicU32, Ordering};
        static PROBES: AtomicU32 = AtomicU32::new(0);
        let n = PROBES.fetch_add(1, Ordering::Relaxed);
        super::netns_refused(&format!("{PREFIX}{}-probe{n}", std::process::id()))
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

/// A network namespace holding only its loopback, and the processes started in it
/// (killed, then the namespace deleted, when it is dropped).
pub struct Lab {
    pub ns: String,
    pub dir: PathBuf,
    pub children: Vec<Running>,
}

impl Lab {
    pub fn new(tag: &str) -> Lab {
        super::sweep_netns(PREFIX);
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
    pub fn exec(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns, program]);
        c
    }

    /// The game binary with `args` in the namespace, with no display, discovery on the
    /// loopback broadcast, and its standard input piped (a server's console).
    pub fn game(&self, args: &[&str]) -> Command {
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
    pub fn chromium(&self, profile: &str, url: &str) -> Command {
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

    pub fn start(&mut self, cmd: Command) -> usize {
        self.children.push(Running::start(cmd));
        self.children.len() - 1
    }

    /// `lanyard-game server` in the namespace on UDP 47810, its page on 47811, with the
    /// flags `more` (two minutes at most), once it serves; its index in `children`.
    pub fn server(&mut self, more: &[&str]) -> usize {
        self.serve(&["server"], more)
    }

    /// `lanyard-game` with the command (and its flags) `command`, serving as
    /// [`server`](Self::server) does, with the flags `more`.
    pub fn serve(&mut self, command: &[&str], more: &[&str]) -> usize {
        let mut args = command.to_vec();
        args.extend(["--port", "47810", "--web", "47811", "--seconds", "120"]);
        args.extend_from_slice(more);
        let server = self.start(self.game(&args));
        self.children[server].wait_for("browsers join at", Duration::from_secs(30));
        server
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
pub fn console_line(page: &Running, tag: &str, limit: Duration) -> String {
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
pub fn save_shot(data_url: &str, path: &std::path::Path) -> (u32, u32, usize) {
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
pub fn base64(text: &str) -> Vec<u8> {
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
