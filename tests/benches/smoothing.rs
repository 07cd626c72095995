//! How remote things look, on the in-memory hub with a virtual clock: a Tumbleyard server,
//! a client whose player walks into the crate stacks and pushes them about, and a client
//! that watches. Every peer's outgoing datagrams go through the seeded conditioner, with
//! three link presets: LAN (1 ± 0.5 ms, no loss), Wi-Fi (8 ± 6 ms, 1% loss) and bad
//! (80 ± 30 ms, 10% loss).
//!
//! For the watcher, every tick (a frame drawn per tick), for every entity:
//!
//! * **error**: the distance between where the entity is drawn and where its authority
//!   (the server's world) had it at the instant being shown, for bodies under 5 m/s
//!   (p95, centimetres);
//! * **jumps**: the frames in which any drawn entity moved more than 5 cm beyond what its
//!   authority did over the same shown interval (where its world put it somewhere else
//!   meanwhile, a correction, beyond what its velocity carries it in a frame);
//! * the **render delay** in use, and how far behind the server's present the shown
//!   instant is (the delay plus the one-way latency).
//!
//! "Before" is the drawing Tumbleyard had: poses stamped with the watcher's tick when they
//! arrived, drawn 100 ms behind that clock (time-aligned here by those 100 ms), no offsets.
//! "After" is [`lanyard::interp::Smoother`]: the authority's stamps, the adaptive delay,
//! decaying visual offsets.
//!
//! For the pusher, the distance between its simulated crates and the server's at the same
//! instant (moving crates only, p95) without and with bringing the server's state forward
//! by half the round trip ([`lanyard_net::NetConfig::bring_forward`]).
//!
//! ```sh
//! cargo bench -p lanyard-tests --bench smoothing
//! ```
//!
//! A second table is for hand-off (run with `LANYARD_BENCH_HAND_OFF`): the truth of a crate
//! is its pose in the world of whoever has authority over it at that instant: the pusher's
//! from the moment it took the crate in its own world, when the server grants that take
//! (the server's word of it comes a trip later; a take it refuses never had authority),
//! until the server says the crate is its own again; the server's otherwise. The pusher's
//! screen is measured too (its held crates against its own simulation, the others against
//! the truth at its shown instant), jumps are counted on both screens, and as a held crate
//! returns to the server the server's copy is compared with the pusher's. Without hand-off
//! the truth is the server's world, as in the first table. Both screens are drawn with the
//! times of what the server relays for clients ([`NetManager::relayed_times`]).
//!
//! Every peer updates before any lets the tick's time pass, so a datagram takes a tick
//! each way alike (stepped one after another, the clients would hear the server in the
//! tick it sent, and it them only in the next: a one-sided half tick that a reckoning of
//! when a client sent something, which must split the round trip evenly, reads as 8 ms).
//!
//! Environment: `LANYARD_BENCH_SECONDS` (seconds of play per run, default 20);
//! `LANYARD_BENCH_HAND_OFF` (any value) lets the pusher take the crates it pushes
//! (hand-off; without it crates stay the server's, whatever the arena says);
//! `LANYARD_BENCH_SEED` (default 0) draws every link's losses and delays anew;
//! `LANYARD_BENCH_LINKS` (names separated by commas, such as `bad`) runs only those links.

use lanyard::KindId;
use lanyard::interp::{MAX_EXTRAPOLATION, PoseBuffer, Smoother};
use lanyard::pose::PoseState;
use lanyard::prelude::*;
use lanyard_game::kinds::{self, CrateParams, Player, PlayerInput, PlayerParams};
use lanyard_game::scene::Scene;
use lanyard_net::{Conditioned, Conditions, Hub, NetConfig, NetManager, Transport};
use lanyard_tests::measure::{BenchPeer, History, Stamps, p95};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

const DT: f32 = 1.0 / 60.0;
const OLD_DELAY: f64 = 0.1;
const JUMP: f32 = 0.05;
const SLOW: f32 = 5.0;

fn addr(i: u8) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, i], 4000))
}

