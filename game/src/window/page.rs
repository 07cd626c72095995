//! The page's start screen, in a browser build, where the native start screen's LAN
//! list, hosting and typed addresses cannot be: the player's name and the game's
//! password, then the game of the host that served the page. It has the native start
//! screen's shape (`Menu`), so the window's loop runs either.

use super::{Plan, Screen, Target, WindowOpts, draw_title};
use crate::window::input::{InputScript, type_into};
use lanyard_game::bot::Bot;
use lanyard_game::game::{Game, Options, RecordingBuffer, entropy};
use lanyard_game::page::{self, PageChannel, PageQuery};
use lanyard_game::scene::Scene;
use lanyard_net::Addrs;
use macroquad::prelude as mq;
use macroquad::prelude::{Color, KeyCode};
use std::net::SocketAddr;

/// What a line typed on the page's start screen is for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Field {
    /// The player's name.
    Name,
    /// The game's password.
    Password,
}

pub(crate) struct Menu {
    pub(crate) options: Options,
    pub(crate) note: String,
    /// The line being typed, and what it is for.
    pub(crate) editing: Option<(Field, String)>,
}

impl Menu {
    /// The start screen; on a `first_run` it asks for the name first.
    pub(crate) fn first(options: Options, _: Addrs, _: bool, first_run: bool) -> Menu {
        let editing = first_run.then(|| (Field::Name, options.name.clone()));
        Menu {
            options,
            note: String::new(),
            editing,
        }
    }

    /// The start screen again after a game ended, saying why.
    pub(crate) fn with_note(options: Options, d: Addrs, host: bool, why: &str) -> Menu {
        let mut m = Menu::first(options, d, host, false);
        m.note = why.to_owned();
        m
    }

    /// Asks for the password of the game (refused for it).
    pub(crate) fn ask_password(&mut self, _: Target, _: String, _: u32) {
        self.editing = Some((Field::Password, String::new()));
    }

    /// Draws the screen and returns the game to start, once the player asked for it.
    pub(crate) fn frame(
        &mut self,
        script: &InputScript,
        frame: u32,
    ) -> Option<Result<Game, String>> {
        self.draw();
        if let Some((field, line)) = &mut self.editing {
            type_into(line, script, frame);
            if !(mq::is_key_pressed(KeyCode::Enter) || script.pressed(frame, KeyCode::Enter)) {
                return None;
            }
            match field {
                Field::Name if !line.trim().is_empty() => {
                    self.options.name = line.trim().to_owned()
                }
                Field::Name => return None,
                Field::Password => self.options.password = Some(line.clone()),
            }
            let password = *field == Field::Password;
            self.editing = None;
            if !password {
                return None;
            }
        } else if mq::is_key_pressed(KeyCode::N) || script.pressed(frame, KeyCode::N) {
            self.editing = Some((Field::Name, self.options.name.clone()));
            return None;
        } else if !(mq::is_key_pressed(KeyCode::Enter) || script.pressed(frame, KeyCode::Enter)) {
            return None;
        }
        Some(join(self.options.clone()))
    }

    fn draw(&self) {
        draw_title();
        let gold = Color::from_rgba(240, 190, 80, 255);
        let lines = match &self.editing {
            Some((Field::Name, line)) => vec![format!("your name: {line}_"), "[Enter] done".into()],
            Some((Field::Password, line)) => vec![
                format!("the game's password: {}_", "*".repeat(line.chars().count())),
                "[Enter] join".into(),
            ],
            None => vec![
                format!("you play as {}   [N] change", self.options.name),
                format!("[Enter] join the game at {}", page::host()),
            ],
        };
        for (i, l) in lines.iter().enumerate() {
            mq::draw_text(l, 40.0, 170.0 + 36.0 * i as f32, 28.0, mq::WHITE);
        }
        if !self.note.is_empty() {
            mq::draw_text(&self.note, 40.0, 270.0, 24.0, gold);
        }
    }
}

/// The game of the host that served the page, over a fresh data channel.
fn join(options: Options) -> Result<Game, String> {
    let server = page_server();
    Game::client_on(options, PageChannel::open(server), server, entropy())
}

/// The address the page knows its host by: where it was served from, if that is an
/// address (a name is only shown).
fn page_server() -> SocketAddr {
    page::host()
        .parse()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)))
}

/// The page: its query decides between the start screen and a bot.
pub(crate) fn page() {
    let query = PageQuery::parse(&page::query());
    // The host sends its arena when the page joins; this one is only the start.
    let scene = match Scene::parse(include_str!("../../../assets/arena.toml")) {
        Ok(s) => s,
        Err(e) => return page::console(&format!("lanyard: the arena: {e}")),
    };
    let mut options = Options::new(scene);
    options.password = query.password.clone();
    options.name = query.name.clone().unwrap_or_else(|| "browser".into());
    let mut plan = Plan {
        seconds: query.seconds,
        summary: None,
        window: WindowOpts {
            shot_after: query.shot,
            ..WindowOpts::default()
        },
        stop: None,
        menu: Some((options.clone(), Addrs::from(page_server()), false)),
        bot: None,
        recording: query.record.then(RecordingBuffer::new),
    };
    let screen = match query.bot {
        Some(seed) => {
            if query.name.is_none() {
                options.name = format!("web-{seed}");
            }
            plan.bot = Some(Bot::new(seed, query.seconds));
            plan.menu = None;
            let joined = join(options).and_then(|mut g| {
                if let Some(buf) = &plan.recording {
                    g.record_to_buffer(buf.clone())?;
                }
                Ok(g)
            });
            match joined {
                Ok(g) => Screen::Playing(Box::new(g)),
                Err(e) => Screen::Ended(e),
            }
        }
        None => Screen::Menu(Box::new(Menu::first(
            options,
            Addrs::from(page_server()),
            false,
            query.name.is_none(),
        ))),
    };
    if let Err(e) = super::open("Tumbleyard", screen, plan) {
        page::console(&format!("lanyard: {e}"));
    }
}
