//! Predicted poses: the server and a client both compute where a body will be from a
//! state they share, so a body that goes where it was predicted costs nothing on the wire,
//! and one that does not costs only its difference from the prediction.
//!
//! Every kind whose section starts with a pose ([`PoseState::write`] at the section's
//! start, as [`PoseState::write_with`] and [`Posed`](crate::Posed) do) is predicted by
//! default: one tick of a prediction is the kind's own [motion](crate::Controller::motion)
//! (a [`Steer`] over the predicted state, the very code that steers the body), then what
//! rapier's step does to a body nothing touches ([`FreeFlight`]: gravity, substeps and
//! damping). Both ends run the same code on the same quantized state, so they predict
//! alike; the server sends nothing while the prediction from what the client holds stays
//! within the kind's [`Tolerance`] of its own state
//! ([`KindOptions::tolerance`](crate::KindOptions::tolerance)), and a collision's change
//! travels as a [`PoseDelta`] against the prediction.
//!
//! [`PredictedPose`] is the older, explicit codec of the same idea, with a [`Motion`]
//! function instead of the controller's motion and no gravity: a kind that sets it keeps
//! it.

use crate::codec::{SectionReader, SectionWriter};
use crate::delta::{DeltaCodec, PoseDelta};
use crate::error::{CodecError, Error};
pub use crate::pose::Tolerance;
use crate::pose::{MAX_ANGVEL, MAX_LINVEL, PoseState};
use rapier3d::glamx::glam::{Quat, Vec3};
use rapier3d::prelude::{IntegrationParameters, RigidBody, RigidBodyHandle, RigidBodySet};

/// A body as a kind's [motion](crate::Controller::motion) sees and steers it: the body
/// itself in a peer's frame, or a predicted state of it. Reads and writes go to whichever
/// it is, as the same `f32` values, so a motion does the same to both.
pub struct Steer<'a> {
    target: Target<'a>,
    dt: f32,
    /// Set by the default [`Controller::motion`](crate::Controller::motion), which steers
    /// nothing: the group then need not ask that controller again.
    pub(crate) unsteered: bool,
}

enum Target<'a> {
    Body {
        bodies: &'a mut RigidBodySet,
        handle: RigidBodyHandle,
    },
    State(&'a mut PoseState),
}

impl<'a> Steer<'a> {
    /// Steers the body `handle` of `bodies` (which must hold it) for a tick of `dt`.
    pub(crate) fn body(bodies: &'a mut RigidBodySet, handle: RigidBodyHandle, dt: f32) -> Self {
        Steer {
            target: Target::Body { bodies, handle },
            dt,
            unsteered: false,
        }
    }

    /// Steers a predicted state for a tick of `dt` seconds.
    pub fn state(state: &'a mut PoseState, dt: f32) -> Self {
        Steer {
            target: Target::State(state),
            dt,
            unsteered: false,
        }
    }

    fn read<T>(&self, f: impl FnOnce(&RigidBody) -> T, g: impl FnOnce(&PoseState) -> T) -> T {
        match &self.target {
            Target::Body { bodies, handle } => f(&bodies[*handle]),
            Target::State(s) => g(s),
        }
    }

    /// The tick's length, seconds.
    pub fn dt(&self) -> f32 {
        self.dt
    }

    /// The body's position.
    pub fn pos(&self) -> Vec3 {
        self.read(|b| b.translation(), |s| s.pos)
    }

    /// The body's rotation.
    pub fn rot(&self) -> Quat {
        self.read(|b| *b.rotation(), |s| s.rot)
    }

    /// The body's linear velocity.
    pub fn linvel(&self) -> Vec3 {
        self.read(|b| b.linvel(), |s| s.linvel)
    }

    /// The body's angular velocity.
    pub fn angvel(&self) -> Vec3 {
        self.read(|b| b.angvel(), |s| s.angvel)
    }

    /// Sets the linear velocity (waking the body, if it changes).
    pub fn set_linvel(&mut self, v: Vec3) {
        match &mut self.target {
            Target::Body { bodies, handle } => {
                if bodies[*handle].linvel() != v {
                    bodies[*handle].set_linvel(v, true);
                }
            }
            Target::State(s) => s.linvel = v,
        }
    }

    /// Sets the angular velocity (waking the body, if it changes).
    pub fn set_angvel(&mut self, w: Vec3) {
        match &mut self.target {
            Target::Body { bodies, handle } => {
                if bodies[*handle].angvel() != w {
                    bodies[*handle].set_angvel(w, true);
                }
            }
            Target::State(s) => s.angvel = w,
        }
    }
}

