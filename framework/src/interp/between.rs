//! Where a body is between two of its poses. Evenly along the way, unless the poses'
//! velocities say it changed speed or direction abruptly in between (it landed, bounced,
//! hit something or was knocked from rest, and the pose that would have shown when was
//! lost or never sent): then it keeps the first pose's velocity until that moment and the
//! second's after.

use crate::pose::PoseState;
use rapier3d::glamx::glam::Vec3;

/// How much of the way the two-velocity account may leave unexplained (spread evenly over
/// the span), as a share of the way, plus [`SLACK`]. More, and the velocities do not tell
/// what happened in between: the body goes evenly.
const FIT: f32 = 0.3;
/// Metres the two-velocity account may leave unexplained whatever the way's length.
const SLACK: f32 = 0.01;

/// Where a body is `t` seconds after pose `a` on its way to pose `b`, `span` seconds
/// later, and the share of the way from `a`'s rotation to `b`'s it has turned.
pub(super) fn between(a: &PoseState, b: &PoseState, span: f32, t: f32) -> (Vec3, f32) {
    let k = if span > 0.0 {
        (t / span).clamp(0.0, 1.0)
    } else {
        1.0
    };
    if let Some(p) = two_velocities(a, b, span, t) {
        let way = b.pos - a.pos;
        let turned = if way.length_squared() > 1e-8 {
            ((p - a.pos).dot(way) / way.length_squared()).clamp(0.0, 1.0)
        } else {
            k
        };
        return (p, turned);
    }
    let k = along(a, b, span, k);
    (a.pos.lerp(b.pos, k), k)
}

/// The body kept `a`'s velocity, then `b`'s from one moment on: a collision between the
/// poses. The moment is the one that best explains the way; what it leaves unexplained is
/// spread evenly over the span, so the account ends at `b`. `None` where it does not apply:
/// the velocities differ by less than the mean speed (nothing abrupt), the moment falls
/// outside the span, or the account misses the way by more than [`FIT`].
fn two_velocities(a: &PoseState, b: &PoseState, span: f32, t: f32) -> Option<Vec3> {
    let way = b.pos - a.pos;
    let change = a.linvel - b.linvel;
    if span <= 0.0 || change.length() <= way.length() / span {
        return None;
    }
    // Least squares: a.linvel * first + b.linvel * (span - first) nearest the way.
    let first = change.dot(way - b.linvel * span) / change.length_squared();
    if !(0.0..=span).contains(&first) {
        return None;
    }
    let unexplained = way - (a.linvel * first + b.linvel * (span - first));
    if unexplained.length() > FIT * way.length() + SLACK {
        return None;
    }
    let moved = if t <= first {
        a.linvel * t
    } else {
        a.linvel * first + b.linvel * (t - first)
    };
    Some(a.pos + moved + unexplained * (t / span))
}

/// How far along from pose `a` to pose `b`, `span` seconds later, the body is at the share
/// `k` of that time. Evenly (`k`), unless their speeds along the way say it changed speed
/// abruptly in between (by more than its mean speed, which lies between them): it is then
/// drawn keeping `a`'s speed, then `b`'s, which covers the way in the time. (Where their
/// velocities leave the way's direction too much for [`two_velocities`].)
fn along(a: &PoseState, b: &PoseState, span: f32, k: f32) -> f32 {
    let way = b.pos - a.pos;
    let len = way.length();
    if len < 1e-3 || span <= 0.0 {
        return k;
    }
    let dir = way / len;
    let (s0, s1) = (a.linvel.dot(dir).max(0.0), b.linvel.dot(dir).max(0.0));
    let mean = len / span;
    let between = s0.min(s1) < mean && mean < s0.max(s1);
    if !between || (s0 - s1).abs() <= mean {
        return k;
    }
    // Seconds at `a`'s speed, so that the rest at `b`'s ends at `b`.
    let first = (len - s1 * span) / (s0 - s1);
    let t = k * span;
    let done = if t <= first {
        s0 * t
    } else {
        s0 * first + s1 * (t - first)
    };
    (done / len).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Quat;

    fn pose(pos: [f32; 3], vel: [f32; 3]) -> PoseState {
        PoseState {
            pos: Vec3::from_array(pos),
            rot: Quat::IDENTITY,
            linvel: Vec3::from_array(vel),
            angvel: Vec3::ZERO,
        }
    }

    /// Falling at 4 m/s (and drifting at 1 m/s), then 150 ms later at the same height
    /// rising at 2 m/s: it bounced off something 20 cm below, 50 ms in. Drawn evenly it
    /// would slide level and never touch it.
    #[test]
    fn a_bounce_between_two_poses_goes_down_and_up_again() {
        let a = pose([0.0, 1.0, 0.0], [1.0, -4.0, 0.0]);
        let b = pose([0.15, 1.0, 0.0], [1.0, 2.0, 0.0]);
        let at = |t: f32| between(&a, &b, 0.15, t).0;
        assert!(
            at(0.05).distance(Vec3::new(0.05, 0.8, 0.0)) < 1e-5,
            "{}",
            at(0.05)
        );
        assert!(
            at(0.1).distance(Vec3::new(0.1, 0.9, 0.0)) < 1e-5,
            "{}",
            at(0.1)
        );
        assert!(at(0.15).distance(b.pos) < 1e-5);
    }

    /// Velocities that explain nothing of the way (each at right angles to it and to each
    /// other): the body goes evenly.
    #[test]
    fn velocities_that_do_not_explain_the_way_leave_it_even() {
        let a = pose([0.0, 0.0, 0.0], [0.0, 3.0, 0.0]);
        let b = pose([0.1, 0.0, 0.0], [0.0, 0.0, 3.0]);
        let (p, turned) = between(&a, &b, 0.1, 0.05);
        assert!(p.distance(Vec3::new(0.05, 0.0, 0.0)) < 1e-6, "{p}");
        assert!((turned - 0.5).abs() < 1e-6);
    }
}
