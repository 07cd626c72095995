//! One seed's run: the session of a [`Plan`] on the hub, in virtual time, with its
//! faults applied tick by tick and the invariants checked all along ([`run`]).

use super::chat::{EVERY_SECONDS, Probes};
use super::link::{Dropped, FaultyLink, KnobHandle, Knobs};
use super::plan::{Fault, Plan, SERVER, SESSION_SECONDS};
use lanyard::NetId;
use lanyard_game::bot::Bot;
use lanyard_game::game::{Game, Options, TICK_HZ};
use lanyard_game::scene::{DEFAULT_SCENE, Scene};
use lanyard_net::harness::hub_addr;
use lanyard_net::{Footprint, Hub};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;
use std::rc::Rc;

mod always;
mod end;

use end::Motion;

/// How far (metres) a client's state of an entity may be from the server's at the same
/// broadcast, or from the server's world once the faults healed: the server sends poses
/// quantized to 1 mm.
pub const TOLERANCE: f32 = 0.01;

/// How long before the end (seconds) a person whose game found no game, or lost it as it
/// may, still looks again: a second to look, and two to join and hold the world. Not
/// only before the quiet end: a fault's consequences can come after it healed (seed 903:
/// a player joined 0.2 s before the host was killed, too soon to be told who takes over,
/// then was frozen; thawed, its timeout came 1.6 s later by its own clock, its ladder
/// heard nothing for 5 s, and its game said the session was lost 25.1 s in).
const REJOIN: f32 = 3.0;

/// How recent (seconds) a client's state of a body still moving at the end must be.
const FRESH: f64 = 2.0;

/// How often (ticks) the states clients took are checked against what the server sent.
const CHECK_EVERY: u64 = 15;

/// The reliable channel's window, in messages or fragments (`lanyard_net`'s own, 4096):
/// a receiver holds no more ahead of a missing one.
const WINDOW_FRAGMENTS: usize = 4096;

/// At the end, the faults healed [`QUIET`](super::plan::QUIET) seconds ago: a client has at most this many
/// reliable messages its server has not acknowledged (what the last few frames sent).
const SETTLED_UNACKED: usize = 64;

/// An invariant that did not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The seed of the run.
    pub seed: u64,
    /// The tick of the session it was found at.
    pub tick: u64,
    /// The peers it concerns (names).
    pub peers: Vec<String>,
    /// What did not hold.
    pub what: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed {} tick {} ({:.2}s), peers {}: {}",
            self.seed,
            self.tick,
            self.tick as f32 / TICK_HZ,
            self.peers.join(", "),
            self.what
        )
    }
}

/// What a run that held did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Ticks of the session.
    pub ticks: u64,
    /// Faults of each kind injected.
    pub faults: BTreeMap<&'static str, u64>,
    /// Datagrams the links dropped for partitions and for the MTU.
    pub dropped: Dropped,
    /// Recordings replayed bit for bit at the end.
    pub replayed: usize,
    /// Host changes the survivors saw.
    pub host_changes: usize,
    /// Joins tried again after nobody answered one (see `look_again`).
    pub rejoins: usize,
    /// The most any peer held in its network queues at a check (each part's largest).
    pub footprint: Footprint,
    /// The players' numbered chat lines said (the reliable channel's check).
    pub lines_said: u64,
    /// Those lines shown on the screens, each once a screen.
    pub lines_shown: u64,
    /// Whether a server dropped chat lines over its rate (the end check of the lines
    /// delivered was then skipped).
    pub chat_dropped: bool,
}

/// One peer of the session.
struct Peer {
    name: String,
    game: Option<Game>,
    knobs: KnobHandle,
    bot: Bot,
    /// Where its recording goes.
    record: PathBuf,
    /// Whether it was killed or quit (it is not expected to be in the game at the end).
    gone: bool,
    /// Whether it was ever in the game.
    joined: bool,
    /// How many times it tried to join.
    attempts: u8,
    /// How many times it stepped down as a host (and joined the game's new host: a new
    /// session, as a join is), and whether it hosted at the last tick.
    step_downs: u8,
    hosted: bool,
    /// When it tries again, its last attempt answered by nobody (a person who finds no
    /// game looks again), seconds into the session.
    retry_at: Option<f32>,
    /// Whether the host kicked it (it leaves once its game hears so, and is not expected
    /// at the end).
    kicked: bool,
    /// The host that kicked it (by peer index).
    kicked_by: Option<usize>,
    /// The time it was frozen for, not yet passed on its clock (seconds): a stopped
    /// process's clock goes on, and its first tick after takes it all.
    stalled: f32,
}

