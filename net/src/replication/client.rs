//! The client's side of replication: the server's announcements and state entries turned
//! back into sections (against the baselines they name) and handed to the group; our own
//! spawns sent up under provisional ids.

use super::world::CodecRef;
use crate::connection::Connection;
use crate::core::Core;
use crate::event::NetEvent;
use crate::stats::PeerStats;
use crate::wire;
use crate::wire::{Body, Entries, Msg};
use lanyard::codec::Section;
use lanyard::pose::{BodyState, PoseState};
use lanyard::{
    Change, ClientId, EntityGroup, EntityId, FramePass, KindId, NetId, Owner, SpawnRequest, Verdict,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};

mod hold;
mod versions;

use versions::Versions;

/// Where a spawn message puts its body: where it says, or else where the section it carries
/// starts by (a pose, quantized; a client path corrects a body no closer than that).
fn placed(state: Option<wire::Placed>, base: Option<&wire::SpawnBase>) -> Option<BodyState> {
    if let Some(s) = state {
        return Some(s.into());
    }
    let b = base.filter(|b| b.posed)?;
    let head = b.bytes.get(..PoseState::LEN)?;
    let p = PoseState::read(&mut lanyard::codec::SectionReader::new(head)).ok()?;
    Some(BodyState {
        pos: p.pos.to_array(),
        rot: p.rot.to_array(),
        linvel: p.linvel.to_array(),
        angvel: p.angvel.to_array(),
    })
}

/// The codec of entity `id`'s sections: the group's prediction of it if they start with a
/// pose (`posed`) and its kind has no codec of its own, its kind's codec otherwise (what
/// the server encodes with, `replication/world.rs`).
fn codec_of(group: &EntityGroup, id: EntityId, posed: bool) -> CodecRef<'_> {
    match posed.then(|| group.pose_codec(id)).flatten() {
        Some(c) => CodecRef::Pose(c),
        None => CodecRef::Kind(group.get(id).map_or(&lanyard::delta::ByteDelta, |e| {
            group.registry().delta_codec(e.kind())
        })),
    }
}

/// Which broadcast a datagram's state belongs to, the server's tick at it, and when (µs)
/// it arrived.
#[derive(Debug, Clone, Copy)]
struct Arrived {
    number: u32,
    /// `None` when nothing predicts.
    tick: Option<u32>,
    now: u64,
}

/// The client's side of replication.
#[derive(Clone)]
pub(crate) struct ClientReplication {
    next_provisional: u32,
    /// What was received of each entity, for deltas to name.
    received: HashMap<NetId, Versions>,
    /// The newest server broadcast that brought state.
    latest: u32,
    /// Entities whose baseline we lacked, to ask the server to send whole.
    resync: BTreeSet<NetId>,
    /// Entities we asked about and have not had whole since.
    asked: BTreeSet<NetId>,
    /// The succession the server sent last, until the endpoint takes it.
    pub(crate) succession: Option<crate::succession::Succession>,
    /// The parts of a succession that came so far, until its last.
    succession_parts: Option<crate::succession::Succession>,
    /// The server's bodies we claimed (hand-off) and the server has not answered yet.
    claims: BTreeSet<NetId>,
    /// After a resume, until the server says the world is all sent: the entities it
    /// named so far.
    resyncing: Option<BTreeSet<NetId>>,
    /// The clients' sections the server relayed with their times, applied this frame:
    /// when (the server's clock, seconds) their clients sent them.
    pub(crate) relayed: Vec<(NetId, f64)>,
    /// Of those, how long (ms) before its datagram each holder's newest was sent.
    pub(crate) relayed_ages: BTreeMap<Owner, u16>,
    /// Our spawn requests the server has not answered, by provisional id: the reliable
    /// message that carries each (none once it went on to a new host, numbered afresh),
    /// and whether the server acknowledged it (that message itself, even before every
    /// one ahead of it: then a connection to a new host does not carry it on).
    requests: BTreeMap<NetId, (Option<u32>, bool)>,
}

/// How fast (metres a second) one of our bodies must move for what it touches to be
/// claimed: a player standing by a crate does not take it, one walking into it does.
const PUSH_SPEED: f32 = 0.3;

