//! The window: the start screen, the 3D view and the HUD (macroquad).
//!
//! macroquad's math is glam 0.27 and rapier's is glam 0.30: they meet only here, through
//! plain arrays.

use lanyard::interp::Smoother;
use lanyard::replay::{Replay, Step};
use lanyard::{EntityGroup, Owner, Shape};
use lanyard_game::game::{Blast, GRAPH_SAMPLES, Game, GraphSample, Options, TICK_HZ, count};
use lanyard_game::kinds::{self, Player, PlayerInput};
use lanyard_game::scene::Scene;
use lanyard_net::discovery::{self, Found, ServerInfo};
use lanyard_net::udp::UdpTransport;
use macroquad::prelude as mq;
use macroquad::prelude::{Color, KeyCode, Mesh, MouseButton, Vertex, vec2, vec3, vec4};
use std::cell::RefCell;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

fn mq3(v: lanyard::Vec3) -> mq::Vec3 {
    vec3(v.x, v.y, v.z)
}

fn color(c: [u8; 4]) -> Color {
    Color::from_rgba(c[0], c[1], c[2], c[3])
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
}

/// Scripted key presses: lines of `FRAME KEY`, KEY one of `f` (throw), `space` (jump), `n`
/// (the net graph; on the start screen, the name), `a` (a typed address), `enter`, a digit
/// `1` to `9`; or `FRAME text WORDS` to type WORDS.
#[derive(Debug, Clone, Default)]
pub struct InputScript {
    presses: std::collections::BTreeMap<u32, Vec<KeyCode>>,
    typed: std::collections::BTreeMap<u32, String>,
}

impl InputScript {
    /// Reads a script.
    pub fn parse(text: &str) -> Result<InputScript, String> {
        let mut presses: std::collections::BTreeMap<u32, Vec<KeyCode>> = Default::default();
        let mut typed = std::collections::BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = || format!("input script line {}: '{line}' is not FRAME KEY", n + 1);
            let (frame, key) = line.split_once(char::is_whitespace).ok_or_else(bad)?;
            let frame: u32 = frame.parse().map_err(|_| bad())?;
            if let Some(words) = key.trim().strip_prefix("text ") {
                typed.insert(frame, words.to_owned());
                continue;
            }
            let key = match key.trim() {
                "f" => KeyCode::F,
                "space" => KeyCode::Space,
                "n" => KeyCode::N,
                "a" => KeyCode::A,
                "enter" => KeyCode::Enter,
                "1" => KeyCode::Key1,
                "2" => KeyCode::Key2,
                "3" => KeyCode::Key3,
                _ => return Err(bad()),
            };
            presses.entry(frame).or_default().push(key);
        }
        Ok(InputScript { presses, typed })
    }

    fn pressed(&self, frame: u32, key: KeyCode) -> bool {
        self.presses.get(&frame).is_some_and(|k| k.contains(&key))
    }

    fn text(&self, frame: u32) -> String {
        self.typed.get(&frame).cloned().unwrap_or_default()
    }
}

struct Plan {
    seconds: Option<f32>,
    summary: Option<PathBuf>,
    window: WindowOpts,
    /// Raised by SIGINT or SIGTERM: end as `--seconds` would.
    stop: Option<Arc<AtomicBool>>,
    /// Where a session that ends (refused, lost, kicked, given up) goes back to: the start
    /// screen with these options and discovery address, showing why.
    menu: Option<(Options, SocketAddr, bool)>,
}

/// The host's player list (Tab), with a kick.
#[derive(Default)]
struct Roster {
    open: bool,
    selected: Option<usize>,
}

enum Screen {
    Menu(Box<Menu>),
    Playing(Box<Game>),
    Replaying(Box<ReplayView>),
    Ended(String),
}

struct ReplayView {
    replay: Replay,
    scene: Scene,
    status: String,
}

/// Watch a recording in a window, at the speed it was recorded.
pub fn replay(file: &std::path::Path, window: WindowOpts) -> Result<(), String> {
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let replay = Replay::open(&bytes, std::sync::Arc::new(kinds::registry()))
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let scene =
        Scene::parse(&replay.header().scene).map_err(|e| format!("the recording's arena: {e}"))?;
    let view = ReplayView {
        replay,
        scene,
        status: String::new(),
    };
    let plan = Plan {
        seconds: None,
        summary: None,
        window,
        stop: None,
        menu: None,
    };
    open("Tumbleyard replay", Screen::Replaying(Box::new(view)), plan)
}

/// What a player joins.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// The game at this address.
    Addr(SocketAddr),
    /// The game registered under this name at the rendezvous server at this address.
    Named(SocketAddr, String),
}

/// A path being punched to a game registered at a rendezvous server, on a thread of its own.
type Reaching = Receiver<Result<(UdpTransport, SocketAddr), String>>;

struct Menu {
    options: Options,
    discovery: SocketAddr,
    games: Vec<Found>,
    browsing: Option<Receiver<Result<Vec<Found>, String>>>,
    /// The games registered at the rendezvous server (`options.rendezvous`), if any.
    remote: Vec<ServerInfo>,
    listing: Option<Receiver<Result<Vec<ServerInfo>, String>>>,
    /// A game being reached through the rendezvous server: its name, the password to
    /// give, and the punching.
    reaching: Option<(String, Option<String>, Reaching)>,
    /// When (seconds since the menu opened) the list was last asked for.
    browsed_at: f64,
    opened: std::time::Instant,
    note: String,
    allow_host: bool,
    /// Why the last session ended, if one did.
    last_end: Option<String>,
    /// The line being typed, and what it is for.
    editing: Option<(Field, String)>,
}

/// What a line typed on the start screen is for.
#[derive(Debug, Clone, PartialEq)]
enum Field {
    /// The player's name (remembered between runs).
    Name,
    /// The password of a game that asks for one (where it is, and its name).
    Password(Target, String),
    /// A server's address, HOST[:PORT].
    Address,
}

