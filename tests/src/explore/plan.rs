//! What one seed draws: a session ([`Plan`]: a host or a dedicated server, who joins and
//! when) and a schedule of faults ([`Fault`]), all from [`SeededRng`], so a seed is the
//! whole run.

use lanyard::SeededRng;
use std::fmt;

/// The server's peer index; clients are 1 to `clients.len()`.
pub const SERVER: usize = 0;

/// Seconds of a session: faults fall in the first part, and the last [`QUIET`] seconds
/// are for healing (the bots stop throwing and walk home).
pub const SESSION_SECONDS: f32 = 30.0;

/// The quiet end of a session, seconds: no fault runs in it.
pub const QUIET: f32 = 9.0;

/// Under the server's silence that makes its clients take the game over
/// (`NetConfig::timeout`, 5 s): a freeze, a loss burst or a delay spike of the server
/// stays below it, because a host cut off from everyone for longer splits the game (its
/// clients go on at a successor; nothing brings the two back).
pub const HOST_CUT_MAX: f32 = 3.5;

/// One client of the session.
#[derive(Debug, Clone, PartialEq)]
pub struct Joiner {
    /// Its player's name.
    pub name: String,
    /// It watches, with no player.
    pub spectator: bool,
    /// When it starts joining, seconds into the session.
    pub at: f32,
}

/// One fault: who it hits (peer indices: [`SERVER`] or a client's), from when, and for
/// how long.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// `peer`'s datagrams are lost at `rate` (a burst).
    Loss {
        /// Whose datagrams.
        peer: usize,
        /// From when, seconds into the session.
        at: f32,
        /// For how long, seconds.
        secs: f32,
        /// The share lost, 0 to 1.
        rate: f32,
    },
    /// Nothing `from` sends reaches `to` (and the other way too if `both`).
    Partition {
        /// The sender cut off.
        from: usize,
        /// The receiver it cannot reach.
        to: usize,
        /// From when, seconds into the session.
        at: f32,
        /// For how long, seconds.
        secs: f32,
        /// Both ways.
        both: bool,
    },
    /// `peer`'s datagrams are duplicated, reordered and delayed (a delay spike).
    Chaos {
        /// Whose datagrams.
        peer: usize,
        /// From when, seconds into the session.
        at: f32,
        /// For how long, seconds.
        secs: f32,
        /// The delay, seconds (and half of it as jitter).
        latency: f32,
    },
    /// `peer` runs no tick (a stopped process: its socket fills meanwhile).
    Freeze {
        /// Who.
        peer: usize,
        /// From when, seconds into the session.
        at: f32,
        /// For how long, seconds.
        secs: f32,
    },
    /// `peer` is gone without a word (a crash, a pulled cable).
    Kill {
        /// Who.
        peer: usize,
        /// When, seconds into the session.
        at: f32,
    },
    /// `peer` leaves, saying goodbye.
    Quit {
        /// Who.
        peer: usize,
        /// When, seconds into the session.
        at: f32,
    },
    /// The host kicks `peer` (its session ends; it does not come back).
    Kick {
        /// Whom.
        peer: usize,
        /// When, seconds into the session.
        at: f32,
    },
    /// `peer`'s clock steps `secs` forward at once (a laptop that slept, a clock that
    /// jumped): one frame of its lets that much time pass, while everyone else's did not.
    ClockStep {
        /// Whose clock.
        peer: usize,
        /// When, seconds into the session.
        at: f32,
        /// How far, seconds.
        secs: f32,
    },
    /// Players `a` and `b` walk into the same crate from where they are, pushing it
    /// between them (hand-off contention: both claim it).
    Contend {
        /// One player.
        a: usize,
        /// The other.
        b: usize,
        /// From when, seconds into the session.
        at: f32,
        /// For how long, seconds.
        secs: f32,
    },
    /// The server's relevance filter hides every other entity from `peer` (a fog of war
    /// that comes and goes): they go from its screen, and come back when it lifts.
    Hide {
        /// From whom.
        peer: usize,
        /// From when, seconds into the session.
        at: f32,
        /// For how long, seconds.
        secs: f32,
    },
    /// `peer`'s path takes no datagram longer than `bytes`.
    Mtu {
        /// Whose path (what it sends).
        peer: usize,
        /// From when, seconds into the session.
        at: f32,
        /// For how long, seconds.
        secs: f32,
        /// The longest datagram it takes.
        bytes: usize,
    },
}

