//! The client's part in host migration: following the game to the host's successor, and,
//! as that successor, standing by until another player comes (or the host's grace window
//! passes), asking the others whether the host is alive before taking the game over.

use super::ClientEndpoint;
use crate::connection::Connection;
use crate::core::{Core, us};
use crate::crypto::{self, Key};
use crate::error::{DisconnectReason, RejectReason};
use crate::event::NetEvent;
use crate::wire::{self, DatagramKind, RejectBody};
use std::net::SocketAddr;

/// Following the game to a successor after the host went.
#[derive(Clone)]
pub(super) struct Follow {
    /// The old host's name.
    pub(super) left: String,
    /// The successors, in order, and the next to try.
    pub(super) list: Vec<crate::succession::Successor>,
    pub(super) next: usize,
    /// Our connection to the old host, and our session's token there (before it became
    /// the migration token): to try the host again if we stand by.
    pub(super) host: Box<Connection>,
    pub(super) token: Option<Key>,
    /// Whether the host said it quit (it is surely gone), rather than fell silent.
    pub(super) quit: bool,
    /// Until when (µs) we go round the list again when no successor answered: a successor
    /// that still heard the host when we came (its own link failed later) takes the game
    /// over only once it stands by, and any time within the host's grace window.
    pub(super) until: u64,
    /// Whether we go round again: the player heard of each successor the first time.
    pub(super) again: bool,
    /// Whether we try the old host again, between two rounds: it may only have been
    /// stopped a while, and live on after every successor went (explorer seed 3352: a
    /// new host frozen 8 s while its one successor was killed; its spectator went round
    /// that dead successor for the rest of the game).
    pub(super) at_host: bool,
    /// How many migrations we take it we missed (see [`MISSED_MIGRATIONS`]).
    pub(super) missed: u8,
}

/// How many migrations a follower may have missed: a successor that hosts the game and
/// does not know our session under our migration token may have taken it over from a
/// host that took it over from ours while we were stopped, and knows the token hashed on
/// once for each (every host hashes the tokens it hands on). We try it again with the
/// token hashed once more, up to this many times, before the session is over (explorer
/// seed 903: a player frozen across the first migration came to the second new host,
/// which knew it two hashes on).
pub(super) const MISSED_MIGRATIONS: u8 = 2;

/// Standing by as the host's successor: silence alone does not make us the host (our own
/// link may be what failed, and the others still play there); another player coming to
/// us does (it lost the host too), or the host's grace window passing with no answer.
#[derive(Clone)]
pub(super) struct Standby {
    /// The old host's name.
    pub(super) left: String,
    /// When we knock next at the other players' addresses (µs), and until when: one byte
    /// each, which opens our NAT (if any) to their hellos, as a new host's knock does.
    pub(super) knock: u64,
    pub(super) knock_until: u64,
    /// When we ask the players after us in the succession whether one of them took the
    /// game over (µs; `u64::MAX` once asked): a player that lost the host when we did
    /// comes to us within a migration wait, so if none came by then, either only our link
    /// failed or the game went on without us (we were frozen, say).
    pub(super) ask_at: u64,
    /// Before we take the game over: whether the others say the host is alive.
    pub(super) confirm: Option<Confirm>,
}

/// A successor about to take the game over first asks everyone else it knows of whether
/// the host is alive (two players cut off from the host at once, one coming to the other,
/// do not split the game while a third still plays there): a hello to each, which a client
/// playing at a host it heard from since the question came answers with where that host
/// is ([`RejectReason::HostAlive`]). Nobody saying so for [`confirm_us`], we take over.
#[derive(Clone)]
pub(super) struct Confirm {
    /// When we began to ask (µs).
    since: u64,
    /// Until when we wait for an answer (µs).
    until: u64,
    /// When our hellos go again (µs): every [`KNOCK_EVERY_US`], against loss.
    next: u64,
    /// Their nonce, which an answer echoes.
    nonce: u64,
    /// Where a player said the host plays, if one did.
    alive: Option<SocketAddr>,
}

