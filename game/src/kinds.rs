//! Tumbleyard's controller kinds: `crate`, `player` and `grenade`.
//!
//! Everything that happens to an entity goes through its controller: the owner's game code
//! sets a player's input (move, jump, throw, a push from an explosion, a respawn), the
//! player's server path packs it into the section, and its client path applies it on every
//! peer. So a recorded session replays exactly, and the server can validate what a client
//! claims.

use crate::aim;
use crate::scene::{Scene, Tuning};
use lanyard::codec::{Section, SectionReader, SectionWriter};
use lanyard::pose::PoseState;
use lanyard::prelude::*;
use lanyard::{KindId, KindOptions, Legality, OnHostLeave, OnOwnerLeave, SpawnClaim};
use serde::{Deserialize, Serialize};

/// Kind name of crates.
pub const CRATE: &str = "crate";
/// Kind name of players.
pub const PLAYER: &str = "player";
/// Kind name of grenades.
pub const GRENADE: &str = "grenade";

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

/// Spawn parameters of a player.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlayerParams {
    /// The player's name (shown above them, and in the scores).
    pub name: String,
    /// Where they appear.
    pub pos: [f32; 3],
    /// Their colour.
    pub color: [u8; 4],
    /// Gameplay numbers (every peer builds the player with the numbers of the scene the
    /// server uses).
    pub tuning: Tuning,
}

/// What the owner of a player wants it to do this frame.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PlayerInput {
    /// Walking direction on the ground, x and z, each in -1..=1.
    pub walk: [f32; 2],
    /// Jump (if on the ground).
    pub jump: bool,
    /// Throw a grenade (if the cooldown allows): the direction on the ground is where to,
    /// the length (0 to 1) the share of the full throw speed. [`crate::aim::aim`] gives
    /// the throw that lands on a point.
    pub throw: Option<Vec3>,
    /// A push to take (an explosion's impulse, per kg).
    pub push: Option<Vec3>,
    /// Reappear at its spawn point (after a fall).
    pub respawn: bool,
}

impl PlayerInput {
    /// The input as bytes for [`EntityGroup::send_input`], which records it (so a replay,
    /// which runs the player's server path again, walks, jumps and throws alike).
    pub fn to_input(&self) -> Vec<u8> {
        input_bytes(&(
            self.walk,
            self.jump,
            self.throw.map(|v| v.to_array()),
            self.push.map(|v| v.to_array()),
            self.respawn,
        ))
    }

    /// Reads [`to_input`](Self::to_input)'s bytes.
    pub fn from_input(bytes: &[u8]) -> Result<Self, Error> {
        type Wire = ([f32; 2], bool, Option<[f32; 3]>, Option<[f32; 3]>, bool);
        let (walk, jump, throw, push, respawn): Wire = read_input(bytes)?;
        let finite = walk
            .iter()
            .chain(throw.iter().flatten())
            .chain(push.iter().flatten())
            .all(|x| x.is_finite());
        if !finite {
            return Err(Error::Codec(lanyard::CodecError::InvalidValue(
                "a player input that is not finite",
            )));
        }
        Ok(PlayerInput {
            walk,
            jump,
            throw: throw.map(Vec3::from_array),
            push: push.map(Vec3::from_array),
            respawn,
        })
    }
}

const F_JUMP: u8 = 1;
const F_THROW: u8 = 2;
const F_PUSH: u8 = 4;

/// What a player's section says.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PlayerState {
    pose: PoseState,
    walk: [f32; 2],
    flags: u8,
    throw: Vec3,
    push: Vec3,
    /// How many times the owner has respawned the player (wrapping): a counter in every
    /// section, so a respawn survives lost datagrams and frames that were not sent.
    respawns: u8,
}

