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
            | Fault::Mtu { at, secs, .. } => t >= at && t < at + secs,
            Fault::Kill { at, .. } | Fault::Quit { at, .. } => t >= at,
        }
    }

    /// Its kind, for counts: `loss`, `partition`, `chaos`, `freeze`, `kill`, `quit`, `mtu`.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::Loss { .. } => "loss",
            Fault::Partition { .. } => "partition",
            Fault::Chaos { .. } => "chaos",
            Fault::Freeze { .. } => "freeze",
            Fault::Kill { .. } => "kill",
            Fault::Quit { .. } => "quit",
            Fault::Mtu { .. } => "mtu",
        }
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
    /// Everything seed `seed` draws.
    pub fn draw(seed: u64) -> Plan {
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
