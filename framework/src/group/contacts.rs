//! Which entities touch which, and how far apart two are: what a network layer asks when
//! authority over a body passes to the player who pushes it.

use super::EntityGroup;
use crate::id::EntityId;
use rapier3d::glamx::glam::Vec3;
use rapier3d::prelude::RigidBodyHandle;

impl EntityGroup {
    /// Whether entity `id`'s body touches anything now (an active contact with an entity
    /// or with scenery, after the last frame's step). False for no such entity.
    pub fn touches_anything(&self, id: EntityId) -> bool {
        let Some(b) = self
            .get(id)
            .and_then(|e| self.physics.bodies.get(e.entity().body))
        else {
            return false;
        };
        b.colliders().iter().any(|&c| {
            self.physics
                .contact_pairs_with(c)
                .any(|pair| pair.has_any_active_contact())
        })
    }

    /// The pairs (one of `ids`, an entity its body touches) with an active contact now
    /// (after the last frame's step), each once, in no particular order. Bodies that only
    /// touch scenery (colliders of no entity) have no pairs.
    pub fn contacts_of(&self, ids: &[EntityId]) -> Vec<(EntityId, EntityId)> {
        // The bodies each of `ids` touches (usually a few), then the entities they carry.
        let mut touched: Vec<(EntityId, RigidBodyHandle)> = Vec::new();
        for &id in ids {
            let Some(body) = self.get(id).map(|e| e.entity().body) else {
                continue;
            };
            let Some(b) = self.physics.bodies.get(body) else {
                continue;
            };
            for &collider in b.colliders() {
                for pair in self.physics.contact_pairs_with(collider) {
                    if !pair.has_any_active_contact() {
                        continue;
                    }
                    let other = if pair.collider1 == collider {
                        pair.collider2
                    } else {
                        pair.collider1
                    };
                    let parent = self.physics.colliders.get(other).and_then(|c| c.parent());
                    if let Some(p) = parent
                        && p != body
                        && !touched.contains(&(id, p))
                    {
                        touched.push((id, p));
                    }
                }
            }
        }
        if touched.is_empty() {
            return Vec::new();
        }
        let mut pairs = Vec::new();
        for e in self.iter() {
            let body = e.entity().body;
            for &(id, _) in touched.iter().filter(|t| t.1 == body) {
                pairs.push((id, e.id()));
            }
        }
        pairs
    }

    /// The gap in metres between the bounding boxes of two entities' colliders (0 when
    /// they overlap); `None` if either is not here or has no collider.
    pub fn gap(&self, a: EntityId, b: EntityId) -> Option<f32> {
        let (a, b) = (self.aabb(a)?, self.aabb(b)?);
        let axis =
            |lo_a: f32, hi_a: f32, lo_b: f32, hi_b: f32| (lo_a - hi_b).max(lo_b - hi_a).max(0.0);
        let d = Vec3::new(
            axis(a.0.x, a.1.x, b.0.x, b.1.x),
            axis(a.0.y, a.1.y, b.0.y, b.1.y),
            axis(a.0.z, a.1.z, b.0.z, b.1.z),
        );
        Some(d.length())
    }

    /// The bounding box (lowest and highest corner) of an entity's colliders.
    fn aabb(&self, id: EntityId) -> Option<(Vec3, Vec3)> {
        let body = self.physics.bodies.get(self.get(id)?.entity().body)?;
        let mut boxes = body
            .colliders()
            .iter()
            .filter_map(|&c| self.physics.colliders.get(c))
            .map(|c| c.compute_aabb());
        let first = boxes.next()?;
        let (mut lo, mut hi) = (first.mins, first.maxs);
        for b in boxes {
            lo = lo.min(b.mins);
            hi = hi.max(b.maxs);
        }
        Some((lo, hi))
    }
}
