//! The serving commands: `server` (with its console, signals, summary and Agones) and
//! `rendezvous`; and what every command builds a game's options from.

use crate::cli::metrics::Metrics;
use crate::cli::*;

/// A flag that SIGINT (Ctrl-C) and SIGTERM raise instead of killing the process, so it
/// can end gracefully.
pub(crate) fn stop_flag() -> Result<Arc<AtomicBool>, String> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&flag))
            .map_err(|e| format!("cannot handle signal {sig}: {e}"))?;
    }
    Ok(flag)
}

/// The lines typed on standard input, read on a thread of their own.
pub(crate) fn console_lines() -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

pub(crate) fn options(c: &Common, default_name: &str) -> Result<Options, String> {
    let scene = Scene::load(&c.scene).map_err(|e| e.to_string())?;
    if c.rate >= 30.0 {
        eprintln!(
            "note: --rate {} is 30 or more broadcasts per second",
            c.rate
        );
    }
    Ok(Options {
        port: c.port,
        name: c.name.clone().unwrap_or_else(|| default_name.to_owned()),
        password: c.password.clone(),
        max_players: c.max_players,
        rate: c.rate,
        discovery: Some(c.discovery_addr),
        rendezvous: c.rendezvous,
        web: c.web,
        sessions: lanyard_game::game::claims::sessions_dir(),
        ..Options::new(scene)
    })
}

pub(crate) fn server(
    c: &Common,
    summary: Option<&Path>,
    flags: &SessionFlags,
    metrics: Option<SocketAddr>,
) -> Result<(), String> {
    let o = options(c, "Tumbleyard server")?;
    serve(c, o, None, summary, flags, metrics)
}

/// A headless host's player: played by a bot of this seed.
pub(crate) struct HostBot<'a> {
    pub(crate) seed: u64,
    pub(crate) summary: Option<&'a Path>,
}

/// `host --headless`: a server whose host plays too, its player driven by a bot.
pub(crate) fn host_headless(
    c: &Common,
    flags: &SessionFlags,
    host: HostBot<'_>,
) -> Result<(), String> {
    let o = options(c, "host")?;
    serve(c, o, Some(host.seed), host.summary, flags, None)
}

/// Serves a game with no window until its time is up, `quit`, or a signal; with `bot`,
/// the host plays too, as a bot of that seed.
fn serve(
    c: &Common,
    mut o: lanyard_game::game::Options,
    bot: Option<u64>,
    summary: Option<&Path>,
    flags: &SessionFlags,
    metrics: Option<SocketAddr>,
) -> Result<(), String> {
    flags.apply(&mut o);
    let name = o.name.clone();
    let stop = stop_flag()?;
    let mut game = Game::server(o, bot.map(|_| name.clone()))?;
    let mut player = bot.map(|seed| lanyard_game::bot::Bot::new(seed, c.seconds));
    if let Some(r) = &c.record {
        game.record_to(r)?;
        println!("recording the game to {}", r.display());
    }
    println!("{}", serving_line(c, &game, (&name, bot), flags));
    let (mut agones, metrics) = orchestration(metrics)?;
    let console = console_lines();
    let mut why = "time up";
    let mut since = 0;
    runner::run(
        &mut game,
        c.seconds,
        |g, left| {
            if let Some(p) = &mut player {
                let input = p.input(g, 1.0 / lanyard_game::game::TICK_HZ, left);
                g.set_input(input);
            }
            while let Ok(line) = console.try_recv() {
                match g.console(&line) {
                    Console::Lines(lines) => lines.iter().for_each(|l| println!("{l}")),
                    Console::Quit => {
                        why = "quit";
                        return false;
                    }
                }
            }
            if stop.load(Ordering::Relaxed) {
                why = "a signal";
                return false;
            }
            if let Some(a) = &mut agones {
                a.tick();
            }
            true
        },
        |g, ms| {
            print_messages(g);
            if let Some(m) = &metrics {
                m.set(g, ms);
            }
            since += 1;
            if since >= 5 {
                since = 0;
                println!("{}", status_line(g, ms, c.max_players));
            }
        },
    );
    // What happened since the last second's lines (a player who left just now).
    print_messages(&mut game);
    println!(
        "shutting down ({why}): telling {}",
        count(game.net().sessions().len(), "client")
    );
    // The summary is the world as it ended, before the players' sessions are closed.
    let written = summary.map_or(Ok(()), |p| game.write_summary(p));
    game.shutdown();
    recorded(c.record.as_deref());
    if let Some(a) = &mut agones
        && let Err(e) = a.shutdown()
    {
        eprintln!("lanyard-game: {e}");
    }
    written
}

/// Prints what the game has to say to its operator.
fn print_messages(game: &mut Game) {
    for m in game.take_messages() {
        println!("{m}");
    }
}

/// Says where the recording went (if one was made), and how to replay it.
fn recorded(path: Option<&Path>) {
    if let Some(r) = path {
        let size = std::fs::metadata(r).map(|m| m.len()).unwrap_or(0);
        let r = r.display();
        println!(
            "the recording is in {r} ({size} bytes): replay it with `lanyard-game replay {r}`"
        );
    }
}

/// What watches a server from outside: the Agones SDK (if the environment names one),
/// told the server is ready, and the figures served at `metrics`, if asked.
fn orchestration(metrics: Option<SocketAddr>) -> Result<(Option<Agones>, Option<Metrics>), String> {
    let mut agones = Agones::from_env()?;
    if let Some(a) = &mut agones {
        a.ready()?;
        println!("told the Agones SDK the server is ready");
    }
    let metrics = metrics.map(Metrics::serve).transpose()?;
    if let Some(addr) = metrics.as_ref().map(|m| m.addr()) {
        println!("serving the server's figures on http://{addr}/metrics");
    }
    Ok((agones, metrics))
}

