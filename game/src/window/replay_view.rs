//! The replay viewer (`replay --view`): a recording played in the window, with pause, step,
//! speed, seeking, a free or following camera and its keys on screen.

use super::Viewer;
use crate::window::draw::{camera_keys, draw_scene};
use crate::window::input::InputScript;
use lanyard::Owner;
use lanyard::interp::Smoother;
use lanyard::replay::{Replay, Step};
use lanyard_game::kinds;
use lanyard_game::scene::Scene;
use macroquad::prelude as mq;
use macroquad::prelude::{Color, KeyCode};

/// The speeds the viewer plays at, slowest first.
pub(crate) const SPEEDS: [f32; 6] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0];
/// How far Left and Right jump while playing, in seconds of the recording.
pub(crate) const JUMP_SECONDS: f32 = 5.0;
/// The most ticks one drawn frame replays (at 8x on a slow machine the rest is dropped).
const MAX_TICKS_PER_FRAME: u32 = 64;

/// What the viewer's keys ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Control {
    /// Space: pause, or play on.
    Pause,
    /// Right: while paused one tick on; while playing, jump ahead.
    Forward,
    /// Left: jump back.
    Back,
    /// Down or `[`: slower.
    Slower,
    /// Up or `]`: faster.
    Faster,
    /// Home: back to the first tick.
    Start,
}

/// Where a key sends the replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Go {
    /// Replay this many ticks more.
    Step(u32),
    /// Move to this tick (forward by replaying, back from a keyframe or the start).
    Seek(u64),
}

/// The viewer's playing state: paused or not, and how fast.
#[derive(Debug, Clone)]
pub(crate) struct Controls {
    pub(crate) paused: bool,
    speed: usize,
    /// Ticks owed, in fractions, at the current speed.
    owed: f32,
}

impl Default for Controls {
    fn default() -> Self {
        Controls {
            paused: false,
            speed: 2,
            owed: 0.0,
        }
    }
}

impl Controls {
    /// The speed, times the recorded one.
    pub(crate) fn speed(&self) -> f32 {
        SPEEDS[self.speed]
    }

    /// Takes key `c` with the replay at tick `now` of `span` (its first and last tick),
    /// `dt` seconds a tick; returns where to go, if anywhere.
    pub(crate) fn press(&mut self, c: Control, now: u64, span: (u64, u64), dt: f32) -> Option<Go> {
        let (start, end) = span;
        let jump = (JUMP_SECONDS / dt).round() as u64;
        match c {
            Control::Pause => {
                self.paused = !self.paused;
                self.owed = 0.0;
                None
            }
            Control::Slower => {
                self.speed = self.speed.saturating_sub(1);
                None
            }
            Control::Faster => {
                self.speed = (self.speed + 1).min(SPEEDS.len() - 1);
                None
            }
            Control::Forward if self.paused => (now < end).then_some(Go::Step(1)),
            Control::Forward => Some(Go::Seek(now.saturating_add(jump).min(end))),
            Control::Back => Some(Go::Seek(now.saturating_sub(jump).max(start))),
            Control::Start => Some(Go::Seek(start)),
        }
    }

    /// Ticks to replay in a drawn frame of `frame_time` seconds, `dt` seconds a tick: none
    /// while paused.
    pub(crate) fn ticks(&mut self, frame_time: f32, dt: f32) -> u32 {
        if self.paused {
            return 0;
        }
        self.owed += frame_time * self.speed() / dt;
        let due = (self.owed + 1e-4) as u32;
        self.owed = (self.owed - due as f32).max(0.0);
        due.min(MAX_TICKS_PER_FRAME)
    }

    /// What the head line says of playing: the speed, and while paused the speed it plays
    /// at once unpaused (Up and Down change it while paused too).
    pub(crate) fn state(&self) -> String {
        match self.paused {
            true => format!("paused ({}x on play)", self.speed()),
            false => format!("{}x", self.speed()),
        }
    }
}

/// A recording being watched.
pub(crate) struct ReplayView {
    pub(crate) replay: Replay,
    pub(crate) scene: Scene,
    pub(crate) status: String,
    pub(crate) controls: Controls,
    /// The player the camera follows (none: the free camera).
    pub(crate) follow: Option<Owner>,
    /// Where the free camera looks.
    pub(crate) focus: lanyard::Vec3,
}

impl ReplayView {
    pub(crate) fn new(replay: Replay, scene: Scene) -> Self {
        ReplayView {
            replay,
            scene,
            status: String::new(),
            controls: Controls::default(),
            follow: None,
            focus: lanyard::Vec3::ZERO,
        }
    }

    /// The tick it shows, and the recording's first and last.
    fn span(&self) -> (u64, u64) {
        let end = self.replay.end_tick();
        let start = end.saturating_sub(self.replay.len() as u64);
        (start, end)
    }

