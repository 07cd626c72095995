//! Whether we may tell a player that lost the host that the host lives: only on news of
//! the host that came after the question did.

use std::collections::VecDeque;
use std::net::SocketAddr;

/// The questions players asked us lately (a hello with a nonce each, knocked again every
/// quarter second), each with when we first heard it (µs).
///
/// A client vouches that its host lives only on a datagram from the host that it took
/// after the question came, never on what it heard before: a process frozen (SIGSTOP) a
/// moment after it last heard its host thaws with that moment's clock, and would vouch
/// for a host that died while it was stopped (explorer seed 2588: a successor took that
/// word and waited, and a spectator went back to the dead host for its grace window). A
/// live host is heard within a heartbeat, so the answer comes at the next knock.
#[derive(Debug, Default, Clone)]
pub(super) struct Questions {
    asked: VecDeque<(SocketAddr, u64, u64)>,
}

/// The most questions remembered: a few players, each asking one at a time.
const KEPT: usize = 16;

impl Questions {
    /// When we first heard `from` ask question `nonce` (now, if this is the first time).
    pub(super) fn first_heard(&mut self, from: SocketAddr, nonce: u64, now: u64) -> u64 {
        if let Some(&(_, _, at)) = self
            .asked
            .iter()
            .find(|(a, n, _)| *a == from && *n == nonce)
        {
            return at;
        }
        if self.asked.len() == KEPT {
            self.asked.pop_front();
        }
        self.asked.push_back((from, nonce, now));
        now
    }
}

#[cfg(test)]
mod tests {
    use super::Questions;
    use std::net::SocketAddr;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn a_question_keeps_the_moment_it_was_first_heard() {
        let mut q = Questions::default();
        assert_eq!(q.first_heard(addr(1), 7, 100), 100);
        assert_eq!(q.first_heard(addr(1), 7, 350), 100);
        // A new question from the same player, or the same nonce from another, is new.
        assert_eq!(q.first_heard(addr(1), 8, 400), 400);
        assert_eq!(q.first_heard(addr(2), 7, 450), 450);
    }

    #[test]
    fn the_oldest_questions_are_forgotten_past_the_bound() {
        let mut q = Questions::default();
        for k in 0..=super::KEPT as u64 {
            q.first_heard(addr(1), k, k);
        }
        assert_eq!(q.asked.len(), super::KEPT);
        // The first was forgotten: asked again, it is new.
        assert_eq!(q.first_heard(addr(1), 0, 1000), 1000);
    }
}