/// What one physics step does to a body nothing touches (no contact, no force of its
/// own), as rapier 0.36 steps it: `substeps` times, the velocity gains gravity for a
/// substep, the gyroscopic term turns the angular velocity, and the body moves and turns
/// along them (about its centre of mass, the rotation linearized); then the step's damping
/// scales the velocities. A free body follows it to
/// within float rounding (a test holds it to 1 µm a tick for 600 ticks).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FreeFlight {
    /// The step, seconds.
    pub dt: f32,
    /// Substeps a step (rapier's solver iterations, and the body's additional ones).
    pub substeps: u32,
    /// Gravity on the body (the world's, times the body's gravity scale).
    pub gravity: Vec3,
    /// The body's linear damping.
    pub linear_damping: f32,
    /// The body's angular damping.
    pub angular_damping: f32,
    /// The body's centre of mass, in its own frame.
    pub local_com: Vec3,
    /// Its gyroscopic term, if on (rapier's default for a dynamic body): a tumbling body
    /// that is not a ball keeps its angular momentum, not its angular velocity.
    pub gyroscopic: Option<Gyroscopic>,
}

/// What the gyroscopic term of a body's step needs: its principal inertia and where its
/// principal axes lie in the body's frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gyroscopic {
    /// The principal axes, in the body's frame.
    pub frame: Quat,
    /// The inertia about each principal axis.
    pub inertia: Vec3,
    /// Its inverse (zero about a locked axis).
    pub inv_inertia: Vec3,
}

impl Gyroscopic {
    /// The angular velocity `w` of a body turned `rot` after `h` seconds of the explicit
    /// gyroscopic torque, its angular momentum's length kept.
    fn turn(&self, rot: Quat, w: Vec3, h: f32) -> Vec3 {
        let axes = rot * self.frame;
        let local = axes.inverse() * w;
        let momentum = self.inertia * local;
        let turned = momentum - local.cross(momentum) * h;
        let sq = turned.length_squared();
        if sq == 0.0 {
            return w;
        }
        let kept = turned * (momentum.length_squared() / sq).sqrt();
        axes * (self.inv_inertia * kept)
    }
}

impl FreeFlight {
    /// How `body` flies in a world stepped with `params` under `gravity`.
    pub fn of(body: &RigidBody, params: &IntegrationParameters, gravity: Vec3) -> Self {
        FreeFlight {
            dt: params.dt,
            substeps: (params.num_solver_iterations + body.additional_solver_iterations()).max(1)
                as u32,
            gravity: gravity * body.gravity_scale(),
            linear_damping: body.linear_damping(),
            angular_damping: body.angular_damping(),
            local_com: body.local_center_of_mass(),
            gyroscopic: (body.gyroscopic_forces_enabled() && body.is_dynamic()).then(|| {
                let m = &body.mass_properties().local_mprops;
                Gyroscopic {
                    frame: m.principal_inertia_local_frame,
                    inertia: m.principal_inertia(),
                    inv_inertia: m.inv_principal_inertia,
                }
            }),
        }
    }

    /// A body with none of its own: no damping, its centre at its origin, `substeps`
    /// substeps of a `dt` step under `gravity`.
    pub fn plain(dt: f32, substeps: u32, gravity: Vec3) -> Self {
        FreeFlight {
            dt,
            substeps: substeps.max(1),
            gravity,
            linear_damping: 0.0,
            angular_damping: 0.0,
            local_com: Vec3::ZERO,
            gyroscopic: None,
        }
    }

    /// One step of `s`.
    pub fn step(&self, s: &mut PoseState) {
        let h = self.dt / self.substeps as f32;
        let pull = self.gravity * h;
        let mut com = s.pos + s.rot * self.local_com;
        for _ in 0..self.substeps {
            s.linvel += pull;
            if let Some(g) = &self.gyroscopic {
                s.angvel = g.turn(s.rot, s.angvel, h);
            }
            let half = s.angvel * (h * 0.5);
            s.rot = (Quat::from_xyzw(half.x, half.y, half.z, 1.0) * s.rot).normalize();
            com += s.linvel * h;
        }
        s.pos = com - s.rot * self.local_com;
        s.linvel *= 1.0 / (1.0 + self.dt * self.linear_damping);
        s.angvel *= 1.0 / (1.0 + self.dt * self.angular_damping);
    }
}

/// What a kind's client path does to its body each tick before the physics step, as a
/// function of the state and the tick's length in seconds: what [`PredictedPose`] repeats
/// on both ends. It should be the very code the client path runs.
pub type Motion = fn(&mut PoseState, f32);

/// A body nothing pushes: no motion of its own.
pub fn coasting(_: &mut PoseState, _: f32) {}

