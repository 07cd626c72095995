//! `lanyard-demo`: three example controller kinds that show Lanyard's API, used by the
//! tests, the benchmarks and the README (not part of the library a game links):
//!
//! * [`CRATE`]: a box that only carries its pose ([`PoseCarrier`]);
//! * [`BALL`]: a bouncing ball that also emits a `"sparks"` effect on hard impacts ([`Ball`]);
//! * [`MOVER`]: a player-like box driven by a seeded input stream, which a client may own
//!   and spawn ([`Mover`]).
//!
//! [`register`] adds all three to a registry; [`mixed_scene`] builds a pit full of them.

#![warn(missing_docs)]

use lanyard::codec::{Section, SectionWriter};
use lanyard::delta::PoseDelta;
use lanyard::pose::PoseState;
use lanyard::prelude::*;
use lanyard::{KindOptions, Legality, OnHostLeave, OnOwnerLeave};
use rapier3d::prelude::{Collider, RigidBody};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Kind name of [`PoseCarrier`] boxes.
pub const CRATE: &str = "demo.crate";
/// Kind name of [`Ball`]s.
pub const BALL: &str = "demo.ball";
/// Kind name of [`Mover`]s.
pub const MOVER: &str = "demo.mover";
/// Kind name of crates a client may take over by pushing them ([`KindOptions::hand_off`]):
/// [`PoseCarrier`] boxes like [`CRATE`]s, of the same [`CrateParams`].
pub const PUSHABLE: &str = "demo.pushable";

/// The fastest a client may say a pushed box moves (metres a second)...
pub const PUSHABLE_MAX_SPEED: f32 = 20.0;
/// ...and the furthest from where the server has it (metres).
pub const PUSHABLE_MAX_JUMP: f32 = 1.5;

/// How far a peer's body may drift before it is corrected (the framework's default).
pub use lanyard::pose::CORRECTION_TOLERANCE;

/// Spawn parameters of a [`CRATE`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrateParams {
    /// Where its centre starts.
    pub pos: [f32; 3],
    /// Half its size.
    pub half_extents: [f32; 3],
    /// Its colour.
    pub color: [u8; 4],
    /// Whether it may fall asleep when still (benchmarks keep it awake).
    pub can_sleep: bool,
}

impl CrateParams {
    /// A wooden box 0.9 m wide at `pos`, that may sleep.
    pub fn at(pos: [f32; 3]) -> Self {
        CrateParams {
            pos,
            half_extents: [0.45; 3],
            color: [200, 160, 90, 255],
            can_sleep: true,
        }
    }
}

/// Spawn parameters of a [`BALL`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BallParams {
    /// Where its centre starts.
    pub pos: [f32; 3],
    /// Its radius.
    pub radius: f32,
    /// How bouncy (0 to 1).
    pub restitution: f32,
    /// Its colour.
    pub color: [u8; 4],
}

impl BallParams {
    /// A white ball of `radius` at `pos`, with `restitution`.
    pub fn new(pos: [f32; 3], radius: f32, restitution: f32) -> Self {
        BallParams {
            pos,
            radius,
            restitution,
            color: [255; 4],
        }
    }
}

/// Spawn parameters of a [`MOVER`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MoverParams {
    /// Where its centre starts.
    pub pos: [f32; 3],
    /// Half its size.
    pub half_extents: [f32; 3],
    /// The seed of its input stream.
    pub seed: u64,
    /// Its top horizontal speed, m/s.
    pub speed: f32,
    /// Ticks between changes of direction.
    pub period: u32,
    /// Ticks after which it stops deciding to move (0: never stops).
    pub moves_for: u32,
}

impl MoverParams {
    /// A unit box at `pos` that wanders at 5 m/s with seed 1, turning every 10 ticks,
    /// for ever: change the fields a test cares about.
    pub fn at(pos: [f32; 3]) -> Self {
        MoverParams {
            pos,
            half_extents: [0.5; 3],
            seed: 1,
            speed: 5.0,
            period: 10,
            moves_for: 0,
        }
    }
}

