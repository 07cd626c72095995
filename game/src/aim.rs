//! Throwing: where a grenade leaves the hand and how fast ([`launch`]), and the throw that
//! lands it on a point ([`aim`]), so a grenade goes where the player points.
//!
//! A throw is a vector: on the ground plane, its direction is where to and its length
//! (from 0 to 1) the share of the full throw speed; upwards, the share of the full throw
//! speed it adds to the lift (a lob, 0 for the flat throw). The two shares add up to at
//! most 1, so a lob is no faster than a full throw. Both the player's path (which spawns
//! the grenade) and the aim (which picks the throw) use [`launch`], so they cannot
//! disagree.
//!
//! [`aim`] gives the flat throw that lands on a point; [`aim_over`] a lob over what stands
//! in its way, when the flat one would go off on it.

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
/// The highest lob [`aim_over`] tries, as a share of the full throw speed.
pub const MAX_LOB: f32 = 0.6;
/// The lobs [`aim_over`] tries go up in steps of this share.
pub const LOB_STEP: f32 = 0.1;
/// A flight that first touches something this close to where it was aimed (m) arrived: it
/// hit what it was aimed at, or what lies beside it (a stack's next crate), and its blast
/// (4.5 m in the arena) reaches the target hard.
pub const ARRIVAL: f32 = 1.5;
/// How far apart in time (s) [`aim_over`] looks at a flight's points: 6 cm at a full
/// throw, less than a grenade's radius.
const FLIGHT_STEP: f32 = 1.0 / 240.0;
/// The longest flight [`aim_over`] follows, s.
const MAX_FLIGHT: f32 = 4.0;

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
    let lift = THROW_LIFT + throw.y.max(0.0) * tuning.throw_speed;
    let v = flat * tuning.throw_speed + Vec3::Y * lift + vel * CARRY;
    (from, v)
}

/// The throw that lands a grenade from a player at `pos` (standing still) on `target`,
/// under `gravity` (m/s², positive down). A target out of reach gets the full throw its
/// way; one at the feet gets the gentlest.
pub fn aim(pos: Vec3, target: Vec3, tuning: &Tuning, gravity: f32) -> Vec3 {
    // The flat throw always has an answer: out of reach, the full throw.
    lobbed(pos, target, tuning, gravity, 0.0).unwrap_or_else(|dir| dir)
}

/// The throw with a lob of `lob` (a share of the full throw speed) that lands on `target`;
/// if it cannot reach it, `Err` with the strongest throw its way (the flat throw's answer).
fn lobbed(pos: Vec3, target: Vec3, tuning: &Tuning, gravity: f32, lob: f32) -> Result<Vec3, Vec3> {
    let flat = Vec3::new(target.x - pos.x, 0.0, target.z - pos.z);
    let dir = flat.normalize_or(Vec3::X);
    let from = pos + Vec3::Y * HAND_HEIGHT + dir * HAND_REACH;
    let reach = (flat.length() - HAND_REACH).max(0.0);
    let speed = tuning.throw_speed.max(0.1);
    let lift = THROW_LIFT + lob * speed;
    // Time until the grenade, rising at the lift, falls back to the target's height.
    let drop = from.y - target.y;
    let g = gravity.max(0.1);
    let disc = lift * lift + 2.0 * g * drop;
    if disc < 0.0 {
        // Higher than the throw goes.
        return Err(dir * (1.0 - lob));
    }
    let t = (lift + disc.sqrt()) / g;
    let share = (reach / t / speed).max(GENTLEST);
    match share <= 1.0 - lob {
        true => Ok(dir * share + Vec3::Y * lob),
        false => Err(dir * (1.0 - lob)),
    }
}

/// The throw that lands a grenade from a player at `pos` on `target`, as [`aim`] gives it,
/// unless something stands in its way: then the flattest lob (in steps of [`LOB_STEP`], up
/// to [`MAX_LOB`]) that goes off within [`ARRIVAL`] of `target` or comes down there.
/// `hits` says whether a grenade at a point would go off on something there (a crate, a
/// player, a block); a flight goes off on the first thing it touches, or where its fuse
/// burns down. If no lob is clear, the flat throw: it goes off on what is in its way.
pub fn aim_over(
    pos: Vec3,
    target: Vec3,
    tuning: &Tuning,
    gravity: f32,
    hits: impl Fn(Vec3) -> bool,
) -> Vec3 {
    let flat = aim(pos, target, tuning, gravity);
    let steps = (MAX_LOB / LOB_STEP).round() as u32;
    (0..=steps)
        .filter_map(|i| lobbed(pos, target, tuning, gravity, i as f32 * LOB_STEP).ok())
        .find(|&throw| clear(throw, pos, target, tuning, gravity, &hits))
        .unwrap_or(flat)
}

