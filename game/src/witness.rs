//! Poses by server broadcast: what a server sent at each recent broadcast, and what a
//! client last took of each entity, so two peers' reports compare an entity at one moment.
//!
//! A client's world is a little behind its server's, and an entity still moving when both
//! report would be in two places by right. Both sides here keep the authority's pose as
//! its section carried it, numbered by the broadcast that sent it
//! ([`NetManager::broadcast_number`](lanyard_net::NetManager::broadcast_number) on the
//! server, [`NetManager::state_broadcast`](lanyard_net::NetManager::state_broadcast) on a
//! client): the server's summary says where an entity was at broadcast N, and a bot's
//! report says it holds the state of broadcast N.

use lanyard::{EntityGroup, EntityId, NetId, Owner};
use std::collections::{BTreeMap, VecDeque};

/// A pose moved by less than this (metres) since the last one logged is not logged again.
const MOVED: f32 = 1e-4;

/// One broadcast: its number, the server's tick, the entities that moved (or came) since
/// the broadcasts before it, with where they were, and the entities that left since.
#[derive(Debug, Clone)]
struct Broadcast {
    number: u32,
    tick: u64,
    moved: Vec<(NetId, [f32; 3])>,
    gone: Vec<NetId>,
}

/// Server: the poses of the last [`SentLog::KEEP_TICKS`] ticks' broadcasts.
#[derive(Debug, Clone, Default)]
pub struct SentLog {
    /// Every entity's pose as of the broadcast `base_number` (before the kept ones).
    base: BTreeMap<NetId, [f32; 3]>,
    /// For each entity in `base`, the broadcast that logged that pose: the entity was
    /// there from that broadcast on, so the log answers for it further back than
    /// `base_number` (a crate at rest since before the log's reach).
    base_since: BTreeMap<NetId, u32>,
    base_number: u32,
    kept: VecDeque<Broadcast>,
    /// The newest pose logged of each entity.
    newest: BTreeMap<NetId, [f32; 3]>,
    /// The poses the server's client paths took since the last broadcast, newest of each:
    /// a client's section it relays may come in any frame, and the broadcast sends the
    /// newest.
    taken: BTreeMap<NetId, [f32; 3]>,
}

impl SentLog {
    /// How far back (ticks) the log reaches: 10 s at 60 ticks a second.
    pub const KEEP_TICKS: u64 = 600;

    /// Notes the poses the frame `group` just ran took ([`EntityGroup::observed_poses`]:
    /// the server's own as their sections carried them, quantized, and the clients' it
    /// relays, as they sent them). Call it after every frame, broadcast or not.
    pub fn observe(&mut self, group: &EntityGroup) {
        let observed = group
            .observed_poses()
            .iter()
            .filter_map(|o| Some((group.get(o.id)?.net_id(), o.authority.pos)));
        for (net, pos) in observed {
            self.taken.insert(net, pos.to_array());
        }
    }

    /// Logs broadcast `number`, made in the frame `group` just ran (after
    /// [`observe`](Self::observe)): the poses its sections carried, the newest the server
    /// took of each entity since the last broadcast.
    pub fn broadcast(&mut self, number: u32, group: &EntityGroup) {
        let tick = group.tick();
        let mut moved = Vec::new();
        for (net, pos) in std::mem::take(&mut self.taken) {
            if group.by_net(net).is_none() {
                continue;
            }
            let old = self.newest.get(&net);
            if old.is_none_or(|q| distance(*q, pos) > MOVED) {
                self.newest.insert(net, pos);
                moved.push((net, pos));
            }
        }
        let gone: Vec<NetId> = self
            .newest
            .keys()
            .filter(|n| group.by_net(**n).is_none())
            .copied()
            .collect();
        for n in &gone {
            self.newest.remove(n);
        }
        self.kept.push_back(Broadcast {
            number,
            tick,
            moved,
            gone,
        });
        while self
            .kept
            .front()
            .is_some_and(|b| b.tick + Self::KEEP_TICKS < tick)
        {
            let Some(old) = self.kept.pop_front() else {
                break;
            };
            for (net, pos) in old.moved {
                self.base.insert(net, pos);
                self.base_since.insert(net, old.number);
            }
            for n in &old.gone {
                self.base.remove(n);
                self.base_since.remove(n);
            }
            self.base_number = old.number;
        }
    }

    /// The pose of `net` as of broadcast `number`, if the log reaches back that far and
    /// the world held it then (before `base_number`, only for an entity that has not moved
    /// since).
    pub fn pose_at(&self, net: NetId, number: u32) -> Option<[f32; 3]> {
        if number < self.base_number {
            let since = *self.base_since.get(&net)?;
            return (since <= number).then(|| self.base[&net]);
        }
        let mut pose = self.base.get(&net).copied();
        for b in self.kept.iter().take_while(|b| b.number <= number) {
            if let Some((_, p)) = b.moved.iter().find(|(n, _)| *n == net) {
                pose = Some(*p);
            }
            if b.gone.contains(&net) {
                pose = None;
            }
        }
        pose
    }

