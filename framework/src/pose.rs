//! Carrying a body's pose and velocities in a section: the common case for a controller.

use crate::codec::{self, SectionReader, SectionWriter};
use crate::error::{CodecError, Error};
use crate::id::EntityId;
use rapier3d::glamx::glam::{Quat, Vec3};
use rapier3d::prelude::RigidBody;
use serde::{Deserialize, Serialize};

/// How far (metres) a peer's body may drift from the pose its authority streams before it
/// is corrected: 2 mm, four times the quantization error of [`PoseState`], so the
/// authority's own looped-back pose never corrects it.
pub const CORRECTION_TOLERANCE: f32 = 0.002;

/// The largest linear speed a [`PoseState`] carries, in metres per second.
pub const MAX_LINVEL: f32 = 64.0;
/// The largest angular speed a [`PoseState`] carries, in radians per second.
pub const MAX_ANGVEL: f32 = 64.0;

/// A body's pose and velocities, quantized for the wire: positions to the millimetre,
/// rotation in smallest-three form, velocities as 16-bit values on a square-root scale
/// ([`SectionWriter::velocity`]: finer the slower, zero under 0.98 mm/s). 31 bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoseState {
    /// Position of the body's origin.
    pub pos: Vec3,
    /// Orientation.
    pub rot: Quat,
    /// Linear velocity.
    pub linvel: Vec3,
    /// Angular velocity.
    pub angvel: Vec3,
}

impl PoseState {
    /// The encoded size in bytes.
    pub const LEN: usize = 12 + 7 + 6 + 6;

    /// The state of `body` now.
    #[inline]
    pub fn of(body: &RigidBody) -> Self {
        PoseState {
            pos: body.translation(),
            rot: *body.rotation(),
            linvel: body.linvel(),
            angvel: body.angvel(),
        }
    }

    /// Writes it, quantized.
    #[inline]
    pub fn write(&self, out: &mut SectionWriter<'_>) {
        // Written first, it makes the section predictable by default (`crate::predict`).
        out.mark_pose();
        // What `pos_mm`, `quat` and two `velocity` write, in one piece.
        out.fixed(&codec::pose_bytes(
            self.pos,
            self.rot,
            self.linvel,
            self.angvel,
            MAX_LINVEL,
            MAX_ANGVEL,
        ));
    }

    /// Writes the pose of `body` followed by the kind's own fields, `extra` (any serde
    /// value): the whole section of a kind that carries its pose and a little more. Read
    /// it with [`read_with`](Self::read_with).
    pub fn write_with<E: serde::Serialize + ?Sized>(
        body: &RigidBody,
        extra: &E,
        out: &mut SectionWriter<'_>,
    ) {
        PoseState::of(body).write(out);
        out.serde(extra);
    }

    /// Reads a whole section [`write_with`](Self::write_with) wrote: the pose and the
    /// extra fields (nothing may be left over).
    pub fn read_with<E: serde::de::DeserializeOwned + serde::Serialize>(
        section: &crate::codec::Section<'_>,
    ) -> Result<(PoseState, E), CodecError> {
        section.parse(|r| Ok((PoseState::read(r)?, r.serde()?)))
    }

    /// The named fields of a section [`write_with`](Self::write_with) wrote with an extra
    /// of type `E`: the pose's (`position`, `rotation`, `linear velocity`, `angular
    /// velocity`) and the extra's, flattened under `extra` (see
    /// [`describe::serde_fields`](crate::describe::serde_fields)). Register it with
    /// [`KindRegistry::describe_sections`](crate::KindRegistry::describe_sections).
    pub fn fields_with<E: serde::de::DeserializeOwned + serde::Serialize>(
        section: &crate::codec::Section<'_>,
    ) -> Result<crate::describe::Fields, Error> {
        let (pose, extra): (PoseState, E) = PoseState::read_with(section)?;
        let mut fields = pose.fields();
        fields.extend(crate::describe::serde_fields("extra", &extra));
        Ok(fields)
    }

    /// The pose as named fields (`position`, `rotation`, `linear velocity`, `angular
    /// velocity`).
    pub fn fields(&self) -> crate::describe::Fields {
        let v = |x: &[f32]| {
            let parts: Vec<String> = x.iter().map(f32::to_string).collect();
            format!("[{}]", parts.join(", "))
        };
        vec![
            ("position".into(), v(&self.pos.to_array())),
            ("rotation".into(), v(&self.rot.to_array())),
            ("linear velocity".into(), v(&self.linvel.to_array())),
            ("angular velocity".into(), v(&self.angvel.to_array())),
        ]
    }

    /// Reads what [`write`](Self::write) wrote.
    pub fn read(r: &mut SectionReader<'_>) -> Result<Self, CodecError> {
        Ok(PoseState {
            pos: r.pos_mm()?,
            rot: r.quat()?,
            linvel: r.velocity(MAX_LINVEL)?,
            angvel: r.velocity(MAX_ANGVEL)?,
        })
    }