/// What a run needs besides its plan: where recordings go, and the arena.
struct Session<'p> {
    plan: &'p Plan,
    hub: Hub,
    peers: Vec<Peer>,
    dropped: Rc<RefCell<Dropped>>,
    scene: Scene,
    tick: u64,
    /// The host's entities at the last tick, and the tick each entity last came or went
    /// there: one that did so in the last [`FRESH`] seconds may not have reached a client.
    host_world: BTreeSet<NetId>,
    host_changed: BTreeMap<NetId, u64>,
    /// What each of the host's bodies did lately (see `end.rs`).
    host_motion: BTreeMap<NetId, Motion>,
    /// The host's score tables of the last [`FRESH`] seconds (each with the tick it was
    /// replaced at, the current one with none): a point scored in the last moments may
    /// not have reached a client.
    host_scores: Vec<(Scores, Option<u64>)>,
    /// The players' numbered chat lines, said and shown (the reliable channel's check).
    probes: Probes,
    /// The crate each contention fault (by its index in the plan) has its players push.
    contended: BTreeMap<usize, NetId>,
    /// Whether a server dropped a chat line over its rate (a gap in the lines is no fault).
    chat_dropped: bool,
}

/// A score table, as the presentation lists it.
type Scores = Vec<(String, u32)>;

/// Runs `plan`: `Ok` with what it did if every invariant held, else the first violation.
/// A panic anywhere in the session is a violation too. Recordings go to `dir`.
pub fn run(plan: &Plan, dir: &std::path::Path) -> Result<Outcome, Violation> {
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_inner(plan, dir)));
    match caught {
        Ok(r) => r,
        Err(e) => {
            let what = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "a panic".into());
            Err(Violation {
                seed: plan.seed,
                tick: 0,
                peers: Vec::new(),
                what: format!("panicked: {what}"),
            })
        }
    }
}

fn run_inner(plan: &Plan, dir: &std::path::Path) -> Result<Outcome, Violation> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(DEFAULT_SCENE);
    let scene = Scene::load(&path).map_err(|e| violation(plan, 0, &[], format!("arena: {e}")))?;
    let mut s = Session {
        plan,
        hub: Hub::new(),
        peers: Vec::new(),
        dropped: Rc::default(),
        scene,
        tick: 0,
        host_world: BTreeSet::new(),
        host_changed: BTreeMap::new(),
        host_motion: BTreeMap::new(),
        host_scores: Vec::new(),
        probes: Probes::default(),
        chat_dropped: false,
        contended: BTreeMap::new(),
    };
    s.start_server(dir)?;
    for (i, c) in plan.clients.iter().enumerate() {
        s.peers.push(Peer {
            name: c.name.clone(),
            game: None,
            knobs: KnobHandle::default(),
            bot: Bot::new(
                plan.seed.wrapping_mul(31).wrapping_add(i as u64 + 1),
                Some(SESSION_SECONDS),
            ),
            record: dir.join(format!("{}-{}.rec", plan.seed, c.name)),
            gone: false,
            joined: false,
            attempts: 0,
            step_downs: 0,
            hosted: false,
            retry_at: None,
            kicked: false,
            kicked_by: None,
            stalled: 0.0,
        });
    }
    let ticks = (SESSION_SECONDS * TICK_HZ) as u64;
    let mut outcome = Outcome::default();
    for f in &plan.faults {
        *outcome.faults.entry(f.kind()).or_default() += 1;
    }
    while s.tick < ticks {
        s.step()?;
        s.check_always()?;
        s.note_host_world();
        if s.tick.is_multiple_of(CHECK_EVERY) {
            s.check_dates()?;
            s.check_memory(&mut outcome.footprint)?;
        }
        s.tick += 1;
    }
    s.check_end()?;
    outcome.ticks = ticks;
    outcome.host_changes = s
        .live()
        .map(|p| p.1.host_changes().len())
        .max()
        .unwrap_or(0);
    outcome.rejoins = s
        .peers
        .iter()
        .map(|p| usize::from(p.attempts.saturating_sub(1)))
        .sum();
    (outcome.lines_said, outcome.lines_shown) = s.probes.counts();
    outcome.chat_dropped = s.chat_dropped;
    outcome.replayed = s.replay_all()?;
    outcome.dropped = *s.dropped.borrow();
    Ok(outcome)
}

