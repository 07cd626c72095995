//! The server's side of replication: announcing spawns and despawns, judging and
//! forwarding clients' sections and spawn requests, and filling each client's budget with
//! state entries (whole, delta, same) by priority.

use super::age::Ages;
use super::forecast::Forecasts;
use super::handoff::Handoff;
use super::hits::Hits;
use super::select::{Cadence, Candidate, Selection, candidates, next_looks};
use super::world::{Current, Forward, Forwarded, Ledger, WorldBuf};
use super::{MIN_BUDGET, Relevance};
use crate::connection::Connection;
use crate::core::Core;
use crate::endpoint::log_refusal;
use crate::idmap::IdMap;
use crate::session::baseline::{ClientView, History, IN_FLIGHT, SERVER_WINDOW, Seen, SentEntries};
use crate::session::{ClientSession, Pace};
use crate::wire;
use crate::wire::{Body, DATA_ROOM, Entry, Msg};
use lanyard::codec::{PacketReader, PacketWriter, Section};
use lanyard::pose::BodyState;
use lanyard::{Change, ClientId, EntityGroup, FramePass, NetId, OnOwnerLeave, Owner, Verdict};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

/// How one selected entry is sent.
enum Pick {
    Full,
    /// A delta, at this range of the broadcast's shared delta buffer; against the
    /// prediction from the baseline if marked.
    Delta(u32, Range<usize>, bool),
    /// The prediction from the baseline.
    Predicted(u32),
    Same(u32),
    /// The same as the client's newest, for this entity and the `run` after it.
    SameAsNewest(u32),
}

/// The server's side of replication.
#[derive(Default, Clone)]
pub(crate) struct ServerReplication {
    /// The newest accepted section of each client-owned entity, to forward.
    pub(super) forward: BTreeMap<NetId, Forward>,
    /// The server's bodies clients hold, and those it took back lately (hand-off).
    pub(super) handoff: Handoff,
    /// Whether the world had bodies clients may take (hand-off) at the last broadcast:
    /// then what clients own is relayed with its time.
    relaying: bool,
    /// The number of the last broadcast.
    number: u32,
    /// Which entities each client needs; all, without one.
    relevance: Option<Relevance>,
    /// Spawns the requesting client learns of by confirmation, not by a spawn message.
    pub(super) withhold: HashMap<NetId, ClientId>,
    /// The broadcast's predictions.
    forecasts: Forecasts,
    /// How often each kind's free bodies follow their prediction.
    hits: Hits,
    /// Each entity's slot, and what the broadcasts noted of it there.
    pub(super) ledger: Ledger,
    /// The broadcast's world by slot, and what each client looks at.
    selection: Selection,
    /// The allocation of the last broadcast's world, for the next one.
    world_buf: WorldBuf,
}

/// What follows the spawn of `net` if it has changed hands before: its authority's count.
fn authority_msg(group: &EntityGroup, net: NetId) -> Option<Msg> {
    let seq = group.by_net(net)?.authority_seq();
    (seq != 0).then_some(Msg::Authority { net, seq })
}

/// The spawn message of `net`, with `base`, its section as the world last broadcast it
/// (see [`ServerReplication::base_of`]); with none, or one that does not start with a pose,
/// it says where the body is.
fn spawn_msg(group: &EntityGroup, net: NetId, base: Option<wire::SpawnBase>) -> Option<Msg> {
    let e = group.by_net(net)?;
    let placed = !base.as_ref().is_some_and(|b| b.posed);
    Some(Msg::Spawn {
        net,
        kind: e.kind(),
        owner: e.owner(),
        params: group.spawn_params(e.id())?.to_vec(),
        state: placed.then(|| BodyState::of(e.body()).into()),
        base,
    })
}

impl ServerReplication {
    /// Entity `net`'s (at `slot`) section as the last broadcast had it, to go with its
    /// spawn, and the same bytes shared, for the client's baseline: none for one that
    /// wrote none yet, or a client's (its owner's sections are not the server's to name as
    /// a baseline).
    fn base_of(
        &self,
        group: &EntityGroup,
        slot: u32,
        net: NetId,
    ) -> Option<(wire::SpawnBase, std::sync::Arc<[u8]>)> {
        if group.by_net(net)?.owner() != Owner::Server {
            return None;
        }
        let h = self.ledger.history().get(slot as usize)?;
        let number = h.newest()?;
        let bytes = h.shared_at(number)?;
        let base = wire::SpawnBase {
            number,
            tick: self.forecasts.tick_of(number),
            posed: h.posed_known()?,
            bytes: bytes.to_vec(),
        };
        Some((base, bytes.clone()))
    }

