//! How a group simulates: its role, timestep, gravity and loopback.

use crate::id::ClientId;
use rapier3d::glamx::glam::Vec3;
use serde::{Deserialize, Serialize};

/// Which side of the network a group is on. The same type serves both: the role only
/// decides which entities it has authority over and who assigns network ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// The server (or a listen-server host, or a standalone simulation): authority over
    /// server-owned entities, assigns network ids, carries out spawns.
    Server,
    /// A client: authority over the entities this client owns; spawns it asks for wait for
    /// the network layer to send them up.
    Client(ClientId),
}

/// How a group simulates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GroupConfig {
    /// The fixed physics timestep, in seconds.
    pub dt: f32,
    /// Gravity, in metres per second squared.
    pub gravity: Vec3,
    /// Server or client.
    pub role: Role,
    /// Whether [`EntityGroup::frame`](crate::EntityGroup::frame) feeds the packet its server paths wrote back through
    /// its own client paths. Always on in a real game; tests turn it off to show that
    /// nothing moves without it.
    pub loopback: bool,
}

impl GroupConfig {
    /// Whether the numbers make sense: a positive finite timestep and finite gravity.
    pub fn is_valid(&self) -> bool {
        self.dt.is_finite() && self.dt > 0.0 && self.dt <= 1.0 && self.gravity.is_finite()
    }

    /// [`is_valid`](Self::is_valid), as an error that says what is wrong.
    pub fn check(&self) -> Result<(), crate::error::Error> {
        match self.is_valid() {
            true => Ok(()),
            false => Err(crate::error::Error::InvalidConfig(format!(
                "dt = {}, gravity = {:?}",
                self.dt,
                self.gravity.to_array()
            ))),
        }
    }
}

impl Default for GroupConfig {
    fn default() -> Self {
        GroupConfig {
            dt: 1.0 / 60.0,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            role: Role::Server,
            loopback: true,
        }
    }
}
