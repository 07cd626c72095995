//! The window's loop: one tick loop for every screen (menu, game, replay), drawing, and
//! screenshots for tests.

use super::{Plan, Screen, Target, Viewer};
use crate::window::Menu;
use crate::window::draw::{camera_keys, draw_world};
use crate::window::hud::{Roster, draw_banner, draw_hud, draw_net_graph, roster};
use crate::window::input::{Latch, chat_line, read_input};
use crate::window::sound::Sounds;
use lanyard::interp::Smoother;
use lanyard_game::game::{Game, TICK_HZ};
use lanyard_game::kinds::PlayerInput;
use macroquad::prelude as mq;
use macroquad::prelude::{Color, KeyCode};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long a host's first Esc waits for the second that confirms ending the game.
const QUIT_CONFIRM_SECONDS: f32 = 3.0;

/// What the window's loop carries from one drawn frame to the next.
struct Looping {
    /// The tick's length, seconds.
    dt: f32,
    steps: lanyard_game::runner::FixedStep,
    /// Frames drawn so far.
    frames: u32,
    /// Seconds since the window opened.
    elapsed: f32,
    view: Viewer,
    roster: Roster,
    latch: Latch,
    /// The chat line being typed, while one is open (Enter opens and sends, Esc drops it).
    chat: Option<String>,
    net_graph: bool,
    sounds: Sounds,
    quit: QuitAsk,
    /// How many passwords in a row the game refused.
    wrong_passwords: u32,
    /// An Esc pressed in the frame whose Enter sent the chat line: it quits at the next
    /// frame (the line was still open when this frame looked for an Esc).
    esc_after_chat: bool,
    /// Whether the frames take the time they really take (the network's clock follows the
    /// socket's; see `Game::tick_live`), not a fixed time each (a screenshot's).
    live: bool,
}

/// A host's Esc with players in its game, waiting for the second that confirms it.
#[derive(Default)]
struct QuitAsk {
    /// When (seconds into the run) it was pressed.
    at: Option<f32>,
    /// What the banner says meanwhile.
    banner: String,
}

impl QuitAsk {
    /// Whether a second Esc at `now` confirms.
    fn standing(&self, now: f32) -> bool {
        self.at.is_some_and(|t| now - t <= QUIT_CONFIRM_SECONDS)
    }
}

pub(crate) async fn run(mut screen: Screen, mut plan: Plan) -> Result<(), String> {
    let dt = 1.0 / TICK_HZ;
    let mut l = Looping {
        dt,
        steps: lanyard_game::runner::FixedStep::new(dt),
        frames: 0,
        elapsed: 0.0,
        view: Viewer {
            yaw: 0.0,
            overview: plan.window.screenshot.is_some() || matches!(screen, Screen::Replaying(_)),
            camera: mq::Camera3D::default(),
            smoother: Smoother::new(20.0),
            alpha: 0.0,
            tint_holders: false,
        },
        roster: Roster::default(),
        latch: Latch::default(),
        chat: None,
        net_graph: false,
        sounds: Sounds::load().await,
        quit: QuitAsk::default(),
        wrong_passwords: 0,
        live: plan.window.screenshot.is_none() && plan.window.frame_time.is_none(),
        esc_after_chat: false,
    };
    // A screenshot advances one tick per frame, so the picture does not depend on how fast
    // the machine draws.
    let fixed = match &plan.window {
        w if w.screenshot.is_some() => Some(dt),
        w => w.frame_time,
    };
    let cap = (plan.window.fps > 0).then(|| Duration::from_secs_f32(1.0 / plan.window.fps as f32));
    loop {
        // (Only read with a cap: a browser has no clock to read it from.)
        let drawn = cap.map(|_| std::time::Instant::now());
        let frame_time = fixed.unwrap_or_else(|| mq::get_frame_time().min(0.25));
        l.elapsed += frame_time;
        if l.leaves(&screen, &plan) {
            break;
        }
        let next = match &mut screen {
            Screen::Menu(m) => menu_frame(m, &mut plan, l.frames),
            Screen::Playing(game) => l.play(game, &mut plan, frame_time),
            Screen::Replaying(r) => {
                r.frame(&mut l.view, (&plan.window.script, l.frames), frame_time);
                None
            }
            Screen::Ended(why) => {
                mq::clear_background(Color::from_rgba(34, 40, 52, 255));
                mq::draw_text(why, 40.0, 120.0, 30.0, mq::WHITE);
                mq::draw_text("[Esc] quit", 40.0, 170.0, 24.0, mq::GRAY);
                None
            }
        };
        if let Some(n) = next {
            screen = n;
            // A new world: new entities, a new clock.
            l.view.smoother = Smoother::new(20.0);
        }
        l.frames += 1;
        if l.frame_drawn(&screen, &mut plan)? {
            break;
        }
        if let (Some(cap), Some(drawn)) = (cap, drawn) {
            std::thread::sleep(cap.saturating_sub(drawn.elapsed()));
        }
        mq::next_frame().await;
    }
    // For tests that press real keys: where the camera ended up facing.
    tracing::debug!(
        "the window closed with the camera turned {:.3} rad",
        l.view.yaw
    );
    finish(screen, &plan)
}

