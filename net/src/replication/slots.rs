//! Slot numbers for the server's entities: small dense integers, reused after a despawn,
//! that index the flat per-client arrays of [`Ents`](crate::session::baseline::Ents) and
//! the per-broadcast arrays of the world's state.

use crate::idmap::IdMap;
use lanyard::NetId;

/// Each live entity's slot.
#[derive(Default, Clone)]
pub(super) struct Slots {
    of: IdMap<NetId, u32>,
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

    /// Entity `net`'s slot, if it has one.
    pub(super) fn get(&self, net: NetId) -> Option<u32> {
        self.of.get(&net).copied()
    }

    /// Entity `net` is gone: its slot may be handed out again. Every client's view must
    /// have let it go first.
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
}
