//! A short guide for game developers and replay-test writers, in four compiled steps.
//! Every example here runs as a doctest (`cargo test -p lanyard-net --doc`).
//!
//! # 1. Write a kind
//!
//! A kind is a [`Controller`](lanyard::Controller) and a factory that builds the entity
//! from serialisable spawn parameters. The server path decides and writes; the client path
//! applies. This one carries its pose, decides a new spin from a seeded stream every
//! `PERIOD` ticks, and keeps its state in snapshots with no hand-written code:
//!
//! ```
//! use lanyard::codec::{Section, SectionWriter};
//! use lanyard::pose::{CORRECTION_TOLERANCE, PoseState};
//! use lanyard::prelude::*;
//! use serde::{Deserialize, Serialize};
//!
//! const PERIOD: u32 = 30;
//!
//! #[derive(Serialize, Deserialize)]
//! pub struct Spinner { rng: SeededRng, countdown: u32, spin: f32 }
//!
//! impl Controller for Spinner {
//!     fn server_update(&mut self, me: EntityRef<'_>, _w: &WorldView<'_>, out: &mut SectionWriter<'_>) {
//!         if self.countdown == 0 {
//!             self.countdown = PERIOD;
//!             self.spin = self.rng.range_f32(-3.0, 3.0);
//!         }
//!         self.countdown -= 1;
//!         PoseState::write_with(me.body(), &self.spin, out);
//!     }
//!
//!     fn client_update(&mut self, _me: &mut Entity, s: Option<Section<'_>>, ctx: &mut ClientContext<'_>) -> Result<(), Error> {
//!         if let Some(s) = s {
//!             self.spin = PoseState::take_then(&s, ctx, CORRECTION_TOLERANCE, |r| r.serde())?;
//!         }
//!         ctx.set_angvel(Vec3::new(0.0, self.spin, 0.0));
//!         Ok(())
//!     }
//!
//!     lanyard::serde_state!();
//! }
//!
//! pub fn kinds() -> std::sync::Arc<KindRegistry> {
//!     let mut r = KindRegistry::new();
//!     let options = lanyard::KindOptions { client_spawnable: true, ..Default::default() };
//!     r.register_with("spinner", options, |seed: &u64| Blueprint {
//!         body: RigidBodyBuilder::dynamic().translation(Vec3::new(0.0, 0.5, 0.0)).build(),
//!         colliders: vec![ColliderBuilder::cuboid(0.5, 0.5, 0.5).build()],
//!         visual: Visual { shape: Shape::Cuboid { half_extents: [0.5; 3] }, color: [200; 4] },
//!         controller: Box::new(Spinner { rng: SeededRng::new(*seed), countdown: 0, spin: 0.0 }),
//!     }).unwrap();
//!     std::sync::Arc::new(r)
//! }
//!
//! // Alone, with no network: the same frame as everywhere else.
//! let mut world = EntityGroup::new(kinds(), GroupConfig { gravity: Vec3::ZERO, ..GroupConfig::default() });
//! let id = world.spawn("spinner", &7u64, Owner::Server).unwrap();
//! for _ in 0..10 { world.frame(); }
//! assert!(world.get(id).unwrap().body().angvel().y != 0.0);
//! ```
//!
//! A kind like this one, whose section is its pose and one decision, is shorter as a
//! [`PoseKind`](lanyard::PoseKind): `decide` is the server path, `apply` the client path,
//! and [`Posed`](lanyard::Posed) writes the pose, corrects drift and saves the state (the
//! README's spinner is written that way, in under 40 formatted lines, with
//! [`Blueprint::dynamic_box`](lanyard::Blueprint::dynamic_box)). Two more lines make its
//! replays easy to read and keep old ones working:
//! [`describe_sections`](lanyard::KindRegistry::describe_sections) names the fields of its
//! sections in decision-replay reports, and
//! [`KindOptions::state_version`](lanyard::KindOptions::state_version) with
//! [`migrate_state`](lanyard::KindRegistry::migrate_state) lets a recording made before its
//! saved state changed still open.
//!
//! # 2. Network it
//!
//! The same registry on every peer. `lanyard_net::harness::Scenario` (feature `harness`) runs
//! a server and clients on the in-memory hub with a virtual clock (a game runs the same
//! [`NetManager`](crate::NetManager) over [`udp::UdpTransport`](crate::udp::UdpTransport)).
//! A client asks for the entities it will own with `request_spawn`; the ticket finds the
//! entity, and every other peer sees it under the id the server gave it:
//!
//! ```
//! # use lanyard::codec::{Section, SectionWriter};
//! # use lanyard::pose::{CORRECTION_TOLERANCE, PoseState};
//! # use lanyard::prelude::*;
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Serialize, Deserialize)]
//! # pub struct Spinner { rng: SeededRng, countdown: u32, spin: f32 }
//! # impl Controller for Spinner {
//! #     fn server_update(&mut self, me: EntityRef<'_>, _w: &WorldView<'_>, out: &mut SectionWriter<'_>) {
//! #         if self.countdown == 0 { self.countdown = 30; self.spin = self.rng.range_f32(-3.0, 3.0); }
//! #         self.countdown -= 1;
//! #         PoseState::write_with(me.body(), &self.spin, out);
//! #     }
//! #     fn client_update(&mut self, _me: &mut Entity, s: Option<Section<'_>>, ctx: &mut ClientContext<'_>) -> Result<(), Error> {
//! #         if let Some(s) = s {
//! #             self.spin = PoseState::take_then(&s, ctx, CORRECTION_TOLERANCE, |r| r.serde())?;
//! #         }
//! #         ctx.set_angvel(Vec3::new(0.0, self.spin, 0.0));
//! #         Ok(())
//! #     }
//! #     lanyard::serde_state!();
//! # }
//! # pub fn kinds() -> std::sync::Arc<KindRegistry> {
//! #     let mut r = KindRegistry::new();
//! #     let options = lanyard::KindOptions { client_spawnable: true, ..Default::default() };
//! #     r.register_with("spinner", options, |seed: &u64| Blueprint {
//! #         body: RigidBodyBuilder::dynamic().translation(Vec3::new(0.0, 0.5, 0.0)).build(),
//! #         colliders: vec![ColliderBuilder::cuboid(0.5, 0.5, 0.5).build()],
//! #         visual: Visual { shape: Shape::Cuboid { half_extents: [0.5; 3] }, color: [200; 4] },
//! #         controller: Box::new(Spinner { rng: SeededRng::new(*seed), countdown: 0, spin: 0.0 }),
//! #     }).unwrap();
//! #     std::sync::Arc::new(r)
//! # }
//! use lanyard_net::NetConfig;
//! use lanyard_net::harness::Scenario;
//!
//! let no_scenery = |_: &mut EntityGroup| {};
//! // The server's world floats; the clients take its gravity (and timestep) from the welcome.
//! let mut s = Scenario::with_registry(kinds(), no_scenery, NetConfig::default(), None, 60.0, |g| {
//!     g.set_gravity(Vec3::ZERO).unwrap();
//!     g.spawn("spinner", &1u64, Owner::Server).unwrap();
//! });
//! s.add_client(NetConfig::default(), "ann", None);
//! s.add_client(NetConfig::default(), "bob", None);
//! s.wait_for(3.0, "both to join", |s| s.all_joined()).unwrap();
//!
//! let ticket = s.clients[0].group.request_spawn("spinner", &2u64).unwrap();
//! s.wait_for(2.0, "bob to see ann's spinner", |s| s.clients[1].group.len() == 2).unwrap();
//! let mine = s.clients[0].group.spawned(ticket).unwrap();
//! let net = s.clients[0].group.get(mine).unwrap().net_id();
//! assert!(!net.is_provisional(), "the server's id");
//! assert!(s.clients[1].group.by_net(net).is_some(), "bob has it under the same id");
//! assert_eq!(s.clients[1].group.config().gravity, Vec3::ZERO, "bob's world floats too");
//! ```
//!
//! The server never trusts a client: give the kind a
//! [`validate`](lanyard::Controller::validate) hook for what a client may claim, and a
//! spawn judge ([`KindRegistry::judge_spawns`](lanyard::KindRegistry::judge_spawns)) for
//! what it may spawn. A client whose world lacks a kind is refused naming it; a section
//! that makes a controller panic disconnects its sender, and the server plays on.
//!
//! # 3. Write a replay test
//!
//! Record a peer's world, replay it headless and check it bit for bit; in decision mode the
//! recording peer's server paths run again on the recorded inputs, so a changed decision
//! is caught at its first tick:
//!
//! ```
//! # use lanyard::codec::{Section, SectionWriter};
//! # use lanyard::pose::{CORRECTION_TOLERANCE, PoseState};
//! # use lanyard::prelude::*;
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Serialize, Deserialize)]
//! # pub struct Spinner { rng: SeededRng, countdown: u32, spin: f32 }
//! # impl Controller for Spinner {
//! #     fn server_update(&mut self, me: EntityRef<'_>, _w: &WorldView<'_>, out: &mut SectionWriter<'_>) {
//! #         if self.countdown == 0 { self.countdown = 30; self.spin = self.rng.range_f32(-3.0, 3.0); }
//! #         self.countdown -= 1;
//! #         PoseState::write_with(me.body(), &self.spin, out);
//! #     }
//! #     fn client_update(&mut self, _me: &mut Entity, s: Option<Section<'_>>, ctx: &mut ClientContext<'_>) -> Result<(), Error> {
//! #         if let Some(s) = s {
//! #             self.spin = PoseState::take_then(&s, ctx, CORRECTION_TOLERANCE, |r| r.serde())?;
//! #         }
//! #         ctx.set_angvel(Vec3::new(0.0, self.spin, 0.0));
//! #         Ok(())
//! #     }
//! #     lanyard::serde_state!();
//! # }
//! # pub fn kinds() -> std::sync::Arc<KindRegistry> {
//! #     let mut r = KindRegistry::new();
//! #     let options = lanyard::KindOptions { client_spawnable: true, ..Default::default() };
//! #     r.register_with("spinner", options, |seed: &u64| Blueprint {
//! #         body: RigidBodyBuilder::dynamic().translation(Vec3::new(0.0, 0.5, 0.0)).build(),
//! #         colliders: vec![ColliderBuilder::cuboid(0.5, 0.5, 0.5).build()],
//! #         visual: Visual { shape: Shape::Cuboid { half_extents: [0.5; 3] }, color: [200; 4] },
//! #         controller: Box::new(Spinner { rng: SeededRng::new(*seed), countdown: 0, spin: 0.0 }),
//! #     }).unwrap();
//! #     std::sync::Arc::new(r)
//! # }
//! use lanyard::replay::Replay;
//!
//! let mut world = EntityGroup::new(kinds(), GroupConfig { gravity: Vec3::ZERO, ..GroupConfig::default() });
//! world.spawn("spinner", &7u64, Owner::Server).unwrap();
//! world.start_recording("an empty yard", "server").unwrap();
//! let mut file = world.take_recording().unwrap();
//! for _ in 0..120 { world.frame(); }
//! file.extend(world.stop_recording().unwrap());
//!
//! let mut replay = Replay::open(&file, kinds()).unwrap();
//! assert_eq!(replay.run_to(60).unwrap(), None);            // bit-exact to tick 60
//! assert!(replay.run_to(1_000).is_err(), "past the end is an error, not a pass");
//! assert_eq!(replay.verify(|_, _| {}).unwrap(), None);      // and to the end
//!
//! let mut decisions = Replay::open(&file, kinds()).unwrap();
//! decisions.rerun_decisions(true);
//! assert_eq!(decisions.verify(|_, _| {}).unwrap(), None);   // the same code decides the same
//! ```
//!
//! # 4. Bodies that never rest
//!
//! A body that is always in motion changes its section every broadcast. Both ends can
//! compute where it goes, so it need not be sent: a kind whose section starts with a pose
//! is predicted by default, through gravity, the physics step's substeps and damping. What
//! the kind does to its body on its own each tick (a wind, a lift, a pull toward a planet)
//! goes in its [`motion`](lanyard::Controller::motion), which every peer runs on the body
//! and both ends repeat to predict it; nothing is set at registration. The server then
//! sends nothing while the client's prediction stays within the kind's
//! [`Tolerance`](lanyard::predict::Tolerance) (`KindOptions::tolerance`, 2 mm by default),
//! and only the difference when it does not:
//!
//! ```
//! use lanyard::codec::{Section, SectionWriter};
//! use lanyard::pose::{CORRECTION_TOLERANCE, PoseState};
//! use lanyard::prelude::*;
//! use lanyard_net::{NetConfig, harness::Scenario};
//!
//! /// A balloon that a wind pushes east and a lift holds up against most of gravity.
//! struct Balloon {
//!     lift: f32,
//! }
//! impl Controller for Balloon {
//!     fn server_update(&mut self, me: EntityRef<'_>, _w: &WorldView<'_>, out: &mut SectionWriter<'_>) {
//!         PoseState::of(me.body()).write(out);
//!     }
//!     fn client_update(&mut self, _me: &mut Entity, s: Option<Section<'_>>, ctx: &mut ClientContext<'_>) -> Result<(), Error> {
//!         match s {
//!             Some(s) => PoseState::take(&s, ctx, CORRECTION_TOLERANCE),
//!             None => Ok(()),
//!         }
//!     }
//!     // Every tick, on every peer, and in every prediction of it.
//!     fn motion(&self, body: &mut Steer<'_>) {
//!         let push = Vec3::new(0.5, self.lift, 0.0) * body.dt();
//!         body.set_linvel(body.linvel() + push);
//!     }
//! }
//!
//! let mut r = KindRegistry::new();
//! r.register("balloon", |lift: &f32| Blueprint {
//!     body: RigidBodyBuilder::dynamic().linvel(Vec3::new(1.0, 0.0, 2.0)).build(),
//!     colliders: vec![ColliderBuilder::ball(0.3).build()],
//!     visual: Visual { shape: Shape::Ball { radius: 0.3 }, color: [200; 4] },
//!     controller: Box::new(Balloon { lift: *lift }),
//! }).unwrap();
//!
//! let config = NetConfig { rate: 30.0, ..NetConfig::default() };
//! let mut s = Scenario::with_registry(std::sync::Arc::new(r), |_| {}, config.clone(), None, 60.0, |g| {
//!     g.spawn("balloon", &9.0f32, Owner::Server).unwrap(); // under gravity's 9.81
//! });
//! s.add_client(config, "ann", None);
//! s.wait_for(3.0, "ann to join", |s| s.all_joined()).unwrap();
//! let ann = s.clients[0].net.client_id().unwrap();
//! let before = s.server.net.peer_stats(ann).unwrap().entries;
//! s.run_for(2.0);
//! // 60 broadcasts, and the balloon changed in every one of them; few went.
//! let sent = s.server.net.peer_stats(ann).unwrap().entries - before;
//! assert!(sent <= 10, "{sent} entries");
//! let balloon = s.server.group.iter().next().unwrap().net_id();
//! let off = (s.server.pos(balloon).unwrap() - s.clients[0].pos(balloon).unwrap()).length();
//! assert!(off < 0.01, "the client's balloon is {off} m from the server's");
//! ```
