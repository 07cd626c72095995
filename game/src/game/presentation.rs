//! What a peer shows ([`Presentation`]): explosions ([`Blast`]) and score popups
//! ([`Popup`]) for a moment each, the score table, the lines for the screen or the log,
//! and the net graph with its byte rates.

use crate::game::text::clean_line;
use lanyard::prelude::*;
use std::collections::VecDeque;

/// An explosion as a peer saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Blast {
    /// Where.
    pub at: Vec3,
    /// Who threw the grenade.
    pub thrower: Owner,
    /// Seconds since it went off.
    pub age: f32,
}

/// How long an explosion is drawn, seconds.
pub const BLAST_SECONDS: f32 = 1.5;
/// How long a score popup is drawn, seconds.
pub const POPUP_SECONDS: f32 = 2.0;
/// How long a notice (a join, a leave, a chat line) stays on the screen, in seconds; it
/// fades out over the last [`NOTICE_FADE`] of them.
pub const NOTICE_SECONDS: f32 = 10.0;
/// How long a notice takes to fade out, in seconds.
pub const NOTICE_FADE: f32 = 2.0;

/// How many explosions and points this peer has seen since it started: a sound (or any
/// other one-off reaction) plays when a count goes up, however many frames are drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seen {
    /// Explosions.
    pub blasts: u64,
    /// Points (crates and players off the yard).
    pub points: u64,
}

/// "+1 ada" where a crate (or a player) went off the yard.
#[derive(Debug, Clone, PartialEq)]
pub struct Popup {
    /// Who scored.
    pub name: String,
    /// Where, on the yard's edge.
    pub at: Vec3,
    /// Seconds since the point.
    pub age: f32,
}

/// One point of the net graph.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GraphSample {
    /// Round trip to the server, milliseconds (0 on a server).
    pub ping_ms: f32,
    /// Kilobits per second received.
    pub kbps_in: f32,
    /// Kilobits per second sent.
    pub kbps_out: f32,
    /// Estimated loss, 0 to 1.
    pub loss: f32,
}

/// The net graph keeps this many samples, four a second: the last ten seconds.
pub const GRAPH_SAMPLES: usize = 40;

/// Byte rates, measured over the last quarter second of simulated time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Traffic {
    /// Kilobits per second received.
    pub kbps_in: f32,
    /// Kilobits per second sent.
    pub kbps_out: f32,
    window: f32,
    bytes_in: u64,
    bytes_out: u64,
}

/// What one peer shows of the game: it only ever hears of things (a blast, a point, a
/// line), ages them, and keeps what a window or a log reads.
#[derive(Debug, Default)]
pub struct Presentation {
    blasts: Vec<Blast>,
    popups: Vec<Popup>,
    seen: Seen,
    /// Explosions of grenades thrown by other players.
    explosions_by_others: u32,
    /// The score table, highest first.
    scores: Vec<(String, u32)>,
    /// Lines for the screen or the log: joins, leaves, refusals, chat.
    messages: Vec<String>,
    /// The same lines as the screen shows them, each with its age: gone after
    /// [`NOTICE_SECONDS`].
    notices: Vec<(String, f32)>,
    traffic: Traffic,
    graph: VecDeque<GraphSample>,
}

/// The row each popup is drawn on over its spot: 0, or one above every earlier popup
/// within a metre of it, so that two points scored at one spot ("+1 ada" twice) are read
/// one over the other instead of on top of each other.
pub fn popup_rows(popups: &[Popup]) -> Vec<usize> {
    popups
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let near = |q: &&Popup| (q.at - p.at).length() < 1.0;
            popups[..i].iter().filter(near).count()
        })
        .collect()
}

impl Presentation {
    /// Recent explosions (for drawing).
    pub fn blasts(&self) -> &[Blast] {
        &self.blasts
    }

    /// Recent points (for drawing).
    pub fn popups(&self) -> &[Popup] {
        &self.popups
    }

    /// Explosions and points seen so far (for sounds).
    pub fn seen(&self) -> Seen {
        self.seen
    }

    /// Explosions of grenades thrown by other players, so far.
    pub fn explosions_by_others(&self) -> u32 {
        self.explosions_by_others
    }

    /// The score table, highest first.
    pub fn scores(&self) -> &[(String, u32)] {
        &self.scores
    }

    /// The lines not taken yet, oldest first.
    pub fn messages(&self) -> &[String] {
        &self.messages
    }

    /// The lines the screen shows now, newest last, each with how opaque it is (1, then
    /// down to 0 over its last [`NOTICE_FADE`] seconds).
    pub fn notices(&self) -> impl DoubleEndedIterator<Item = (&str, f32)> {
        self.notices.iter().map(|(line, age)| {
            let left = NOTICE_SECONDS - age;
            (line.as_str(), (left / NOTICE_FADE).clamp(0.0, 1.0))
        })
    }

    /// Byte rates.
    pub fn traffic(&self) -> Traffic {
        self.traffic
    }

    /// The last ten seconds of ping, traffic and loss, oldest first, for the net graph.
    pub fn graph(&self) -> &VecDeque<GraphSample> {
        &self.graph
    }

