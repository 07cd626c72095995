//! How many hellos the server answers: at most [`PER_SOURCE`] a second from one IP address
//! and [`GLOBAL`] a second in all. A flood of hellos then costs the server a few hashes a
//! second per source and draws no more than the global cap of challenges; what it drops is
//! counted ([`NetCounters::hellos_dropped`](crate::NetCounters::hellos_dropped)).
//!
//! The table of sources holds at most [`SOURCES`] addresses a second: a source past that
//! counts against the global cap only, so a flood from many addresses costs no memory.

use std::collections::HashMap;
use std::net::IpAddr;

/// Hellos answered a second from one IP address: a client retries every 0.25 s, and a
/// few players behind one address join together.
pub(crate) const PER_SOURCE: u32 = 32;
/// Hellos answered a second in all.
pub(crate) const GLOBAL: u32 = 1_000;
/// Sources counted a second, at most.
const SOURCES: usize = 4_096;
/// The length of a counting window, µs.
const WINDOW_US: u64 = 1_000_000;

/// Counts the hellos of the current second.
#[derive(Default, Clone)]
pub(crate) struct HelloLimiter {
    /// When (µs) the current window began.
    since: u64,
    /// Hellos answered in it.
    answered: u32,
    /// Hellos answered in it, by source.
    by_source: HashMap<IpAddr, u32>,
}

impl HelloLimiter {
    /// Whether a hello from `from` at `now` (µs) may be answered; counts it if so.
    pub(crate) fn allow(&mut self, from: IpAddr, now: u64) -> bool {
        if now.saturating_sub(self.since) >= WINDOW_US {
            self.since = now;
            self.answered = 0;
            self.by_source.clear();
        }
        if self.answered >= GLOBAL {
            return false;
        }
        let known = self.by_source.len() < SOURCES || self.by_source.contains_key(&from);
        if known {
            let n = self.by_source.entry(from).or_default();
            if *n >= PER_SOURCE {
                return false;
            }
            *n += 1;
        }
        self.answered += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_source_and_all_sources_are_capped_per_second() {
        let mut l = HelloLimiter::default();
        let a: IpAddr = "127.0.0.2".parse().unwrap();
        let answered = (0..100).filter(|_| l.allow(a, 10)).count();
        assert_eq!(answered, PER_SOURCE as usize);
        let many = (0..5_000u32)
            .filter(|i| l.allow(IpAddr::from(i.to_be_bytes()), 20))
            .count();
        assert_eq!(many, (GLOBAL - PER_SOURCE) as usize);
        // A second later, both counts start again.
        assert!(l.allow(a, 1_000_020));
    }
}
