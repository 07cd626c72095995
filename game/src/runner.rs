//! The fixed-step loop: [`FixedStep`], the rule every loop shares (whole ticks out of the
//! time that passed, a stall dropped), and [`run`], the headless modes' real-time loop,
//! waiting on the socket in between.

use crate::game::{Game, TICK_HZ};
use std::time::{Duration, Instant};

/// Runs `game` for `seconds` of wall time (forever if `None`), calling `before_tick` before
/// each tick with the seconds left (infinite when unbounded); it returns false to stop.
/// `every_second` is called about once a second with the mean tick time in milliseconds.
pub fn run(
    game: &mut Game,
    seconds: Option<f32>,
    mut before_tick: impl FnMut(&mut Game, f32) -> bool,
    mut every_second: impl FnMut(&mut Game, f32),
) {
    let dt = 1.0 / TICK_HZ;
    let start = Instant::now();
    let mut steps = FixedStep::new(dt);
    let mut last = start;
    let mut busy = Duration::ZERO;
    let mut ticks = 0u32;
    let mut last_report = start;
    loop {
        let now = Instant::now();
        let elapsed = (now - start).as_secs_f32();
        let left = seconds.map_or(f32::INFINITY, |s| s - elapsed);
        if left <= 0.0 || game.ended().is_some() {
            return;
        }
        let due = steps.advance((now - last).as_secs_f32());
        // A stall's dropped time passes on the network's clock with the first tick.
        let mut stalled = steps.take_stall();
        for _ in 0..due {
            if !before_tick(game, left) {
                return;
            }
            let t = Instant::now();
            game.tick_live(dt + std::mem::take(&mut stalled));
            busy += t.elapsed();
            ticks += 1;
        }
        last = now;
        if now - last_report >= Duration::from_secs(1) {
            let ms = busy.as_secs_f32() * 1000.0 / ticks.max(1) as f32;
            every_second(game, ms);
            busy = Duration::ZERO;
            ticks = 0;
            last_report = now;
        }
        let wait = steps
            .until_next()
            .saturating_sub(last.elapsed())
            .min(Duration::from_millis(4));
        game.wait(wait);
    }
}

/// The most ticks one call of [`FixedStep::advance`] gives: a larger backlog (a stall) is
/// dropped rather than spiralled into.
pub const MAX_CATCH_UP: u32 = 5;

/// The fixed-step rule every loop shares, the headless one here and the window's: time
/// comes in (wall time, or a drawn frame's time), whole ticks of `dt` go out.
#[derive(Debug, Clone, Copy)]
pub struct FixedStep {
    dt: f32,
    acc: f32,
    /// Time dropped from the backlog since [`FixedStep::take_stall`] was last asked.
    stalled: f32,
}

impl FixedStep {
    /// Ticks of `dt` seconds, none owed yet.
    pub fn new(dt: f32) -> FixedStep {
        FixedStep {
            dt,
            acc: 0.0,
            stalled: 0.0,
        }
    }

    /// Adds `elapsed` seconds and returns how many ticks are due now (at most
    /// [`MAX_CATCH_UP`]; past that the backlog is dropped).
    pub fn advance(&mut self, elapsed: f32) -> u32 {
        self.acc += elapsed.max(0.0);
        // A hair of slack, so a frame of exactly one tick's length gives that tick.
        let due = ((self.acc + 1e-4) / self.dt) as u32;
        self.acc = (self.acc - due as f32 * self.dt).max(0.0);
        if due > MAX_CATCH_UP {
            self.stalled += (due - MAX_CATCH_UP) as f32 * self.dt + self.acc;
            self.acc = 0.0;
        }
        due.min(MAX_CATCH_UP)
    }

    /// The time a stall dropped from the backlog since last asked (seconds): the world
    /// runs no ticks for it, but it passed, and the network's clock (timeouts, a
    /// session's silence) must count it. A process stopped past its players' timeout
    /// thaws knowing they have missed it, not believing in sessions they left.
    pub fn take_stall(&mut self) -> f32 {
        std::mem::take(&mut self.stalled)
    }

    /// How far into the next tick the time is, from 0 to 1 (for drawing between ticks).
    pub fn alpha(&self) -> f32 {
        self.acc / self.dt
    }

    /// How long until the next tick is due.
    pub fn until_next(&self) -> Duration {
        Duration::from_secs_f32((self.dt - self.acc).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_ticks_come_out_and_a_stall_is_dropped() {
        let dt = 1.0 / 60.0;
        let mut s = FixedStep::new(dt);
        assert_eq!(s.advance(dt * 0.5), 0);
        assert_eq!(s.advance(dt * 0.5), 1);
        assert_eq!(s.advance(dt * 2.0), 2);
        assert!(s.alpha() < 0.01);
        // Frames much faster than ticks: one tick every fourth frame.
        let given: u32 = (0..40).map(|_| s.advance(dt / 4.0)).sum();
        assert_eq!(given, 10);
        // A stall of a second gives five ticks, and the backlog is gone, but not
        // forgotten: the rest of the second is there to be told to the network's clock.
        assert_eq!(s.take_stall(), 0.0);
        assert_eq!(s.advance(1.0), MAX_CATCH_UP);
        assert_eq!(s.advance(0.0), 0);
        assert!(s.alpha() < 1e-3);
        assert!((s.take_stall() - (1.0 - MAX_CATCH_UP as f32 * dt)).abs() < 1e-3);
        assert_eq!(s.take_stall(), 0.0);
    }
}