    /// Tells the client of `net` (at `slot` of `view`) by its spawn message, with its
    /// section as the client's first baseline where there is one.
    fn tell_spawn(
        &self,
        core: &mut Core,
        group: &EntityGroup,
        (conn, view): (&mut Connection, &mut ClientView),
        (slot, net): (u32, NetId),
    ) -> bool {
        // The client's baseline: nothing of the entity's state goes before the spawn is
        // acknowledged, and then this is what the client holds.
        let (base, baseline) = match self.base_of(group, slot, net) {
            Some((b, bytes)) => {
                let number = b.number;
                (Some(b), Some((number, bytes)))
            }
            None => (None, None),
        };
        let Some(m) = spawn_msg(group, net, base) else {
            return false;
        };
        let msg = core.push(conn, &m);
        view.ents.insert(slot, net, msg);
        if baseline.is_some() {
            view.ents.set_baseline(slot, baseline, false);
        }
        if let Some(a) = authority_msg(group, net) {
            core.push(conn, &a);
        }
        true
    }

    /// The number of the last broadcast (heartbeats between broadcasts carry it).
    pub(crate) fn number(&self) -> u32 {
        self.number
    }

    /// Sets the relevance filter.
    pub(crate) fn set_relevance(&mut self, filter: Option<Relevance>) {
        self.relevance = filter;
    }

    fn relevant(&self, id: ClientId, group: &EntityGroup, net: NetId) -> bool {
        let Some(e) = group.by_net(net) else {
            return false;
        };
        e.owner() == Owner::Client(id)
            || self
                .relevance
                .as_ref()
                .is_none_or(|f| f(id, e, &group.view()))
    }

    /// A client just joined: tell it of every live entity it needs, in network-id order.
    pub(crate) fn welcome_world(
        &mut self,
        core: &mut Core,
        group: &EntityGroup,
        id: ClientId,
        peer: &mut ClientSession,
    ) {
        let mut view = ClientView::default();
        let world: Vec<NetId> = group.iter().map(|e| e.net_id()).collect();
        for net in world {
            if !self.relevant(id, group, net) {
                continue;
            }
            let slot = self.ledger.of(net);
            self.tell_spawn(core, group, (&mut peer.conn, &mut view), (slot, net));
        }
        peer.view = Some(view);
    }

    /// A client resumed its session: it hears again of the spawns it asked for (their
    /// confirmations may have been lost with the link), then of every entity it needs as
    /// if it just joined, then that this was all (what it has beyond that went meanwhile).
    pub(crate) fn resume_world(
        &mut self,
        core: &mut Core,
        group: &EntityGroup,
        id: ClientId,
        peer: &mut ClientSession,
    ) {
        // Before this, the session's history (queued before it fell silent); now, the world.
        core.push(&mut peer.conn, &Msg::ResendingWorld);
        peer.tell_spawns_again(core, |net| group.by_net(net).is_none());
        self.welcome_world(core, group, id, peer);
        core.push(&mut peer.conn, &Msg::WorldSent);
    }

