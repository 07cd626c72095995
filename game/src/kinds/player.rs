//! The player kind: a capsule its owner walks, jumps, and throws grenades from; how its
//! copies follow the owner's sections, and hold still when the owner falls silent.

use super::{
    CORRECTION, F_JUMP, F_PUSH, F_THROW, GRENADE, GrenadeParams, MAX_DRIFT, MAX_SPEED, input_bytes,
    read_input,
};
use crate::scene::Tuning;
use lanyard::Legality;
use lanyard::codec::{Section, SectionReader, SectionWriter};
use lanyard::pose::PoseState;
use lanyard::prelude::*;
use serde::{Deserialize, Serialize};

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
    /// its length (0 to 1) the share of the full throw speed, and `y` the share added to
    /// the lift (a lob; the two shares add up to at most 1). [`crate::aim::aim`] gives the
    /// throw that lands on a point, [`crate::aim::aim_over`] one over what is in the way.
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

    /// The section as news: one that repeats the last word for word tells a copy nothing
    /// new, so it is silence (a copy then holds rather than bringing the old pose forward
    /// by its lead once more, which put a crashed player's copy a few decimetres off every
    /// time the server refreshed its last section). Counts the silence; a copy silent for
    /// longer than [`SILENT_WALK_TICKS`] stops walking.
    fn news<'s>(&mut self, section: Option<Section<'s>>, authority: bool) -> Option<Section<'s>> {
        let section = section.filter(|s| authority || s.payload != self.last);
        match section {
            Some(s) => {
                self.last.clear();
                self.last.extend_from_slice(s.payload);
                self.silent = 0;
            }
            None => {
                self.silent = self.silent.saturating_add(1);
                if self.silent > SILENT_WALK_TICKS {
                    self.walking = [0.0; 2];
                }
            }
        }
        section
    }

    /// Applies a section (the `first` this copy hears, or a later one): the pose (or a
    /// respawn), the walk, a jump, a push, a throw.
    fn apply(
        &mut self,
        s: Section<'_>,
        first: bool,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        let st = self.read(s)?;
        if first {
            // The first section this copy hears (it joined late, or the player is new):
            // the respawns before are the owner's past, not news.
            self.respawned = st.respawns;
        }
        if st.respawns != self.respawned {
            // A new respawn: where the section puts it, exactly. The respawning section
            // itself puts it at the spawn point; a copy that missed it (and the walk after
            // it) takes the player where a later one says it walked to.
            self.respawned = st.respawns;
            let b = ctx.body_mut();
            b.set_translation(st.pose.pos, true);
            b.set_rotation(st.pose.rot, true);
            b.set_linvel(st.pose.linvel, true);
            b.set_angvel(st.pose.angvel, true);
        } else {
            st.pose.correct(ctx, CORRECTION);
        }
        self.heard = Some((st.pose.pos, st.pose.rot));
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
        Ok(())
    }

    /// A copy silent for longer than [`SILENT_WALK_TICKS`] holds still where its owner last
    /// put it, the same on every screen, until its owner speaks again (or its session
    /// ends). Whether it held.
    fn hold(&self, ctx: &mut ClientContext<'_>) -> bool {
        let Some((pos, rot)) = self.heard.filter(|_| self.silent > SILENT_WALK_TICKS) else {
            return false;
        };
        let b = ctx.body_mut();
        b.set_translation(pos, true);
        b.set_rotation(rot, true);
        b.set_linvel(Vec3::ZERO, true);
        b.set_angvel(Vec3::ZERO, true);
        true
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
        let mut pose = PoseState::of(me.body());
        if input.respawn {
            // The section that respawns the player puts it at its spawn point, still: every
            // client path (the owner's own too) moves it there.
            self.respawns = self.respawns.wrapping_add(1);
            pose.pos = self.home;
            pose.linvel = Vec3::ZERO;
            pose.angvel = Vec3::ZERO;
        }
        pose.write(out);
        put_axis(out, input.walk[0]);
        put_axis(out, input.walk[1]);
        out.u8(flags);
        if let Some(t) = throw {
            // A lob takes its lift from the throw's speed: no throw is faster than the
            // full one (a flat throw writes the same bytes as before lobs).
            let flat = Vec3::new(t.x, 0.0, t.z).clamp_length_max(1.0);
            let lob = t.y.clamp(0.0, (1.0 - flat.length()).max(0.0));
            out.vec3_bounded(Vec3::new(flat.x, lob, flat.z), 1.0);
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
        // Nothing heard yet (no section was news): the first section is.
        let first = self.last.is_empty();
        if first && self.silent == 0 && section.is_none() {
            // The first run of a copy with nothing heard (a late joiner's copy of a player
            // whose owner fell silent before it came, which no server may have a section
            // of, after a migration): where the spawn placed it is the server's copy, and
            // where it holds if no section comes.
            let b = ctx.body();
            self.heard = Some((b.translation(), *b.rotation()));
        }
        let section = self.news(section, ctx.is_authority());
        if let Some(s) = section {
            self.apply(s, first, ctx)?;
        }
        if self.hold(ctx) {
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
        // their centre. A respawn can only ever go to this player's own spawn point: a
        // section with a new respawn count is judged against that point, not the copy.
        let Ok(st) = self.read(section) else {
            return Legality::Illegal;
        };
        let t = &self.tuning;
        let from = match st.respawns != self.respawned {
            true => self.home,
            false => me.body().translation(),
        };
        let placed = st.pose.linvel.length() < MAX_SPEED && st.pose.pos.distance(from) < MAX_DRIFT;
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

/// A player's body (upright: its rotations are locked, and it never sleeps), collider
/// and look.
pub(super) fn blueprint(p: &PlayerParams) -> Blueprint {
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
