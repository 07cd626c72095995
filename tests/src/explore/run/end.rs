//! The checks at a session's end ([`Session::check_end`]): one host, every surviving client
//! following it with its world, scores and chat lines, the faults having healed
//! [`QUIET`] seconds before.

use super::{FRESH, SETTLED_UNACKED, Session, TOLERANCE, Violation, distance};
use crate::explore::plan::{QUIET, SERVER};
use lanyard::{NetId, Owner};
use lanyard_game::game::{Game, TICK_HZ};
use std::collections::BTreeMap;

impl Session<'_> {
    /// At the end, the faults healed [`QUIET`] seconds ago: every client that was not
    /// killed and did not quit is in the game, follows the one host, and holds its world
    /// (the same entities, each within [`TOLERANCE`]); the score tables agree.
    ///
    /// A host that went when no player that had joined is left (before anyone joined, or
    /// with only spectators left) leaves no game: nobody can take it over.
    pub(super) fn check_end(&self) -> Result<(), Violation> {
        // A peer kicked from the game that hosts nobody is out of it: one cut off from
        // its host took the game over alone, and was kicked at the host the game went on
        // at while that host asked it whether it hosted (seed 5863). Its game is its own.
        // One that any peer follows still counts (the game went to a kicked player).
        let alone = |h: usize| {
            !self
                .live()
                .any(|(i, c)| i != h && self.server_of(c) == Some(h))
        };
        let hosts: Vec<usize> = self
            .live()
            .filter(|&(i, g)| g.is_server() && !(self.peers[i].kicked && alone(i)))
            .map(|(i, _)| i)
            .collect();
        // A player that was in the game and is still here (not killed, not gone, not
        // kicked): one must host it.
        let player_left = self.plan.clients.iter().enumerate().any(|(k, c)| {
            let p = &self.peers[k + 1];
            !c.spectator && p.joined && !p.gone && !p.kicked
        });
        if hosts.is_empty() && self.peers[SERVER].gone && !player_left {
            return Ok(());
        }
        let [h] = hosts[..] else {
            let names: Vec<&str> = hosts.iter().map(|&i| self.peers[i].name.as_str()).collect();
            return Err(self.fail(&names, format!("{} hosts at the end, not one", names.len())));
        };
        let host = self.peers[h].game.as_ref().expect("live");
        let sessions = host.net().sessions();
        for p in self.peers.iter().filter(|p| p.kicked) {
            // The host that kicked it keeps no session of it. A player that took the game
            // over from a succession told before the kick (it was frozen when the host
            // told the next one, and the host went) never heard of it: it waits for a
            // resume that never comes (the kicked game ended) until the grace window
            // ends, and never lets it play (seed 1890).
            let kept = |s: &lanyard_net::SessionInfo| p.kicked_by == Some(h) || !s.suspended;
            if sessions.iter().any(|s| s.name == p.name && kept(s)) {
                return Err(self.fail(
                    &[&p.name, &self.peers[h].name],
                    "the host kept the session of a client it kicked".into(),
                ));
            }
        }
        let world = positions(host);
        for (i, g) in self
            .live()
            .filter(|&(i, _)| i != h && !self.peers[i].kicked)
        {
            let name = self.peers[i].name.as_str();
            let hn = self.peers[h].name.as_str();
            if let Some(why) = g.ended() {
                return Err(self.fail(&[name], format!("its session ended: {why}")));
            }
            if self.server_of(g) != Some(h) || !g.is_joined() {
                return Err(self.fail(&[name, hn], "does not follow the host".into()));
            }
            let mine = positions(g);
            // An entity that came or went on the host in the last moments may not have
            // reached the client yet: a crate that fell off and came back in the last frame.
            let settled = |n: &&NetId| !self.lately_changed(**n);
            let only_client: Vec<&NetId> = mine
                .keys()
                .filter(|n| !world.contains_key(n))
                .filter(settled)
                .collect();
            let only_host: Vec<&NetId> = world
                .keys()
                .filter(|n| !mine.contains_key(n))
                .filter(settled)
                .collect();
            if !only_client.is_empty() || !only_host.is_empty() {
                return Err(self.fail(
                    &[name, hn],
                    format!("other entities than the host's: only the client {only_client:?}, only the host {only_host:?}"),
                ));
            }
            for (net, p) in mine.iter().filter(|(n, _)| world.contains_key(n)) {
                let resting = self
                    .host_motion
                    .get(net)
                    .is_some_and(|m| m.resting(self.tick));
                let (p, q, when) = match moving_state(host, g, *net, resting) {
                    Some(Ok(Some(dated))) => dated,
                    // Moving, held by a client, and its state fresh: no moment to compare at.
                    Some(Ok(None)) => continue,
                    // One that came on the host in the last moments (a crate that fell off
                    // and came back, still falling) has had no state but its spawn yet.
                    Some(Err(())) if self.lately_changed(*net) => continue,
                    // No broadcast dates a fresh state of it: its newest came relayed (the
                    // server took it back with its holder's last state), or none came since
                    // the server's prediction of the copy held (a crate creeping at 4 cm/s on
                    // the host, its copies 0.7 and 1.8 mm away: seed 1723). Compared where
                    // the host had it at rest, if the host set it moving in the last moments
                    // and its new state may not have come (seed 4937: a crate the server
                    // struck 1.9 s after its last state came relayed), else where it is.
                    Some(Err(())) => {
                        match self.host_motion.get(net).and_then(|m| m.struck(self.tick)) {
                            Some((at, t)) => (
                                *p,
                                at,
                                format!("against where the host rested before tick {t}"),
                            ),
                            None => (*p, world[net], "now".to_owned()),
                        }
                    }
                    None => (*p, world[net], "now".to_owned()),
                };
                let d = distance(p, q);
                if d > TOLERANCE {
                    return Err(self.fail(
                        &[name, hn],
                        format!(
                            "{net} ({}) is at {p:?} {when}, {d:.3} m from the host's {q:?} ({}), {QUIET} s after the faults healed",
                            describe(g, *net),
                            describe(host, *net)
                        ),
                    ));
                }
            }
            let f = g.net().footprint();
            if f.unacked_messages > SETTLED_UNACKED || f.held_bytes > 0 {
                return Err(self.fail(
                    &[name, hn],
                    format!("its reliable channel has not settled {QUIET} s after the faults healed: {f:?}"),
                ));
            }
            let theirs = g.presentation().scores();
            if !self.host_scores.iter().any(|(s, _)| s.as_slice() == theirs) {
                return Err(self.fail(
                    &[name, hn],
                    format!(
                        "the score tables differ: {:?} against the host's {:?}",
                        g.presentation().scores(),
                        host.presentation().scores()
                    ),
                ));
            }
        }
        self.check_chat()
    }

    /// At the end: every screen showed every line each player said (in both their current
    /// eras) before the last [`FRESH`] seconds, unless a server dropped some over its chat
    /// rate (after an outage's backlog came at once with the lines after it).
    fn check_chat(&self) -> Result<(), Violation> {
        if self.chat_dropped {
            return Ok(());
        }
        let named = |(i, g): (usize, &'_ Game)| -> (usize, String) {
            (i, g.my_name().unwrap_or(&self.peers[i].name).to_owned())
        };
        let stays = |&(i, _): &(usize, &Game)| !self.peers[i].kicked;
        let screens: Vec<(usize, String)> = self.live().filter(stays).map(named).collect();
        let speakers: Vec<(usize, String)> = self
            .live()
            .filter(stays)
            .filter(|&(i, _)| match i {
                SERVER => self.plan.host,
                _ => !self.plan.clients[i - 1].spectator,
            })
            .map(named)
            .collect();
        let fresh = (FRESH * f64::from(TICK_HZ)) as u64;
        self.probes
            .check_delivered(&screens, &speakers, self.tick.saturating_sub(fresh))
            .map_err(|what| self.fail(&[], what))
    }
}