/// How long a successor waits for the others to say the host is alive (µs): two
/// heartbeats, since a player answers so only for a host it heard after our first hello,
/// which a live host's heartbeat brings within one, and our next knock then hears.
fn confirm_us(core: &Core) -> u64 {
    2 * us(core.config.heartbeat)
}

/// How long the successor of a host that said goodbye asks the others whether one of them
/// hosts the game already (µs): no live host is to be heard of, only a player that took the
/// game over while our goodbye waited unread (we were frozen), which answers at once as a
/// server; two rounds of hellos, against a loss.
const QUIT_CONFIRM_US: u64 = 2 * KNOCK_EVERY_US;

/// How often, and for how long, a successor standing by knocks at the other players (µs).
const KNOCK_EVERY_US: u64 = 250_000;
const KNOCK_FOR_US: u64 = 10_000_000;

impl ClientEndpoint {
    /// The host went (it said goodbye: `quit`, or fell silent): if the game migrates,
    /// follows it to the first successor and returns true. Our session's token becomes its
    /// migration token, which the new host knows. If we are that successor and the host
    /// only fell silent, we stand by instead ([`standby`](Self::standby)), trying the host
    /// again.
    pub(super) fn migrate(&mut self, core: &mut Core, quit: bool) -> bool {
        let s = &self.succession;
        if !s.migrate || s.list.is_empty() || self.id.is_none() || self.session.is_none() {
            return false;
        }
        let mut follow = Follow {
            left: s.host.clone(),
            list: s.list.clone(),
            next: 0,
            host: Box::new(self.conn.clone()),
            token: None,
            quit,
            until: core.now + self.session.as_ref().map_or(0, |s| s.grace),
            again: false,
            at_host: false,
            missed: 0,
        };
        if let Some(session) = &mut self.session {
            follow.token = Some(session.token);
            session.token = crypto::migration_token(&session.token);
        }
        self.follow = Some(follow);
        self.next_successor(core)
    }

    /// Tries the next successor: resumes our session there, or, if it is us, asks the
    /// manager to make us the server. False when none is left.
    pub(super) fn next_successor(&mut self, core: &mut Core) -> bool {
        let Some(f) = self.follow.as_mut() else {
            return false;
        };
        if f.next >= f.list.len() && self.standby.is_none() && core.now < f.until {
            // Nobody answered yet: the host again, if it only fell silent, then round
            // again (each try waits a migration wait).
            if !f.quit && !f.at_host {
                return self.host_turn(core);
            }
            if std::mem::take(&mut f.at_host)
                && let (Some(session), Some(token)) = (&mut self.session, f.token)
            {
                session.token = crypto::migration_token(&token);
            }
            tracing::info!("no successor answered yet: trying them again");
            f.next = 0;
            f.again = true;
        }
        let Some(to) = f.list.get(f.next).cloned() else {
            // Asking the others while standing by: what we need to stand by on the host
            // again stays.
            if self.standby.is_none() {
                self.follow = None;
            }
            return false;
        };
        f.next += 1;
        let left = f.left.clone();
        let host = if left.is_empty() { "the host" } else { &left };
        // Players after us in the succession come to us if they lost the host too; with
        // none after us, we ask whoever we know whether the host is alive (our own link
        // may be what failed while spectators still watch there), and take over if nobody
        // says so (with nobody to ask, if the host does not answer us within that wait).
        let after_us = f.list.len() > f.next;
        let quit = f.quit;
        if Some(to.client) == self.id {
            if !self.stand_by(core) {
                return false;
            }
            // The host said goodbye: it is gone, but its goodbye may have waited for us
            // while we were frozen, and another player taken the game over meanwhile. We
            // ask the others first, briefly: one that hosts answers at once.
            let asked = match quit {
                true => self.start_confirm_for(core, QUIT_CONFIRM_US),
                false => after_us || self.start_confirm(core),
            };
            if !asked {
                self.take_over(core);
            }
            return true;
        }
        // The first rung is the news the game hears (`NetEvent::HostLeft`) and says; a
        // later one says whom the ladder tries now.
        match !f.again && f.next == 1 {
            true => tracing::debug!("{host} went: {} ({}) takes over", to.name, to.addr),
            false => tracing::info!("{host} went: trying {} ({}) now", to.name, to.addr),
        }
        if !f.again {
            core.events.push_back(NetEvent::HostLeft {
                host: left.clone(),
                next: to.name.clone(),
            });
        }
        self.ladder_to(core, to.addr, core.config.migration_wait)
    }