impl Fault {
    /// When it starts.
    pub fn at(&self) -> f32 {
        match *self {
            Fault::Loss { at, .. }
            | Fault::Partition { at, .. }
            | Fault::Chaos { at, .. }
            | Fault::Freeze { at, .. }
            | Fault::Kill { at, .. }
            | Fault::Quit { at, .. }
            | Fault::Kick { at, .. }
            | Fault::ClockStep { at, .. }
            | Fault::Contend { at, .. }
            | Fault::Hide { at, .. }
            | Fault::Mtu { at, .. } => at,
        }
    }

    /// Whether it is running at `t` (a kill or a quit runs from its moment on).
    pub fn active(&self, t: f32) -> bool {
        match *self {
            Fault::Loss { at, secs, .. }
            | Fault::Partition { at, secs, .. }
            | Fault::Chaos { at, secs, .. }
            | Fault::Freeze { at, secs, .. }
            | Fault::Contend { at, secs, .. }
            | Fault::Hide { at, secs, .. }
            | Fault::Mtu { at, secs, .. } => t >= at && t < at + secs,
            Fault::Kill { at, .. }
            | Fault::Quit { at, .. }
            | Fault::Kick { at, .. }
            | Fault::ClockStep { at, .. } => t >= at,
        }
    }

    /// Whether it happens (once) at tick `tick` of a session running `hz` ticks a second:
    /// a kill, a quit, a kick or a clock step.
    pub fn now(&self, tick: u64, hz: f32) -> bool {
        match *self {
            Fault::Kill { at, .. }
            | Fault::Quit { at, .. }
            | Fault::Kick { at, .. }
            | Fault::ClockStep { at, .. } => (at * hz).ceil() as u64 == tick,
            _ => false,
        }
    }

    /// Its kind, for counts: `loss`, `partition`, `chaos`, `freeze`, `kill`, `quit`,
    /// `mtu`, `kick`, `clock`, `contention`, `relevance`.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::Loss { .. } => "loss",
            Fault::Partition { .. } => "partition",
            Fault::Chaos { .. } => "chaos",
            Fault::Freeze { .. } => "freeze",
            Fault::Kill { .. } => "kill",
            Fault::Quit { .. } => "quit",
            Fault::Mtu { .. } => "mtu",
            Fault::Kick { .. } => "kick",
            Fault::ClockStep { .. } => "clock",
            Fault::Contend { .. } => "contention",
            Fault::Hide { .. } => "relevance",
        }
    }

    /// Whether it is of the kinds drawn first (the schedules of the seeds whose bugs
    /// became regression tests): not a kick, a clock step, contention or relevance.
    pub fn is_classic(&self) -> bool {
        !matches!(
            self,
            Fault::Kick { .. }
                | Fault::ClockStep { .. }
                | Fault::Contend { .. }
                | Fault::Hide { .. }
        )
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Fault::Loss {
                peer,
                at,
                secs,
                rate,
            } => {
                write!(
                    f,
                    "{at:.2}s +{secs:.2}s: peer {peer} loses {:.0}%",
                    rate * 100.0
                )
            }
            Fault::Partition {
                from,
                to,
                at,
                secs,
                both,
            } => {
                let arrow = if both { "<->" } else { "->" };
                write!(f, "{at:.2}s +{secs:.2}s: partition {from} {arrow} {to}")
            }
            Fault::Chaos {
                peer,
                at,
                secs,
                latency,
            } => write!(
                f,
                "{at:.2}s +{secs:.2}s: peer {peer} duplicates, reorders, delays {:.0} ms",
                latency * 1e3
            ),
            Fault::Freeze { peer, at, secs } => {
                write!(f, "{at:.2}s +{secs:.2}s: peer {peer} frozen")
            }
            Fault::Kill { peer, at } => write!(f, "{at:.2}s: peer {peer} killed"),
            Fault::Kick { peer, at } => write!(f, "{at:.2}s: peer {peer} kicked"),
            Fault::ClockStep { peer, at, secs } => {
                write!(f, "{at:.2}s: peer {peer}'s clock steps {secs:.2}s forward")
            }
            Fault::Contend { a, b, at, secs } => {
                write!(f, "{at:.2}s +{secs:.2}s: peers {a} and {b} push one crate")
            }
            Fault::Hide { peer, at, secs } => {
                write!(
                    f,
                    "{at:.2}s +{secs:.2}s: the server hides half the world from peer {peer}"
                )
            }
            Fault::Quit { peer, at } => write!(f, "{at:.2}s: peer {peer} quits"),
            Fault::Mtu {
                peer,
                at,
                secs,
                bytes,
            } => {
                write!(
                    f,
                    "{at:.2}s +{secs:.2}s: peer {peer}'s path takes {bytes} bytes at most"
                )
            }
        }
    }
}