/// What server `name` says when it starts serving: where, up to how many, and whether
/// its host plays (a bot of seed `bot`).
fn serving_line(
    c: &Common,
    game: &Game,
    (name, bot): (&str, Option<u64>),
    flags: &SessionFlags,
) -> String {
    let playing = match bot {
        Some(seed) => format!(", playing as {name} (a bot, seed {seed})"),
        None => String::new(),
    };
    format!(
        "{name}: serving '{}' on UDP port {} (discovery on {}{}{}), up to {} and {}{playing}; type 'help' for the console",
        game.scene().name,
        game.local_addr().port(),
        c.discovery_addr,
        c.rendezvous
            .map(|r| format!(", registering at the rendezvous server {r}"))
            .unwrap_or_default(),
        game.web_port()
            .map(|p| format!(
                ", browsers join at http://THIS-MACHINE:{p} (http://127.0.0.1:{p} here)"
            ))
            .unwrap_or_default(),
        count(usize::from(c.max_players), "player"),
        count(usize::from(flags.max_spectators), "spectator"),
    )
}

/// The server's status, printed every few frames: players, spectators, entities, the
/// frame's time (`ms`), traffic, and each session's link.
fn status_line(g: &Game, ms: f32, max_players: u16) -> String {
    let sessions = g.net().sessions();
    let watching = sessions.iter().filter(|s| s.spectator).count();
    let each: String = sessions
        .iter()
        .map(|s| {
            let link = match lanyard_game::game::silent_for(&s.stats) {
                Some(_) => lanyard_game::game::link_text(&s.stats),
                None => format!("{:.0} ms {:.0}%", s.stats.ping_ms, s.stats.loss * 100.0),
            };
            let relayed = if g.relayed_to(s.addr) { " relayed" } else { "" };
            let (held, missed) = (s.stats.predictions_held, s.stats.predictions_missed);
            // Before the state age, which ends each player's part.
            let mispredicted = match held + missed {
                0 => String::new(),
                n => format!(" mispredicted {:.0}%", missed as f64 * 100.0 / n as f64),
            };
            format!(
                " | {} {link}{relayed} {} link {:.0} kbit/s{mispredicted} state {:.0} ms",
                s.name,
                g.score_of(&s.name),
                s.stats.send_rate * 8.0 / 1000.0,
                s.stats.state_age_p95_ms,
            )
        })
        .collect();
    format!(
        "players {}/{} | spectators {} | entities {} | frame {:.2} ms | in {:.1} kbit/s | out {:.1} kbit/s{each}",
        sessions.len() - watching,
        max_players,
        watching,
        g.group().len(),
        ms,
        g.presentation().traffic().kbps_in,
        g.presentation().traffic().kbps_out
    )
}

/// Runs a rendezvous server on `port` until `seconds` pass or a signal comes, then prints
/// what it did as one JSON line.
pub(crate) fn rendezvous_server(
    port: u16,
    config: RendezvousConfig,
    seconds: Option<f32>,
) -> Result<(), String> {
    use lanyard_net::Transport;
    use lanyard_net::udp::UdpTransport;
    let (ttl, per) = (config.ttl, config.max_per_address);
    let mut rv = RendezvousServer::new(config, lanyard_game::game::entropy())?;
    let mut socket = UdpTransport::bind_any(port)
        .map_err(|e| format!("cannot listen on UDP port {port}: {e}"))?;
    println!(
        "rendezvous server on UDP port {} (registrations live {ttl} s unless refreshed, at most {per} per address)",
        socket.local_addr().port()
    );
    let stop = stop_flag()?;
    let start = std::time::Instant::now();
    let mut last = (0.0, rv.stats());
    loop {
        let now = start.elapsed().as_secs_f64();
        if stop.load(Ordering::Relaxed) || seconds.is_some_and(|s| now >= f64::from(s)) {
            break;
        }
        socket.wait(Duration::from_millis(100));
        while let Some((from, bytes)) = socket.recv() {
            rv.receive(start.elapsed().as_secs_f64(), from, &bytes);
        }
        for (to, bytes) in rv.drain_outgoing() {
            socket.send(to, &bytes);
        }
        if now - last.0 >= 10.0 {
            rv.expire(now);
            let s = rv.stats();
            if s != last.1 {
                println!(
                    "games {} | registered {} | expired {} | introductions {} | in {} B | out {} B | ignored {} | relaying {} sessions ({} opened), {} B, {} over the cap, {} from strangers",
                    s.games,
                    s.registrations,
                    s.expired,
                    s.introductions,
                    s.bytes_in,
                    s.bytes_out,
                    s.ignored,
                    s.relay_sessions,
                    s.relay_sessions_opened,
                    s.relayed_bytes,
                    s.relay_over_cap,
                    s.relay_strangers
                );
            }
            last = (now, s);
        }
    }
    let s = rv.stats();
    println!(
        "{}",
        serde_json::json!({
            "games": s.games,
            "registrations": s.registrations,
            "refreshes": s.refreshes,
            "expired": s.expired,
            "unregistered": s.unregistered,
            "refused": s.refused,
            "introductions": s.introductions,
            "lists": s.lists,
            "challenges": s.challenges,
            "ignored": s.ignored,
            "datagrams_in": s.datagrams_in,
            "bytes_in": s.bytes_in,
            "datagrams_out": s.datagrams_out,
            "bytes_out": s.bytes_out,
            "relayed_bytes": s.relayed_bytes,
            "relayed_datagrams": s.relayed_datagrams,
            "relay_sessions": s.relay_sessions_opened,
            "relay_over_cap": s.relay_over_cap,
            "relay_strangers": s.relay_strangers,
        })
    );
    Ok(())
}
