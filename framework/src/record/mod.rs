//! The recording format: what a session's recording holds and how it is laid out, below
//! the group that writes it ([`replay`](crate::replay) reads it back, above the pipeline).
//!
//! A recording is what a replay needs and nothing more: the registered kinds, the scene's
//! name, the initial world (a [`snapshot`](crate::EntityGroup::snapshot)), and then, tick
//! by tick, every change that came from outside the group's own client paths, in order:
//! the sections accepted for client paths, spawns, despawns, owner changes, renames and body
//! states set from outside, the client pass, the command pass, and after the physics step
//! the world's hash; now and then (every [`BODIES_SECONDS`] of game time, and at the end)
//! the state of every body that changed since the last time, a [`BodyFrame`], and more
//! rarely (every [`KEYFRAME_SECONDS`]) the whole world, a [`Keyframe`]. A replay restores the initial world and runs the
//! same ops through the same client paths. Sections written by this peer's own server
//! paths of kinds that [decide alone](crate::KindOptions::decides_alone) (every kind, by
//! default) are not recorded: the replay runs those server paths again and loops their
//! sections back, as the group did. An entity whose controller game code reached into
//! ([`controller_mut`](crate::EntityGroup::controller_mut)) is marked by an [`Op::Outside`],
//! and its own sections are recorded from there on. Spawns and despawns that client paths asked for are not recorded: the replay's
//! client paths ask again.
//!
//! ```text
//! file     := "LNYR" version:u32 header_len:u32 header snapshot block*
//! snapshot := raw_len:u64 packed_len:u64 lz4(snapshot)
//! block    := packed_len:u32 raw_len:u32 lz4(up to 64 tick records, bincode 2) checksum:u64
//! ```
//!
//! A recording is small: a section equal to the last one its entity got is recorded as part
//! of a run ([`Op::Repeat`]), a body that moves on its own costs nothing a tick, and the
//! initial world and each block of ticks are compressed (LZ4). A world at rest grows by a
//! few hundred bytes a second; one whose bodies all move, by their body frames and
//! keyframes: a few kilobytes a second for a few hundred bodies.
//!
//! A file of another version, a truncated file and a file with corrupted bytes each give
//! their own [`Error`](crate::Error); the checksum of every block catches corruption where it
//! happens.

pub(crate) mod format;

pub use format::{
    BLOCK_TICKS, BODIES_SECONDS, BodyBits, BodyFrame, KEYFRAME_SECONDS, Keyframe, Op,
    RECORDING_VERSION, Recording, RecordingHeader, TickRecord,
};
