//! Smooth, responsive drawing: how a peer shows what its network tells it.
//!
//! The simulation always takes the authority's state exactly (so determinism and replays
//! are untouched); everything here is about what is **drawn**, and runs on one clock, the
//! group's ticks (`tick * dt`, plus the fraction of a tick a frame is into the next one).
//!
//! * [`PoseBuffer`]: an entity's recent authority poses, stamped with the authority's clock,
//!   sampled in between (interpolation) or a little past the newest (bounded extrapolation).
//! * [`RenderClock`]: which moment of the authority's timeline to show. The render delay
//!   adapts to the link: a broadcast interval and a half, plus three times the measured
//!   arrival jitter (the mean absolute deviation of arrival times from their trend, quick to
//!   rise and slower to fall), bounded. It changes by **time dilation**: the shown time runs a
//!   few percent fast or slow until it reaches the target, never jumps (except to start, or
//!   after a gap of more than a second).
//! * [`Smoother`]: per entity, what to draw. An entity this peer does not own is drawn from
//!   its [`PoseBuffer`] at the [`RenderClock`]'s time. One it owns is drawn where its body
//!   is. Either way, a discontinuity (a correction of an owned body, or a new pose that
//!   contradicts what extrapolation already showed) becomes a **visual offset** that decays
//!   toward the true pose: quickly for large errors, gently for small ones, never faster
//!   than [`OFFSET_MAX_SPEED`] (so the decay itself never pops), and a teleport beyond
//!   [`OFFSET_SNAP`] is shown at once.
//!
//! Any kind whose client path applies its section with [`PoseState::correct`] gets all of
//! this without code of its own: `correct` reports the authority pose and any correction to
//! the group ([`EntityGroup::observed_poses`]), and a [`Smoother`] fed with
//! [`Smoother::after_frame`] does the rest.

use crate::group::EntityGroup;
use crate::id::{EntityId, Owner};
use crate::pose::{Observed, PoseState};
use crate::{Quat, Vec3};
use std::collections::{HashMap, VecDeque};

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

    /// The newest recorded pose, with its time.
    pub fn latest(&self) -> Option<(f64, PoseState)> {
        self.samples.back().copied()
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

/// How a [`RenderClock`] picks its delay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockConfig {
    /// The authority's interval between state broadcasts, seconds.
    pub interval: f64,
    /// Broadcast intervals in the delay before jitter (1.5: with one lost broadcast the
    /// buffer runs dry only briefly).
    pub intervals: f64,
    /// Multiples of the measured jitter added to it.
    pub jitter_factor: f64,
    /// The smallest delay, seconds.
    pub min_delay: f64,
    /// The largest delay, seconds.
    pub max_delay: f64,
    /// The most the shown time may run fast or slow while the delay moves (0.1: 10%).
    pub max_dilation: f64,
}

impl ClockConfig {
    /// The defaults for an authority broadcasting `rate` times a second.
    pub fn for_rate(rate: f32) -> Self {
        let interval = 1.0 / f64::from(rate.max(1.0));
        ClockConfig {
            interval,
            intervals: 1.5,
            jitter_factor: 3.0,
            min_delay: interval,
            max_delay: 0.5_f64.max(4.0 * interval),
            max_dilation: 0.1,
        }
    }
}

/// Which moment of the authority's timeline to show, with a render delay that adapts to
/// the link (see the [module docs](self)). Feed it each arrival of authority state
/// ([`arrival`](Self::arrival)) and ask it, once per drawn frame, what to show
/// ([`advance`](Self::advance)). Time is a parameter: `local` is this peer's one clock.
#[derive(Debug, Clone)]
pub struct RenderClock {
    config: ClockConfig,
    /// The trend of `local - remote` at arrival: latency plus the clocks' offset.
    offset: Option<f64>,
    /// Mean absolute deviation of arrivals from the trend, seconds.
    jitter: f64,
    /// The authority time shown at `last_local`.
    shown: Option<f64>,
    last_local: f64,
    newest_remote: f64,
}

impl RenderClock {
    /// A clock with nothing received yet.
    pub fn new(config: ClockConfig) -> Self {
        RenderClock {
            config,
            offset: None,
            jitter: 0.0,
            shown: None,
            last_local: 0.0,
            newest_remote: f64::NEG_INFINITY,
        }
    }

    /// Its configuration.
    pub fn config(&self) -> &ClockConfig {
        &self.config
    }

