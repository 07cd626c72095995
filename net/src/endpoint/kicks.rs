//! The sessions a server kicked, remembered for a grace window: a client that could not
//! hear the kick (it was stopped, or cut off) and comes back to resume its session is told
//! it was kicked, not that the session expired (which would let a stepped-down host join
//! the game anew: explorer seed 1344). A connect of a kicked session's own handshake, sent
//! again because its welcome and our goodbye were still on their way, is refused as kicked
//! too, not taken for a new session (explorer seed 9473).

use crate::crypto::{self, Key};
use crate::wire::Resume;
use lanyard::ClientId;

/// The most kicks remembered at once: the oldest is forgotten first.
const KICKS_MOST: usize = 32;

/// One kick: the session's id and token (a resume proves it), why, and until when (µs).
#[derive(Clone)]
struct Kick {
    client: ClientId,
    token: Key,
    reason: String,
    until: u64,
}

/// The kicks a server remembers.
#[derive(Clone, Default)]
pub(crate) struct Kicks(Vec<Kick>);

impl Kicks {
    /// Session `client` (of `token`) was kicked for `reason`: remembered until `until`
    /// (µs), when its grace window would have ended.
    pub(crate) fn remember(&mut self, client: ClientId, token: Key, reason: &str, until: u64) {
        if self.0.len() >= KICKS_MOST {
            self.0.remove(0);
        }
        self.0.push(Kick {
            client,
            token,
            reason: reason.to_owned(),
            until,
        });
    }

    /// Why the session whose token is `token` was kicked, if it was within its window at
    /// `now` (µs): a connect under a kicked session's key is that session's handshake
    /// sent again, not a new session.
    pub(crate) fn of_session(&mut self, token: &Key, now: u64) -> Option<String> {
        self.0.retain(|k| now < k.until);
        let kick = self.0.iter().find(|k| crypto::same(&k.token, token));
        kick.map(|k| k.reason.clone())
    }

    /// Why the session that `claim` (under session key `key`) proves was kicked, if it was
    /// within its window at `now` (µs).
    pub(crate) fn of(&mut self, claim: &Resume, key: &Key, now: u64) -> Option<String> {
        self.0.retain(|k| now < k.until);
        let proven = |k: &&Kick| crypto::same(&crypto::resume_proof(&k.token, key), &claim.proof);
        self.0
            .iter()
            .filter(|k| k.client == claim.client)
            .find(proven)
            .map(|k| k.reason.clone())
    }
}