    /// Tells every client what changed in the world since the last call.
    pub(crate) fn announce(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        peers: &mut BTreeMap<ClientId, ClientSession>,
    ) {
        let changes: Vec<Change> = group.replica().drain_changes().collect();
        for change in changes {
            match change {
                Change::Spawned(net) => {
                    // Just spawned: it wrote no section yet.
                    let Some(m) = spawn_msg(group, net, None) else {
                        continue;
                    };
                    // The client that asked for it learned of it by its confirmation.
                    let skip = self.withhold.remove(&net);
                    let slot = self.ledger.of(net);
                    for (id, p) in peers.iter_mut() {
                        if Some(*id) == skip || !self.relevant(*id, group, net) {
                            continue;
                        }
                        let msg = core.push(&mut p.conn, &m);
                        if let Some(v) = p.view.as_mut() {
                            v.ents.insert(slot, net, msg);
                        }
                    }
                }
                Change::Despawned { net, .. } => {
                    self.forward.remove(&net);
                    self.withhold.remove(&net);
                    let slot = self.ledger.forget(net);
                    for p in peers.values_mut() {
                        p.spawns_gone(|n| n == net);
                        if let (Some(v), Some(slot)) = (p.view.as_mut(), slot)
                            && v.ents.remove(slot, net).is_some()
                        {
                            core.push(&mut p.conn, &Msg::Despawn { net });
                        }
                    }
                }
                Change::OwnerChanged { net, owner, seq } => {
                    let slot = self.ledger.of(net);
                    for (id, p) in peers.iter_mut() {
                        // An entity a client owned was never sent to it: look at it now.
                        if let Some(v) = p.view.as_mut() {
                            v.ents.pend(slot);
                            // Its new holder drops what it had of the server's sections (its
                            // own are the state now): once it is the server's again, it
                            // predicts nothing from them, and gets the state whole.
                            if owner == Owner::Client(*id) {
                                v.ents.void_from(slot, self.number);
                            }
                        }
                        if let Some(v) = p.view.as_mut().filter(|v| v.ents.holds(slot, net))
                            && let Some(m) =
                                core.push(&mut p.conn, &Msg::SetOwner { net, owner, seq })
                        {
                            v.changes_told.push(m);
                        }
                    }
                }
                Change::Renamed { .. } => {}
            }
        }
    }

    /// Brings each client's set of entities in line with the relevance filter: what it no
    /// longer needs is despawned there (till it hears, our silence vouches for nothing),
    /// what it needs again is spawned anew.
    fn rescope(
        &mut self,
        core: &mut Core,
        group: &EntityGroup,
        peers: &mut BTreeMap<ClientId, ClientSession>,
    ) {
        if self.relevance.is_none() {
            return;
        }
        let world: Vec<NetId> = group.iter().map(|e| e.net_id()).collect();
        for (id, p) in peers.iter_mut() {
            for &net in &world {
                let relevant = self.relevant(*id, group, net);
                let Some(view) = p.view.as_mut() else {
                    break;
                };
                let slot = self.ledger.of(net);
                let known = view.ents.holds(slot, net);
                if relevant && !known {
                    self.tell_spawn(core, group, (&mut p.conn, view), (slot, net));
                } else if !relevant && known {
                    view.ents.remove(slot, net);
                    let told = core.push(&mut p.conn, &Msg::Despawn { net });
                    view.changes_told.extend(told);
                }
            }
        }
    }

    /// A client's sections: judged, applied, queued for forwarding, or refused and counted.
    pub(crate) fn sections(
        &mut self,
        pass: &mut FramePass<'_>,
        (id, sent): (ClientId, f64),
        peer: &mut ClientSession,
        sections: &[u8],
    ) {
        let owner = Owner::Client(id);
        let stats = &mut peer.conn.stats;
        for s in PacketReader::new(sections) {
            let Ok(s) = s else {
                stats.bad_datagrams += 1;
                break;
            };
            let net = peer.spawned.get(&s.net_id).copied().unwrap_or(s.net_id);
            let section = Section {
                net_id: net,
                payload: s.payload,
            };
            match pass.offer_section(section, owner) {
                Verdict::Accepted => {
                    self.forward.insert(net, (id, s.payload.to_vec(), sent));
                }
                Verdict::UnknownEntity => stats.dropped_unknown_entity += 1,
                Verdict::NotOwner => {
                    stats.dropped_not_owner += 1;
                    if self.handoff.taken_from(net, id) {
                        // Sent before the client heard the body is the server's: expected.
                        stats.late_sections += 1;
                        tracing::debug!("{id}: a late section for {net}, taken back");
                    } else {
                        log_refusal(
                            id,
                            &(stats.dropped_not_owner - stats.late_sections),
                            "sections for entities it does not own",
                        );
                    }
                }
                Verdict::Illegal => {
                    stats.dropped_illegal += 1;
                    log_refusal(id, &stats.dropped_illegal, "illegal sections");
                    peer.corrections.insert(net);
                }
            }
        }
    }

    /// Once a frame: the held bodies that rested, or that their holder left alone, go back
    /// to the server, and nothing of their last holders' is forwarded any more.
    pub(crate) fn settle_held(&mut self, core: &mut Core, group: &mut EntityGroup) {
        for net in self.handoff.settle(core, group) {
            self.forward.remove(&net);
        }
    }

