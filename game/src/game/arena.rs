//! The arena travels: the server sends its scene in parts to each client that joins; a
//! client whose arena differs rebuilds its world on the server's and asks for the world
//! again.

use super::Game;
use crate::events::GameEvent;
use crate::scene::Scene;
use crate::witness::TakenPoses;
use lanyard::prelude::*;

/// The bytes of the arena one reliable message carries.
const ARENA_PART: usize = 900;

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
            if let Err(e) = self.net.send_event_to(client, event.encode()) {
                self.messages.push(format!("cannot send the arena: {e}"));
                return;
            }
        }
    }

    /// Client: a part of the server's arena. Once it is whole: if it is not ours, the
    /// world is rebuilt on it and the server asked for everything again; then our player
    /// comes.
    pub(super) fn arena_part(&mut self, part: u16, parts: u16, bytes: Vec<u8>) {
        if self.is_server() || self.arena_ready || parts == 0 || part >= parts {
            return;
        }
        if self.arena_parts.len() != usize::from(parts) {
            self.arena_parts = vec![None; usize::from(parts)];
        }
        self.arena_parts[usize::from(part)] = Some(bytes);
        if self.arena_parts.iter().any(Option::is_none) {
            return;
        }
        let whole: Vec<u8> = self.arena_parts.drain(..).flatten().flatten().collect();
        let theirs = match Scene::decode(&whole) {
            Ok(s) => s,
            Err(e) => {
                self.ended = Some(format!("the server's arena is broken: {e}"));
                self.end_reason = Some("connection lost".into());
                return;
            }
        };
        self.arena_ready = true;
        let Some(client) = self.net.client_id() else {
            return;
        };
        if theirs != self.scene {
            self.messages
                .push(format!("the server plays '{}': loading it", theirs.name));
            self.group = Self::world(&theirs, Role::Client(client));
            self.received = TakenPoses::default();
            self.scene = theirs.clone();
            self.options.scene = theirs;
            if let Err(e) = self.net.resend_world() {
                self.messages.push(format!("cannot reload the world: {e}"));
            }
            if let Some(path) = self.record_path.clone() {
                // The recording names its arena at the start: start it again on this one.
                if let Err(e) = self.record_to(&path) {
                    self.messages.push(format!("recording stopped: {e}"));
                }
            }
        }
        if !self.options.spectate {
            let name = self.my_name.clone().unwrap_or_default();
            if let Err(e) = self.spawn_my_player(u32::from(client.0), &name, Owner::Client(client))
            {
                self.messages.push(format!("cannot spawn the player: {e}"));
            }
        }
    }
}