/// A session and its faults.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The seed it was drawn from (the bots' and the links' draws start from it too).
    pub seed: u64,
    /// A listen server (its host plays, and a host that goes hands the game over) rather
    /// than a dedicated one.
    pub host: bool,
    /// The clients, peers 1, 2, ...
    pub clients: Vec<Joiner>,
    /// The faults, by start.
    pub faults: Vec<Fault>,
}

impl Plan {
    /// Everything seed `seed` draws: [`draw_classic`](Self::draw_classic)'s session and
    /// faults, and, from a stream of its own, up to two faults of the later kinds (a kick,
    /// a clock step, contention, relevance), about every other seed.
    pub fn draw(seed: u64) -> Plan {
        let mut plan = Plan::draw_classic(seed);
        let mut rng = SeededRng::new(seed ^ 0x6b69_636b_636c_6f63);
        let window = SESSION_SECONDS - QUIET;
        let n = plan.clients.len();
        let extra = match rng.below(10) {
            0..=4 => 0,
            5..=8 => 1,
            _ => 2,
        };
        for _ in 0..extra {
            if let Some(f) = draw_later_fault(&mut rng, &plan, n, window) {
                plan.faults.push(f);
            }
        }
        plan.faults.sort_by(|a, b| a.at().total_cmp(&b.at()));
        plan
    }

    /// The session and faults a seed drew before the later kinds came (the schedules the
    /// regression tests of `tests/tests/explore.rs` replay).
    pub fn draw_classic(seed: u64) -> Plan {
        let mut rng = SeededRng::new(seed ^ 0x6c61_6e79_6172_6421);
        let host = rng.chance(0.6);
        let n = 2 + rng.below(5) as usize;
        let clients: Vec<Joiner> = (0..n)
            .map(|i| Joiner {
                name: format!("p{}", i + 1),
                spectator: i > 0 && rng.chance(0.15),
                at: if rng.chance(0.7) {
                    0.0
                } else {
                    rng.range_f32(0.5, 12.0)
                },
            })
            .collect();
        let window = SESSION_SECONDS - QUIET;
        let mut faults: Vec<Fault> = (0..1 + rng.below(6))
            .map(|_| draw_fault(&mut rng, host, n, window))
            .collect();
        faults.sort_by(|a, b| a.at().total_cmp(&b.at()));
        Plan {
            seed,
            host,
            clients,
            faults,
        }
    }

    /// The number of peers (the server and its clients).
    pub fn peers(&self) -> usize {
        1 + self.clients.len()
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let server = if self.host {
            "a host"
        } else {
            "a dedicated server"
        };
        write!(
            f,
            "seed {}: {server}, {} clients",
            self.seed,
            self.clients.len()
        )?;
        for (i, c) in self.clients.iter().enumerate() {
            let watch = if c.spectator { ", watching" } else { "" };
            write!(
                f,
                "\n  peer {}: {} joins at {:.2}s{watch}",
                i + 1,
                c.name,
                c.at
            )?;
        }
        for fault in &self.faults {
            write!(f, "\n  {fault}")?;
        }
        Ok(())
    }
}

