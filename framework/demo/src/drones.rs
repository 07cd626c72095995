//! Drones: bodies under gravity that each hold their own target height (a spawn
//! parameter) while they drift across the world. The kind sets no codec and no option: its
//! [motion](Controller::motion) is its lift, which every peer runs on its body and both
//! ends of a session repeat to predict it, gravity included.

use crate::PoseCarrier;
use lanyard::prelude::*;
use serde::{Deserialize, Serialize};

/// The kind name of a [`Drone`].
pub const DRONE: &str = "demo.drone";

/// The lift that holds a drone up against the default gravity, m/s².
pub const HOVER: f32 = 9.81;
/// How hard a drone is pulled toward its target height, per metre off (1/s²).
pub const STIFFNESS: f32 = 4.0;
/// How hard its vertical speed is damped (1/s).
pub const DAMPING: f32 = 3.0;

/// Spawn parameters of a [`DRONE`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DroneParams {
    /// Where it starts.
    pub pos: [f32; 3],
    /// Its starting velocity (its drift).
    pub vel: [f32; 3],
    /// The height it holds.
    pub target_height: f32,
}

/// A drone: carries its pose, and lifts itself toward its own target height.
#[derive(Debug)]
pub struct Drone {
    /// The height it holds (from its spawn parameters).
    pub target_height: f32,
}

/// One tick of a drone's lift toward `target_height`: the hover against gravity, a pull
/// toward the height, a damping of the climb.
pub fn lift(target_height: f32, body: &mut Steer<'_>) {
    let v = body.linvel();
    let up = HOVER + STIFFNESS * (target_height - body.pos().y) - DAMPING * v.y;
    body.set_linvel(v + Vec3::new(0.0, up * body.dt(), 0.0));
}

impl Controller for Drone {
    // Its pose, as a pose carrier writes and takes it.
    fn server_update(&mut self, me: EntityRef<'_>, w: &WorldView<'_>, out: &mut SectionWriter<'_>) {
        PoseCarrier.server_update(me, w, out);
    }

    fn client_update(
        &mut self,
        me: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        PoseCarrier.client_update(me, section, ctx)
    }

    fn motion(&self, body: &mut Steer<'_>) {
        lift(self.target_height, body);
    }
}

/// A drone's body: a small box that never sleeps.
pub fn blueprint(p: &DroneParams, controller: impl Controller) -> Blueprint {
    let mut b = Blueprint::dynamic_box(p.pos, [0.3, 0.1, 0.3], [90, 200, 120, 255], controller);
    b.body = RigidBodyBuilder::dynamic()
        .translation(Vec3::from_array(p.pos))
        .linvel(Vec3::from_array(p.vel))
        .can_sleep(false)
        .build();
    b
}

/// Registers [`DRONE`], with nothing set but its factory.
pub fn register(registry: &mut KindRegistry) -> Result<(), Error> {
    registry.register(DRONE, |p: &DroneParams| {
        let drone = Drone {
            target_height: p.target_height,
        };
        blueprint(p, drone)
    })?;
    Ok(())
}

/// `n` drones from `seed`, spread over a 40 m square, each with a height of its own
/// between 2 and 12 m (starting up to 3 m from it) and a drift of up to 3 m/s.
pub fn swarm(n: usize, seed: u64) -> Vec<DroneParams> {
    let mut rng = SeededRng::new(seed);
    (0..n)
        .map(|_| {
            let target_height = rng.range_f32(2.0, 12.0);
            DroneParams {
                pos: [
                    rng.range_f32(-20.0, 20.0),
                    target_height + rng.range_f32(-3.0, 3.0),
                    rng.range_f32(-20.0, 20.0),
                ],
                vel: [rng.range_f32(-3.0, 3.0), 0.0, rng.range_f32(-3.0, 3.0)],
                target_height,
            }
        })
        .collect()
}