/// A player: a capsule walked by its owner.
#[derive(Debug)]
pub struct Player {
    /// The player's name.
    pub name: String,
    tuning: Tuning,
    /// Where it appears, and the only place it may reappear.
    home: Vec3,
    /// Respawns its owner's server path has asked for (wrapping).
    respawns: u8,
    /// The respawn count its client path last applied.
    respawned: u8,
    input: PlayerInput,
    walking: [f32; 2],
    cooldown: u32,
    throws: u32,
    /// Ticks its client path ran with no section (saturating): a copy whose owner fell
    /// silent walks on for [`SILENT_WALK_TICKS`], then holds where its owner last put it.
    silent: u8,
    /// Where the last section its client path applied put it (position and rotation), as
    /// the section says: the same on every copy, so copies whose owner fell silent hold in
    /// one place on every screen.
    heard: Option<(Vec3, Quat)>,
    /// The last section its client path took as news: one that repeats it word for word
    /// (a standing owner's, or the server's refresh of a silent owner's last) is none.
    last: Vec<u8>,
}

/// How long (ticks) a player's copy walks on as its owner last walked it when no section
/// comes, before it holds, still, where the last section put it: half a second of dead
/// reckoning covers a late or lost section, and a player whose owner froze or crashed
/// does not walk off the yard on every screen (and the server's copy out of its owner's
/// reach), nor stand in a different place on each (every copy heard the same last section;
/// nobody else moves an owner's player).
pub const SILENT_WALK_TICKS: u8 = 30;

impl Player {
    /// Ticks until it may throw again (0: now).
    pub fn cooldown_ticks(&self) -> u32 {
        self.cooldown
    }

    /// Sets what the player does next frame (the owner's game code calls this; elsewhere it
    /// has no effect, since only the owner runs the server path).
    pub fn set_input(&mut self, input: PlayerInput) {
        // One-shot requests stay queued until a server path sends them.
        let keep = self.input;
        self.input = PlayerInput {
            throw: input.throw.or(keep.throw),
            push: match (input.push, keep.push) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            },
            respawn: input.respawn || keep.respawn,
            jump: input.jump || keep.jump,
            walk: input.walk,
        };
    }

    /// Grenades this player has thrown (on its owner).
    pub fn throws(&self) -> u32 {
        self.throws
    }

    fn read(&self, s: Section<'_>) -> Result<PlayerState, Error> {
        let mut r = s.reader();
        let pose = PoseState::read(&mut r)?;
        let walk = [axis(&mut r)?, axis(&mut r)?];
        let flags = r.u8()?;
        let mut st = PlayerState {
            pose,
            walk,
            flags,
            throw: Vec3::ZERO,
            push: Vec3::ZERO,
            respawns: 0,
        };
        if flags & F_THROW != 0 {
            st.throw = r.vec3_bounded(1.0)?;
        }
        if flags & F_PUSH != 0 {
            st.push = r.vec3_bounded(64.0)?;
        }
        st.respawns = r.u8()?;
        r.finish()?;
        Ok(st)
    }
}

/// The time a frame stands for, in seconds, for pose buffers.
fn axis(r: &mut SectionReader<'_>) -> Result<f32, Error> {
    Ok(f32::from(r.u8()? as i8) / 127.0)
}

fn put_axis(w: &mut SectionWriter<'_>, v: f32) {
    w.u8((v.clamp(-1.0, 1.0) * 127.0).round() as i8 as u8);
}

impl Controller for Player {
    fn take_input(&mut self, input: &[u8]) -> Result<(), Error> {
        self.set_input(PlayerInput::from_input(input)?);
        Ok(())
    }

