//! The window: the start screen, the 3D view and the HUD (macroquad).
//!
//! macroquad's math is glam 0.27 and rapier's glam 0.33 (`lanyard::glam`): they meet only
//! here, through plain arrays.

use lanyard::interp::Smoother;
use lanyard_game::bot::Bot;
use lanyard_game::game::{Game, Options, RecordingBuffer};
use lanyard_net::Addrs;
use macroquad::prelude as mq;
use macroquad::prelude::{Color, vec3};
use std::cell::RefCell;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

mod draw;
mod hud;
mod input;
#[cfg(not(target_arch = "wasm32"))]
mod menu;
#[cfg(target_arch = "wasm32")]
mod page;
mod replay_view;
mod run;
mod sound;

pub use input::InputScript;
#[cfg(not(target_arch = "wasm32"))]
use menu::*;
#[cfg(not(target_arch = "wasm32"))]
pub use menu::{os_user_name, remembered_name};
#[cfg(target_arch = "wasm32")]
pub(crate) use page::page;
#[cfg(target_arch = "wasm32")]
use page::*;
use replay_view::ReplayView;
use run::*;
use sound::SOUND_HELP;

fn mq3(v: lanyard::Vec3) -> mq::Vec3 {
    vec3(v.x, v.y, v.z)
}

fn color(c: [u8; 4]) -> Color {
    Color::from_rgba(c[0], c[1], c[2], c[3])
}

/// The start screen's background, title and line under it.
fn draw_title() {
    mq::clear_background(Color::from_rgba(34, 40, 52, 255));
    let gold = Color::from_rgba(240, 190, 80, 255);
    mq::draw_text("TUMBLEYARD", 40.0, 80.0, 64.0, gold);
    let under = "knock the crates (and your friends) off the yard";
    mq::draw_text(under, 42.0, 112.0, 24.0, mq::LIGHTGRAY);
}

/// What to do once the window is up.
/// How a window runs: the frame cap, and what tests and screenshots ask for.
#[derive(Debug, Clone, Default)]
pub struct WindowOpts {
    /// Render `frames` frames, save a PNG here and exit.
    pub screenshot: Option<PathBuf>,
    /// Frames to render before the screenshot.
    pub frames: Option<u32>,
    /// The most frames drawn per second (0: as many as the machine draws).
    pub fps: u32,
    /// Advance the game by exactly this many seconds per drawn frame instead of by the
    /// wall clock (a screenshot advances one tick per frame).
    pub frame_time: Option<f32>,
    /// Key presses to make at given frames, as if a person pressed them.
    pub script: InputScript,
    /// In a browser: write a screenshot to the page's console once the window has been
    /// open this many seconds (a browser has no file to save it to).
    pub shot_after: Option<f32>,
}

struct Plan {
    seconds: Option<f32>,
    summary: Option<PathBuf>,
    window: WindowOpts,
    /// Raised by SIGINT or SIGTERM: end as `--seconds` would.
    stop: Option<Arc<AtomicBool>>,
    /// Where a session that ends (refused, lost, kicked, given up) goes back to: the start
    /// screen with these options and discovery address, showing why.
    menu: Option<(Options, Addrs, bool)>,
    /// A scripted player instead of the keyboard (a page's `?bot=SEED`): its report is
    /// printed when the window closes.
    bot: Option<Bot>,
    /// A recording kept in memory (a page's `?record=1`): written to the page's console,
    /// base64, when the window closes.
    recording: Option<RecordingBuffer>,
}

enum Screen {
    Menu(Box<Menu>),
    Playing(Box<Game>),
    Replaying(Box<ReplayView>),
    Ended(String),
}

/// Watch a recording in a window, at the speed it was recorded.
#[cfg(not(target_arch = "wasm32"))]
pub fn replay(file: &std::path::Path, window: WindowOpts) -> Result<(), String> {
    use lanyard_game::{kinds, scene::Scene};
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let replay = kinds::open_replay(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    let scene =
        Scene::parse(&replay.header().scene).map_err(|e| format!("the recording's arena: {e}"))?;
    let view = ReplayView::new(replay, scene);
    let plan = Plan {
        seconds: None,
        summary: None,
        window,
        stop: None,
        menu: None,
        bot: None,
        recording: None,
    };
    open("Tumbleyard replay", Screen::Replaying(Box::new(view)), plan)
}

/// What a player joins.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// The game at this address.
    Addr(SocketAddr),
    /// The game registered under this name at the rendezvous server at these addresses.
    Named(Addrs, String),
}

