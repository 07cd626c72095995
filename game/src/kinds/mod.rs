//! Tumbleyard's controller kinds: `crate`, `player` and `grenade`.
//!
//! Everything that happens to an entity goes through its controller: the owner's game code
//! sets a player's input (move, jump, throw, a push from an explosion, a respawn), the
//! player's server path packs it into the section, and its client path applies it on every
//! peer. So a recorded session replays exactly, and the server can validate what a client
//! claims.

use crate::aim;
use crate::scene::Scene;
use lanyard::codec::{Section, SectionReader, SectionWriter};
use lanyard::pose::PoseState;
use lanyard::prelude::*;
use lanyard::{KindId, KindOptions, Legality, OnHostLeave, OnOwnerLeave, SpawnClaim};
use serde::{Deserialize, Serialize};

mod player;
pub use player::{Player, PlayerInput, PlayerParams, SILENT_WALK_TICKS};

/// Kind name of crates.
pub const CRATE: &str = "crate";
/// Kind name of players.
pub const PLAYER: &str = "player";
/// Kind name of grenades.
pub const GRENADE: &str = "grenade";
/// A grenade's radius, m.
pub const GRENADE_RADIUS: f32 = 0.18;

/// How far a peer's body may drift from its authority's before it is corrected (2 mm).
pub use lanyard::pose::CORRECTION_TOLERANCE as CORRECTION;

/// How far from the server's copy a player's owner may claim to be (a generous bound on
/// what latency and a blast can open up; a teleport is far beyond it), metres.
pub const MAX_DRIFT: f32 = 3.0;

/// The fastest a body in the yard can move (what a blast can give), m/s.
pub const MAX_SPEED: f32 = 60.0;

/// Spawn parameters of a crate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrateParams {
    /// Its centre.
    pub pos: [f32; 3],
    /// Its edge length.
    pub size: f32,
    /// Its colour.
    pub color: [u8; 4],
}

/// A crate: carries its pose; takes pushes from explosions through its section. (Who last
/// blew it about, for the score, is the server's rules' to remember: game code that
/// reached into a controller would have its sections recorded.)
#[derive(Debug, Default)]
pub struct Crate {
    push: Option<Vec3>,
}

impl Crate {
    /// Queues a push (an impulse per kg) for the next server path to send.
    pub fn push(&mut self, impulse: Vec3) {
        self.push = Some(self.push.unwrap_or(Vec3::ZERO) + impulse);
    }

    /// A push as an input for [`EntityGroup::send_input`], which records it (so a replay,
    /// which runs the crate's server path again, pushes it too).
    pub fn push_input(impulse: Vec3) -> Vec<u8> {
        input_bytes(&impulse.to_array())
    }
}

/// An input's bytes (bincode of plain values: floats exactly).
fn input_bytes<T: Serialize>(value: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(value, bincode::config::standard()).unwrap_or_default()
}

/// An input read back, all of it.
fn read_input<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    match bincode::serde::decode_from_slice(bytes, bincode::config::standard()) {
        Ok((v, used)) if used == bytes.len() => Ok(v),
        Ok((_, used)) => Err(Error::Codec(lanyard::CodecError::TrailingBytes(
            bytes.len() - used,
        ))),
        Err(_) => Err(Error::Codec(lanyard::CodecError::InvalidValue(
            "an input that does not read",
        ))),
    }
}

impl Controller for Crate {
    fn take_input(&mut self, input: &[u8]) -> Result<(), Error> {
        let push: [f32; 3] = read_input(input)?;
        if !push.iter().all(|x| x.is_finite()) {
            return Err(Error::Codec(lanyard::CodecError::InvalidValue(
                "a push that is not finite",
            )));
        }
        self.push(Vec3::from_array(push));
        Ok(())
    }

    fn server_update(
        &mut self,
        me: EntityRef<'_>,
        _world: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    ) {
        PoseState::of(me.body()).write(out);
        match self.push.take() {
            Some(p) => {
                out.u8(F_PUSH);
                out.vec3_bounded(p, 64.0);
            }
            None => out.u8(0),
        }
    }

    fn client_update(
        &mut self,
        _me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        if let Some(s) = section {
            let push = PoseState::take_then(&s, ctx, CORRECTION, read_push)?;
            if let Some(p) = push {
                let m = ctx.body().mass();
                ctx.apply_impulse(p * m);
            }
        }
        Ok(())
    }

    fn validate(
        &self,
        me: EntityRef<'_>,
        section: Section<'_>,
        _world: &WorldView<'_>,
    ) -> Legality {
        // Judged only when a player holds it (it pushed it: hand-off): a readable section,
        // a speed a blast could give, a pose near the server's copy (no teleports).
        match read_crate(section) {
            Ok((pose, _)) if pose.plausible(me.body(), MAX_SPEED, MAX_DRIFT) => Legality::Legal,
            _ => Legality::Illegal,
        }
    }
}

/// A crate's section: its pose, and the push its server path passed on, if any.
fn read_crate(section: Section<'_>) -> Result<(PoseState, Option<Vec3>), CodecError> {
    section.parse(|r| Ok((PoseState::read(r)?, read_push(r)?)))
}

