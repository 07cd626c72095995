//! Replication: what goes to whom.
//!
//! * **Server.** Every spawn, despawn and owner change is announced on each client's
//!   reliable channel; a late joiner gets the whole world. A client's sections are applied
//!   only to entities it owns and only if the kind's [`Controller::validate`] hook calls
//!   them legal; accepted ones are forwarded to the other clients (never back). A refused
//!   one earns the owner a correction: the server's own body state of the entity (never a
//!   decision made by running the owner's server path here). A client's spawn request is
//!   judged by the kind's spawn judge ([`KindRegistry::judge_spawns`]) before anything is
//!   built; the client's provisional id maps to the id the server assigns. Every refusal is
//!   counted for the peer and logged now and then.
//! * **Client.** Applies the server's announcements, corrections and sections; sends its
//!   own spawns up under provisional ids and its despawns as requests.
//! * **Broadcast.** The server's packet is split into whole-section chunks once per
//!   broadcast; per client only the headers, the reliable messages and the forwarded
//!   sections differ.
//!
//! [`Controller::validate`]: lanyard::Controller::validate
//! [`KindRegistry::judge_spawns`]: lanyard::KindRegistry::judge_spawns

use crate::connection::{Chunk, Connection, PeerStats, lone_digest};
use crate::core::Core;
use crate::endpoint::{Peer, log_refusal};
use crate::manager::NetEvent;
use crate::wire::{self, DATA_ROOM, Msg};
use lanyard::codec::{PacketReader, PacketWriter, Section};
use lanyard::pose::BodyState;
use lanyard::{
    Change, ClientId, EntityGroup, FramePass, NetId, OnOwnerLeave, Owner, SpawnClaim, SpawnRequest,
    Verdict,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

/// The server's side of replication.
#[derive(Default)]
pub(crate) struct ServerReplication {
    /// The newest accepted section of each client-owned entity, to forward.
    forward: BTreeMap<NetId, (ClientId, Vec<u8>)>,
    /// A client's provisional ids, mapped to the ids the server gave them.
    provisional: HashMap<(ClientId, NetId), NetId>,
    /// Spawns the requesting client learns of by confirmation, not by a spawn message.
    withhold: HashMap<NetId, ClientId>,
    /// Owners to send the server's state of an entity to.
    corrections: BTreeSet<(ClientId, NetId)>,
}

fn spawn_msg(group: &EntityGroup, net: NetId) -> Option<Msg> {
    let e = group.by_net(net)?;
    Some(Msg::Spawn {
        net,
        kind: e.kind(),
        owner: e.owner(),
        params: group.spawn_params(e.id())?.to_vec(),
        state: BodyState::of(e.body()),
    })
}

/// Splits a packet into runs of whole sections of at most `room` bytes, by the section
/// boundaries its writer recorded (nothing is parsed).
pub(crate) fn chunks(packet: &PacketWriter, room: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut last = 0;
    for end in packet.section_ends() {
        if end - start > room && last > start {
            out.push(start..last);
            start = last;
        }
        last = end;
    }
    if last > start {
        out.push(start..last);
    }
    out
}

impl ServerReplication {
    /// A client just joined: queue every live entity for it, in network-id order.
    pub(crate) fn welcome_world(
        &self,
        core: &mut Core,
        group: &EntityGroup,
        conn: &mut Connection,
    ) {
        let world: Vec<NetId> = group.iter().map(|e| e.net_id()).collect();
        for net in world {
            if let Some(m) = spawn_msg(group, net) {
                core.push(conn, &m);
            }
        }
    }

    /// Tells every client what changed in the world since the last call.
    pub(crate) fn announce(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        peers: &mut BTreeMap<ClientId, Peer>,
    ) {
        let changes: Vec<Change> = group.drain_changes().collect();
        for change in changes {
            let (msg, skip) = match change {
                Change::Spawned(net) => match spawn_msg(group, net) {
                    Some(m) => (m, self.withhold.remove(&net)),
                    None => continue,
                },
                Change::Despawned { net, .. } => {
                    self.forward.remove(&net);
                    self.provisional.retain(|_, v| *v != net);
                    self.withhold.remove(&net);
                    (Msg::Despawn { net }, None)
                }
                Change::OwnerChanged { net, owner } => (Msg::SetOwner { net, owner }, None),
                Change::Renamed { .. } => continue,
            };
            for (id, p) in peers.iter_mut() {
                if Some(*id) != skip {
                    core.push(&mut p.conn, &msg);
                }
            }
        }
    }

    /// A client's sections: judged, applied, queued for forwarding, or refused and counted.
    pub(crate) fn sections(
        &mut self,
        pass: &mut FramePass<'_>,
        id: ClientId,
        stats: &mut PeerStats,
        sections: &[u8],
    ) {
        let owner = Owner::Client(id);
        for s in PacketReader::new(sections) {
            let Ok(s) = s else {
                stats.bad_datagrams += 1;
                break;
            };
            let net = self
                .provisional
                .get(&(id, s.net_id))
                .copied()
                .unwrap_or(s.net_id);
            let section = Section {
                net_id: net,
                payload: s.payload,
            };
            match pass.offer_section(section, owner) {
                Verdict::Accepted => {
                    self.forward.insert(net, (id, s.payload.to_vec()));
                }
                Verdict::UnknownEntity => stats.dropped_unknown_entity += 1,
                Verdict::NotOwner => {
                    stats.dropped_not_owner += 1;
                    log_refusal(
                        id,
                        &stats.dropped_not_owner,
                        "sections for entities it does not own",
                    );
                }
                Verdict::Illegal => {
                    stats.dropped_illegal += 1;
                    log_refusal(id, &stats.dropped_illegal, "illegal sections");
                    self.corrections.insert((id, net));
                }
            }
        }
    }

    /// A reliable message from a client.
    pub(crate) fn message(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        id: ClientId,
        peer: &mut Peer,
        msg: Msg,
    ) {
        let owner = Owner::Client(id);
        match msg {
            Msg::SpawnRequest {
                provisional,
                kind,
                params,
                state,
            } => {
                let judged = {
                    let view = group.view();
                    let claim = SpawnClaim {
                        by: id,
                        name: &peer.name,
                        state: &state,
                        world: &view,
                    };
                    group.registry().judge_spawn(kind, &params, &claim)
                };
                let owned = group.iter().filter(|e| e.owner() == owner).count();
                let result = match judged {
                    Err(why) => Err(format!("{why:?}")),
                    Ok(()) if owned >= core.config.max_owned_per_client => {
                        Err("too many entities".to_owned())
                    }
                    Ok(()) => group
                        .spawn_encoded(kind, params, owner)
                        .map_err(|e| e.to_string()),
                };
                match result {
                    Ok(eid) => {
                        // The judge saw the claimed state; a non-finite one leaves the
                        // entity where its parameters put it.
                        let _ = group.set_body_state(eid, &state);
                        let net = group.get(eid).map_or(NetId(0), |e| e.net_id());
                        self.provisional.insert((id, provisional), net);
                        self.withhold.insert(net, id);
                        core.push(&mut peer.conn, &Msg::SpawnConfirmed { provisional, net });
                    }
                    Err(why) => {
                        peer.conn.stats.refused_spawns += 1;
                        let kind_name = group.registry().name_of(kind).unwrap_or("?");
                        tracing::warn!(
                            "{} ({id}) asked to spawn a {kind_name}: refused ({why}); {} refused so far",
                            peer.name,
                            peer.conn.stats.refused_spawns
                        );
                        core.push(&mut peer.conn, &Msg::SpawnRefused { provisional });
                    }
                }
            }
            Msg::DespawnRequest { net } => {
                let net = self.provisional.get(&(id, net)).copied().unwrap_or(net);
                match group.by_net(net) {
                    Some(e) if e.owner() == owner => {
                        let eid = e.id();
                        // Already gone is fine: the request is satisfied.
                        let _ = group.despawn(eid);
                    }
                    Some(_) => peer.conn.stats.refused_messages += 1,
                    None => {}
                }
            }
            Msg::Event { bytes } => core
                .events
                .push_back(NetEvent::Event { from: owner, bytes }),
            _ => peer.conn.stats.refused_messages += 1,
        }
    }

    /// A client left: its entities are handed to the server or despawned, as their kinds
    /// say, and replication forgets it.
    pub(crate) fn forget(&mut self, group: &mut EntityGroup, id: ClientId) {
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
        self.forward.retain(|_, (from, _)| *from != id);
        self.provisional.retain(|(c, _), _| *c != id);
        self.withhold.retain(|_, c| *c != id);
        self.corrections.retain(|(c, _)| *c != id);
    }

    /// One broadcast: corrections, then to every client its reliable messages, the
    /// packet's chunks (split once, shared) and the sections forwarded from the others.
    pub(crate) fn broadcast(
        &mut self,
        core: &mut Core,
        group: &EntityGroup,
        packet: &[u8],
        shared: &[Range<usize>],
        peers: &mut BTreeMap<ClientId, Peer>,
    ) {
        // The chunks every client gets alike, with their digests, made once.
        let shared: Vec<Chunk<'_>> = shared
            .iter()
            .map(|r| Chunk {
                bytes: &packet[r.clone()],
                digest: Some(lone_digest(&packet[r.clone()])),
            })
            .collect();
        for (id, net) in std::mem::take(&mut self.corrections) {
            let state = group.by_net(net).map(|e| BodyState::of(e.body()));
            if let (Some(state), Some(p)) = (state, peers.get_mut(&id)) {
                p.conn.stats.corrections += 1;
                core.push(&mut p.conn, &Msg::Correction { net, state });
            }
        }
        let version = core.config.version;
        let mut forwarded = PacketWriter::new();
        for (id, p) in peers.iter_mut() {
            forwarded.clear();
            for (net, (from, payload)) in &self.forward {
                if from != id {
                    // Accepted sections are within the size limit.
                    let _ = forwarded.raw_section(Section {
                        net_id: *net,
                        payload,
                    });
                }
            }
            let own = chunks(&forwarded, DATA_ROOM);
            let mut parts = shared.clone();
            parts.extend(
                own.iter()
                    .map(|r| Chunk::plain(&forwarded.as_bytes()[r.clone()])),
            );
            let datagrams = p.conn.build_data(core.now, version, &parts);
            core.send_all(p.conn.addr, datagrams);
        }
        self.forward.clear();
    }
}

/// The client's side of replication.
pub(crate) struct ClientReplication {
    next_provisional: u32,
}

impl Default for ClientReplication {
    fn default() -> Self {
        ClientReplication {
            next_provisional: 1,
        }
    }
}

impl ClientReplication {
    /// A reliable message from the server.
    pub(crate) fn message(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        stats: &mut PeerStats,
        msg: Msg,
    ) {
        match msg {
            Msg::Spawn {
                net,
                kind,
                owner,
                params,
                state,
            } => {
                if group.by_net(net).is_some() {
                    return;
                }
                match group.insert_with_net_id(net, kind, params, owner) {
                    Ok(eid) => {
                        // A bad body state leaves it where its parameters put it; the next
                        // section corrects it.
                        let _ = group.set_body_state(eid, &state);
                    }
                    Err(e) => {
                        core.counters.failed_spawns += 1;
                        tracing::warn!("cannot spawn {net}: {e}");
                    }
                }
            }
            Msg::Despawn { net } => {
                if let Some(eid) = group.id_of(net) {
                    let _ = group.despawn(eid);
                }
            }
            Msg::SetOwner { net, owner } => {
                if let Some(eid) = group.id_of(net) {
                    let _ = group.set_owner(eid, owner);
                }
            }
            Msg::SpawnConfirmed { provisional, net } => {
                if group.rename_net_id(provisional, net).is_err() {
                    core.counters.failed_spawns += 1;
                }
            }
            Msg::SpawnRefused { provisional } => {
                core.counters.failed_spawns += 1;
                stats.refused_spawns += 1;
                if let Some(eid) = group.id_of(provisional) {
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
            Msg::SpawnRequest { .. } | Msg::DespawnRequest { .. } => {
                stats.refused_messages += 1;
            }
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
            match group.insert_with_net_id(provisional, req.kind, req.params.clone(), me) {
                Ok(eid) => {
                    if let Some(state) = group.get(eid).map(|e| BodyState::of(e.body())) {
                        let msg = Msg::SpawnRequest {
                            provisional,
                            kind: req.kind,
                            params: req.params,
                            state,
                        };
                        core.push(conn, &msg);
                    }
                }
                Err(_) => core.counters.failed_spawns += 1,
            }
        }
        let changes: Vec<Change> = group.drain_changes().collect();
        for change in changes {
            if let Change::Despawned { net, owner } = change
                && owner == me
            {
                core.push(conn, &Msg::DespawnRequest { net });
            }
        }
    }
}

/// Decodes a delivered reliable message, counting one that does not decode.
pub(crate) fn decode_msg(bytes: &[u8], stats: &mut PeerStats) -> Option<Msg> {
    match wire::decode::<Msg>(bytes) {
        Ok(m) => Some(m),
        Err(_) => {
            stats.refused_messages += 1;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_hold_whole_sections_and_fit_the_room() {
        let mut p = PacketWriter::new();
        for i in 0..100u32 {
            p.section(NetId(i), |w| {
                for _ in 0..40 {
                    w.u8(i as u8)
                }
            })
            .unwrap();
        }
        let c = chunks(&p, 500);
        assert!(c.len() >= 9);
        let mut n = 0;
        for r in &c {
            assert!(r.len() <= 500);
            for s in PacketReader::new(&p.as_bytes()[r.clone()]) {
                assert_eq!(s.unwrap().net_id, NetId(n));
                n += 1;
            }
        }
        assert_eq!(n, 100);
        assert_eq!(c.last().unwrap().end, p.as_bytes().len());
    }
}
