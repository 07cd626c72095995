//! The native program: its command line, a file per family: [`args`] (the command line),
//! [`serve`] (`server`, `rendezvous`), [`play`] (`bot`, `browse`, `replay --verify`). The
//! window's commands are in `window`.

use clap::Parser;
use lanyard_game::agones::Agones;
use lanyard_game::bot::Bot;
use lanyard_game::game::{
    Console, DEFAULT_PORT, Game, Options, count, rendezvous_addr, server_addr,
};
use lanyard_game::runner;
use lanyard_game::scene::{DEFAULT_SCENE, Scene};
use lanyard_net::discovery;
use lanyard_rendezvous::{self as rendezvous, Addrs, RendezvousConfig, RendezvousServer};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

pub(crate) mod args;
pub(crate) mod metrics;
pub(crate) mod play;
pub(crate) mod serve;

#[cfg(feature = "client")]
use crate::window;
use args::*;
use play::*;
use serve::*;

/// On Linux a window needs an X11 or Wayland display; without one, macroquad would panic
/// deep inside X11. Say so plainly instead.
#[cfg(feature = "client")]
fn check_display() -> Result<(), String> {
    let missing = |v: &str| std::env::var_os(v).is_none_or(|s| s.is_empty());
    if cfg!(target_os = "linux") && missing("DISPLAY") && missing("WAYLAND_DISPLAY") {
        return Err(
            "there is no display to open a window on (DISPLAY is not set). \
             On a machine without one, run the dedicated server: \
             `lanyard-game server` (or build with --no-default-features)"
                .into(),
        );
    }
    Ok(())
}

/// Without `--name`, a window plays under the name remembered from the start screen; on a
/// first run (nothing remembered) under the OS user's name, and the start screen asks
/// first. Returns whether this is such a first run.
#[cfg(feature = "client")]
fn remembered(o: &mut Options, ident: &Ident) -> bool {
    if ident.name.is_some() {
        return false;
    }
    match window::remembered_name() {
        Some(name) => {
            o.name = name;
            false
        }
        None => {
            if let Some(user) = window::os_user_name() {
                o.name = user;
            }
            true
        }
    }
}

/// Logs go to standard error, filtered by `RUST_LOG` (by default: what Lanyard does at
/// the info level, and warnings from everything else).
fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("warn,lanyard_net=info,lanyard_game=info")
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

/// Runs the command the command line names.
pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs();
    let result = match &cli.command {
        Some(Command::Server {
            hosting: h,
            metrics,
        }) => h
            .common()
            .and_then(|c| server(&c, h.summary.as_deref(), &h.serve.session, *metrics)),
        Some(Command::Bot {
            addr,
            by_name,
            seed,
            spectate,
            ident,
            disc,
            arena,
            timed,
            rec,
        }) => {
            let c = Common::new(ident, Some(arena)).disc(disc).run(timed, rec);
            bot(&c, addr, by_name, *seed, *spectate)
        }
        Some(Command::Browse { wait, disc, meet }) => browse(
            &Common::new(&Ident::default(), None).disc(disc),
            *wait,
            meet,
        ),
        Some(Command::Rendezvous {
            port,
            ttl,
            max_per_address,
            relay_rate,
            relay_total,
            timed,
        }) => rendezvous_server(
            *port,
            RendezvousConfig {
                ttl: *ttl,
                max_per_address: *max_per_address,
                relay_rate: *relay_rate,
                relay_total: *relay_total,
                ..RendezvousConfig::default()
            },
            timed.seconds,
        ),
        Some(Command::Replay {
            file, view: false, ..
        }) => replay_verify(file),
        #[cfg(feature = "client")]
        Some(Command::Replay {
            file,
            view: true,
            shot,
            ..
        }) => check_display().and_then(|()| window::replay(file, shot.window()?)),
        #[cfg(not(feature = "client"))]
        Some(Command::Replay { view: true, .. }) => {
            Err("this build has no window: use `replay FILE --verify`".into())
        }
        Some(Command::Host {
            hosting: h,
            headless: true,
            seed,
            ..
        }) => h.common().and_then(|c| {
            let host = HostBot {
                seed: *seed,
                summary: h.summary.as_deref(),
            };
            host_headless(&c, &h.serve.session, host)
        }),
        #[cfg(feature = "client")]
        Some(Command::Host {
            hosting: h, shot, ..
        }) => (|| {
            check_display()?;
            let c = h.common()?;
            let mut o = options(&c, "host")?;
            let _ = remembered(&mut o, &h.ident);
            h.serve.session.apply(&mut o);
            let stop = stop_flag()?;
            window::host(
                o,
                c.seconds,
                h.summary.clone(),
                shot.window()?,
                c.record.clone(),
                stop,
            )
        })(),
        #[cfg(feature = "client")]
        Some(Command::Join {
            addr,
            by_name,
            spectate,
            ident,
            disc,
            arena,
            rec,
            shot,
        }) => (|| {
            check_display()?;
            let c = Common::new(ident, Some(arena))
                .disc(disc)
                .run(&Timed::default(), rec);
            let mut o = options(&c, "player")?;
            let first_run = remembered(&mut o, ident);
            o.spectate = *spectate;
            let rv = by_name
                .rendezvous
                .as_deref()
                .map(rendezvous_addr)
                .transpose()?;
            let target = match (rv, addr) {
                (Some(rv), Some(name)) => Some(window::Target::Named(rv, name.clone())),
                (None, Some(a)) => Some(window::Target::Addr(server_addr(a)?)),
                // The start screen, listing the rendezvous server's games too.
                (rv, None) => {
                    o.rendezvous = rv;
                    None
                }
            };
            // Ctrl-C leaves the game as Esc does, saying goodbye: no ghost stays behind.
            let stop = stop_flag()?;
            window::join(
                o,
                target,
                c.discovery(),
                (shot.window()?, stop),
                c.record.clone(),
                first_run,
            )
        })(),
        #[cfg(feature = "client")]
        None => (|| {
            check_display()?;
            let mut c = Common::new(&cli.ident, Some(&cli.arena)).disc(&cli.disc);
            c.rendezvous = cli.meet.addr()?;
            let mut o = options(&c, "player")?;
            let first_run = remembered(&mut o, &cli.ident);
            let stop = stop_flag()?;
            window::menu(o, c.discovery(), (cli.shot.window()?, stop), first_run)
        })(),
        #[cfg(not(feature = "client"))]
        Some(Command::Host { .. }) | Some(Command::Join { .. }) | None => {
            let _ = (&cli.ident, &cli.disc, &cli.meet, &cli.arena, &cli.shot);
            Err(
            "this build has no window (it was built without the `client` feature): use `server`, `host --headless`, `bot` or `browse`"
                .into(),
        )
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lanyard-game: {e}");
            ExitCode::FAILURE
        }
    }
}
