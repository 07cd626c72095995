//! The page a host serves (`--web PORT`): the browser build of the game, its loader and
//! its script, beside the game's socket (see `lanyard_web`).

use lanyard_net::Transport;
use lanyard_web::{Site, WebTransport};
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

/// The browser build, as `cargo build --profile web --target wasm32-unknown-unknown -p
/// lanyard-game` writes it.
const WASM: &str = "wasm32-unknown-unknown/web/lanyard-game.wasm";

/// How to make the browser build, for the error that says it is missing.
pub const BUILD_IT: &str =
    "cargo build --profile web --target wasm32-unknown-unknown -p lanyard-game";

/// Where the browser build is: `LANYARD_WEB_WASM` if set, else beside this program's own
/// target folder (`target/debug/lanyard-game` finds `target/wasm32-unknown-unknown/...`).
fn wasm_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LANYARD_WEB_WASM") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/lanyard-game, or target/<profile>/deps/<test> in tests.
    exe.ancestors()
        .skip(1)
        .take(3)
        .map(|dir| dir.join(WASM))
        .find(|p| p.is_file())
}

/// The page's files: the page, miniquad's loader, the page's script, and the game.
pub fn site() -> Result<Site, String> {
    let path = wasm_path().ok_or_else(|| {
        format!(
            "the browser build is not there: build it with `{BUILD_IT}` (or set LANYARD_WEB_WASM)"
        )
    })?;
    let wasm = std::fs::read(&path)
        .map_err(|e| format!("cannot read the browser build {}: {e}", path.display()))?;
    let mut site = Site::new();
    site.add(
        "/index.html",
        include_bytes!("../../web/index.html").to_vec(),
    )
    .add(
        "/lanyard.js",
        include_bytes!("../../web/lanyard.js").to_vec(),
    )
    .add(
        "/gl.js",
        include_bytes!(concat!(env!("OUT_DIR"), "/gl.js")).to_vec(),
    )
    .add("/lanyard-game.wasm", wasm);
    Ok(site)
}

/// `inner`, the game's socket, with the page served and its channels run on `port`
/// (TCP and UDP, every IPv4 interface).
pub fn serve(inner: Box<dyn Transport>, port: u16) -> Result<WebTransport, String> {
    WebTransport::bind(inner, IpAddr::V4(Ipv4Addr::UNSPECIFIED), port, site()?)
        .map_err(|e| e.to_string())
}
