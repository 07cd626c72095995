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
//!   State the authority relays for another peer, stamped with when that peer had it
//!   ([`RenderClock::relayed_arrival`]), is later than the authority's own: while it comes
//!   the delay leaves room for it too, so it is drawn between poses that came.
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
use crate::id::{EntityId, NetId, Owner};
use crate::pose::{Observed, PoseState};
use rapier3d::glamx::glam::{Quat, Vec3};
use std::collections::{HashMap, VecDeque};

mod between;
mod clock;

use between::between;

pub use clock::{ClockConfig, RELAYED_HOLD, RenderClock};

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

    /// Forgets every pose recorded at `time` or later (what another source said of a span
    /// that a truer one now covers).
    pub fn discard_from(&mut self, time: f64) {
        while self.samples.back().is_some_and(|s| s.0 >= time) {
            self.samples.pop_back();
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

    /// The position and rotation to draw at `time`: between the poses around it (evenly, or
    /// at their velocities where those say it changed course abruptly), or carried along
    /// the newest pose's velocity for at most `max_extrapolation` seconds past it, or the
    /// oldest pose before the history starts.
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
        let (pos, turned) = between(&a, &b, (t1 - t0) as f32, (time - t0) as f32);
        Some((pos, a.rot.slerp(b.rot, turned)))
    }
}

