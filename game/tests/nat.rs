//! Three homes behind real kernel NATs, built by the test itself out of network namespaces:
//!
//! ```text
//!   home A                    "the internet" 203.0.113.0/24                    home B
//!   192.0.2.2 ── router A ── [bridge: rendezvous 203.0.113.1] ── router B ── 198.51.100.2
//!   (server)    203.0.113.2            |                      203.0.113.3      (bot)
//!                                  router C 203.0.113.4 ── 192.0.2.130 (home C)
//! ```
//!
//! Each router masquerades (nftables) what leaves its `wan` side and, like a home router,
//! lets in from there only what answers something sent out. A `server` in home A registers
//! with the rendezvous server; a `bot` in home B finds it by name, both punch through their
//! NATs, and they play over the punched path. With routers that give every destination its
//! own port (a symmetric NAT: `masquerade random,fully-random`), punching cannot work: the
//! rendezvous server relays the game instead, and the two play through it. With router A
//! forwarding the game port and router B symmetric, punching still wins (the host answers
//! the bot at the port its punch came from), and nothing is relayed. A headless `host` in
//! home A with bots in homes B and C is killed, and the game goes on at home B's, through
//! both NATs (host migration beyond one LAN).
//!
//! The namespaces are linked only to each other (no interface in the machine's own
//! network), use only documentation address ranges, and are deleted when the test ends,
//! also when it fails (and any left by a killed run are deleted at the next). Without the
//! rights to make namespaces, or without `ip` and `nft`, the test says it skipped, unless
//! `LANYARD_REQUIRE_NETNS=1` (CI), where that fails.

mod common;

use common::{BIN, Running, assert_crates_agree, carried, last_json, signal, succeeded};
use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const RENDEZVOUS: &str = "203.0.113.1:47820";
const PREFIX: &str = "lyt-";

/// The namespaces of one test, deleted on drop.
struct Lab {
    /// `lyt-PID-TAG-`: every namespace of this lab starts so.
    prefix: String,
    made: Vec<String>,
    children: Vec<Running>,
}

fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn ok(cmd: &mut Command) {
    let out = run(cmd);
    succeeded(&out, "{cmd:?}");
}

fn ip(args: &[&str]) {
    ok(Command::new("ip").args(args));
}

/// Whether this machine lets the test build its lab; if not, says why (or fails where
/// `LANYARD_REQUIRE_NETNS` is set).
/// Runs `test` in a lab of two NATs tagged `tag` (symmetric ones if `symmetric`), if this
/// machine can build one, and checks that every namespace went with it.
/// How the routers map ports.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Nat {
    /// Every router keeps one public port per inside socket and lets in only answers.
    Cone,
    /// Every router gives each destination a new, random public port
    /// (`masquerade random,fully-random`): punching cannot work.
    Symmetric,
    /// Router A forwards the game port to the host (a full cone for it); the others are
    /// symmetric.
    ForwardedAndSymmetric,
}

fn in_lab(tag: &str, nat: Nat, test: impl FnOnce(&mut Lab)) {
    if !can_build(tag) {
        return;
    }
    let prefix;
    {
        let mut lab = Lab::build(tag, nat);
        prefix = lab.prefix.clone();
        test(&mut lab);
    }
    assert_eq!(ours_left(&prefix), Vec::<String>::new(), "namespaces left");
}

fn can_build(tag: &str) -> bool {
    let why = if Command::new("nft").arg("--version").output().is_err() {
        Some("nft (nftables) is not installed".to_owned())
    } else {
        common::netns_refused(&format!("{PREFIX}{}-{tag}-probe", std::process::id()))
    };
    let Some(why) = why else {
        return true;
    };
    assert!(
        std::env::var("LANYARD_REQUIRE_NETNS").as_deref() != Ok("1"),
        "LANYARD_REQUIRE_NETNS=1 but {why}"
    );
    eprintln!("skipped: {why}");
    false
}