/// The menu's frame: the screen it leads to, once the player chose.
fn menu_frame(m: &mut Menu, plan: &mut Plan, frames: u32) -> Option<Screen> {
    let r = m.frame(&plan.window.script, frames)?;
    // The start screen comes back after the game with the name the player chose on it,
    // not the one the program started with.
    if let Some((o, _, _)) = &mut plan.menu {
        o.name.clone_from(&m.options.name);
    }
    Some(match r {
        Ok(g) => Screen::Playing(Box::new(g)),
        Err(e) => Screen::Ended(e),
    })
}

/// What the window leaves behind when it closes: the summary a test asked for, the
/// game shut down, where a replay stopped; the reason, if the game had ended.
fn finish(mut screen: Screen, plan: &Plan) -> Result<(), String> {
    if let Screen::Playing(game) = &mut screen {
        if let Some(path) = &plan.summary {
            game.write_summary(path)?;
        }
        let ended = game.run_outcome();
        if let (false, Some(ping)) = (game.is_server(), game.ping_ms()) {
            // What the HUD read, for a player who asks the terminal.
            let median = game.ping_median_ms().unwrap_or(ping);
            tracing::info!(
                "the last ping to the server: {ping:.1} ms (the median of the last 10 s: {median:.1} ms)"
            );
        }
        game.shutdown();
        if let Some(buf) = &plan.recording {
            let bytes = buf.bytes();
            report(&format!(
                "lanyard-recording {}",
                lanyard_game::page::base64(&bytes)
            ));
        }
        if plan.bot.is_some() {
            report(&format!("lanyard-report {}", game.bot_report_json(&ended)));
        }
    }
    if let Screen::Replaying(r) = &screen {
        println!(
            "the replay stopped at tick {} (the recording ends at {})",
            r.replay.tick(),
            r.replay.end_tick()
        );
    }
    if let Screen::Ended(why) = screen {
        // A bot's report says how it ended, as the native bot's does.
        if plan.bot.is_some() {
            report(&format!(
                "lanyard-report {}",
                serde_json::json!({ "ended": why })
            ));
        }
        return Err(why);
    }
    Ok(())
}

impl Looping {
    /// What follows a drawn frame: the page's first-frame line and screenshot, a test's
    /// screenshot. Whether the window closes now (a screenshot taken, the time up, or a
    /// bot's game over, as the native bot's run ends with its game).
    fn frame_drawn(&self, screen: &Screen, plan: &mut Plan) -> Result<bool, String> {
        if self.frames == 1 {
            first_frame();
        }
        if plan.window.shot_after.is_some_and(|s| self.elapsed >= s) {
            plan.window.shot_after = None;
            page_shot();
        }
        if let (Some(path), Some(n)) = (&plan.window.screenshot, plan.window.frames)
            && self.frames >= n
        {
            save_screenshot(path)?;
            return Ok(true);
        }
        let bot_done = plan.bot.is_some() && matches!(screen, Screen::Ended(_));
        Ok(bot_done || plan.seconds.is_some_and(|s| self.elapsed >= s))
    }

