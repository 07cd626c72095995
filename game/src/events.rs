//! Game events: what the server tells every peer on the reliable channel.

use lanyard::{NetId, Owner};
use serde::{Deserialize, Serialize};

/// A game event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum GameEvent {
    /// A grenade went off.
    Explosion {
        /// Where.
        at: [f32; 3],
        /// Who threw it.
        thrower: Owner,
        /// The grenade.
        grenade: NetId,
    },
    /// The score table, highest first.
    Scores {
        /// Player names and points.
        table: Vec<(String, u32)>,
    },
    /// A point: `name` put a crate (or a player) off the yard at `at`. Sent with the
    /// score table that counts it, for a popup.
    Point {
        /// Who scored.
        name: String,
        /// Where the body was when it went.
        at: [f32; 3],
    },
    /// Part of the server's arena (its scene, bincode-encoded, split in parts that each fit
    /// a reliable message), sent to each client as it joins.
    Arena {
        /// Which part this is, from 0.
        part: u16,
        /// How many parts there are.
        parts: u16,
        /// Its bytes.
        bytes: Vec<u8>,
    },
    /// Client to server: a chat line its player typed.
    Chat {
        /// What they typed.
        text: String,
    },
    /// Server to everyone: a chat line, cleaned, and who said it.
    ChatLine {
        /// The player's name.
        from: String,
        /// The line.
        text: String,
    },
    /// A line from the server's operator (`say` on the console), for every peer to show.
    Say {
        /// The line (a peer removes control characters before showing it).
        text: String,
    },
}

impl GameEvent {
    /// The bytes sent.
    pub fn encode(&self) -> Vec<u8> {
        bincode::serde::encode_to_vec(self, bincode::config::standard()).unwrap_or_default()
    }

    /// Reads an event; `None` for bytes that are not one.
    pub fn decode(bytes: &[u8]) -> Option<GameEvent> {
        let cfg = bincode::config::standard().with_limit::<4096>();
        match bincode::serde::decode_from_slice(bytes, cfg) {
            Ok((e, n)) if n == bytes.len() => Some(e),
            _ => None,
        }
    }
}
