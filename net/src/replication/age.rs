//! How old the state a client holds is: the 95th percentile and the oldest over the
//! entities it holds, at each broadcast, and a warning while they are stale.

use crate::stats::PeerStats;

/// How old a client's copies are, at one broadcast: how many entities it holds, and the
/// ages in broadcasts of the changed ones since the state it acknowledged (the rest are
/// current).
#[derive(Default)]
pub(super) struct Ages {
    pub(super) held: usize,
    pub(super) stale: Vec<u32>,
}

/// The 95th percentile age (ms) past which the server warns that a client's state goes
/// stale, at most every [`STALE_WARN_EVERY_US`].
const STALE_WARN_MS: f32 = 1000.0;
const STALE_WARN_EVERY_US: u64 = 10_000_000;

impl Ages {
    /// Empty, for the next client (the buffer is kept: no allocation per client and
    /// broadcast).
    pub(super) fn clear(&mut self) {
        self.held = 0;
        self.stale.clear();
    }

    /// Notes the p95 and the oldest in the client's stats, and warns now and then while
    /// they are stale.
    pub(super) fn note(
        &mut self,
        stats: &mut PeerStats,
        (warned, name): (&mut Option<u64>, &str),
        rate: f32,
        now: u64,
    ) {
        let ms = |broadcasts: u32| broadcasts as f32 * 1000.0 / rate;
        let current = self.held.saturating_sub(self.stale.len());
        let at = self.held * 95 / 100;
        let p95 = match at.checked_sub(current) {
            Some(k) if k < self.stale.len() => *self.stale.select_nth_unstable(k).1,
            _ => 0,
        };
        stats.state_age_p95_ms = ms(p95);
        stats.state_age_max_ms = ms(self.stale.iter().copied().max().unwrap_or(0));
        let warn_due = warned.is_none_or(|t| now.saturating_sub(t) >= STALE_WARN_EVERY_US);
        if stats.state_age_p95_ms > STALE_WARN_MS && warn_due {
            *warned = Some(now);
            tracing::warn!(
                "{}: state goes stale (p95 age {:.0} ms, oldest {:.0} ms): the byte budget or \
                 the link ({:.0} kbit/s) cannot carry every change it needs, so bodies go in \
                 turn",
                name,
                stats.state_age_p95_ms,
                stats.state_age_max_ms,
                stats.send_rate * 8.0 / 1000.0
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_age_is_the_95th_percentile_over_every_entity_held() {
        let rate = 20.0;
        let interval_ms = 1000.0 / rate;
        let mut stats = PeerStats::default();
        let mut warned = None;
        // 100 held, 90 current; the 10 stale ones are 1..=10 broadcasts old.
        let mut ages = Ages {
            held: 100,
            stale: (1..=10).rev().collect(),
        };
        ages.note(&mut stats, (&mut warned, "ann"), rate, 0);
        assert_eq!(stats.state_age_p95_ms, 6.0 * interval_ms);
        assert_eq!(stats.state_age_max_ms, 10.0 * interval_ms);
        assert!(warned.is_none(), "no warning under a second");
        // Few stale: the 95th percentile is current.
        let mut ages = Ages {
            held: 100,
            stale: vec![50, 60, 70],
        };
        ages.note(&mut stats, (&mut warned, "ann"), rate, 0);
        assert_eq!(stats.state_age_p95_ms, 0.0);
        assert_eq!(stats.state_age_max_ms, 70.0 * interval_ms);
        // Everything stale for seconds: a warning, then none for a while.
        let stale = |n| Ages {
            held: 10,
            stale: vec![n; 10],
        };
        stale(100).note(&mut stats, (&mut warned, "ann"), rate, 1_000_000);
        assert_eq!(warned, Some(1_000_000));
        stale(100).note(&mut stats, (&mut warned, "ann"), rate, 2_000_000);
        assert_eq!(warned, Some(1_000_000));
    }
}