impl ClientReplication {
    /// Takes the server's bodies our own moving bodies touch, of kinds that allow it
    /// (hand-off, `replication/handoff.rs`): they are ours at once, here, and the server is
    /// asked (`Msg::Claim`). Runs after the frame's physics step.
    pub(crate) fn claim_touched(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        conn: &mut Connection,
    ) {
        if !group.registry().any_hand_off() {
            return;
        }
        let me = group.local_owner();
        let moving: Vec<EntityId> = group
            .iter()
            .filter(|e| e.owner() == me && e.body().linvel().length() >= PUSH_SPEED)
            .map(|e| e.id())
            .collect();
        if moving.is_empty() {
            return;
        }
        let registry = group.registry().clone();
        let mut take: Vec<(EntityId, NetId)> = Vec::new();
        for (_, other) in group.contacts_of(&moving) {
            let Some(e) = group.get(other) else {
                continue;
            };
            let net = e.net_id();
            let open = e.owner() == Owner::Server && !net.is_provisional();
            let allowed = registry.options(e.kind()).is_some_and(|o| o.hand_off);
            if open && allowed && !self.claims.contains(&net) && !take.contains(&(other, net)) {
                take.push((other, net));
            }
        }
        for (eid, net) in take {
            self.claim(core, group, conn, eid, net);
        }
    }

    /// Takes the server's body `eid` (network id `net`) here at once and asks the server
    /// for it.
    pub(crate) fn claim(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        conn: &mut Connection,
        eid: EntityId,
        net: NetId,
    ) {
        let seq = group.get(eid).map_or(0, |e| e.authority_seq());
        let _ = group.set_owner(eid, group.local_owner());
        self.claims.insert(net);
        core.push_eager(conn, &Msg::Claim { net, seq });
    }

    /// The newest section we hold of each entity of `group` another client owns: what we
    /// would forward of it if we took the game over (see
    /// `ServerReplication::after_takeover`).
    pub(crate) fn last_words(&self, group: &EntityGroup) -> Vec<(NetId, ClientId, Vec<u8>)> {
        let me = group.local_owner();
        let mut words: Vec<_> = group
            .iter()
            .filter_map(|e| match e.owner() {
                Owner::Client(c) if Owner::Client(c) != me => {
                    let (bytes, _) = self.received.get(&e.net_id())?.newest()?;
                    Some((e.net_id(), c, bytes.to_vec()))
                }
                _ => None,
            })
            .collect();
        words.sort_unstable_by_key(|(net, _, _)| *net);
        words
    }

    /// What a client keeps of its replication when a new host takes the game over: only
    /// its provisional ids go on (the new host's broadcasts are numbered afresh).
    pub(crate) fn for_new_host(&self) -> Self {
        // Requests not yet acknowledged go on to the new host (numbered afresh), which
        // answers them; one the old host acknowledged and never answered is its to have
        // spawned or refused, and the new host's world says which.
        let requests = self
            .requests
            .iter()
            .map(|(net, (_, acked))| (*net, (None, *acked)))
            .collect();
        ClientReplication {
            next_provisional: self.next_provisional,
            requests,
            ..ClientReplication::default()
        }
    }
}

impl Default for ClientReplication {
    fn default() -> Self {
        ClientReplication {
            next_provisional: 1,
            received: HashMap::new(),
            latest: 0,
            resync: BTreeSet::new(),
            asked: BTreeSet::new(),
            succession: None,
            succession_parts: None,
            claims: BTreeSet::new(),
            resyncing: None,
            relayed: Vec::new(),
            relayed_ages: BTreeMap::new(),
            requests: BTreeMap::new(),
        }
    }
}