fn violation(plan: &Plan, tick: u64, peers: &[&str], what: String) -> Violation {
    Violation {
        seed: plan.seed,
        tick,
        peers: peers.iter().map(|p| (*p).to_owned()).collect(),
        what,
    }
}

impl Session<'_> {
    fn options(&self, name: &str) -> Options {
        Options {
            port: 0,
            name: name.to_owned(),
            ..Options::new(self.scene.clone())
        }
    }

    fn link(&self, i: usize, knobs: &KnobHandle) -> FaultyLink {
        let seed = self
            .plan
            .seed
            .wrapping_mul(1_000_003)
            .wrapping_add(i as u64);
        FaultyLink::new(
            self.hub.endpoint(hub_addr(i)),
            seed,
            knobs.clone(),
            self.dropped.clone(),
        )
    }

    fn fail(&self, peers: &[&str], what: String) -> Violation {
        violation(self.plan, self.tick, peers, what)
    }

    fn start_server(&mut self, dir: &std::path::Path) -> Result<(), Violation> {
        let knobs = KnobHandle::default();
        let host = self.plan.host.then(|| "host".to_owned());
        let link = self.link(SERVER, &knobs);
        let mut game = Game::server_on(self.options("yard"), host, link)
            .map_err(|e| self.fail(&["server"], format!("cannot start: {e}")))?;
        let record = dir.join(format!("{}-server.rec", self.plan.seed));
        game.record_to(&record)
            .map_err(|e| self.fail(&["server"], format!("cannot record: {e}")))?;
        self.peers.push(Peer {
            name: if self.plan.host { "host" } else { "server" }.into(),
            game: Some(game),
            knobs,
            bot: Bot::new(self.plan.seed, Some(SESSION_SECONDS)),
            record,
            gone: false,
            joined: false,
            attempts: 0,
            step_downs: 0,
            hosted: false,
            retry_at: None,
            kicked: false,
            kicked_by: None,
            stalled: 0.0,
        });
        Ok(())
    }

    /// The peers in the game now, with their index.
    fn live(&self) -> impl Iterator<Item = (usize, &Game)> {
        self.peers
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((i, p.game.as_ref()?)))
    }

    /// Whether peer `i` is frozen at `t` (seconds into the session).
    fn frozen(&self, i: usize, t: f32) -> bool {
        self.plan
            .faults
            .iter()
            .any(|f| f.active(t) && matches!(*f, Fault::Freeze { peer, .. } if peer == i))
    }

    /// One tick: the faults of this moment, joins, then every peer that runs.
    fn step(&mut self) -> Result<(), Violation> {
        let t = self.tick as f32 / TICK_HZ;
        let dt = 1.0 / TICK_HZ;
        self.apply_faults(t);
        self.look_again(t);
        let frozen: BTreeSet<usize> = (0..self.peers.len())
            .filter(|&i| self.frozen(i, t))
            .collect();
        for (i, c) in self.plan.clients.iter().enumerate() {
            let i = i + 1;
            // A frozen machine does nothing, joining a game included: its person joins
            // once it thaws, the game they find on the LAN then (seeds 731 and 741: one
            // that began to join a host that went while it was frozen said "no server
            // answered" too late to look again).
            if frozen.contains(&i) {
                continue;
            }
            let due = self.peers[i].retry_at.map_or(c.at, |r| r.max(c.at));
            // A person joins the game they find on the LAN: while nobody hosts (the host
            // went and its successor has not taken over yet, or the host is stopped and
            // answers nobody), they find none and look again a second later.
            let host = self
                .live()
                .find(|(h, g)| g.is_server() && !frozen.contains(h))
                .map(|(h, _)| h);
            let hosted = host.is_some();
            if self.peers[i].game.is_none() && !self.peers[i].gone && t >= due && !hosted {
                self.peers[i].retry_at = Some(t + 1.0);
                continue;
            }
            if self.peers[i].game.is_none() && !self.peers[i].gone && t >= due {
                self.peers[i].attempts += 1;
                self.peers[i].retry_at = None;
                let link = self.link(i, &self.peers[i].knobs);
                let options = Options {
                    spectate: c.spectator,
                    ..self.options(&c.name)
                };
                let mut entropy = [i as u8; 32];
                entropy[31] = self.peers[i].attempts;
                // A late joiner finds the game where it is now (a player browses the
                // LAN): at the host's successor if the host went.
                let host = host.unwrap_or(SERVER);
                let mut game = Game::client_on(options, link, hub_addr(host), entropy)
                    .map_err(|e| self.fail(&[&c.name], format!("cannot start: {e}")))?;
                game.record_to(&self.peers[i].record)
                    .map_err(|e| self.fail(&[&c.name], format!("cannot record: {e}")))?;
                self.peers[i].game = Some(game);
            }
        }
        let left = SESSION_SECONDS - t;
        let every = (EVERY_SECONDS * TICK_HZ) as u64;
        let pushes = self.contention(t);
        let tick = self.tick;
        for (i, p) in self.peers.iter_mut().enumerate() {
            let Some(g) = p.game.as_mut() else { continue };
            if frozen.contains(&i) {
                p.stalled += dt;
                continue;
            }
            // A clock that steps: this frame lets that much more time pass here.
            let stepped: f32 = self
                .plan
                .faults
                .iter()
                .filter(|f| f.now(tick, TICK_HZ))
                .filter_map(|f| match *f {
                    Fault::ClockStep { peer, secs, .. } if peer == i => Some(secs),
                    _ => None,
                })
                .sum();
            // Each player says its next numbered line in turn (a dedicated server is none; a
            // client between connections cannot chat, and the game says so).
            let connected = g.net().is_connected() && !g.net().is_reconnecting();
            let player = match i {
                // A host that stepped down is a client like the others.
                SERVER if g.is_server() => self.plan.host,
                SERVER => self.plan.host && g.is_joined() && connected,
                _ => !self.plan.clients[i - 1].spectator && g.is_joined() && connected,
            };
            if player && (self.tick + 7 * i as u64).is_multiple_of(every) {
                let name = g.my_name().unwrap_or(&p.name).to_owned();
                g.chat(&self.probes.say(&name, self.tick, followed(i, g)));
            }
            let mut input = p.bot.input(g, dt, left);
            if let Some(&net) = pushes.get(&i) {
                input = push_towards(g, net).unwrap_or(input);
            }
            g.set_input(input);
            // What a peer's frame logs names the peer and the moment (RUST_LOG=...).
            let _frame =
                tracing::info_span!("frame", t = tick as f32 / TICK_HZ, peer = %p.name).entered();
            g.tick(dt + stepped + std::mem::take(&mut p.stalled));
        }
        self.take_chat()
    }

    /// The players contending for a crate at `t`, and the crate each pushes: the one
    /// nearest to the midpoint of the two when the contention began (as the host sees it).
    fn contention(&mut self, t: f32) -> BTreeMap<usize, NetId> {
        let mut pushes = BTreeMap::new();
        for (k, f) in self.plan.faults.iter().enumerate() {
            let (Fault::Contend { a, b, .. }, true) = (f, f.active(t)) else {
                continue;
            };
            if !self.contended.contains_key(&k) {
                let Some(net) = self.crate_between(*a, *b) else {
                    continue;
                };
                self.contended.insert(k, net);
            }
            pushes.insert(*a, self.contended[&k]);
            pushes.insert(*b, self.contended[&k]);
        }
        pushes
    }

    /// The host's crate nearest to the midpoint of peers `a`'s and `b`'s players.
    fn crate_between(&self, a: usize, b: usize) -> Option<NetId> {
        let host = self.live().find(|(_, g)| g.is_server())?.1;
        let at = |i: usize| -> Option<lanyard::Vec3> {
            let g = self.peers[i].game.as_ref()?;
            let id = g.my_player()?;
            Some(g.group().get(id)?.body().translation())
        };
        let mid = (at(a)? + at(b)?) / 2.0;
        let crate_kind = lanyard::KindId::of_name(lanyard_game::kinds::CRATE);
        host.group()
            .iter()
            .filter(|e| e.kind() == crate_kind)
            .min_by(|x, y| {
                let dx = (x.body().translation() - mid).length();
                let dy = (y.body().translation() - mid).length();
                dx.total_cmp(&dy)
            })
            .map(|e| e.net_id())
    }

    /// What every screen showed of the players' numbered lines this tick: each player's in
    /// order and exactly once while the screen follows one host.
    fn take_chat(&mut self) -> Result<(), Violation> {
        for i in 0..self.peers.len() {
            let p = &mut self.peers[i];
            let Some(g) = p.game.as_mut() else {
                continue;
            };
            if p.hosted && !g.is_server() {
                p.step_downs += 1;
            }
            p.hosted = g.is_server();
            let session = p.attempts.saturating_add(p.step_downs);
            let server = followed(i, g);
            self.chat_dropped |= g.is_server() && g.chat_dropped() > 0;
            let joined = g.is_server() || g.is_joined();
            self.probes
                .note_era(i, (session, server, joined), self.tick);
            let lines = g.take_messages();
            if let Err(what) = self.probes.shown(i, &lines, self.chat_dropped) {
                let name = self.peers[i].name.clone();
                return Err(self.fail(&[&name], what));
            }
        }
        Ok(())
    }

    /// A client whose join nobody answered (it went to a host that had just gone, or it
    /// could not hear the server) is a person who finds no game yet: it looks again a
    /// second later, while [`REJOIN`] seconds are left. A client that was in the game and lost it is
    /// not: that is a failure [`check_end`](Self::check_end) reports, with one exception. A
    /// player who joined in the moment before the host went, before anyone told it who
    /// takes over (the succession comes once it has the world), cannot follow the game: it
    /// loses its session, and looks for the game again.
    fn look_again(&mut self, t: f32) {
        let migrates = self.plan.host;
        for p in self.peers.iter_mut().skip(1) {
            let Some(g) = p.game.as_ref() else { continue };
            p.joined |= g.is_joined();
            if p.kicked && g.ended().is_some() {
                // Kicked, and its game heard so (or lost the session): it leaves.
                p.game = None;
                p.gone = true;
                continue;
            }
            let unanswered = !p.joined
                && g.ended()
                    .is_some_and(|why| why.starts_with("no server answered"));
            let untold = migrates && g.ended().is_some() && g.net().succession().is_empty();
            // A player whose game lost the host after a long silence (the ladder heard
            // nothing for `reconnect_unanswered`) joins again, as a person would.
            let lost = g.ended().is_some_and(|why| why.ends_with("timed out"));
            // One whose session the game's new host does not keep (it took the game over
            // from a succession told before this player came) joins afresh, as told.
            let expired = g
                .ended()
                .is_some_and(|why| why.contains("new host does not know this session"));
            if (unanswered || untold || lost || expired) && t + 1.0 < SESSION_SECONDS - REJOIN {
                p.game = None;
                p.retry_at = Some(t + 1.0);
            }
        }
    }

    /// Sets every peer's knobs from the faults running at `t`; kills and quits happen
    /// once, at their moment.
    fn apply_faults(&mut self, t: f32) {
        // A filter set at a fault's start is lifted at its end, when it runs no more.
        for f in &self.plan.faults {
            if let Fault::Hide { peer, at, secs } = *f {
                self.hide(peer, at, secs);
            }
        }
        let mut knobs: Vec<Knobs> = vec![Knobs::default(); self.peers.len()];
        for f in self.plan.faults.iter().filter(|f| f.active(t)) {
            match *f {
                Fault::Loss { peer, rate, .. } => knobs[peer].conditions.loss = rate,
                Fault::Chaos { peer, latency, .. } => {
                    let c = &mut knobs[peer].conditions;
                    c.latency = latency;
                    c.jitter = latency / 2.0;
                    c.duplicate = 0.1;
                    c.reorder = 0.1;
                }
                Fault::Partition { from, to, both, .. } => {
                    knobs[from].cut.insert(hub_addr(to));
                    if both {
                        knobs[to].cut.insert(hub_addr(from));
                    }
                }
                Fault::Mtu { peer, bytes, .. } => knobs[peer].mtu = Some(bytes),
                Fault::Kill { peer, at } | Fault::Quit { peer, at } => {
                    let now = (at * TICK_HZ).ceil() as u64 == self.tick;
                    let p = &mut self.peers[peer];
                    if now && !p.gone {
                        p.gone = true;
                        if let (Fault::Quit { .. }, Some(g)) = (f, p.game.as_mut()) {
                            g.shutdown();
                        }
                        p.game = None;
                    }
                }
                Fault::Kick { peer, .. } if f.now(self.tick, TICK_HZ) => self.kick(peer, t),
                Fault::Freeze { .. }
                | Fault::Hide { .. }
                | Fault::Kick { .. }
                | Fault::ClockStep { .. }
                | Fault::Contend { .. } => {}
            }
        }
        for (p, k) in self.peers.iter().zip(knobs) {
            let mut mine = p.knobs.borrow_mut();
            if *mine != k {
                *mine = k;
            }
        }
    }

    /// The host kicks `peer` at `t`: if there is a host, not frozen (a stopped process
    /// takes no command), and the peer has a session there.
    fn kick(&mut self, peer: usize, t: f32) {
        let Some(name) = self.peers[peer]
            .game
            .as_ref()
            .and_then(|g| g.my_name().map(str::to_owned))
        else {
            return;
        };
        let Some(h) = self
            .live()
            .find(|(i, g)| g.is_server() && !self.frozen(*i, t))
            .map(|(i, _)| i)
        else {
            return;
        };
        let Some(host) = self.peers[h].game.as_mut() else {
            return;
        };
        if !host.net().sessions().iter().any(|s| s.name == name) {
            return;
        }
        let _ = host.kick(&name, "the explorer", false);
        self.peers[peer].kicked = true;
        self.peers[peer].kicked_by = Some(h);
    }

    /// From `at` for `secs` seconds, the host's relevance filter hides every entity with
    /// an even network id (but its own) from `peer`; then it lifts.
    fn hide(&mut self, peer: usize, at: f32, secs: f32) {
        let tick = self.tick;
        let begins = (at * TICK_HZ).ceil() as u64 == tick;
        let ends = ((at + secs) * TICK_HZ).ceil() as u64 == tick;
        if !(begins || ends) {
            return;
        }
        let client = self.peers[peer]
            .game
            .as_ref()
            .and_then(|g| g.net().client_id());
        let Some(host) = self
            .peers
            .iter_mut()
            .filter_map(|p| p.game.as_mut())
            .find(|g| g.is_server())
        else {
            return;
        };
        // The filter lifts whatever the peer is doing then: one joining anew has no id
        // until it is welcomed, and a filter left on would hide half the world from the
        // session it gets (explorer seed 9426, a checker bug: a spectator the new host did
        // not know was refused, joined anew under its old id, and never saw half the yard).
        let _ = match (begins, client) {
            (true, Some(client)) => host
                .net_mut()
                .set_relevance(move |c, e, _| c != client || e.net_id().0 % 2 == 1),
            (true, None) => return,
            (false, _) => host.net_mut().set_relevance(|_, _, _| true),
        };
    }

    /// Notes which of the host's entities came or went this tick.
    fn note_host_world(&mut self) {
        let Some(host) = self.live().find(|(_, g)| g.is_server()).map(|(_, g)| g) else {
            return;
        };
        let now: BTreeSet<NetId> = host.group().iter().map(|e| e.net_id()).collect();
        let scores = host.presentation().scores().to_vec();
        let bodies: Vec<(NetId, [f32; 3], bool)> = host
            .group()
            .iter()
            .map(|e| {
                let resting = e.body().linvel().length() < lanyard::predict::REST_SPEED;
                (e.net_id(), e.body().translation().to_array(), resting)
            })
            .collect();
        for net in now.symmetric_difference(&self.host_world) {
            self.host_changed.insert(*net, self.tick);
        }
        self.host_world = now;
        let tick = self.tick;
        self.host_motion.retain(|n, _| self.host_world.contains(n));
        for (net, at, resting) in bodies {
            self.host_motion
                .entry(net)
                .or_insert_with(|| Motion::new(at))
                .note(tick, at, resting);
        }
        if self.host_scores.last().is_none_or(|(s, _)| *s != scores) {
            if let Some(last) = self.host_scores.last_mut() {
                last.1 = Some(self.tick);
            }
            self.host_scores.push((scores, None));
        }
        let fresh = (FRESH * f64::from(TICK_HZ)) as u64;
        self.host_scores
            .retain(|(_, until)| until.is_none_or(|u| tick.saturating_sub(u) <= fresh));
    }

    /// Whether `net` came or went on the host in the last [`FRESH`] seconds.
    fn lately_changed(&self, net: NetId) -> bool {
        let fresh = (FRESH * f64::from(TICK_HZ)) as u64;
        self.host_changed
            .get(&net)
            .is_some_and(|t| self.tick.saturating_sub(*t) <= fresh)
    }

    /// Ends every live peer and replays its recording bit for bit: how many replayed.
    fn replay_all(&mut self) -> Result<usize, Violation> {
        let mut replayed = 0;
        for i in 0..self.peers.len() {
            let Some(mut g) = self.peers[i].game.take() else {
                continue;
            };
            g.shutdown();
            drop(g);
            let name = self.peers[i].name.clone();
            let bytes = std::fs::read(&self.peers[i].record)
                .map_err(|e| self.fail(&[&name], format!("cannot read its recording: {e}")))?;
            let mut replay = lanyard_game::kinds::open_replay(&bytes)
                .map_err(|e| self.fail(&[&name], format!("its recording does not open: {e}")))?;
            match replay.verify(|_, _| {}) {
                Ok(None) => replayed += 1,
                Ok(Some(d)) => {
                    return Err(self.fail(&[&name], format!("its recording diverges: {d}")));
                }
                Err(e) => {
                    return Err(self.fail(&[&name], format!("its recording does not replay: {e}")));
                }
            }
            let _ = std::fs::remove_file(&self.peers[i].record);
        }
        Ok(replayed)
    }
}

