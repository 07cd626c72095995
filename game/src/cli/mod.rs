//! The binary's commands, a file per family: [`args`] (the command line), [`serve`]
//! (`server`, `rendezvous`), [`play`] (`bot`, `browse`, `replay --verify`). The window's
//! commands are in `window`.

pub(crate) mod args;
pub(crate) mod metrics;
pub(crate) mod play;
pub(crate) mod serve;
