//! When a grenade goes off. A grenade goes where it is aimed, so it must go off where it
//! lands: on touching a crate or a player (not its thrower), or a short fuse after it
//! first touches the floor or a block; and in any case when its fuse burns down. The
//! touches are measured against the bodies' shapes (a crate's box, turned as it is, a
//! player's capsule), so a grenade that lands on a stack goes off there instead of
//! rolling off it.

use lanyard::prelude::*;
use lanyard::{EntityRef, Quat};

/// How close a grenade's surface must come to a body's to touch it, m.
pub const TOUCH: f32 = 0.05;
/// How long a grenade lies after it first touches the floor or a block, seconds.
pub const LANDED_FUSE: f32 = 0.35;

/// How far `p` is from the surface of a box centred at `center`, turned by `rot`, with
/// `half` its half extents (negative inside).
pub fn box_distance(p: Vec3, center: Vec3, rot: Quat, half: Vec3) -> f32 {
    let local = rot.inverse() * (p - center);
    let q = local.abs() - half;
    q.max(Vec3::ZERO).length() + q.max_element().min(0.0)
}

/// How far `p` is from the surface of an upright-when-unturned capsule centred at
/// `center`, turned by `rot`, its segment `half_height` either side of the centre.
pub fn capsule_distance(p: Vec3, center: Vec3, rot: Quat, half_height: f32, radius: f32) -> f32 {
    let local = rot.inverse() * (p - center);
    let on_axis = Vec3::new(0.0, local.y.clamp(-half_height, half_height), 0.0);
    (local - on_axis).length() - radius
}

/// Whether a ball of `radius` at `p` touches the body of `e` (by its shape).
pub fn touches(p: Vec3, radius: f32, e: &EntityRef<'_>) -> bool {
    let (center, rot) = (e.body().translation(), *e.body().rotation());
    let d = match e.visual.shape {
        Shape::Cuboid { half_extents } => box_distance(p, center, rot, Vec3::from(half_extents)),
        Shape::Capsule {
            half_height,
            radius,
        } => capsule_distance(p, center, rot, half_height, radius),
        Shape::Ball { radius } => (p - center).length() - radius,
    };
    d < radius + TOUCH
}

#[cfg(test)]
mod tests {
    use super::{box_distance, capsule_distance};
    use lanyard::{Quat, Vec3};

    #[test]
    fn distances_to_a_turned_box_and_an_upright_capsule() {
        let half = Vec3::splat(0.4);
        let flat = Quat::IDENTITY;
        assert!(
            (box_distance(Vec3::new(1.0, 0.0, 0.0), Vec3::ZERO, flat, half) - 0.6).abs() < 1e-5
        );
        assert!(
            (box_distance(Vec3::new(0.0, 0.9, 0.0), Vec3::ZERO, flat, half) - 0.5).abs() < 1e-5
        );
        assert!(
            box_distance(Vec3::ZERO, Vec3::ZERO, flat, half) < 0.0,
            "inside"
        );
        // Turned 45 degrees about y, its corner points along x.
        let turned = Quat::from_rotation_y(std::f32::consts::FRAC_PI_4);
        let corner = 0.4 * std::f32::consts::SQRT_2;
        let d = box_distance(Vec3::new(1.0, 0.0, 0.0), Vec3::ZERO, turned, half);
        assert!((d - (1.0 - corner)).abs() < 1e-4, "{d}");
        // A capsule: beside its middle, and above its top.
        assert!(
            (capsule_distance(Vec3::new(1.0, 0.0, 0.0), Vec3::ZERO, flat, 0.5, 0.3) - 0.7).abs()
                < 1e-5
        );
        assert!(
            (capsule_distance(Vec3::new(0.0, 1.0, 0.0), Vec3::ZERO, flat, 0.5, 0.3) - 0.2).abs()
                < 1e-5
        );
    }
}
