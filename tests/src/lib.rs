//! Shared scenes and helpers for Lanyard's cross-crate tests.
//!
//! The tests themselves live in `tests/tests/`. This library builds the scenes they share,
//! so each test reads as "build this, do that, expect this".
#![warn(missing_docs)]

use lanyard::prelude::*;
use lanyard_demo as demo;
use std::sync::Arc;

pub mod explore;
pub mod measure;
pub mod scenario;

/// A registry with the demo kinds.
pub fn demo_registry() -> Arc<KindRegistry> {
    demo::registry()
}

/// The determinism scene: `n` bodies of the demo kinds in a pit ([`demo::mixed_scene`]).
pub fn mixed_scene(n: usize, seed: u64) -> EntityGroup {
    demo::mixed_scene(demo_registry(), n, seed).expect("demo kinds spawn")
}

/// Steps `group` `ticks` frames and returns the state hash after each.
pub fn run_hashes(group: &mut EntityGroup, ticks: usize) -> Vec<u64> {
    (0..ticks)
        .map(|_| {
            group.frame();
            group.state_hash()
        })
        .collect()
}

/// The first datagram a client speaking protocol `version` sends to `server`: its hello.
pub fn hello_of(version: u16, server: std::net::SocketAddr) -> Vec<u8> {
    let config = lanyard_net::NetConfig {
        version,
        ..lanyard_net::NetConfig::default()
    };
    let mut c = lanyard_net::NetManager::client(config, server, "x", None, [6; 32]);
    c.update(
        &mut EntityGroup::new(demo_registry(), GroupConfig::default()),
        1.0 / 60.0,
    );
    c.drain_outgoing()
        .next()
        .expect("a client says hello first")
        .1
}

/// The book's chapters (`docs/src/`), whose Rust code runs as this crate's doctests: the
/// book's code is compiled and run by `cargo test --workspace` against the crates as they
/// are (this crate sees `lanyard`, `lanyard-net` with its harness, `lanyard-demo` and
/// `serde`). Its longer programs are the examples, included whole and built as examples.
#[cfg(doctest)]
pub mod book {
    #[doc = include_str!("../../docs/src/introduction.md")]
    pub struct Introduction;
    #[doc = include_str!("../../docs/src/playing.md")]
    pub struct Playing;
    #[doc = include_str!("../../docs/src/examples.md")]
    pub struct Examples;
    #[doc = include_str!("../../docs/src/kinds.md")]
    pub struct Kinds;
    #[doc = include_str!("../../docs/src/prediction.md")]
    pub struct Prediction;
    #[doc = include_str!("../../docs/src/hand-off.md")]
    pub struct HandOff;
    #[doc = include_str!("../../docs/src/replay.md")]
    pub struct Replay;
    #[doc = include_str!("../../docs/src/how-it-works.md")]
    pub struct HowItWorks;
    #[doc = include_str!("../../docs/src/protocol.md")]
    pub struct Protocol;
    #[doc = include_str!("../../docs/src/tests.md")]
    pub struct Tests;
}