    /// No successor answered a whole round: we try the old host again, with our own
    /// session's token and its reliable channel, for a migration wait (see
    /// [`Follow::at_host`]); then the successors again.
    fn host_turn(&mut self, core: &mut Core) -> bool {
        let Some(f) = self.follow.as_mut() else {
            return false;
        };
        f.at_host = true;
        let (host, token) = ((*f.host).clone(), f.token);
        tracing::info!("no successor answered yet: trying {} again", host.addr);
        self.try_host_again(core, (host, token), core.config.migration_wait)
    }

    /// Whether `bytes`, from `from` (not the server), is a player of the game coming to us
    /// while we stand by as the host's successor: its hello says it lost the host too, so
    /// we take the game over (and the server we become answers it), once nobody else says
    /// the host is alive ([`Confirm`]; meanwhile, and if one does, its hello waits or is
    /// answered with where the host is).
    ///
    /// While we play at a live host, such a hello is answered that the host is alive
    /// ([`RejectReason::HostAlive`], echoing its nonce): that player lost only its own link
    /// to the host, and tries the host again instead of taking the game over alone.
    pub(crate) fn comes_to_us(&mut self, core: &mut Core, from: SocketAddr, bytes: &[u8]) -> bool {
        // One of the game's sessions: a successor, or one the host keeps for a resume (its
        // own link to the host may be what failed).
        let s = &self.succession;
        let listed = s.list.iter().map(|p| (p.client, p.addr));
        let player = listed
            .chain(s.heirs.iter().map(|h| (h.client, h.addr)))
            .any(|(c, a)| a == from && Some(c) != self.id);
        let Ok((version, DatagramKind::Hello, body)) = wire::parse_header(bytes) else {
            return false;
        };
        if !player || version != core.config.version {
            return false;
        }
        if self.standby.is_none() {
            // Only a host heard from since the question came is alive (see
            // [`Questions`](super::vouch::Questions)): one that went silent a moment ago may
            // be gone for us too, our own timeout not come yet, or we were stopped.
            let Some(nonce) = wire::hello_nonce(body) else {
                return false;
            };
            let asked = self.questions.first_heard(from, nonce, core.now);
            let heard = self.conn.last_heard > asked;
            if self.conn.is_connected() && self.ladder.is_none() && heard {
                let reason = RejectReason::HostAlive { at: self.conn.addr };
                super::super::answer(core, from, bytes.len(), &RejectBody { reason, nonce });
            }
            return false;
        }
        let earlier = self.succession.list.iter().position(|p| p.addr == from);
        if let (Some(theirs), Some(mine)) = (earlier, self.place())
            && theirs < mine
            && let Some(standby) = self.standby.take()
        {
            // A successor before us stands by too (it asks us whether the host is alive,
            // or whether we took the game over): the game is its to take, and we follow
            // it there.
            self.ladder = None;
            tracing::info!("{from}, a successor before us, stands by too: following it");
            self.follow_from(core, standby.left, theirs);
            return false;
        }
        let Some(standby) = self.standby.as_mut() else {
            return false;
        };
        if let Some(c) = &standby.confirm {
            // Asking the others: the player tries again (its ladder), or hears that the
            // host is alive.
            if let (Some(at), Some(nonce)) = (c.alive, wire::hello_nonce(body)) {
                let reason = RejectReason::HostAlive { at };
                super::super::answer(core, from, bytes.len(), &RejectBody { reason, nonce });
            }
            return false;
        }
        tracing::info!("another player lost the host too: asking the others whether it lives");
        if self.start_confirm(core) {
            return false;
        }
        self.take_over(core);
        true
    }

