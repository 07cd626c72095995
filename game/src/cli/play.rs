//! The commands that play or look without a window: `bot`, `browse`, and `replay --verify`.

use crate::cli::*;

pub(crate) fn bot(
    c: &Common,
    addr: &str,
    by_name: &ByName,
    seed: u64,
    spectate: bool,
) -> Result<(), String> {
    let mut o = options(c, &format!("bot-{seed}"))?;
    o.spectate = spectate;
    let entropy = lanyard_game::game::entropy();
    let mut game = match &by_name.rendezvous {
        Some(rv) => {
            let rv = rendezvous_addr(rv)?;
            let game = Game::client_by_name(o, rv, addr, entropy)?;
            let how = if game.relayed() {
                ", relayed by it (punching found no direct path)"
            } else {
                ""
            };
            let at = game
                .server_peer()
                .map(|a| format!(" (at {a})"))
                .unwrap_or_default();
            eprintln!("reached '{addr}' through the rendezvous server {rv}{how}{at}");
            game
        }
        None => Game::client(o, server_addr(addr)?, entropy)?,
    };
    if let Some(r) = &c.record {
        game.record_to(r)?;
    }
    let mut brain = Bot::new(seed, c.seconds);
    let dt = 1.0 / lanyard_game::game::TICK_HZ;
    runner::run(
        &mut game,
        c.seconds,
        |g, left| {
            if !spectate {
                let input = brain.input(g, dt, left);
                g.set_input(input);
            }
            true
        },
        |g, _| {
            for m in g.take_messages() {
                eprintln!("{m}");
            }
        },
    );
    // However the run ended, the report is printed; the exit status says whether the bot
    // ran its full time.
    let ended = game.run_outcome();
    let report = game.bot_report_json(&ended);
    game.shutdown();
    println!("{report}");
    match ended.as_str() {
        "time up" => Ok(()),
        _ => Err(game.ended().map_or(ended, str::to_owned)),
    }
}

pub(crate) fn browse(c: &Common, wait: f32, meet: &Meet) -> Result<(), String> {
    let rv = meet.addr()?;
    // The rendezvous server is asked while the LAN answers.
    let remote = rv.map(|rv| std::thread::spawn(move || rendezvous::list(rv)));
    let found = discovery::browse_each(c.discovery(), Duration::from_secs_f32(wait))
        .map_err(|e| format!("cannot browse: {e}"))?;
    if found.is_empty() {
        println!("no games found on {}", c.discovery());
    }
    for f in found {
        let web = f
            .info
            .web_port
            .map(|p| format!("  from a browser: http://{}:{p}", f.addr.ip()))
            .unwrap_or_default();
        println!(
            "{}  {}  {}/{} players  {}/{} spectators  {}  {:.0} ms{}{web}",
            f.addr,
            f.info.name,
            f.info.players,
            f.info.max_players,
            f.info.spectators,
            f.info.max_spectators,
            if f.info.password { "password" } else { "open" },
            f.ping_ms,
            if f.compatible() {
                String::new()
            } else {
                format!("  incompatible (protocol {})", f.info.version)
            }
        );
    }
    let (Some(rv), Some(remote)) = (rv, remote) else {
        return Ok(());
    };
    let games = remote
        .join()
        .map_err(|_| "the rendezvous listing failed".to_owned())?
        .map_err(|e| format!("cannot list the games at {rv}: {e}"))?;
    if games.is_empty() {
        println!("no games registered at the rendezvous server {rv}");
    }
    for g in &games {
        println!(
            "{}  via rendezvous {rv}  {}/{} players  {}/{} spectators  {}{}",
            g.name,
            g.players,
            g.max_players,
            g.spectators,
            g.max_spectators,
            if g.password { "password" } else { "open" },
            if g.version == lanyard_net::PROTOCOL_VERSION {
                String::new()
            } else {
                format!("  incompatible (protocol {})", g.version)
            }
        );
    }
    if let Some(g) = games.first() {
        println!(
            "join one with: lanyard-game join --rendezvous {rv} {}",
            shell_quoted(&g.name)
        );
    }
    Ok(())
}

/// `text` as one word for a POSIX shell, to paste: in single quotes, each single quote in
/// it closed, escaped and reopened (`'ada'\''s yard'`).
fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

pub(crate) fn replay_verify(file: &Path) -> Result<(), String> {
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut replay =
        lanyard_game::kinds::open_replay(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    let total = replay.len();
    let long = total > 2000;
    let outcome = replay
        .verify(|done, total| {
            if long && done < total {
                eprint!("\r{}", progress_bar(done, total));
            }
        })
        .map_err(|e| format!("{}: {e}", file.display()))?;
    if long {
        eprintln!();
    }
    match outcome {
        None => {
            println!(
                "{}: all {total} ticks match (recorded by {}, final hash {:016x})",
                file.display(),
                replay.header().recorded_by,
                replay.group().state_hash()
            );
            Ok(())
        }
        Some(d) => Err(format!("{}: {d}", file.display()).trim_end().to_owned()),
    }
}

/// `[######------------------------] replaying 400/2000 ticks (20%)`.
fn progress_bar(done: usize, total: usize) -> String {
    const WIDTH: usize = 30;
    let filled = (done.min(total) * WIDTH)
        .checked_div(total)
        .unwrap_or(WIDTH);
    let bar: String = (0..WIDTH)
        .map(|k| if k < filled { '#' } else { '-' })
        .collect();
    let percent = (done.min(total) * 100).checked_div(total).unwrap_or(100);
    format!("[{bar}] replaying {done}/{total} ticks ({percent}%)")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_progress_bar_fills_with_the_ticks_replayed() {
        assert_eq!(
            super::progress_bar(400, 2000),
            "[######------------------------] replaying 400/2000 ticks (20%)"
        );
        assert!(super::progress_bar(0, 2000).starts_with(&format!("[{}]", "-".repeat(30))));
        assert!(super::progress_bar(2000, 2000).starts_with(&format!("[{}]", "#".repeat(30))));
    }

    #[test]
    fn a_name_with_a_quote_is_pasted_as_one_word() {
        assert_eq!(super::shell_quoted("Far Yard"), "'Far Yard'");
        assert_eq!(super::shell_quoted("ada's yard"), r"'ada'\''s yard'");
    }
}
