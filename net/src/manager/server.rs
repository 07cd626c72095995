//! The server's side of a [`NetManager`](crate::NetManager): its endpoint and replication, leaving clients,
//! and the frame driver that takes clients' datagrams in and broadcasts.

use super::step_down::Probe;
use crate::config::NetConfig;
use crate::connection::Deadline;
use crate::core::{Core, us};
use crate::endpoint::{ClientEndpoint, ServerEndpoint};
use crate::error::DisconnectReason;
use crate::event::NetEvent;
use crate::replication::ServerReplication;
use lanyard::{ClientId, EntityGroup};
use std::collections::BTreeSet;
use std::net::SocketAddr;

#[derive(Clone)]
pub(super) struct Server {
    pub(super) endpoint: ServerEndpoint,
    pub(super) repl: ServerReplication,
    /// Whether one of our players hosts the game now (see `step_down.rs`).
    pub(super) probe: Probe,
    /// The client we were before we took the game over (with its configuration), if we
    /// were one: a server that steps down becomes it again (see `step_down.rs`).
    pub(super) was: Option<Box<(ClientEndpoint, NetConfig)>>,
    /// Set when we stepped down to the host there: the manager makes us a client of it.
    pub(super) stepped_down: Option<SocketAddr>,
}

impl Server {
    /// Removes a client: says goodbye (unless it timed out or left), hands over or despawns
    /// its entities, tells the user.
    pub(super) fn leave(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        id: ClientId,
        reason: DisconnectReason,
    ) {
        let Some(p) = self.endpoint.remove(id) else {
            return;
        };
        if let DisconnectReason::Kicked { reason } = &reason {
            // For its grace window (a resume), and at least as long as its client may send
            // its handshake again (a kick before it heard its welcome).
            let until = core.now + us(core.config.grace.max(core.config.timeout));
            self.endpoint.kicks.remember(id, p.token, reason, until);
        }
        if !matches!(reason, DisconnectReason::TimedOut | DisconnectReason::Left) {
            core.goodbye(&p.conn, reason.clone());
        }
        self.repl.forget(core, group, id);
        tracing::info!("{} ({id}) left: {reason}", p.name);
        core.events.push_back(NetEvent::ClientLeft {
            client: id,
            name: p.name,
            reason,
        });
    }

    /// A client fell silent: with a grace window its session waits for a resume (its
    /// entities stay, replication forgets only what it knew of the client's copy);
    /// without one it leaves.
    pub(super) fn lost(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        id: ClientId,
        reason: DisconnectReason,
    ) {
        if core.config.grace <= 0.0 {
            return self.leave(core, group, id, reason);
        }
        let Some(name) = self.endpoint.suspend(core, id) else {
            return;
        };
        tracing::info!("{name} ({id}) {reason}: keeping the session for a resume");
        core.events
            .push_back(NetEvent::ClientSuspended { client: id, name });
    }

    /// Each session's deadlines: one silent past the timeout (or whose reliable message
    /// expired) is lost, one that broke off leaves, and one whose heartbeat is due is
    /// noted in `heartbeats`.
    pub(super) fn deadlines(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        heartbeats: &mut BTreeSet<ClientId>,
    ) {
        let ids: Vec<ClientId> = self.endpoint.peers.keys().copied().collect();
        for id in ids {
            let Some(p) = self.endpoint.peers.get_mut(&id) else {
                continue;
            };
            for d in p.conn.handle_timeout(core.now) {
                match d {
                    Deadline::Lost(
                        reason @ (DisconnectReason::TimedOut | DisconnectReason::ReliableExpired),
                    ) => {
                        self.lost(core, group, id, reason);
                        break;
                    }
                    Deadline::Lost(reason) => {
                        self.leave(core, group, id, reason);
                        break;
                    }
                    Deadline::Heartbeat => {
                        heartbeats.insert(id);
                    }
                    Deadline::GaveUp | Deadline::Retry => {}
                }
            }
        }
    }

    /// Ends the sessions whose grace window ran out.
    pub(super) fn expire(&mut self, core: &mut Core, group: &mut EntityGroup) {
        for (id, p) in self.endpoint.expired(core.now, us(core.config.grace)) {
            self.repl.forget(core, group, id);
            tracing::info!("{} ({id}): session expired", p.name);
            core.events.push_back(NetEvent::ClientLeft {
                client: id,
                name: p.name,
                reason: DisconnectReason::SessionExpired,
            });
        }
    }
}