    /// Whether `body` is further from this state than quantization explains: more than
    /// `tolerance` metres away, or turned by more than about `tolerance` radians.
    pub fn differs_from(&self, body: &RigidBody, tolerance: f32) -> bool {
        let dp = (body.translation() - self.pos).length();
        let dq = 1.0 - body.rotation().dot(self.rot).abs();
        dp > tolerance || dq > tolerance * tolerance * 0.5
    }

    /// Whether a client's state of a body the server knows as `body` is believable: no
    /// faster than `max_speed` metres per second, and no further than `max_jump` metres
    /// from where the server has it. What a kind whose bodies a client may hold
    /// ([`KindOptions::hand_off`](crate::KindOptions::hand_off)) checks in its
    /// [`validate`](crate::Controller::validate).
    pub fn plausible(&self, body: &RigidBody, max_speed: f32, max_jump: f32) -> bool {
        self.linvel.length() <= max_speed && self.pos.distance(body.translation()) <= max_jump
    }

    /// Puts `body` in this state (waking it).
    pub fn apply(&self, body: &mut RigidBody) {
        body.set_translation(self.pos, true);
        body.set_rotation(self.rot, true);
        body.set_linvel(self.linvel, true);
        body.set_angvel(self.angvel, true);
    }

    /// This state `secs` seconds later, moving ballistically: along its velocities, with
    /// `gravity` only while it is clearly in flight (a body resting on the ground, or
    /// sliding along it, would sink into it otherwise).
    pub fn advanced(&self, secs: f32, gravity: Vec3) -> PoseState {
        if secs <= 0.0 {
            return *self;
        }
        let airborne = self.linvel.y.abs() > AIRBORNE_SPEED;
        let (pos, linvel) = if airborne {
            (
                self.pos + self.linvel * secs + 0.5 * gravity * secs * secs,
                self.linvel + gravity * secs,
            )
        } else {
            (self.pos + self.linvel * secs, self.linvel)
        };
        let spin = self.angvel * secs;
        let rot = if spin.length_squared() > 0.0 {
            (Quat::from_scaled_axis(spin) * self.rot).normalize()
        } else {
            self.rot
        };
        PoseState {
            pos,
            rot,
            linvel,
            angvel: self.angvel,
        }
    }
}

/// How far a predicted pose may be from the authority's and still stand for it: the
/// precision a kind needs. The defaults are the framework's correction tolerance
/// ([`CORRECTION_TOLERANCE`], 2 mm) and 2 mrad, with
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
            pos: CORRECTION_TOLERANCE,
            rot: 0.002,
            linvel: 0.05,
            angvel: 0.05,
        }
    }
}

impl Tolerance {
    /// Whether every value is a precision: finite and above zero. An error naming the value
    /// and what is wrong with it if not (a NaN or a negative value would send every body
    /// every broadcast; an infinite one would never correct a client).
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in [
            ("pos", self.pos),
            ("rot", self.rot),
            ("linvel", self.linvel),
            ("angvel", self.angvel),
        ] {
            let wrong = if v.is_nan() {
                "NaN"
            } else if v.is_infinite() {
                "infinite"
            } else if v <= 0.0 {
                "not above zero"
            } else {
                continue;
            };
            return Err(format!("{name} = {v} is {wrong}"));
        }
        Ok(())
    }

    /// Whether `a` and `b` are within it of each other.
    pub fn holds(&self, a: &PoseState, b: &PoseState) -> bool {
        let turned = 2.0 * a.rot.dot(b.rot).abs().min(1.0).acos();
        (a.pos - b.pos).length() <= self.pos
            && turned <= self.rot
            && (a.linvel - b.linvel).length() <= self.linvel
            && (a.angvel - b.angvel).length() <= self.angvel
    }
}

/// Faster than this vertically (m/s), a body is in flight for [`PoseState::advanced`].
pub const AIRBORNE_SPEED: f32 = 0.5;

/// A pose an entity's client path took from its authority this frame, as
/// [`PoseState::correct`] reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observed {
    /// The entity.
    pub id: EntityId,
    /// The authority's state as the section carried it (the moment it describes).
    pub authority: PoseState,
    /// That state brought forward to this peer's present.
    pub applied: PoseState,
    /// Where the body was before, if it was corrected (moved to `applied`).
    pub corrected_from: Option<(Vec3, Quat)>,
}

/// What a group's client paths observed in a frame: the [`Observed`] poses of
/// [`EntityGroup::observed_poses`](crate::EntityGroup::observed_poses), kept in two lists.
///
/// A peer's own poses, looped back, are a whole frame's worth every frame (a server's
/// every body) and are read only when someone asks (a headless server never does), so
/// only where each one's section lies in the group's own packet is noted: 16 bytes each
/// instead of an [`Observed`]'s 144. On the first ask after a frame they are decoded from
/// that packet, and the two lists are merged in the order the client paths ran.
#[derive(Default)]
pub(crate) struct Observations {
    /// Poses taken from an authority's section, corrections, and states put from outside.
    taken: Vec<Observed>,
    /// This peer's own poses, by where their sections are.
    own: Vec<OwnPose>,
    /// Both lists, merged on the first ask after a frame.
    merged: std::cell::OnceCell<Vec<Observed>>,
    /// The last merge's allocation, kept for the next.
    spare: std::cell::Cell<Vec<Observed>>,
}