/// What follows the pose in a crate's section: the push, if any.
fn read_push(r: &mut SectionReader<'_>) -> Result<Option<Vec3>, CodecError> {
    match r.u8()? {
        0 => Ok(None),
        F_PUSH => Ok(Some(r.vec3_bounded(64.0)?)),
        _ => Err(CodecError::InvalidValue("crate flags")),
    }
}

/// The flags of a player's section (a crate's says a push with the same bit).
const F_JUMP: u8 = 1;
const F_THROW: u8 = 2;
const F_PUSH: u8 = 4;

/// Spawn parameters of a grenade.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GrenadeParams {
    /// Where it leaves the hand.
    pub pos: [f32; 3],
    /// Its launch velocity.
    pub vel: [f32; 3],
    /// Ticks until it explodes.
    pub fuse_ticks: u32,
    /// Who threw it.
    pub thrower: Owner,
}

/// A grenade: carries its pose and fuse. The server blows it up when the fuse runs out.
#[derive(Debug)]
pub struct Grenade {
    fuse: u32,
    /// Who threw it.
    pub thrower: Owner,
}

impl Grenade {
    /// Ticks until it explodes, as this peer counts them.
    pub fn fuse(&self) -> u32 {
        self.fuse
    }
}

impl Controller for Grenade {
    fn server_update(
        &mut self,
        me: EntityRef<'_>,
        _world: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    ) {
        PoseState::of(me.body()).write(out);
        out.u16(self.fuse.min(u32::from(u16::MAX)) as u16);
    }

    fn client_update(
        &mut self,
        _me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        if let Some(s) = section {
            let fuse = PoseState::take_then(&s, ctx, CORRECTION, |r| Ok(u32::from(r.u16()?)))?;
            // A fuse only ever burns down.
            self.fuse = self.fuse.min(fuse);
        }
        self.fuse = self.fuse.saturating_sub(1);
        Ok(())
    }

    fn save_state(&self, out: &mut Vec<u8>) {
        SectionWriter::new(out).u32(self.fuse);
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let mut r = SectionReader::new(bytes);
        self.fuse = r.u32()?;
        Ok(r.finish()?)
    }
}

/// A registry with Tumbleyard's kinds.
pub fn registry() -> KindRegistry {
    let mut r = KindRegistry::new();
    register(&mut r).expect("Tumbleyard's kinds have distinct names");
    r
}

/// The colour of the player client `c` plays, if `group` holds it: what the window tints
/// the bodies that client holds (hand-off) with, so that they show whose they are.
pub fn player_color_of(group: &EntityGroup, c: ClientId) -> Option<[u8; 4]> {
    let player = KindId::of_name(PLAYER);
    group
        .iter()
        .find(|e| e.kind() == player && e.owner() == Owner::Client(c))
        .map(|e| e.visual.color)
}

/// A registry with Tumbleyard's kinds whose client spawns a server judges by `scene`: a
/// client's player must be built from the scene's tuning, under the client's own name, at
/// its own spawn point, and be its only one; a grenade must be thrown by the client that
/// asks, from near its player, with the scene's fuse, no faster than the tuning allows.
/// Crates allow hand-off if the arena says so ([`Scene::hand_off`]).
pub fn registry_for(scene: &Scene) -> KindRegistry {
    let mut r = registry();
    judge_spawns(&mut r, scene).expect("Tumbleyard's kinds are registered");
    r.set_hand_off(CRATE, scene.hand_off)
        .expect("Tumbleyard's kinds are registered");
    r
}

/// The registry a recording of Tumbleyard replays with: [`registry_for`] its arena, which
/// the recording's header carries (so an arena's `hand_off` replays as it was recorded),
/// or [`registry`] if the header names no arena this build reads.
pub fn registry_for_recording(header: &lanyard::record::RecordingHeader) -> KindRegistry {
    Scene::parse(&header.scene).map_or_else(|_| registry(), |scene| registry_for(&scene))
}

/// A replay of a recording of Tumbleyard, read once, with [`registry_for_recording`].
pub fn open_replay(bytes: &[u8]) -> Result<lanyard::replay::Replay, Error> {
    let recording = lanyard::record::Recording::from_bytes(bytes)?;
    let registry = std::sync::Arc::new(registry_for_recording(&recording.header));
    lanyard::replay::Replay::from_recording(recording, registry)
}

/// The thrower's player as the server has it.
fn player_of<'w>(claim: &SpawnClaim<'w>) -> Option<EntityRef<'w>> {
    let player = KindId::of_name(PLAYER);
    claim
        .world
        .iter()
        .find(|e| e.kind() == player && e.owner() == Owner::Client(claim.by))
}

