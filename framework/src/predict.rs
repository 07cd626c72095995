//! Predicted poses: the server and a client both compute where a body will be from a
//! state they share, so a body that goes where it was predicted costs nothing on the wire,
//! and one that does not costs only its difference from the prediction.
//!
//! A kind declares its [`Motion`], the forces its client path applies each tick (a pull
//! toward a planet, a thrust), as a plain function of the state, and a [`Tolerance`]: how
//! far a prediction may be from the authority's state and still be drawn. The prediction
//! repeats one tick as a peer runs it: the motion, then the free flight the physics step
//! gives a body nothing touches. Both ends run the same code on the same quantized state,
//! so they predict alike; the server sends nothing while the prediction from what the
//! client holds stays within the tolerance of its own state, and a collision's change
//! travels as a [`PoseDelta`] against the prediction.

use crate::codec::{SectionReader, SectionWriter};
use crate::delta::{DeltaCodec, PoseDelta};
use crate::error::Error;
use crate::pose::PoseState;
use crate::{Quat, Vec3};

/// What a kind's client path does to its body each tick before the physics step, as a
/// function of the state and the tick's length in seconds: what [`PredictedPose`] repeats
/// on both ends. It should be the very code the client path runs.
pub type Motion = fn(&mut PoseState, f32);

/// A body nothing pushes: no motion of its own.
pub fn coasting(_: &mut PoseState, _: f32) {}

/// The longest prediction, in ticks (10 s at 60 Hz): past it, [`PredictedPose`] declines,
/// and the state goes whole or as a delta against the baseline itself.
pub const MAX_PREDICTED_TICKS: u32 = 600;

/// How far a predicted pose may be from the authority's and still stand for it: the
/// precision a kind needs. The defaults are the framework's correction tolerance
/// ([`CORRECTION_TOLERANCE`](crate::pose::CORRECTION_TOLERANCE), 2 mm) and 2 mrad, with
/// velocities to 5 cm/s and 0.05 rad/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Metres between the positions.
    pub pos: f32,
    /// Radians between the rotations.
    pub rot: f32,
    /// Metres per second between the linear velocities.
    pub linvel: f32,
    /// Radians per second between the angular velocities.
    pub angvel: f32,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            pos: crate::pose::CORRECTION_TOLERANCE,
            rot: 0.002,
            linvel: 0.05,
            angvel: 0.05,
        }
    }
}

impl Tolerance {
    /// Whether `a` and `b` are within it of each other.
    pub fn holds(&self, a: &PoseState, b: &PoseState) -> bool {
        let turned = 2.0 * a.rot.dot(b.rot).abs().min(1.0).acos();
        (a.pos - b.pos).length() <= self.pos
            && turned <= self.rot
            && (a.linvel - b.linvel).length() <= self.linvel
            && (a.angvel - b.angvel).length() <= self.angvel
    }
}

/// The delta codec of a kind whose section starts with a [`PoseState`]: it predicts the
/// section some ticks on (see the [module](self)), judges a prediction by the kind's
/// [`Tolerance`], and writes a changed section as a [`PoseDelta`] (against the
/// prediction, when the network layer predicts).
#[derive(Clone, Copy)]
pub struct PredictedPose {
    motion: Motion,
    tolerance: Tolerance,
}

impl std::fmt::Debug for PredictedPose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PredictedPose")
            .field("tolerance", &self.tolerance)
            .finish_non_exhaustive()
    }
}

impl Default for PredictedPose {
    fn default() -> Self {
        PredictedPose::new(coasting)
    }
}

impl PredictedPose {
    /// Predicts with the kind's `motion` each tick, to the default [`Tolerance`].
    pub fn new(motion: Motion) -> Self {
        PredictedPose {
            motion,
            tolerance: Tolerance::default(),
        }
    }

    /// The same, judged by `tolerance`.
    pub fn within(self, tolerance: Tolerance) -> Self {
        PredictedPose { tolerance, ..self }
    }

    /// One tick of `dt` seconds from `s`: the motion, then free flight (the position along
    /// the linear velocity; the rotation turned by the angular velocity, as the physics
    /// step's linearized integration turns it).
    fn tick(&self, s: &mut PoseState, dt: f32) {
        (self.motion)(s, dt);
        s.pos += s.linvel * dt;
        let half = s.angvel * (dt * 0.5);
        s.rot = (Quat::from_xyzw(half.x, half.y, half.z, 1.0) * s.rot).normalize();
    }
}

fn read_pose(b: &[u8]) -> Result<PoseState, Error> {
    let head = b
        .get(..PoseState::LEN)
        .ok_or(Error::InvalidValue("short pose"))?;
    PoseState::read(&mut SectionReader::new(head))
}

impl DeltaCodec for PredictedPose {
    fn encode(&self, base: &[u8], cur: &[u8], out: &mut Vec<u8>) {
        PoseDelta::default().encode(base, cur, out);
    }

    fn decode(&self, base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        PoseDelta::default().decode(base, delta, out)
    }

    fn predicts(&self) -> bool {
        true
    }

    fn predict(&self, base: &[u8], ticks: u32, dt: f32, out: &mut Vec<u8>) -> bool {
        let Ok(mut s) = read_pose(base) else {
            return false;
        };
        if ticks > MAX_PREDICTED_TICKS {
            return false;
        }
        for _ in 0..ticks {
            self.tick(&mut s, dt);
        }
        if ![s.pos, s.linvel, s.angvel].iter().all(|v| v.is_finite()) || !s.rot.is_finite() {
            return false;
        }
        s.write(&mut SectionWriter::new(out));
        out.extend_from_slice(&base[PoseState::LEN..]);
        true
    }