impl ClientReplication {
    /// The state entries of a datagram of server broadcast `number`: each is turned back into
    /// its section (against the baseline it names), kept, and offered to its entity unless
    /// a newer one was applied already. Returns whether there were any.
    pub(crate) fn state(
        &mut self,
        pass: &mut FramePass<'_>,
        stats: &mut PeerStats,
        (number, sent): (u32, f64),
        state: &[u8],
        now: u64,
    ) -> bool {
        if state.is_empty() {
            return false;
        }
        self.latest = self.latest.max(number);
        stats.state_bytes += state.len() as u64;
        let mut rest = state;
        let Ok(head) = wire::StateHead::read(&mut rest) else {
            stats.bad_datagrams += 1;
            return false;
        };
        let at = Arrived {
            number,
            tick: head.map(|h| h.tick),
            now,
        };
        let mut listed = Vec::new();
        let mut out = Vec::new();
        for e in Entries::new(rest) {
            let Ok(e) = e else {
                stats.bad_datagrams += 1;
                break;
            };
            stats.entries += 1;
            if let Body::SameAsNewest { run } = e.body {
                // A run names consecutive entities the server sent us: one longer than our
                // whole world is malformed (and would cost a loop over up to 2^29 ids).
                if run as usize >= pass.group().len() {
                    stats.bad_datagrams += 1;
                    break;
                }
                for net in (0..=run).filter_map(|k| e.net.0.checked_add(k)) {
                    self.take(pass, stats, at, NetId(net), e.body, &mut out);
                    listed.push(NetId(net));
                }
            } else {
                let applied = self.take(pass, stats, at, e.net, e.body, &mut out);
                if let Some(rec) = self.received.get_mut(&e.net) {
                    rec.relayed = e.relayed.is_some();
                }
                if let (true, Some(ms)) = (applied, e.relayed) {
                    self.relayed.push((e.net, sent - f64::from(ms) / 1000.0));
                    if let Some(e) = pass.group().by_net(e.net) {
                        self.relayed_ages.insert(e.owner(), ms);
                    }
                }
                listed.push(e.net);
            }
        }
        if let Some(head) = head {
            self.foresee(pass, at, &head, &listed);
        }
        !listed.is_empty()
    }

    /// Offers every entity `head` speaks for that was not `listed` (in rising order), and
    /// whose kind predicts, its prediction from the newest section we hold: the server
    /// sent nothing because that prediction stands for its state. Not one we asked to have
    /// whole: the server believed we held a state we could not resolve, so its silence
    /// vouches for nothing until the whole state comes. Nothing in a partial broadcast:
    /// the server may have held the entity back though the prediction went astray (a
    /// crate that a nudge set falling, which the floor stops at once), and a prediction
    /// knows no floor; the body moves as its own world has it until its state comes
    /// (explorer seed 838: a crate held back for nine broadcasts was guessed through the
    /// floor, and stuck under the crate above it).
    fn foresee(
        &mut self,
        pass: &mut FramePass<'_>,
        at: Arrived,
        head: &wire::StateHead,
        listed: &[NetId],
    ) {
        // The entities for which we heard the broadcast before this one speak (not one
        // lost or late, nor this one again, a duplicate): only their guesses are dated.
        let mut unbroken = std::collections::BTreeSet::new();
        for (net, rec) in self.received.iter_mut().filter(|(n, _)| head.covers(**n)) {
            let prev = rec.covered;
            if prev.is_some_and(|p| p.wrapping_add(1) == at.number) {
                unbroken.insert(*net);
            }
            rec.covered = Some(prev.map_or(at.number, |p| p.max(at.number)));
        }
        if head.partial {
            return;
        }
        let mut due: Vec<NetId> = self
            .received
            .iter()
            .filter(|(net, rec)| {
                head.covers(**net)
                    && !rec.relayed
                    && !self.asked.contains(net)
                    && rec.applied.is_none_or(|a| at.number > a)
                    && listed.binary_search(net).is_err()
            })
            .map(|(net, _)| *net)
            .collect();
        due.sort_unstable();
        let dt = pass.group().config().dt;
        let mut out = Vec::new();
        for net in due {
            let Some(rec) = self.received.get_mut(&net) else {
                continue;
            };
            let group = pass.group();
            let Some(e) = group.by_net(net) else {
                continue;
            };
            let codec = codec_of(group, e.id(), rec.posed);
            // Dated as this broadcast's state only where the server vouches for it; after
            // one we missed, it is our best guess, shown but not dated, and not in place of
            // a state a broadcast vouched for in this frame.
            let dates = unbroken.contains(&net);
            let vouched = rec.dated == at.now && rec.applied.is_some();
            if e.owner() != Owner::Server || !codec.get().predicts() || (!dates && vouched) {
                continue;
            }
            let Some((base, Some(tick))) = rec.newest() else {
                continue;
            };
            out.clear();
            if !codec
                .get()
                .predict(base, head.tick.wrapping_sub(tick), dt, &mut out)
            {
                continue;
            }
            if dates {
                rec.applied = Some(at.number);
                rec.at = rec.at.max(at.now);
                rec.dated = at.now;
            }
            let section = Section {
                net_id: net,
                payload: &out,
            };
            pass.offer_section(section, Owner::Server);
        }
    }

