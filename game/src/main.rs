//! `lanyard-game`: the Lanyard sample game.
//!
//! The windowed game, the dedicated server and LAN play come with the NetManager. Until
//! then the binary runs the framework's demo scene headless, so a new user can see the
//! engine work: `cargo run --release -p lanyard-game`.

use lanyard::KindRegistry;
use lanyard::demo;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

const USAGE: &str = "\
usage: lanyard-game [demo] [--bodies N] [--seconds S] [--seed N]

  demo          run the demo scene headless and print its progress (the default)
  --bodies N    how many bodies to drop into the pit (default 300)
  --seconds S   how many simulated seconds to run (default 10)
  --seed N      the seed of the movers' input streams (default 1)

The windowed sample game (host, join, server, browse, bot) is not built yet;
this build runs the framework's demo scene with no window.";

struct Args {
    bodies: usize,
    seconds: f32,
    seed: u64,
}

fn parse(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args {
        bodies: 300,
        seconds: 10.0,
        seed: 1,
    };
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "demo" => {}
            "-h" | "--help" => return Ok(None),
            "--bodies" => a.bodies = num(&value("--bodies")?, "--bodies")?,
            "--seconds" => a.seconds = num(&value("--seconds")?, "--seconds")?,
            "--seed" => a.seed = num(&value("--seed")?, "--seed")?,
            "host" | "join" | "server" | "browse" | "bot" | "replay" => {
                return Err(format!(
                    "'{arg}' is not available yet: this build only runs the headless demo"
                ));
            }
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    if !(a.seconds.is_finite() && a.seconds >= 0.0) {
        return Err("--seconds must be a non-negative number".into());
    }
    Ok(Some(a))
}

fn num<T: std::str::FromStr>(s: &str, name: &str) -> Result<T, String> {
    s.parse()
        .map_err(|_| format!("{name}: '{s}' is not a valid number"))
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("lanyard-game: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut registry = KindRegistry::new();
    if let Err(e) = demo::register(&mut registry) {
        eprintln!("lanyard-game: {e}");
        return ExitCode::FAILURE;
    }
    let mut group = match demo::mixed_scene(Arc::new(registry), args.bodies, args.seed) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("lanyard-game: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "Lanyard demo: {} bodies (crates, balls, movers) in a pit, {} s simulated at {:.0} Hz, no window.",
        group.len(),
        args.seconds,
        1.0 / group.config().dt
    );
    println!("(The windowed sample game comes with the networking layer.)");
    let ticks = (args.seconds / group.config().dt).round() as u64;
    let per_second = (1.0 / group.config().dt).round() as u64;
    let started = Instant::now();
    let mut sparks = 0;
    for _ in 0..ticks {
        group.frame();
        sparks += group.drain_effects().filter(|e| e.name == "sparks").count();
        if group.tick() % per_second == 0 {
            let awake = group.iter().filter(|e| !e.body().is_sleeping()).count();
            println!(
                "t={:>5.1}s  awake {:>4}/{}  sparks {:>5}  packet {:>6} B  hash {:016x}",
                group.tick() as f32 * group.config().dt,
                awake,
                group.len(),
                sparks,
                group.last_packet().len(),
                group.state_hash()
            );
        }
    }
    let wall = started.elapsed().as_secs_f64();
    println!(
        "done: {} ticks in {:.2} s wall ({:.0}x real time), final hash {:016x}",
        ticks,
        wall,
        f64::from(args.seconds) / wall.max(1e-9),
        group.state_hash()
    );
    ExitCode::SUCCESS
}