impl Lab {
    /// Builds the three homes, their routers and the public segment, the routers mapping
    /// ports as `nat` says.
    fn build(tag: &str, nat: Nat) -> Lab {
        common::sweep_netns(PREFIX);
        let mut lab = Lab {
            prefix: format!("{PREFIX}{}-{tag}-", std::process::id()),
            made: Vec::new(),
            children: Vec::new(),
        };
        for n in ["pub", "ra", "rb", "rc", "ha", "hb", "hc"] {
            let ns = lab.ns(n);
            ip(&["netns", "add", &ns]);
            lab.made.push(ns.clone());
            ip(&["-n", &ns, "link", "set", "lo", "up"]);
        }
        let (public, ra, rb, rc) = (lab.ns("pub"), lab.ns("ra"), lab.ns("rb"), lab.ns("rc"));
        let (ha, hb, hc) = (lab.ns("ha"), lab.ns("hb"), lab.ns("hc"));
        // The public segment: a bridge, with the rendezvous server's address on it.
        ip(&["-n", &public, "link", "add", "br0", "type", "bridge"]);
        ip(&["-n", &public, "link", "set", "br0", "up"]);
        ip(&["-n", &public, "addr", "add", "203.0.113.1/24", "dev", "br0"]);
        // (router, home, its public address, its gateway and host on the LAN, the port on
        // the bridge): homes A and C share 192.0.2.0/24 between them, a half each.
        let homes = [
            (
                &ra,
                &ha,
                "203.0.113.2/24",
                "192.0.2.1/25",
                "192.0.2.2/25",
                "pa",
            ),
            (
                &rb,
                &hb,
                "203.0.113.3/24",
                "198.51.100.1/24",
                "198.51.100.2/24",
                "pb",
            ),
            (
                &rc,
                &hc,
                "203.0.113.4/24",
                "192.0.2.129/25",
                "192.0.2.130/25",
                "pc",
            ),
        ];
        for (router, home, wan, gateway, host, port) in homes {
            let via = gateway.split('/').next().unwrap_or(gateway);
            ip(&[
                "-n", &public, "link", "add", port, "type", "veth", "peer", "name", "wan", "netns",
                router,
            ]);
            ip(&["-n", &public, "link", "set", port, "master", "br0", "up"]);
            ip(&["-n", router, "link", "set", "wan", "up"]);
            ip(&["-n", router, "addr", "add", wan, "dev", "wan"]);
            ip(&[
                "-n", router, "link", "add", "lan", "type", "veth", "peer", "name", "eth0",
                "netns", home,
            ]);
            ip(&["-n", router, "addr", "add", gateway, "dev", "lan"]);
            ip(&["-n", router, "link", "set", "lan", "up"]);
            ip(&["-n", home, "addr", "add", host, "dev", "eth0"]);
            ip(&["-n", home, "link", "set", "eth0", "up"]);
            ip(&["-n", home, "route", "add", "default", "via", via]);
            ok(Command::new("ip").args([
                "netns",
                "exec",
                router,
                "sysctl",
                "-qw",
                "net.ipv4.ip_forward=1",
            ]));
            let forwarded = nat == Nat::ForwardedAndSymmetric && router == &ra;
            let mapping = match nat {
                Nat::Cone => "",
                _ if forwarded => "",
                _ => " random,fully-random",
            };
            // A forwarded game port: whatever comes to it goes to the host in home A.
            let forward = if forwarded {
                " chain pre {\n  type nat hook prerouting priority dstnat;\n  iifname \"wan\" udp dport 47810 dnat to 192.0.2.2:47810\n }\n"
            } else {
                ""
            };
            lab.nft(
                router,
                &format!(
                    "table ip nat {{\n{forward} chain post {{\n  type nat hook postrouting priority srcnat;\n  oifname \"wan\" masquerade{mapping}\n }}\n}}\n\
                     table ip filter {{\n chain input {{\n  type filter hook input priority filter; policy accept;\n  iifname \"wan\" ct state established,related accept\n  iifname \"wan\" drop\n }}\n}}\n",
                ),
            );
        }
        lab
    }

    fn ns(&self, n: &str) -> String {
        format!("{}{n}", self.prefix)
    }

