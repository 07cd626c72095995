//! Recording a group's session and replaying it headless, bit for bit.
//!
//! A recording is what a replay needs and nothing more: the registered kinds, the scene's
//! name, the initial world (a [`snapshot`](crate::EntityGroup::snapshot)), and then, tick
//! by tick, every change that came from outside the group's own client paths, in order:
//! the sections accepted for client paths, spawns, despawns, owner changes, renames and body
//! states set from outside, the client pass, the command pass, and after the physics step
//! the world's hash and every entity's pose. A replay restores the initial world and runs
//! the same ops through the same client paths; no server path runs. Spawns and despawns
//! that client paths asked for are not recorded: the replay's client paths ask again.
//!
//! ```text
//! file   := "LNYR" version:u32 header_len:u32 header snapshot_len:u64 snapshot record*
//! record := len:u32 body[len] checksum:u64        (body: one tick, bincode 2)
//! ```
//!
//! A file of another version, a truncated file and a file with corrupted bytes each give
//! their own [`Error`](crate::Error); the checksum of every record catches corruption where it happens.

pub(crate) mod format;
mod replay;

pub use format::{Op, RECORDING_VERSION, Recording, RecordingHeader, TickRecord};
pub use replay::{Divergence, EntityDiff, Replay, Step};
