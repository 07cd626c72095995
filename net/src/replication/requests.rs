//! What a client asks of the server on its reliable channel: spawn requests (judged by
//! the kind's spawn judge before anything is built), despawn requests for what it owns,
//! events, and asking for an entity or the whole world again.

use super::server::ServerReplication;
use crate::core::Core;
use crate::endpoint::log_refusal;
use crate::event::NetEvent;
use crate::session::ClientSession;
use crate::wire::Msg;
use lanyard::pose::BodyState;
use lanyard::{ClientId, EntityGroup, KindId, NetId, Owner, SpawnClaim};

/// How often (µs) a client may ask for the whole world again.
const WORLD_RESEND_US: u64 = 5_000_000;

/// A client's request to spawn an entity of `kind` from `params`, its body at `state`;
/// it calls the entity `provisional` until the server confirms it.
struct SpawnAsked {
    provisional: NetId,
    kind: KindId,
    params: Vec<u8>,
    state: BodyState,
}

impl ServerReplication {
    /// A reliable message from a client: a dispatch to what handles each.
    pub(crate) fn message(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        id: ClientId,
        peer: &mut ClientSession,
        msg: Msg,
    ) {
        let owner = Owner::Client(id);
        match msg {
            Msg::SpawnRequest { provisional, .. } if peer.spectator => {
                peer.conn.stats.refused_spawns += 1;
                log_refusal(
                    id,
                    &peer.conn.stats.refused_spawns,
                    "spawn requests (a spectator)",
                );
                peer.refuse_spawn(core, provisional);
            }
            Msg::SpawnRequest {
                provisional,
                kind,
                params,
                state,
            } => {
                let asked = SpawnAsked {
                    provisional,
                    kind,
                    params,
                    state,
                };
                self.spawn_asked(core, group, id, peer, asked);
            }
            Msg::DespawnRequest { net } => despawn_asked(group, owner, peer, net),
            Msg::Claim { net, seq } => self.handoff.claim(core, group, id, peer, (net, seq)),
            Msg::Event { bytes } => core
                .events
                .push_back(NetEvent::Event { from: owner, bytes }),
            Msg::Resync { net } => self.resync(peer, net),
            Msg::ResendWorld => self.resend_world(core, group, id, peer),
            _ => peer.conn.stats.refused_messages += 1,
        }
    }

    /// A client asks to spawn: the kind's judge, then the limit of what one client owns;
    /// a confirmation with the entity's id, or a refusal.
    fn spawn_asked(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        id: ClientId,
        peer: &mut ClientSession,
        asked: SpawnAsked,
    ) {
        let SpawnAsked {
            provisional,
            kind,
            params,
            state,
        } = asked;
        tracing::debug!("{} ({id}) asks to spawn {provisional}", peer.name);
        let owner = Owner::Client(id);
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
                // The judge saw the claimed state; a non-finite one leaves the entity where
                // its parameters put it.
                let _ = group.set_body_state(eid, &state);
                let net = group.get(eid).map_or(NetId(0), |e| e.net_id());
                peer.spawned.insert(provisional, net);
                self.withhold.insert(net, id);
                let msg = core.push(&mut peer.conn, &Msg::SpawnConfirmed { provisional, net });
                if let Some(v) = peer.view.as_mut() {
                    v.ents.insert(self.ledger.of(net), net, msg);
                }
            }
            Err(why) => {
                peer.conn.stats.refused_spawns += 1;
                let kind_name = group.registry().name_of(kind).unwrap_or("?");
                tracing::warn!(
                    "{} ({id}) asked to spawn a {kind_name}: refused ({why}); {} refused so far",
                    peer.name,
                    peer.conn.stats.refused_spawns
                );
                peer.refuse_spawn(core, provisional);
            }
        }
    }

    /// A client lost track of `net`: its next state goes out whole. What it acknowledged
    /// of `net` until now is not what it holds (the states that named the baseline it
    /// lacked were acknowledged too, and more may be on their way): none of it becomes a
    /// baseline.
    fn resync(&mut self, peer: &mut ClientSession, net: NetId) {
        if let (Some(v), Some(slot)) = (peer.view.as_mut(), self.ledger.get(net)) {
            v.ents.void_from(slot, self.number());
            if let Some(seen) = v.ents.get_mut(slot, net) {
                seen.unsent();
            }
        }
    }

    /// A client asks for the whole world again, at most once in [`WORLD_RESEND_US`].
    fn resend_world(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        id: ClientId,
        peer: &mut ClientSession,
    ) {
        let last = peer.world_resent;
        if last.is_some_and(|t| core.now.saturating_sub(t) < WORLD_RESEND_US) {
            peer.conn.stats.refused_messages += 1;
            log_refusal(id, &peer.conn.stats.refused_messages, "refused messages");
            return;
        }
        peer.world_resent = Some(core.now);
        self.resume_world(core, group, id, peer);
    }
}

/// A client asks to despawn `net` (its provisional id or the real one): done if it owns
/// it, counted as refused if another does.
fn despawn_asked(group: &mut EntityGroup, owner: Owner, peer: &mut ClientSession, net: NetId) {
    let net = peer.spawned.get(&net).copied().unwrap_or(net);
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
