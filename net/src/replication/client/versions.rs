//! What a client received of one entity, by the server's broadcast ([`Versions`]).

use crate::replication::CLIENT_KEEP;
use crate::wire::{self, Body};
use lanyard::delta::DeltaCodec;
use std::collections::VecDeque;

/// The sections a client received of one entity, by the server's broadcast: what the
/// server's deltas name as baselines.
#[derive(Default, Clone)]
pub(super) struct Versions {
    /// (broadcast, the server's tick at it if it said, section), oldest first.
    pub(super) versions: VecDeque<(u32, Option<u32>, Vec<u8>)>,
    /// The broadcast of the newest section applied.
    pub(super) applied: Option<u32>,
    /// When (µs) a section of the entity last came.
    pub(super) at: u64,
    /// The frame (its time, µs) in which a state a broadcast vouched for was last offered:
    /// a guess after a missed broadcast in the same frame (a backlog taken at once, after
    /// a stall) does not replace it.
    pub(super) dated: u64,
    /// Whether its sections start with a pose, as the last whole one said
    /// ([`Body::FullPosed`]): they then travel by the group's
    /// [`PoseCodec`](lanyard::PoseCodec) for it.
    pub(super) posed: bool,
    /// Whether the newest section came relayed from the client that holds the body (with
    /// its own time): no broadcast vouches for a prediction from it, even before we hear
    /// that the body changed hands.
    pub(super) relayed: bool,
    /// Once the body was given to us: the number of the broadcast whose datagram said so.
    /// A state of no later broadcast was the server's from before (it sends none to the
    /// holder), and is dropped; a later one came after the server took the body back.
    pub(super) granted_at: Option<u32>,
    /// The newest broadcast a datagram of which spoke for the entity (listed it or not).
    /// A broadcast's silence vouches for our prediction only if we heard the one before
    /// it speak for the entity too: one we missed may have carried a change, and the
    /// server's silence then means "as I last sent", not "as you predict".
    pub(super) covered: Option<u32>,
}

impl Versions {
    /// Notes whether the entity's sections start with a pose, if `body` is whole (every
    /// whole section says so).
    pub(super) fn note_whole(&mut self, body: Body<'_>) {
        match body {
            Body::Full(_) => self.posed = false,
            Body::FullPosed(_) => self.posed = true,
            _ => {}
        }
    }

    /// Keeps the section a spawn message carried, as what broadcast `b.number` said.
    pub(super) fn keep_spawned(&mut self, b: wire::SpawnBase, latest: u32) {
        self.posed = b.posed;
        self.keep((b.number, b.tick), b.bytes, latest.max(b.number));
    }

    /// The section of broadcast `number`, and the tick it was written at.
    pub(super) fn at(&self, number: u32) -> Option<(&[u8], Option<u32>)> {
        self.versions
            .iter()
            .find(|(f, _, _)| *f == number)
            .map(|(_, t, b)| (b.as_slice(), *t))
    }

    pub(super) fn newest(&self) -> Option<(&[u8], Option<u32>)> {
        self.versions.back().map(|(_, t, b)| (b.as_slice(), *t))
    }

    /// The section `body` stands for, in broadcast `number` written at `tick`: whole, or
    /// resolved against the section of the broadcast it names (or the prediction from
    /// it) by `codec`, physics steps of `dt`; written to `out`. False if we lack that
    /// section.
    pub(super) fn resolve(
        &self,
        body: Body<'_>,
        (number, tick): (u32, Option<u32>),
        (codec, dt): (&dyn DeltaCodec, f32),
        out: &mut Vec<u8>,
    ) -> bool {
        out.clear();
        // The prediction from the section of `age` broadcasts ago.
        let mut predicted = Vec::new();
        let foresee = |age: u32, predicted: &mut Vec<u8>| {
            self.at(number.wrapping_sub(age))
                .and_then(|(base, from)| Some((base, tick?.wrapping_sub(from?))))
                .is_some_and(|(base, ticks)| codec.predict(base, ticks, dt, predicted))
        };
        match body {
            Body::Full(b) | Body::FullPosed(b) => {
                out.extend_from_slice(b);
                true
            }
            Body::Predicted { age } => foresee(age, out),
            Body::Delta {
                age,
                predicted: true,
                delta,
            } => foresee(age, &mut predicted) && codec.decode(&predicted, delta, out).is_ok(),
            Body::Delta { age, delta, .. } => self
                .at(number.wrapping_sub(age))
                .is_some_and(|(base, _)| codec.decode(base, delta, out).is_ok()),
            Body::Same { age } => self
                .at(number.wrapping_sub(age))
                .map(|(b, _)| out.extend_from_slice(b))
                .is_some(),
            Body::SameAsNewest { .. } => self
                .newest()
                .map(|(b, _)| out.extend_from_slice(b))
                .is_some(),
        }
    }

    /// Keeps `bytes` as the section of `number`; forgets what is older than `CLIENT_KEEP`
    /// broadcasts before `latest`, except the newest of those. (The server may name that one
    /// long after it was sent, when it sent nothing since; and a datagram it sent just
    /// before its next state may arrive after it.)
    pub(super) fn keep(&mut self, (number, tick): (u32, Option<u32>), bytes: Vec<u8>, latest: u32) {
        let pos = self.versions.partition_point(|(f, _, _)| *f < number);
        if self.versions.get(pos).is_none_or(|(f, _, _)| *f != number) {
            self.versions.insert(pos, (number, tick, bytes));
        }
        let cutoff = latest.saturating_sub(CLIENT_KEEP);
        while self.versions.len() > 1 && self.versions[1].0 < cutoff {
            self.versions.pop_front();
        }
    }
}
