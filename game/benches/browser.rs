//! The browser's figures (`cargo bench -p lanyard-game --bench browser`): the page's
//! transfer size, the time from opening the page to its first drawn frame on loopback, and
//! a browser player's downstream on the cube field beside a native player's.
//!
//! Needs what the browser tests need (Chromium, root for `ip netns`, the browser build:
//! see docs/src/playing.md); Chromium runs in a namespace holding only its loopback.
//! `LANYARD_BENCH_RUNS` sets how many pages are opened for the first frame (5).

#[path = "../tests/common/mod.rs"]
mod common;

use common::browser::{Lab, can_run, console_line};
use serde_json::Value;
use std::time::Duration;

fn main() {
    if !can_run() {
        return;
    }
    transfer();
    first_frame();
    downstream();
}

/// Every file of the page, as it is and as served (gzip).
fn transfer() {
    let wasm = common::browser::wasm().expect("checked");
    // SAFETY of the environment: this process's own variable, set before any thread.
    unsafe { std::env::set_var("LANYARD_WEB_WASM", &wasm) };
    let site = lanyard_game::game::web::site().expect("the page's files");
    println!("| file | as it is | as served (gzip) |");
    println!("|---|---:|---:|");
    let (mut plain, mut gzip) = (0, 0);
    for (path, served) in site.sizes() {
        let f = site.get(&path).expect("listed");
        println!("| {path} | {} B | {served} B |", f.plain.len());
        plain += f.plain.len();
        gzip += served;
    }
    println!("| all | {plain} B | {gzip} B |\n");
}

/// Opens the page (its start screen) on a fresh profile, `runs` times: when its first
/// frame was drawn, in milliseconds since it was opened.
fn first_frame() {
    let runs: usize = std::env::var("LANYARD_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let mut lab = Lab::new("bench-frame");
    lab.server(&[]);
    let mut ms: Vec<f64> = (0..runs)
        .map(|i| {
            let page = lab.start(lab.chromium(&format!("frame{i}"), "http://127.0.0.1:47811/"));
            let line = console_line(
                &lab.children[page],
                "lanyard-first-frame",
                Duration::from_secs(60),
            );
            lab.children.remove(page);
            line.trim().parse().expect("milliseconds")
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    println!(
        "first drawn frame after opening the page, {runs} fresh profiles: median {:.0} ms, min {:.0} ms, max {:.0} ms ({ms:?})\n",
        ms[runs / 2],
        ms[0],
        ms[runs - 1]
    );
}

/// A native bot and a browser bot play the cube field together for 20 s: what each took
/// in, in kbit/s over its run.
fn downstream() {
    let mut lab = Lab::new("bench-cubes");
    let cubes = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/cubes.toml");
    lab.server(&["--scene", cubes]);
    let native = lab.start(lab.game(&["bot", "127.0.0.1:47810", "--seed", "4", "--seconds", "20"]));
    let page = lab.start(lab.chromium(
        "cubes",
        "http://127.0.0.1:47811/?bot=5&seconds=20&name=webby",
    ));
    let web: Value = serde_json::from_str(&console_line(
        &lab.children[page],
        "lanyard-report",
        Duration::from_secs(90),
    ))
    .expect("the page's report");
    let out = lab.children.remove(native).finish(Duration::from_secs(60));
    let native: Value = common::last_json(&out);
    let kbps = |r: &Value| r["bytes_in"].as_f64().unwrap_or(0.0) * 8.0 / 1000.0 / 20.0;
    println!("| the cube field, 20 s | downstream (what the game took in) |");
    println!("|---|---:|");
    println!("| native bot | {:.1} kbit/s |", kbps(&native));
    println!("| browser bot | {:.1} kbit/s |", kbps(&web));
}
