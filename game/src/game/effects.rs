//! What a peer shows for a moment and forgets: explosions ([`Blast`]) and score popups
//! ([`Popup`]), each with its age.

use super::Game;
use crate::game::text::clean_line;
use lanyard::prelude::*;

/// An explosion as a peer saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Blast {
    /// Where.
    pub at: Vec3,
    /// Who threw the grenade.
    pub thrower: Owner,
    /// Seconds since it went off.
    pub age: f32,
}

/// How long an explosion is drawn, seconds.
pub const BLAST_SECONDS: f32 = 1.5;
/// How long a score popup is drawn, seconds.
pub const POPUP_SECONDS: f32 = 2.0;

/// How many explosions and points this peer has seen since it started: a sound (or any
/// other one-off reaction) plays when a count goes up, however many frames are drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seen {
    /// Explosions.
    pub blasts: u64,
    /// Points (crates and players off the yard).
    pub points: u64,
}

/// "+1 ada" where a crate (or a player) went off the yard.
#[derive(Debug, Clone, PartialEq)]
pub struct Popup {
    /// Who scored.
    pub name: String,
    /// Where, on the yard's edge.
    pub at: Vec3,
    /// Seconds since the point.
    pub age: f32,
}

impl Game {
    /// A point was scored: a popup at the edge of the yard nearest `at`.
    pub(super) fn on_point(&mut self, name: String, at: Vec3) {
        let f = self.scene.floor.half_extents;
        let edge = Vec3::new(at.x.clamp(-f[0], f[0]), 0.5, at.z.clamp(-f[2], f[2]));
        self.popups.push(Popup {
            name: clean_line(&name),
            at: edge,
            age: 0.0,
        });
        self.seen.points += 1;
    }

    /// Ages the explosions and popups by `dt` and forgets the old ones.
    pub(super) fn age_effects(&mut self, dt: f32) {
        for b in &mut self.blasts {
            b.age += dt;
        }
        self.blasts.retain(|b| b.age < BLAST_SECONDS);
        for p in &mut self.popups {
            p.age += dt;
        }
        self.popups.retain(|p| p.age < POPUP_SECONDS);
    }
}
