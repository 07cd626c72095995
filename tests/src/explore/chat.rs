//! The reliable channel's invariant, checked through the game's chat ([`Probes`]): every
//! player says a numbered line (`#7`) every [`EVERY_SECONDS`]; the server passes each on to
//! everyone. A screen shows each player's lines exactly once and in order for as long as
//! it follows one host in one session (a gap only if a server dropped lines over its chat
//! rate, or the lines between were said in another game: one the player hosted alone
//! while it could not reach this screen's host), and, once the faults healed, every line a
//! player said before the last moments.

use std::collections::BTreeMap;
use std::net::SocketAddr;

/// How often each player says its next line, seconds: under the server's chat rate
/// (`CHAT_BURST`, 5 lines in `CHAT_WINDOW`, 10 seconds) even when the backlog of an outage
/// arrives at once (a client says lines until its timeout, 5 s: two at most).
pub const EVERY_SECONDS: f32 = 5.0;

/// Whom a screen follows: the session (its join attempt), the server's address (its own,
/// for the server), and whether it is in the game yet (the server passes a line on to the
/// clients it has taken in). Lines are in order and exactly once within one era.
pub type Era = (u8, Option<SocketAddr>, bool);

/// What one screen showed of one player's lines in its current era.
#[derive(Debug, Clone, Default)]
struct Shown {
    era: Option<Era>,
    /// The last number shown in this era.
    last: Option<u32>,
    /// Every number shown, in any era.
    all: std::collections::BTreeSet<u32>,
}

/// One line a player said.
#[derive(Debug, Clone, Copy)]
struct Said {
    n: u32,
    tick: u64,
    /// The game it was said in: the server the player followed, or its own address.
    game: Option<SocketAddr>,
}

/// The numbered lines said and shown (peers by index, players by name).
#[derive(Debug, Default)]
pub struct Probes {
    /// By player name: the lines it said, in order.
    said: BTreeMap<String, Vec<Said>>,
    /// By (screen, player): what the screen showed of the player's lines.
    shown: BTreeMap<(usize, String), Shown>,
    /// By peer: its era, and the tick it began.
    eras: BTreeMap<usize, (Era, u64)>,
}

/// Whether the lines `said` (one player's) after `last` and before `n` are some, each said
/// in a game other than `game`'s (one this screen was not in, so it could not show them).
fn said_elsewhere(said: Option<&Vec<Said>>, last: u32, n: u32, game: Option<SocketAddr>) -> bool {
    let mut between = said
        .into_iter()
        .flatten()
        .filter(|s| s.n > last && s.n < n)
        .peekable();
    between.peek().is_some() && between.all(|s| s.game != game)
}

/// A line the chat showed: who said it and its number, if it is one of ours.
fn parse(line: &str) -> Option<(&str, u32)> {
    let (from, n) = line.rsplit_once(": #")?;
    Some((from, n.parse().ok()?))
}

impl Probes {
    /// Notes `peer`'s era at `tick` (a new one begins when it changes).
    pub fn note_era(&mut self, peer: usize, era: Era, tick: u64) {
        match self.eras.get(&peer) {
            Some((e, _)) if *e == era => {}
            _ => {
                self.eras.insert(peer, (era, tick));
            }
        }
    }

    /// Lines said, and shown on the screens (each line once a screen).
    pub fn counts(&self) -> (u64, u64) {
        let said = self.said.values().map(|v| v.len() as u64).sum();
        let shown = self.shown.values().map(|s| s.all.len() as u64).sum();
        (said, shown)
    }

    /// The next line `name` says at `tick`, in the game of server `game`.
    pub fn say(&mut self, name: &str, tick: u64, game: Option<SocketAddr>) -> String {
        let said = self.said.entry(name.to_owned()).or_default();
        let n = said.last().map_or(1, |s| s.n + 1);
        said.push(Said { n, tick, game });
        format!("#{n}")
    }

    /// What `screen` showed this tick (`lines`, oldest first), in its era: an error for a
    /// line shown twice or out of order, or after a gap when no server dropped a line
    /// (`dropped`) and the lines between were said in this screen's game.
    pub fn shown(&mut self, screen: usize, lines: &[String], dropped: bool) -> Result<(), String> {
        let Some((era, _)) = self.eras.get(&screen).copied() else {
            return Ok(());
        };
        for (from, n) in lines.iter().filter_map(|l| parse(l)) {
            let s = self.shown.entry((screen, from.to_owned())).or_default();
            if s.era != Some(era) {
                s.era = Some(era);
                s.last = None;
            }
            match s.last {
                Some(last) if n <= last => {
                    return Err(format!(
                        "shows {from}'s line #{n} after #{last} (following one host): twice or out of order"
                    ));
                }
                Some(last)
                    if n != last + 1
                        && !dropped
                        && !said_elsewhere(self.said.get(from), last, n, era.1) =>
                {
                    return Err(format!(
                        "shows {from}'s line #{n} after #{last}: the lines between were lost, and no server dropped any"
                    ));
                }
                _ => {}
            }
            s.last = Some(n);
            s.all.insert(n);
        }
        Ok(())
    }

