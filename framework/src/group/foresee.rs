//! The default prediction of one entity's pose: its kind's own motion and rapier's free
//! flight (a body at rest stays: [`at_rest`]), as [`crate::predict`] describes, behind a
//! [`DeltaCodec`] the network layer asks the group for.

use crate::codec::{SectionReader, SectionWriter};
use crate::controller::Controller;
use crate::delta::{DeltaCodec, PoseDelta};
use crate::error::Error;
use crate::group::EntityGroup;
use crate::id::EntityId;
use crate::pose::PoseState;
use crate::predict::{FreeFlight, MAX_PREDICTED_TICKS, Steer, Tolerance, at_rest};

/// The delta codec of one entity whose section starts with a pose and whose kind set no
/// codec of its own ([`EntityGroup::pose_codec`]): a [`PoseDelta`] against a prediction
/// that runs, each tick, the controller's [motion](Controller::motion) and then the
/// body's [`FreeFlight`]; it judges a prediction by the kind's
/// [tolerance](crate::KindOptions::tolerance).
#[derive(Clone, Copy)]
pub struct PoseCodec<'a> {
    group: &'a EntityGroup,
    id: EntityId,
    tolerance: Tolerance,
}

impl std::fmt::Debug for PoseCodec<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoseCodec")
            .field("id", &self.id)
            .field("tolerance", &self.tolerance)
            .finish_non_exhaustive()
    }
}

impl<'a> PoseCodec<'a> {
    /// The codec of entity `id` of `group`, judged by `tolerance` (its kind's,
    /// [`KindRegistry::tolerance`](crate::KindRegistry::tolerance)): what
    /// [`EntityGroup::pose_codec`] gives, for a caller that has the kind's tolerance at
    /// hand. The entity is looked up only when a prediction is asked for.
    pub fn new(group: &'a EntityGroup, id: EntityId, tolerance: Tolerance) -> Self {
        PoseCodec {
            group,
            id,
            tolerance,
        }
    }

    /// The entity's controller and the flight of its body, if it is still there.
    fn motion(&self) -> Option<(&'a dyn Controller, FreeFlight)> {
        let g = self.group;
        let e = g.get(self.id)?;
        let controller = g.controllers.get(self.id.index as usize)?.as_deref()?;
        let flight = FreeFlight::of(
            e.body(),
            &g.physics.integration_parameters,
            g.config.gravity,
        );
        Some((controller, flight))
    }
}

impl EntityGroup {
    /// The default codec of entity `id`'s sections when they start with a pose (see
    /// [`crate::predict`]): `None` if there is no such entity, or its kind set a codec of
    /// its own ([`KindRegistry::set_delta_codec`](crate::KindRegistry::set_delta_codec)).
    /// Both ends of a session ask their own group for it, and predict alike.
    pub fn pose_codec(&self, id: EntityId) -> Option<PoseCodec<'_>> {
        let kind = self.get(id)?.kind();
        if self.registry.has_own_codec(kind) {
            return None;
        }
        Some(PoseCodec::new(self, id, self.registry.tolerance(kind)))
    }
}

/// One tick of the state `s`: `controller`'s motion, then the physics step.
fn tick(controller: &dyn Controller, flight: &FreeFlight, s: &mut PoseState) {
    controller.motion(&mut Steer::state(s, flight.dt));
    flight.step(s);
}

fn read_pose(b: &[u8]) -> Option<PoseState> {
    PoseState::read(&mut SectionReader::new(b.get(..PoseState::LEN)?)).ok()
}

impl DeltaCodec for PoseCodec<'_> {
    fn encode(&self, base: &[u8], cur: &[u8], out: &mut Vec<u8>) {
        PoseDelta::default().encode(base, cur, out);
    }

    fn decode(&self, base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        PoseDelta::default().decode(base, delta, out)
    }

    fn predicts(&self) -> bool {
        true
    }

    fn tolerance(&self) -> Option<Tolerance> {
        Some(self.tolerance)
    }

    /// `dt` is the group's own step, which [`FreeFlight`] already holds.
    fn predict(&self, base: &[u8], ticks: u32, _dt: f32, out: &mut Vec<u8>) -> bool {
        if ticks > MAX_PREDICTED_TICKS {
            return false;
        }
        let (Some(mut s), Some((controller, flight))) = (read_pose(base), self.motion()) else {
            return false;
        };
        if at_rest(base) {
            out.extend_from_slice(base);
            return true;
        }
        // A motion is the kind's own code: one that panics predicts nothing.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for _ in 0..ticks {
                tick(controller, &flight, &mut s);
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

    fn agrees(&self, predicted: &[u8], actual: &[u8]) -> bool {
        match (read_pose(predicted), read_pose(actual)) {
            (Some(p), Some(a)) => {
                predicted[PoseState::LEN..] == actual[PoseState::LEN..]
                    && self.tolerance.holds(&p, &a)
            }
            _ => predicted == actual,
        }
    }
}