    /// Every session we know of but ours (players and, as a successor, spectators): whom
    /// we ask whether the host is alive.
    fn others(&self) -> Vec<SocketAddr> {
        let s = &self.succession;
        let listed = s.list.iter().map(|p| (p.client, p.addr));
        let mut all: Vec<SocketAddr> = listed
            .chain(s.heirs.iter().map(|h| (h.client, h.addr)))
            .filter(|(c, _)| Some(*c) != self.id)
            .map(|(_, a)| a)
            .collect();
        all.sort();
        all.dedup();
        all
    }

    /// Standing by, we start asking the others whether the host is alive ([`Confirm`]).
    /// With nobody to ask, we wait as long for the host itself, which our standing by
    /// tries again: silent for a timeout to us, it may be alive all the same (our own
    /// clock stepped, or our link failed), and it answers our resume. False if we do not
    /// stand by.
    fn start_confirm(&mut self, core: &mut Core) -> bool {
        self.start_confirm_for(core, confirm_us(core))
    }

    /// [`start_confirm`](Self::start_confirm), waiting `wait` µs for answers.
    fn start_confirm_for(&mut self, core: &mut Core, wait: u64) -> bool {
        let (_, nonce) = self.next_nonce("probe");
        let Some(s) = &mut self.standby else {
            return false;
        };
        s.confirm = Some(Confirm {
            since: core.now,
            until: core.now + wait,
            next: core.now,
            nonce,
            alive: None,
        });
        true
    }

    /// Each frame while we ask the others whether the host is alive: our hellos go again
    /// now and then; when the wait is over and nobody said so, we take the game over (a
    /// player that came to us tries again, and the server we become answers it); if one
    /// did, we go on standing by on the host.
    pub(super) fn confirm(&mut self, core: &mut Core) {
        // Only while asking: this runs every frame.
        if self.standby.as_ref().is_none_or(|s| s.confirm.is_none()) {
            return;
        }
        let others = self.others();
        let Some(s) = &mut self.standby else {
            return;
        };
        let Some(c) = &mut s.confirm else {
            return;
        };
        if core.now >= c.until {
            let host = self.conn.addr;
            // The host answered our resume while we asked (its welcome is on the way): it
            // lives. One that answered before, and has not welcomed us since, went in the
            // middle of our resume (explorer seed 6785: the host answered and was killed
            // half a second later; its successor took the answer for life for the rest of
            // the grace window, and turned away every player that came to it).
            let answered = self.ladder.as_ref().and_then(|l| l.answered_at);
            if answered.is_some_and(|t| t >= c.since) {
                c.alive = Some(host);
            }
            match c.alive {
                // The host we stand by on lives: we go on standing by.
                Some(at) if at == host => s.confirm = None,
                // Another player hosts the game now: we follow it there.
                Some(at) => {
                    let left = std::mem::take(&mut s.left);
                    self.standby = None;
                    self.ladder = None;
                    match self.succession.list.iter().position(|p| p.addr == at) {
                        Some(i) => self.follow_from(core, left, i),
                        None => self.follow_to(core, left, at),
                    };
                }
                None => self.take_over(core),
            }
            return;
        }
        if core.now >= c.next {
            c.next = core.now + KNOCK_EVERY_US;
            let hello = wire::Hello {
                nonce: c.nonce,
                client_pub: [0; 32],
            };
            let d = wire::hello(core.config.version, &hello);
            core.outbox
                .extend(others.into_iter().map(|to| (to, d.clone())));
        }
    }

