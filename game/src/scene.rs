//! The arena: scenery, crate stacks, spawn points and tuning, read from a TOML file in
//! `assets/`. Every peer loads the same file; only the entities travel over the network.

use lanyard::rapier3d::prelude::ColliderBuilder;
use lanyard::{EntityGroup, Vec3};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The default arena, relative to the workspace (or found next to the binary's crate).
pub const DEFAULT_SCENE: &str = "assets/arena.toml";

/// The most crates an arena's stacks may hold.
pub const MAX_CRATES: usize = 4096;

/// A fixed box.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// Its centre.
    pub center: [f32; 3],
    /// Half its size.
    pub half_extents: [f32; 3],
    /// Its colour.
    pub color: [u8; 4],
}

/// The floor: a box whose top is at y = 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Floor {
    /// Half its size.
    pub half_extents: [f32; 3],
    /// Its colour.
    pub color: [u8; 4],
}

/// A stack of crates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stack {
    /// Where its base is centred, x and z.
    pub base: [f32; 2],
    /// Crates along each side of a layer.
    pub width: u32,
    /// Layers.
    pub layers: u32,
    /// A crate's edge length.
    pub size: f32,
    /// Crate colour.
    pub color: [u8; 4],
}

/// A place players appear.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spawn {
    /// Where.
    pub pos: [f32; 3],
}

/// Gameplay numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tuning {
    /// Walking speed, m/s.
    pub move_speed: f32,
    /// Jump take-off speed, m/s.
    pub jump_speed: f32,
    /// Grenade launch speed, m/s.
    pub throw_speed: f32,
    /// Seconds between throws.
    pub throw_cooldown: f32,
    /// Seconds from throw to explosion.
    pub fuse: f32,
    /// Explosion reach, m.
    pub blast_radius: f32,
    /// Impulse at the centre of an explosion (per kg, so light and heavy bodies fly alike).
    pub blast_impulse: f32,
    /// The player capsule's radius.
    pub player_radius: f32,
    /// Half the length of the player capsule's straight part.
    pub player_half_height: f32,
}

/// An arena.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scene {
    /// Its name.
    pub name: String,
    /// Below this height a body is off the yard.
    pub kill_y: f32,
    /// The floor.
    pub floor: Floor,
    /// Fixed blocks.
    #[serde(default)]
    pub blocks: Vec<Block>,
    /// Crate stacks.
    #[serde(default)]
    pub stacks: Vec<Stack>,
    /// Player spawn points (at least one).
    pub spawns: Vec<Spawn>,
    /// Gameplay numbers.
    pub tuning: Tuning,
    /// Whether a player who walks into crates takes them over while they move (hand-off):
    /// they move at once on that player's screen, and return to the server at rest. Off
    /// unless the arena says `hand_off = true`.
    #[serde(default)]
    pub hand_off: bool,
}

/// Why a scene could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// The file could not be read.
    #[error("cannot read scene {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a valid scene.
    #[error("scene {path} is not valid: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

impl Scene {
    /// Reads and checks a scene file. A relative path that does not exist from the current
    /// directory is also looked for from the workspace root, so `cargo run` works from
    /// anywhere inside the repository.
    pub fn load(path: &Path) -> Result<Scene, SceneError> {
        let path = resolve(path);
        let text = std::fs::read_to_string(&path).map_err(|source| SceneError::Read {
            path: path.clone(),
            source,
        })?;
        Self::parse(&text).map_err(|reason| SceneError::Invalid { path, reason })
    }

    /// Parses and checks scene text.
    pub fn parse(text: &str) -> Result<Scene, String> {
        let scene: Scene = toml::from_str(text).map_err(|e| e.to_string())?;
        scene.check()?;
        Ok(scene)
    }

    /// The scene as bytes, to send to a client (comments and layout are not kept).
    pub fn encode(&self) -> Vec<u8> {
        bincode::serde::encode_to_vec(self, bincode::config::standard()).unwrap_or_default()
    }

    /// A scene from [`encode`](Self::encode)'s bytes, checked as a file would be.
    pub fn decode(bytes: &[u8]) -> Result<Scene, String> {
        let cfg = bincode::config::standard().with_limit::<{ 1 << 20 }>();
        let (scene, n): (Scene, usize) =
            bincode::serde::decode_from_slice(bytes, cfg).map_err(|e| e.to_string())?;
        if n != bytes.len() {
            return Err("trailing bytes after the scene".into());
        }
        scene.check()?;
        Ok(scene)
    }

