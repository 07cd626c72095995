//! Hand-off: authority over a server's body passes to the player who pushes it, and back
//! to the server once it rests (after Glenn Fiedler's "Networked Physics in Virtual
//! Reality").
//!
//! A client whose own body (its player, or a body it already holds) touches a server's body
//! of a kind that allows it ([`KindOptions::hand_off`](lanyard::KindOptions::hand_off)),
//! while moving, takes the body at once: it simulates it and streams its state as an owner
//! does, and says so (`Msg::Claim`). So a stack the player walks into comes along, body by
//! body. The server judges each claim against its own world:
//!
//! * the body is the server's (a client that got there first holds it: later claims are
//!   refused), its kind allows hand-off, the client plays (not watches) and holds fewer
//!   than [`MAX_HELD`];
//! * it is within [`REACH`] of something the client holds or owns (contact, with room for
//!   the latency between the two worlds);
//! * the claim names the body's authority sequence number as the client knew it when it
//!   took it, and no older one than the server's (`Entity::authority_seq`: a body that
//!   changed hands since is not the one the client pushed).
//!
//! Granted, the body is the client's (`SetOwner`, to everyone, with its number); its
//! sections are then judged by the kind's `validate` like any owner's, and brought forward
//! by the holder's one-way delay as the server takes them (`Replica::set_holder_lead`), so
//! the server's world has the body where its holder has it now. The other clients are sent
//! the holder's sections as it wrote them, each with how long before the broadcast its
//! holder sent it (the server reckons the client's clock from the stamps its datagrams
//! carry): they draw the body at the instant its holder had it, on one timeline with the
//! holder's player, never the server's guesses between two sections (see
//! `NetManager::relayed_times` and `lanyard::interp::Smoother::after_frame_relayed`).
//! Refused, the claimer is told who
//! holds it and is sent the server's state of it (a `Correction`, as for an illegal
//! section), which its client paths go on from; its views are drawn smoothly there.
//! The server gives the body back when it has stayed put for [`REST`], when none of its
//! holder's bodies came within [`REACH`] for [`APART`], and when its holder
//! leaves (the body stays where it is, the server's again, whatever the kind says of a
//! leaving client's own entities).

use crate::core::{Core, us};
use crate::endpoint::log_refusal;
use crate::event::NetEvent;
use crate::session::ClientSession;
use crate::wire::Msg;
use lanyard::pose::BodyState;
use lanyard::{ClientId, EntityGroup, EntityId, NetId, Owner, Vec3};
use std::collections::BTreeMap;

/// The server's side of hand-off: which of its bodies clients hold, and which it took back
/// lately (a client's sections for those may still cross the news on the wire).
#[derive(Debug, Default, Clone)]
pub(crate) struct Handoff {
    /// The server's bodies clients hold.
    held: BTreeMap<NetId, Held>,
    /// Bodies a client believed it held that the server has just kept or taken back, and
    /// when (µs): that client's sections for them still cross the news on the wire.
    taken_back: BTreeMap<NetId, (ClientId, u64)>,
}

/// A server's body a client holds.
#[derive(Debug, Clone, Copy)]
struct Held {
    client: ClientId,
    /// Where its rest began (the server's copy jitters a little under its holder's
    /// corrections, so rest is staying put, not a speed).
    anchor: Vec3,
    /// Since when (µs, the core's clock) it has stayed within [`REST_DRIFT`] of `anchor`.
    quiet_since: u64,
    /// When (µs) one of its holder's other bodies was last within reach.
    near_at: u64,
}

/// How close (metres between bounding boxes) a claimed body must be, on the server, to one
/// the client holds or owns: contact, with room for the latency between the two worlds.
pub(crate) const REACH: f32 = 1.0;
/// A held body that stays within this of where it was (metres) rests...
const REST_DRIFT: f32 = 0.01;
/// ...and after this long at rest (seconds) it returns to the server.
pub(crate) const REST: f32 = 0.5;
/// A held body none of its holder's other bodies came within reach of for this long
/// (seconds) returns to the server.
pub(crate) const APART: f32 = 3.0;
/// How long (seconds) after the server keeps or takes back a body a client believed it
/// held, that client's sections for it are taken for ones that crossed the news on the
/// wire (dropped quietly), not for a client sending for what it does not own.
const LATE: f32 = 2.0;
/// The most bodies one client holds at once.
pub(crate) const MAX_HELD: usize = 32;

impl Handoff {
    /// Whether client `id` believed it held `net` until the server took it back lately:
    /// its sections for it are late, not a client sending for what it does not own.
    pub(crate) fn taken_from(&self, net: NetId, id: ClientId) -> bool {
        self.taken_back.get(&net).is_some_and(|(c, _)| *c == id)
    }