    /// Whether `bytes`, from `from` (not the server), answers our question whether the
    /// host is alive ([`Confirm`]): a refusal echoing our nonce, saying where the host
    /// plays.
    pub(crate) fn confirmed_alive(&mut self, core: &Core, from: SocketAddr, bytes: &[u8]) -> bool {
        if self.standby.as_ref().is_none_or(|s| s.confirm.is_none()) {
            return false;
        }
        let listed = self.others().contains(&from);
        let Some(c) = self.standby.as_mut().and_then(|s| s.confirm.as_mut()) else {
            return false;
        };
        let Ok((version, kind, body)) = wire::parse_header(bytes) else {
            return false;
        };
        if kind == DatagramKind::Challenge && listed && version == core.config.version {
            // A player of the game that answers as a server: it took the game over while
            // we could not hear it (we were frozen, or cut off).
            if c.alive.is_none() {
                tracing::info!("{from} hosts the game now: not taking it over");
            }
            c.alive = Some(from);
            return true;
        }
        let (DatagramKind::Reject, Ok(r)) = (kind, wire::decode::<RejectBody>(body)) else {
            return false;
        };
        match (version == core.config.version, r.nonce == c.nonce, r.reason) {
            (true, true, RejectReason::HostAlive { at }) => {
                if c.alive.is_none() {
                    tracing::info!("{from} plays at a live host at {at}: not taking the game over");
                }
                c.alive = Some(at);
                true
            }
            _ => false,
        }
    }

    /// We take the game over (the manager makes us the server).
    fn take_over(&mut self, core: &mut Core) {
        let Some(standby) = self.standby.take() else {
            return;
        };
        let left = standby.left;
        let host = if left.is_empty() { "the host" } else { &left };
        tracing::info!("{host} is gone for the others too: taking the game over");
        core.events.push_back(NetEvent::HostLeft {
            host: left.clone(),
            next: self.name.clone(),
        });
        self.ladder = None;
        self.follow = None;
        self.promote = Some(left);
    }

    /// While we stand by, knocks at the other players every [`KNOCK_EVERY_US`] for
    /// [`KNOCK_FOR_US`]: one byte each, which their clients drop, but which opens our NAT
    /// (if any) to their hellos, should they come to us.
    pub(crate) fn knock(&mut self, core: &mut Core) {
        let Some(s) = &mut self.standby else {
            return;
        };
        if core.now >= s.knock_until || core.now < s.knock {
            return;
        }
        s.knock = core.now + KNOCK_EVERY_US;
        for p in self
            .succession
            .list
            .iter()
            .filter(|p| Some(p.client) != self.id)
        {
            core.outbox.push((p.addr, vec![0]));
        }
    }

    /// We are the successor to take the game over. If the host only fell silent, our own
    /// link may be what failed, while the others still play there. We try to resume with
    /// the host, with our own token, for its whole grace window, and take the game over
    /// if another player comes to us first ([`comes_to_us`](Self::comes_to_us)), or if the
    /// window passes with no answer. If nobody comes for a while, we ask the players
    /// after us once ([`ask_the_others`](Self::ask_the_others)).
    pub(super) fn stand_by(&mut self, core: &mut Core) -> bool {
        let Some(f) = self.follow.take() else {
            return false;
        };
        // Back from asking the others: they are not to be asked again.
        let asked = self.standby.is_some();
        let host = if f.left.is_empty() {
            "the host"
        } else {
            &f.left
        };
        match f.quit {
            true => tracing::info!("{host} quit: taking the game over unless another player has"),
            false => tracing::info!(
                "{host} fell silent: trying it again, and taking the game over if another player comes"
            ),
        }
        let wait = us(core.config.migration_wait);
        self.standby = Some(Standby {
            left: f.left,
            knock: core.now,
            knock_until: core.now + KNOCK_FOR_US,
            ask_at: if asked { u64::MAX } else { core.now + wait },
            confirm: None,
        });
        self.try_host_again(core, (*f.host, f.token), 0.0)
    }

    /// Back to the host we followed the game from: our own session's token again, what we
    /// had not got acknowledged goes on to it, numbered as it was, and we try it, giving it
    /// up if it answers nothing for `unanswered` seconds (0: its grace window).
    fn try_host_again(
        &mut self,
        core: &mut Core,
        (host, token): (Connection, Option<Key>),
        unanswered: f32,
    ) -> bool {
        if let (Some(session), Some(token)) = (&mut self.session, token) {
            session.token = token;
        }
        self.conn = host;
        self.ladder_to(core, self.conn.addr, unanswered)
    }