/// The longest prediction, in ticks (10 s at 60 Hz): past it, [`PredictedPose`] declines,
/// and the state goes whole or as a delta against the baseline itself.
pub const MAX_PREDICTED_TICKS: u32 = 600;

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

    /// The same, judged by `tolerance` (checked when the codec is set on a kind:
    /// [`KindRegistry::set_delta_codec`](crate::KindRegistry::set_delta_codec)).
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

fn read_pose(b: &[u8]) -> Result<PoseState, CodecError> {
    let head = b
        .get(..PoseState::LEN)
        .ok_or(CodecError::InvalidValue("short pose"))?;
    PoseState::read(&mut SectionReader::new(head))
}

impl DeltaCodec for PredictedPose {
    fn encode(&self, base: &[u8], cur: &[u8], out: &mut Vec<u8>) {
        PoseDelta.encode(base, cur, out);
    }

    fn decode(&self, base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        PoseDelta.decode(base, delta, out)
    }

    fn predicts(&self) -> bool {
        true
    }

    fn tolerance(&self) -> Option<Tolerance> {
        Some(self.tolerance)
    }

    fn predict(&self, base: &[u8], ticks: u32, dt: f32, out: &mut Vec<u8>) -> bool {
        predict_pose(base, ticks, out, |s| self.tick(s, dt))
    }

    fn agrees(&self, predicted: &[u8], actual: &[u8]) -> bool {
        poses_agree(&self.tolerance, predicted, actual)
    }
}

/// Appends to `out` the section `base` (which starts with a pose) `ticks` ticks on, each
/// tick `step`, and returns true; returns false, appending nothing, where it cannot be
/// predicted (no pose, too far ahead, a step that panics or leaves a value not finite). A
/// body [at rest](at_rest) stays. What both the explicit [`PredictedPose`] and a group's
/// default prediction ([`PoseCodec`](crate::PoseCodec)) run.
pub(crate) fn predict_pose(
    base: &[u8],
    ticks: u32,
    out: &mut Vec<u8>,
    mut step: impl FnMut(&mut PoseState),
) -> bool {
    if ticks > MAX_PREDICTED_TICKS {
        return false;
    }
    let Ok(mut s) = read_pose(base) else {
        return false;
    };
    if resting(s.linvel, s.angvel) {
        out.extend_from_slice(base);
        return true;
    }
    // A step may run a kind's own code: one that panics predicts nothing.
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for _ in 0..ticks {
            step(&mut s);
        }
    }));
    if ran.is_err()
        || ![s.pos, s.linvel, s.angvel].iter().all(|v| v.is_finite())
        || !s.rot.is_finite()
    {
        return false;
    }
    s.write(&mut SectionWriter::new(out));
    out.extend_from_slice(&base[PoseState::LEN..]);
    true
}

/// Whether the `predicted` section stands for the `actual` one: their poses within
/// `tolerance` and what follows them equal (sections that are no poses: equal).
pub(crate) fn poses_agree(tolerance: &Tolerance, predicted: &[u8], actual: &[u8]) -> bool {
    match (read_pose(predicted), read_pose(actual)) {
        (Ok(p), Ok(a)) => {
            predicted[PoseState::LEN..] == actual[PoseState::LEN..] && tolerance.holds(&p, &a)
        }
        _ => predicted == actual,
    }
}

/// Below this speed (m/s, and rad/s turning), as a section carries it, a body is at rest
/// for a prediction ([`at_rest`]).
pub const REST_SPEED: f32 = 0.02;

/// Whether `section` starts with a pose at rest: slower than [`REST_SPEED`], moving and
/// turning, as the section carries it. A body at rest is predicted to stay: under gravity,
/// a body that barely moves is resting on something (the ground, a pile), which no free
/// flight foresees. A body that starts to move from rest, or creeps, is mispredicted until
/// it is off by the kind's tolerance; the difference goes then.
pub fn at_rest(section: &[u8]) -> bool {
    // The velocities are the pose's last 12 bytes, read as `PoseState::read` reads them.
    let Some(v) = section.get(PoseState::LEN - 12..PoseState::LEN) else {
        return false;
    };
    let mut r = SectionReader::new(v);
    match (r.velocity(MAX_LINVEL), r.velocity(MAX_ANGVEL)) {
        (Ok(linvel), Ok(angvel)) => resting(linvel, angvel),
        _ => false,
    }
}

