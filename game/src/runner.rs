//! The real-time loop of the headless modes: fixed ticks of 1/60 s against the wall clock,
//! with bounded catch-up, waiting on the socket in between.

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
    let step = Duration::from_secs_f32(dt);
    let start = Instant::now();
    let mut next = start;
    let mut busy = Duration::ZERO;
    let mut ticks = 0u32;
    let mut last_report = start;
    loop {
        let now = Instant::now();
        let elapsed = (now - start).as_secs_f32();
        let left = seconds.map_or(f32::INFINITY, |s| s - elapsed);
        if left <= 0.0 || game.ended.is_some() {
            return;
        }
        let mut caught_up = 0;
        while next <= now && caught_up < 5 {
            if !before_tick(game, left) {
                return;
            }
            let t = Instant::now();
            game.tick(dt);
            busy += t.elapsed();
            ticks += 1;
            next += step;
            caught_up += 1;
        }
        if caught_up == 5 {
            // Too far behind: drop the backlog rather than spiral.
            next = Instant::now() + step;
        }
        if now - last_report >= Duration::from_secs(1) {
            let ms = busy.as_secs_f32() * 1000.0 / ticks.max(1) as f32;
            every_second(game, ms);
            busy = Duration::ZERO;
            ticks = 0;
            last_report = now;
        }
        let wait = next
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(4));
        game.wait(wait);
    }
}