    /// Standing by, nobody came for a migration wait: we ask the players
    /// after us in the succession, in turn, as a follower would (with our migration
    /// token). One that took the game over (while we were frozen, say) resumes our session
    /// there; one that plays at the live host says so, and we stand by on the host again;
    /// if none answers, we stand by on the host for the rest of its grace window.
    pub(super) fn ask_the_others(&mut self, core: &mut Core) -> bool {
        let Some(s) = self.standby.as_mut().filter(|s| core.now >= s.ask_at) else {
            return false;
        };
        s.ask_at = u64::MAX;
        let left = s.left.clone();
        let Some(mine) = self.place() else {
            return false;
        };
        tracing::info!("nobody came to us: asking the players after us");
        if self.follow_from(core, left, mine + 1) {
            return true;
        }
        self.asked_in_vain(core);
        true
    }

    /// None of the players after us answered (they went with the host, say): we stand by
    /// on the host again, and ask everyone we know of whether it lives ([`Confirm`]),
    /// taking the game over if nobody says so (nor the host itself).
    fn asked_in_vain(&mut self, core: &mut Core) {
        if self.stand_by(core) && !self.start_confirm(core) {
            self.take_over(core);
        }
    }

    /// Our reconnect ladder gave up, nothing having answered it: the next successor, or
    /// back to standing by on the host; past the host's grace window standing by, the
    /// game is ours; a resume with the host unanswered follows the game to its successor,
    /// if it migrates. False if the session is lost.
    pub(super) fn ladder_gave_up(&mut self, core: &mut Core) -> bool {
        if self.standby.is_some() && self.follow.is_some() {
            // Asking the others while standing by: the next, or back to the host.
            if !self.next_successor(core) {
                self.asked_in_vain(core);
            }
            return true;
        }
        if self.standby.is_some() {
            // The host's grace window passed, and nobody came: we are the only player
            // left.
            self.take_over(core);
            return true;
        }
        let following = self.follow.is_some();
        if self.next_successor(core) {
            return true;
        }
        // Nothing answered our resume with the host: if the game migrates, the host may
        // have gone while we could not hear it (it timed us out, then quit or crashed),
        // and the game goes on at its successor.
        if !following && self.migrate(core, false) {
            return true;
        }
        core.events.push_back(NetEvent::ConnectionLost {
            reason: DisconnectReason::TimedOut,
        });
        false
    }

    /// Our place in the succession, if we are in it.
    fn place(&self) -> Option<usize> {
        let list = &self.succession.list;
        list.iter().position(|p| Some(p.client) == self.id)
    }

    /// Follows the game (the host `left` went) to the successors from the `next`th on,
    /// with our migration token; our connection to the host goes along, to stand by on it
    /// again. False if there is none to try.
    fn follow_from(&mut self, core: &mut Core, left: String, next: usize) -> bool {
        self.start_follow(core, left, next) && self.next_successor(core)
    }

    /// Follows the game (the host `left` went) to `at`, which another player says hosts
    /// it, though our succession does not list it: a player who joined after the host last
    /// told us the succession (we were frozen) took the game over (explorer seed 4789).
    fn follow_to(&mut self, core: &mut Core, left: String, at: SocketAddr) -> bool {
        let after_all = self.succession.list.len();
        if !self.start_follow(core, left.clone(), after_all) {
            return false;
        }
        tracing::info!("{left} went: the game goes on at {at}");
        core.events.push_back(NetEvent::HostLeft {
            host: left,
            next: String::new(),
        });
        self.ladder_to(core, at, core.config.migration_wait)
    }

