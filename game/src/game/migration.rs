//! Host migration in the game: when the host of a `host` game goes, its first successor
//! plays the server's part with the world it holds (the scores as it last heard them,
//! answering LAN discovery and registered at the rendezvous server, if the game was, under
//! the game's name), and every other player is told who hosts now.

use super::{Game, ServerRules, entropy};
use crate::witness::TakenPoses;
use lanyard_net::discovery::Responder;
use lanyard_net::rendezvous::Registrar;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A host's name for a sentence: "the host" if it played under none.
pub(super) fn who(name: &str) -> &str {
    if name.is_empty() { "the host" } else { name }
}

impl Game {
    /// The host (`left`) went and we took the game over: our NetManager is a server now
    /// and our group plays the server's role; the rules run here from now on.
    pub(super) fn promoted(&mut self, left: &str) {
        let name = self.my_name.clone();
        let mut scores: BTreeMap<String, u32> = self
            .scores
            .iter()
            .filter(|(n, _)| n != left)
            .cloned()
            .collect();
        if let Some(n) = &name {
            scores.entry(n.clone()).or_insert(0);
        }
        self.server = Some(ServerRules {
            host_name: name,
            chat_times: HashMap::new(),
            scores,
            player_hits: HashMap::new(),
            crate_hits: HashMap::new(),
            fallen: BTreeSet::new(),
            scores_dirty: true,
        });
        self.joined = true;
        self.following = false;
        self.received = TakenPoses::default();
        // The game keeps its name: discovery answers with it.
        self.options.name = self.net.config().server_name.clone();
        self.server_name = Some(self.options.name.clone());
        self.host_changes
            .push((left.to_owned(), self.my_name.clone().unwrap_or_default()));
        // A game known at a rendezvous server is registered there again under its name
        // (once the old host's registration runs out, within its time to live).
        if let Some(rv) = self.options.rendezvous
            && self.registrar.is_none()
        {
            let mut owner = [0; 16];
            owner.copy_from_slice(&entropy()[..16]);
            self.registrar = Some(Registrar::new(rv, owner));
        }
        if let Some(d) = self.options.discovery
            && self.responder.is_none()
        {
            match Responder::bind(d) {
                Ok(r) => self.responder = Some(r),
                Err(e) => tracing::warn!("cannot answer discovery on {d}: {e}"),
            }
        }
        let line = format!(
            "{} left; you are now hosting {}",
            who(left),
            self.net.config().server_name
        );
        tracing::info!("{line}");
        self.messages.push(line);
    }
}