/// A box that carries its pose: the authority writes it, everyone else is corrected to it
/// when they drift. Without a section it lets the physics carry it.
#[derive(Debug, Default)]
pub struct PoseCarrier;

impl Controller for PoseCarrier {
    fn server_update(
        &mut self,
        me: EntityRef<'_>,
        _world: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    ) {
        PoseState::of(me.body()).write(out);
    }

    fn client_update(
        &mut self,
        _me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        match &section {
            Some(s) => PoseState::take(s, ctx, CORRECTION_TOLERANCE),
            None => Ok(()),
        }
    }

    fn validate(
        &self,
        me: EntityRef<'_>,
        section: Section<'_>,
        _world: &WorldView<'_>,
    ) -> Legality {
        // Judged only when a client holds it (a pushed box): no faster, and no further from
        // the server's copy, than a push explains.
        let mut r = section.reader();
        match PoseState::read(&mut r) {
            Ok(s) if s.plausible(me.body(), PUSHABLE_MAX_SPEED, PUSHABLE_MAX_JUMP) => {
                Legality::Legal
            }
            _ => Legality::Illegal,
        }
    }
}

/// A ball: carries its pose through a [`PoseCarrier`], and emits `"sparks"` where its velocity
/// changes sharply (a hard bounce). The last velocity it saw is its own state.
#[derive(Debug, Default)]
pub struct Ball {
    last_linvel: Vec3,
}

impl Ball {
    /// The velocity change (m/s within one tick) that makes sparks.
    pub const SPARK_THRESHOLD: f32 = 3.0;
}

impl Controller for Ball {
    // A ball is a pose carrier that also makes sparks: it delegates the pose to one.
    fn server_update(
        &mut self,
        me: EntityRef<'_>,
        world: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    ) {
        PoseCarrier.server_update(me, world, out);
    }

    fn client_update(
        &mut self,
        me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        PoseCarrier.client_update(me, section, ctx)?;
        let v = ctx.body().linvel();
        let jolt = (v - self.last_linvel).length();
        if jolt > Self::SPARK_THRESHOLD {
            let at = ctx.body().translation();
            ctx.effect("sparks", at, jolt);
        }
        self.last_linvel = v;
        Ok(())
    }

    fn save_state(&self, out: &mut Vec<u8>) {
        SectionWriter::new(out).vec3(self.last_linvel);
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let mut r = lanyard::codec::SectionReader::new(bytes);
        self.last_linvel = r.vec3()?;
        Ok(r.finish()?)
    }
}

/// A box driven by a seeded input stream, like a player. Its server path draws a new
/// horizontal target velocity every `period` ticks and sends it with the body's pose; its
/// client path drives the body at the last target it heard of (so without a section it keeps
/// going the way it was going) and is corrected to the authority's pose when it drifts.
///
/// Its validation hook refuses targets faster than twice its top speed: a client that owns
/// a mover cannot make it fly.
#[derive(Debug)]
pub struct Mover {
    rng: SeededRng,
    speed: f32,
    period: u32,
    moves_for: u32,
    moved: u32,
    countdown: u32,
    decided: Vec3,
    target: Vec3,
}

impl Mover {
    /// A mover with its own input stream that never stops.
    pub fn new(seed: u64, speed: f32, period: u32) -> Self {
        Self::from_params(&MoverParams {
            pos: [0.0; 3],
            half_extents: [0.5; 3],
            seed,
            speed,
            period,
            moves_for: 0,
        })
    }

    /// A mover as its spawn parameters describe it.
    pub fn from_params(p: &MoverParams) -> Self {
        Mover {
            rng: SeededRng::new(p.seed),
            speed: p.speed,
            period: p.period.max(1),
            moves_for: p.moves_for,
            moved: 0,
            countdown: 0,
            decided: Vec3::ZERO,
            target: Vec3::ZERO,
        }
    }

    /// The target velocity its client path is driving at.
    pub fn target(&self) -> Vec3 {
        self.target
    }

    /// The fastest target the validation hook accepts.
    pub fn speed_limit(&self) -> f32 {
        2.0 * self.speed.max(0.5)
    }