    fn agrees(&self, predicted: &[u8], actual: &[u8]) -> bool {
        match (read_pose(predicted), read_pose(actual)) {
            (Ok(p), Ok(a)) => {
                predicted[PoseState::LEN..] == actual[PoseState::LEN..]
                    && self.tolerance.holds(&p, &a)
            }
            _ => predicted == actual,
        }
    }
}

/// A pull toward the origin of strength `mu` (m³/s², as gravity toward a point mass), on
/// velocity `v` at position `p` for `dt` seconds: the new velocity. Within a metre of the
/// origin it pulls as at a metre.
pub fn pulled_toward_origin(p: Vec3, v: Vec3, mu: f32, dt: f32) -> Vec3 {
    let r = p.length().max(1.0);
    v - p * (mu * dt / (r * r * r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(s: &PoseState, extra: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        s.write(&mut SectionWriter::new(&mut b));
        b.extend_from_slice(extra);
        b
    }

    fn orbiting() -> PoseState {
        PoseState {
            pos: Vec3::new(25.0, 0.0, 0.0),
            rot: Quat::from_rotation_y(0.3),
            linvel: Vec3::new(0.0, 0.0, 8.0),
            angvel: Vec3::new(0.4, -0.2, 0.9),
        }
    }

    fn pull(s: &mut PoseState, dt: f32) {
        s.linvel = pulled_toward_origin(s.pos, s.linvel, 1600.0, dt);
    }

    #[test]
    fn a_prediction_agrees_with_predicting_on_from_a_prediction() {
        let codec = PredictedPose::new(pull);
        let base = section(&orbiting(), &[7, 8]);
        let (mut far, mut near, mut on) = (Vec::new(), Vec::new(), Vec::new());
        assert!(codec.predict(&base, 60, 1.0 / 60.0, &mut far));
        assert!(codec.predict(&base, 30, 1.0 / 60.0, &mut near));
        assert!(codec.predict(&near, 30, 1.0 / 60.0, &mut on));
        assert!(codec.agrees(&far, &on), "quantizing halfway changes little");
        assert!(!codec.agrees(&base, &far), "an orbiting body moves");
        assert_eq!(
            &far[PoseState::LEN..],
            &[7, 8],
            "the kind's own fields stay"
        );
        let mut other = on.clone();
        other[PoseState::LEN] = 9;
        assert!(
            !codec.agrees(&on, &other),
            "the kind's own fields must be equal"
        );
    }

    #[test]
    fn the_pull_bends_the_prediction() {
        let base = section(&orbiting(), &[]);
        let (mut pulled, mut coasted) = (Vec::new(), Vec::new());
        assert!(PredictedPose::new(pull).predict(&base, 30, 1.0 / 60.0, &mut pulled));
        assert!(PredictedPose::default().predict(&base, 30, 1.0 / 60.0, &mut coasted));
        let read = |b: &[u8]| PoseState::read(&mut SectionReader::new(b)).unwrap();
        let (p, c) = (read(&pulled), read(&coasted));
        // Half a second of a 2.56 m/s² pull: about 32 cm inward.
        assert!(
            (c.pos.x - p.pos.x - 0.32).abs() < 0.02,
            "{:?} vs {:?}",
            p.pos,
            c.pos
        );
        assert!(
            (c.pos.z - 4.0).abs() < 0.001,
            "coasting goes straight: {:?}",
            c.pos
        );
    }

    #[test]
    fn what_cannot_be_predicted_is_declined() {
        let codec = PredictedPose::default();
        let mut out = vec![1];
        assert!(
            !codec.predict(&[0; 5], 1, 0.1, &mut out),
            "too short for a pose"
        );
        let base = section(&orbiting(), &[]);
        assert!(!codec.predict(&base, MAX_PREDICTED_TICKS + 1, 0.1, &mut out));
        assert_eq!(out, [1], "nothing appended");
        assert!(
            !crate::delta::ByteDelta.predicts(),
            "byte deltas do not predict"
        );
    }

    #[test]
    fn a_delta_against_the_prediction_is_small_and_exact() {
        let codec = PredictedPose::new(pull);
        let base = section(&orbiting(), &[]);
        let mut predicted = Vec::new();
        assert!(codec.predict(&base, 2, 1.0 / 60.0, &mut predicted));
        // The authority's state differs a little (a graze): 3 mm and a nudge.
        let mut s = PoseState::read(&mut SectionReader::new(&predicted)).unwrap();
        s.pos.y += 0.003;
        s.linvel.y += 0.05;
        let cur = section(&s, &[]);
        let mut d = Vec::new();
        codec.encode(&predicted, &cur, &mut d);
        let mut back = Vec::new();
        codec.decode(&predicted, &d, &mut back).unwrap();
        assert_eq!(back, cur);
        assert!(d.len() <= 6, "{} bytes", d.len());
        assert!(
            !codec.agrees(&predicted, &cur),
            "3 mm is past the default tolerance"
        );
        let loose = codec.within(Tolerance {
            pos: 0.01,
            linvel: 0.1,
            ..Tolerance::default()
        });
        assert!(loose.agrees(&predicted, &cur), "and within a looser one");
    }
}