fn world(scene: &Scene, role: Role) -> EntityGroup {
    // Hand-off as the bench is asked, whatever the arena says.
    let mut registry = kinds::registry_for(scene);
    registry
        .set_hand_off(
            kinds::CRATE,
            std::env::var_os("LANYARD_BENCH_HAND_OFF").is_some(),
        )
        .expect("crates are registered");
    let mut g = EntityGroup::new(
        Arc::new(registry),
        GroupConfig {
            dt: DT,
            role,
            ..GroupConfig::default()
        },
    );
    scene.add_scenery(&mut g);
    g
}

#[derive(Default)]
struct Drawing {
    name: &'static str,
    errors: Vec<f32>,
    moving: Vec<f32>,
    jumps: u32,
    frames: u32,
    /// Each entity's drawn and true position last frame, and where the truth came from
    /// (which world, at which instant): a change of that is no motion of the body, so that
    /// frame is not compared.
    last: HashMap<NetId, (Vec3, Vec3, u32)>,
}

impl Drawing {
    /// One frame: each entity drawn at `drawn`, its authority at `auth` then.
    fn frame(&mut self, seen: Vec<(NetId, Vec3, PoseState)>) {
        self.frame_with(seen.into_iter().map(|(n, d, a)| (n, d, a, 0)).collect());
    }

    /// [`frame`](Self::frame), saying for each entity where its truth came from.
    fn frame_with(&mut self, seen: Vec<(NetId, Vec3, PoseState, u32)>) {
        self.frames += 1;
        let mut jumped = false;
        let mut next = HashMap::new();
        for (net, drawn, auth, present) in seen {
            let speed = auth.linvel.length();
            if speed < SLOW {
                self.errors.push(drawn.distance(auth.pos));
                if speed > 0.1 {
                    self.moving.push(drawn.distance(auth.pos));
                }
            }
            let beyond = match self.last.get(&net) {
                // Its truth was corrected (put somewhere else) since: no motion of the
                // body to compare with but its velocity.
                Some((d0, _, _)) if present == CORRECTED => Some((drawn - *d0) - auth.linvel * DT),
                // After one, the truth moves on from where it was put.
                Some((d0, a0, was)) if *was == present || *was == CORRECTED => {
                    Some((drawn - *d0) - (auth.pos - *a0))
                }
                _ => None,
            };
            if let (Some(beyond), Some((d0, a0, _))) = (beyond, self.last.get(&net)) {
                if beyond.length() > JUMP && std::env::var("LANYARD_BENCH_DEBUG").is_ok() {
                    eprintln!(
                        "jump {} {net:?}: drawn {:?} -> {drawn:?}, authority {:?} -> {:?}",
                        self.name, d0, a0, auth.pos
                    );
                }
                jumped |= beyond.length() > JUMP;
            }
            next.insert(net, (drawn, auth.pos, present));
        }
        self.last = next;
        self.jumps += u32::from(jumped);
    }

    fn p95_cm(&self) -> f32 {
        p95(&self.errors) * 100.0
    }

    fn moving_p95_cm(&self) -> f32 {
        p95(&self.moving) * 100.0
    }
}

struct Outcome {
    old: Drawing,
    new: Drawing,
    delays: Vec<f64>,
    behind: Vec<f64>,
    present: Vec<f32>,
    /// The pusher's screen (with hand-off, the crates it holds are drawn from its own
    /// simulation).
    pusher: Drawing,
    /// For the crates the pusher holds: where it draws them against where its own
    /// simulation has them (m).
    own_view: Vec<f32>,
    /// When a held crate returns to the server: the server's copy against the pusher's (m).
    settled: Vec<f32>,
}

