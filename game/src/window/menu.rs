//! The start screen: your name, the games found on the LAN and at a rendezvous server,
//! a typed address, the password prompt, and reaching a game on a thread.

use super::{Target, draw_title};
use crate::window::input::{DIGITS, InputScript, type_into};
use lanyard_game::game::{Game, Options};
use lanyard_net::Addrs;
use lanyard_net::discovery;
use lanyard_net::discovery::{Found, ServerInfo};
use lanyard_net::udp::UdpTransport;
use macroquad::prelude as mq;
use macroquad::prelude::{Color, KeyCode};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// A path being punched to a game registered at a rendezvous server, on a thread of its own.
pub(crate) type Reaching = Receiver<Result<(UdpTransport, lanyard_rendezvous::Path), String>>;

pub(crate) struct Menu {
    pub(crate) options: Options,
    pub(crate) discovery: Addrs,
    pub(crate) games: Vec<Found>,
    pub(crate) browsing: Option<Receiver<Result<Vec<Found>, String>>>,
    /// The games registered at the rendezvous server (`options.rendezvous`), if any.
    pub(crate) remote: Vec<ServerInfo>,
    pub(crate) listing: Option<Receiver<Result<Vec<ServerInfo>, String>>>,
    /// A game being reached through the rendezvous server: its name, the password to
    /// give, and the punching.
    pub(crate) reaching: Option<(String, Option<String>, Reaching)>,
    /// When (seconds since the menu opened) the list was last asked for.
    pub(crate) browsed_at: f64,
    pub(crate) opened: std::time::Instant,
    pub(crate) note: String,
    pub(crate) allow_host: bool,
    /// Why the last session ended (or the last try failed), until a new game appears.
    pub(crate) last_end: Option<String>,
    /// Whether a LAN list came since the screen opened.
    pub(crate) listed_once: bool,
    /// The line being typed, and what it is for.
    pub(crate) editing: Option<(Field, String)>,
    /// How many passwords the game being asked for refused in a row.
    pub(crate) wrong_passwords: u32,
}

/// What a line typed on the start screen is for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Field {
    /// The player's name (remembered between runs).
    Name,
    /// The password of a game that asks for one (where it is, and its name).
    Password(Target, String),
    /// A server's address, HOST[:PORT].
    Address,
}

/// How often the start screen asks the LAN again, in seconds.
pub(crate) const BROWSE_EVERY: f64 = 3.0;

/// Where the player's name is remembered: `name` in the configuration folder
/// (`$XDG_CONFIG_HOME/tumbleyard`, or `$HOME/.config/tumbleyard`).
pub(crate) fn name_file() -> Option<PathBuf> {
    Some(lanyard_game::game::claims::config_dir()?.join("name"))
}

/// The name of the user running the program (`USER`, `LOGNAME` or `USERNAME`), cleaned
/// and fit for a player name, if there is one: the first run's default name.
pub fn os_user_name() -> Option<String> {
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .map(|n| {
            lanyard_game::game::clean_line(n.trim())
                .chars()
                .take(32)
                .collect::<String>()
        })
        .find(|n| !n.is_empty())
}

/// The name remembered from an earlier run, if any.
pub fn remembered_name() -> Option<String> {
    let text = std::fs::read_to_string(name_file()?).ok()?;
    let name = text.trim();
    (!name.is_empty() && name.chars().count() <= 32).then(|| name.to_owned())
}

pub(crate) fn remember_name(name: &str) {
    if let Some(path) = name_file() {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(path, name);
    }
}

impl Menu {
    pub(crate) fn with_note(
        options: Options,
        discovery: Addrs,
        allow_host: bool,
        why: &str,
    ) -> Self {
        let mut m = Self::new(options, discovery, allow_host);
        m.last_end = Some(why.to_owned());
        m
    }

    /// Opens the password prompt for the game at `target`, shown as `name`, after
    /// `wrong` wrong tries (the prompt says so).
    pub(crate) fn ask_password(&mut self, target: Target, name: String, wrong: u32) {
        self.wrong_passwords = wrong;
        self.editing = Some((Field::Password(target, name), String::new()));
        while mq::get_char_pressed().is_some() {}
    }

    /// The start screen; on a `first_run` with the name prompt open, its default the
    /// name the options carry (Enter keeps it).
    pub(crate) fn first(
        options: Options,
        discovery: Addrs,
        allow_host: bool,
        first_run: bool,
    ) -> Self {
        let mut m = Self::new(options, discovery, allow_host);
        if first_run {
            m.editing = Some((Field::Name, String::new()));
        }
        m
    }

