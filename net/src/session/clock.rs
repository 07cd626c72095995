//! A peer's clock as this side reckons it, from the millisecond stamps its datagrams carry.

/// The time, in seconds, of a datagram stamped `ms` on a peer's clock, given the last stamp
/// read (`clock`): the stamps wrap every 65.5 s, so each is read as the nearest one to the
/// last.
pub(crate) fn unwrap_ms(clock: &mut Option<(u16, f64)>, ms: u16) -> f64 {
    let t = match *clock {
        None => f64::from(ms) / 1000.0,
        Some((last, secs)) => secs + f64::from(ms.wrapping_sub(last) as i16) / 1000.0,
    };
    if clock.is_none_or(|(_, s)| t > s) {
        *clock = Some((ms, t));
    }
    t
}

/// When, on the server's clock, a client sent what its datagrams carry: the client's own
/// stamp moved by the trend of arrival less stamp (the clocks' offset and the mean one-way
/// delay), less the mean one-way delay (half the wire's round trip: the caller's round trip
/// must leave out the time either side held a datagram before answering it, or every send
/// is reckoned early by half that). A datagram that took longer than most is reckoned sent
/// when it was, not when it arrived.
#[derive(Debug, Clone, Default)]
pub(crate) struct PeerClock {
    stamps: Option<(u16, f64)>,
    /// The trend of arrival (our clock) less the peer's stamp, seconds.
    gap: Option<f64>,
}

impl PeerClock {
    /// A datagram stamped `ms` arrived at `arrived` (our clock, seconds) over a link whose
    /// round trip is `rtt` seconds: when, on our clock, the peer sent it.
    pub(crate) fn sent_at(&mut self, ms: u16, arrived: f64, rtt: f64) -> f64 {
        let stamp = unwrap_ms(&mut self.stamps, ms);
        let d = arrived - stamp;
        let gap = match self.gap {
            // A restart of either clock, or a first datagram: start over.
            Some(g) if (d - g).abs() < 1.0 => g + 0.05 * (d - g),
            _ => d,
        };
        self.gap = Some(gap);
        (stamp + gap - rtt.max(0.0) / 2.0).min(arrived)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_datagram_is_reckoned_sent_when_it_was() {
        let mut c = PeerClock::default();
        // The peer's clock runs 5 s behind ours; one-way delays of 40 ms, round trip 80.
        for k in 0..200 {
            let sent: f64 = 10.0 + f64::from(k) * 0.05;
            let ms = ((sent - 5.0) * 1000.0).round() as u64 as u16;
            let at = c.sent_at(ms, sent + 0.04, 0.08);
            assert!((at - sent).abs() < 0.002, "{at} against {sent}");
        }
        // One that took 70 ms more than most: still sent when it was.
        let sent: f64 = 20.0;
        let ms = ((sent - 5.0) * 1000.0).round() as u64 as u16;
        let at = c.sent_at(ms, sent + 0.11, 0.08);
        assert!((at - sent).abs() < 0.006, "{at} against {sent}");
    }

    #[test]
    fn stamps_wrap() {
        let mut clock = None;
        assert_eq!(unwrap_ms(&mut clock, 65_000), 65.0);
        assert!((unwrap_ms(&mut clock, 100) - 65.636).abs() < 1e-9);
        // A reordered one from before the wrap reads as before it.
        assert!((unwrap_ms(&mut clock, 65_500) - 65.5).abs() < 1e-9);
    }
}