/// A player's input that walks it into entity `net` (contention), if both are there.
fn push_towards(g: &Game, net: NetId) -> Option<lanyard_game::kinds::PlayerInput> {
    let me = g.group().get(g.my_player()?)?.body().translation();
    let to = g.group().by_net(net)?.body().translation();
    let d = lanyard::Vec3::new(to.x - me.x, 0.0, to.z - me.z).normalize_or_zero();
    Some(lanyard_game::kinds::PlayerInput {
        walk: [d.x, d.z],
        ..Default::default()
    })
}

/// Raises each part of `most` to `f`'s where `f`'s is larger.
pub fn widen(most: &mut Footprint, f: &Footprint) {
    most.connections = most.connections.max(f.connections);
    most.unacked_messages = most.unacked_messages.max(f.unacked_messages);
    most.unacked_bytes = most.unacked_bytes.max(f.unacked_bytes);
    most.held_bytes = most.held_bytes.max(f.held_bytes);
    most.inbox = most.inbox.max(f.inbox);
    most.events = most.events.max(f.events);
}

fn distance(a: [f32; 3], b: [f32; 3]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The server peer `i`'s game `g` follows: its own address while it hosts.
fn followed(i: usize, g: &Game) -> Option<std::net::SocketAddr> {
    match g.is_server() {
        true => Some(hub_addr(i)),
        false => g.net().server_addr(),
    }
}
