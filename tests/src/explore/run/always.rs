//! The checks made all along a session ([`Session::check_always`], the network queues'
//! bounds, and every state a client dated by a broadcast), and whom a client follows.

use super::{Footprint, Session, TOLERANCE, Violation, WINDOW_FRAGMENTS, distance, widen};
use lanyard_game::game::Game;
use lanyard_net::harness::hub_addr;

impl Session<'_> {
    /// Every tick: no panic (caught around the run), no controller fault and no section
    /// a controller could not read in any group, and at most one host with players.
    pub(super) fn check_always(&self) -> Result<(), Violation> {
        for (i, g) in self.live() {
            let c = g.group().counters();
            if c.faults > 0 || c.bad_sections > 0 || c.framing_errors > 0 {
                return Err(self.fail(
                    &[&self.peers[i].name],
                    format!(
                        "its group faulted: {} controller faults, {} unreadable sections, {} broken packets",
                        c.faults, c.bad_sections, c.framing_errors
                    ),
                ));
            }
        }
        // A host's players are the clients that follow it and are not trying to reach it
        // again: a host's own table still lists the players that left it while it was
        // stopped, until it hears they went, and a player that missed its host is in no
        // session until the host takes it back (which a host stopped past its players'
        // timeout does only once it has asked whether the game went on: seed 5947).
        let followed = |h: usize| {
            self.live().any(|(i, c)| {
                i != h
                    && self.server_of(c) == Some(h)
                    && c.is_joined()
                    && !c.is_following()
                    && !c.net().is_reconnecting()
            })
        };
        let hosts: Vec<&str> = self
            .live()
            .filter(|&(i, g)| g.is_server() && followed(i))
            .map(|(i, _)| self.peers[i].name.as_str())
            .collect();
        if hosts.len() > 1 {
            return Err(self.fail(&hosts, "more than one host has players".into()));
        }
        Ok(())
    }

    /// What each peer holds in its network queues stays within the bounds its parts have:
    /// the inbox within its limit, reliable messages held for reassembly within the window
    /// and one message per connection. Notes the largest of each part in `most`.
    pub(super) fn check_memory(&self, most: &mut Footprint) -> Result<(), Violation> {
        for (i, g) in self.live() {
            let f = g.net().footprint();
            let held_bound = f.connections
                * (WINDOW_FRAGMENTS * lanyard_net::MAX_FRAGMENT + lanyard_net::MAX_MESSAGE);
            if f.inbox > g.net().config().inbox_limit || f.held_bytes > held_bound {
                return Err(self.fail(
                    &[&self.peers[i].name],
                    format!("its network queues grew past their bounds: {f:?}"),
                ));
            }
            widen(most, &f);
        }
        Ok(())
    }

    /// The server a client follows now, by peer index.
    pub(super) fn server_of(&self, g: &Game) -> Option<usize> {
        let addr = g.net().server_addr()?;
        (0..self.peers.len()).find(|&i| hub_addr(i) == addr)
    }

    /// Every state a client took, filed under a broadcast, is what its server sent in
    /// that broadcast (within [`TOLERANCE`]): the check the bots' process tests make at
    /// their end, made all along. Not while a client follows a new host: until that host
    /// welcomes it, its states are the old host's, numbered by broadcasts of the old host.
    pub(super) fn check_dates(&self) -> Result<(), Violation> {
        let settled = |g: &Game| !g.is_server() && g.is_joined() && !g.is_following();
        for (i, g) in self.live().filter(|(_, g)| settled(g)) {
            let Some(si) = self.server_of(g) else {
                continue;
            };
            let Some(server) = self.peers[si].game.as_ref().filter(|s| s.is_server()) else {
                continue;
            };
            let (sent, _) = server.witness();
            let (_, taken) = g.witness();
            for e in g.group().iter() {
                let net = e.net_id();
                let Some((n, pos)) = taken.server_state(net) else {
                    continue;
                };
                let Some(q) = sent.pose_at(net, n) else {
                    continue;
                };
                let d = distance(pos, q);
                if d > TOLERANCE {
                    return Err(self.fail(
                        &[&self.peers[i].name, &self.peers[si].name],
                        format!(
                            "{net} holds a state marked as broadcast {n} at {pos:?}, {d:.3} m from what the server sent in it ({q:?})"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