    fn read(&self, s: Section<'_>) -> Result<(Vec3, PoseState), Error> {
        let mut r = s.reader();
        let t = r.vec3()?;
        let pose = PoseState::read(&mut r)?;
        r.finish()?;
        if t.length() > self.speed_limit() {
            return Err(Error::Codec(lanyard::CodecError::InvalidValue(
                "mover target too fast",
            )));
        }
        Ok((t, pose))
    }
}

impl Controller for Mover {
    fn server_update(
        &mut self,
        me: EntityRef<'_>,
        _world: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    ) {
        let stopped = self.moves_for > 0 && self.moved >= self.moves_for;
        if stopped {
            self.decided = Vec3::ZERO;
        } else {
            self.moved += 1;
            if self.countdown == 0 {
                self.countdown = self.period;
                let s = self.speed;
                self.decided = Vec3::new(self.rng.range_f32(-s, s), 0.0, self.rng.range_f32(-s, s));
            }
            self.countdown -= 1;
        }
        out.vec3(self.decided);
        PoseState::of(me.body()).write(out);
    }

    fn client_update(
        &mut self,
        _me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        if let Some(s) = section {
            let (t, pose) = self.read(s)?;
            pose.correct(ctx, CORRECTION_TOLERANCE);
            self.target = t;
        }
        if self.target != Vec3::ZERO {
            let v = ctx.body().linvel();
            ctx.set_linvel(Vec3::new(self.target.x, v.y, self.target.z));
        }
        Ok(())
    }

    fn validate(
        &self,
        _me: EntityRef<'_>,
        section: Section<'_>,
        _world: &WorldView<'_>,
    ) -> Legality {
        match self.read(section) {
            Ok(_) => Legality::Legal,
            Err(_) => Legality::Illegal,
        }
    }

    fn save_state(&self, out: &mut Vec<u8>) {
        let mut w = SectionWriter::new(out);
        w.u64(self.rng.state());
        w.u32(self.moved);
        w.u32(self.countdown);
        w.vec3(self.decided);
        w.vec3(self.target);
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let mut r = lanyard::codec::SectionReader::new(bytes);
        self.rng = SeededRng::from_state(r.u64()?);
        self.moved = r.u32()?;
        self.countdown = r.u32()?;
        self.decided = r.vec3()?;
        self.target = r.vec3()?;
        Ok(r.finish()?)
    }
}

/// A square pit for demo scenes: a floor whose top is at y = 0, `half_size` metres from
/// the centre to each of its four 2 m walls. Add the colliders as scenery.
pub fn pit(half_size: f32) -> Vec<Collider> {
    let h = half_size;
    let mut v = vec![
        ColliderBuilder::cuboid(h, 0.5, h)
            .translation(Vec3::new(0.0, -0.5, 0.0))
            .build(),
    ];
    for (x, z, hx, hz) in [
        (h + 0.5, 0.0, 0.5, h + 1.0),
        (-h - 0.5, 0.0, 0.5, h + 1.0),
        (0.0, h + 0.5, h + 1.0, 0.5),
        (0.0, -h - 0.5, h + 1.0, 0.5),
    ] {
        v.push(
            ColliderBuilder::cuboid(hx, 1.0, hz)
                .translation(Vec3::new(x, 1.0, z))
                .build(),
        );
    }
    v
}