fn run(scene: &Scene, link: Conditions, seed: u64, bring_forward: bool, seconds: f32) -> Outcome {
    let hub = Hub::new();
    let t = |i: u8| -> Box<dyn Transport> {
        Box::new(Conditioned::new(
            hub.endpoint(addr(i)),
            link,
            seed * 10 + u64::from(i),
        ))
    };
    let mut server_group = world(scene, Role::Server);
    for (pos, size, color) in scene.crate_slots() {
        server_group
            .spawn(
                kinds::CRATE,
                &CrateParams { pos, size, color },
                Owner::Server,
            )
            .unwrap();
    }
    let config = NetConfig {
        bring_forward,
        ..NetConfig::default()
    };
    let mut server = BenchPeer {
        net: NetManager::server(config.clone(), [1; 32]),
        group: server_group,
        transport: t(1),
    };
    let client = |i: u8, name: &str| BenchPeer {
        net: NetManager::client(config.clone(), addr(1), name, None, [i; 32]),
        group: world(scene, Role::Client(ClientId(0))),
        transport: t(i),
    };
    let mut pusher = client(2, "pusher");
    let mut watcher = client(3, "watcher");
    let mut truth = Truth::default();
    let mut smoother = Smoother::new(20.0);
    let mut old: HashMap<EntityId, PoseBuffer> = HashMap::new();
    let mut out = Outcome {
        old: Drawing {
            name: "before",
            ..Drawing::default()
        },
        new: Drawing {
            name: "after",
            ..Drawing::default()
        },
        delays: Vec::new(),
        behind: Vec::new(),
        present: Vec::new(),
        pusher: Drawing {
            name: "pusher",
            ..Drawing::default()
        },
        own_view: Vec::new(),
        settled: Vec::new(),
    };
    let mut pusher_smoother = Smoother::new(20.0);
    // Who held each crate at the last tick (the server's word).
    let mut holders: HashMap<NetId, Owner> = HashMap::new();
    let mut stamps = Stamps::default();
    let mut spawned = false;
    let mut corrected: std::collections::HashSet<NetId> = Default::default();
    let targets: Vec<[f32; 3]> = scene.crate_slots().iter().map(|c| c.0).collect();
    let crate_kind = KindId::of_name(kinds::CRATE);
    let join = 3.0;
    let ticks = ((join + seconds) / DT) as u32;
    for tick in 0..ticks {
        // The stamp the server's datagrams carry this update: its clock, whole ms.
        let stamp = stamps.tick(DT);
        // The truth: a crate's pose in the world of whoever has authority over it (see
        // `Truth`), decided when it is read.
        let holder = pusher.net.client_id().map(Owner::Client);
        for e in server.group.iter() {
            let is_crate = e.kind() == crate_kind;
            let theirs = pusher
                .group
                .by_net(e.net_id())
                .filter(|p| is_crate && holder.is_some_and(|me| p.owner() == me));
            let held = is_crate && holder.is_some_and(|me| e.owner() == me);
            truth.note(
                e.net_id(),
                stamp,
                PoseState::of(e.body()),
                theirs.map(|p| PoseState::of(p.body())),
                (held, corrected.contains(&e.net_id())),
            );
            if e.kind() == crate_kind {
                let before = holders.insert(e.net_id(), e.owner());
                if before.is_some_and(|o| o != Owner::Server && Some(o) == holder)
                    && e.owner() == Owner::Server
                    && let Some(p) = pusher.group.by_net(e.net_id())
                {
                    out.settled
                        .push(p.body().translation().distance(e.body().translation()));
                }
            }
        }
        server.update(DT);
        // The pusher: its player walks at the stacks, one after another.
        if let (Some(me), false) = (pusher.net.client_id(), spawned) {
            // The server judges the spawn: the player's own spawn point, by its id.
            let params = PlayerParams {
                name: "pusher".into(),
                pos: scene.spawn_point(usize::from(me.0)),
                color: [200, 60, 60, 255],
                tuning: scene.tuning.clone(),
            };
            pusher.group.request_spawn(kinds::PLAYER, &params).unwrap();
            spawned = true;
        }
        let me = pusher.net.client_id().map(Owner::Client);
        let mine = pusher
            .group
            .iter()
            .find(|e| Some(e.owner()) == me && e.kind() == KindId::of_name(kinds::PLAYER))
            .map(|e| (e.id(), e.body().translation()));
        if let Some((id, p)) = mine {
            let goal = targets[(tick as usize / 300) * 7 % targets.len()];
            let d = Vec3::new(goal[0] - p.x, 0.0, goal[2] - p.z).normalize_or_zero();
            if let Some(c) = pusher.group.controller_mut::<Player>(id) {
                c.set_input(PlayerInput {
                    walk: [d.x, d.z],
                    respawn: p.y < scene.kill_y,
                    ..PlayerInput::default()
                });
            }
        }
        pusher.update(DT);
        watcher.update(DT);
        // Every peer updates before any lets time pass: a datagram takes a tick each way
        // alike (stepped in turn, the clients would hear the server in the tick it sent,
        // and it them only in the next).
        for p in [&mut server, &mut pusher, &mut watcher] {
            p.advance(DT);
        }
        // The crates the pusher's frame corrected (a server section put them elsewhere).
        corrected = pusher
            .group
            .observed_poses()
            .iter()
            .filter(|o| o.corrected_from.is_some())
            .filter_map(|o| Some(pusher.group.get(o.id)?.net_id()))
            .collect();
        if f64::from(tick) * f64::from(DT) < f64::from(join) + 1.0 {
            // Joining and settling.
            smoother.after_frame_relayed(
                &watcher.group,
                watcher.net.remote_time(),
                watcher.net.relayed_times(),
            );
            pusher_smoother.after_frame_relayed(
                &pusher.group,
                pusher.net.remote_time(),
                pusher.net.relayed_times(),
            );
            continue;
        }
        // The pusher's screen: what it draws of every crate against the truth, and of the
        // ones it holds against its own simulation.
        pusher_smoother.after_frame_relayed(
            &pusher.group,
            pusher.net.remote_time(),
            pusher.net.relayed_times(),
        );
        if let (Some(shown), Some(me)) = (pusher_smoother.advance(&pusher.group, 0.0), holder) {
            let mut seen = Vec::new();
            for e in pusher.group.iter().filter(|e| e.kind() == crate_kind) {
                let Some((p, _)) = pusher_smoother.pose(&pusher.group, e.id(), me) else {
                    continue;
                };
                if e.owner() == me {
                    // Its own crates are drawn at its present: their truth is its body now.
                    out.own_view.push(p.distance(e.body().translation()));
                    let source = if corrected.contains(&e.net_id()) {
                        CORRECTED
                    } else {
                        u32::MAX
                    };
                    seen.push((e.net_id(), p, PoseState::of(e.body()), source));
                } else if let Some((a, source)) = truth.at(e.net_id(), shown) {
                    seen.push((e.net_id(), p, a, source));
                }
            }
            out.pusher.frame_with(seen);
        }
        // The pusher's present against the server's, for moving crates.
        for e in pusher.group.iter() {
            if e.kind() != KindId::of_name(kinds::CRATE) {
                continue;
            }
            if let Some(s) = server.group.by_net(e.net_id())
                && s.body().linvel().length() > 0.5
            {
                out.present
                    .push(e.body().translation().distance(s.body().translation()));
            }
        }
        // The watcher, after.
        smoother.after_frame_relayed(
            &watcher.group,
            watcher.net.remote_time(),
            watcher.net.relayed_times(),
        );
        let Some(shown) = smoother.advance(&watcher.group, 0.0) else {
            continue;
        };
        out.delays.push(smoother.clock().delay());
        out.behind.push(stamp - shown);
        // Server-owned entities: their authority's clock is the one the watcher's stamps
        // come from. (A player's authority is its own client, on another clock.)
        // And the crates a client holds (hand-off): the truth is its holder's.
        let ids: Vec<(EntityId, NetId)> = watcher
            .group
            .iter()
            .filter(|e| e.owner() == Owner::Server || e.kind() == crate_kind)
            .map(|e| (e.id(), e.net_id()))
            .collect();
        let mut seen = Vec::new();
        for (id, net) in &ids {
            let Some((p, _)) =
                smoother.pose(&watcher.group, *id, Owner::Client(ClientId(u16::MAX)))
            else {
                continue;
            };
            if let Some((a, source)) = truth.at(*net, shown) {
                seen.push((*net, p, a, source));
            }
        }
        out.new.frame_with(seen);
        // The watcher, before: poses stamped on arrival with its own tick, 100 ms behind.
        let local = watcher.group.tick() as f64 * f64::from(DT);
        for o in watcher.group.observed_poses() {
            old.entry(o.id).or_default().push(local, o.authority);
        }
        let mut seen = Vec::new();
        for (id, net) in &ids {
            let body = watcher.group.get(*id).map(|e| e.body().translation());
            let p = old
                .get(id)
                .and_then(|b| b.sample(local - OLD_DELAY, MAX_EXTRAPOLATION))
                .map(|s| s.0)
                .or(body);
            if let (Some(p), Some((a, _))) = (p, truth.at(*net, stamp - OLD_DELAY)) {
                seen.push((*net, p, a));
            }
        }
        out.old.frame(seen);
    }
    if std::env::var("LANYARD_BENCH_DEBUG").is_ok() {
        let c = smoother.clock();
        eprintln!(
            "clock: interval {:.4} jitter {:.4} target {:.4} delay {:.4}",
            c.config().interval,
            c.jitter(),
            c.target(),
            c.delay()
        );
    }
    out
}

