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
    traffic: Traffic,
    graph: VecDeque<GraphSample>,
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

    /// Byte rates.
    pub fn traffic(&self) -> Traffic {
        self.traffic
    }

    /// The last ten seconds of ping, traffic and loss, oldest first, for the net graph.
    pub fn graph(&self) -> &VecDeque<GraphSample> {
        &self.graph
    }

    /// A line to show.
    pub(super) fn say(&mut self, line: String) {
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