/// Host a game in a window.
#[cfg(not(target_arch = "wasm32"))]
pub fn host(
    options: Options,
    seconds: Option<f32>,
    summary: Option<PathBuf>,
    window: WindowOpts,
    record: Option<PathBuf>,
    stop: Arc<AtomicBool>,
) -> Result<(), String> {
    let name = options.name.clone();
    let mut game = Game::server(options, Some(name))?;
    if let Some(r) = &record {
        game.record_to(r)?;
    }
    open(
        "Tumbleyard (host)",
        Screen::Playing(Box::new(game)),
        Plan {
            seconds,
            summary,
            window,
            stop: Some(stop),
            menu: None,
            bot: None,
            recording: None,
        },
    )
}

/// Join a game in a window (or pick one from the start screen first).
#[cfg(not(target_arch = "wasm32"))]
///
/// `stop`, raised by SIGINT or SIGTERM, leaves the game as Esc does.
pub fn join(
    options: Options,
    target: Option<Target>,
    discovery: Addrs,
    (window, stop): (WindowOpts, Arc<AtomicBool>),
    record: Option<PathBuf>,
    first_run: bool,
) -> Result<(), String> {
    let menu = Some((options.clone(), discovery, false));
    let entropy = lanyard_game::game::entropy();
    let screen = match target {
        Some(target) => {
            let mut game = match target {
                Target::Addr(addr) => Game::client(options, addr, entropy)?,
                Target::Named(rv, name) => {
                    eprintln!("reaching '{name}' through the rendezvous server {rv} ...");
                    Game::client_by_name(options, rv, &name, entropy)?
                }
            };
            if let Some(r) = &record {
                game.record_to(r)?;
            }
            Screen::Playing(Box::new(game))
        }
        None => Screen::Menu(Box::new(Menu::first(options, discovery, false, first_run))),
    };
    let plan = Plan {
        seconds: None,
        summary: None,
        window,
        stop: Some(stop),
        menu,
        bot: None,
        recording: None,
    };
    open("Tumbleyard", screen, plan)
}

/// The start screen: host a game or join one. On a `first_run` it asks for the player's
/// name before anything else. `stop`, raised by SIGINT or SIGTERM, leaves as Esc does.
#[cfg(not(target_arch = "wasm32"))]
pub fn menu(
    options: Options,
    discovery: Addrs,
    (window, stop): (WindowOpts, Arc<AtomicBool>),
    first_run: bool,
) -> Result<(), String> {
    let plan = Plan {
        seconds: None,
        summary: None,
        window,
        stop: Some(stop),
        menu: Some((options.clone(), discovery, true)),
        bot: None,
        recording: None,
    };
    open(
        "Tumbleyard",
        Screen::Menu(Box::new(Menu::first(options, discovery, true, first_run))),
        plan,
    )
}

fn open(title: &str, screen: Screen, plan: Plan) -> Result<(), String> {
    let result: Rc<RefCell<Result<(), String>>> = Rc::new(RefCell::new(Ok(())));
    let out = result.clone();
    let conf = mq::Conf {
        window_title: title.to_owned(),
        window_width: 1100,
        window_height: 700,
        sample_count: 1,
        ..Default::default()
    };
    macroquad::Window::from_config(conf, async move {
        let r = run(screen, plan).await;
        *out.borrow_mut() = r;
    });
    result.replace(Ok(()))
}

struct Viewer {
    yaw: f32,
    /// Show the whole yard from above instead of following the player.
    overview: bool,
    camera: mq::Camera3D,
    /// What to draw of each entity, on the world's one clock (see `lanyard::interp`).
    smoother: Smoother,
    /// The fraction of a tick the frame is into the next one.
    alpha: f32,
    /// Tint the bodies a player holds (hand-off) with that player's hue: part of the
    /// debug view the net graph (N) shows.
    tint_holders: bool,
}
