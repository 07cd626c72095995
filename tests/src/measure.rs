//! What the benches measure with: the server's poses over time, to compare what a client
//! draws with where the server had each body at the instant shown, and percentiles.

use lanyard::NetId;
use lanyard::pose::PoseState;
use std::collections::HashMap;

/// The server's poses by the stamp its datagrams carry (its clock, seconds).
#[derive(Default)]
pub struct History {
    poses: HashMap<NetId, Vec<(f64, PoseState)>>,
}

impl History {
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