    /// The median ping of the net graph's points (the last ten seconds), if it has any.
    pub fn ping_median(&self) -> Option<f32> {
        let mut points: Vec<f32> = self.graph.iter().map(|s| s.ping_ms).collect();
        points.sort_by(f32::total_cmp);
        points.get(points.len() / 2).copied()
    }

    /// A line to show.
    pub(super) fn say(&mut self, line: String) {
        self.notices.push((line.clone(), 0.0));
        self.messages.push(line);
    }

    /// Takes the lines shown so far.
    pub(super) fn take_messages(&mut self) -> Vec<String> {
        std::mem::take(&mut self.messages)
    }

    /// Forgets the lines shown so far.
    pub(super) fn clear_messages(&mut self) {
        self.messages.clear();
    }

    /// The score table as the server sent it.
    pub(super) fn set_scores(&mut self, table: Vec<(String, u32)>) {
        self.scores = table;
    }

    /// A grenade of `thrower` went off at `at` (`by_other`: not this peer's).
    pub(super) fn blast(&mut self, at: Vec3, thrower: Owner, by_other: bool) {
        self.blasts.push(Blast {
            at,
            thrower,
            age: 0.0,
        });
        self.seen.blasts += 1;
        if by_other {
            self.explosions_by_others += 1;
        }
    }

    /// A point was scored by `name`: a popup at the edge of a yard of `half` extents
    /// nearest `at`.
    pub(super) fn point(&mut self, name: &str, at: Vec3, half: [f32; 3]) {
        let edge = Vec3::new(
            at.x.clamp(-half[0], half[0]),
            0.5,
            at.z.clamp(-half[2], half[2]),
        );
        self.popups.push(Popup {
            name: clean_line(name),
            at: edge,
            age: 0.0,
        });
        self.seen.points += 1;
    }

    /// Ages the explosions and popups by `dt` and forgets the old ones.
    pub(super) fn age(&mut self, dt: f32) {
        for b in &mut self.blasts {
            b.age += dt;
        }
        self.blasts.retain(|b| b.age < BLAST_SECONDS);
        for p in &mut self.popups {
            p.age += dt;
        }
        self.popups.retain(|p| p.age < POPUP_SECONDS);
        for n in &mut self.notices {
            n.1 += dt;
        }
        self.notices.retain(|n| n.1 < NOTICE_SECONDS);
    }

    /// `dt` seconds went by with `bytes` (in, out) counted so far, `ping_ms` and `loss`:
    /// every quarter second, the rates and a point of the graph.
    pub(super) fn measure(&mut self, dt: f32, bytes: (u64, u64), ping_ms: f32, loss: f32) {
        let (bin, bout) = bytes;
        let t = &mut self.traffic;
        t.window += dt;
        if t.window < 0.25 {
            return;
        }
        // The counts start again from zero when a host steps down (a new network layer).
        t.kbps_in = bin.saturating_sub(t.bytes_in) as f32 * 8.0 / 1000.0 / t.window;
        t.kbps_out = bout.saturating_sub(t.bytes_out) as f32 * 8.0 / 1000.0 / t.window;
        t.bytes_in = bin;
        t.bytes_out = bout;
        t.window = 0.0;
        let sample = GraphSample {
            ping_ms,
            kbps_in: t.kbps_in,
            kbps_out: t.kbps_out,
            loss,
        };
        if self.graph.len() >= GRAPH_SAMPLES {
            self.graph.pop_front();
        }
        self.graph.push_back(sample);
    }
}

#[cfg(test)]
mod tests {
    use super::{NOTICE_FADE, NOTICE_SECONDS, Popup, Presentation, popup_rows};
    use lanyard::Vec3;

    #[test]
    fn the_ping_s_median_is_the_graph_s_middle_point_and_a_spike_moves_it_not() {
        let mut p = Presentation::default();
        assert_eq!(p.ping_median(), None);
        for ping in [1.0, 9.0, 1.0, 1.0, 0.5] {
            p.measure(0.25, (0, 0), ping, 0.0);
        }
        assert_eq!(p.ping_median(), Some(1.0));
    }

    #[test]
    fn two_points_at_one_spot_stack_and_points_apart_do_not() {
        let at = |x: f32, name: &str| Popup {
            at: Vec3::new(x, 0.0, 0.0),
            name: name.into(),
            age: 0.0,
        };
        let popups = [
            at(0.0, "ada"),
            at(0.3, "ada"),
            at(5.0, "bob"),
            at(0.1, "cat"),
        ];
        assert_eq!(popup_rows(&popups), [0, 1, 0, 2]);
    }

    #[test]
    fn a_notice_fades_out_and_goes_while_the_log_keeps_it() {
        let mut p = Presentation::default();
        p.say("ada joined".into());
        assert_eq!(p.notices().collect::<Vec<_>>(), [("ada joined", 1.0)]);
        p.age(NOTICE_SECONDS - NOTICE_FADE / 2.0);
        let (_, alpha) = p.notices().next().expect("still shown");
        assert!((alpha - 0.5).abs() < 1e-3, "half faded: {alpha}");
        p.age(NOTICE_FADE);
        assert_eq!(p.notices().count(), 0, "gone from the screen");
        assert_eq!(p.messages(), ["ada joined"], "the log keeps it");
    }
}
