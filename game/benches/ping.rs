//! The ping each place shows, on loopback (`cargo bench -p lanyard-game --bench ping`): a
//! dedicated server, a bot (its report's `ping_ms` and `ping_median_ms`), a window under
//! Xvfb (the HUD's last value and its median over the last 10 s, which it logs when it
//! closes), and `browse` (discovery's round trip), all on
//! 127.0.0.1 with discovery on the loopback broadcast. On an idle machine the three
//! should agree within 2 ms. Run it on an idle machine: a busy one delays every side's
//! threads. `LANYARD_BENCH_RUNS` sets how many rounds (3).

#[path = "../tests/common/mod.rs"]
mod common;

use common::{Running, discovery, free_port, game, last_json, windowed, xvfb_or_skip};
use std::time::Duration;

/// A ping's last reading and its median over the last 10 s, milliseconds.
type LastAndMedian = (f64, f64);

/// One round: a server, a bot and a window play 20 s; `browse` asks five times. The
/// bot's ping (its last and its median over the last 10 s), the window's (the same), and
/// the browse pings, milliseconds.
fn round() -> (LastAndMedian, Option<LastAndMedian>, Vec<f64>) {
    let port = free_port();
    let disc = discovery(free_port());
    let addr = format!("127.0.0.1:{port}");
    let with_disc = |mut c: std::process::Command| {
        c.env("LANYARD_DISCOVERY_ADDR", &disc);
        c
    };
    let p = port.to_string();
    let server = Running::start(with_disc(game(&[
        "server",
        "--port",
        &p,
        "--seconds",
        "40",
    ])));
    server.wait_for("serving", Duration::from_secs(20));
    let bot = Running::start(with_disc(game(&["bot", &addr, "--seconds", "25"])));
    let home = common::scratch(&format!("bench-ping-{port}"));
    let window = xvfb_or_skip().then(|| {
        let mut w = with_disc(windowed("1024x640", &format!("join {addr} --name windy")));
        w.env("XDG_CONFIG_HOME", &home);
        Running::start(w)
    });
    std::thread::sleep(Duration::from_secs(8));
    let mut browsed = Vec::new();
    for _ in 0..5 {
        let out = with_disc(game(&["browse", "--wait", "1"]))
            .output()
            .expect("browse runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        browsed.extend(text.lines().filter(|l| l.contains(&addr)).filter_map(|l| {
            let (head, _) = l.split_once(" ms")?;
            head.rsplit(' ').next()?.parse::<f64>().ok()
        }));
        std::thread::sleep(Duration::from_secs(1));
    }
    std::thread::sleep(Duration::from_secs(6));
    let hud = window.map(|w| {
        let pid = w.pid().expect("running");
        let _ = std::process::Command::new("pkill")
            .args(["-INT", "-P", &pid.to_string(), "lanyard-game"])
            .status();
        let out = w.finish(Duration::from_secs(30));
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        log.lines()
            .find_map(|l| {
                let (_, tail) = l.split_once("the last ping to the server: ")?;
                let (last, rest) = tail.split_once(" ms (the median of the last 10 s: ")?;
                let median = rest.trim_end().trim_end_matches(" ms)");
                Some((last.parse::<f64>().ok()?, median.parse::<f64>().ok()?))
            })
            .expect("the window logs its last ping")
    });
    let report = last_json(&bot.finish(Duration::from_secs(60)));
    drop(server);
    let ms = |key: &str| report[key].as_f64().expect("the bot measured a ping");
    ((ms("ping_ms"), ms("ping_median_ms")), hud, browsed)
}

fn main() {
    let runs: usize = std::env::var("LANYARD_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    println!("| round | bot: last, median | window's HUD: last, median | browse (5 asks) |");
    println!("|---|---:|---:|---|");
    for i in 0..runs {
        let ((bot, bot_median), hud, browsed) = round();
        let hud = hud.map_or("(no Xvfb)".to_owned(), |(h, m)| {
            format!("{h:.1}, {m:.1} ms")
        });
        let browsed: Vec<String> = browsed.iter().map(|b| format!("{b:.0}")).collect();
        println!(
            "| {} | {bot:.1}, {bot_median:.1} ms | {hud} | {} ms |",
            i + 1,
            browsed.join(", ")
        );
    }
}
