//! A scripted player for headless clients: it wanders, jumps and throws grenades at the
//! other players, all from a seeded stream.

use crate::game::Game;
use crate::kinds::{self, PlayerInput};
use lanyard::{KindId, SeededRng, Vec3};

/// A bot's brain.
#[derive(Debug, Clone)]
pub struct Bot {
    rng: SeededRng,
    walk: [f32; 2],
    until_turn: f32,
    until_throw: f32,
    /// Seconds at the end of the run during which it throws nothing: it walks back to its
    /// spawn corner, away from the crates, and stands still, so the yard settles (and stays
    /// settled when its player leaves) before the reports are compared.
    pub quiet_at_end: f32,
}

impl Bot {
    /// A bot with its own seed, for a run of `seconds` (unbounded if `None`): it keeps the
    /// last third of the run quiet, at most 6 s.
    pub fn new(seed: u64, seconds: Option<f32>) -> Self {
        Bot {
            rng: SeededRng::new(seed),
            walk: [0.0; 2],
            until_turn: 0.0,
            until_throw: 1.0,
            quiet_at_end: seconds.map_or(0.0, |s| (s / 3.0).min(6.0)),
        }
    }

    /// What to do this tick, `left` seconds before the run ends.
    pub fn input(&mut self, game: &Game, dt: f32, left: f32) -> PlayerInput {
        let Some(me) = game.my_player().and_then(|id| game.group().get(id)) else {
            return PlayerInput::default();
        };
        let here = me.body().translation();
        if left < self.quiet_at_end {
            let home = Vec3::from_array(game.my_spawn());
            let d = Vec3::new(home.x - here.x, 0.0, home.z - here.z);
            let walk_home = left > self.quiet_at_end / 2.0 && d.length() > 0.5;
            let w = if walk_home { d.normalize() } else { Vec3::ZERO };
            return PlayerInput {
                walk: [w.x, w.z],
                ..PlayerInput::default()
            };
        }
        self.until_turn -= dt;
        if self.until_turn <= 0.0 {
            self.until_turn = self.rng.range_f32(0.6, 1.8);
            // Wander, but lean back towards the middle when near the edge.
            let home = -Vec3::new(here.x, 0.0, here.z) / 10.0;
            let a = self.rng.range_f32(0.0, std::f32::consts::TAU);
            let d = (Vec3::new(a.cos(), 0.0, a.sin()) + home).normalize_or_zero();
            self.walk = [d.x, d.z];
        }
        let mut input = PlayerInput {
            walk: self.walk,
            jump: self.rng.chance(0.01),
            ..PlayerInput::default()
        };
        self.until_throw -= dt;
        if self.until_throw <= 0.0 {
            self.until_throw = self.rng.range_f32(1.5, 2.5);
            let player = KindId::of_name(kinds::PLAYER);
            let target = game
                .group()
                .iter()
                .filter(|e| e.kind() == player && e.id() != me.id())
                .map(|e| e.body().translation())
                .min_by(|a, b| (*a - here).length().total_cmp(&(*b - here).length()))
                .unwrap_or(Vec3::ZERO);
            let d = target - here;
            input.throw = Some(Vec3::new(d.x, 0.0, d.z).normalize_or(Vec3::X));
        }
        input
    }
}