    /// One entity's entry: resolved against its baseline (or the prediction from it), kept,
    /// applied if fresh. Returns whether it was applied.
    fn take(
        &mut self,
        pass: &mut FramePass<'_>,
        stats: &mut PeerStats,
        at: Arrived,
        net: NetId,
        body: Body<'_>,
        out: &mut Vec<u8>,
    ) -> bool {
        let Arrived { number, tick, now } = at;
        let group = pass.group();
        let Some(id) = group.id_of(net) else {
            stats.dropped_unknown_entity += 1;
            return false;
        };
        // The body is ours (granted, not only claimed): the state is the server's from
        // before it gave it to us (dropped: no prediction may start from it once the body
        // is the server's again), or from after it took it back, which we have not heard
        // yet (kept, as every state we acknowledge must be: the server may name it; but not
        // applied).
        let held = group
            .get(id)
            .is_some_and(|e| e.owner() == group.local_owner())
            && !self.claims.contains(&net);
        let rec = self.received.entry(net).or_default();
        if held && rec.granted_at.is_none_or(|g| number <= g) {
            return false;
        }
        let dt = group.config().dt;
        rec.note_whole(body);
        let codec = codec_of(group, id, rec.posed);
        let codec = codec.get();
        let ok = rec.resolve(body, (number, tick), (codec, dt), out);
        if !ok {
            // While the body is ours, what the server sends of it is moot: it sends its
            // state whole when it takes the body back.
            if !held {
                stats.missing_baselines += 1;
                if self.asked.insert(net) {
                    self.resync.insert(net);
                }
            }
            return false;
        }
        if matches!(body, Body::Full(_) | Body::FullPosed(_)) {
            self.asked.remove(&net);
        }
        let fresh = rec.applied.is_none_or(|a| number > a);
        rec.keep((number, tick), out.clone(), self.latest);
        if held {
            return false;
        }
        rec.at = rec.at.max(now);
        if !fresh {
            stats.dropped_stale += 1;
            return false;
        }
        rec.applied = Some(number);
        rec.dated = now;
        let section = Section {
            net_id: net,
            payload: out,
        };
        if pass.offer_section(section, Owner::Server) == Verdict::UnknownEntity {
            stats.dropped_unknown_entity += 1;
            return false;
        }
        true
    }

    /// The session was resumed on a new connection: nothing received before can be named
    /// as a baseline any more. The world follows once the server says so
    /// ([`begin_resync`](Self::begin_resync)), after the messages it had queued before.
    pub(crate) fn forget_baselines(&mut self) {
        self.received.clear();
        self.resync.clear();
        self.asked.clear();
    }

    /// The world the server sends from here on is the whole of it (`Msg::ResendingWorld`,
    /// or our own request for it): what it does not name by `Msg::WorldSent` is gone.
    pub(crate) fn begin_resync(&mut self) {
        self.forget_baselines();
        self.resyncing = Some(BTreeSet::new());
    }

    /// Asks the server to send whole what we could not resolve.
    pub(crate) fn ask_resync(&mut self, core: &mut Core, conn: &mut Connection) {
        for net in std::mem::take(&mut self.resync) {
            core.push(conn, &Msg::Resync { net });
        }
    }

    /// When (µs) state of entity `net` last came, if any did.
    pub(crate) fn state_at(&self, net: NetId) -> Option<u64> {
        self.received.get(&net).map(|r| r.at)
    }

    /// The server broadcast whose state of entity `net` was applied last, if any was.
    pub(crate) fn applied_broadcast(&self, net: NetId) -> Option<u32> {
        self.received.get(&net).and_then(|r| r.applied)
    }