/// A visual offset larger than this (metres) is a teleport: shown at once.
pub const OFFSET_SNAP: f32 = 2.0;
/// The fastest a visual offset decays, metres per second.
pub const OFFSET_MAX_SPEED: f32 = 2.0;
/// How fast (per second) an offset decays on a body drawn at this peer's present: its own,
/// or one it holds. Its player pushes it, so it must soon be where the player put it; the
/// step it took when it was taken (drawn until then at the shown instant, behind) goes in
/// a few frames, still no faster than [`OFFSET_MAX_SPEED`].
pub const OWN_OFFSET_RATE: f32 = 20.0;

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

    /// Decays by `dt` seconds: quickly when large, gently when small (at
    /// [`OWN_OFFSET_RATE`] on a body drawn at this peer's present, `own`), never faster
    /// than [`OFFSET_MAX_SPEED`].
    fn decay(&mut self, dt: f32, own: bool) {
        let len = self.pos.length();
        if len > 0.0 {
            let rate = match (own, len > 0.1) {
                (true, _) => OWN_OFFSET_RATE,
                (false, true) => 12.0,
                (false, false) => 6.0,
            };
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
    /// Whether its last pose came relayed, with its client's time (see
    /// [`Smoother::after_frame_relayed`]).
    relayed: bool,
}

impl Track {
    /// Its poses come from another source now: `relayed`, with a client's time (a client
    /// took the body), or back with the authority's; `o` is the first such, at `stamp`,
    /// and `was` what was shown before it. Drops what the old source said of the span the
    /// new poses cover. Whether it dated the body's departure with a pose at rest.
    fn change_source(
        &mut self,
        o: &Observed,
        (stamp, relayed): (f64, bool),
        was: Option<(f64, (Vec3, Quat))>,
    ) -> bool {
        let speed = o.authority.linvel.length();
        let mut dated = false;
        self.buffer.discard_from(stamp);
        // A body a client took: its first pose may come well after the client took it
        // (the claim, or what followed it, was lost on the way), and what the authority
        // said of it since it was taken was the worse account. It left the last place
        // that account can have right when its velocity says: poses later than that
        // go, and one at rest is held until then.
        if relayed && speed > REST_SPEED {
            while let Some((t0, p0)) = self.buffer.latest() {
                let travel = f64::from(p0.pos.distance(o.authority.pos) / speed);
                let left = stamp - travel.min(MAX_DATING);
                if t0 < left {
                    if p0.linvel.length() < REST_SPEED {
                        let rest = PoseState {
                            linvel: Vec3::ZERO,
                            angvel: Vec3::ZERO,
                            ..p0
                        };
                        self.buffer.push(left, rest);
                        dated = true;
                    }
                    break;
                }
                self.buffer.discard_from(t0);
            }
        } else if relayed && let Some((s, _)) = was {
            // At rest where the holder has it: what the authority said of it after the
            // instant shown, not drawn yet, goes as well (the way there is then drawn
            // over what is left of the span, not in the last of it).
            self.buffer.discard_from(s.min(stamp));
        }
        self.relayed = relayed;
        dated
    }
}

/// Slower than this (m/s), a body whose poses stopped coming is at rest, not lost.
pub const REST_SPEED: f32 = 0.05;

/// How far back (seconds) a body a client took is dated from its first relayed pose.
pub const MAX_DATING: f64 = 0.5;

/// How long a stalled remote entity keeps moving along its last velocity before it holds.
pub const MAX_EXTRAPOLATION: f64 = 0.25;

/// What to draw of every entity, on one clock (see the [module docs](self)): the group's.
/// Every time it reads, [`after_frame`](Self::after_frame) as well as
/// [`advance`](Self::advance), comes from the group's tick, so the time poses arrive at
/// and the time they are drawn at can never drift apart.
#[derive(Debug)]
pub struct Smoother {
    clock: RenderClock,
    /// The clock's configuration as made, which the clock then adapts (the authority's
    /// broadcast interval): what it starts over from.
    configured: ClockConfig,
    tracks: HashMap<EntityId, Track>,
    newest_remote: Option<f64>,
    local: f64,
}

impl Smoother {
    /// A smoother for an authority broadcasting `rate` times a second.
    pub fn new(rate: f32) -> Self {
        let configured = ClockConfig::for_rate(rate);
        Smoother {
            clock: RenderClock::new(configured),
            configured,
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
        self.after_frame_relayed(group, remote, &[]);
    }

    /// [`after_frame`](Self::after_frame), with the times of the sections the authority
    /// relayed for other peers (`(network id, when its peer had it)`, on the authority's
    /// clock, as `lanyard_net::NetManager::relayed_times` gives them): each such pose is
    /// stamped with its own time, and the render delay leaves room for them (see
    /// [`RenderClock::relayed_arrival`]). A body another client pushes is then drawn at
    /// the instant that client moved it, like everything else it moves.
    pub fn after_frame_relayed(
        &mut self,
        group: &EntityGroup,
        remote: Option<f64>,
        relayed: &[(NetId, f64)],
    ) {
        let local = Self::time_of(group, 0.0);
        self.local = local;
        let observed = group.observed_poses();
        let stamp = match (remote, self.newest_remote) {
            (Some(r), newest) => {
                if newest.is_none() {
                    // The first stamp from an authority: what was stamped with our own
                    // clock until now (spawn states while joining) is on another clock,
                    // and what that taught the clock of intervals (one a frame, since our
                    // own frames stamped them) is not the authority's: start over as made.
                    self.clock = RenderClock::new(self.configured);
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
        let times: HashMap<NetId, f64> = relayed.iter().copied().collect();
        for &(_, t) in relayed {
            self.clock.relayed_arrival(local, t);
        }
        for o in observed {
            let e = group.get(o.id);
            let owned = e.is_some_and(|e| e.owner() == me);
            let own_time = e.and_then(|e| times.get(&e.net_id()).copied());
            self.observe(
                o,
                (own_time.unwrap_or(stamp), own_time.is_some()),
                shown,
                owned,
            );
        }
        self.tracks.retain(|id, _| group.get(*id).is_some());
    }

    fn observe(
        &mut self,
        o: &Observed,
        (stamp, relayed): (f64, bool),
        shown: Option<f64>,
        owned: bool,
    ) {
        let t = self.tracks.entry(o.id).or_default();
        // What is shown now, before this pose changes the account: if it changes what was
        // shown (a pose that contradicts what extrapolation already showed, or a span
        // another source had told otherwise), the step is taken by the offset.
        let was = shown
            .filter(|_| !owned)
            .and_then(|s| Some((s, t.buffer.sample(s, MAX_EXTRAPOLATION)?)));
        // A body that came with the authority's time and now comes relayed (a client took
        // it) or back: what the other source said of the span its new poses cover was the
        // worse account of it.
        let dated = relayed != t.relayed && t.change_source(o, (stamp, relayed), was);
        if owned {
            // An owned entity is drawn where its body is: a correction of the body is the
            // only jump it can make. Draw none.
            if let Some(from) = o.corrected_from
                && t.last.is_some_and(|(_, ours)| ours)
            {
                t.offset.absorb(from, (o.applied.pos, o.applied.rot));
            }
            // What its poses said before it was ours is stale: when it is handed back, its
            // poses start again from the first that comes (whether or not it was drawn
            // while it was ours).
            t.buffer.samples.clear();
            return;
        }
        // The server does not send an entity again while it stays at rest: its last pose
        // held until the broadcast before this one. Say so, or it would seem to have crept
        // from there all along. (A client sends what it holds every time: a gap in relayed
        // poses is a loss, and the poses' speeds say when it left.)
        let interval = self.clock.config().interval;
        if let Some((t0, p0)) = t.buffer.latest()
            && !dated
            && !relayed
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
        t.offset.decay(dt, ours);
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

    /// A body that lands between two poses (4 m/s, then 0.2 m/s, 10 cm in 100 ms): drawn
    /// evenly it would creep at the mean 1 m/s across the landing and never show it. Drawn
    /// at the first pose's speed until it lands, then at the second's.
    #[test]
    fn a_body_that_lands_between_two_poses_keeps_its_speed_until_it_lands() {
        let mut b = PoseBuffer::new();
        b.push(1.0, at(0.0, 4.0));
        b.push(1.1, at(0.1, 0.2));
        let x = |t: f64| b.sample(1.0 + t, 0.1).unwrap().0.x;
        // It lands after (0.1 - 0.2 * 0.1) / (4 - 0.2) s.
        let landed = (0.1 - 0.02) / 3.8;
        assert!(
            (x(1.0 / 60.0) - 4.0 / 60.0).abs() < 1e-4,
            "{}",
            x(1.0 / 60.0)
        );
        let after = 4.0 * landed + 0.2 * (0.05 - landed);
        assert!(
            (x(0.05) - after).abs() < 1e-4,
            "{} against {after}",
            x(0.05)
        );
        assert!((x(0.1) - 0.1).abs() < 1e-6);
        // One that only slows a little is drawn evenly, as before.
        let mut c = PoseBuffer::new();
        c.push(1.0, at(0.0, 1.1));
        c.push(1.1, at(0.1, 0.9));
        assert!((c.sample(1.05, 0.1).unwrap().0.x - 0.05).abs() < 1e-6);
    }

    /// A client sends what it holds every time, at rest or not, so a gap in its relayed
    /// poses is a loss, not a rest: a held body at rest at 1.05 s and 0.2 m on at 2 m/s at
    /// 1.2 s left at 1.1 s, not after 1.15 s (when a body the server does not send again
    /// at rest must still have lain there).
    #[test]
    fn a_gap_in_relayed_poses_is_a_loss_not_a_rest() {
        let mut s = Smoother::new(20.0);
        s.observe(&observed(at(0.0, 0.0)), (1.0, true), None, false);
        s.observe(&observed(at(0.0, 0.0)), (1.05, true), None, false);
        s.observe(&observed(at(0.2, 2.0)), (1.2, true), None, false);
        let b = &s.tracks[&ID].buffer;
        let x = |t: f64| b.sample(t, MAX_EXTRAPOLATION).unwrap().0.x;
        assert_eq!(x(1.09), 0.0);
        assert!((x(1.125) - 0.05).abs() < 1e-5, "{}", x(1.125));
        assert!((x(1.2) - 0.2).abs() < 1e-6);
    }

    /// A body this peer held for a while and handed back elsewhere: the poses from before
    /// it was ours say nothing of where it has been since, so it does not slide from there
    /// (it was not drawn while ours, so the drawing cannot tell that it was).
    #[test]
    fn a_body_handed_back_starts_from_its_first_pose_not_from_before_it_was_ours() {
        let mut s = Smoother::new(20.0);
        s.observe(&observed(at(0.0, 0.0)), (1.0, false), None, false);
        for k in 1..=50 {
            let carried = at(f64::from(k) as f32 * 0.05, 1.0);
            s.observe(
                &observed(carried),
                (1.0 + f64::from(k) * 0.05, false),
                None,
                true,
            );
        }
        s.observe(&observed(at(2.3, 0.0)), (3.9, false), None, false);
        let b = &s.tracks[&ID].buffer;
        assert_eq!(b.sample(3.87, MAX_EXTRAPOLATION).unwrap().0.x, 2.3);
    }

    /// A correction of a body that becomes ours in the same frame: it was drawn from its
    /// poses until then, not from the body the correction moved, so the switch to the body
    /// takes the whole step and the correction adds nothing (it would move the drawing by
    /// the correction). Drawn from the body, the correction is what the offset takes.
    #[test]
    fn a_correction_moves_the_drawing_only_if_the_body_was_what_was_drawn() {
        for drawn_ours in [false, true] {
            let mut s = Smoother::new(20.0);
            s.observe(&observed(at(0.0, 0.0)), (1.0, false), None, false);
            s.tracks.get_mut(&ID).unwrap().last = Some(((Vec3::ZERO, Quat::IDENTITY), drawn_ours));
            let mut o = observed(at(-0.2, 0.0));
            o.corrected_from = Some((Vec3::new(-0.4, 0.0, 0.0), Quat::IDENTITY));
            s.observe(&o, (1.05, false), None, true);
            let off = s.tracks[&ID].offset.pos.x;
            let want = if drawn_ours { -0.2 } else { 0.0 };
            assert!(
                (off - want).abs() < 1e-6,
                "drawn ours {drawn_ours}: offset {off}"
            );
        }
    }

    /// Taken where it rests, the body rests 9 cm from where the server's world has it
    /// (the holder's copy drifted). The server's pose after the instant shown is dropped
    /// too, so the way to the holder's place is drawn from the instant shown, not in the
    /// 18 ms between the server's last pose and the holder's first.
    #[test]
    fn a_body_taken_at_rest_elsewhere_moves_there_from_the_instant_shown() {
        let mut s = Smoother::new(20.0);
        s.observe(&observed(at(0.0, 0.0)), (0.95, false), None, false);
        s.observe(&observed(at(0.0, 0.0)), (1.0, false), Some(0.9), false);
        s.observe(&observed(at(0.09, 0.0)), (1.018, true), Some(0.97), false);
        let b = &s.tracks[&ID].buffer;
        let x = |t: f64| b.sample(t, MAX_EXTRAPOLATION).unwrap().0.x;
        let frames: Vec<f32> = (0..4).map(|k| x(0.97 + f64::from(k) / 60.0)).collect();
        for w in frames.windows(2) {
            assert!(w[1] - w[0] < 0.03, "{frames:?}");
        }
        assert!((x(1.018) - 0.09).abs() < 1e-6);
    }

    /// The one body of these tests.
    const ID: EntityId = EntityId {
        index: 0,
        generation: 0,
    };

    /// A frame observed `pose` of it, as the authority's and as applied.
    fn observed(pose: PoseState) -> Observed {
        Observed {
            id: ID,
            authority: pose,
            applied: pose,
            corrected_from: None,
        }
    }

    #[test]
    fn a_body_another_peer_took_is_dated_back_along_its_first_relayed_pose() {
        let mut s = Smoother::new(20.0);
        let id = ID;
        // At rest at x = 0, as the authority said until 2.2 s (its view, a trip late: the
        // peer that took the body had it moving since 2.1 s).
        for k in 0..=22 {
            s.observe(
                &observed(at(0.0, 0.0)),
                (f64::from(k) * 0.1, false),
                None,
                false,
            );
        }
        // The first pose that peer's sections bring: 2.3 s, 0.4 m on at 2 m/s.
        s.observe(&observed(at(0.4, 2.0)), (2.3, true), None, false);
        let b = &s.tracks[&id].buffer;
        let x = |t: f64| b.sample(t, MAX_EXTRAPOLATION).unwrap().0.x;
        assert_eq!(x(2.05), 0.0, "still at rest before it was taken");
        assert!(
            (x(2.2) - 0.2).abs() < 1e-5,
            "moving since 2.1 s: {}",
            x(2.2)
        );
        assert!((x(2.3) - 0.4).abs() < 1e-5);
    }

    /// The authority's own world had the body leave later than the peer that took it (it
    /// learns of the push a trip late): at rest until 2.05 s, then moving at 2.1 and 2.15 s.
    /// The taker's first pose, stamped 2.12 s, is 0.2 m on at 3.6 m/s: it left rest at
    /// 2.064 s, before the authority's moving poses, which go. Dated from the authority's
    /// newest pose instead, the drawing would hold there and leap 12 cm in a frame.
    #[test]
    fn a_taken_body_leaves_the_last_place_it_rested_even_if_the_authority_had_it_moving() {
        let mut s = Smoother::new(20.0);
        for k in 0..=41 {
            let at_rest = observed(at(0.0, 0.0));
            s.observe(&at_rest, (f64::from(k) * 0.05, false), None, false);
        }
        s.observe(&observed(at(0.07, 2.0)), (2.1, false), None, false);
        s.observe(&observed(at(0.16, 1.2)), (2.15, false), None, false);
        s.observe(&observed(at(0.2, 3.6)), (2.12, true), None, false);
        let b = &s.tracks[&ID].buffer;
        let x = |t: f64| b.sample(t, MAX_EXTRAPOLATION).unwrap().0.x;
        let left = 2.12 - 0.2 / 3.6;
        assert_eq!(x(left - 0.001), 0.0, "at rest until it left");
        // Drawn frame by frame, it moves at the taker's speed from there.
        let mut last = x(2.0);
        for k in 1..=8 {
            let now = x(2.0 + f64::from(k) / 60.0);
            assert!(
                now - last <= 3.6 / 60.0 + 1e-5,
                "{last} -> {now} at frame {k}"
            );
            last = now;
        }
        assert!((x(2.12) - 0.2).abs() < 1e-5);
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
            o.decay(1.0 / 60.0, false);
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
    fn on_a_body_drawn_at_our_present_an_offset_goes_in_a_few_frames_without_a_jump() {
        // A crate the player takes while it moves: drawn until then at the shown instant,
        // 8 cm behind where the player's world has it. Within ten frames it is drawn where
        // the player pushes it; on a body drawn at the shown instant the same offset would
        // still be visible then.
        let step = |own: bool| {
            let mut o = Offset::default();
            o.absorb(
                (Vec3::ZERO, Quat::IDENTITY),
                (Vec3::X * 0.08, Quat::IDENTITY),
            );
            let mut last = o.pos;
            for _ in 0..10 {
                o.decay(1.0 / 60.0, own);
                assert!((o.pos - last).length() <= OFFSET_MAX_SPEED / 60.0 + 1e-6);
                last = o.pos;
            }
            o.pos.length()
        };
        assert!(step(true) < 0.01, "own: {}", step(true));
        assert!(step(false) > 0.01, "shown: {}", step(false));
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