    /// A client left: the server's bodies it held are the server's again; its own entities
    /// are handed to the server or despawned, as their kinds say; replication forgets it.
    pub(crate) fn forget(&mut self, core: &mut Core, group: &mut EntityGroup, id: ClientId) {
        for net in self.handoff.return_held(core, group, id) {
            self.forward.remove(&net);
        }
        let owned: Vec<_> = group
            .iter()
            .filter(|e| e.owner() == Owner::Client(id))
            .map(|e| (e.id(), e.kind()))
            .collect();
        for (eid, kind) in owned {
            let rule = group.registry().options(kind).map(|o| o.on_owner_leave);
            // The entity exists: it was just listed.
            let _ = match rule {
                Some(OnOwnerLeave::HandToServer) => group.set_owner(eid, Owner::Server),
                _ => group.despawn(eid),
            };
        }
        self.forward.retain(|_, (from, _, _)| *from != id);
        self.withhold.retain(|_, c| *c != id);
    }

    /// One broadcast: corrections, then to every client the state of the entities it needs
    /// that changed (or are due for a refresh), as far as its byte budget goes, highest
    /// priority first, with its due reliable messages in front. Returns the clients it sent
    /// to; the frame driver sends the others' due messages.
    pub(crate) fn broadcast(
        &mut self,
        core: &mut Core,
        group: &EntityGroup,
        (packet, tick): (&PacketWriter, u32),
        peers: &mut BTreeMap<ClientId, ClientSession>,
    ) -> BTreeSet<ClientId> {
        self.number += 1;
        let number = self.number;
        self.forecasts.begin(number, tick, group.config().dt);
        self.hits.begin();
        send_corrections(core, group, peers);
        self.rescope(core, group, peers);
        let forwarded = Forwarded {
            sections: &self.forward,
            now: core.now as f64 / 1e6,
            relaying: &mut self.relaying,
        };
        let world = self
            .ledger
            .world(group, packet, forwarded, (self.world_buf.take(), number));
        let cadence = Cadence::of(&core.config, number);
        let wheel = self.selection.begin(&world, self.ledger.len(), &cadence);
        if let Some(len) = wheel {
            for v in peers.values_mut().filter_map(|p| p.view.as_mut()) {
                v.ents.wake_all(len);
            }
        }
        // Whether any entity predicts: only then do datagrams say which tick they are of.
        let predicting = world.iter().any(|c| c.predicts);
        let mut round = Round {
            world: &world,
            cadence,
            head: predicting.then_some(tick),
            deltas: Deltas::default(),
            ages: Ages::default(),
        };
        let mut parts = Parts {
            forecasts: &mut self.forecasts,
            selection: &mut self.selection,
            hits: &mut self.hits,
            history: self.ledger.history(),
        };
        let mut sent_to = BTreeSet::new();
        for (id, p) in peers.iter_mut() {
            if send_state(&mut parts, core, group, &mut round, (*id, p)) {
                sent_to.insert(*id);
            }
        }
        self.world_buf.keep(world);
        sent_to
    }
}

/// What a datagram carries besides its sections: its headers and tag.
const DATAGRAM_OVERHEAD: usize = wire::MAX_DATAGRAM - wire::DATA_ROOM;

/// What one broadcast shares among its clients: the world's state, its cadence, the tick
/// its datagrams name (when anything predicts), and the deltas and ages it keeps.
struct Round<'w> {
    world: &'w [Current<'w>],
    cadence: Cadence,
    head: Option<u32>,
    deltas: Deltas,
    ages: Ages,
}

/// The parts of the server's replication that a broadcast works with, client by client
/// (the world borrows the rest).
struct Parts<'s> {
    forecasts: &'s mut Forecasts,
    selection: &'s mut Selection,
    hits: &'s mut Hits,
    history: &'s [History],
}