    /// A reliable message from the server.
    pub(crate) fn message(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        (stats, number): (&mut PeerStats, u32),
        msg: Msg,
    ) {
        match msg {
            Msg::Spawn {
                net,
                kind,
                owner,
                params,
                state,
                base,
            } => self.spawn(core, group, (net, kind, owner, params), (state, base)),
            Msg::Authority { net, seq } => {
                if let Some(eid) = group.id_of(net) {
                    let _ = group.replica().set_authority_seq(eid, seq);
                }
            }
            Msg::Despawn { net } => {
                self.received.remove(&net);
                self.asked.remove(&net);
                if let Some(eid) = group.id_of(net) {
                    let _ = group.despawn(eid);
                }
            }
            Msg::SetOwner { net, owner, seq } => {
                self.set_owner(group, (stats, number), (net, owner, seq));
            }
            Msg::SpawnConfirmed { provisional, net } => {
                self.requests.remove(&provisional);
                // After a resume the server confirms again what it may have confirmed.
                let again = self.resyncing.is_some() && group.by_net(provisional).is_none();
                tracing::debug!("spawn {provisional} confirmed as {net}");
                if !again && group.replica().rename_net_id(provisional, net).is_err() {
                    core.counters.failed_spawns += 1;
                }
            }
            Msg::ResendingWorld => self.begin_resync(),
            Msg::WorldSent => self.world_sent(group),
            Msg::SpawnRefused { provisional } => {
                tracing::debug!("spawn {provisional} refused");
                self.requests.remove(&provisional);
                // After a resume the server refuses again what it may have refused.
                if let Some(eid) = group.id_of(provisional) {
                    core.counters.failed_spawns += 1;
                    stats.refused_spawns += 1;
                    let _ = group.despawn(eid);
                }
            }
            Msg::Correction { net, state } => {
                // The server's own state of our entity: go back to it. The server path then
                // reads the corrected body, so what goes up next agrees with it.
                if let Some(eid) = group.id_of(net)
                    && group.set_body_state(eid, &state).is_ok()
                {
                    stats.corrections += 1;
                }
            }
            Msg::Event { bytes } => core.events.push_back(NetEvent::Event {
                from: Owner::Server,
                bytes,
            }),
            Msg::Succession(part) => {
                let parts = &mut self.succession_parts;
                if let Some(whole) = crate::succession::Succession::gather(parts, part) {
                    self.succession = Some(whole);
                }
            }
            Msg::SpawnRequest { .. }
            | Msg::Claim { .. }
            | Msg::DespawnRequest { .. }
            | Msg::Resync { .. }
            | Msg::ResendWorld => {
                stats.refused_messages += 1;
            }
        }
    }

    /// The server spawned `net` (of `kind`, owned by `owner`, built from `params`), in
    /// `state` if it said, with `base` as our first baseline if it sent one. One we know
    /// already (a resume sends the world again) keeps its local id.
    fn spawn(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        (net, kind, owner, params): (NetId, KindId, Owner, Vec<u8>),
        (state, base): (Option<wire::Placed>, Option<wire::SpawnBase>),
    ) {
        if let Some(seen) = &mut self.resyncing {
            seen.insert(net);
        }
        let state = placed(state, base.as_ref());
        if let Some(b) = base {
            // Our first baseline.
            self.received
                .entry(net)
                .or_default()
                .keep_spawned(b, self.latest);
        }
        tracing::debug!("spawn {net} of {owner:?}");
        if let Some(e) = group.by_net(net) {
            let (eid, same_kind, mine) = (e.id(), e.kind() == kind, group.has_authority(e.owner()));
            if same_kind {
                // Known already: its owner and, unless it is ours, its state follow the
                // server.
                let handed = e.owner() != owner;
                if handed {
                    let _ = group.set_owner(eid, owner);
                }
                // Its count, if not 0, follows (`Msg::Authority`).
                let _ = group.replica().set_authority_seq(eid, 0);
                if !mine {
                    // Sent whole again after a gap in what we heard, by another authority
                    // than the one we last heard of it (a player that took the game over
                    // while we were away): a late joiner's copy, which takes nothing its
                    // old authority said for news (a respawn that player made meanwhile is
                    // not made again here). One with the same authority keeps what it heard
                    // of it (where a silent owner last put its player, which the server's
                    // copy may have walked on from for a moment).
                    if self.resyncing.is_some() && handed {
                        let _ = group.replica().restart_copy(eid);
                    }
                    if let Some(state) = &state {
                        let _ = group.set_body_state(eid, state);
                    }
                }
                return;
            }
            let _ = group.despawn(eid);
        }
        match group.replica().insert_with_net_id(net, kind, params, owner) {
            Ok(eid) => {
                // A bad body state leaves it where its parameters put it; the next section
                // corrects it.
                if let Some(state) = &state {
                    let _ = group.set_body_state(eid, state);
                }
            }
            Err(e) => {
                core.counters.failed_spawns += 1;
                tracing::warn!("cannot spawn {net}: {e}");
            }
        }
    }