/// The keys 1 to 9, which pick the n-th game on the start screen and the n-th player in
/// the host's list.
const DIGITS: [KeyCode; 9] = [
    KeyCode::Key1,
    KeyCode::Key2,
    KeyCode::Key3,
    KeyCode::Key4,
    KeyCode::Key5,
    KeyCode::Key6,
    KeyCode::Key7,
    KeyCode::Key8,
    KeyCode::Key9,
];

/// How often the start screen asks the LAN again, in seconds.
const BROWSE_EVERY: f64 = 3.0;

/// Where the player's name is remembered: `$XDG_CONFIG_HOME/tumbleyard/name`, or
/// `$HOME/.config/tumbleyard/name`.
fn name_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("tumbleyard").join("name"))
}

/// The name remembered from an earlier run, if any.
pub fn remembered_name() -> Option<String> {
    let text = std::fs::read_to_string(name_file()?).ok()?;
    let name = text.trim();
    (!name.is_empty() && name.chars().count() <= 32).then(|| name.to_owned())
}

fn remember_name(name: &str) {
    if let Some(path) = name_file() {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(path, name);
    }
}

impl Menu {
    fn with_note(options: Options, discovery: SocketAddr, allow_host: bool, why: &str) -> Self {
        let mut m = Self::new(options, discovery, allow_host);
        m.last_end = Some(why.to_owned());
        m
    }

    fn new(options: Options, discovery: SocketAddr, allow_host: bool) -> Self {
        let mut m = Menu {
            options,
            discovery,
            games: Vec::new(),
            browsing: None,
            remote: Vec::new(),
            listing: None,
            reaching: None,
            browsed_at: 0.0,
            opened: std::time::Instant::now(),
            note: String::new(),
            allow_host,
            last_end: None,
            editing: None,
        };
        m.refresh();
        m
    }

    fn refresh(&mut self) {
        let (tx, rx) = channel();
        let d = self.discovery;
        std::thread::spawn(move || {
            let r = discovery::browse(d, Duration::from_millis(800)).map_err(|e| e.to_string());
            let _ = tx.send(r);
        });
        self.browsing = Some(rx);
        if let Some(rv) = self.options.rendezvous
            && self.listing.is_none()
        {
            let (tx, rx) = channel();
            std::thread::spawn(move || {
                let r = lanyard_net::rendezvous::list(rv).map_err(|e| e.to_string());
                let _ = tx.send(r);
            });
            self.listing = Some(rx);
        }
        self.browsed_at = self.opened.elapsed().as_secs_f64();
        if self.games.is_empty() {
            self.note = format!("looking for games on {} ...", self.discovery);
        }
    }

    /// Joins `target`, with `password` if it asks for one. A game registered at a
    /// rendezvous server is reached first, on a thread, while the menu goes on drawing.
    fn join(&mut self, target: Target, password: Option<String>) -> Option<Result<Game, String>> {
        let addr = match target {
            Target::Addr(addr) => addr,
            Target::Named(rv, name) => {
                let (tx, rx) = channel();
                let wanted = name.clone();
                std::thread::spawn(move || {
                    let r = Game::client_socket(rv).and_then(|mut socket| {
                        let server = Game::punch(&mut socket, rv, &wanted)?;
                        Ok((socket, server))
                    });
                    let _ = tx.send(r);
                });
                self.reaching = Some((name, password, rx));
                return None;
            }
        };
        let options = Options {
            password,
            ..self.options.clone()
        };
        self.started(Game::client(options, addr, lanyard_game::game::entropy()))
    }

    fn started(&mut self, game: Result<Game, String>) -> Option<Result<Game, String>> {
        match game {
            Ok(g) => Some(Ok(g)),
            Err(e) => {
                self.last_end = Some(e);
                None
            }
        }
    }

    /// The path to a game at the rendezvous server, once it is open (or why not).
    fn reached(&mut self) -> Option<Result<Game, String>> {
        let (_, _, rx) = self.reaching.as_ref()?;
        let r = rx.try_recv().ok()?;
        let (name, password, _) = self.reaching.take()?;
        match r {
            Ok((socket, server)) => {
                let options = Options {
                    password,
                    ..self.options.clone()
                };
                let game = Game::client_on(options, socket, server, lanyard_game::game::entropy());
                self.started(game)
            }
            Err(e) => {
                self.last_end = Some(format!("cannot reach '{name}': {e}"));
                None
            }
        }
    }

    /// The n-th game of the list (LAN games first, then the rendezvous server's).
    fn pick(&self, n: usize) -> Option<(Target, ServerInfo)> {
        if let Some(g) = self.games.get(n) {
            return Some((Target::Addr(g.addr), g.info.clone()));
        }
        let rv = self.options.rendezvous?;
        let g = self.remote.get(n - self.games.len())?;
        Some((Target::Named(rv, g.name.clone()), g.clone()))
    }

    /// The line being typed: characters go in, Backspace takes one back, Enter finishes
    /// it (returning it), Esc drops it.
    fn type_line(&mut self, script: &InputScript, frame: u32) -> Option<(Field, String)> {
        let (_, line) = self.editing.as_mut()?;
        while let Some(c) = mq::get_char_pressed() {
            if !c.is_control() && line.chars().count() < 64 {
                line.push(c);
            }
        }
        line.push_str(&script.text(frame));
        if mq::is_key_pressed(KeyCode::Backspace) {
            line.pop();
        }
        if mq::is_key_pressed(KeyCode::Escape) {
            self.editing = None;
            return None;
        }
        if mq::is_key_pressed(KeyCode::Enter) || script.pressed(frame, KeyCode::Enter) {
            return self.editing.take();
        }
        None
    }

