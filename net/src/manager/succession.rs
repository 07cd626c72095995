//! Succession (the first part of host migration): the server keeps every client told who
//! would take the game over if it went, in order, and where each can be reached.
//!
//! The order: players only (never a spectator, never a session kept for a resume), the
//! longest in the game first (a resumed session keeps its place), ties by the lower
//! client id. It changes only when players come and go, so it costs a reliable message
//! then, and nothing otherwise.

use super::*;
use crate::succession::Successor;

impl Server {
    /// The succession now (see the module's rule).
    pub(super) fn succession(&self) -> Vec<Successor> {
        let mut players: Vec<(u64, ClientId, &crate::session::ClientSession)> = self
            .endpoint
            .peers
            .iter()
            .filter(|(_, p)| !p.spectator)
            .map(|(id, p)| (p.joined, *id, p))
            .collect();
        players.sort_by_key(|(joined, id, _)| (*joined, *id));
        players
            .into_iter()
            .map(|(_, client, p)| Successor {
                client,
                name: p.name.clone(),
                addr: p.conn.addr,
            })
            .collect()
    }

    /// Sends the succession to every client that has the world and not this list yet.
    pub(super) fn tell_succession(&mut self, core: &mut Core) {
        let list = self.succession();
        for p in self.endpoint.peers.values_mut() {
            if p.view.is_some() && p.told != list {
                core.push(&mut p.conn, &Msg::Succession { list: list.clone() });
                p.told.clone_from(&list);
            }
        }
    }
}