    /// Authority state stamped `remote` (the authority's clock, seconds) arrived at `local`
    /// (this peer's clock). Older stamps than the newest are reordered arrivals: they
    /// still say something about jitter. The gaps between stamps also tell the
    /// authority's broadcast interval, which the configured one only starts from.
    pub fn arrival(&mut self, local: f64, remote: f64) {
        if !(local.is_finite() && remote.is_finite()) {
            return;
        }
        let gap = remote - self.newest_remote;
        if gap > 0.0 && gap < 2.5 * self.config.interval {
            // The smallest gaps are the interval: follow them down quickly, up slowly.
            // Much longer gaps are a world at rest (nothing changed, nothing sent) or
            // losses, not the rate.
            let a = if gap < self.config.interval {
                0.2
            } else {
                0.05
            };
            self.config.interval += a * (gap - self.config.interval);
        }
        let d = local - remote;
        match self.offset {
            None => self.offset = Some(d),
            Some(o) => {
                let dev = d - o;
                // The trend follows slowly (clock drift, a route change); the jitter
                // estimate rises quickly and falls slowly.
                self.offset = Some(o + 0.02 * dev);
                let a = if dev.abs() > self.jitter { 0.1 } else { 0.03 };
                self.jitter += a * (dev.abs() - self.jitter);
                if dev.abs() > 1.0 {
                    // A gap or a restart of the authority's clock: start over.
                    self.offset = Some(d);
                    self.jitter = 0.0;
                    self.shown = None;
                }
            }
        }
        self.newest_remote = self.newest_remote.max(remote);
    }

    /// The authority's time now, as arrivals so far reckon it (`local` less the offset of
    /// the two clocks and the typical latency), or `None` before any arrived.
    pub fn remote_now(&self, local: f64) -> Option<f64> {
        Some(local - self.offset?)
    }

    /// The measured arrival jitter (mean absolute deviation), seconds.
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// The delay the clock is moving toward, seconds.
    pub fn target(&self) -> f64 {
        let c = &self.config;
        (c.intervals * c.interval + c.jitter_factor * self.jitter).clamp(c.min_delay, c.max_delay)
    }

    /// The delay in use: how far the shown time is behind the authority's time as it
    /// arrives, seconds. The target until anything was shown.
    pub fn delay(&self) -> f64 {
        match (self.offset, self.shown) {
            (Some(o), Some(s)) => self.last_local - o - s,
            _ => self.target(),
        }
    }

    /// The authority time to show at `local` (this peer's clock, never going backward), or
    /// `None` before anything arrived.
    pub fn advance(&mut self, local: f64) -> Option<f64> {
        let o = self.offset?;
        let desired = local - o - self.target();
        let shown = match self.shown {
            None => desired,
            Some(s) => {
                let elapsed = (local - self.last_local).max(0.0);
                let ahead = s + elapsed;
                let err = desired - ahead;
                if err.abs() > 1.0 {
                    desired
                } else {
                    // Run up to max_dilation fast or slow: 50 ms off gives 5%.
                    let m = self.config.max_dilation;
                    ahead + elapsed * (err * 1.0).clamp(-m, m)
                }
            }
        };
        self.shown = Some(shown);
        self.last_local = local;
        Some(shown)
    }

    /// The authority time shown at the last [`advance`](Self::advance).
    pub fn shown(&self) -> Option<f64> {
        self.shown
    }
}

/// A visual offset larger than this (metres) is a teleport: shown at once.
pub const OFFSET_SNAP: f32 = 2.0;
/// The fastest a visual offset decays, metres per second.
pub const OFFSET_MAX_SPEED: f32 = 2.0;

/// What is drawn of one entity on top of where it truly is.
#[derive(Debug, Clone, Copy)]
struct Offset {
    pos: Vec3,
    rot: Quat,
}

impl Default for Offset {
    fn default() -> Self {
        Offset {
            pos: Vec3::ZERO,
            rot: Quat::IDENTITY,
        }
    }
}

impl Offset {
    /// Takes on the jump from `from` to `to` (so what is drawn does not move).
    fn absorb(&mut self, from: (Vec3, Quat), to: (Vec3, Quat)) {
        self.pos += from.0 - to.0;
        self.rot = (self.rot * from.1 * to.1.inverse()).normalize();
        if self.pos.length() > OFFSET_SNAP {
            *self = Offset::default();
        }
    }