/// Whether velocities `linvel` and `angvel` are a body at rest ([`at_rest`]).
fn resting(linvel: Vec3, angvel: Vec3) -> bool {
    linvel.length_squared() <= REST_SPEED * REST_SPEED
        && angvel.length_squared() <= REST_SPEED * REST_SPEED
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

    /// Steps a free body in a rapier world `ticks` times; each tick, predicts the step
    /// from the body's exact state and returns the worst distance and angle between the
    /// prediction and where rapier put it.
    fn worst_free_flight(body: RigidBody, collider: rapier3d::prelude::Collider) -> (f32, f32) {
        let mut world = rapier3d::prelude::PhysicsWorld {
            gravity: Vec3::new(0.0, -9.81, 0.0),
            ..Default::default()
        };
        world.integration_parameters.dt = 1.0 / 60.0;
        let h = world.insert_body(body);
        world.insert_collider(collider, Some(h));
        let (mut worst_pos, mut worst_rot) = (0.0f32, 0.0f32);
        // And the whole flight predicted from the start, as a client predicts a body it
        // heard nothing of for 10 s.
        let start = PoseState::of(&world.bodies[h]);
        let flight = FreeFlight::of(
            &world.bodies[h],
            &world.integration_parameters,
            world.gravity,
        );
        let mut whole = start;
        for _ in 0..600 {
            flight.step(&mut whole);
        }
        for _ in 0..600 {
            let b = &world.bodies[h];
            let flight = FreeFlight::of(b, &world.integration_parameters, world.gravity);
            let mut s = PoseState::of(b);
            flight.step(&mut s);
            world.step();
            let after = PoseState::of(&world.bodies[h]);
            worst_pos = worst_pos.max(s.pos.distance(after.pos));
            // The turn between them, from the vector part (acos near 1 is too coarse in f32).
            let d = s.rot * after.rot.inverse();
            worst_rot = worst_rot.max(2.0 * Vec3::new(d.x, d.y, d.z).length());
            assert!(s.linvel.distance(after.linvel) < 1e-5, "{s:?} vs {after:?}");
        }
        let end = PoseState::of(&world.bodies[h]);
        assert!(
            whole.pos.distance(end.pos) <= 600.0 * 1e-6,
            "600 ticks predicted at once: {:?} vs {:?}",
            whole.pos,
            end.pos
        );
        (worst_pos, worst_rot)
    }

    #[test]
    fn a_free_body_under_gravity_is_predicted_within_a_micrometre_a_tick() {
        use rapier3d::prelude::{ColliderBuilder, RigidBodyBuilder};
        let body = RigidBodyBuilder::dynamic()
            .translation(Vec3::new(0.0, 50.0, 0.0))
            .linvel(Vec3::new(3.0, 12.0, -1.0))
            .angvel(Vec3::new(0.7, -1.3, 2.1))
            .can_sleep(false)
            .build();
        let (pos, rot) = worst_free_flight(body, ColliderBuilder::ball(0.5).build());
        assert!(pos <= 1e-6, "a ball: {pos} m off in a tick");
        assert!(rot <= 1e-6, "a ball: {rot} rad off in a tick");
        // Damped, its centre of mass off its origin, gyroscopic (not a ball), with gravity
        // scaled and more substeps.
        let body = RigidBodyBuilder::dynamic()
            .translation(Vec3::new(0.0, 50.0, 0.0))
            .linvel(Vec3::new(-2.0, 5.0, 4.0))
            .angvel(Vec3::new(0.2, 1.5, -0.4))
            .linear_damping(0.3)
            .angular_damping(0.5)
            .gravity_scale(0.5)
            .additional_solver_iterations(2)
            .can_sleep(false)
            .build();
        let offset = ColliderBuilder::cuboid(0.5, 0.2, 0.3)
            .translation(Vec3::new(0.4, 0.1, 0.0))
            .build();
        let (pos, rot) = worst_free_flight(body, offset);
        assert!(
            pos <= 1e-6,
            "a damped, off-centre box: {pos} m off in a tick"
        );
        assert!(
            rot <= 1e-6,
            "a damped, off-centre box: {rot} rad off in a tick"
        );
    }

    #[test]
    fn a_motion_steers_a_body_and_a_state_alike() {
        let mut s = orbiting();
        let mut bodies = RigidBodySet::new();
        let h = bodies.insert(
            rapier3d::prelude::RigidBodyBuilder::dynamic()
                .translation(s.pos)
                .rotation(s.rot.to_scaled_axis())
                .linvel(s.linvel)
                .angvel(s.angvel)
                .build(),
        );
        let steer = |b: &mut Steer<'_>| {
            let v = pulled_toward_origin(b.pos(), b.linvel(), 1600.0, b.dt());
            b.set_linvel(v);
            b.set_angvel(b.angvel() * 0.5);
        };
        s = PoseState::of(&bodies[h]);
        steer(&mut Steer::body(&mut bodies, h, 0.1));
        steer(&mut Steer::state(&mut s, 0.1));
        assert_eq!(PoseState::of(&bodies[h]), s);
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
        assert!(d.len() <= PoseState::LEN / 3, "{} bytes", d.len());
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
