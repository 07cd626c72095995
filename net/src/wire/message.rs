//! The reliable channel's messages: spawns, despawns, ownership, corrections, game events.

use lanyard::pose::BodyState;
use lanyard::{KindId, NetId, Owner};
use serde::{Deserialize, Serialize};

/// A reliable message. Spawns, despawns, ownership, corrections and game events travel
/// this way: acknowledged, resent, delivered once and in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum Msg {
    /// Server to clients: an entity exists.
    Spawn {
        net: NetId,
        kind: KindId,
        owner: Owner,
        params: Vec<u8>,
        /// Where its body is now, unless `base` starts with its pose.
        state: Option<Placed>,
        /// Its section as the server's world last broadcast it: the client's first
        /// baseline, so that no whole section need follow (most of a world a client joins
        /// rests). None for an entity that has written none yet.
        base: Option<SpawnBase>,
    },
    /// Server to clients: an entity is gone.
    Despawn { net: NetId },
    /// Server to clients: an entity changed hands; `seq` is its authority's sequence
    /// number now.
    SetOwner { net: NetId, owner: Owner, seq: u16 },
    /// Client to server: please spawn this entity for me; I already use it under
    /// `provisional`.
    SpawnRequest {
        provisional: NetId,
        kind: KindId,
        params: Vec<u8>,
        /// Where its body is now on the client.
        state: BodyState,
    },
    /// Server to the requesting client: your spawn is `net` from now on.
    SpawnConfirmed { provisional: NetId, net: NetId },
    /// Server to the requesting client: that spawn is not allowed; remove it.
    SpawnRefused { provisional: NetId },
    /// Client to server: I despawned my entity.
    DespawnRequest { net: NetId },
    /// Server to an owner: the server's own state of your entity's body, after it refused
    /// your section. Go back to it.
    Correction { net: NetId, state: BodyState },
    /// A game event (an explosion, a chat line), as bytes the game encodes.
    Event { bytes: Vec<u8> },
    /// Client to server: I lack the baseline your last state of this entity named; send it
    /// whole next time. (Never expected: a safety net, counted as `missing_baselines`.)
    Resync { net: NetId },
    /// Server to a client that resumed its session: the spawns since the resume named
    /// every entity you need; drop the others you have (they went while you were away).
    WorldSent,
    /// Client to server: send me the whole world again (I rebuilt mine); answered as a
    /// resume is, at most once every few seconds.
    ResendWorld,
    /// Server to clients: who takes over the game if the server goes, in order, and (to
    /// the successors) what they need to take the other sessions over.
    Succession(crate::succession::Succession),
    /// Client to server: my body pushes the server's entity `net`, and I simulate it from
    /// now on (a hand-off); `seq` is its authority's sequence number as I knew it when I
    /// took it (an older one than the server's is stale: it changed hands since). Answered
    /// by a `SetOwner`: ours (granted), or who holds it (refused, with a `Correction`: go
    /// back to the server's state of it).
    Claim { net: NetId, seq: u16 },
    /// Server to clients, after a `Spawn` of an entity that has changed hands before: its
    /// authority's sequence number (`Entity::authority_seq`; a spawn alone means 0).
    Authority { net: NetId, seq: u16 },
    /// Server to a client that resumed its session (or asked for the world again): the
    /// whole world follows, as spawns, then `WorldSent`. What came before this is the
    /// session's history: messages queued before the client fell silent, delivered once
    /// on the resumed connection (protocol 21).
    ResendingWorld,
}

/// An entity's section sent with its spawn: the client keeps it as what broadcast
/// `number` (written at `tick`, if the server still knows) said of the entity, and the
/// server takes it as the client's baseline once the spawn is acknowledged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SpawnBase {
    pub(crate) number: u32,
    pub(crate) tick: Option<u32>,
    /// Whether it starts with a pose (as [`Body::FullPosed`](super::Body::FullPosed) says).
    pub(crate) posed: bool,
    pub(crate) bytes: Vec<u8>,
}

/// A body's state in a spawn message: exact, with the velocities left out when the body
/// rests (most of a world a client joins does), 29 bytes instead of 53.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Placed {
    pos: [f32; 3],
    rot: [f32; 4],
    /// Linear and angular velocity, unless both are zero.
    vel: Option<([f32; 3], [f32; 3])>,
}

impl From<BodyState> for Placed {
    fn from(s: BodyState) -> Self {
        let moving = s.linvel != [0.0; 3] || s.angvel != [0.0; 3];
        Placed {
            pos: s.pos,
            rot: s.rot,
            vel: moving.then_some((s.linvel, s.angvel)),
        }
    }
}

impl From<Placed> for BodyState {
    fn from(p: Placed) -> Self {
        let (linvel, angvel) = p.vel.unwrap_or_default();
        BodyState {
            pos: p.pos,
            rot: p.rot,
            linvel,
            angvel,
        }
    }
}