    /// Decays by `dt` seconds: quickly when large, gently when small, never faster than
    /// [`OFFSET_MAX_SPEED`].
    fn decay(&mut self, dt: f32) {
        let len = self.pos.length();
        if len > 0.0 {
            let rate = if len > 0.1 { 12.0 } else { 6.0 };
            let step = (len * (1.0 - (-rate * dt).exp())).min(OFFSET_MAX_SPEED * dt);
            self.pos *= if len - step < 1e-4 {
                0.0
            } else {
                (len - step) / len
            };
        }
        let angle = self.rot.angle_between(Quat::IDENTITY);
        if angle > 1e-4 {
            let keep = (-8.0 * dt).exp();
            self.rot = Quat::IDENTITY.slerp(self.rot, keep).normalize();
        } else {
            self.rot = Quat::IDENTITY;
        }
    }

    fn apply(&self, pose: (Vec3, Quat)) -> (Vec3, Quat) {
        (pose.0 + self.pos, (self.rot * pose.1).normalize())
    }
}

#[derive(Debug, Default)]
struct Track {
    buffer: PoseBuffer,
    offset: Offset,
    /// When it was last drawn (local clock), for the offset's decay.
    drawn_at: Option<f64>,
    /// What it was last drawn from (before the offset), and whether that was its own body
    /// (ours) or its poses: when it changes hands (a hand-off) the drawing switches from
    /// one to the other, and the offset takes the step between them.
    last: Option<((Vec3, Quat), bool)>,
}

/// Slower than this (m/s), a body whose poses stopped coming is at rest, not lost.
pub const REST_SPEED: f32 = 0.05;

/// How long a stalled remote entity keeps moving along its last velocity before it holds.
pub const MAX_EXTRAPOLATION: f64 = 0.25;

/// What to draw of every entity, on one clock (see the [module docs](self)): the group's.
/// Every time it reads, [`after_frame`](Self::after_frame) as well as
/// [`advance`](Self::advance), comes from the group's tick, so the time poses arrive at
/// and the time they are drawn at can never drift apart.
#[derive(Debug)]
pub struct Smoother {
    clock: RenderClock,
    tracks: HashMap<EntityId, Track>,
    newest_remote: Option<f64>,
    local: f64,
}

impl Smoother {
    /// A smoother for an authority broadcasting `rate` times a second.
    pub fn new(rate: f32) -> Self {
        Smoother {
            clock: RenderClock::new(ClockConfig::for_rate(rate)),
            tracks: HashMap::new(),
            newest_remote: None,
            local: 0.0,
        }
    }

    /// The one clock: `group`'s time, `alpha` of a tick into the next tick.
    pub fn time_of(group: &EntityGroup, alpha: f32) -> f64 {
        (group.tick() as f64 + f64::from(alpha.clamp(0.0, 1.0))) * f64::from(group.config().dt)
    }

    /// The local time of the last [`after_frame`](Self::after_frame) or
    /// [`advance`](Self::advance).
    pub fn local_time(&self) -> f64 {
        self.local
    }

    /// The render clock.
    pub fn clock(&self) -> &RenderClock {
        &self.clock
    }

    /// Takes in what the group's last frame observed; call it after every frame. `remote`
    /// is the authority's clock time of the state the frame applied (from the network
    /// layer), if any came; without one (a server, a replay) poses are stamped with the
    /// group's own time.
    pub fn after_frame(&mut self, group: &EntityGroup, remote: Option<f64>) {
        let local = Self::time_of(group, 0.0);
        self.local = local;
        let observed = group.observed_poses();
        let stamp = match (remote, self.newest_remote) {
            (Some(r), newest) => {
                if newest.is_none() {
                    // The first stamp from an authority: what was stamped with our own
                    // clock until now (spawn states while joining) is on another clock.
                    self.clock = RenderClock::new(*self.clock.config());
                    self.tracks.clear();
                }
                if newest.is_none_or(|n| r > n) {
                    self.clock.arrival(local, r);
                    self.newest_remote = Some(r);
                }
                r
            }
            // Poses without a stamp of their own (a spawn's state) on a peer that has an
            // authority: the authority's time now, as the clock reckons it.
            (None, Some(_)) => match self.clock.remote_now(local) {
                Some(r) => r,
                None => return,
            },
            // No authority sends us stamps (a server, a replay): our own clock is theirs.
            (None, None) => {
                if !observed.is_empty() {
                    self.clock.arrival(local, local);
                }
                local
            }
        };
        let shown = self.clock.shown();
        let me = group.local_owner();
        for o in observed {
            let owned = group.get(o.id).is_some_and(|e| e.owner() == me);
            self.observe(o, stamp, shown, owned);
        }
        self.tracks.retain(|id, _| group.get(*id).is_some());
    }

