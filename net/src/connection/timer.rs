//! Every deadline a connection has, in one table: set, stop, and the next one due.

/// A deadline of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Timer {
    /// Nothing heard from the peer for the timeout: the session ends (`TimedOut`).
    Idle,
    /// Nothing sent to the peer for the heartbeat interval: send an empty datagram.
    Heartbeat,
    /// The oldest unacknowledged reliable message is too old: the session ends
    /// (`ReliableExpired`).
    ReliableExpiry,
    /// A client's handshake datagram is due again (hello or connect).
    Retry,
    /// A client's handshake has taken too long: give up (`ConnectFailed`).
    GiveUp,
}

const COUNT: usize = 5;

/// The table of deadlines, in microseconds of the owner's clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TimerTable {
    at: [Option<u64>; COUNT],
}

impl TimerTable {
    /// Sets `timer` to fire at `when`.
    pub(crate) fn set(&mut self, timer: Timer, when: u64) {
        self.at[timer as usize] = Some(when);
    }

    /// Stops `timer`.
    pub(crate) fn stop(&mut self, timer: Timer) {
        self.at[timer as usize] = None;
    }

    /// When `timer` fires, if it is set.
    pub(crate) fn get(&self, timer: Timer) -> Option<u64> {
        self.at[timer as usize]
    }

    /// Whether `timer` is set and due at `now`.
    pub(crate) fn is_due(&self, timer: Timer, now: u64) -> bool {
        self.get(timer).is_some_and(|t| t <= now)
    }

    /// The earliest deadline, if any is set.
    pub(crate) fn next_timeout(&self) -> Option<u64> {
        self.at.iter().flatten().min().copied()
    }

    /// Every timer due at `now`, earliest first (stopped as they are returned).
    pub(crate) fn expired(&mut self, now: u64) -> Vec<Timer> {
        let all = [
            Timer::Idle,
            Timer::Heartbeat,
            Timer::ReliableExpiry,
            Timer::Retry,
            Timer::GiveUp,
        ];
        let mut due: Vec<(u64, Timer)> = all
            .into_iter()
            .filter_map(|t| self.get(t).filter(|&w| w <= now).map(|w| (w, t)))
            .collect();
        due.sort();
        for (_, t) in &due {
            self.stop(*t);
        }
        due.into_iter().map(|(_, t)| t).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_timeout_is_the_earliest_set_and_expired_ones_come_in_order() {
        let mut t = TimerTable::default();
        assert_eq!(t.next_timeout(), None);
        t.set(Timer::Idle, 500);
        t.set(Timer::Heartbeat, 100);
        t.set(Timer::Retry, 300);
        assert_eq!(t.next_timeout(), Some(100));
        t.stop(Timer::Heartbeat);
        assert_eq!(t.next_timeout(), Some(300));
        assert!(t.expired(299).is_empty());
        assert_eq!(t.expired(600), vec![Timer::Retry, Timer::Idle]);
        assert_eq!(t.next_timeout(), None);
    }
}
