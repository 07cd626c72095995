//! Hashing world state for determinism checks.

/// A 64-bit FNV-1a hasher. Fixed and platform-independent, unlike `std`'s `DefaultHasher`,
/// so a hash recorded on one machine can be checked on another.
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

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}
