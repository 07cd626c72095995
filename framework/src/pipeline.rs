//! The frame: the one definition of the pass order, which every driver (a standalone group,
//! the network layer's server and client, a replay) runs. It is written in the group's
//! `pipeline.rs`, beside the passes it orders; this module names it for users.

pub use crate::group::pipeline::{FrameDriver, FramePass, FrameReport};
