//! Slot numbers for the server's entities: small dense integers, reused after a despawn,
//! that index the flat per-client arrays of [`Ents`](crate::session::baseline::Ents) and
//! the per-broadcast arrays of the world's state.

use crate::idmap::IdMap;
use lanyard::NetId;

/// Each live entity's slot.
#[derive(Default, Clone)]
pub(super) struct Slots {
    of: IdMap<NetId, u32>,
    /// By the server group's own index of an entity: its network id and slot, as last
    /// looked up. The group walks its entities in an order close to their indices, so a
    /// broadcast reads this front to back instead of probing the map a thousand times.
    by_index: Vec<Option<(NetId, u32)>>,
    free: Vec<u32>,
    /// How many slots were ever handed out (the arrays' length).
    len: u32,
}

impl Slots {
    /// Entity `net`'s slot, handed out now if it has none.
    pub(super) fn of(&mut self, net: NetId) -> u32 {
        if let Some(s) = self.of.get(&net) {
            return *s;
        }
        let s = self.free.pop().unwrap_or_else(|| {
            self.len += 1;
            self.len - 1
        });
        self.of.insert(net, s);
        s
    }

    /// The slot of entity `net`, whose index in the server's group is `index`
    /// ([`EntityId::index`](lanyard::EntityId::index)): [`of`](Self::of), remembered by
    /// that index. A remembered slot is used only for the same network id, and network ids
    /// are never reused, so a stale one is never taken.
    pub(super) fn of_entity(&mut self, index: u32, net: NetId) -> u32 {
        let i = index as usize;
        if let Some(&Some((n, s))) = self.by_index.get(i)
            && n == net
        {
            return s;
        }
        let s = self.of(net);
        if i >= self.by_index.len() {
            self.by_index.resize(i + 1, None);
        }
        self.by_index[i] = Some((net, s));
        s
    }

    /// Entity `net`'s slot, if it has one.
    pub(super) fn get(&self, net: NetId) -> Option<u32> {
        self.of.get(&net).copied()
    }

    /// Entity `net` is gone: its slot may be handed out again. Every client's view must
    /// have let it go first. What [`of_entity`](Self::of_entity) remembered for it stays:
    /// it is kept under a network id no entity will have again, so it is never taken (and
    /// a release costs no search).
    pub(super) fn release(&mut self, net: NetId) {
        if let Some(s) = self.of.remove(&net) {
            self.free.push(s);
        }
    }

    /// How many slots there are: every slot is below this.
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_dense_stable_and_reused_after_release() {
        let mut s = Slots::default();
        assert_eq!(
            (s.of(NetId(40)), s.of(NetId(7)), s.of(NetId(40))),
            (0, 1, 0)
        );
        s.release(NetId(40));
        assert_eq!(s.get(NetId(40)), None);
        assert_eq!(s.of(NetId(9)), 0, "the released slot comes back");
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn a_slot_remembered_by_group_index_is_the_same_slot_and_never_a_stale_one() {
        let mut s = Slots::default();
        assert_eq!(s.of_entity(3, NetId(40)), 0);
        assert_eq!(s.of_entity(0, NetId(41)), 1);
        assert_eq!(s.of_entity(3, NetId(40)), 0);
        assert_eq!(s.of(NetId(41)), 1, "the map and the index agree");
        // Entity 40 goes; its group index is reused by entity 50, which gets the freed slot
        // through the map, not the remembered one.
        s.release(NetId(40));
        assert_eq!(s.of_entity(3, NetId(50)), 0);
        assert_eq!(s.get(NetId(50)), Some(0));
        assert_eq!(s.get(NetId(40)), None);
        // Index 0 now names entity 50 too (a group index can move): still by network id.
        assert_eq!(s.of_entity(0, NetId(50)), 0);
        assert_eq!(s.of_entity(0, NetId(41)), 1);
    }
}