    pub(crate) fn new(options: Options, discovery: Addrs, allow_host: bool) -> Self {
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
            listed_once: false,
            editing: None,
            wrong_passwords: 0,
        };
        m.refresh();
        m
    }

    pub(crate) fn refresh(&mut self) {
        let (tx, rx) = channel();
        let d = self.discovery;
        std::thread::spawn(move || {
            let r =
                discovery::browse_each(d, Duration::from_millis(800)).map_err(|e| e.to_string());
            let _ = tx.send(r);
        });
        self.browsing = Some(rx);
        if let Some(rv) = self.options.rendezvous
            && self.listing.is_none()
        {
            let (tx, rx) = channel();
            std::thread::spawn(move || {
                let r = lanyard_rendezvous::list(rv).map_err(|e| e.to_string());
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
    pub(crate) fn join(
        &mut self,
        target: Target,
        password: Option<String>,
    ) -> Option<Result<Game, String>> {
        let addr = match target {
            Target::Addr(addr) => addr,
            Target::Named(rv, name) => {
                let (tx, rx) = channel();
                let wanted = name.clone();
                std::thread::spawn(move || {
                    let r = Game::client_socket(rv).and_then(|mut socket| {
                        let path = Game::punch(&mut socket, rv, &wanted)?;
                        Ok((socket, path))
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

    pub(crate) fn started(&mut self, game: Result<Game, String>) -> Option<Result<Game, String>> {
        match game {
            Ok(g) => Some(Ok(g)),
            Err(e) => {
                self.last_end = Some(e);
                None
            }
        }
    }

    /// The path to a game at the rendezvous server, once it is open (or why not).
    pub(crate) fn reached(&mut self) -> Option<Result<Game, String>> {
        let (_, _, rx) = self.reaching.as_ref()?;
        let r = rx.try_recv().ok()?;
        let (name, password, _) = self.reaching.take()?;
        match r {
            Ok((socket, path)) => {
                let options = Options {
                    password,
                    ..self.options.clone()
                };
                let game =
                    Game::client_on_path(options, socket, path, lanyard_game::game::entropy());
                self.started(game)
            }
            Err(e) => {
                self.last_end = Some(format!("cannot reach '{name}': {e}"));
                None
            }
        }
    }

    /// The n-th game of the list (LAN games first, then the rendezvous server's).
    pub(crate) fn pick(&self, n: usize) -> Option<(Target, ServerInfo)> {
        if let Some(g) = self.games.get(n) {
            return Some((Target::Addr(g.addr), g.info.clone()));
        }
        let rv = self.options.rendezvous?;
        let g = self.remote.get(n - self.games.len())?;
        Some((Target::Named(rv, g.name.clone()), g.clone()))
    }

    /// The line being typed: characters go in, Backspace takes one back, Enter finishes
    /// it (returning it), Esc drops it.
    pub(crate) fn type_line(
        &mut self,
        script: &InputScript,
        frame: u32,
    ) -> Option<(Field, String)> {
        let (_, line) = self.editing.as_mut()?;
        type_into(line, script, frame);
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
    pub(crate) fn frame(
        &mut self,
        script: &InputScript,
        frame: u32,
    ) -> Option<Result<Game, String>> {
        self.take_lists();
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
            return self.typed(field, text);
        }
        self.keys(|k: KeyCode| mq::is_key_pressed(k) || script.pressed(frame, k))
    }

    /// Takes the lists that came in: the games found on the LAN, and the rendezvous
    /// server's.
    fn take_lists(&mut self) {
        if let Some(rx) = &self.browsing
            && let Ok(r) = rx.try_recv()
        {
            match r {
                Ok(g) => self.found(g),
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
    }

    /// The games found on the LAN.
    fn found(&mut self, g: Vec<discovery::Found>) {
        self.note = format!(
            "{} found on {} (the list refreshes by itself)",
            lanyard_game::game::count(g.len(), "game"),
            self.discovery
        );
        // A game that was not there before makes the last error old news (the first list
        // after the screen opens is what was there all along).
        let known = |f: &discovery::Found| {
            self.games
                .iter()
                .any(|k| k.addr == f.addr && k.info.name == f.info.name)
        };
        if self.listed_once && g.iter().any(|f| !known(f)) {
            self.last_end = None;
        }
        self.listed_once = true;
        self.games = g;
    }

    /// A line typed into `field` and entered: the game to start, if it leads to one.
    fn typed(&mut self, field: Field, text: String) -> Option<Result<Game, String>> {
        match field {
            Field::Name => {
                // Enter with nothing typed keeps the name shown.
                let name = match text.trim() {
                    "" => self.options.name.clone(),
                    typed => typed.to_owned(),
                };
                let name = name.as_str();
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
        }
    }

    /// The keys of the menu (`key`: whether one was pressed this frame): host, refresh,
    /// type a name or an address, or join a listed game by its digit.
    fn keys(&mut self, key: impl Fn(KeyCode) -> bool) -> Option<Result<Game, String>> {
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
                    self.ask_password(target, info.name, 0);
                    return None;
                }
                let password = self.options.password.clone();
                return self.join(target, password);
            }
        }
        None
    }

    /// Draws the menu: what it offers, the games listed, and the prompt being typed.
    pub(crate) fn draw(&self) {
        draw_title();
        let (y, shown) = self.draw_offers();
        self.draw_games(y, shown);
        if let Some((field, text)) = &self.editing {
            self.draw_prompt(field, text);
        }
        mq::draw_text(
            "[Esc] quit",
            40.0,
            mq::screen_height() - 30.0,
            22.0,
            mq::GRAY,
        );
    }

    /// What the menu offers (host, join by address, look again) under its title, and the
    /// note on the list: where the list starts, and how many lines it may take.
    fn draw_offers(&self) -> (f32, usize) {
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
        (y, shown)
    }

    /// The games listed, from `y` on (at most `shown`): the LAN's, then the rendezvous
    /// server's.
    fn draw_games(&self, mut y: f32, shown: usize) {
        for (i, g) in self.games.iter().enumerate().take(shown) {
            let line = format!(
                "[{}] {}  {}/{} players  {} watching  {}  {:.0} ms  {}{}{}",
                i + 1,
                g.info.name,
                g.info.players,
                g.info.max_players,
                g.info.spectators,
                if g.info.password { "password" } else { "open" },
                g.ping_ms,
                g.addr,
                g.info
                    .web_port
                    .map(|p| format!("  browsers: http://{}:{p}", g.addr.ip()))
                    .unwrap_or_default(),
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
    }

    /// The prompt for a line typed into `field` (`text` so far) over the menu.
    fn draw_prompt(&self, field: &Field, text: &str) {
        let (label, shown) = match field {
            Field::Name => (
                format!("your name (Enter keeps {})", self.options.name),
                text.to_owned(),
            ),
            Field::Password(target, name) => (
                password_label(target, name, self.wrong_passwords),
                "*".repeat(text.chars().count()),
            ),
            Field::Address => ("server address (HOST[:PORT])".to_owned(), text.to_owned()),
        };
        let (w, h) = (mq::screen_width(), mq::screen_height());
        // Tall enough for the hint under the line, its descenders included; nearly
        // opaque, so the start screen's lines behind it do not show through its edge.
        mq::draw_rectangle(
            0.0,
            h / 2.0 - 70.0,
            w,
            136.0,
            Color::new(0.05, 0.05, 0.07, 0.94),
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
}

/// The password prompt's line for the game `name` at `target`, after `wrong` refused
/// tries: each names the game and where it is, and a refused try says so, counted.
fn password_label(target: &Target, name: &str, wrong: u32) -> String {
    let place = match target {
        Target::Addr(addr) => format!("{name} ({addr})"),
        Target::Named(rv, _) => format!("{name} (via {rv})"),
    };
    match wrong {
        0 => format!("password for {place}"),
        1 => format!("wrong password for {place}: try again"),
        n => format!("{n} wrong passwords for {place}: try again"),
    }
}

#[cfg(test)]
mod tests {
    use super::{Target, password_label};

    #[test]
    fn the_password_prompt_names_the_game_and_counts_the_refused_tries() {
        let at = Target::Addr("127.0.0.1:47912".parse().unwrap());
        assert_eq!(
            password_label(&at, "the game", 0),
            "password for the game (127.0.0.1:47912)"
        );
        assert_eq!(
            password_label(&at, "the game", 1),
            "wrong password for the game (127.0.0.1:47912): try again"
        );
        assert_eq!(
            password_label(&at, "ada's yard", 3),
            "3 wrong passwords for ada's yard (127.0.0.1:47912): try again"
        );
    }
}
