//! Throwing: where a grenade leaves the hand and how fast ([`launch`]), and the throw that
//! lands it on a point ([`aim`]), so a grenade goes where the player points.
//!
//! A throw is a vector on the ground plane: its direction is where to, its length (0 to 1)
//! the share of the full throw speed. Both the player's path (which spawns the grenade) and
//! the aim (which picks the throw) use [`launch`], so they cannot disagree.

use crate::scene::Tuning;
use lanyard::Vec3;

/// How far above the player's centre a grenade leaves the hand, m.
pub const HAND_HEIGHT: f32 = 0.9;
/// How far out towards the throw a grenade leaves the hand, m.
pub const HAND_REACH: f32 = 0.6;
/// The upward speed every throw adds, m/s.
pub const THROW_LIFT: f32 = 3.0;
/// The share of the player's own velocity a grenade takes with it.
pub const CARRY: f32 = 0.5;
/// The gentlest throw (a share of the full speed): a grenade dropped at the feet would
/// blow up its thrower.
pub const GENTLEST: f32 = 0.15;

/// Where a grenade thrown with `throw` by a player at `pos` moving at `vel` starts, and its
/// velocity.
pub fn launch(throw: Vec3, pos: Vec3, vel: Vec3, tuning: &Tuning) -> (Vec3, Vec3) {
    // Not clamped here: the owner's path writes at most 1, and the server refuses a
    // grenade faster than a full throw gives.
    let flat = Vec3::new(throw.x, 0.0, throw.z);
    // A full throw is used as it came (so recordings made before throws had a strength
    // replay bit for bit); a gentler one still leaves the hand at arm's length.
    let hand = if flat.length() > 0.99 {
        flat
    } else {
        flat.normalize_or_zero()
    };
    let from = pos + Vec3::Y * HAND_HEIGHT + hand * HAND_REACH;
    let v = flat * tuning.throw_speed + Vec3::Y * THROW_LIFT + vel * CARRY;
    (from, v)
}

/// The throw that lands a grenade from a player at `pos` (standing still) on `target`,
/// under `gravity` (m/s², positive down). A target out of reach gets the full throw its
/// way; one at the feet gets the gentlest.
pub fn aim(pos: Vec3, target: Vec3, tuning: &Tuning, gravity: f32) -> Vec3 {
    let flat = Vec3::new(target.x - pos.x, 0.0, target.z - pos.z);
    let dir = flat.normalize_or(Vec3::X);
    let from = pos + Vec3::Y * HAND_HEIGHT + dir * HAND_REACH;
    let reach = (flat.length() - HAND_REACH).max(0.0);
    // Time until the grenade, rising at the lift, falls back to the target's height.
    let drop = from.y - target.y;
    let g = gravity.max(0.1);
    let disc = THROW_LIFT * THROW_LIFT + 2.0 * g * drop;
    let share = if disc < 0.0 {
        // Higher than the throw goes: as hard as it can.
        1.0
    } else {
        let t = (THROW_LIFT + disc.sqrt()) / g;
        (reach / t / tuning.throw_speed.max(0.1)).clamp(GENTLEST, 1.0)
    };
    dir * share
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuning() -> Tuning {
        crate::scene::Scene::load(std::path::Path::new(crate::scene::DEFAULT_SCENE))
            .unwrap()
            .tuning
    }

    /// Where a grenade launched by `throw` first comes down to `height`, flying freely.
    fn lands(throw: Vec3, pos: Vec3, height: f32) -> Vec3 {
        let (mut p, mut v) = launch(throw, pos, Vec3::ZERO, &tuning());
        let dt = 1e-4;
        while v.y > 0.0 || p.y > height {
            p += v * dt;
            v.y -= 9.81 * dt;
        }
        p
    }

    #[test]
    fn a_throw_aimed_at_a_point_in_reach_lands_on_it() {
        let me = Vec3::new(1.0, 1.0, -2.0);
        for target in [
            Vec3::new(4.0, 0.0, -2.0),
            Vec3::new(1.0, 0.0, 6.0),
            Vec3::new(-4.0, 0.0, 2.0),
            // The top of a crate.
            Vec3::new(5.0, 1.0, 1.0),
        ] {
            let throw = aim(me, target, &tuning(), 9.81);
            assert!(throw.length() < 1.0, "{target} is in reach");
            let at = lands(throw, me, target.y);
            let miss = Vec3::new(at.x - target.x, 0.0, at.z - target.z).length();
            assert!(miss < 0.05, "aimed at {target}, landed at {at}");
        }
    }

    #[test]
    fn a_point_out_of_reach_gets_the_full_throw_its_way_and_the_feet_the_gentlest() {
        let me = Vec3::new(0.0, 1.0, 0.0);
        let far = aim(me, Vec3::new(0.0, 0.0, -80.0), &tuning(), 9.81);
        assert!((far - Vec3::new(0.0, 0.0, -1.0)).length() < 1e-6);
        let near = aim(me, Vec3::new(0.1, 0.0, 0.0), &tuning(), 9.81);
        assert!((near.length() - GENTLEST).abs() < 1e-6);
        assert!(near.x > 0.0);
    }
}