/// One fault of the later kinds in the first `window` seconds of `plan`'s session of `n`
/// clients (`None` if it has no two players to contend).
fn draw_later_fault(rng: &mut SeededRng, plan: &Plan, n: usize, window: f32) -> Option<Fault> {
    let client = |rng: &mut SeededRng| 1 + rng.below(n as u32) as usize;
    let at = rng.range_f32(1.0, window - 1.0);
    Some(match rng.below(4) {
        0 => Fault::Kick {
            peer: client(rng),
            at,
        },
        1 => Fault::ClockStep {
            peer: rng.below(n as u32 + 1) as usize,
            at,
            secs: rng.range_f32(0.2, 6.0),
        },
        2 => {
            let players: Vec<usize> = (1..=n)
                .filter(|&i| !plan.clients[i - 1].spectator)
                .collect();
            if players.len() < 2 {
                return None;
            }
            let a = players[rng.below(players.len() as u32) as usize];
            let others: Vec<usize> = players.into_iter().filter(|&p| p != a).collect();
            let b = others[rng.below(others.len() as u32) as usize];
            Fault::Contend {
                a,
                b,
                at,
                secs: rng.range_f32(1.0, 6.0).min(window - at),
            }
        }
        _ => Fault::Hide {
            peer: client(rng),
            at,
            secs: rng.range_f32(0.5, 6.0).min(window - at),
        },
    })
}

/// One fault in the first `window` seconds of a session of `n` clients.
fn draw_fault(rng: &mut SeededRng, host: bool, n: usize, window: f32) -> Fault {
    let client = |rng: &mut SeededRng| 1 + rng.below(n as u32) as usize;
    // The server is hit as often as any one client.
    let anyone = |rng: &mut SeededRng| rng.below(n as u32 + 1) as usize;
    let at = rng.range_f32(1.0, window - 1.0);
    let secs = |rng: &mut SeededRng, peer: usize, most: f32| {
        let most = if peer == SERVER {
            most.min(HOST_CUT_MAX)
        } else {
            most
        };
        rng.range_f32(0.2, most).min(window - at)
    };
    match rng.below(if host { 8 } else { 7 }) {
        0 => {
            let peer = anyone(rng);
            let secs = secs(rng, peer, 6.0);
            let rate = rng.range_f32(0.2, 0.9);
            Fault::Loss {
                peer,
                at,
                secs,
                rate,
            }
        }
        1 => {
            // One client cut off from the server (past the timeout at times: it
            // reconnects and resumes its session).
            let c = client(rng);
            let both = rng.chance(0.5);
            let secs = secs(rng, c, 8.0);
            let (from, to) = if rng.chance(0.5) {
                (c, SERVER)
            } else {
                (SERVER, c)
            };
            Fault::Partition {
                from,
                to,
                at,
                secs,
                both,
            }
        }
        2 => {
            let peer = anyone(rng);
            let secs = secs(rng, peer, 6.0);
            let latency = rng.range_f32(0.05, 0.4);
            Fault::Chaos {
                peer,
                at,
                secs,
                latency,
            }
        }
        3 | 4 => {
            let peer = anyone(rng);
            let secs = secs(rng, peer, 12.0);
            Fault::Freeze { peer, at, secs }
        }
        5 => Fault::Mtu {
            peer: anyone(rng),
            at,
            secs: secs(rng, SERVER, 5.0),
            bytes: 300 + rng.below(900) as usize,
        },
        6 => {
            let peer = client(rng);
            if rng.chance(0.5) {
                Fault::Kill { peer, at }
            } else {
                Fault::Quit { peer, at }
            }
        }
        // A host that goes: the game moves to a successor.
        _ => {
            if rng.chance(0.5) {
                Fault::Kill { peer: SERVER, at }
            } else {
                Fault::Quit { peer: SERVER, at }
            }
        }
    }
}
