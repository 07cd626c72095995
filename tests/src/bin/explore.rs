//! The explorer: runs Tumbleyard sessions with faults drawn from seeds, and checks the
//! invariants of [`lanyard_tests::explore`].
//!
//! ```text
//! cargo run --release -p lanyard-tests --bin explore -- --seeds 1000 [--from 0]
//! cargo run --release -p lanyard-tests --bin explore -- --seed 42
//! ```
//!
//! With `--classic`, each seed draws only the fault kinds of the first explorer (no kicks,
//! clock steps, contention or relevance): the schedules its earlier findings were found in.
//!
//! Every seed that fails prints its violation, the command that replays it, and (with
//! `--shrink`, on by default for `--seed`) the smallest schedule of faults that still fails
//! the same way.
//! The run ends with the seeds, the simulated time, the wall time and the faults of each
//! kind injected. The exit status is 1 if any seed failed. With `RUST_LOG` set (say
//! `RUST_LOG=lanyard_net=info`), every peer's log goes to stderr, interleaved.

use lanyard_tests::explore::{Outcome, Plan, SESSION_SECONDS, run, shrink, widen};
use std::collections::BTreeMap;
use std::time::Instant;

struct Args {
    from: u64,
    seeds: u64,
    shrink: bool,
    verbose: bool,
    classic: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        from: 0,
        seeds: 100,
        shrink: false,
        verbose: false,
        classic: false,
    };
    let mut it = std::env::args().skip(1);
    let num = |v: Option<String>, flag: &str| -> Result<u64, String> {
        v.ok_or_else(|| format!("{flag} needs a number"))?
            .parse()
            .map_err(|e| format!("{flag}: {e}"))
    };
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--seeds" => a.seeds = num(it.next(), "--seeds")?,
            "--from" => a.from = num(it.next(), "--from")?,
            "--seed" => {
                a.from = num(it.next(), "--seed")?;
                a.seeds = 1;
                a.shrink = true;
                a.verbose = true;
            }
            "--shrink" => a.shrink = true,
            "--verbose" | "-v" => a.verbose = true,
            "--classic" => a.classic = true,
            other => {
                return Err(format!(
                    "unknown argument '{other}' (--seeds N, --from S, --seed S, --shrink, --verbose, --classic)"
                ));
            }
        }
    }
    Ok(a)
}

fn main() {
    // `RUST_LOG=lanyard_net=info`: every peer's log, interleaved, to stderr.
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .without_time()
            .with_ansi(false)
            .init();
    }
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("explore: {e}");
            std::process::exit(2);
        }
    };
    let dir = std::env::temp_dir().join(format!("lanyard-explore-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("explore: cannot make {}: {e}", dir.display());
        std::process::exit(2);
    }
    let start = Instant::now();
    let mut faults: BTreeMap<&'static str, u64> = BTreeMap::new();
    let (mut passed, mut failed, mut replayed, mut host_changes) = (0u64, 0u64, 0usize, 0usize);
    let mut rejoins = 0;
    let (mut said, mut shown, mut unchecked) = (0u64, 0u64, 0u64);
    let mut most = lanyard_net::Footprint::default();
    for seed in a.from..a.from + a.seeds {
        let plan = match a.classic {
            true => Plan::draw_classic(seed),
            false => Plan::draw(seed),
        };
        if a.verbose {
            println!("{plan}");
        }
        match run(&plan, &dir) {
            Ok(Outcome {
                faults: f,
                replayed: r,
                host_changes: h,
                rejoins: j,
                footprint: fp,
                lines_said,
                lines_shown,
                chat_dropped,
                ..
            }) => {
                passed += 1;
                said += lines_said;
                shown += lines_shown;
                unchecked += u64::from(chat_dropped);
                rejoins += j;
                widen(&mut most, &fp);
                replayed += r;
                host_changes += h;
                for (k, n) in f {
                    *faults.entry(k).or_default() += n;
                }
            }
            Err(v) => {
                failed += 1;
                println!("FAILED {v}");
                println!(
                    "  replay it: cargo run --release -p lanyard-tests --bin explore -- --seed {seed}"
                );
                if a.shrink {
                    let (small, v) = shrink(&plan, v, &dir);
                    println!("  smallest schedule that fails:\n{small}\n  with: {v}");
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let hours = (a.seeds as f64 * f64::from(SESSION_SECONDS)) / 3600.0;
    let kinds: Vec<String> = faults.iter().map(|(k, n)| format!("{k} {n}")).collect();
    println!(
        "explored {} seeds from {}: {passed} held, {failed} failed; {hours:.2} simulated hours in {:.1} s of wall time; faults injected: {}; {replayed} recordings replayed bit for bit; {host_changes} host changes; {rejoins} joins tried again; {said} chat lines said, {shown} shown, in order and once (the end check skipped in {unchecked} seeds whose server dropped lines over its rate); the most a peer held: {} reliable messages unacknowledged ({} bytes), {} bytes for reassembly, {} datagrams in its inbox",
        a.seeds,
        a.from,
        start.elapsed().as_secs_f64(),
        kinds.join(", "),
        most.unacked_messages,
        most.unacked_bytes,
        most.held_bytes,
        most.inbox
    );
    if failed > 0 {
        std::process::exit(1);
    }
}
