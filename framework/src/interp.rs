//! Smooth drawing of remote entities: interpolation between received poses, and
//! extrapolation when the next one is late.
//!
//! A controller whose sections carry a pose pushes each one into a [`PoseBuffer`] with the
//! time it stands for; the renderer samples the buffer a little in the past (the render
//! delay), so it nearly always has a pose on each side to blend between. When the stream
//! stalls, the buffer extrapolates along the last velocity for a bounded time, then holds.
//! Purely visual: it never touches the simulation, so it costs determinism nothing.

use crate::pose::PoseState;
use crate::{Quat, Vec3};
use std::collections::VecDeque;

/// A recent history of an entity's poses, by time in seconds.
#[derive(Debug, Clone, Default)]
pub struct PoseBuffer {
    samples: VecDeque<(f64, PoseState)>,
}

/// How many poses a buffer keeps.
pub const CAPACITY: usize = 32;

impl PoseBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the pose the entity had at `time`. Poses older than the newest are ignored
    /// (a late, reordered section); one at the same time replaces it.
    pub fn push(&mut self, time: f64, pose: PoseState) {
        match self.samples.back() {
            Some(&(t, _)) if time < t => return,
            Some(&(t, _)) if time == t => {
                self.samples.pop_back();
            }
            _ => {}
        }
        self.samples.push_back((time, pose));
        while self.samples.len() > CAPACITY {
            self.samples.pop_front();
        }
    }

    /// Whether nothing was recorded yet.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The newest recorded time.
    pub fn latest_time(&self) -> Option<f64> {
        self.samples.back().map(|s| s.0)
    }

    /// The position and rotation to draw at `time`: blended between the poses around it,
    /// or carried along the newest pose's velocity for at most `max_extrapolation` seconds
    /// past it, or the oldest pose before the history starts.
    pub fn sample(&self, time: f64, max_extrapolation: f64) -> Option<(Vec3, Quat)> {
        let (first_t, first) = *self.samples.front()?;
        if time <= first_t {
            return Some((first.pos, first.rot));
        }
        let (last_t, last) = *self.samples.back()?;
        if time >= last_t {
            let ahead = (time - last_t).min(max_extrapolation.max(0.0)) as f32;
            let spin = last.angvel * ahead;
            let rot = if spin.length_squared() > 0.0 {
                (Quat::from_scaled_axis(spin) * last.rot).normalize()
            } else {
                last.rot
            };
            return Some((last.pos + last.linvel * ahead, rot));
        }
        // The first sample after `time`; the one before it exists since time > first_t.
        let i = self.samples.partition_point(|(t, _)| *t <= time);
        let (t0, a) = self.samples[i - 1];
        let (t1, b) = self.samples[i];
        let k = ((time - t0) / (t1 - t0)) as f32;
        Some((a.pos.lerp(b.pos, k), a.rot.slerp(b.rot, k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(x: f32, vx: f32) -> PoseState {
        PoseState {
            pos: Vec3::new(x, 0.0, 0.0),
            rot: Quat::IDENTITY,
            linvel: Vec3::new(vx, 0.0, 0.0),
            angvel: Vec3::ZERO,
        }
    }

    #[test]
    fn interpolates_between_and_extrapolates_past_with_a_bound() {
        let mut b = PoseBuffer::new();
        assert!(b.sample(0.0, 0.1).is_none());
        b.push(1.0, at(0.0, 2.0));
        b.push(1.1, at(1.0, 2.0));
        b.push(1.05, at(99.0, 0.0)); // late: ignored
        assert_eq!(b.sample(0.5, 0.1).unwrap().0.x, 0.0);
        assert!((b.sample(1.05, 0.1).unwrap().0.x - 0.5).abs() < 1e-5);
        // 50 ms past the newest: carried along its velocity...
        assert!((b.sample(1.15, 0.1).unwrap().0.x - 1.1).abs() < 1e-5);
        // ...but never more than the bound.
        assert!((b.sample(5.0, 0.1).unwrap().0.x - 1.2).abs() < 1e-5);
    }

    #[test]
    fn keeps_a_bounded_history() {
        let mut b = PoseBuffer::new();
        for i in 0..100 {
            b.push(f64::from(i), at(i as f32, 0.0));
        }
        assert_eq!(b.samples.len(), CAPACITY);
        assert_eq!(b.latest_time(), Some(99.0));
    }
}
