//! Host migration: the server keeps every client told who would take the game over if it
//! went, in order, and where each can be reached (the succession); with
//! [`NetConfig::host_migration`] it also gives the players (every one a successor) what a
//! successor needs to take the other sessions over. When the server goes, the first
//! successor's manager becomes a server here ([`NetManager::promote`]); the other clients
//! follow it (`endpoint/client.rs`).
//!
//! The order: players only (never a spectator, never a player that cannot host, such as
//! a page behind a data channel: [`NetManager::cannot_host`], never a session kept for a
//! resume but those a new host took over and still awaits), the longest in the game first (a resumed
//! session keeps its place, and a new host keeps the old order), ties by the lower client
//! id. It changes only when sessions come and go, so it costs a reliable message then, and
//! nothing otherwise.
//!
//! A new host's list holds the players it awaits from the old one: the first to resume
//! hears the same order as the last (each is told the succession before its world, which
//! is many messages), so a new host that goes a moment later leaves one game to follow.
//! Explorer seed 2423: a new host quit 0.1 s after its players resumed, none had heard
//! whom it named, and the game ended; told first, and each told a list of the players
//! resumed so far, two of them each took it for theirs.

use super::{NetManager, Side};
use crate::config::NetConfig;
use crate::core::Core;
use crate::crypto::migration_token;
use crate::endpoint::ServerEndpoint;
use crate::event::NetEvent;
use crate::manager::server::Server;
use crate::replication::ServerReplication;
use crate::session::ClientSession;
use crate::succession::{Heir, Succession, Successor};
use crate::wire;
use crate::wire::Msg;
use lanyard::{ClientId, EntityGroup, Owner, Role};