/// Sets the spawn judges of `player` and `grenade` (see [`registry_for`]).
pub fn judge_spawns(r: &mut KindRegistry, scene: &Scene) -> Result<(), Error> {
    let legal = |ok: bool| {
        if ok {
            Legality::Legal
        } else {
            Legality::Illegal
        }
    };
    let s = scene.clone();
    r.judge_spawns(PLAYER, move |p: &PlayerParams, claim: &SpawnClaim<'_>| {
        let home = Vec3::from_array(s.spawn_point(usize::from(claim.by.0)));
        legal(
            p.tuning == s.tuning
                && p.name == claim.name
                && Vec3::from_array(p.pos).distance(home) < 0.01
                && Vec3::from_array(claim.state.pos).distance(home) < 0.5
                && player_of(claim).is_none(),
        )
    })?;
    let t = scene.tuning.clone();
    r.judge_spawns(GRENADE, move |g: &GrenadeParams, claim: &SpawnClaim<'_>| {
        let Some(thrower) = player_of(claim) else {
            return Legality::Illegal;
        };
        let hand = thrower.body().translation() + Vec3::Y * aim::HAND_HEIGHT;
        // What the player's own throw gives at most: the full throw speed, the lift, and a
        // share of the player's own velocity (taken generously: the server's copy lags).
        let fastest = t.throw_speed
            + aim::THROW_LIFT
            + aim::CARRY * (thrower.body().linvel().length() + t.move_speed)
            + 1.0;
        let fuse = (t.fuse / claim.world.dt()).ceil() as u32;
        let vel = Vec3::from_array(g.vel);
        legal(
            g.thrower == Owner::Client(claim.by)
                && g.fuse_ticks == fuse
                && vel.length() <= fastest
                && Vec3::from_array(g.pos).distance(hand) < MAX_DRIFT
                && Vec3::from_array(claim.state.pos).distance(Vec3::from_array(g.pos)) < 0.5
                && Vec3::from_array(claim.state.linvel).distance(vel) < 1.0,
        )
    })?;
    Ok(())
}

/// A crate's body, collider and look.
fn crate_blueprint(p: &CrateParams) -> Blueprint {
    let h = p.size / 2.0;
    Blueprint {
        body: RigidBodyBuilder::dynamic()
            .translation(Vec3::from_array(p.pos))
            .build(),
        colliders: vec![
            ColliderBuilder::cuboid(h, h, h)
                .density(0.6)
                .friction(0.7)
                .build(),
        ],
        visual: Visual {
            shape: Shape::Cuboid {
                half_extents: [h; 3],
            },
            color: p.color,
        },
        controller: Box::new(Crate::default()),
    }
}

/// A grenade's body (fast, so with continuous collision detection), collider and look.
fn grenade_blueprint(p: &GrenadeParams) -> Blueprint {
    Blueprint {
        body: RigidBodyBuilder::dynamic()
            .translation(Vec3::from_array(p.pos))
            .linvel(Vec3::from_array(p.vel))
            .ccd_enabled(true)
            .build(),
        colliders: vec![
            ColliderBuilder::ball(GRENADE_RADIUS)
                .restitution(0.4)
                .density(3.0)
                .build(),
        ],
        visual: Visual {
            shape: Shape::Ball {
                radius: GRENADE_RADIUS,
            },
            color: [40, 50, 40, 255],
        },
        controller: Box::new(Grenade {
            fuse: p.fuse_ticks,
            thrower: p.thrower,
        }),
    }
}

/// Registers `crate`, `player` and `grenade`.
pub fn register(r: &mut KindRegistry) -> Result<(), Error> {
    // Nothing set: a crate's server path only reads its body and the pushes handed to it
    // (recorded inputs), so a recording keeps none of its sections; its section starts with
    // its pose, so both ends predict it (a crate in flight after a blast costs nothing
    // until it lands). Hand-off (a player who walks into a crate takes it over while it
    // moves) is the arena's to turn on (`Scene::hand_off`, read by `registry_for`; the Yard
    // does).
    r.register(CRATE, crate_blueprint)?;
    let player_options = KindOptions {
        on_owner_leave: OnOwnerLeave::Despawn,
        // The host's player goes with the host when another player takes the game over.
        on_host_leave: OnHostLeave::Despawn,
        client_spawnable: true,
        // Other people watch a player: its changes go first when a budget is tight.
        priority: 8.0,
        // 1: its saved state ends with how long its copy has heard nothing; 2: and the last
        // section it took as news, and where that put it.
        state_version: 2,
        ..KindOptions::default()
    };
    r.register_with(PLAYER, player_options, player::blueprint)?;
    // A recording from before counted no silence.
    r.migrate_state(PLAYER, 0, |old| Ok([old, &[0]].concat()))?;
    // Nor the last news and where a silent copy holds: it heard nothing yet.
    r.migrate_state(PLAYER, 1, |old| Ok([old, &[0, 0]].concat()))?;
    let thrown = KindOptions {
        on_owner_leave: OnOwnerLeave::HandToServer,
        // A grenade the old host threw would score for the new one: it goes.
        on_host_leave: OnHostLeave::Despawn,
        client_spawnable: true,
        ..KindOptions::default()
    };
    r.register_with(GRENADE, thrown, grenade_blueprint)?;
    Ok(())
}