    /// Draws the menu and returns the game to start, if the player picked one.
    fn frame(&mut self, script: &InputScript, frame: u32) -> Option<Result<Game, String>> {
        let key = |k: KeyCode| mq::is_key_pressed(k) || script.pressed(frame, k);
        if let Some(rx) = &self.browsing
            && let Ok(r) = rx.try_recv()
        {
            match r {
                Ok(g) => {
                    self.note = format!(
                        "{} found on {} (the list refreshes by itself)",
                        lanyard_game::game::count(g.len(), "game"),
                        self.discovery
                    );
                    self.games = g;
                }
                Err(e) => self.note = format!("cannot browse: {e}"),
            }
            self.browsing = None;
        }
        if let Some(rx) = &self.listing
            && let Ok(r) = rx.try_recv()
        {
            match r {
                Ok(g) => self.remote = g,
                Err(e) => {
                    self.remote.clear();
                    self.note = format!("cannot list the rendezvous server's games: {e}");
                }
            }
            self.listing = None;
        }
        if self.reaching.is_some() {
            self.draw();
            return self.reached();
        }
        if self.browsing.is_none()
            && self.opened.elapsed().as_secs_f64() - self.browsed_at >= BROWSE_EVERY
        {
            self.refresh();
        }
        self.draw();
        if self.editing.is_some() {
            let (field, text) = self.type_line(script, frame)?;
            return match field {
                Field::Name => {
                    let name = text.trim();
                    if name.is_empty() || name.chars().count() > 32 {
                        self.last_end = Some("names are 1 to 32 characters".into());
                    } else {
                        self.options.name = name.to_owned();
                        remember_name(name);
                    }
                    None
                }
                Field::Password(target, _) => self.join(target, Some(text)),
                Field::Address => match lanyard_game::game::server_addr(&text) {
                    Ok(addr) => self.join(Target::Addr(addr), self.options.password.clone()),
                    Err(e) => {
                        self.last_end = Some(e);
                        None
                    }
                },
            };
        }
        if self.allow_host && key(KeyCode::H) {
            let name = self.options.name.clone();
            return match Game::server(self.options.clone(), Some(name)) {
                Ok(g) => Some(Ok(g)),
                Err(e) => {
                    self.last_end = Some(e);
                    None
                }
            };
        }
        if key(KeyCode::R) && self.browsing.is_none() {
            self.refresh();
        }
        if key(KeyCode::N) {
            self.editing = Some((Field::Name, String::new()));
            while mq::get_char_pressed().is_some() {}
        }
        if key(KeyCode::A) {
            self.editing = Some((Field::Address, String::new()));
            while mq::get_char_pressed().is_some() {}
        }
        for (i, k) in DIGITS.iter().enumerate() {
            if key(*k)
                && let Some((target, info)) = self.pick(i)
            {
                if info.version != lanyard_net::PROTOCOL_VERSION {
                    self.last_end = Some("that game runs another version of Tumbleyard".into());
                    continue;
                }
                if info.password && self.options.password.is_none() {
                    self.editing = Some((Field::Password(target, info.name), String::new()));
                    while mq::get_char_pressed().is_some() {}
                    return None;
                }
                let password = self.options.password.clone();
                return self.join(target, password);
            }
        }
        None
    }

    fn draw(&self) {
        mq::clear_background(Color::from_rgba(34, 40, 52, 255));
        mq::draw_text(
            "TUMBLEYARD",
            40.0,
            80.0,
            64.0,
            Color::from_rgba(240, 190, 80, 255),
        );
        mq::draw_text(
            "knock the crates (and your friends) off the yard",
            42.0,
            112.0,
            24.0,
            mq::LIGHTGRAY,
        );
        let mut y = 160.0;
        mq::draw_text(
            format!("you play as {}   [N] change", self.options.name),
            40.0,
            y,
            26.0,
            mq::WHITE,
        );
        y += 34.0;
        if let Some(why) = &self.last_end {
            mq::draw_text(why, 40.0, y, 24.0, Color::from_rgba(240, 120, 100, 255));
            y += 34.0;
        }
        if self.allow_host {
            mq::draw_text("[H] host a game on this machine", 40.0, y, 28.0, mq::WHITE);
            y += 36.0;
        }
        mq::draw_text("[A] join by address", 40.0, y, 28.0, mq::WHITE);
        y += 36.0;
        let again = match self.options.rendezvous {
            Some(rv) => format!("[R] look for games now (LAN and rendezvous {rv})"),
            None => "[R] look for LAN games now".to_owned(),
        };
        mq::draw_text(&again, 40.0, y, 28.0, mq::WHITE);
        y += 44.0;
        // A prompt takes the place of the list (text would show through it).
        let shown = if self.editing.is_some() { 0 } else { 9 };
        if shown > 0 {
            mq::draw_text(&self.note, 40.0, y, 22.0, mq::GRAY);
        }
        y += 34.0;
        if let Some((name, _, _)) = &self.reaching {
            let rv = self
                .options
                .rendezvous
                .map(|r| r.to_string())
                .unwrap_or_default();
            mq::draw_text(
                format!("reaching '{name}' through the rendezvous server {rv} ..."),
                40.0,
                y,
                26.0,
                Color::from_rgba(240, 190, 80, 255),
            );
            y += 34.0;
        }
        for (i, g) in self.games.iter().enumerate().take(shown) {
            let line = format!(
                "[{}] {}  {}/{} players  {} watching  {}  {:.0} ms  {}{}",
                i + 1,
                g.info.name,
                g.info.players,
                g.info.max_players,
                g.info.spectators,
                if g.info.password { "password" } else { "open" },
                g.ping_ms,
                g.addr,
                if g.compatible() {
                    ""
                } else {
                    "  (incompatible version)"
                }
            );
            let c = if g.compatible() { mq::WHITE } else { mq::GRAY };
            mq::draw_text(&line, 40.0, y, 26.0, c);
            y += 32.0;
        }
        let first = self.games.len();
        let rv = self
            .options
            .rendezvous
            .map(|r| r.to_string())
            .unwrap_or_default();
        for (i, g) in self
            .remote
            .iter()
            .enumerate()
            .take(shown.saturating_sub(first))
        {
            let ok = g.version == lanyard_net::PROTOCOL_VERSION;
            let line = format!(
                "[{}] {}  {}/{} players  {} watching  {}  via rendezvous {rv}{}",
                first + i + 1,
                g.name,
                g.players,
                g.max_players,
                g.spectators,
                if g.password { "password" } else { "open" },
                if ok { "" } else { "  (incompatible version)" }
            );
            mq::draw_text(&line, 40.0, y, 26.0, if ok { mq::WHITE } else { mq::GRAY });
            y += 32.0;
        }
        if let Some((field, text)) = &self.editing {
            let (label, shown) = match field {
                Field::Name => ("your name".to_owned(), text.clone()),
                Field::Password(target, name) => (
                    match target {
                        Target::Addr(addr) => format!("password for {name} ({addr})"),
                        Target::Named(rv, _) => format!("password for {name} (via {rv})"),
                    },
                    "*".repeat(text.chars().count()),
                ),
                Field::Address => ("server address (HOST[:PORT])".to_owned(), text.clone()),
            };
            let (w, h) = (mq::screen_width(), mq::screen_height());
            mq::draw_rectangle(
                0.0,
                h / 2.0 - 70.0,
                w,
                120.0,
                Color::new(0.0, 0.0, 0.0, 0.75),
            );
            mq::draw_text(&label, 60.0, h / 2.0 - 30.0, 26.0, mq::LIGHTGRAY);
            mq::draw_text(format!("{shown}_"), 60.0, h / 2.0 + 10.0, 34.0, mq::WHITE);
            mq::draw_text(
                "Enter: OK   Esc: cancel",
                60.0,
                h / 2.0 + 38.0,
                20.0,
                mq::GRAY,
            );
        }
        mq::draw_text(
            "[Esc] quit",
            40.0,
            mq::screen_height() - 30.0,
            22.0,
            mq::GRAY,
        );
    }
}

