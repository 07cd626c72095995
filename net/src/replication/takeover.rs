//! A new host's replication, started from what it heard as a client.

use super::ServerReplication;
use lanyard::{ClientId, NetId};

impl ServerReplication {
    /// A new host's replication: what it heard last, as a client, of each other client's
    /// entity (`last_words`: the entity, its owner and the section) goes out as that
    /// client's newest section, until the client sends one itself. A player whose owner
    /// went with the old host (killed, or quit while the game migrated) is held where its
    /// last section put it: where this host heard it last, not where each follower did
    /// (explorer seeds 1316 and 1221: a follower that heard later sections than the new
    /// host held the player 8 m from the new host's copy for good).
    pub(crate) fn after_takeover(last_words: Vec<(NetId, ClientId, Vec<u8>)>, now: u64) -> Self {
        let sent = now as f64 / 1e6;
        let mut repl = ServerReplication::default();
        repl.forward = last_words
            .into_iter()
            .map(|(net, owner, bytes)| (net, (owner, bytes, sent)))
            .collect();
        repl
    }
}
