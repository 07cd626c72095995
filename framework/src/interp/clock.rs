//! Which moment of the authority's timeline to show: [`RenderClock`] and its
//! [`ClockConfig`] (see the [module docs](super)).

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
/// the link (see the [module docs](super)). Feed it each arrival of authority state
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
    /// Relayed state (another client's, with its time): the trend of `local - remote` at
    /// its arrivals, their jitter, and when the last came.
    relayed: Option<Relayed>,
}

/// Arrivals of relayed state (see [`RenderClock::relayed_arrival`]).
#[derive(Debug, Clone, Copy)]
struct Relayed {
    offset: f64,
    jitter: f64,
    last: f64,
}

/// How long the render delay keeps room for relayed state after the last arrived, seconds.
pub const RELAYED_HOLD: f64 = 2.0;

/// One arrival in a trend and its jitter: the trend follows slowly (clock drift, a route
/// change); the jitter (mean absolute deviation) rises quickly and falls slowly. Returns
/// false on a deviation over a second (a gap, or a restart of the sender's clock).
fn follow(offset: &mut f64, jitter: &mut f64, d: f64) -> bool {
    let dev = d - *offset;
    *offset += 0.02 * dev;
    let a = if dev.abs() > *jitter { 0.1 } else { 0.03 };
    *jitter += a * (dev.abs() - *jitter);
    dev.abs() <= 1.0
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
            relayed: None,
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
        match &mut self.offset {
            None => self.offset = Some(d),
            Some(o) => {
                if !follow(o, &mut self.jitter, d) {
                    // A gap or a restart of the authority's clock: start over.
                    self.offset = Some(d);
                    self.jitter = 0.0;
                    self.shown = None;
                    self.relayed = None;
                }
            }
        }
        self.newest_remote = self.newest_remote.max(remote);
    }

    /// State relayed by the authority for another peer (a client's section the server
    /// passed on), stamped `remote` with when that peer had it (the authority's clock),
    /// arrived at `local`. It is older than the authority's own state by that peer's
    /// trip: for the next [`RELAYED_HOLD`] seconds the render delay leaves room for it
    /// too, so it is drawn between poses that came rather than past the newest.
    pub fn relayed_arrival(&mut self, local: f64, remote: f64) {
        if !(local.is_finite() && remote.is_finite()) {
            return;
        }
        let d = local - remote;
        let kept = self
            .relayed
            .as_mut()
            .is_some_and(|r| follow(&mut r.offset, &mut r.jitter, d));
        match &mut self.relayed {
            Some(r) if kept => r.last = local,
            _ => {
                self.relayed = Some(Relayed {
                    offset: d,
                    jitter: 0.0,
                    last: local,
                })
            }
        }
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
        let own = c.intervals * c.interval + c.jitter_factor * self.jitter;
        // Relayed state is later than the authority's own by its trend's difference; it
        // needs the same room for its own jitter.
        let relayed = match (self.relayed, self.offset) {
            (Some(r), Some(o)) if self.last_local - r.last < RELAYED_HOLD => {
                r.offset - o + c.intervals * c.interval + c.jitter_factor * r.jitter
            }
            _ => 0.0,
        };
        own.max(relayed).clamp(c.min_delay, c.max_delay)
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn relayed_state_widens_the_render_delay_by_its_lateness_for_a_while() {
        // Broadcasts every 50 ms arrive 80 ms after they were stamped; what they relay of
        // another peer was that peer's 100 ms before.
        let mut c = RenderClock::new(ClockConfig::for_rate(20.0));
        let mut t = 0.0;
        let mut next = 0.0;
        let mut run = |c: &mut RenderClock, t: &mut f64, secs: f64, relayed: bool| {
            let end = *t + secs;
            while *t < end {
                if next <= *t {
                    c.arrival(*t, *t - 0.08);
                    if relayed {
                        c.relayed_arrival(*t, *t - 0.18);
                    }
                    next += 0.05;
                }
                *t += 1.0 / 60.0;
                c.advance(*t);
            }
        };
        run(&mut c, &mut t, 3.0, false);
        let own = c.target();
        run(&mut c, &mut t, 3.0, true);
        let with_relayed = c.target();
        assert!(
            (with_relayed - own - 0.1).abs() < 0.01,
            "the delay makes room for the relayed state's 100 ms: {own} -> {with_relayed}"
        );
        // Shown far enough back that the relayed poses are there to draw.
        let shown = c.shown().unwrap();
        assert!(
            shown <= t - 0.18 - 0.03,
            "shown {shown} at {t}: the newest relayed pose is from {}",
            t - 0.18
        );
        run(&mut c, &mut t, RELAYED_HOLD + 0.5, false);
        assert!(
            (c.target() - own).abs() < 0.005,
            "and no more once none comes: {}",
            c.target()
        );
    }
}
