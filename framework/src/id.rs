//! Identifiers: generational entity ids (local), network ids (shared by every peer),
//! client ids, owners and controller-kind ids.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A generational handle to an entity in one [`EntityGroup`](crate::EntityGroup).
///
/// It is local to the group that made it: peers agree on [`NetId`]s, not on `EntityId`s.
/// A despawned entity's slot is reused with a higher generation, so a stale id never
/// resolves to the entity that replaced it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EntityId {
    pub(crate) index: u32,
    pub(crate) generation: u32,
}

impl EntityId {
    /// The slot index inside the group.
    pub fn index(self) -> u32 {
        self.index
    }

    /// The generation of the slot when this id was issued.
    pub fn generation(self) -> u32 {
        self.generation
    }
}

impl fmt::Display for EntityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}

/// The id every peer uses for an entity. Assigned by the server, never reused in a session.
///
/// 32 bits wide (the wire encodes it as a varint, so small ids stay small). Ids with the
/// top bit set are reserved for provisional ids a client gives its own spawns before the
/// server confirms them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NetId(pub u32);

impl NetId {
    /// The bit that marks a provisional (client-assigned, unconfirmed) id.
    pub const PROVISIONAL_BIT: u32 = 1 << 31;

    /// Whether this is a provisional id a client made for its own unconfirmed spawn.
    pub fn is_provisional(self) -> bool {
        self.0 & Self::PROVISIONAL_BIT != 0
    }
}

impl fmt::Display for NetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// A connected client, as numbered by the server.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClientId(pub u16);

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "client {}", self.0)
    }
}

/// Who runs an entity's server path: the server, or one client.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Owner {
    /// The server decides for this entity (crates, the arena's moving parts, ...).
    Server,
    /// A client decides for this entity (its player, a grenade it threw).
    Client(ClientId),
}

/// The stable id of a registered controller kind.
///
/// It is derived from the kind's registered name (a 32-bit FNV-1a hash), so every peer
/// that registers the same names gets the same ids whatever order it registers them in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct KindId(pub u32);

impl KindId {
    /// The id a kind registered under `name` gets.
    pub fn of_name(name: &str) -> KindId {
        let mut h: u32 = 0x811c_9dc5;
        for b in name.bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
        KindId(h)
    }
}

impl fmt::Display for KindId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kind {:#010x}", self.0)
    }
}
