//! Predictions on the server's side: the tick each recent broadcast was written at, and,
//! for one broadcast, each (entity, baseline) pair's prediction, computed once for every
//! client that holds that baseline. A client computes the same prediction from the same
//! section over the same ticks (see [`lanyard::predict`]).

use crate::idmap::IdMap;
use crate::session::baseline::{IN_FLIGHT, SERVER_WINDOW};
use lanyard::NetId;
use lanyard::delta::DeltaCodec;
use lanyard::predict::MAX_PREDICTED_TICKS;
use std::collections::VecDeque;
use std::ops::Range;

/// Predictions of one broadcast, and the ticks of recent broadcasts.
#[derive(Default, Clone)]
pub(super) struct Forecasts {
    /// (broadcast, tick), oldest first.
    ticks: VecDeque<(u32, u32)>,
    /// This broadcast's tick and the physics step.
    tick: u32,
    dt: f32,
    /// The predictions made this broadcast, in `bytes`; `None` where the codec declined.
    pub(super) bytes: Vec<u8>,
    at: IdMap<(NetId, u32), Option<Range<usize>>>,
}

impl Forecasts {
    /// A broadcast begins: `number`, written at `tick`, with physics steps of `dt`.
    pub(super) fn begin(&mut self, number: u32, tick: u32, dt: f32) {
        self.ticks.push_back((number, tick));
        // As far back as a baseline can be and still be predicted from: a body that
        // follows its prediction is not sent, so its baseline ages up to the longest
        // prediction (a broadcast is at least a tick).
        let keep = (SERVER_WINDOW + IN_FLIGHT as u32).max(MAX_PREDICTED_TICKS) as usize + 1;
        while self.ticks.len() > keep {
            self.ticks.pop_front();
        }
        self.tick = tick;
        self.dt = dt;
        self.bytes.clear();
        self.at.clear();
    }

    /// The tick broadcast `number` was written at, if it is recent.
    pub(super) fn tick_of(&self, number: u32) -> Option<u32> {
        let i = self.ticks.partition_point(|(n, _)| *n < number);
        self.ticks.get(i).filter(|(n, _)| *n == number).map(|t| t.1)
    }

    /// Where in [`bytes`](Self::bytes) entity `net`'s prediction from `base` (its section
    /// at broadcast `from`) to this broadcast is; `None` if `codec` cannot predict it.
    pub(super) fn of(
        &mut self,
        net: NetId,
        codec: &dyn DeltaCodec,
        from: u32,
        base: &[u8],
    ) -> Option<Range<usize>> {
        if let Some(r) = self.at.get(&(net, from)) {
            return r.clone();
        }
        let ticks = self.tick_of(from).map(|t| self.tick.wrapping_sub(t));
        let start = self.bytes.len();
        let made = ticks.is_some_and(|n| codec.predict(base, n, self.dt, &mut self.bytes));
        let r = made.then_some(start..self.bytes.len());
        self.at.insert((net, from), r.clone());
        r
    }

    /// Whether `net`'s prediction from `base` (of broadcast `from`) stands for `cur`.
    pub(super) fn agrees(
        &mut self,
        net: NetId,
        codec: &dyn DeltaCodec,
        (from, base): (u32, &[u8]),
        cur: &[u8],
    ) -> bool {
        self.of(net, codec, from, base)
            .is_some_and(|r| codec.agrees(&self.bytes[r], cur))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lanyard::codec::SectionWriter;
    use lanyard::pose::PoseState;
    use lanyard::predict::PredictedPose;
    use lanyard::{Quat, Vec3};

    fn pose(x: f32) -> Vec<u8> {
        let mut b = Vec::new();
        PoseState {
            pos: Vec3::new(x, 0.0, 0.0),
            rot: Quat::IDENTITY,
            linvel: Vec3::new(6.0, 0.0, 0.0),
            angvel: Vec3::ZERO,
        }
        .write(&mut SectionWriter::new(&mut b));
        b
    }

    #[test]
    fn predictions_span_the_ticks_between_broadcasts_and_are_made_once() {
        let mut f = Forecasts::default();
        let codec = PredictedPose::default();
        f.begin(1, 10, 0.1);
        f.begin(2, 13, 0.1);
        // Three ticks of 0.1 s at 6 m/s from broadcast 1.
        assert!(f.agrees(NetId(4), &codec, (1, &pose(0.0)), &pose(1.8)));
        assert!(!f.agrees(NetId(4), &codec, (1, &pose(0.0)), &pose(1.7)));
        assert_eq!(f.at.len(), 1, "one prediction for both questions");
        // A broadcast it no longer knows the tick of cannot be predicted from.
        assert!(f.of(NetId(4), &codec, 0, &pose(0.0)).is_none());
        f.begin(3, 15, 0.1);
        assert!(
            f.bytes.is_empty() && f.at.is_empty(),
            "each broadcast predicts anew"
        );
        assert!(f.agrees(NetId(4), &codec, (2, &pose(1.8)), &pose(3.0)));
    }
}