/// A client's pose of an entity, the host's, and the moment they are of.
type Compared = ([f32; 3], [f32; 3], String);

/// How long a body slower than [`REST_SPEED`](lanyard::predict::REST_SPEED) on the host
/// must have been so to be at rest (seconds): its copies take its last states a relay's
/// delay later. A crate pushed about until the last tick, slower than that speed in it
/// alone, was compared where it was on the host with copies a tick behind (seed 498).
const SETTLE: f64 = 0.5;

/// What one of the host's bodies did lately: where it rests (or last rested), since when,
/// and since when it moves, if it does.
#[derive(Clone, Copy)]
pub(super) struct Motion {
    /// Where it rests, or last rested.
    at: [f32; 3],
    /// The tick it came to rest, while it rests.
    resting_since: Option<u64>,
    /// The tick it was set moving, while it moves.
    moving_since: Option<u64>,
}

impl Motion {
    /// A body first seen at `at`.
    pub(super) fn new(at: [f32; 3]) -> Self {
        Motion {
            at,
            resting_since: None,
            moving_since: None,
        }
    }

    /// The body at tick `tick`: at `at`, resting (slower than the rest speed) or not.
    pub(super) fn note(&mut self, tick: u64, at: [f32; 3], resting: bool) {
        if resting {
            self.at = at;
            self.resting_since = self.resting_since.or(Some(tick));
            self.moving_since = None;
        } else {
            self.resting_since = None;
            self.moving_since = self.moving_since.or(Some(tick));
        }
    }