    fn server_update(
        &mut self,
        me: EntityRef<'_>,
        world: &WorldView<'_>,
        out: &mut SectionWriter<'_>,
    ) {
        let input = std::mem::take(&mut self.input);
        let mut flags = 0;
        if input.jump {
            flags |= F_JUMP;
        }
        let throw = input.throw.filter(|_| self.cooldown == 0);
        if throw.is_some() {
            flags |= F_THROW;
            self.cooldown = (self.tuning.throw_cooldown / world.dt()).ceil() as u32;
        } else if let Some(t) = input.throw {
            // Not yet: keep asking.
            self.input.throw = Some(t);
        }
        self.cooldown = self.cooldown.saturating_sub(1);
        if input.push.is_some() {
            flags |= F_PUSH;
        }
        if input.respawn {
            self.respawns = self.respawns.wrapping_add(1);
        }
        PoseState::of(me.body()).write(out);
        put_axis(out, input.walk[0]);
        put_axis(out, input.walk[1]);
        out.u8(flags);
        if let Some(t) = throw {
            out.vec3_bounded(Vec3::new(t.x, 0.0, t.z).clamp_length_max(1.0), 1.0);
        }
        if let Some(p) = input.push {
            out.vec3_bounded(p, 64.0);
        }
        out.u8(self.respawns);
    }

    fn client_update(
        &mut self,
        _me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        // A section that repeats the last word for word tells a copy nothing new: it is
        // silence, so a copy holds rather than bringing the old pose forward by its lead
        // once more (which put a crashed player's copy a few decimetres off every time the
        // server refreshed its last section).
        let section = section.filter(|s| ctx.is_authority() || s.payload != self.last);
        if let Some(s) = section {
            self.last.clear();
            self.last.extend_from_slice(s.payload);
        }
        match section {
            Some(_) => self.silent = 0,
            None => {
                self.silent = self.silent.saturating_add(1);
                if self.silent > SILENT_WALK_TICKS {
                    self.walking = [0.0; 2];
                }
            }
        }
        if let Some(s) = section {
            let st = self.read(s)?;
            if st.respawns != self.respawned {
                // A new respawn: back to the spawn point, whatever the pose says.
                self.respawned = st.respawns;
                let home = self.home;
                let b = ctx.body_mut();
                b.set_translation(home, true);
                b.set_linvel(Vec3::ZERO, true);
                self.heard = Some((home, st.pose.rot));
            } else {
                st.pose.correct(ctx, CORRECTION);
                self.heard = Some((st.pose.pos, st.pose.rot));
            }
            self.walking = st.walk;
            if st.flags & F_JUMP != 0 && ctx.body().linvel().y.abs() < 0.2 {
                let v = ctx.body().linvel();
                ctx.set_linvel(Vec3::new(v.x, self.tuning.jump_speed, v.z));
            }
            if st.flags & F_PUSH != 0 {
                let m = ctx.body().mass();
                ctx.apply_impulse(st.push * m);
            }
            if st.flags & F_THROW != 0 {
                self.throws += 1;
                // Only the owner spawns: everyone else learns of the grenade from the server.
                if ctx.is_authority() {
                    let (from, vel) = crate::aim::launch(
                        st.throw,
                        ctx.body().translation(),
                        ctx.body().linvel(),
                        &self.tuning,
                    );
                    let fuse_ticks = (self.tuning.fuse / ctx.dt()).ceil() as u32;
                    let thrower = ctx.owner();
                    ctx.spawn(
                        GRENADE,
                        &GrenadeParams {
                            pos: from.to_array(),
                            vel: vel.to_array(),
                            fuse_ticks,
                            thrower,
                        },
                    )?;
                }
            }
        }
        if self.silent > SILENT_WALK_TICKS
            && let Some((pos, rot)) = self.heard
        {
            // Held still where its owner last put it, the same on every screen, until its
            // owner speaks again (or its session ends).
            let b = ctx.body_mut();
            b.set_translation(pos, true);
            b.set_rotation(rot, true);
            b.set_linvel(Vec3::ZERO, true);
            b.set_angvel(Vec3::ZERO, true);
            return Ok(());
        }
        // Walk: horizontal velocity follows the stick, gravity keeps the vertical.
        let v = ctx.body().linvel();
        let w = Vec3::new(self.walking[0], 0.0, self.walking[1]) * self.tuning.move_speed;
        // Steer rather than snap while airborne, so pushes carry players off the edge.
        let grip = if v.y.abs() < 0.2 { 1.0 } else { 0.05 };
        let target = Vec3::new(v.x + (w.x - v.x) * grip, v.y, v.z + (w.z - v.z) * grip);
        if (target - v).length_squared() > 1e-8 {
            ctx.set_linvel(target);
        }
        Ok(())
    }