/// A lively scene: `n` bodies in a 40 m [`pit`], a mix of crates, balls and movers (every
/// tenth body is a mover whose input stream is seeded from `seed` and its index), dropped
/// from a loose grid so they pile up and collide.
pub fn mixed_scene(registry: Arc<KindRegistry>, n: usize, seed: u64) -> Result<EntityGroup, Error> {
    let mut g = EntityGroup::new(registry, GroupConfig::default());
    for c in pit(20.0) {
        g.add_scenery(c);
    }
    for i in 0..n {
        let (gx, gy, gz) = ((i % 10) as f32, (i / 100) as f32, ((i / 10) % 10) as f32);
        let pos = [gx * 3.0 - 13.5 + 0.1 * gy, 1.0 + gy * 1.6, gz * 3.0 - 13.5];
        let r = match i % 10 {
            0 => g.spawn(
                MOVER,
                &MoverParams {
                    pos,
                    half_extents: [0.5, 0.5, 0.5],
                    seed: seed.wrapping_mul(1_000_003).wrapping_add(i as u64),
                    speed: 4.0,
                    period: 45,
                    moves_for: 0,
                },
                Owner::Server,
            ),
            1 | 4 | 7 => g.spawn(
                BALL,
                &BallParams {
                    pos,
                    radius: 0.4,
                    restitution: 0.5,
                    color: [200, 200, 60, 255],
                },
                Owner::Server,
            ),
            _ => g.spawn(
                CRATE,
                &CrateParams {
                    pos,
                    half_extents: [0.45, 0.45, 0.45],
                    color: [150, 100, 60, 255],
                    can_sleep: true,
                },
                Owner::Server,
            ),
        };
        r?;
    }
    Ok(g)
}

/// The demo kinds, registered.
pub fn registry() -> Arc<KindRegistry> {
    let mut r = KindRegistry::new();
    register(&mut r).expect("the demo kinds register once");
    Arc::new(r)
}

/// A world to build sessions in: kinds, what a server spawns, what a client asks for (the
/// shape of `lanyard_net::fuzzing::World`, a crate this one does not depend on).
pub type SessionWorld = (
    Arc<KindRegistry>,
    fn(&mut EntityGroup),
    fn(&mut EntityGroup),
);

/// The world `lanyard_net::fuzzing` builds its sessions in: the demo kinds, three crates in
/// a row on the server, and a mover the client asks for.
pub fn fuzz_world() -> SessionWorld {
    fn crates(group: &mut EntityGroup) {
        for i in 0..3 {
            let p = CrateParams {
                pos: [i as f32, 0.5, 0.0],
                half_extents: [0.4; 3],
                color: [0; 4],
                can_sleep: true,
            };
            group
                .spawn(CRATE, &p, Owner::Server)
                .expect("a crate spawns");
        }
    }
    fn mover(group: &mut EntityGroup) {
        group
            .request_spawn(MOVER, &MoverParams::at([0.0, 0.6, 3.0]))
            .expect("a mover is a registered kind");
    }
    (registry(), crates, mover)
}

/// A recording of [`mixed_scene`] (six bodies) for `ticks` ticks: a seed for fuzzing
/// recordings.
pub fn mixed_recording(ticks: u32) -> Vec<u8> {
    let mut g = mixed_scene(registry(), 6, 3).expect("the demo scene spawns");
    g.start_recording("fuzz seed", "lanyard-demo")
        .expect("recording starts");
    for _ in 0..ticks {
        g.frame();
    }
    g.stop_recording().expect("recording stops")
}

fn dynamic_at(pos: [f32; 3]) -> RigidBodyBuilder {
    RigidBodyBuilder::dynamic().translation(Vec3::from_array(pos))
}