impl Server {
    /// The succession now (see the module's rule).
    pub(super) fn succession(&self) -> Vec<Successor> {
        let live = self.endpoint.peers.iter();
        let mut players: Vec<(u64, ClientId, &ClientSession)> = live
            .chain(self.endpoint.awaited())
            .filter(|(_, p)| !p.spectator)
            .filter(|(_, p)| !self.endpoint.cannot_host.contains(&p.conn.addr))
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

    /// What a player is told: the succession and, if the game migrates, every session
    /// (live or waiting for a resume) with its migration token.
    fn told(&self, config: &NetConfig) -> Succession {
        let live = self.endpoint.peers.iter();
        let waiting = self.endpoint.suspended.iter().map(|(id, s)| (id, &s.peer));
        let mut sessions: Vec<_> = live.chain(waiting).collect();
        // In the succession's order (a new host keeps it).
        sessions.sort_by_key(|(id, p)| (p.joined, **id));
        let heirs = match config.host_migration {
            true => sessions
                .into_iter()
                .map(|(id, p)| Heir {
                    client: *id,
                    name: p.name.clone(),
                    spectator: p.spectator,
                    token: migration_token(&p.token),
                    addr: p.conn.addr,
                })
                .collect(),
            false => Vec::new(),
        };
        Succession {
            list: self.succession(),
            host: config.host_name.clone().unwrap_or_default(),
            migrate: config.host_migration,
            heirs,
            more: false,
        }
    }

    /// Sends the succession to every client that has the world and has not been told
    /// since sessions last changed. A spectator is never a successor and is not given the
    /// tokens.
    pub(super) fn tell_succession(&mut self, core: &mut Core) {
        let epoch = self.endpoint.epoch;
        if self
            .endpoint
            .peers
            .values()
            .all(|p| p.view.is_none() || p.told == Some(epoch))
        {
            return;
        }
        let told = self.messages(&core.config);
        for p in self.endpoint.peers.values_mut() {
            if p.view.is_some() && p.told != Some(epoch) {
                tell(core, p, &told, epoch);
            }
        }
    }

    /// Tells client `id`, which just joined or resumed, the succession before anything
    /// else (its world goes after, many messages): a host that goes a moment later
    /// leaves it a game to follow (see the module's note).
    pub(super) fn tell_succession_first(&mut self, core: &mut Core, id: ClientId) {
        let epoch = self.endpoint.epoch;
        let told = self.messages(&core.config);
        if let Some(p) = self.endpoint.peers.get_mut(&id) {
            tell(core, p, &told, epoch);
        }
    }

    /// The succession's messages: a player's (with the heirs, in parts that each fit a
    /// datagram) and a spectator's (never a successor, given no tokens).
    fn messages(&self, config: &NetConfig) -> (Vec<Msg>, Msg) {
        let told = self.told(config);
        let players: Vec<Msg> = parts(&told).into_iter().map(Msg::Succession).collect();
        let watchers = Msg::Succession(Succession {
            heirs: Vec::new(),
            ..told
        });
        (players, watchers)
    }
}

/// Tells session `p` the succession of `epoch` (`(players, watchers)`: the messages of
/// each).
fn tell(core: &mut Core, p: &mut ClientSession, told: &(Vec<Msg>, Msg), epoch: u64) {
    let messages = match p.spectator {
        true => std::slice::from_ref(&told.1),
        false => &told.0[..],
    };
    for m in messages {
        core.push(&mut p.conn, m);
    }
    p.told = Some(epoch);
}

impl NetManager {
    /// The host went and this client is its successor: this manager becomes a server with
    /// the other sessions waiting to be resumed, and `group` the server's world (the old
    /// host's entities of kinds that go with it despawned, ours made the server's).
    pub(super) fn promote(&mut self, group: &mut EntityGroup, left: String) {
        let Side::Client(c) = &self.side else {
            return;
        };
        let Some(me) = c.endpoint.id else {
            return;
        };
        let e = &c.endpoint;
        // What we were, to be again should we step down (see `step_down.rs`).
        let was = Some(Box::new((e.clone(), self.core.config.clone())));
        let config = &mut self.core.config;
        config.server_name.clone_from(&e.server_name);
        config.password.clone_from(&e.password);
        config.host_name = Some(e.name.clone());
        config.reserved_names = vec![e.name.clone()];
        config.host_migration = true;
        config.spectator = false;
        let mut endpoint = ServerEndpoint::new(crate::crypto::derive(&e.entropy, "new host", 0));
        // Standing by, we tried the host again: our connection is to it. It keeps our
        // session for its grace window from when it stopped hearing us, about a timeout
        // before now.
        let until = self.core.now + e.grace();
        let former = Some((e.conn.addr, until));
        let probe = super::step_down::Probe::new(&e.entropy, former);
        endpoint.take_over(&self.core, &e.succession.heirs, me);
        take_over_world(group, me);
        // What the others own still (a body one held is ours now).
        let last_words = c.repl.last_words(group);
        group.replica().set_role(Role::Server);
        // A server's sections describe the present: nothing is brought forward.
        group.replica().set_lead(0);
        // The game says it in its own words (`NetEvent::Promoted`).
        tracing::debug!(
            "{} left: {} ({me}) is now hosting {}",
            if left.is_empty() { "the host" } else { &left },
            e.name,
            self.core.config.server_name
        );
        self.side = Side::Server(Box::new(Server {
            endpoint,
            repl: ServerReplication::after_takeover(last_words, self.core.now),
            probe,
            was,
            stepped_down: None,
        }));
        self.core.events.push_back(NetEvent::Promoted { left });
    }
}

/// How many sections of each client's entity a new host takes as they come, legal or not
/// (2 s at 20 a second): long enough for its copy to catch up with the client's.
const TRUSTED_SECTIONS: u32 = 40;

/// How many network ids a new host leaves unused above the highest it knows.
const NET_IDS_SKIPPED: u32 = 1024;

/// The world of a new host: the old host's entities of kinds that go with it are
/// despawned, what we owned is the server's, under real ids, and the others' first
/// sections are trusted.
fn take_over_world(group: &mut EntityGroup, me: ClientId) {
    let registry = group.registry().clone();
    let goes = |kind| {
        registry
            .options(kind)
            .is_some_and(|o| o.on_host_leave == lanyard::OnHostLeave::Despawn)
    };
    let old: Vec<_> = group
        .iter()
        .filter(|e| e.owner() == Owner::Server && goes(e.kind()))
        .map(|e| e.id())
        .collect();
    for id in old {
        // It exists: it was just listed.
        let _ = group.despawn(id);
    }
    // The others' own entities moved on since the old host's last word of them: their
    // first sections are taken as they come. A body of a kind that changes hands (a crate
    // a player pushed) was the old host's, held for a while: it is ours now, as the old
    // host gives a body back when its holder leaves (its holder may never come to us, and
    // nobody would move it meanwhile); a holder that comes back and pushes it claims it
    // again.
    let theirs: Vec<_> = group
        .iter()
        .filter(|e| matches!(e.owner(), Owner::Client(c) if c != me))
        .map(|e| {
            let held = registry.options(e.kind()).is_some_and(|o| o.hand_off);
            (e.id(), e.net_id(), held)
        })
        .collect();
    for (id, net, held) in theirs {
        match held {
            true => {
                let _ = group.set_owner(id, Owner::Server);
            }
            false => group.replica().trust_sections(net, TRUSTED_SECTIONS),
        }
    }
    let mine: Vec<_> = group
        .iter()
        .filter(|e| e.owner() == Owner::Client(me))
        .map(|e| (e.id(), e.net_id()))
        .collect();
    // Ids the old host gave in its last moments may be held by some clients and not by
    // us: ours start well above them.
    group.replica().skip_net_ids(NET_IDS_SKIPPED);
    for (id, net) in mine {
        let _ = group.set_owner(id, Owner::Server);
        // A spawn the old host never confirmed gets a real id from us (the others number
        // their provisional ids as we did).
        if net.is_provisional() {
            let to = group.next_net_id();
            let _ = group.replica().rename_net_id(net, to);
        }
    }
}

/// Split into messages that each fit: the first carries the list, the rest only heirs.
fn parts(whole: &Succession) -> Vec<Succession> {
    let room = wire::MAX_FRAGMENT - 16;
    let size = |s: &Succession| wire::encode(s).map_or(usize::MAX, |b| b.len());
    let mut parts = vec![Succession {
        heirs: Vec::new(),
        more: false,
        ..whole.clone()
    }];
    for h in &whole.heirs {
        let last = parts.len() - 1;
        parts[last].heirs.push(h.clone());
        if size(&parts[last]) > room && parts[last].heirs.len() > 1 {
            parts[last].heirs.pop();
            parts[last].more = true;
            parts.push(Succession {
                heirs: vec![h.clone()],
                ..Succession::default()
            });
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manager::SocketAddr;

    #[test]
    fn a_succession_too_large_for_one_message_goes_in_parts_and_comes_back_whole() {
        let name = |i: u16| format!("a player with a long name, {i:>6}");
        let heirs: Vec<Heir> = (1..=24)
            .map(|i| Heir {
                client: ClientId(i),
                name: name(i),
                spectator: i > 16,
                token: [i as u8; 32],
                addr: SocketAddr::from(([192, 0, 2, 1], 40000 + i)),
            })
            .collect();
        let whole = Succession {
            list: (1..=16)
                .map(|i| Successor {
                    client: ClientId(i),
                    name: name(i),
                    addr: SocketAddr::from(([127, 0, 0, 1], 7000 + i)),
                })
                .collect(),
            host: "host".into(),
            migrate: true,
            heirs,
            more: false,
        };
        assert!(wire::encode(&whole).unwrap().len() > wire::MAX_FRAGMENT);
        let split = parts(&whole);
        assert!(split.len() > 1);
        let mut acc = None;
        let mut got = None;
        for p in split {
            assert!(wire::encode(&Msg::Succession(p.clone())).unwrap().len() <= wire::MAX_FRAGMENT);
            assert!(got.is_none(), "whole before its last part");
            got = Succession::gather(&mut acc, p);
        }
        assert_eq!(got, Some(whole));
    }
}