    fn check(&self) -> Result<(), String> {
        if self.spawns.is_empty() {
            return Err("it needs at least one [[spawns]] entry".into());
        }
        let positive = |v: f32| v.is_finite() && v > 0.0;
        if !self.floor.half_extents.iter().all(|&v| positive(v)) {
            return Err("the floor's half_extents must be positive".into());
        }
        let mut crates = 0u64;
        for s in &self.stacks {
            if !positive(s.size) || s.width == 0 || s.layers == 0 {
                return Err("a stack needs a positive size, width and layer count".into());
            }
            crates += u64::from(s.width) * u64::from(s.width) * u64::from(s.layers);
        }
        if crates > MAX_CRATES as u64 {
            return Err(format!(
                "the stacks hold {crates} crates; an arena holds at most {MAX_CRATES}"
            ));
        }
        let t = &self.tuning;
        for (name, v) in [
            ("move_speed", t.move_speed),
            ("throw_speed", t.throw_speed),
            ("fuse", t.fuse),
            ("blast_radius", t.blast_radius),
            ("player_radius", t.player_radius),
            ("player_half_height", t.player_half_height),
        ] {
            if !positive(v) {
                return Err(format!("tuning.{name} must be positive"));
            }
        }
        Ok(())
    }

    /// Adds the floor and blocks to a group as scenery.
    pub fn add_scenery(&self, group: &mut EntityGroup) {
        let [hx, hy, hz] = self.floor.half_extents;
        group.add_scenery(
            ColliderBuilder::cuboid(hx, hy, hz)
                .translation(Vec3::new(0.0, -hy, 0.0))
                .friction(0.8),
        );
        for b in &self.blocks {
            let [x, y, z] = b.half_extents;
            group.add_scenery(
                ColliderBuilder::cuboid(x, y, z)
                    .translation(Vec3::from_array(b.center))
                    .friction(0.8),
            );
        }
    }

    /// The centre of every crate of every stack, with its stack's size and colour.
    pub fn crate_slots(&self) -> Vec<([f32; 3], f32, [u8; 4])> {
        let mut out = Vec::new();
        for s in &self.stacks {
            let w = s.width as f32;
            for layer in 0..s.layers {
                for i in 0..s.width {
                    for j in 0..s.width {
                        let x = s.base[0] + (i as f32 - (w - 1.0) / 2.0) * s.size * 1.02;
                        let z = s.base[1] + (j as f32 - (w - 1.0) / 2.0) * s.size * 1.02;
                        let y = s.size / 2.0 + layer as f32 * s.size * 1.01;
                        out.push(([x, y, z], s.size, s.color));
                    }
                }
            }
        }
        out
    }

    /// The spawn point for a player number.
    pub fn spawn_point(&self, n: usize) -> [f32; 3] {
        self.spawns[n % self.spawns.len()].pos
    }
}

fn resolve(path: &Path) -> PathBuf {
    if path.is_absolute() || path.exists() {
        return path.to_path_buf();
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    if workspace.exists() {
        workspace
    } else {
        path.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_arena_loads() {
        let s = Scene::load(Path::new(DEFAULT_SCENE)).unwrap();
        assert!(!s.crate_slots().is_empty());
        assert!(s.kill_y < 0.0);
    }

    #[test]
    fn the_cube_field_holds_900_cubes_and_more_is_refused_clearly() {
        let s = Scene::load(Path::new("assets/cubes.toml")).unwrap();
        assert_eq!(s.crate_slots().len(), 900);
        let text = std::fs::read_to_string(resolve(Path::new("assets/cubes.toml"))).unwrap();
        let e = Scene::parse(&text.replace("width = 30", "width = 65")).unwrap_err();
        assert!(e.contains("4225 crates"), "{e}");
    }

    #[test]
    fn a_broken_scene_says_what_is_wrong() {
        let e = Scene::parse("name = 1").unwrap_err();
        assert!(e.contains("name"), "{e}");
        let e = Scene::load(Path::new("no/such/arena.toml")).unwrap_err();
        assert!(e.to_string().contains("cannot read scene"));
    }
}
