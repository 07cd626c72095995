//! Our player's throw at a point: the flat throw that lands there, or a lob over what
//! stands in its way ([`aim::aim_over`]), judged on the world as this peer sees it.

use super::{Game, fuse};
use crate::{aim, kinds};
use lanyard::KindId;
use lanyard::prelude::*;

impl Game {
    /// The throw that lands our player's grenade on `target` (a point on a crate, a block
    /// or the ground): the flat one, or the flattest lob over the crates, players and
    /// blocks that would set it off on the way. None if we have no player.
    pub fn throw_at(&self, target: Vec3) -> Option<Vec3> {
        let me = self.my_player()?;
        let from = self.group.get(me)?.body().translation();
        let gravity = -self.group.config().gravity.y;
        let grenade = KindId::of_name(kinds::GRENADE);
        let radius = kinds::GRENADE_RADIUS;
        let hits = |p: Vec3| {
            let body = |e: &EntityRef<'_>| {
                e.id() != me && e.kind() != grenade && fuse::touches(p, radius, e)
            };
            self.group.iter().any(|e| body(&e)) || self.on_block(p, radius)
        };
        Some(aim::aim_over(
            from,
            target,
            &self.scene.tuning,
            gravity,
            hits,
        ))
    }
}