/// Registers [`CRATE`], [`PUSHABLE`], [`BALL`], [`MOVER`] and [`asteroids::ASTEROID`].
pub fn register(registry: &mut KindRegistry) -> Result<(), Error> {
    let crate_box = |p: &CrateParams| {
        let [x, y, z] = p.half_extents;
        Blueprint {
            body: dynamic_at(p.pos).can_sleep(p.can_sleep).build(),
            colliders: vec![ColliderBuilder::cuboid(x, y, z).build()],
            visual: Visual {
                shape: Shape::Cuboid {
                    half_extents: p.half_extents,
                },
                color: p.color,
            },
            controller: Box::new(PoseCarrier),
        }
    };
    registry.register(CRATE, crate_box)?;
    let pushable = KindOptions {
        hand_off: true,
        ..KindOptions::default()
    };
    registry.register_with(PUSHABLE, pushable, crate_box)?;
    let thrown = KindOptions {
        on_owner_leave: OnOwnerLeave::HandToServer,
        client_spawnable: true,
        ..KindOptions::default()
    };
    registry.register_with(BALL, thrown, |p: &BallParams| Blueprint {
        body: dynamic_at(p.pos).build(),
        colliders: vec![
            ColliderBuilder::ball(p.radius)
                .restitution(p.restitution)
                .build(),
        ],
        visual: Visual {
            shape: Shape::Ball { radius: p.radius },
            color: p.color,
        },
        controller: Box::new(Ball::default()),
    })?;
    let client_owned = KindOptions {
        on_owner_leave: OnOwnerLeave::Despawn,
        client_spawnable: true,
        // A server-owned mover is the host's own: it goes with the host.
        on_host_leave: OnHostLeave::Despawn,
        ..KindOptions::default()
    };
    registry.register_with(MOVER, client_owned, |p: &MoverParams| {
        let [x, y, z] = p.half_extents;
        let body: RigidBody = dynamic_at(p.pos).lock_rotations().build();
        let collider: Collider = ColliderBuilder::cuboid(x, y, z).friction(0.2).build();
        Blueprint {
            body,
            colliders: vec![collider],
            visual: Visual {
                shape: Shape::Cuboid {
                    half_extents: p.half_extents,
                },
                color: [230, 120, 40, 255],
            },
            controller: Box::new(Mover::from_params(p)),
        }
    })?;
    // Every section starts with the body's pose.
    for kind in [CRATE, PUSHABLE, BALL, MOVER] {
        registry.set_delta_codec(kind, PoseDelta)?;
    }
    asteroids::register(registry)
}

pub mod drones;

/// Bodies that never rest: asteroids around a static planetoid, in a world with no gravity,
/// each pulled toward the planetoid's centre by its own controller. The scene of the
/// asteroid benchmark (`cargo bench -p lanyard-tests --bench asteroids`).
pub mod asteroids {
    use super::dynamic_at;
    use lanyard::KindOptions;
    use lanyard::codec::{Section, SectionWriter};
    use lanyard::pose::{CORRECTION_TOLERANCE, PoseState};
    use lanyard::predict::{Tolerance, pulled_toward_origin};
    use lanyard::prelude::*;
    use rapier3d::prelude::Collider;
    use serde::{Deserialize, Serialize};

    /// The kind name of an [`Asteroid`].
    pub const ASTEROID: &str = "demo.asteroid";

    /// The planetoid's radius, metres.
    pub const PLANETOID_RADIUS: f32 = 10.0;

    /// The strength of the planetoid's pull (its mass times the gravitational constant, m³/s²):
    /// a circular orbit 25 m out takes 8 m/s.
    pub const PULL: f32 = 1600.0;

    /// Spawn parameters of an [`ASTEROID`].
    #[derive(Debug, Clone, Serialize, Deserialize)]
    pub struct AsteroidParams {
        /// Where its centre starts.
        pub pos: [f32; 3],
        /// Its starting velocity.
        pub vel: [f32; 3],
        /// Its starting spin.
        pub spin: [f32; 3],
        /// Its radius.
        pub radius: f32,
    }

    /// The precision the published scene asks, as one would tune it: 1 cm and 1 mrad
    /// drawn, so 5 mm and 1 mrad predicted, with half the centimetre left for drawing
    /// ([`register_tuned`]).
    pub const TOLERANCE: Tolerance = Tolerance {
        pos: 0.005,
        rot: 0.001,
        linvel: 0.05,
        angvel: 0.05,
    };

    /// The planetoid's pull on an asteroid for one tick: its [motion](Controller::motion),
    /// which every peer runs on its body and both ends of a session repeat to predict it.
    pub fn pull(body: &mut Steer<'_>) {
        body.set_linvel(pulled_toward_origin(
            body.pos(),
            body.linvel(),
            PULL,
            body.dt(),
        ));
    }

    /// An asteroid, written the plain way: the authority writes its pose, everyone else is
    /// corrected to it when they drift, and its motion is the planetoid's pull. Nothing is
    /// set at registration: both ends predict it, since its section starts with a pose.
    #[derive(Debug, Default)]
    pub struct Asteroid;