    /// The log in a summary's shape: `base_number` and `base` (net id -> position as of
    /// that broadcast, of every entity in the world then), `base_since` (net id -> the
    /// broadcast that logged that position: the entity stayed there from then until
    /// `base_number`), then `broadcasts`, oldest first,
    /// each with its `number`, `tick`, the positions of the entities that `moved` (or came)
    /// since, and the net ids of those `gone` since.
    pub fn to_json(&self) -> serde_json::Value {
        let poses = |it: &mut dyn Iterator<Item = (&NetId, &[f32; 3])>| {
            let m: serde_json::Map<String, serde_json::Value> = it
                .map(|(n, p)| (n.0.to_string(), serde_json::json!(p)))
                .collect();
            serde_json::Value::Object(m)
        };
        let broadcasts: Vec<serde_json::Value> = self
            .kept
            .iter()
            .map(|b| {
                serde_json::json!({
                    "number": b.number,
                    "tick": b.tick,
                    "moved": poses(&mut b.moved.iter().map(|(n, p)| (n, p))),
                    "gone": b.gone.iter().map(|n| n.0).collect::<Vec<_>>(),
                })
            })
            .collect();
        serde_json::json!({
            "base_number": self.base_number,
            "base": poses(&mut self.base.iter()),
            "base_since": self
                .base_since
                .iter()
                .map(|(n, b)| (n.0.to_string(), serde_json::json!(b)))
                .collect::<serde_json::Map<String, serde_json::Value>>(),
            "broadcasts": broadcasts,
        })
    }
}

/// Client: the newest authoritative pose it took of each entity it does not own, the
/// number of the broadcast that carried it, and whether it came relayed from the client
/// that holds the body (then brought forward by its age, so a moving one's pose is a
/// little ahead of the broadcast's).
#[derive(Debug, Clone, Default)]
pub struct TakenPoses {
    poses: BTreeMap<NetId, (u32, [f32; 3], bool)>,
    /// The broadcast of each entity's applied state as of the last frame noted: a pose is
    /// that broadcast's only in the frame its state was applied.
    dated: BTreeMap<NetId, u32>,
}

impl TakenPoses {
    /// Notes what the frame `group` just ran took from the server; `broadcast_of` says
    /// which broadcast an entity's applied state came in (`NetManager::state_broadcast`).
    pub fn note(
        &mut self,
        group: &EntityGroup,
        me: Option<Owner>,
        broadcast_of: impl Fn(NetId) -> Option<u32>,
    ) {
        // The last pose the frame took of each entity: one whose claim was refused in the
        // frame was ours first, then the server's.
        let mut took: BTreeMap<EntityId, [f32; 3]> = BTreeMap::new();
        for o in group.observed_poses() {
            took.insert(o.id, o.authority.pos.to_array());
        }
        let mut dated = BTreeMap::new();
        for e in group.iter() {
            let net = e.net_id();
            let Some(n) = broadcast_of(net) else { continue };
            dated.insert(net, n);
            // Only in the frame a newer state was applied, and only if the entity's client
            // path took a pose from it (one that repeats the last may be no news to it), and
            // the entity was not ours then: a prediction the server did not vouch for, in
            // a later frame, keeps the broadcast and pose of the last state it did.
            if Some(e.owner()) == me {
                continue;
            }
            let fresh = self.dated.get(&net).is_none_or(|m| n > *m)
                && self.poses.get(&net).is_none_or(|(m, _, _)| n > *m);
            if let (true, Some(pos)) = (fresh, took.get(&e.id())) {
                let relayed = e.owner() != Owner::Server;
                self.poses.insert(net, (n, *pos, relayed));
            }
        }
        self.dated = dated;
    }

    /// The broadcast number and position of the newest state taken of `net`.
    pub fn of(&self, net: NetId) -> Option<(u32, [f32; 3])> {
        self.poses.get(&net).map(|&(n, p, _)| (n, p))
    }

    /// The same, if that state was the server's own (not relayed from a holder): what
    /// the server's log of that broadcast holds exactly.
    pub fn server_state(&self, net: NetId) -> Option<(u32, [f32; 3])> {
        self.poses
            .get(&net)
            .filter(|(_, _, relayed)| !relayed)
            .map(|&(n, p, _)| (n, p))
    }
}

fn distance(a: [f32; 3], b: [f32; 3]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}
