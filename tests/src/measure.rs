//! What the benches measure with: a peer stepped by hand, the server's poses over time (to
//! compare what a client draws with where the server had each body at the instant shown),
//! and percentiles.

use lanyard::pose::PoseState;
use lanyard::{EntityGroup, NetId};
use lanyard_net::{NetManager, Transport, pump};
use std::collections::HashMap;

/// One peer of a bench run by hand: its manager, its world and its transport.
pub struct BenchPeer {
    /// The network manager.
    pub net: NetManager,
    /// Its world.
    pub group: EntityGroup,
    /// Its transport.
    pub transport: Box<dyn Transport>,
}

impl BenchPeer {
    /// One frame of `dt` seconds: take in datagrams, update, send, let the time pass.
    pub fn step(&mut self, dt: f32) {
        self.update(dt);
        self.advance(dt);
    }

    /// The first half of a [`step`](Self::step): take in datagrams, update, send.
    pub fn update(&mut self, dt: f32) {
        pump(&mut self.net, self.transport.as_mut());
        self.net.update(&mut self.group, dt);
        pump(&mut self.net, self.transport.as_mut());
    }

    /// The second half of a [`step`](Self::step): let `dt` seconds pass on its transport
    /// (a conditioner lets go of what is due). Peers that all update before any advances
    /// see one another's datagrams a tick later each way alike; stepped one after another,
    /// a peer stepped later gets what an earlier one sent in the same tick, but the earlier
    /// one gets its answer only in the next.
    pub fn advance(&mut self, dt: f32) {
        self.transport.advance(dt);
    }
}

/// The server's poses by the stamp its datagrams carry (its clock, seconds).
#[derive(Default)]
pub struct History {
    poses: HashMap<NetId, Vec<(f64, PoseState)>>,
}

impl History {
    /// Notes the pose of every entity of `group` at server time `t`.
    pub fn note_all(&mut self, group: &EntityGroup, t: f64) {
        for e in group.iter() {
            self.note(e.net_id(), t, PoseState::of(e.body()));
        }
    }

    /// Notes entity `net`'s pose at server time `t` (times rise).
    pub fn note(&mut self, net: NetId, t: f64, pose: PoseState) {
        self.poses.entry(net).or_default().push((t, pose));
    }

    /// Entity `net`'s pose at server time `t`, between the two noted poses around it
    /// (none outside them).
    pub fn at(&self, net: NetId, t: f64) -> Option<PoseState> {
        let h = self.poses.get(&net)?;
        let i = h.partition_point(|(s, _)| *s <= t);
        if i == 0 || i == h.len() {
            return None;
        }
        let (t0, a) = h[i - 1];
        let (t1, b) = h[i];
        let k = ((t - t0) / (t1 - t0)) as f32;
        Some(PoseState {
            pos: a.pos.lerp(b.pos, k),
            rot: a.rot.slerp(b.rot, k),
            linvel: a.linvel.lerp(b.linvel, k),
            angvel: a.angvel,
        })
    }
}

/// The server's clock as its datagrams stamp it (whole milliseconds), ticked by hand.
#[derive(Default)]
pub struct Stamps {
    us: u64,
}

impl Stamps {
    /// Lets `dt` seconds pass; the stamp the server's datagrams carry now, seconds.
    pub fn tick(&mut self, dt: f32) -> f64 {
        self.us += (f64::from(dt) * 1e6).round() as u64;
        (self.us / 1000) as f64 / 1000.0
    }
}

/// The `q` quantile (0 to 1) of `v`; 0 for none.
pub fn quantile(v: &[f32], q: f64) -> f32 {
    if v.is_empty() {
        return 0.0;
    }
    let mut v = v.to_vec();
    v.sort_by(f32::total_cmp);
    v[((v.len() as f64 * q) as usize).min(v.len() - 1)]
}

/// The 95th percentile of `v`; 0 for none.
pub fn p95(v: &[f32]) -> f32 {
    quantile(v, 0.95)
}
