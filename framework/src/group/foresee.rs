//! The default prediction of one entity's pose: its kind's own motion and rapier's free
//! flight (a body at rest stays: [`at_rest`](crate::predict::at_rest)), as
//! [`crate::predict`] describes, behind a [`DeltaCodec`] the network layer asks the group
//! for.

use crate::controller::Controller;
use crate::delta::{DeltaCodec, PoseDelta};
use crate::error::Error;
use crate::group::EntityGroup;
use crate::id::EntityId;
use crate::pose::PoseState;
use crate::predict::{FreeFlight, Steer, Tolerance, poses_agree, predict_pose};

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

impl DeltaCodec for PoseCodec<'_> {
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

    /// `dt` is the group's own step, which [`FreeFlight`] already holds.
    fn predict(&self, base: &[u8], ticks: u32, _dt: f32, out: &mut Vec<u8>) -> bool {
        let Some((controller, flight)) = self.motion() else {
            return false;
        };
        predict_pose(base, ticks, out, |s| tick(controller, &flight, s))
    }

    fn agrees(&self, predicted: &[u8], actual: &[u8]) -> bool {
        poses_agree(&self.tolerance, predicted, actual)
    }
}