    fn validate(
        &self,
        me: EntityRef<'_>,
        section: Section<'_>,
        _world: &WorldView<'_>,
    ) -> Legality {
        // Everything the section claims: a readable section, a speed a blast could give, a
        // pose near the server's copy (no teleports), pushes no larger than two blasts at
        // their centre. A respawn can only ever go to this player's own spawn point.
        let Ok(st) = self.read(section) else {
            return Legality::Illegal;
        };
        let t = &self.tuning;
        let placed = if st.respawns != self.respawned {
            true
        } else {
            st.pose.linvel.length() < MAX_SPEED
                && st.pose.pos.distance(me.body().translation()) < MAX_DRIFT
        };
        let pushed = st.flags & F_PUSH == 0 || st.push.length() <= 2.0 * t.blast_impulse + 0.01;
        if placed && pushed {
            Legality::Legal
        } else {
            Legality::Illegal
        }
    }

    fn save_state(&self, out: &mut Vec<u8>) {
        let mut w = SectionWriter::new(out);
        put_axis(&mut w, self.walking[0]);
        put_axis(&mut w, self.walking[1]);
        w.u32(self.cooldown);
        w.u32(self.throws);
        w.u8(self.respawns);
        w.u8(self.respawned);
        w.u8(self.silent);
        w.bytes(&self.last);
        w.u8(u8::from(self.heard.is_some()));
        if let Some((pos, rot)) = self.heard {
            w.vec3(pos);
            for c in rot.to_array() {
                w.f32(c);
            }
        }
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let mut r = SectionReader::new(bytes);
        self.walking = [axis(&mut r)?, axis(&mut r)?];
        self.cooldown = r.u32()?;
        self.throws = r.u32()?;
        self.respawns = r.u8()?;
        self.respawned = r.u8()?;
        self.silent = r.u8()?;
        self.last = r.bytes()?.to_vec();
        self.heard = match r.u8()? {
            0 => None,
            _ => Some((
                r.vec3()?,
                Quat::from_array([r.f32()?, r.f32()?, r.f32()?, r.f32()?]),
            )),
        };
        Ok(r.finish()?)
    }
}

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

/// A player's body (upright: its rotations are locked, and it never sleeps), collider
/// and look.
fn player_blueprint(p: &PlayerParams) -> Blueprint {
    let (hh, rad) = (p.tuning.player_half_height, p.tuning.player_radius);
    Blueprint {
        body: RigidBodyBuilder::dynamic()
            .translation(Vec3::from_array(p.pos))
            .lock_rotations()
            .can_sleep(false)
            .build(),
        colliders: vec![
            ColliderBuilder::capsule_y(hh, rad)
                .friction(0.0)
                .density(1.5)
                .build(),
        ],
        visual: Visual {
            shape: Shape::Capsule {
                half_height: hh,
                radius: rad,
            },
            color: p.color,
        },
        controller: Box::new(Player {
            name: p.name.clone(),
            tuning: p.tuning.clone(),
            home: Vec3::from_array(p.pos),
            respawns: 0,
            respawned: 0,
            input: PlayerInput::default(),
            walking: [0.0; 2],
            cooldown: 0,
            throws: 0,
            silent: 0,
            heard: None,
            last: Vec::new(),
        }),
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
            ColliderBuilder::ball(0.18)
                .restitution(0.4)
                .density(3.0)
                .build(),
        ],
        visual: Visual {
            shape: Shape::Ball { radius: 0.18 },
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
    r.register_with(PLAYER, player_options, player_blueprint)?;
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
