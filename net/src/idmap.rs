//! Hash maps keyed by the ids the server assigns (network ids, broadcast numbers): a
//! multiply-rotate hash in place of SipHash, which a broadcast would otherwise pay a few
//! times for every entity. Only for keys no peer chooses: a client's own provisional ids
//! stay in maps with the default hasher.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The hasher of an [`IdMap`].
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

impl IdHasher {
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(26) ^ v).wrapping_mul(MIX);
    }
}

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.add(u64::from(*b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
}

/// A hash map keyed by server-assigned ids.
pub(crate) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use lanyard::NetId;

    #[test]
    fn ids_hash_apart_and_the_map_behaves_as_a_map() {
        let mut m: IdMap<(NetId, u32), u32> = IdMap::default();
        for n in 0..1000u32 {
            m.insert((NetId(n), n / 7), n);
        }
        assert_eq!(m.len(), 1000);
        assert!((0..1000u32).all(|n| m.get(&(NetId(n), n / 7)) == Some(&n)));
        let hash = |n: u32| {
            let mut h = IdHasher::default();
            h.write_u32(n);
            h.finish()
        };
        // Neighbouring ids differ in their top bits too (hashbrown's control bytes).
        assert_ne!(hash(1) >> 57, hash(2) >> 57);
    }
}
