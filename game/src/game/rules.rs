//! The server's bookkeeping for the rules ([`Rules`]): the score table, who last blew
//! what about, who fell, the chat rate limit, and the sessions lost. The rules
//! themselves (fuses, blasts, the yard's edge) run in `yard`, on the world.

use crate::game::{CHAT_BURST, CHAT_WINDOW};
use lanyard::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A player blown off the yard scores for the one who blew it within this many seconds.
const FALL_CREDIT_SECONDS: f64 = 8.0;

/// What a server keeps to run the rules (a client has none).
#[derive(Debug, Default)]
pub(super) struct Rules {
    host_name: Option<String>,
    /// When each client's recent chat lines came (seconds), for the rate limit.
    chat_times: HashMap<ClientId, Vec<f64>>,
    /// Chat lines dropped by the rate limit.
    chat_dropped: u64,
    scores: BTreeMap<String, u32>,
    /// Who last blew each player about, and when (seconds).
    player_hits: HashMap<NetId, (Owner, f64)>,
    /// Who last blew each crate about (it scores if the crate goes off the yard).
    crate_hits: HashMap<NetId, Owner>,
    fallen: BTreeSet<NetId>,
    /// The tick each grenade first touched the floor or a block (its short fuse runs
    /// from then: see `fuse`).
    landed: BTreeMap<NetId, u64>,
    /// The table changed since it last went out.
    scores_dirty: bool,
    /// Sessions that ended without the player leaving or being sent away.
    sessions_lost: u64,
}

impl Rules {
    /// The rules of a server whose host plays as `host_name` (none: a dedicated
    /// server), starting from `scores`; the table goes out at the first chance.
    pub(super) fn new(host_name: Option<String>, scores: BTreeMap<String, u32>) -> Rules {
        Rules {
            host_name,
            scores,
            scores_dirty: true,
            ..Rules::default()
        }
    }

    /// The host's player name, if the host plays.
    pub(super) fn host_name(&self) -> Option<&str> {
        self.host_name.as_deref()
    }

    /// The points of the player named `name`.
    pub(super) fn score_of(&self, name: &str) -> u32 {
        self.scores.get(name).copied().unwrap_or(0)
    }

    /// The table changes (by `change`) and goes out again.
    pub(super) fn scores_changed(&mut self, change: impl FnOnce(&mut BTreeMap<String, u32>)) {
        change(&mut self.scores);
        self.scores_dirty = true;
    }

    /// A point for the player named `name`.
    pub(super) fn add_point(&mut self, name: &str) {
        *self.scores.entry(name.to_owned()).or_insert(0) += 1;
        self.scores_dirty = true;
    }

    /// The table to send, highest first, if it changed since it last went out: every
    /// player in `playing` (and the host) has a row.
    pub(super) fn table_to_send<'a>(
        &mut self,
        playing: impl Iterator<Item = &'a String>,
    ) -> Option<Vec<(String, u32)>> {
        if !std::mem::take(&mut self.scores_dirty) {
            return None;
        }
        if let Some(h) = &self.host_name {
            self.scores.entry(h.clone()).or_insert(0);
        }
        for n in playing {
            self.scores.entry(n.clone()).or_insert(0);
        }
        let mut table: Vec<(String, u32)> =
            self.scores.iter().map(|(n, p)| (n.clone(), *p)).collect();
        table.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Some(table)
    }

    /// The grenade `net` lies on the floor or a block at `tick`: whether its short fuse
    /// (`ticks` from when it first did) has burnt down.
    pub(super) fn landed(&mut self, net: NetId, tick: u64, ticks: u64) -> bool {
        let since = *self.landed.entry(net).or_insert(tick);
        tick >= since + ticks
    }

    /// The grenade `net` went off: forgotten.
    pub(super) fn grenade_gone(&mut self, net: NetId) {
        self.landed.remove(&net);
    }

    /// Whether a chat line from `client` at `now` (seconds) is within the rate limit; one
    /// over it is counted as dropped.
    pub(super) fn chat_allowed(&mut self, client: ClientId, now: f64) -> bool {
        let times = self.chat_times.entry(client).or_default();
        times.retain(|t| now - t < CHAT_WINDOW);
        if times.len() >= CHAT_BURST {
            self.chat_dropped += 1;
            return false;
        }
        times.push(now);
        true
    }

    /// Chat lines dropped by the rate limit.
    pub(super) fn chat_dropped(&self) -> u64 {
        self.chat_dropped
    }

    /// A session ended without the player leaving or being sent away.
    pub(super) fn session_lost(&mut self) {
        self.sessions_lost += 1;
    }

    /// Sessions lost so far.
    pub(super) fn sessions_lost(&self) -> u64 {
        self.sessions_lost
    }

    /// `by` blew the crate `net` about: it scores for them if it goes off the yard.
    pub(super) fn hit_crate(&mut self, net: NetId, by: Owner) {
        self.crate_hits.insert(net, by);
    }

    /// Who last blew the crate `net` about, if anyone.
    #[cfg(test)]
    pub(super) fn crate_hit(&self, net: NetId) -> Option<Owner> {
        self.crate_hits.get(&net).copied()
    }

    /// The crate `net` went off the yard: who scores for it (and it is forgotten).
    pub(super) fn crate_fell(&mut self, net: NetId) -> Option<Owner> {
        self.crate_hits.remove(&net)
    }

    /// `by` blew the player `net` about at `now` (seconds).
    pub(super) fn hit_player(&mut self, net: NetId, by: Owner, now: f64) {
        self.player_hits.insert(net, (by, now));
    }

    /// The player `net` (owned by `owner`) is off the yard (`off`) or on it at `now`:
    /// whoever blew it off lately scores, once a fall.
    pub(super) fn player_at_edge(
        &mut self,
        net: NetId,
        owner: Owner,
        off: bool,
        now: f64,
    ) -> Option<Owner> {
        if !off {
            self.fallen.remove(&net);
            return None;
        }
        if !self.fallen.insert(net) {
            return None;
        }
        let &(by, when) = self.player_hits.get(&net)?;
        (by != owner && now - when < FALL_CREDIT_SECONDS).then_some(by)
    }
}