    fn go(&mut self, go: Go) {
        let result = match go {
            Go::Step(n) => (0..n).try_for_each(|_| self.step()),
            Go::Seek(tick) => match self.replay.seek(tick) {
                Ok(Some(d)) => {
                    self.status = d.to_string();
                    Ok(())
                }
                Ok(None) => {
                    self.status = "matches the recording".into();
                    Ok(())
                }
                Err(e) => Err(e.to_string()),
            },
        };
        if let Err(e) = result {
            self.status = e;
        }
    }

    fn step(&mut self) -> Result<(), String> {
        match self.replay.step() {
            Ok(Step::Matched(_)) => self.status = "matches the recording".into(),
            Ok(Step::Diverged(d)) => self.status = d.to_string(),
            Ok(Step::End) => {
                self.status = format!("end of the recording ({} ticks)", self.replay.len());
                self.controls.paused = true;
            }
            Err(e) => return Err(e.to_string()),
        }
        Ok(())
    }

    /// The players in the recording, in network-id order.
    fn players(&self) -> Vec<Owner> {
        let player = lanyard::KindId::of_name(kinds::PLAYER);
        let group = self.replay.group();
        group
            .iter()
            .filter(|e| e.kind() == player)
            .map(|e| e.owner())
            .collect()
    }

    /// One drawn frame: the keys, the ticks due, the picture and its help.
    pub(crate) fn frame(
        &mut self,
        view: &mut Viewer,
        (script, frame): (&InputScript, u32),
        frame_time: f32,
    ) {
        let pressed = |k: KeyCode| mq::is_key_pressed(k) || script.pressed(frame, k);
        let keys = [
            (KeyCode::Space, Control::Pause),
            (KeyCode::Right, Control::Forward),
            (KeyCode::Left, Control::Back),
            (KeyCode::Down, Control::Slower),
            (KeyCode::LeftBracket, Control::Slower),
            (KeyCode::Up, Control::Faster),
            (KeyCode::RightBracket, Control::Faster),
            (KeyCode::Home, Control::Start),
        ];
        let dt = self.replay.group().config().dt;
        for (key, control) in keys {
            if pressed(key)
                && let Some(go) = self
                    .controls
                    .press(control, self.replay.tick(), self.span(), dt)
            {
                self.go(go);
                view.smoother = Smoother::new(20.0);
            }
        }
        if pressed(KeyCode::Tab) {
            // The next player to follow, then the free camera again.
            let players = self.players();
            let at = self
                .follow
                .and_then(|f| players.iter().position(|p| *p == f));
            self.follow = match at {
                None => players.first().copied(),
                Some(i) => players.get(i + 1).copied(),
            };
            view.overview = false;
        }
        self.pan(frame_time);
        let ticks = self.controls.ticks(frame_time, dt);
        if ticks > 0 {
            self.go(Go::Step(ticks));
        }
        view.smoother.after_frame(self.replay.group(), None);
        let focus = match self.follow {
            Some(owner) => self.player_at(owner),
            None => Some(self.focus),
        };
        camera_keys(view, false);
        draw_scene(
            &self.scene,
            self.replay.group(),
            None,
            focus,
            &[],
            &[],
            view,
        );
        self.draw_text();
    }

    /// WASD moves the free camera's focus over the yard, as the camera faces.
    fn pan(&mut self, frame_time: f32) {
        if self.follow.is_some() {
            return;
        }
        let mut d = lanyard::Vec3::ZERO;
        for (key, v) in [
            (KeyCode::W, lanyard::Vec3::new(0.0, 0.0, -1.0)),
            (KeyCode::S, lanyard::Vec3::new(0.0, 0.0, 1.0)),
            (KeyCode::A, lanyard::Vec3::new(-1.0, 0.0, 0.0)),
            (KeyCode::D, lanyard::Vec3::new(1.0, 0.0, 0.0)),
        ] {
            if mq::is_key_down(key) {
                d += v;
            }
        }
        self.focus += d * 8.0 * frame_time;
    }

    fn player_at(&self, owner: Owner) -> Option<lanyard::Vec3> {
        let player = lanyard::KindId::of_name(kinds::PLAYER);
        let group = self.replay.group();
        group
            .iter()
            .find(|e| e.kind() == player && e.owner() == owner)
            .map(|e| e.body().translation())
    }

    /// The name of the player `owner` plays, as the recording has it (else who it is).
    fn player_name(&self, owner: Owner) -> String {
        let player = lanyard::KindId::of_name(kinds::PLAYER);
        let group = self.replay.group();
        group
            .iter()
            .find(|e| e.kind() == player && e.owner() == owner)
            .and_then(|e| group.controller::<kinds::Player>(e.id()))
            .map(|p| p.name.clone())
            .unwrap_or_else(|| format!("player {}", owner_label(owner)))
    }

