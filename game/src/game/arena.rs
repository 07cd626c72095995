//! The arena travels: the server sends its scene in parts to each client that joins; a
//! client whose arena differs rebuilds its world on the server's and asks for the world
//! again.

use super::Game;
use crate::events::GameEvent;
use crate::scene::Scene;
use crate::witness::TakenPoses;
use lanyard::prelude::*;

/// The bytes of the arena one reliable message carries: a whole arena of the usual size
/// (a reliable message larger than a datagram travels as fragments, up to
/// `lanyard_net::MAX_MESSAGE`); a larger one goes in parts of this size.
const ARENA_PART: usize = 64 * 1024;

/// Client: the server's arena as it comes in, part by part.
#[derive(Debug, Default)]
pub(super) struct Arrival {
    /// The parts received so far, until it is whole.
    parts: Vec<Option<Vec<u8>>>,
    /// Whether it came whole (then the player is spawned).
    whole: bool,
}

impl Arrival {
    /// Part `part` of `parts` came: the whole arena's bytes once this makes it whole
    /// (once; later parts are ignored).
    fn take(&mut self, part: u16, parts: u16, bytes: Vec<u8>) -> Option<Vec<u8>> {
        if self.whole || parts == 0 || part >= parts {
            return None;
        }
        if self.parts.len() != usize::from(parts) {
            self.parts = vec![None; usize::from(parts)];
        }
        self.parts[usize::from(part)] = Some(bytes);
        if self.parts.iter().any(Option::is_none) {
            return None;
        }
        self.whole = true;
        Some(self.parts.drain(..).flatten().flatten().collect())
    }
}

impl Game {
    /// Server: sends a client that just joined the arena it plays, in parts.
    pub(super) fn send_arena(&mut self, client: ClientId) {
        let bytes = self.scene.encode();
        let chunks: Vec<&[u8]> = bytes.chunks(ARENA_PART).collect();
        let parts = chunks.len() as u16;
        for (part, chunk) in chunks.into_iter().enumerate() {
            let event = GameEvent::Arena {
                part: part as u16,
                parts,
                bytes: chunk.to_vec(),
            };
            if let Err(e) = self.link.net_mut().send_event_to(client, event.encode()) {
                self.say(format!("cannot send the arena: {e}"));
                return;
            }
        }
    }

    /// Client: a part of the server's arena. Once it is whole: if it is not ours, the
    /// world is rebuilt on it and the server asked for everything again; then our player
    /// comes.
    pub(super) fn arena_part(&mut self, part: u16, parts: u16, bytes: Vec<u8>) {
        if self.is_server() {
            return;
        }
        let Some(whole) = self.arena.take(part, parts, bytes) else {
            return;
        };
        let theirs = match Scene::decode(&whole) {
            Ok(s) => s,
            Err(e) => {
                let sentence = format!("the server's arena is broken: {e}");
                self.standing.end(sentence, "connection lost".into());
                return;
            }
        };
        let Some(client) = self.link.net().client_id() else {
            return;
        };
        if theirs != self.scene {
            self.say(format!("the server plays '{}': loading it", theirs.name));
            self.group = Self::world(&theirs, Role::Client(client));
            self.received = TakenPoses::default();
            self.scene = theirs.clone();
            self.options.scene = theirs;
            if let Err(e) = self.link.net_mut().resend_world() {
                self.say(format!("cannot reload the world: {e}"));
            }
            if let Some(sink) = self.recorder.sink() {
                // The recording names its arena at the start: start it again on this one.
                if let Err(e) = self.record_into(sink) {
                    self.say(format!("recording stopped: {e}"));
                }
            }
        }
        // An earlier run's session (taken up again) brings our player with the world.
        if !self.options.spectate && !self.standing.restored() {
            let name = self.standing.my_name().unwrap_or_default().to_owned();
            if let Err(e) = self.spawn_my_player(u32::from(client.0), &name, Owner::Client(client))
            {
                self.say(format!("cannot spawn the player: {e}"));
            }
        }
    }
}