    fn observe(&mut self, o: &Observed, stamp: f64, shown: Option<f64>, owned: bool) {
        let t = self.tracks.entry(o.id).or_default();
        if owned {
            // An owned entity is drawn where its body is: a correction of the body is the
            // only jump it can make. Draw none.
            if let Some(from) = o.corrected_from {
                t.offset.absorb(from, (o.applied.pos, o.applied.rot));
            }
            return;
        }
        // A pose that contradicts what extrapolation already showed: the same.
        let was = shown
            .filter(|s| t.buffer.latest_time().is_some_and(|l| *s > l))
            .and_then(|s| Some((s, t.buffer.sample(s, MAX_EXTRAPOLATION)?)));
        // An entity at rest is not sent again while it stays so: its last pose held until
        // the broadcast before this one. Say so, or it would seem to have crept from there
        // all along.
        let interval = self.clock.config().interval;
        if let Some((t0, p0)) = t.buffer.latest()
            && stamp - t0 > 1.5 * interval
            && p0.linvel.length() < REST_SPEED
        {
            t.buffer.push(stamp - interval, p0);
        }
        t.buffer.push(stamp, o.authority);
        if let Some((s, before)) = was
            && let Some(after) = t.buffer.sample(s, MAX_EXTRAPOLATION)
        {
            t.offset.absorb(before, after);
        }
    }

    /// Where to draw entity `id`: its body if `me` owns it, else its poses at the render
    /// clock's time; plus its decaying visual offset. Call it once per drawn frame per
    /// entity, after [`advance`](Self::advance).
    pub fn pose(&mut self, group: &EntityGroup, id: EntityId, me: Owner) -> Option<(Vec3, Quat)> {
        let local = self.local;
        let e = group.get(id)?;
        let body = (e.body().translation(), *e.body().rotation());
        let shown = self.clock.shown();
        let t = self.tracks.entry(id).or_default();
        let ours = e.owner() == me;
        let truth = match (ours, shown) {
            (false, Some(s)) => {
                let was_ours = t.last.is_some_and(|(_, ours)| ours);
                if t.buffer.is_empty() || was_ours {
                    // Nothing came since it appeared (its spawn placed it, and it has not
                    // moved), or it was ours until now and what its poses said before is
                    // stale: where it is now is where it was then.
                    t.buffer = PoseBuffer::new();
                    t.buffer.push(s, PoseState::of(e.body()));
                }
                t.buffer.sample(s, MAX_EXTRAPOLATION)?
            }
            _ => body,
        };
        if let Some((before, was_ours)) = t.last
            && was_ours != ours
        {
            t.offset.absorb(before, truth);
        }
        t.last = Some((truth, ours));
        let dt = t.drawn_at.map_or(0.0, |d| (local - d).max(0.0)) as f32;
        t.drawn_at = Some(local);
        t.offset.decay(dt);
        Some(t.offset.apply(truth))
    }