    /// At the end: each of `screens` (peer, name) showed every line each of the `speakers`
    /// said in both their current eras and before `until` (a tick: lines of the last
    /// moments may be on the way). An error names the first line missing. (Not called if a
    /// server dropped lines over its chat rate: which ones, it does not say.)
    pub fn check_delivered(
        &self,
        screens: &[(usize, String)],
        speakers: &[(usize, String)],
        until: u64,
    ) -> Result<(), String> {
        for (speaker, name) in speakers {
            let Some(said) = self.said.get(name) else {
                continue;
            };
            let since_speaker = self.eras.get(speaker).map_or(u64::MAX, |e| e.1);
            for (screen, screen_name) in screens {
                let since = self
                    .eras
                    .get(screen)
                    .map_or(u64::MAX, |e| e.1)
                    .max(since_speaker);
                let shown = self.shown.get(&(*screen, name.clone()));
                let missing = said
                    .iter()
                    .filter(|s| s.tick > since && s.tick < until)
                    .find(|s| shown.is_none_or(|x| !x.all.contains(&s.n)));
                if let Some(s) = missing {
                    return Err(format!(
                        "{screen_name} never showed {name}'s line #{} (said at {:.2}s)",
                        s.n,
                        s.tick as f32 / lanyard_game::game::TICK_HZ
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Probes;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_line_twice_out_of_order_or_lost_is_caught_within_an_era() {
        let mut p = Probes::default();
        p.note_era(1, (1, None, true), 0);
        assert!(
            p.shown(1, &lines(&["ann: #1", "ann: #2", "hi"]), false)
                .is_ok()
        );
        assert!(p.shown(1, &lines(&["ann: #2"]), false).is_err());
        let mut p = Probes::default();
        p.note_era(1, (1, None, true), 0);
        assert!(p.shown(1, &lines(&["ann: #1", "ann: #3"]), false).is_err());
        let mut p = Probes::default();
        p.note_era(1, (1, None, true), 0);
        assert!(p.shown(1, &lines(&["ann: #1", "ann: #3"]), true).is_ok());
        // A new era (another session) may show a line again.
        p.note_era(1, (2, None, true), 5);
        assert!(p.shown(1, &lines(&["ann: #3", "ann: #4"]), false).is_ok());
    }

    #[test]
    fn a_gap_is_a_loss_unless_the_lines_between_were_said_in_another_game() {
        let (host, alone) = (Some(addr(1)), Some(addr(2)));
        let mut p = Probes::default();
        p.note_era(1, (1, host, true), 0);
        // ann says #1 at the host, #2 in a game she hosted alone, #3 at the host again.
        p.say("ann", 10, host);
        p.say("ann", 20, alone);
        p.say("ann", 30, host);
        assert!(p.shown(1, &lines(&["ann: #1", "ann: #3"]), false).is_ok());
        // Said at the host, a line between must be shown.
        let mut p = Probes::default();
        p.note_era(1, (1, host, true), 0);
        p.say("ann", 10, host);
        p.say("ann", 20, alone);
        p.say("ann", 25, host);
        p.say("ann", 30, host);
        assert!(p.shown(1, &lines(&["ann: #1", "ann: #4"]), false).is_err());
    }

    fn addr(port: u16) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn a_line_said_in_both_eras_and_never_shown_is_missing() {
        let mut p = Probes::default();
        p.note_era(1, (1, None, true), 0);
        p.note_era(2, (1, None, true), 0);
        assert_eq!(p.say("ann", 10, None), "#1");
        assert_eq!(p.say("ann", 20, None), "#2");
        p.shown(2, &lines(&["ann: #1"]), false).unwrap();
        let (bob, ann) = ([(2, "bob".to_owned())], [(1, "ann".to_owned())]);
        assert!(p.check_delivered(&bob, &ann, 15).is_ok());
        assert!(p.check_delivered(&bob, &ann, 30).is_err());
    }
}
