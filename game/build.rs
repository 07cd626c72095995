//! Finds miniquad's page loader, `js/gl.js` in the miniquad package this build uses, and
//! copies it to `OUT_DIR` for the page a host serves (`--web`). It is miniquad's own file,
//! served as it is, so it always matches the miniquad the browser build links.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../Cargo.lock");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    // Offline first (the packages are usually here already: the build is using them);
    // else as cargo would fetch them.
    let metadata = |offline: bool| {
        let mut c = Command::new(&cargo);
        c.args(["metadata", "--format-version", "1", "--manifest-path"])
            .arg(manifest.join("Cargo.toml"))
            .args(["--filter-platform", "wasm32-unknown-unknown"]);
        if offline {
            c.arg("--offline");
        }
        c.output().expect("cargo metadata runs")
    };
    let meta = match metadata(true) {
        m if m.status.success() => m,
        _ => metadata(false),
    };
    assert!(
        meta.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&meta.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&meta.stdout).expect("its JSON");
    let miniquad = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "miniquad")
        .and_then(|p| p["manifest_path"].as_str())
        .map(PathBuf::from)
        .expect("the window's build uses miniquad");
    let gl = miniquad.with_file_name("js").join("gl.js");
    std::fs::copy(&gl, out.join("gl.js"))
        .unwrap_or_else(|e| panic!("cannot copy {}: {e}", gl.display()));
}