    /// Moves the render clock to the group's time, `alpha` of a tick into the next tick,
    /// once per drawn frame; returns the authority time shown.
    pub fn advance(&mut self, group: &EntityGroup, alpha: f32) -> Option<f64> {
        self.local = Self::time_of(group, alpha);
        self.clock.advance(self.local)
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

    /// Feeds a clock `secs` of broadcasts every 50 ms, each arriving after `latency` plus a
    /// jitter drawn uniformly from ±`jitter`; draws at 60 frames a second. Returns the
    /// largest step of the shown time relative to the frame time, as a fraction.
    fn run(
        c: &mut RenderClock,
        t: &mut f64,
        secs: f64,
        latency: f64,
        jitter: f64,
        rng: &mut crate::SeededRng,
    ) -> f64 {
        let mut arrivals: Vec<(f64, f64)> = Vec::new();
        let end = *t + secs;
        let mut next_send = *t;
        let mut worst: f64 = 0.0;
        let mut last_shown = c.shown();
        while *t < end {
            while next_send <= *t {
                let j = (f64::from(rng.next_f32()) * 2.0 - 1.0) * jitter;
                arrivals.push((next_send + latency + j, next_send));
                next_send += 0.05;
            }
            arrivals.sort_by(|a, b| a.0.total_cmp(&b.0));
            while arrivals.first().is_some_and(|a| a.0 <= *t) {
                let (_, remote) = arrivals.remove(0);
                c.arrival(*t, remote);
            }
            *t += 1.0 / 60.0;
            if let Some(s) = c.advance(*t) {
                if let Some(l) = last_shown {
                    worst = worst.max(((s - l) * 60.0 - 1.0).abs());
                }
                last_shown = Some(s);
            }
        }
        worst
    }

    #[test]
    fn the_render_delay_adapts_up_when_jitter_rises_and_back_down_when_it_falls() {
        let mut rng = crate::SeededRng::new(7);
        let mut c = RenderClock::new(ClockConfig::for_rate(20.0));
        let mut t = 0.0;
        run(&mut c, &mut t, 10.0, 0.001, 0.0005, &mut rng);
        let calm = c.delay();
        assert!(
            calm <= 2.5 * 0.05,
            "on a calm link the delay is at most 2.5 intervals: {calm}"
        );
        let worst = run(&mut c, &mut t, 10.0, 0.08, 0.03, &mut rng);
        let rough = c.delay();
        assert!(
            rough > calm + 0.03,
            "jitter raised the delay: {calm} -> {rough}"
        );
        assert!(worst <= 0.1 + 1e-9, "time dilated by at most 10%: {worst}");
        let worst = run(&mut c, &mut t, 30.0, 0.001, 0.0005, &mut rng);
        let calm_again = c.delay();
        assert!(
            calm_again < rough - 0.03 && calm_again <= 2.5 * 0.05,
            "back down: {rough} -> {calm_again}"
        );
        assert!(worst <= 0.1 + 1e-9, "and smoothly: {worst}");
        assert!(c.delay() <= c.config().max_delay + 1e-9);
        eprintln!("delay: calm {calm:.4}, rough {rough:.4}, calm again {calm_again:.4}");
    }

    #[test]
    fn a_correction_is_drawn_without_a_jump_and_decays_to_the_truth() {
        let mut o = Offset::default();
        let from = (Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY);
        let to = (Vec3::new(1.5, 0.0, 0.0), Quat::from_rotation_y(0.3));
        o.absorb(from, to);
        let drawn = o.apply(to);
        assert!((drawn.0 - from.0).length() < 1e-6, "no jump: {drawn:?}");
        assert!(drawn.1.angle_between(from.1) < 1e-4);
        let mut last = drawn.0;
        for _ in 0..120 {
            o.decay(1.0 / 60.0);
            let d = o.apply(to).0;
            assert!(
                (d - last).length() <= OFFSET_MAX_SPEED / 60.0 + 1e-6,
                "never pops"
            );
            last = d;
        }
        assert!(o.pos.length() < 1e-3, "decayed: {:?}", o.pos);
        assert!(o.rot.angle_between(Quat::IDENTITY) < 1e-3);
        // A teleport is shown at once.
        let mut o = Offset::default();
        o.absorb(from, (Vec3::new(10.0, 0.0, 0.0), Quat::IDENTITY));
        assert_eq!(o.pos, Vec3::ZERO);
    }

    #[test]
    fn brought_forward_a_body_in_flight_falls_and_one_on_the_ground_slides() {
        let g = Vec3::new(0.0, -9.81, 0.0);
        let flying = PoseState {
            pos: Vec3::new(0.0, 2.0, 0.0),
            rot: Quat::IDENTITY,
            linvel: Vec3::new(1.0, 3.0, 0.0),
            angvel: Vec3::new(0.0, 1.0, 0.0),
        };
        let a = flying.advanced(0.1, g);
        assert!((a.pos - Vec3::new(0.1, 2.0 + 0.3 - 0.04905, 0.0)).length() < 1e-5);
        assert!((a.linvel.y - (3.0 - 0.981)).abs() < 1e-5);
        assert!((a.rot.angle_between(Quat::IDENTITY) - 0.1).abs() < 1e-4);
        let sliding = PoseState {
            linvel: Vec3::new(2.0, 0.0, 0.0),
            ..flying
        };
        let b = sliding.advanced(0.1, g);
        assert_eq!(b.pos.y, 2.0, "no sinking into the ground");
        assert!((b.pos.x - 0.2).abs() < 1e-6);
        assert_eq!(sliding.advanced(0.0, g), sliding);
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