/// Each entity's truth: its pose in the world of whoever has authority over it at that
/// instant. That is the pusher's from the moment it took the crate in its own world, when
/// the server grants that take (the server's word of it comes a trip later, and a take it
/// refuses never had authority), until the server says the crate is its own again; the
/// server's otherwise.
#[derive(Default)]
struct Truth {
    server: History,
    pusher: History,
    /// Per entity, per noted stamp: the stamp, whether the pusher has it in its own world,
    /// whether the server says the pusher holds it, and whether the pusher's world put it
    /// somewhere else since the last note (a correction: no motion of the body).
    owners: HashMap<NetId, Vec<(f64, bool, bool, bool)>>,
}

impl Truth {
    /// Entity `net` at server time `t`: the server's pose of it, the pusher's if the pusher
    /// has it, and whether the server says the pusher holds it (times rise).
    fn note(
        &mut self,
        net: NetId,
        t: f64,
        server: PoseState,
        pusher: Option<PoseState>,
        (held, corrected): (bool, bool),
    ) {
        self.server.note(net, t, server);
        self.pusher.note(net, t, pusher.unwrap_or(server));
        self.owners.entry(net).or_default().push((
            t,
            pusher.is_some(),
            held && pusher.is_some(),
            corrected,
        ));
    }

    /// Whether the pusher's world is the truth at the `i`th noted stamp: the server says it
    /// holds the crate, or it took it and the server grants that before it lets go.
    fn pushers(v: &[(f64, bool, bool, bool)], i: usize) -> bool {
        let (_, took, held, _) = v[i];
        held || (took && v[i + 1..].iter().take_while(|e| e.1).any(|e| e.2))
    }

