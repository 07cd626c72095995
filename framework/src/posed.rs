//! The common kind in a few lines: a body that carries its pose and one decision a tick.
//! Write the decision ([`PoseKind::decide`]) and what it does ([`PoseKind::apply`]);
//! [`Posed`] is the controller: it writes the pose and the decision, pulls a drifting
//! copy back to the authority's pose, and saves the kind's state with serde.

use crate::codec::{Section, SectionWriter};
use crate::controller::{ClientContext, Controller, Legality, WorldView};
use crate::entity::{Entity, EntityRef};
use crate::error::{CodecError, Error};
use crate::pose::{CORRECTION_TOLERANCE, PoseState};
use crate::predict::Steer;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A kind whose section is its body's pose and a decision (see [`Posed`]). Its state is
/// the kind's own fields (derive serde on it): snapshots and recordings carry them. Only
/// `decide` and `apply` are required; the rest have defaults that accept everything, take
/// no input and apply no motion.
pub trait PoseKind: Serialize + DeserializeOwned + Send + 'static {
    /// What the server path decides, sent after the pose.
    type Decision: Serialize + DeserializeOwned;

    /// The server path: decide, reading the entity and the world.
    fn decide(&mut self, me: EntityRef<'_>, world: &WorldView<'_>) -> Self::Decision;

    /// The client path, every frame: act on the decision that came (`None` when no
    /// section came this frame: carry on as before).
    fn apply(&mut self, decision: Option<Self::Decision>, ctx: &mut ClientContext<'_>);

    /// Why this kind refuses a decision that came, if it does: checked on every peer
    /// before anything changes. A refused section leaves the entity as it was, and is in
    /// the frame's report as [`CodecError::InvalidValue`] with the reason, the kind and the
    /// entity (and, on a server, an owner's refused section is illegal). None by default.
    fn refuse(&self, decision: &Self::Decision) -> Option<&'static str> {
        let _ = decision;
        None
    }

    /// On the server, judges a section the entity's owner (a client) sent, once its
    /// decision is not [refused](Self::refuse): its pose and decision against the server's
    /// copy of the entity and world (see [`Controller::validate`]; a `bool` converts). The
    /// default trusts the owner.
    fn validate(&self, claim: &SectionClaim<'_, Self::Decision>) -> Legality {
        let _ = claim;
        Legality::Legal
    }

    /// Takes an input game code hands the entity ([`Controller::take_input`]: recorded,
    /// so a replay hands it over again). The default takes none.
    fn take_input(&mut self, input: &[u8]) -> Result<(), Error> {
        let _ = input;
        Err(Error::Codec(CodecError::InvalidValue(
            "this kind takes no input",
        )))
    }

    /// What it does to its own body every tick (see [`Controller::motion`]): the same code
    /// predicts it.
    fn motion(&self, body: &mut Steer<'_>) {
        body.unsteered = true;
    }
}

/// A section an entity's owner sent, as the server judges it
/// ([`PoseKind::validate`]).
pub struct SectionClaim<'a, D> {
    /// The pose the owner claims.
    pub pose: PoseState,
    /// The decision it sent.
    pub decision: D,
    /// The server's own copy of the entity.
    pub me: EntityRef<'a>,
    /// The server's world.
    pub world: &'a WorldView<'a>,
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
        let kind = &self.0;
        let decision = match section {
            Some(s) => Some(PoseState::take_then(&s, ctx, CORRECTION_TOLERANCE, |r| {
                let d = r.serde::<K::Decision>()?;
                match kind.refuse(&d) {
                    Some(why) => Err(CodecError::InvalidValue(why)),
                    None => Ok(d),
                }
            })?),
            None => None,
        };
        self.0.apply(decision, ctx);
        Ok(())
    }

    fn validate(&self, me: EntityRef<'_>, section: Section<'_>, world: &WorldView<'_>) -> Legality {
        match PoseState::read_with::<K::Decision>(&section) {
            Ok((pose, decision)) if self.0.refuse(&decision).is_none() => {
                let claim = SectionClaim {
                    pose,
                    decision,
                    me,
                    world,
                };
                self.0.validate(&claim)
            }
            _ => Legality::Illegal,
        }
    }

    fn take_input(&mut self, input: &[u8]) -> Result<(), Error> {
        self.0.take_input(input)
    }

    fn motion(&self, body: &mut Steer<'_>) {
        self.0.motion(body);
    }

    fn save_state(&self, out: &mut Vec<u8>) {
        crate::state::save(&self.0, out)
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.0 = crate::state::load(bytes)?;
        Ok(())
    }
}