    fn draw_text(&self) {
        let gold = Color::from_rgba(240, 190, 80, 255);
        mq::draw_text("REPLAY", 20.0, 36.0, 30.0, gold);
        let (start, end) = self.span();
        let state = self.controls.state();
        let follow = match self.follow {
            Some(owner) => format!("  following {}", self.player_name(owner)),
            None => String::new(),
        };
        let head = format!(
            "tick {} of {start}..{end}  {state}{follow}",
            self.replay.tick()
        );
        mq::draw_text(&head, 140.0, 36.0, 20.0, mq::WHITE);
        // How far into the recording: a bar.
        let (x, w) = (20.0, 420.0);
        let done = (self.replay.tick().saturating_sub(start)) as f32 / (end - start).max(1) as f32;
        mq::draw_rectangle(x, 46.0, w, 6.0, Color::new(1.0, 1.0, 1.0, 0.25));
        mq::draw_rectangle(x, 46.0, w * done.clamp(0.0, 1.0), 6.0, gold);
        for (i, line) in self.status.lines().take(6).enumerate() {
            mq::draw_text(line, 20.0, 74.0 + i as f32 * 22.0, 20.0, mq::WHITE);
        }
        let help = "Space pause  Right step/+5 s  Left -5 s  Up/Down speed  Home start  Tab follow  WASD move  Q/E turn  C overview  Esc quit";
        mq::draw_text(help, 14.0, mq::screen_height() - 14.0, 18.0, mq::WHITE);
    }
}

fn owner_label(owner: Owner) -> String {
    match owner {
        Owner::Server => "host".into(),
        Owner::Client(c) => c.0.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DT: f32 = 1.0 / 60.0;

    #[test]
    fn space_pauses_right_steps_a_tick_while_paused_and_jumps_while_playing() {
        let mut c = Controls::default();
        let span = (10, 1000);
        assert_eq!(
            c.press(Control::Forward, 100, span, DT),
            Some(Go::Seek(400))
        );
        assert_eq!(c.press(Control::Back, 100, span, DT), Some(Go::Seek(10)));
        assert_eq!(
            c.press(Control::Forward, 900, span, DT),
            Some(Go::Seek(1000))
        );
        assert_eq!(c.press(Control::Pause, 100, span, DT), None);
        assert!(c.paused);
        assert_eq!(c.ticks(0.5, DT), 0, "paused: no ticks");
        assert_eq!(c.press(Control::Forward, 100, span, DT), Some(Go::Step(1)));
        assert_eq!(
            c.press(Control::Forward, 1000, span, DT),
            None,
            "at the end"
        );
        assert_eq!(c.press(Control::Start, 500, span, DT), Some(Go::Seek(10)));
        c.press(Control::Pause, 100, span, DT);
        assert!(!c.paused);
    }

    #[test]
    fn speeds_go_from_a_quarter_to_eight_times_and_set_the_ticks_a_frame() {
        let mut c = Controls::default();
        assert_eq!(c.speed(), 1.0);
        let ticks = |c: &mut Controls| (0..60).map(|_| c.ticks(DT, DT)).sum::<u32>();
        assert_eq!(
            ticks(&mut c),
            60,
            "1x: a tick a frame at 60 frames a second"
        );
        for _ in 0..10 {
            c.press(Control::Faster, 0, (0, 10), DT);
        }
        assert_eq!(c.speed(), 8.0);
        assert_eq!(ticks(&mut c), 480);
        for _ in 0..10 {
            c.press(Control::Slower, 0, (0, 10), DT);
        }
        assert_eq!(c.speed(), 0.25);
        assert_eq!(ticks(&mut c), 15);
        // A long stall does not become hundreds of ticks in one frame.
        c.press(Control::Faster, 0, (0, 10), DT);
        assert_eq!(c.ticks(60.0, DT), MAX_TICKS_PER_FRAME);
    }

    #[test]
    fn paused_the_head_line_shows_the_speed_up_and_down_set() {
        let mut c = Controls::default();
        assert_eq!(c.state(), "1x");
        c.press(Control::Pause, 0, (0, 10), DT);
        c.press(Control::Faster, 0, (0, 10), DT);
        assert_eq!(c.state(), "paused (2x on play)");
        c.press(Control::Slower, 0, (0, 10), DT);
        c.press(Control::Slower, 0, (0, 10), DT);
        assert_eq!(c.state(), "paused (0.5x on play)");
        c.press(Control::Pause, 0, (0, 10), DT);
        assert_eq!(c.state(), "0.5x");
    }
}
