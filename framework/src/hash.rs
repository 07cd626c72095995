//! Hashing world state for determinism checks.

/// A 64-bit FNV-1a hasher (and a faster word-at-a-time mix, [`word`](Self::word)). Fixed and
/// platform-independent, unlike `std`'s `DefaultHasher`, so a hash recorded on one machine
/// can be checked on another.
#[derive(Debug, Clone, Copy)]
pub struct StateHasher(u64);

impl Default for StateHasher {
    fn default() -> Self {
        StateHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl StateHasher {
    /// A fresh hasher.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes.
    pub fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Feeds a `u32`, little-endian.
    pub fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }

    /// Feeds the exact bits of an `f32` (so `-0.0` and `0.0` differ, as they do in memory).
    pub fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }

    /// Feeds 8 bytes at once, with a mix of its own (a multiply and a shift, both
    /// invertible, so a changed word always changes the hash): eight times fewer steps
    /// than [`bytes`](Self::bytes), for the state hash every recorded tick takes.
    pub fn word(&mut self, w: u64) {
        self.0 = (self.0 ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 ^= self.0 >> 29;
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_word_anywhere_changes_the_hash() {
        let words = [1u64, 2, 3, 4, 5];
        let of = |ws: &[u64]| {
            let mut h = StateHasher::new();
            ws.iter().for_each(|w| h.word(*w));
            h.finish()
        };
        let base = of(&words);
        for i in 0..words.len() {
            for bit in [0, 31, 63] {
                let mut changed = words;
                changed[i] ^= 1 << bit;
                assert_ne!(of(&changed), base, "word {i}, bit {bit}");
            }
        }
    }
}
