//! `lanyard-game`: Tumbleyard, the Lanyard sample game. Natively the command line
//! ([`cli`]); built for a browser (wasm32), the page a host serves on its `--web` port.

#[cfg(not(target_arch = "wasm32"))]
mod cli;
// A page uses part of the window (no replay viewer, no typed addresses or scripts).
#[cfg(feature = "client")]
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
mod window;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

/// The page: its start screen asks for a name (and a password, for a locked game), then
/// joins the game of the host that served it, over a WebRTC data channel.
#[cfg(target_arch = "wasm32")]
fn main() {
    window::page();
}
