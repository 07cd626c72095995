//! The common kind in a few lines: a body that carries its pose and one decision a tick.
//! Write the decision ([`PoseKind::decide`]) and what it does ([`PoseKind::apply`]);
//! [`Posed`] is the controller: it writes the pose and the decision, pulls a drifting
//! copy back to the authority's pose, and saves the kind's state with serde.

use crate::codec::{Section, SectionWriter};
use crate::controller::{ClientContext, Controller, WorldView};
use crate::entity::{Entity, EntityRef};
use crate::error::Error;
use crate::pose::{CORRECTION_TOLERANCE, PoseState};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A kind whose section is its body's pose and a decision (see [`Posed`]). Its state is
/// the kind's own fields (derive serde on it): snapshots and recordings carry them.
pub trait PoseKind: Serialize + DeserializeOwned + Send + 'static {
    /// What the server path decides, sent after the pose.
    type Decision: Serialize + DeserializeOwned;

    /// The server path: decide, reading the entity and the world.
    fn decide(&mut self, me: EntityRef<'_>, world: &WorldView<'_>) -> Self::Decision;

    /// The client path, every frame: act on the decision that came (`None` when no
    /// section came this frame: carry on as before).
    fn apply(&mut self, decision: Option<Self::Decision>, ctx: &mut ClientContext<'_>);
}

/// The controller of a [`PoseKind`]: `Box::new(Posed(MyKind { .. }))`. Its sections read
/// by field in decision-replay reports once registered with
/// `describe_sections(name, PoseState::fields_with::<MyKind::Decision>)`.
pub struct Posed<K>(pub K);

impl<K: PoseKind> Controller for Posed<K> {
    fn server_update(
        &mut self,
        me: EntityRef<'_>,
        world: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    ) {
        let decision = self.0.decide(me, world);
        PoseState::write_with(me.body(), &decision, out);
    }

    fn client_update(
        &mut self,
        _me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        let decision = match section {
            Some(s) => Some(PoseState::take_then(&s, ctx, CORRECTION_TOLERANCE, |r| {
                r.serde::<K::Decision>()
            })?),
            None => None,
        };
        self.0.apply(decision, ctx);
        Ok(())
    }

    fn save_state(&self, out: &mut Vec<u8>) {
        crate::state::save(&self.0, out)
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.0 = crate::state::load(bytes)?;
        Ok(())
    }
}