/// A broadcast's state for one client, `id` on session `p`: its reliable messages go first,
/// as far as its pace allows, and state gets the rest, up to the budget. Whether a datagram
/// went to it.
fn send_state(
    parts: &mut Parts<'_>,
    core: &mut Core,
    group: &EntityGroup,
    round: &mut Round<'_>,
    (id, p): (ClientId, &mut ClientSession),
) -> bool {
    let cadence = &round.cadence;
    p.pace.refill(cadence.interval());
    p.conn.message_room = p.pace.room();
    let (message_bytes, held) = p.conn.messages_due_bytes(core.now);
    let Some(view) = p.view.as_mut() else {
        pace(&mut p.pace, &mut p.conn, held, cadence, core.now);
        return false;
    };
    view.acked(&p.conn.take_acked(), parts.history);
    round.ages.clear();
    let fc = (&mut *parts.forecasts, parts.history);
    let sel = (&mut *parts.selection, round.world);
    let cands = candidates(id, view, &p.conn, sel, cadence, &mut round.ages, fc);
    let (outcomes, stats) = (&parts.selection.outcomes, &mut p.conn.stats);
    parts
        .hits
        .note(outcomes, (round.world, group), stats, &mut core.events);
    let (stats, warned) = (&mut p.conn.stats, &mut p.stale_warned);
    round
        .ages
        .note(stats, (warned, &p.name), cadence.rate, core.now);
    let changed = cands.changed();
    // A prediction that moves on needs the broadcast's datagram, entries or none: the
    // client advances it when one comes, and draws a stale state till then.
    let moving = cands.predicted_moving;
    let sends = changed > 0 || moving || cadence.number.is_multiple_of(cadence.batch);
    next_looks(view, &cands.list, round.world, cadence, sends);
    if !sends {
        pace(&mut p.pace, &mut p.conn, held, cadence, core.now);
        return false;
    }
    let room = p
        .pace
        .room()
        .saturating_sub(message_bytes + DATAGRAM_OVERHEAD);
    let budget = cadence.budget.min(room).max(MIN_BUDGET);
    let fc = (&mut round.deltas, &mut *parts.forecasts);
    let (picks, used, picked_changed) =
        fill_budget(cands.list, round.world, view, (cadence, budget), fc);
    let starved = held || picks.len() < changed;
    pace(&mut p.pace, &mut p.conn, starved, cadence, core.now);
    if picks.is_empty() && !moving {
        return false;
    }
    // Held back, changed hands or hidden, unheard of yet: no prediction is vouched for.
    view.changes_told.retain(|m| !p.conn.delivered(*m));
    let partial = picked_changed < changed || cands.unannounced || !view.changes_told.is_empty();
    let stamp = (cadence.number, round.head.map(|tick| (tick, partial)));
    let (chunks, entries) = packetize(round.world, picks, stamp, &round.deltas.bytes);
    let parts: Vec<&[u8]> = chunks.iter().map(|(b, _)| b.as_slice()).collect();
    let mut seqs = Vec::new();
    let version = core.config.version;
    let datagrams = p
        .conn
        .build_numbered(core.now, version, cadence.number, &parts, &mut seqs);
    p.pace.spend(datagrams.iter().map(Vec::len).sum());
    p.conn.stats.state_bytes += used as u64;
    p.conn.stats.entries += entries as u64;
    core.send_all(p.conn.addr, datagrams);
    for (seq, (_, sent)) in seqs.into_iter().zip(chunks) {
        view.in_flight.push_back((seq, sent));
    }
    while view.in_flight.len() > IN_FLIGHT {
        view.in_flight.pop_front();
    }
    true
}

/// A client's pace after a broadcast: what its link showed, and whether it was starved.
fn pace(pace: &mut Pace, conn: &mut Connection, starved: bool, cadence: &Cadence, now: u64) {
    let during = (cadence.interval(), now);
    pace.update(conn.link(), starved, during, cadence.bounds());
    conn.stats.send_rate = pace.rate();
}

/// Sends each client the server's state of its entities whose sections were illegal.
fn send_corrections(
    core: &mut Core,
    group: &EntityGroup,
    peers: &mut BTreeMap<ClientId, ClientSession>,
) {
    for p in peers.values_mut() {
        for net in std::mem::take(&mut p.corrections) {
            if let Some(e) = group.by_net(net) {
                let state = BodyState::of(e.body());
                p.conn.stats.corrections += 1;
                core.push(&mut p.conn, &Msg::Correction { net, state });
            }
        }
    }
}

/// The deltas of one broadcast, computed once per (entity, baseline) for every client: the
/// bytes, and where each is in them (and whether against the prediction).
#[derive(Default)]
struct Deltas {
    bytes: Vec<u8>,
    at: IdMap<(NetId, u32), (Range<usize>, bool)>,
}

