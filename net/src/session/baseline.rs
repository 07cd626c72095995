//! The server's memory of what each client holds: each entity's recent sections by
//! broadcast ([`History`]), and per client the newest section it acknowledged of each
//! entity (its baseline) and what it has in flight ([`ClientView`]).

use crate::idmap::IdMap;
use lanyard::NetId;
use std::collections::VecDeque;

/// Broadcasts back the server names a baseline it did not send last (a client keeps the
/// sections of `CLIENT_KEEP` broadcasts, and always its newest of each entity).
pub(crate) const SERVER_WINDOW: u32 = 32;
/// Datagrams a server remembers the entries of, awaiting their ack (past the 32 an ack
/// can name).
pub(crate) const IN_FLIGHT: usize = 48;

/// An entity's sections as the server sent them, by the broadcast each first went out in:
/// what a client's acknowledged broadcast number stands for.
#[derive(Default, Clone)]
pub(crate) struct History {
    pub(crate) versions: VecDeque<(u32, Vec<u8>)>,
}

impl History {
    /// Notes the section current at `number`.
    pub(crate) fn update(&mut self, number: u32, cur: &[u8]) {
        if self
            .versions
            .back()
            .is_none_or(|(_, b)| b.as_slice() != cur)
        {
            self.versions.push_back((number, cur.to_vec()));
        }
        // Keep the newest version at or before the window's start, and all after it.
        let cutoff = number.saturating_sub(SERVER_WINDOW + IN_FLIGHT as u32);
        while self.versions.len() > 1 && self.versions[1].0 <= cutoff {
            self.versions.pop_front();
        }
    }

    /// The section that was current at `number`, if still known.
    pub(crate) fn at(&self, number: u32) -> Option<&[u8]> {
        self.versions
            .iter()
            .rev()
            .find(|(f, _)| *f <= number)
            .map(|(_, b)| b.as_slice())
    }
}

/// What the server knows of one entity for one client.
#[derive(Default, Clone)]
pub(crate) struct Seen {
    /// The reliable message that told the client of the entity, until it is acknowledged:
    /// no state goes before that.
    pub(crate) announced: Option<u32>,
    /// The newest section the client acknowledged, and its broadcast.
    pub(crate) baseline: Option<(u32, Vec<u8>)>,
    /// The broadcast the entity's state last went out in.
    pub(crate) last_sent: Option<u32>,
    /// The accumulated priority.
    pub(crate) priority: f32,
}

/// What the server knows of a client's entities, in network-id order: a sorted vector,
/// which a broadcast walks beside the world's entities far faster than a tree.
#[derive(Default, Clone)]
pub(crate) struct Ents(pub(crate) Vec<(NetId, Seen)>);

impl Ents {
    pub(crate) fn find(&self, net: &NetId) -> Result<usize, usize> {
        self.0.binary_search_by_key(net, |(n, _)| *n)
    }

    pub(crate) fn insert(&mut self, net: NetId, seen: Seen) {
        match self.find(&net) {
            Ok(i) => self.0[i].1 = seen,
            Err(i) => self.0.insert(i, (net, seen)),
        }
    }

    pub(crate) fn remove(&mut self, net: &NetId) -> Option<Seen> {
        self.find(net).ok().map(|i| self.0.remove(i).1)
    }

    pub(crate) fn contains_key(&self, net: &NetId) -> bool {
        self.find(net).is_ok()
    }

    pub(crate) fn get(&self, net: &NetId) -> Option<&Seen> {
        self.find(net).ok().map(|i| &self.0[i].1)
    }

    pub(crate) fn get_mut(&mut self, net: &NetId) -> Option<&mut Seen> {
        self.find(net).ok().map(|i| &mut self.0[i].1)
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (&NetId, &mut Seen)> {
        self.0.iter_mut().map(|(n, s)| (&*n, s))
    }
}

/// The entries of one datagram: (entity, broadcast).
pub(crate) type SentEntries = Vec<(NetId, u32)>;

/// What the server knows of one client's copy of the world.
#[derive(Default, Clone)]
pub(crate) struct ClientView {
    /// The entities the client was told of.
    pub(crate) ents: Ents,
    /// The entries of datagrams not yet acknowledged: (sequence number, [(entity, broadcast)]).
    pub(crate) in_flight: VecDeque<(u32, SentEntries)>,
}

impl ClientView {
    /// Registers an entity the client is being told of by reliable message `msg`.
    pub(crate) fn introduce(&mut self, net: NetId, msg: Option<u32>) {
        self.ents.insert(
            net,
            Seen {
                announced: msg,
                ..Seen::default()
            },
        );
    }

    /// The peer acknowledged datagrams `acked`: their entries become baselines.
    pub(crate) fn acked(&mut self, acked: &[u32], history: &IdMap<NetId, History>) {
        for seq in acked {
            let Some(pos) = self.in_flight.iter().position(|(s, _)| s == seq) else {
                continue;
            };
            let Some((_, entries)) = self.in_flight.remove(pos) else {
                continue;
            };
            for (net, number) in entries {
                let (Some(seen), Some(h)) = (self.ents.get_mut(&net), history.get(&net)) else {
                    continue;
                };
                if seen.baseline.as_ref().is_some_and(|(f, _)| *f >= number) {
                    continue;
                }
                if let Some(bytes) = h.at(number) {
                    seen.baseline = Some((number, bytes.to_vec()));
                }
            }
        }
    }
}