    /// Whether it has rested for [`SETTLE`] seconds at tick `now`.
    pub(super) fn resting(&self, now: u64) -> bool {
        let settle = (SETTLE * f64::from(TICK_HZ)) as u64;
        self.resting_since
            .is_some_and(|t| now.saturating_sub(t) >= settle)
    }

    /// Where it rested before it was set moving in the last [`FRESH`] seconds before tick
    /// `now`, and the tick it was, if it was.
    pub(super) fn struck(&self, now: u64) -> Option<([f32; 3], u64)> {
        let fresh = (FRESH * f64::from(TICK_HZ)) as u64;
        self.moving_since
            .filter(|t| now.saturating_sub(*t) <= fresh)
            .map(|t| (self.at, t))
    }
}

/// A body still moving on the host at the end (a crate a late blast sent tumbling) is a
/// moment ahead there of any copy: it is compared where both say it was at one broadcast,
/// the client's newest state of it, if one came within [`FRESH`] seconds and a broadcast
/// dates it.
/// `None` for a body at rest (`resting`, for [`SETTLE`] seconds): it is compared where it
/// is. `Err` for one no broadcast dates a fresh state of: compared where it rested if the
/// host set it moving in the last moments, else where it is, unless it came on the host
/// in the last moments (it has had no state but its spawn yet).
///
/// A moving body a client holds (a crate it pushed off the edge in the last moments) has
/// no such moment: every copy but its holder's, the host's too, takes its holder's states
/// relayed, each brought forward by its own lead. While its states come it is compared
/// once it rests (`Ok(None)`); one whose holder fell silent holds still on every copy
/// (its velocity only gravity's of one frame), and is compared where it is (`None`).
fn moving_state(
    host: &Game,
    g: &Game,
    net: NetId,
    resting: bool,
) -> Option<Result<Option<Compared>, ()>> {
    let e = host.group().by_net(net)?;
    if resting {
        return None;
    }
    let fresh = |g: &Game| g.net().state_age(net).is_some_and(|a| a <= FRESH);
    if e.owner() != Owner::Server {
        let holder = g
            .group()
            .by_net(net)
            .is_some_and(|c| g.group().has_authority(c.owner()));
        return (holder || fresh(g)).then_some(Ok(None));
    }
    let (sent, _) = host.witness();
    let (_, taken) = g.witness();
    let dated = taken
        .server_state(net)
        .filter(|_| fresh(g))
        .and_then(|(n, p)| Some((n, p, sent.pose_at(net, n)?)));
    Some(
        dated
            .map(|(n, p, q)| Some((p, q, format!("in broadcast {n}"))))
            .ok_or(()),
    )
}

/// An entity's kind and owner on one peer, for a message: "crate, the server's".
fn describe(g: &Game, net: NetId) -> String {
    let Some(e) = g.group().by_net(net) else {
        return "not there".into();
    };
    let kind = g
        .group()
        .registry()
        .name_of(e.kind())
        .unwrap_or("unknown kind");
    match e.owner() {
        Owner::Server => format!("{kind}, the server's"),
        Owner::Client(c) => format!("{kind}, client {}'s", c.0),
    }
}

/// Every entity's position, by network id.
fn positions(g: &Game) -> BTreeMap<NetId, [f32; 3]> {
    g.group()
        .iter()
        .map(|e| (e.net_id(), e.body().translation().to_array()))
        .collect()
}