    /// `net` changed hands: now `owner`'s, its `seq`th change, as the datagram of broadcast
    /// `number` said. The answer to our claim, if we made one: granted, or who holds it.
    fn set_owner(
        &mut self,
        group: &mut EntityGroup,
        (stats, number): (&mut PeerStats, u32),
        (net, owner, seq): (NetId, Owner, u16),
    ) {
        tracing::debug!("{net} is {owner:?}'s now");
        if self.claims.remove(&net) {
            match owner == group.local_owner() {
                true => stats.claims += 1,
                false => stats.refused_claims += 1,
            }
        }
        if owner == group.local_owner() {
            // Ours now: the server's sections we hold of it are out of date from here on,
            // and no prediction may start from them when it is the server's again (the
            // server forgets them too, and sends its state whole then).
            let rec = Versions {
                granted_at: Some(number),
                ..Versions::default()
            };
            self.received.insert(net, rec);
            self.asked.remove(&net);
        }
        let ours = group
            .by_net(net)
            .is_some_and(|e| e.owner() == group.local_owner());
        let unheard = self.received.get(&net).is_none_or(|r| r.newest().is_none());
        if owner == Owner::Server && ours && unheard && self.asked.insert(net) {
            // The server took back a body we held, and we hold none of its states since it
            // gave it to us: the state it sent whole as it took it back came before the
            // news that it gave it to us (reliable messages can lag the state), and went
            // with what we held of it then. Its silence from here on would stand for a
            // state we never kept: we ask for it whole.
            self.resync.insert(net);
        }
        if let Some(eid) = group.id_of(net) {
            // The change of hands, then the server's count of them.
            if group.get(eid).is_some_and(|e| e.owner() != owner) {
                let _ = group.set_owner(eid, owner);
            }
            let _ = group.replica().set_authority_seq(eid, seq);
        }
    }

    /// The server resent the whole world after a resume: what it did not send again is
    /// gone.
    fn world_sent(&mut self, group: &mut EntityGroup) {
        let Some(seen) = self.resyncing.take() else {
            return;
        };
        // A spawn of ours an old host that went acknowledged and never answered: the world
        // just sent has it, under its real id, if that host spawned it. Not one the server
        // sending the world acknowledged (asked of it: it answers after the world; explorer
        // seed 3276, where a grenade thrown just after the resume went, and then its
        // confirmation came).
        let unanswered: BTreeSet<NetId> = self
            .requests
            .iter()
            .filter(|(_, (id, acked))| id.is_none() && *acked)
            .map(|(net, _)| *net)
            .collect();
        self.requests.retain(|net, _| !unanswered.contains(net));
        let gone: Vec<(NetId, EntityId)> = group
            .iter()
            .filter(|e| {
                let net = e.net_id();
                match net.is_provisional() {
                    true => unanswered.contains(&net),
                    false => !seen.contains(&net),
                }
            })
            .map(|e| (e.net_id(), e.id()))
            .collect();
        for (net, eid) in gone {
            tracing::debug!("{net} is gone (not in the world resent)");
            self.received.remove(&net);
            let _ = group.despawn(eid);
        }
    }

    /// After the command pass: spawns of our own entities start under provisional ids and
    /// go up as requests; our despawns go up too.
    pub(crate) fn after_commands(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        conn: &mut Connection,
        me: Owner,
        requests: &mut Vec<SpawnRequest>,
    ) {
        for req in requests.drain(..) {
            let provisional = NetId(NetId::PROVISIONAL_BIT | self.next_provisional);
            self.next_provisional = self.next_provisional.wrapping_add(1) & !NetId::PROVISIONAL_BIT;
            match group
                .replica()
                .insert_with_net_id(provisional, req.kind, req.params.clone(), me)
            {
                Ok(eid) => {
                    if let Some(t) = req.ticket {
                        group.replica().note_spawned(t, eid);
                    }
                    if let Some(state) = group.get(eid).map(|e| BodyState::of(e.body())) {
                        let msg = Msg::SpawnRequest {
                            provisional,
                            kind: req.kind,
                            params: req.params,
                            state,
                        };
                        if let Some(id) = core.push(conn, &msg) {
                            tracing::debug!("spawn {provisional} asked");
                            self.requests.insert(provisional, (Some(id), false));
                        }
                    }
                }
                Err(_) => core.counters.failed_spawns += 1,
            }
        }
        for (id, acked) in self.requests.values_mut() {
            *acked |= id.is_some_and(|id| conn.acknowledged(id));
        }
        let changes: Vec<Change> = group.replica().drain_changes().collect();
        for change in changes {
            if let Change::Despawned { net, owner } = change
                && owner == me
            {
                core.push(conn, &Msg::DespawnRequest { net });
            }
        }
    }
}