impl std::fmt::Debug for Observations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observations")
            .field("taken", &self.taken.len())
            .field("own", &self.own.len())
            .finish_non_exhaustive()
    }
}

/// A pose of the peer's own, as [`Observations`] keeps it: where its section's payload
/// starts in the group's own packet.
#[derive(Debug, Clone, Copy)]
struct OwnPose {
    id: EntityId,
    at: u32,
    /// How many taken poses came before it.
    after: u32,
}

impl Observations {
    /// Forgets the last frame's, keeping the allocations.
    pub(crate) fn clear(&mut self) {
        self.taken.clear();
        self.own.clear();
        self.forget_merged();
    }

    /// Notes a pose taken from the authority (or put from outside).
    pub(crate) fn push(&mut self, o: Observed) {
        self.taken.push(o);
        self.forget_merged();
    }

    /// Notes the pose of an entity of this peer's own, `id`, whose looped-back section's
    /// payload starts at `at` in the group's own packet and is a [`PoseState`]: observed as
    /// the section carried it (the authority's pose and the applied one, uncorrected).
    pub(crate) fn push_own(&mut self, id: EntityId, at: u32) {
        let after = self.taken.len() as u32;
        self.own.push(OwnPose { id, at, after });
        self.forget_merged();
    }

    /// After a note, a merge made before it (an ask in the middle of a frame) is stale.
    fn forget_merged(&mut self) {
        if let Some(merged) = self.merged.take() {
            self.spare.set(merged);
        }
    }

    /// All of them, in the order they were noted; `packet` is the group's own packet of
    /// the frame, where the own poses' sections are.
    pub(crate) fn all(&self, packet: &[u8]) -> &[Observed] {
        if self.own.is_empty() {
            return &self.taken;
        }
        self.merged.get_or_init(|| {
            let mut all = self.spare.take();
            all.clear();
            all.reserve(self.taken.len() + self.own.len());
            let mut next = 0;
            for o in &self.own {
                let upto = o.after as usize;
                all.extend_from_slice(&self.taken[next..upto]);
                next = upto;
                // The section's first bytes, read as every peer reads them (`take` saw
                // that there are enough); one that is no pose is left out, as a peer
                // would refuse it.
                let at = o.at as usize;
                let bytes = packet.get(at..at + PoseState::LEN).unwrap_or_default();
                if let Ok(pose) = PoseState::read(&mut SectionReader::new(bytes)) {
                    all.push(Observed {
                        id: o.id,
                        authority: pose,
                        applied: pose,
                        corrected_from: None,
                    });
                }
            }
            all.extend_from_slice(&self.taken[next..]);
            all
        })
    }
}

/// A body's exact pose and velocities, for spawn messages and corrections: what a peer
/// needs to put a freshly built body where the authority's is now. 52 bytes, no
/// quantization.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BodyState {
    /// Position.
    pub pos: [f32; 3],
    /// Rotation quaternion, x y z w.
    pub rot: [f32; 4],
    /// Linear velocity.
    pub linvel: [f32; 3],
    /// Angular velocity.
    pub angvel: [f32; 3],
}

impl BodyState {
    /// The state of `body` now.
    pub fn of(body: &RigidBody) -> Self {
        let r = body.rotation();
        BodyState {
            pos: body.translation().to_array(),
            rot: [r.x, r.y, r.z, r.w],
            linvel: body.linvel().to_array(),
            angvel: body.angvel().to_array(),
        }
    }

    /// Puts `body` in this state (waking it). Refuses non-finite values and degenerate
    /// rotations, leaving the body as it was.
    pub fn apply(&self, body: &mut RigidBody) -> Result<(), Error> {
        let all = self
            .pos
            .iter()
            .chain(&self.rot)
            .chain(&self.linvel)
            .chain(&self.angvel);
        if !all.clone().all(|v| v.is_finite()) {
            return Err(Error::Codec(CodecError::InvalidValue(
                "non-finite body state",
            )));
        }
        let q = Quat::from_array(self.rot);
        if q.length_squared() < 1e-6 {
            return Err(Error::Codec(CodecError::InvalidValue(
                "degenerate quaternion",
            )));
        }
        body.set_translation(Vec3::from_array(self.pos), true);
        body.set_rotation(q.normalize(), true);
        body.set_linvel(Vec3::from_array(self.linvel), true);
        body.set_angvel(Vec3::from_array(self.angvel), true);
        Ok(())
    }
}