    impl Controller for Asteroid {
        fn server_update(
            &mut self,
            me: EntityRef<'_>,
            _world: &WorldView<'_>,
            out: &mut SectionWriter<'_>,
        ) {
            PoseState::of(me.body()).write(out);
        }

        fn client_update(
            &mut self,
            _me: &mut Entity,
            section: Option<Section<'_>>,
            ctx: &mut ClientContext<'_>,
        ) -> Result<(), Error> {
            match section {
                Some(s) => PoseState::take(&s, ctx, CORRECTION_TOLERANCE),
                None => Ok(()),
            }
        }

        fn motion(&self, body: &mut Steer<'_>) {
            pull(body);
        }
    }

    /// The planetoid: scenery, which every peer adds to its own group.
    pub fn planetoid() -> Collider {
        ColliderBuilder::ball(PLANETOID_RADIUS)
            .restitution(1.0)
            .friction(0.0)
            .build()
    }

    /// `n` asteroids in a shell 16 to 40 m from the planetoid's centre, each on a roughly
    /// circular orbit in a plane of its own (so they cross, and now and then collide), drawn
    /// from `seed`.
    pub fn field(n: usize, seed: u64) -> Vec<AsteroidParams> {
        let mut rng = SeededRng::new(seed);
        (0..n)
            .map(|_| {
                let dir = loop {
                    let v = Vec3::new(
                        rng.range_f32(-1.0, 1.0),
                        rng.range_f32(-1.0, 1.0),
                        rng.range_f32(-1.0, 1.0),
                    );
                    if (0.1..=1.0).contains(&v.length_squared()) {
                        break v.normalize();
                    }
                };
                let r = rng.range_f32(16.0, 40.0);
                let pos = dir * r;
                // A direction across the radius, for the orbit.
                let side = dir.cross(Vec3::new(
                    rng.range_f32(-1.0, 1.0),
                    rng.range_f32(-1.0, 1.0),
                    rng.range_f32(-1.0, 1.0),
                ));
                let tangent = side.normalize_or(dir.any_orthonormal_vector());
                let speed = (PULL / r).sqrt() * rng.range_f32(0.85, 1.1);
                let spin = Vec3::new(
                    rng.range_f32(-1.0, 1.0),
                    rng.range_f32(-1.0, 1.0),
                    rng.range_f32(-1.0, 1.0),
                );
                AsteroidParams {
                    pos: pos.to_array(),
                    vel: (tangent * speed).to_array(),
                    spin: spin.to_array(),
                    radius: rng.range_f32(0.4, 1.2),
                }
            })
            .collect()
    }

    /// Registers [`ASTEROID`], with nothing set but its factory: its server path only reads
    /// its body, so recordings keep none of its sections (it decides alone, the default),
    /// and its section starts with a pose, so both ends predict it.
    pub fn register(registry: &mut KindRegistry) -> Result<(), Error> {
        registry.register(ASTEROID, blueprint)?;
        Ok(())
    }

    /// Registers [`ASTEROID`] as one would tune it for the published scene: with its
    /// precision, [`TOLERANCE`], and nothing else.
    pub fn register_tuned(registry: &mut KindRegistry) -> Result<(), Error> {
        let tuned = KindOptions {
            tolerance: TOLERANCE,
            ..KindOptions::default()
        };
        registry.register_with(ASTEROID, tuned, blueprint)?;
        Ok(())
    }

    /// An asteroid's body, collider and looks.
    fn blueprint(p: &AsteroidParams) -> Blueprint {
        Blueprint {
            body: dynamic_at(p.pos)
                .linvel(Vec3::from_array(p.vel))
                .angvel(Vec3::from_array(p.spin))
                .can_sleep(false)
                .build(),
            colliders: vec![
                ColliderBuilder::ball(p.radius)
                    .restitution(1.0)
                    .friction(0.0)
                    .build(),
            ],
            visual: Visual {
                shape: Shape::Ball { radius: p.radius },
                color: [150, 140, 130, 255],
            },
            controller: Box::new(Asteroid),
        }
    }
}