/// Fills the client's budget from `cands`, highest priority first (after 16 that do not
/// fit, it stops looking); the picks in network-id order, each marked sent (its priority
/// spent), the bytes they take, and how many of them changed.
fn fill_budget(
    mut cands: Vec<Candidate>,
    world: &[Current<'_>],
    view: &mut ClientView,
    (cadence, budget): (&Cadence, usize),
    (deltas, forecasts): (&mut Deltas, &mut Forecasts),
) -> (Vec<(usize, Pick)>, usize, usize) {
    let mut picked_changed = 0;
    // Highest priority first, ties in the world's order: a total order, so sorting only as
    // far as the budget reaches (a few dozen of hundreds, usually) finds the same sequence
    // as sorting all.
    let order =
        |a: &Candidate, b: &Candidate| b.priority.total_cmp(&a.priority).then(a.at.cmp(&b.at));
    let mut picks: Vec<(usize, Pick)> = Vec::new();
    let mut used = 0;
    let mut misses = 0;
    let mut sorted = 0;
    for next in 0..cands.len() {
        if next == sorted {
            let upto = (2 * sorted).max(64).min(cands.len());
            let rest = &mut cands[sorted..];
            let take = upto - sorted;
            if take < rest.len() {
                rest.select_nth_unstable_by(take - 1, order);
            }
            rest[..take].sort_unstable_by(order);
            sorted = upto;
        }
        let i = cands[next].at;
        let c = &world[i];
        let Some(seen) = view.ents.get(c.slot, c.net) else {
            continue;
        };
        let pick = choose(c, seen, cadence.number, (deltas, forecasts));
        let body = body_of(c, &pick, &deltas.bytes);
        let e = Entry {
            net: c.net,
            body,
            relayed: c.age,
        };
        let cost = wire::entry_cost(None, &e);
        if used + cost > budget {
            misses += 1;
            if misses > 16 {
                break;
            }
            continue;
        }
        used += cost;
        if cands[next].changed {
            picked_changed += 1;
        }
        picks.push((i, pick));
    }
    picks.sort_by_key(|(i, _)| *i);
    for (i, _) in &picks {
        let c = &world[*i];
        if let Some(seen) = view.ents.get_mut(c.slot, c.net) {
            seen.priority = 0.0;
            seen.sent(cadence.number);
        }
    }
    (picks, used, picked_changed)
}

/// The picks as entries in network-id order (resting entities with consecutive ids as one
/// run), in chunks that each fit a datagram alone, each with the (entity, broadcast) pairs
/// it carries, and each headed by the broadcast's tick and the ids it speaks for (the
/// first from 0, each next from its first entry, the last to the end) when `tick` is
/// given (something predicts), with whether it held back a changed entity; and how many
/// entries there are. With no picks, one chunk with no entries.
fn packetize(
    world: &[Current<'_>],
    picks: Vec<(usize, Pick)>,
    (number, tick): (u32, Option<(u32, bool)>),
    deltas: &[u8],
) -> (Vec<(Vec<u8>, SentEntries)>, usize) {
    let mut merged: Vec<(usize, Pick, u32)> = Vec::with_capacity(picks.len());
    for (i, pick) in picks {
        let net = world[i].net;
        // A relayed section has a time of its own: it is never part of a run.
        if let (Pick::SameAsNewest(_), Some((first, Pick::SameAsNewest(run), _))) =
            (&pick, merged.last_mut())
            && world[*first].net.0.checked_add(*run + 1) == Some(net.0)
            && world[*first].age.is_none()
            && world[i].age.is_none()
        {
            *run += 1;
            continue;
        }
        merged.push((i, pick, 0));
    }
    let mut chunks: Vec<(Vec<u8>, SentEntries)> = vec![(Vec::new(), Vec::new())];
    // Where each chunk's range starts.
    let mut starts = vec![NetId(0)];
    let mut prev = None;
    let room = DATA_ROOM - STATE_HEAD_ROOM;
    for (i, pick, _) in &merged {
        let c = &world[*i];
        let e = Entry {
            net: c.net,
            body: body_of(c, pick, deltas),
            relayed: c.age,
        };
        if chunks
            .last()
            .is_some_and(|(b, _)| !b.is_empty() && b.len() + wire::entry_cost(None, &e) > room)
        {
            chunks.push((Vec::new(), Vec::new()));
            starts.push(c.net);
            prev = None;
        }
        // A run's entities have consecutive ids, so they are consecutive in the world.
        let run = match pick {
            Pick::SameAsNewest(run) => *run as usize,
            _ => 0,
        };
        let last = world[*i + run].net;
        if let Some((bytes, sent)) = chunks.last_mut() {
            wire::put_entry(bytes, prev, &e);
            sent.extend(world[*i..=*i + run].iter().map(|c| (c.slot, c.net, number)));
        }
        prev = Some(last);
    }
    for (k, (bytes, _)) in chunks.iter_mut().enumerate() {
        let head = tick.map(|(tick, partial)| wire::StateHead {
            tick,
            from: starts[k],
            to: starts.get(k + 1).map(|n| NetId(n.0 - 1)),
            partial,
        });
        let mut headed = Vec::with_capacity(bytes.len() + STATE_HEAD_ROOM);
        wire::StateHead::write(head.as_ref(), &mut headed);
        headed.append(bytes);
        *bytes = headed;
    }
    (chunks, merged.len())
}

/// The most a [`wire::StateHead`] takes.
const STATE_HEAD_ROOM: usize = 15;

/// How to send entity `c` to a client whose view of it is `seen`: against the baseline
/// (or, for a kind that predicts, against the prediction from it) when the client surely
/// still holds it, in full otherwise. Deltas are computed once per (entity, baseline) for
/// every client.
fn choose(
    c: &Current<'_>,
    seen: &Seen,
    number: u32,
    (deltas, forecasts): (&mut Deltas, &mut Forecasts),
) -> Pick {
    let Some((bf, base)) = seen.baseline() else {
        return Pick::Full;
    };
    let last = seen.last_sent() == Some(bf);
    // Unchanged since the baseline: whatever went after it carried the same bytes, so the
    // client's newest section is these, whichever of them arrived.
    let steady = bf >= c.version;
    if base == c.bytes && (last || steady) {
        return Pick::SameAsNewest(0);
    }
    // The client keeps every section of its last CLIENT_KEEP broadcasts, and its newest.
    if !last && number - bf > SERVER_WINDOW {
        return Pick::Full;
    }
    if base == c.bytes {
        return Pick::Same(number - bf);
    }
    let forecast = c
        .predicts
        .then(|| forecasts.of(c.net, c.codec.get(), bf, base))
        .flatten()
        .map(|r| &forecasts.bytes[r]);
    // Sent at all, it goes exactly: a refresh puts the client back on the server's state,
    // not on a prediction of it that is only within the tolerance.
    if forecast == Some(c.bytes) {
        return Pick::Predicted(number - bf);
    }
    let Deltas { bytes, at } = deltas;
    let (range, predicted) = at
        .entry((c.net, bf))
        .or_insert_with(|| {
            let start = bytes.len();
            let codec = c.codec.get();
            codec.encode(base, c.bytes, bytes);
            let Some(forecast) = forecast else {
                return (start..bytes.len(), false);
            };
            // Against the prediction, unless the prediction went further astray than
            // the baseline (a body that slid or struck something): the smaller goes.
            let mid = bytes.len();
            codec.encode(forecast, c.bytes, bytes);
            if bytes.len() - mid < mid - start {
                let len = bytes.len() - mid;
                bytes.copy_within(mid.., start);
                bytes.truncate(start + len);
                (start..start + len, true)
            } else {
                bytes.truncate(mid);
                (start..mid, false)
            }
        })
        .clone();
    if range.len() >= c.bytes.len() {
        Pick::Full
    } else {
        Pick::Delta(number - bf, range, predicted)
    }
}

fn body_of<'a>(c: &Current<'a>, pick: &Pick, deltas: &'a [u8]) -> Body<'a> {
    match pick {
        Pick::Full if c.posed => Body::FullPosed(c.bytes),
        Pick::Full => Body::Full(c.bytes),
        Pick::Delta(age, r, predicted) => Body::Delta {
            age: *age,
            predicted: *predicted,
            delta: &deltas[r.clone()],
        },
        Pick::Predicted(age) => Body::Predicted { age: *age },
        Pick::Same(age) => Body::Same { age: *age },
        Pick::SameAsNewest(run) => Body::SameAsNewest { run: *run },
    }
}