    fn nft(&self, ns: &str, rules: &str) {
        let mut child = Command::new("ip")
            .args(["netns", "exec", ns, "nft", "-f", "-"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("nft runs");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(rules.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "nft in {ns}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The game binary with `args`, in namespace `n`, with no display and discovery on
    /// loopback.
    fn game(&self, n: &str, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns(n), BIN])
            .args(args)
            .env_remove("DISPLAY")
            .env("LANYARD_DISCOVERY_ADDR", "127.255.255.255:1")
            .env_remove("LANYARD_RENDEZVOUS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// The rendezvous server on the public segment and a server named `name` in home A,
    /// registered with it (browsed from home B until it is listed).
    fn rendezvous_and_server(&mut self, name: &str, more: &[&str]) -> (usize, usize) {
        let rv = Running::start(self.game(
            "pub",
            &["rendezvous", "--port", "47820", "--seconds", "120"],
        ));
        self.children.push(rv);
        let mut args = vec![
            "server",
            "--port",
            "47810",
            "--name",
            name,
            "--rendezvous",
            RENDEZVOUS,
            "--seconds",
            "120",
        ];
        args.extend_from_slice(more);
        let server = Running::start(self.game("ha", &args));
        self.children.push(server);
        let mut listed = String::new();
        for _ in 0..60 {
            let out = run(&mut self.game(
                "hb",
                &["browse", "--wait", "0.2", "--rendezvous", RENDEZVOUS],
            ));
            listed = String::from_utf8_lossy(&out.stdout).into_owned();
            if listed.contains(&format!("{name}  via rendezvous")) {
                return (0, 1);
            }
        }
        panic!("the server never showed at the rendezvous server: {listed}");
    }

    /// A bot in home B joining "home a" through the rendezvous server, for `seconds`.
    fn bot(&self, seconds: &str) -> Output {
        self.game(
            "hb",
            &[
                "bot",
                "--rendezvous",
                RENDEZVOUS,
                "home a",
                "--seconds",
                seconds,
            ],
        )
        .output()
        .unwrap()
    }

    /// Ends child `i` with SIGTERM and returns its output.
    fn stop(&mut self, i: usize) -> Output {
        let child = std::mem::replace(&mut self.children[i], Running::none());
        signal(&child, "-TERM");
        child.finish(Duration::from_secs(30))
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // The processes first (they are inside the namespaces), then the namespaces.
        self.children.clear();
        for ns in self.made.drain(..).rev() {
            let _ = Command::new("ip").args(["netns", "del", &ns]).status();
        }
    }
}

fn ours_left(prefix: &str) -> Vec<String> {
    let out = run(Command::new("ip").args(["netns", "list"]));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_server_and_a_bot_behind_two_nats_meet_by_name_and_play_over_the_punched_path() {
    in_lab("cone", Nat::Cone, |lab| {
        let (rv, server) = lab.rendezvous_and_server("home a", &[]);
        let bot = lab.bot("6");
        let said = String::from_utf8_lossy(&bot.stderr).into_owned();
        assert!(bot.status.success(), "the bot failed: {said}");
        assert!(said.contains("reached 'home a'"), "{said}");
        let report = last_json(&bot);
        assert_eq!(report["ended"], "time up");
        assert!(common::crates(&report["entities"]).len() >= 10);
        // The game both ways: a player that pushes crates holds them and sends their state.
        let bot_bytes =
            report["bytes_in"].as_u64().unwrap() + report["bytes_out"].as_u64().unwrap();
        assert!(
            bot_bytes > 20_000,
            "the bot and the server exchanged only {bot_bytes} bytes"
        );

        let out = lab.stop(server);
        let log = String::from_utf8_lossy(&out.stdout);
        // The server saw router A's public address registered, and the bot arrive from
        // router B's public address: the path went through both NATs.
        assert!(log.contains("(public address 203.0.113.2:47810)"), "{log}");
        assert!(
            log.contains("a player at 203.0.113.3:"),
            "the server saw the bot elsewhere: {log}"
        );
        assert!(log.contains("bot-1 joined"), "{log}");

        let stats = last_json(&lab.stop(rv));
        eprintln!("rendezvous: {stats}; the bot and the server exchanged {bot_bytes} bytes");
        assert_eq!(stats["introductions"], 1);
        assert_eq!(stats["relayed_bytes"], 0);
        let carried = carried(&stats);
        assert!(
            carried * 10 < bot_bytes,
            "the rendezvous server moved {carried} bytes"
        );
    });
}

#[test]
fn behind_symmetric_nats_the_rendezvous_server_relays_the_game_and_the_two_play() {
    in_lab("sym", Nat::Symmetric, |lab| {
        let summary = std::env::temp_dir().join(format!("{}summary.json", lab.prefix));
        let (rv, server) =
            lab.rendezvous_and_server("home a", &["--summary", &summary.to_string_lossy()]);
        let bot = lab.bot("8");
        let said = String::from_utf8_lossy(&bot.stderr).into_owned();
        assert!(bot.status.success(), "the bot failed: {said}");
        assert!(
            said.contains(
                "reached 'home a' through the rendezvous server 203.0.113.1:47820, relayed by it"
            ),
            "{said}"
        );
        let report = last_json(&bot);
        assert_eq!(report["ended"], "time up", "{report}");
        assert_eq!(report["relayed"], true, "{report}");
        let bot_bytes =
            report["bytes_in"].as_u64().unwrap() + report["bytes_out"].as_u64().unwrap();

        let out = lab.stop(server);
        let log = String::from_utf8_lossy(&out.stdout);
        assert!(
            log.contains("no direct path to the player at 203.0.113.3:")
                && log.contains("the rendezvous server 203.0.113.1:47820 relays it"),
            "{log}"
        );
        assert!(log.contains("bot-1 joined"), "{log}");
        let text = std::fs::read_to_string(&summary).expect("the server wrote its summary");
        let _ = std::fs::remove_file(&summary);
        let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_crates_agree("bot", &report, &summary);

        // The relay carried the game, and only it.
        let stats = last_json(&lab.stop(rv));
        eprintln!("rendezvous: {stats}; the bot and the server exchanged {bot_bytes} bytes");
        assert_eq!(stats["relay_sessions"], 1, "{stats}");
        assert_eq!(stats["relay_over_cap"], 0, "{stats}");
        let relayed = stats["relayed_bytes"].as_u64().unwrap();
        assert!(
            relayed >= bot_bytes && bot_bytes > 20_000,
            "relayed {relayed} bytes of the bot's {bot_bytes}"
        );
        assert!(stats["bytes_out"].as_u64() <= stats["bytes_in"].as_u64());
    });
}

#[test]
fn with_the_host_s_port_forwarded_punching_wins_over_a_symmetric_nat_and_nothing_is_relayed() {
    in_lab("fwd", Nat::ForwardedAndSymmetric, |lab| {
        let (rv, server) = lab.rendezvous_and_server("home a", &[]);
        let bot = lab.bot("4");
        let said = String::from_utf8_lossy(&bot.stderr).into_owned();
        assert!(bot.status.success(), "the bot failed: {said}");
        assert!(!said.contains("relayed"), "{said}");
        let report = last_json(&bot);
        assert_eq!(report["ended"], "time up", "{report}");
        assert_eq!(report["relayed"], false, "{report}");
        assert!(common::crates(&report["entities"]).len() >= 10);
        lab.stop(server);
        let stats = last_json(&lab.stop(rv));
        assert_eq!(stats["relay_sessions"], 0, "{stats}");
        assert_eq!(stats["relayed_bytes"], 0, "{stats}");
    });
}

#[test]
fn a_killed_host_behind_a_nat_hands_its_game_to_a_player_behind_another() {
    in_lab("migrate", Nat::Cone, |lab| {
        let rv = Running::start(lab.game(
            "pub",
            &[
                "rendezvous",
                "--port",
                "47820",
                "--ttl",
                "5",
                "--seconds",
                "120",
            ],
        ));
        lab.children.push(rv);
        let host = Running::start(lab.game(
            "ha",
            &[
                "host",
                "--headless",
                "--name",
                "ada",
                "--seed",
                "3",
                "--port",
                "47810",
                "--rendezvous",
                RENDEZVOUS,
                "--seconds",
                "120",
            ],
        ));
        host.wait_for(
            "(public address 203.0.113.2:47810)",
            Duration::from_secs(30),
        );
        let bot = |home: &str, name: &str, seed: &str, seconds: &str| {
            Running::start(lab.game(
                home,
                &[
                    "bot",
                    "--rendezvous",
                    RENDEZVOUS,
                    "ada",
                    "--name",
                    name,
                    "--seed",
                    seed,
                    "--seconds",
                    seconds,
                ],
            ))
        };
        let bob = bot("hb", "bob", "4", "30");
        bob.wait_for("the succession: bob", Duration::from_secs(30));
        let cat = bot("hc", "cat", "5", "24");
        cat.wait_for("the succession: bob, cat", Duration::from_secs(30));
        bob.wait_for("the succession: bob, cat", Duration::from_secs(30));

        signal(&host, "-KILL");
        drop(host);
        // bob, behind router B, takes over; cat, behind router C, reaches it through both
        // NATs at the address the old host saw (the two knock at each other).
        bob.wait_for(
            "ada left; you host the game now ('ada')",
            Duration::from_secs(20),
        );
        cat.wait_for("ada left; bob is now hosting", Duration::from_secs(20));
        // Once the old host's registration runs out, bob registers the game again.
        bob.wait_for(
            "registered as 'ada' at the rendezvous server 203.0.113.1:47820 (public address 203.0.113.3:",
            Duration::from_secs(30),
        );

        let out = cat.finish(Duration::from_secs(60));
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "cat failed: {said}");
        let cat = last_json(&out);
        let out = bob.finish(Duration::from_secs(60));
        assert!(
            out.status.success(),
            "bob failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bob = last_json(&out);
        let change = serde_json::json!([{ "left": "ada", "host": "bob" }]);
        assert_eq!(cat["host_changes"], change, "{cat}");
        assert_eq!(cat["ended"], "time up", "{cat}");
        assert_eq!(bob["hosting"], true, "{bob}");
        assert_crates_agree("cat", &cat, &bob);
    });
}