    /// A client's claim on the server's body `net`, which it took when its authority's
    /// sequence number was `seq`: granted, or refused with who holds it.
    pub(crate) fn claim(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        id: ClientId,
        peer: &mut ClientSession,
        (net, seq): (NetId, u16),
    ) {
        let Some(e) = group.by_net(net) else {
            // Gone meanwhile: its despawn tells the client.
            return;
        };
        let (eid, owner, e_at) = (e.id(), e.owner(), e.body().translation());
        let now_seq = e.authority_seq();
        let server_state = BodyState::of(e.body());
        let held = self.held.values().filter(|h| h.client == id).count();
        let hand_off = group
            .registry()
            .options(e.kind())
            .is_some_and(|o| o.hand_off);
        let refusal = if peer.spectator {
            Some("a spectator")
        } else if owner != Owner::Server {
            Some("another holds it")
        } else if older(seq, now_seq) {
            Some("stale: it changed hands since")
        } else if !hand_off {
            Some("its kind forbids hand-off")
        } else if held >= MAX_HELD {
            Some("it holds too many")
        } else if !within_reach(group, eid, id) {
            Some("it touches nothing the client holds")
        } else {
            None
        };
        let stats = &mut peer.conn.stats;
        if let Some(why) = refusal {
            stats.refused_claims += 1;
            // It took the body at once: its sections for it are on the way.
            self.taken_back.insert(net, (id, core.now));
            tracing::debug!("{} ({id}) claimed {net}: refused ({why})", peer.name);
            log_refusal(id, &stats.refused_claims, "refused claims");
            let seq = now_seq;
            core.push(&mut peer.conn, &Msg::SetOwner { net, owner, seq });
            // It may have moved the body meanwhile: put it back (counted as a refused
            // claim, not as a correction of an illegal section).
            let correction = Msg::Correction {
                net,
                state: server_state,
            };
            core.push(&mut peer.conn, &correction);
            return;
        }
        stats.claims += 1;
        // It exists: it was just looked up. A claim naming a newer count than the server's
        // (a new host, whose world began its counts again) counts on from the claim's.
        if older(now_seq, seq) {
            let _ = group.replica().set_authority_seq(eid, seq);
        }
        let _ = group.set_owner(eid, Owner::Client(id));
        let seq = group.get(eid).map_or(0, |e| e.authority_seq());
        let h = Held {
            client: id,
            anchor: e_at,
            quiet_since: core.now,
            near_at: core.now,
        };
        self.held.insert(net, h);
        core.events.push_back(NetEvent::Handed {
            net,
            to: Some(id),
            seq,
        });
    }

    /// Once a frame: the held bodies that rested long enough, or that their holder left
    /// alone long enough, return to the server; the bodies taken back more than [`LATE`]
    /// ago are forgotten (a section for them is no longer a late one). Returns the bodies
    /// given back (nothing of their holders' is to be forwarded any more).
    pub(crate) fn settle(&mut self, core: &mut Core, group: &mut EntityGroup) -> Vec<NetId> {
        self.taken_back
            .retain(|_, (_, at)| core.now.saturating_sub(*at) < us(LATE));
        if self.held.is_empty() {
            return Vec::new();
        }
        let mut back = Vec::new();
        for (net, h) in &mut self.held {
            let Some(e) = group.by_net(*net) else {
                back.push((*net, None));
                continue;
            };
            if e.owner() != Owner::Client(h.client) {
                back.push((*net, None));
                continue;
            }
            let at = e.body().translation();
            if at.distance(h.anchor) > REST_DRIFT {
                h.anchor = at;
                h.quiet_since = core.now;
            }
            let eid = e.id();
            if within_reach(group, eid, h.client) {
                h.near_at = core.now;
            }
            let rested = core.now - h.quiet_since >= us(REST);
            let left_alone = core.now - h.near_at >= us(APART);
            if rested || left_alone {
                back.push((*net, Some(eid)));
            }
        }
        for &(net, eid) in &back {
            self.give_back(core, group, net, eid);
        }
        back.into_iter().map(|(net, _)| net).collect()
    }

    /// `net` is no longer held: the server's again (if it still has it, as `eid`).
    fn give_back(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        net: NetId,
        eid: Option<EntityId>,
    ) {
        if let Some(h) = self.held.remove(&net) {
            self.taken_back.insert(net, (h.client, core.now));
        }
        if let Some(eid) = eid {
            let _ = group.set_owner(eid, Owner::Server);
            let seq = group.get(eid).map_or(0, |e| e.authority_seq());
            core.events
                .push_back(NetEvent::Handed { net, to: None, seq });
        }
    }

    /// A client leaves: what it held is the server's again, where it is (not despawned as
    /// its own entities may be). Returns the bodies given back.
    pub(crate) fn return_held(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        id: ClientId,
    ) -> Vec<NetId> {
        let nets: Vec<NetId> = self
            .held
            .iter()
            .filter(|(_, h)| h.client == id)
            .map(|(n, _)| *n)
            .collect();
        for &net in &nets {
            let eid = group.id_of(net);
            self.give_back(core, group, net, eid);
        }
        nets
    }
}

/// Whether authority sequence number `a` is older than `b` (wrapping: within half the
/// range behind it).
pub(crate) fn older(a: u16, b: u16) -> bool {
    (b.wrapping_sub(a) as i16) > 0
}

/// Whether `eid` is within [`REACH`] of an entity client `id` holds or owns.
fn within_reach(group: &EntityGroup, eid: EntityId, id: ClientId) -> bool {
    group
        .iter()
        .filter(|e| e.owner() == Owner::Client(id) && e.id() != eid)
        .any(|e| group.gap(eid, e.id()).is_some_and(|g| g <= REACH))
}