    /// Whether the window closes now: an Esc (confirmed, for a host with players in its
    /// game), or the plan's stop.
    fn leaves(&mut self, screen: &Screen, plan: &Plan) -> bool {
        let typing_in_menu = matches!(screen, Screen::Menu(m) if m.editing.is_some());
        let esc = ((mq::is_key_pressed(KeyCode::Escape)
            || plan.window.script.pressed(self.frames, KeyCode::Escape))
            && self.chat.is_none()
            && !typing_in_menu)
            || std::mem::take(&mut self.esc_after_chat);
        // A host with players in the game leaves it to them (it goes on at the first
        // successor's) or, with only spectators, ends it: Esc asks first, and a second Esc
        // within a few seconds confirms.
        // (Only asked on an Esc: listing the sessions every drawn frame would be waste.)
        let hosting_others = esc
            && matches!(screen, Screen::Playing(g) if g.is_server() && !g.net().sessions().is_empty());
        if esc && hosting_others && !self.quit.standing(self.elapsed) {
            self.quit.at = Some(self.elapsed);
            if let Screen::Playing(g) = screen {
                self.quit.banner = match g.net().succession().first() {
                    Some(s) => format!("Esc again leaves: the game goes on at {}'s", s.name),
                    None => "Esc again ends the game for everyone".into(),
                };
            }
            return false;
        }
        esc || plan
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// A drawn frame of the game: its ticks, then the world and what lies over it. The
    /// screen that follows, once the game ended.
    fn play(&mut self, game: &mut Game, plan: &mut Plan, frame_time: f32) -> Option<Screen> {
        let ticks = self.steps.advance(frame_time);
        let chatting = self.chat.is_some();
        let typing = chat_line(game, &mut self.chat);
        // Enter sent the line and Esc came in the same (slow) frame: the Esc is for after.
        self.esc_after_chat = chatting
            && self.chat.is_none()
            && mq::is_key_pressed(KeyCode::Enter)
            && mq::is_key_pressed(KeyCode::Escape);
        // The keyboard is read once per drawn frame; a press waits in the latch for the
        // next tick, and only that tick gets it. While a chat line is open the keys type
        // into it instead.
        let fresh = match (typing, &mut plan.bot) {
            (true, _) => PlayerInput::default(),
            (false, Some(bot)) => {
                let left = plan.seconds.map_or(f32::INFINITY, |s| s - self.elapsed);
                bot.input(game, frame_time, left)
            }
            (false, None) => read_input(game, &self.view, &plan.window.script, self.frames),
        };
        self.latch.frame(fresh);
        // A stall's dropped time passes on the network's clock with the first tick.
        let mut stalled = self.steps.take_stall();
        for _ in 0..ticks {
            game.set_input(self.latch.for_tick());
            let dt = self.dt + std::mem::take(&mut stalled);
            if self.live {
                game.tick_live(dt);
            } else {
                game.tick(dt);
            }
            self.view.smoother.after_frame_relayed(
                game.group(),
                game.net().remote_time(),
                game.net().relayed_times(),
            );
        }
        // What the game said goes on the screen (`notices`) and, once, to the log: a
        // server prints it, a bot writes it to standard error.
        for line in game.take_messages() {
            tracing::info!("{line}");
        }
        self.view.alpha = self.steps.alpha();
        self.sounds.frame(game, typing);
        camera_keys(&mut self.view, typing);
        draw_world(game, &mut self.view);
        draw_hud(game);
        self.overlays(game, plan, typing);
        let why = game.ended()?.to_owned();
        Some(match &plan.menu {
            Some((o, d, _)) => {
                game.shutdown();
                // Back at the start screen, whatever the game ended with (a refusal, no
                // server answering, a shutdown), hosting one is among the choices.
                let mut menu = Menu::with_note(o.clone(), *d, true, &why);
                // Refused for the password (joined by address, where no list said the
                // game is locked): ask for it, and try again.
                // The prompt says how many passwords in a row were wrong.
                self.wrong_passwords = match game.wants_password() {
                    Some(_) if game.gave_password() => self.wrong_passwords + 1,
                    _ => 0,
                };
                if let Some(addr) = game.wants_password() {
                    menu.ask_password(Target::Addr(addr), "the game".into(), self.wrong_passwords);
                }
                Screen::Menu(Box::new(menu))
            }
            None => Screen::Ended(why),
        })
    }

    /// What lies over the game's world: the net graph (N), the host's roster, banners and
    /// the chat line being typed.
    fn overlays(&mut self, game: &mut Game, plan: &Plan, typing: bool) {
        if !typing
            && (mq::is_key_pressed(KeyCode::N)
                || plan.window.script.pressed(self.frames, KeyCode::N))
        {
            self.net_graph = !self.net_graph;
            self.view.tint_holders = self.net_graph;
        }
        if self.net_graph {
            draw_net_graph(game);
        }
        if game.is_server() {
            roster(game, &mut self.roster, typing);
        }
        if self.quit.standing(self.elapsed) {
            draw_banner(&self.quit.banner);
        }
        if game.is_following() {
            draw_banner("the host left: moving to the new host...");
        } else if game.net().is_reconnecting() {
            draw_banner("reconnecting...");
        }
        if let Some(line) = &self.chat {
            // Above the grenade's line ("grenade ready"), not over it.
            let y = mq::screen_height() - 76.0;
            mq::draw_rectangle(10.0, y - 22.0, 620.0, 30.0, Color::new(0.0, 0.0, 0.0, 0.6));
            mq::draw_text(format!("say: {line}_"), 18.0, y, 22.0, mq::WHITE);
        }
    }
}

/// A line for whoever runs the window: the page's console in a browser, else standard
/// output.
fn report(line: &str) {
    #[cfg(target_arch = "wasm32")]
    lanyard_game::page::console(line);
    #[cfg(not(target_arch = "wasm32"))]
    println!("{line}");
}

/// In a browser, when the first frame was drawn, in milliseconds since the page was
/// opened, to the page's console (`lanyard-first-frame MS`).
fn first_frame() {
    #[cfg(target_arch = "wasm32")]
    lanyard_game::page::console(&format!(
        "lanyard-first-frame {:.0}",
        lanyard_game::page::now_ms()
    ));
}

/// In a browser, the screen as a PNG, to the page's console (`lanyard-shot` and base64).
fn page_shot() {
    #[cfg(target_arch = "wasm32")]
    {
        let img = mq::get_screen_data();
        lanyard_game::page::shot(img.width as u32, img.height as u32, &img.bytes);
    }
}

pub(crate) fn save_screenshot(path: &std::path::Path) -> Result<(), String> {
    let img = mq::get_screen_data();
    let p = path
        .to_str()
        .ok_or("the screenshot path is not valid UTF-8")?;
    img.export_png(p);
    Ok(())
}
