//! Tumbleyard, the Lanyard sample game: players on a yard throw grenades to knock crates
//! (and each other) off the edge.
//!
//! * [`scene`]: the arena, read from `assets/arena.toml`.
//! * [`kinds`]: the controller kinds `crate`, `player` and `grenade`.
//! * [`game`]: a running peer (dedicated server, host, client or bot) and the rules.
//! * [`bot`]: a scripted player.
//! * [`runner`]: the real-time fixed-step loop for headless modes.
//! * [`witness`]: poses by server broadcast, for reports that compare peers.
//! * [`events`]: the game's reliable events (blasts, scores, chat, the arena's parts).
//! * [`agones`]: telling an Agones sidecar that a dedicated server is ready and healthy.
//! * [`page`]: the page's edge, in a browser build (its query, its channel to the host).
#![warn(missing_docs)]

#[cfg(not(target_arch = "wasm32"))]
pub mod agones;
pub mod aim;
pub mod bot;
pub mod events;
pub mod game;
pub mod kinds;
pub mod page;
pub mod runner;
pub mod scene;
pub mod sound;
pub mod witness;