    /// Entity `net`'s truth at server time `t`, and where it came from: 0 the server's
    /// world, 1 the pusher's, [`ACROSS`] between a note from one and the next from the
    /// other (no motion of the body: the frames on either side are not compared with it),
    /// [`CORRECTED`] across a correction in the pusher's world.
    fn at(&self, net: NetId, t: f64) -> Option<(PoseState, u32)> {
        let v = self.owners.get(&net)?;
        let i = v.partition_point(|e| e.0 <= t);
        if i == 0 || i == v.len() {
            return None;
        }
        let (a, b) = (Self::pushers(v, i - 1), Self::pushers(v, i));
        let world = if b { &self.pusher } else { &self.server };
        let source = match (a == b, b && v[i].3) {
            (false, _) => ACROSS,
            (true, true) => CORRECTED,
            (true, false) => u32::from(a),
        };
        // Across a correction the body was where it was put, not anywhere between there and
        // where it was before (a blend of the two is a place it never had).
        let pose = world.at(net, if source == CORRECTED { v[i].0 } else { t })?;
        Some((pose, source))
    }
}

/// The source of a truth interpolated between two worlds' notes (see [`Truth::at`]).
const ACROSS: u32 = u32::MAX - 1;
/// The source of a truth its world corrected (put somewhere else) since the frame before:
/// the drawing is compared with the truth's velocity, not with its step.
const CORRECTED: u32 = u32::MAX - 2;

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn main() {
    let seconds: f32 = std::env::var("LANYARD_BENCH_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20.0);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/arena.toml");
    let scene = Scene::load(&path).expect("the arena loads");
    let presets = [
        ("LAN", 0.001, 0.0005, 0.0),
        ("Wi-Fi", 0.008, 0.006, 0.01),
        ("bad", 0.08, 0.03, 0.10),
    ];
    println!("smoothing: {seconds} s of play per run, a frame per tick (60 Hz), 20 broadcasts/s");
    println!(
        "| link | render delay (ms) | shown behind server (ms) | p95 error, bodies under 5 m/s, before / after (cm) | the same, moving ones (0.1 to 5 m/s) | jumps > 5 cm before / after (frames) | pusher's moving crates vs server, p95 without / with bringing forward (cm) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut hand_off_rows = Vec::new();
    // Another draw of every link's losses and delays: `LANYARD_BENCH_SEED`.
    let draw: u64 = std::env::var("LANYARD_BENCH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // Only some links: `LANYARD_BENCH_LINKS`, names separated by commas.
    let links = std::env::var("LANYARD_BENCH_LINKS").ok();
    for (i, (name, latency, jitter, loss)) in presets.into_iter().enumerate() {
        let seed = i as u64 + 1 + 3 * draw;
        if links
            .as_ref()
            .is_some_and(|l| !l.split(',').any(|l| l == name))
        {
            continue;
        }
        let link = Conditions {
            latency,
            jitter,
            loss,
            ..Conditions::PERFECT
        };
        let before = run(&scene, link, seed, false, seconds);
        let after = run(&scene, link, seed, true, seconds);
        let mut d = after.delays.clone();
        d.sort_by(f64::total_cmp);
        println!(
            "| {name} | 100 fixed / {:.0} (p95 {:.0}, last 10% {:.0}) | {:.0} / {:.0} | {:.2} / {:.2} | {:.2} / {:.2} | {} / {} of {} | {:.1} / {:.1} |",
            mean(&after.delays) * 1000.0,
            d[d.len() * 95 / 100] * 1000.0,
            mean(&after.delays[after.delays.len() * 9 / 10..]) * 1000.0,
            (OLD_DELAY + f64::from(latency) + 1.0 / 120.0) * 1000.0,
            mean(&after.behind) * 1000.0,
            before.old.p95_cm(),
            after.new.p95_cm(),
            before.old.moving_p95_cm(),
            after.new.moving_p95_cm(),
            before.old.jumps,
            after.new.jumps,
            after.new.frames,
            p95(&before.present) * 100.0,
            p95(&after.present) * 100.0,
        );
        hand_off_rows.push(format!(
            "| {name} | {:.2} | {:.2} / {:.2} | {} / {} of {} | {:.2} / {:.2} ({}) | {:.2} |",
            p95(&after.own_view) * 100.0,
            after.new.p95_cm(),
            after.new.moving_p95_cm(),
            after.new.jumps,
            after.pusher.jumps,
            after.pusher.frames,
            p95(&after.settled) * 100.0,
            after.settled.iter().copied().fold(0.0, f32::max) * 100.0,
            after.settled.len(),
            after.pusher.p95_cm(),
        ));
    }
    println!();
    println!(
        "| link | pusher: its held crates drawn vs its own simulation, p95 (cm) | watcher vs the truth (the holder's world for a held crate), p95 all / moving (cm) | jumps > 5 cm, watcher / pusher (frames) | server vs pusher as a crate returns, p95 / max (cm) (returns) | pusher's screen vs the truth, p95 (cm) |"
    );
    println!("|---|---|---|---|---|---|");
    for r in hand_off_rows {
        println!("{r}");
    }
}