/// Host a game in a window.
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
        },
    )
}

/// Join a game in a window (or pick one from the start screen first).
pub fn join(
    options: Options,
    target: Option<Target>,
    discovery: SocketAddr,
    window: WindowOpts,
    record: Option<PathBuf>,
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
        None => Screen::Menu(Box::new(Menu::new(options, discovery, false))),
    };
    let plan = Plan {
        seconds: None,
        summary: None,
        window,
        stop: None,
        menu,
    };
    open("Tumbleyard", screen, plan)
}

/// The start screen: host a game or join one.
pub fn menu(options: Options, discovery: SocketAddr, window: WindowOpts) -> Result<(), String> {
    let plan = Plan {
        seconds: None,
        summary: None,
        window,
        stop: None,
        menu: Some((options.clone(), discovery, true)),
    };
    open(
        "Tumbleyard",
        Screen::Menu(Box::new(Menu::new(options, discovery, true))),
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

struct View {
    yaw: f32,
    /// Show the whole yard from above instead of following the player.
    overview: bool,
    camera: mq::Camera3D,
    /// What to draw of each entity, on the world's one clock (see `lanyard::interp`).
    smoother: Smoother,
    /// The fraction of a tick the frame is into the next one.
    alpha: f32,
}

async fn run(mut screen: Screen, plan: Plan) -> Result<(), String> {
    let dt = 1.0 / TICK_HZ;
    let mut acc = 0.0f32;
    let mut frames = 0u32;
    let mut elapsed = 0.0f32;
    let mut view = View {
        yaw: 0.0,
        overview: plan.window.screenshot.is_some() || matches!(screen, Screen::Replaying(_)),
        camera: mq::Camera3D::default(),
        smoother: Smoother::new(20.0),
        alpha: 0.0,
    };
    let mut roster_state = Roster::default();
    let mut latch = Latch::default();
    // The chat line being typed, while one is open (Enter opens and sends, Esc drops it).
    let mut chat: Option<String> = None;
    let mut net_graph = false;
    // A screenshot advances one tick per frame, so the picture does not depend on how fast
    // the machine draws.
    let fixed = match &plan.window {
        w if w.screenshot.is_some() => Some(dt),
        w => w.frame_time,
    };
    let cap = (plan.window.fps > 0).then(|| Duration::from_secs_f32(1.0 / plan.window.fps as f32));
    loop {
        let drawn = std::time::Instant::now();
        let frame_time = fixed.unwrap_or_else(|| mq::get_frame_time().min(0.25));
        elapsed += frame_time;
        let typing_in_menu = matches!(&screen, Screen::Menu(m) if m.editing.is_some());
        if (mq::is_key_pressed(KeyCode::Escape) && chat.is_none() && !typing_in_menu)
            || plan
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            break;
        }
        let mut next = None;
        match &mut screen {
            Screen::Menu(m) => {
                if let Some(r) = m.frame(&plan.window.script, frames) {
                    next = Some(match r {
                        Ok(g) => Screen::Playing(Box::new(g)),
                        Err(e) => Screen::Ended(e),
                    });
                }
            }
            Screen::Playing(game) => {
                acc += frame_time;
                let ticks = ((acc + 1e-4) / dt) as u32;
                acc = (acc - ticks as f32 * dt).max(0.0);
                if ticks > 5 {
                    // Too far behind (a stall): drop the backlog rather than spiral.
                    acc = 0.0;
                }
                let typing = chat_line(game, &mut chat);
                // The keyboard is read once per drawn frame; a press waits in the latch
                // for the next tick, and only that tick gets it. While a chat line is
                // open the keys type into it instead.
                let fresh = match typing {
                    true => PlayerInput::default(),
                    false => read_input(game, &view, &plan.window.script, frames),
                };
                latch.frame(fresh);
                for _ in 0..ticks.min(5) {
                    game.set_input(latch.for_tick());
                    game.tick(dt);
                    view.smoother
                        .after_frame(&game.group, game.net.remote_time());
                }
                view.alpha = acc / dt;
                draw_world(game, &mut view);
                draw_hud(game);
                if !typing
                    && (mq::is_key_pressed(KeyCode::N)
                        || plan.window.script.pressed(frames, KeyCode::N))
                {
                    net_graph = !net_graph;
                }
                if net_graph {
                    draw_net_graph(game);
                }
                if game.is_server() {
                    roster(game, &mut roster_state);
                }
                if game.net.is_reconnecting() {
                    draw_banner("reconnecting...");
                }
                if let Some(line) = &chat {
                    let y = mq::screen_height() - 44.0;
                    mq::draw_rectangle(10.0, y - 22.0, 620.0, 30.0, Color::new(0.0, 0.0, 0.0, 0.6));
                    mq::draw_text(format!("say: {line}_"), 18.0, y, 22.0, mq::WHITE);
                }
                if let Some(why) = game.ended.clone() {
                    next = Some(match &plan.menu {
                        Some((o, d, host)) => {
                            game.shutdown();
                            Screen::Menu(Box::new(Menu::with_note(o.clone(), *d, *host, &why)))
                        }
                        None => Screen::Ended(why),
                    });
                }
            }
            Screen::Replaying(r) => {
                acc += frame_time;
                while acc >= dt {
                    acc -= dt;
                    match r.replay.step() {
                        Ok(Step::Matched(t)) => {
                            r.status =
                                format!("tick {t} of {}: matches the recording", r.replay.len())
                        }
                        Ok(Step::Diverged(d)) => r.status = d.to_string(),
                        Ok(Step::End) => {
                            r.status = format!("end of the recording ({} ticks)", r.replay.len())
                        }
                        Err(e) => r.status = e.to_string(),
                    }
                    view.smoother.after_frame(r.replay.group(), None);
                }
                view.alpha = acc / dt;
                draw_scene(&r.scene, r.replay.group(), None, None, &[], &mut view);
                mq::draw_text(
                    "REPLAY",
                    20.0,
                    36.0,
                    30.0,
                    Color::from_rgba(240, 190, 80, 255),
                );
                for (i, line) in r.status.lines().take(6).enumerate() {
                    mq::draw_text(line, 20.0, 64.0 + i as f32 * 22.0, 20.0, mq::WHITE);
                }
            }
            Screen::Ended(why) => {
                mq::clear_background(Color::from_rgba(34, 40, 52, 255));
                mq::draw_text(why, 40.0, 120.0, 30.0, mq::WHITE);
                mq::draw_text("[Esc] quit", 40.0, 170.0, 24.0, mq::GRAY);
            }
        }
        if let Some(n) = next {
            screen = n;
            // A new world: new entities, a new clock.
            view.smoother = Smoother::new(20.0);
        }
        frames += 1;
        if let (Some(path), Some(n)) = (&plan.window.screenshot, plan.window.frames)
            && frames >= n
        {
            save_screenshot(path)?;
            break;
        }
        if plan.seconds.is_some_and(|s| elapsed >= s) {
            break;
        }
        if let Some(cap) = cap {
            std::thread::sleep(cap.saturating_sub(drawn.elapsed()));
        }
        mq::next_frame().await;
    }
    if let Screen::Playing(game) = &mut screen {
        if let Some(path) = &plan.summary {
            let text =
                serde_json::to_string_pretty(&game.summary_json()).map_err(|e| e.to_string())?;
            std::fs::write(path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        game.shutdown();
    }
    if let Screen::Ended(why) = screen {
        return Err(why);
    }
    Ok(())
}

fn save_screenshot(path: &std::path::Path) -> Result<(), String> {
    let img = mq::get_screen_data();
    let p = path
        .to_str()
        .ok_or("the screenshot path is not valid UTF-8")?;
    img.export_png(p);
    Ok(())
}

/// The chat line: Enter opens it, typed characters go into it, Backspace takes one back,
/// Enter sends it, Esc drops it. Returns whether a line is open (the keys are typing).
fn chat_line(game: &mut Game, chat: &mut Option<String>) -> bool {
    let Some(line) = chat else {
        if mq::is_key_pressed(KeyCode::Enter) {
            while mq::get_char_pressed().is_some() {}
            *chat = Some(String::new());
            return true;
        }
        return false;
    };
    while let Some(c) = mq::get_char_pressed() {
        if !c.is_control() && line.chars().count() < lanyard_game::game::CHAT_MAX {
            line.push(c);
        }
    }
    if mq::is_key_pressed(KeyCode::Backspace) {
        line.pop();
    }
    if mq::is_key_pressed(KeyCode::Enter) {
        game.chat(line);
        *chat = None;
    } else if mq::is_key_pressed(KeyCode::Escape) {
        *chat = None;
    }
    true
}

/// The player's input between drawn frames and ticks. The keyboard is read once per drawn
/// frame; walking is a state (the newest counts), a jump or a throw is an event: it waits
/// here until a tick runs, and exactly one tick gets it. So at any frame rate no press is
/// lost (a frame with no tick) and none is doubled (a frame with several ticks).
#[derive(Debug, Default)]
struct Latch {
    held: PlayerInput,
}

impl Latch {
    /// What this frame read.
    fn frame(&mut self, fresh: PlayerInput) {
        self.held.walk = fresh.walk;
        self.held.jump |= fresh.jump;
        self.held.throw = self.held.throw.or(fresh.throw);
    }

    /// The input for the next tick: the walk, and the waiting presses (once).
    fn for_tick(&mut self) -> PlayerInput {
        let input = self.held;
        self.held.jump = false;
        self.held.throw = None;
        input
    }
}

/// The keyboard and mouse (and the input script), as a player's input: WASD walks
/// (relative to the camera), space jumps, the left mouse button (or F) throws towards the
/// point under the cursor, Q and E turn the camera.
fn read_input(game: &Game, view: &View, script: &InputScript, frame: u32) -> PlayerInput {
    let pressed = |k: KeyCode| mq::is_key_pressed(k) || script.pressed(frame, k);
    let mut walk = mq::Vec2::ZERO;
    if mq::is_key_down(KeyCode::W) {
        walk.y -= 1.0;
    }
    if mq::is_key_down(KeyCode::S) {
        walk.y += 1.0;
    }
    if mq::is_key_down(KeyCode::A) {
        walk.x -= 1.0;
    }
    if mq::is_key_down(KeyCode::D) {
        walk.x += 1.0;
    }
    let (s, c) = view.yaw.sin_cos();
    let world = vec2(walk.x * c - walk.y * s, walk.x * s + walk.y * c).normalize_or_zero();
    let mut input = PlayerInput {
        walk: [world.x, world.y],
        jump: pressed(KeyCode::Space),
        ..PlayerInput::default()
    };
    if (mq::is_mouse_button_pressed(MouseButton::Left) || pressed(KeyCode::F))
        && let Some(me) = game.my_player().and_then(|id| game.group.get(id))
    {
        let p = me.body().translation();
        let target =
            cursor_on_ground(&view.camera).unwrap_or(vec3(p.x - s * 5.0, 0.0, p.z - c * 5.0));
        let d = lanyard::Vec3::new(target.x - p.x, 0.0, target.z - p.z);
        input.throw = Some(d.normalize_or(lanyard::Vec3::X));
    }
    input
}

/// Where the ray through the mouse cursor meets the ground plane.
fn cursor_on_ground(camera: &mq::Camera3D) -> Option<mq::Vec3> {
    use mq::Camera;
    let (mx, my) = mq::mouse_position();
    let ndc = vec2(
        mx / mq::screen_width() * 2.0 - 1.0,
        1.0 - my / mq::screen_height() * 2.0,
    );
    let inv = camera.matrix().inverse();
    let near = inv.project_point3(vec3(ndc.x, ndc.y, -1.0));
    let far = inv.project_point3(vec3(ndc.x, ndc.y, 1.0));
    let dir = far - near;
    if dir.y.abs() < 1e-6 {
        return None;
    }
    let t = -near.y / dir.y;
    (t > 0.0).then(|| near + dir * t)
}

fn light(n: mq::Vec3) -> f32 {
    let l = vec3(0.4, 1.0, 0.3).normalize();
    0.45 + 0.55 * n.dot(l).max(0.0)
}

/// A box as a mesh with one shade per face, so its rotation shows.
fn draw_box(center: mq::Vec3, rot: mq::Quat, half: mq::Vec3, base: Color) {
    const FACES: [([f32; 3], [[f32; 3]; 4]); 6] = [
        (
            [1.0, 0.0, 0.0],
            [
                [1.0, -1.0, -1.0],
                [1.0, 1.0, -1.0],
                [1.0, 1.0, 1.0],
                [1.0, -1.0, 1.0],
            ],
        ),
        (
            [-1.0, 0.0, 0.0],
            [
                [-1.0, -1.0, 1.0],
                [-1.0, 1.0, 1.0],
                [-1.0, 1.0, -1.0],
                [-1.0, -1.0, -1.0],
            ],
        ),
        (
            [0.0, 1.0, 0.0],
            [
                [-1.0, 1.0, -1.0],
                [-1.0, 1.0, 1.0],
                [1.0, 1.0, 1.0],
                [1.0, 1.0, -1.0],
            ],
        ),
        (
            [0.0, -1.0, 0.0],
            [
                [-1.0, -1.0, 1.0],
                [-1.0, -1.0, -1.0],
                [1.0, -1.0, -1.0],
                [1.0, -1.0, 1.0],
            ],
        ),
        (
            [0.0, 0.0, 1.0],
            [
                [-1.0, -1.0, 1.0],
                [1.0, -1.0, 1.0],
                [1.0, 1.0, 1.0],
                [-1.0, 1.0, 1.0],
            ],
        ),
        (
            [0.0, 0.0, -1.0],
            [
                [1.0, -1.0, -1.0],
                [-1.0, -1.0, -1.0],
                [-1.0, 1.0, -1.0],
                [1.0, 1.0, -1.0],
            ],
        ),
    ];
    let mut vertices = Vec::with_capacity(24);
    let mut indices = Vec::with_capacity(36);
    for (n, corners) in FACES {
        let shade = light(rot * vec3(n[0], n[1], n[2]));
        let c = Color::new(base.r * shade, base.g * shade, base.b * shade, base.a);
        let first = vertices.len() as u16;
        for k in corners {
            let p = center + rot * (vec3(k[0], k[1], k[2]) * half);
            vertices.push(Vertex {
                position: p,
                uv: vec2(0.0, 0.0),
                color: c.into(),
                normal: vec4(0.0, 0.0, 0.0, 0.0),
            });
        }
        indices.extend_from_slice(&[first, first + 1, first + 2, first, first + 2, first + 3]);
    }
    mq::draw_mesh(&Mesh {
        vertices,
        indices,
        texture: None,
    });
    // Dark edges make the boxes crisp.
    let edge = Color::new(base.r * 0.3, base.g * 0.3, base.b * 0.3, 1.0);
    let corner = |x: f32, y: f32, z: f32| center + rot * (vec3(x, y, z) * half);
    for (a, b) in [
        ((-1., -1., -1.), (1., -1., -1.)),
        ((-1., 1., -1.), (1., 1., -1.)),
        ((-1., -1., 1.), (1., -1., 1.)),
        ((-1., 1., 1.), (1., 1., 1.)),
        ((-1., -1., -1.), (-1., 1., -1.)),
        ((1., -1., -1.), (1., 1., -1.)),
        ((-1., -1., 1.), (-1., 1., 1.)),
        ((1., -1., 1.), (1., 1., 1.)),
        ((-1., -1., -1.), (-1., -1., 1.)),
        ((1., -1., -1.), (1., -1., 1.)),
        ((-1., 1., -1.), (-1., 1., 1.)),
        ((1., 1., -1.), (1., 1., 1.)),
    ] {
        mq::draw_line_3d(corner(a.0, a.1, a.2), corner(b.0, b.1, b.2), edge);
    }
}

fn draw_world(game: &mut Game, view: &mut View) {
    let focus = game
        .my_player()
        .and_then(|id| game.group.get(id))
        .map(|e| e.body().translation());
    draw_scene(
        &game.scene,
        &game.group,
        game.me(),
        focus,
        &game.blasts,
        view,
    );
}

/// Draws the yard, its entities and explosions, from the view's camera.
fn draw_scene(
    scene: &Scene,
    group: &EntityGroup,
    me: Option<Owner>,
    focus: Option<lanyard::Vec3>,
    blasts: &[Blast],
    view: &mut View,
) {
    mq::clear_background(Color::from_rgba(150, 192, 230, 255));
    if mq::is_key_down(KeyCode::Q) {
        view.yaw -= 2.0 * mq::get_frame_time();
    }
    if mq::is_key_down(KeyCode::E) {
        view.yaw += 2.0 * mq::get_frame_time();
    }
    let focus = focus.map(mq3).unwrap_or(vec3(0.0, 0.0, 0.0));
    if mq::is_key_pressed(KeyCode::C) {
        view.overview = !view.overview;
    }
    let (s, c) = view.yaw.sin_cos();
    let back = vec3(s, 0.0, c);
    let (position, target) = if view.overview {
        let reach = scene.floor.half_extents[0].max(scene.floor.half_extents[2]);
        (
            back * reach * 1.55 + vec3(0.0, reach * 1.6, 0.0),
            vec3(0.0, -1.0, 0.0),
        )
    } else {
        (
            focus + back * 13.0 + vec3(0.0, 11.0, 0.0),
            focus + vec3(0.0, 0.5, 0.0),
        )
    };
    view.camera = mq::Camera3D {
        position,
        target,
        up: vec3(0.0, 1.0, 0.0),
        fovy: 0.9,
        ..Default::default()
    };
    mq::set_camera(&view.camera);
    // The yard.
    let f = &scene.floor;
    draw_box(
        vec3(0.0, -f.half_extents[1], 0.0),
        mq::Quat::IDENTITY,
        vec3(f.half_extents[0], f.half_extents[1], f.half_extents[2]),
        color(f.color),
    );
    for b in &scene.blocks {
        draw_box(
            vec3(b.center[0], b.center[1], b.center[2]),
            mq::Quat::IDENTITY,
            vec3(b.half_extents[0], b.half_extents[1], b.half_extents[2]),
            color(b.color),
        );
    }
    // The entities: each where the smoother says, at the world's time plus the fraction of
    // a tick this frame is into the next.
    view.smoother.advance(group, view.alpha);
    let mut labels = Vec::new();
    for e in group.iter() {
        let (p, r) = view
            .smoother
            .pose(group, e.id(), me.unwrap_or(Owner::Server))
            .unwrap_or((e.body().translation(), *e.body().rotation()));
        let (pos, rot) = (mq3(p), mq::Quat::from_xyzw(r.x, r.y, r.z, r.w));
        let base = color(e.visual.color);
        match e.visual.shape {
            Shape::Cuboid { half_extents } => draw_box(
                pos,
                rot,
                vec3(half_extents[0], half_extents[1], half_extents[2]),
                base,
            ),
            Shape::Ball { radius } => mq::draw_sphere(pos, radius, None, base),
            Shape::Capsule {
                half_height,
                radius,
            } => {
                let shade = |k: f32| Color::new(base.r * k, base.g * k, base.b * k, 1.0);
                mq::draw_cylinder(
                    pos - vec3(0.0, half_height, 0.0),
                    radius,
                    radius,
                    half_height * 2.0,
                    None,
                    shade(0.85),
                );
                mq::draw_sphere(pos + vec3(0.0, half_height, 0.0), radius, None, shade(1.0));
                mq::draw_sphere(pos - vec3(0.0, half_height, 0.0), radius, None, shade(0.7));
                if let Some(p) = group.controller::<Player>(e.id()) {
                    labels.push((
                        pos + vec3(0.0, half_height + radius + 0.4, 0.0),
                        p.name.clone(),
                    ));
                }
            }
        }
    }
    for b in blasts {
        draw_blast(b);
    }
    mq::set_default_camera();
    use mq::Camera;
    let m = view.camera.matrix();
    for (p, name) in labels {
        let ndc = m.project_point3(p);
        if ndc.z < 1.0 {
            let x = (ndc.x + 1.0) / 2.0 * mq::screen_width();
            let y = (1.0 - ndc.y) / 2.0 * mq::screen_height();
            let w = mq::measure_text(&name, None, 22, 1.0).width;
            mq::draw_text(&name, x - w / 2.0, y, 22.0, mq::WHITE);
        }
    }
}

/// A flash that grows and fades, and sparks flying out.
fn draw_blast(b: &Blast) {
    let at = mq3(b.at);
    let k = (b.age / 1.5).clamp(0.0, 1.0);
    if b.age < 0.35 {
        let r = 0.4 + b.age * 10.0;
        mq::draw_sphere(
            at,
            r,
            None,
            Color::new(1.0, 0.85, 0.4, 0.55 * (1.0 - b.age / 0.35)),
        );
    }
    // Sparks in directions fixed by the blast's position, so every frame agrees.
    let mut seed = (b.at.x.to_bits() ^ b.at.z.to_bits().rotate_left(13)) as u64 | 1;
    for _ in 0..28 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let a = (seed & 0xffff) as f32 / 65535.0 * std::f32::consts::TAU;
        let up = ((seed >> 16) & 0xffff) as f32 / 65535.0;
        let d = vec3(
            a.cos() * (1.0 - up * 0.5),
            0.3 + up,
            a.sin() * (1.0 - up * 0.5),
        )
        .normalize();
        // Each spark flies out and falls; it is drawn as a short streak along its path.
        let start = at + d * (b.age * 6.0) - vec3(0.0, 4.9 * b.age * b.age, 0.0);
        let end = start + (d - vec3(0.0, b.age * 1.6, 0.0)).normalize() * 0.35;
        mq::draw_line_3d(start, end, Color::new(1.0, 0.7 - 0.5 * k, 0.2, 1.0 - k));
    }
}

/// The net graph (N): the last ten seconds of ping, kilobits per second in and out, and
/// loss, each scaled to its own peak.
fn draw_net_graph(game: &Game) {
    let (w, h) = (340.0, 200.0);
    let (x, y) = (
        mq::screen_width() - w - 10.0,
        mq::screen_height() - h - 34.0,
    );
    mq::draw_rectangle(x, y, w, h, Color::new(0.0, 0.0, 0.0, 0.6));
    let samples: Vec<GraphSample> = game.graph.iter().copied().collect();
    let last = samples.last().copied().unwrap_or_default();
    let rows: [(String, Vec<Vec<f32>>, [Color; 2]); 3] = [
        (
            format!("ping {:.0} ms", last.ping_ms),
            vec![samples.iter().map(|s| s.ping_ms).collect()],
            [mq::YELLOW, mq::YELLOW],
        ),
        (
            format!("in {:.0} / out {:.0} kbit/s", last.kbps_in, last.kbps_out),
            vec![
                samples.iter().map(|s| s.kbps_in).collect(),
                samples.iter().map(|s| s.kbps_out).collect(),
            ],
            [mq::SKYBLUE, mq::ORANGE],
        ),
        (
            format!("loss {:.0}%", last.loss * 100.0),
            vec![samples.iter().map(|s| s.loss * 100.0).collect()],
            [mq::RED, mq::RED],
        ),
    ];
    let row_h = h / 3.0;
    for (i, (label, series, colors)) in rows.iter().enumerate() {
        let top = y + i as f32 * row_h;
        mq::draw_text(label, x + 8.0, top + 16.0, 18.0, mq::WHITE);
        let peak = series.iter().flatten().fold(1.0f32, |m, v| m.max(*v));
        let (gx, gy, gw, gh) = (x + 8.0, top + 22.0, w - 16.0, row_h - 28.0);
        mq::draw_line(gx, gy + gh, gx + gw, gy + gh, 1.0, mq::GRAY);
        let step = gw / (GRAPH_SAMPLES - 1) as f32;
        for (line, c) in series.iter().zip(colors) {
            for (k, pair) in line.windows(2).enumerate() {
                let x0 = gx + k as f32 * step;
                let y0 = gy + gh - pair[0] / peak * gh;
                let y1 = gy + gh - pair[1] / peak * gh;
                mq::draw_line(x0, y0, x0 + step, y1, 2.0, *c);
            }
        }
    }
}

/// A line across the middle of the screen, over the (frozen) world.
fn draw_banner(text: &str) {
    let (w, h) = (mq::screen_width(), mq::screen_height());
    mq::draw_rectangle(0.0, h / 2.0 - 40.0, w, 64.0, Color::new(0.0, 0.0, 0.0, 0.6));
    let size = mq::measure_text(text, None, 40, 1.0);
    mq::draw_text(text, (w - size.width) / 2.0, h / 2.0, 40.0, mq::WHITE);
}

/// The host's player list: Tab shows it, a digit selects a player, K kicks the selected.
fn roster(game: &mut Game, r: &mut Roster) {
    if mq::is_key_pressed(KeyCode::Tab) {
        r.open = !r.open;
        r.selected = None;
    }
    if !r.open {
        return;
    }
    let sessions = game.net.sessions();
    for (i, k) in DIGITS.iter().enumerate() {
        if mq::is_key_pressed(*k) && i < sessions.len() {
            r.selected = Some(i);
        }
    }
    if mq::is_key_pressed(KeyCode::K)
        && let Some(s) = r.selected.and_then(|i| sessions.get(i))
    {
        let lines = game.kick(&s.name, "kicked by the host", false);
        game.messages.extend(lines);
        r.selected = None;
    }
    let (x, w) = (mq::screen_width() / 2.0 - 260.0, 520.0);
    let h = 70.0 + 26.0 * sessions.len().max(1) as f32;
    mq::draw_rectangle(x, 120.0, w, h, Color::new(0.0, 0.0, 0.0, 0.7));
    mq::draw_text(
        "PLAYERS  (digit: select, K: kick, Tab: close)",
        x + 14.0,
        146.0,
        22.0,
        mq::WHITE,
    );
    if sessions.is_empty() {
        mq::draw_text("nobody has joined", x + 14.0, 176.0, 22.0, mq::GRAY);
    }
    for (i, s) in sessions.iter().enumerate() {
        let what = match (s.spectator, s.suspended) {
            (_, true) => "reconnecting",
            (true, false) => "watching",
            (false, false) => "playing",
        };
        let line = format!(
            "[{}] {:<16} {:>4.0} ms  {:>2.0}% loss  {what}",
            i + 1,
            s.name,
            s.stats.ping_ms,
            s.stats.loss * 100.0
        );
        let c = if r.selected == Some(i) {
            mq::YELLOW
        } else {
            mq::WHITE
        };
        mq::draw_text(&line, x + 14.0, 176.0 + 26.0 * i as f32, 22.0, c);
    }
}

fn draw_hud(game: &Game) {
    let panel = Color::new(0.0, 0.0, 0.0, 0.45);
    let rows = game.scores.len().max(1) as f32;
    mq::draw_rectangle(10.0, 10.0, 420.0, 78.0 + rows * 24.0, panel);
    mq::draw_text(
        format!("TUMBLEYARD  {}", game.scene.name),
        20.0,
        36.0,
        26.0,
        Color::from_rgba(240, 190, 80, 255),
    );
    let net = match game.ping_ms() {
        None if game.net.is_reconnecting() => "reconnecting to the server...".to_owned(),
        None if !game.is_server() => "connecting...".to_owned(),
        Some(p) => format!(
            "ping {:.0} ms  in {:.0} kbit/s  out {:.0} kbit/s  loss {:.0}%",
            p,
            game.traffic.kbps_in,
            game.traffic.kbps_out,
            game.loss() * 100.0
        ),
        None => format!(
            "hosting: {}  in {:.0} kbit/s  out {:.0} kbit/s",
            count(game.player_names().len(), "player"),
            game.traffic.kbps_in,
            game.traffic.kbps_out
        ),
    };
    mq::draw_text(&net, 20.0, 60.0, 18.0, mq::LIGHTGRAY);
    let mut y = 86.0;
    if game.scores.is_empty() {
        mq::draw_text("no scores yet", 20.0, y, 22.0, mq::WHITE);
    }
    for (name, points) in &game.scores {
        mq::draw_text(format!("{points:>3}  {name}"), 20.0, y, 22.0, mq::WHITE);
        y += 24.0;
    }
    let help = "WASD walk  Space jump  click/F throw  Q/E turn  C overview  N net graph  Enter chat  Esc quit";
    mq::draw_text(help, 14.0, mq::screen_height() - 14.0, 20.0, mq::WHITE);
    if !game.is_joined() {
        mq::draw_text(
            "joining ...",
            mq::screen_width() / 2.0 - 60.0,
            40.0,
            30.0,
            mq::WHITE,
        );
    }
    for (i, m) in game.messages.iter().rev().take(4).enumerate() {
        mq::draw_text(
            m,
            mq::screen_width() - 360.0,
            30.0 + i as f32 * 22.0,
            20.0,
            mq::WHITE,
        );
    }
}