/// Whether the flight of `throw` from a player standing at `pos` first touches something
/// near `target`, or nothing at all.
fn clear(
    throw: Vec3,
    pos: Vec3,
    target: Vec3,
    tuning: &Tuning,
    gravity: f32,
    hits: &impl Fn(Vec3) -> bool,
) -> bool {
    let (mut p, mut v) = launch(throw, pos, Vec3::ZERO, tuning);
    // Where it goes off: on the first thing it touches, or where its fuse burns down (a
    // high lob may go off in the air, which is as good if that is over the target).
    let fuse = (tuning.fuse / FLIGHT_STEP) as u32;
    for step in 0..(MAX_FLIGHT / FLIGHT_STEP) as u32 {
        if hits(p) || step >= fuse {
            return p.distance(target) < ARRIVAL;
        }
        if v.y < 0.0 && p.y < target.y {
            return true;
        }
        p += v * FLIGHT_STEP;
        v.y -= gravity * FLIGHT_STEP;
    }
    false
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

    /// A wall 1 m thick and 2.5 m high across the way, 3 to 4 m out along x.
    fn wall(p: Vec3) -> bool {
        let r = 0.18 + 0.05;
        p.x > 3.0 - r && p.x < 4.0 + r && p.y < 2.5 + r && p.z.abs() < 3.0
    }

    /// Every point of a flight of `throw` until it comes down to `height`.
    fn flight(throw: Vec3, pos: Vec3, height: f32) -> Vec<Vec3> {
        let (mut p, mut v) = launch(throw, pos, Vec3::ZERO, &tuning());
        let dt = 1e-3;
        let mut points = Vec::new();
        while v.y > 0.0 || p.y > height {
            points.push(p);
            p += v * dt;
            v.y -= 9.81 * dt;
        }
        points
    }

    #[test]
    fn an_open_way_keeps_the_flat_throw_and_a_wall_gets_the_flattest_lob_over_it() {
        let me = Vec3::new(0.0, 1.0, 0.0);
        let target = Vec3::new(8.0, 0.0, 0.0);
        let flat = aim(me, target, &tuning(), 9.81);
        assert_eq!(aim_over(me, target, &tuning(), 9.81, |_| false), flat);
        assert!(
            flight(flat, me, 0.0).into_iter().any(wall),
            "the flat throw hits the wall"
        );
        let lob = aim_over(me, target, &tuning(), 9.81, wall);
        assert!(lob.y > 0.0, "a lob: {lob}");
        // Its shares add up to at most a full throw: it is no faster than one.
        let (_, v) = launch(lob, me, Vec3::ZERO, &tuning());
        let (_, full) = launch(Vec3::X, me, Vec3::ZERO, &tuning());
        assert!(v.length() <= full.length() + 1e-4, "{v} against {full}");
        assert!(
            !flight(lob, me, 0.0).into_iter().any(wall),
            "the lob clears the wall"
        );
        let at = lands(lob, me, 0.0);
        assert!((at - target).length() < 0.05, "the lob lands at {at}");
        // The flattest: a step less lift hits the wall.
        let lower = lobbed(me, target, &tuning(), 9.81, lob.y - LOB_STEP).unwrap();
        assert!(flight(lower, me, 0.0).into_iter().any(wall));
    }

    #[test]
    fn a_wall_no_lob_clears_keeps_the_flat_throw_and_a_hit_by_the_target_is_an_arrival() {
        let me = Vec3::new(0.0, 1.0, 0.0);
        let target = Vec3::new(8.0, 0.0, 0.0);
        let flat = aim(me, target, &tuning(), 9.81);
        let tower = |p: Vec3| p.x > 3.0 && p.x < 4.0 && p.y < 40.0;
        assert_eq!(aim_over(me, target, &tuning(), 9.81, tower), flat);
        // A lob over the wall would go off in the air short of the target on a short fuse.
        let short = Tuning {
            fuse: 0.5,
            ..tuning()
        };
        assert_eq!(
            aim_over(me, target, &short, 9.81, wall),
            aim(me, target, &short, 9.81)
        );
        // What lies at the target is what the throw is for.
        let crate_there = |p: Vec3| (p - target).length() < 0.6;
        assert_eq!(aim_over(me, target, &tuning(), 9.81, crate_there), flat);
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