    /// Sets up following the game (the host `left` went) from the `next`th successor on
    /// (see [`follow_from`](Self::follow_from)). False with no session to take there.
    fn start_follow(&mut self, core: &mut Core, left: String, next: usize) -> bool {
        // Our own token: the one we set aside if we follow already (asking the players
        // after us, a successor before us came): hashed once more, no new host would know
        // it (explorer seed 944).
        let following = self.follow.as_ref().and_then(|f| f.token);
        let Some(session) = &mut self.session else {
            return false;
        };
        let token = following.unwrap_or(session.token);
        session.token = crypto::migration_token(&token);
        self.follow = Some(Follow {
            left,
            list: self.succession.list.clone(),
            next,
            host: Box::new(self.conn.clone()),
            token: Some(token),
            quit: false,
            // Asking the players after us while we stand by: once round.
            until: core.now,
            again: false,
            at_host: false,
            missed: 0,
        });
        true
    }

    /// We took the game over, and step down to the game at `host` (the manager's
    /// `step_down.rs`): back to being the client we were, claiming our session there. At
    /// the host we took the game from, it is ours, with its reliable channel as it was;
    /// at a player that took the game over from that host too, it is the one that player
    /// awaits us in (our migration token). Refused as expired, or with none to claim, we
    /// join the game anew; refused as kicked, we stay out.
    pub(crate) fn go_back(&mut self, core: &mut Core, host: SocketAddr) {
        self.promote = None;
        self.standby = None;
        self.follow = None;
        self.ladder = None;
        self.stepped_down = true;
        if host == self.conn.addr && self.start_ladder(core) {
            return;
        }
        let left = self.succession.host.clone();
        if self.follow_to(core, left, host) {
            return;
        }
        self.join_anew(core, host);
    }

    /// A new session at the server at `to`, under our name: no session to claim.
    pub(super) fn join_anew(&mut self, core: &Core, to: SocketAddr) {
        self.ladder = None;
        self.follow = None;
        self.session = None;
        self.id = None;
        self.conn = self.handshake(core, to);
    }

    /// Told that the host lives while we are no successor (a spectator): we try it again
    /// with our own session, and follow the succession again if it answers nothing for
    /// [`NetConfig::reconnect_unanswered`](crate::NetConfig::reconnect_unanswered), as
    /// after any silence (explorer seed 5481: a spectator cut off from the host was told
    /// it lived, went back to it for the whole grace window, and the host died meanwhile).
    fn back_to_host(&mut self, core: &mut Core) -> bool {
        let Some(f) = self.follow.take() else {
            return false;
        };
        let unanswered = core.config.reconnect_unanswered;
        self.try_host_again(core, (*f.host, f.token), unanswered)
    }

    /// A successor we tried plays at a live host at `at`. Our old host: only our link to it
    /// failed, and we stand by on it. Another: the game moved on there while we could not
    /// reach the successor that took it over, and we follow it there. (A host that said
    /// goodbye is gone whatever the successor has not heard yet: we keep trying that
    /// successor, which takes over once the goodbye reaches it.)
    pub(super) fn host_alive(&mut self, core: &mut Core, at: SocketAddr) {
        let successor = self.place().is_some();
        let Some(f) = self
            .follow
            .as_mut()
            .filter(|f| !(f.quit && f.host.addr == at))
        else {
            self.refuse(core);
            return;
        };
        tracing::info!("{} plays at a live host at {at}", self.conn.addr);
        self.ladder = None;
        if f.host.addr == at {
            // A successor stands by there; anyone else (a spectator) only tries the host
            // again: it never takes the game over.
            match successor {
                true => self.stand_by(core),
                false => self.back_to_host(core),
            };
            return;
        }
        // The successor there: the one we try after it is the next in the list.
        if let Some(i) = f.list.iter().position(|s| s.addr == at) {
            f.next = i;
        }
        let host = f.list.iter().find(|s| s.addr == at).map(|s| s.name.clone());
        core.events.push_back(NetEvent::HostLeft {
            host: f.left.clone(),
            next: host.unwrap_or_default(),
        });
        f.next += 1;
        self.ladder_to(core, at, core.config.migration_wait);
    }
}
