//! A Tumbleyard recording verified anywhere the library builds: [`verify`] replays it and
//! says how far it matched, with the final state hash. Built for `wasm32-unknown-unknown`,
//! it is a module with three exports that `verify.mjs` runs under node:
//!
//! ```sh
//! cargo build --profile web --target wasm32-unknown-unknown -p lanyard-game-verify
//! node game/verify/verify.mjs target/wasm32-unknown-unknown/web/lanyard_game_verify.wasm REC
//! ```
//!
//! It prints the same figures as `lanyard-game replay REC` natively, as JSON: a recording
//! made on one machine verifies on another with the same final hash, or the first
//! divergence says where (tick, entity, field).
#![warn(missing_docs)]

use std::cell::RefCell;

/// Replays `recording` and returns the outcome as JSON: `ticks`, `hash` (the final state
/// hash, hex) and `diverged` (null, or where the replay first differed); or `error`.
pub fn verify(recording: &[u8]) -> serde_json::Value {
    let mut replay = match lanyard_game::kinds::open_replay(recording) {
        Ok(r) => r,
        Err(e) => return serde_json::json!({ "error": e.to_string() }),
    };
    let ticks = replay.len();
    match replay.verify(|_, _| {}) {
        Ok(outcome) => serde_json::json!({
            "ticks": ticks,
            "recorded_by": replay.header().recorded_by,
            "hash": format!("{:016x}", replay.group().state_hash()),
            "diverged": outcome.map(|d| d.to_string()),
        }),
        Err(e) => serde_json::json!({ "error": e.to_string() }),
    }
}

thread_local! {
    /// The last outcome, for [`lanyard_verify_result`] to hand out.
    static RESULT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Room for `len` bytes in the module's memory, for the caller to put a recording in.
#[unsafe(no_mangle)]
pub extern "C" fn lanyard_verify_alloc(len: u32) -> *mut u8 {
    let mut v = vec![0u8; len as usize];
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// Verifies the `len` bytes at `ptr` (from [`lanyard_verify_alloc`]), frees them, and
/// returns the length of the JSON outcome, which [`lanyard_verify_result`] points at.
///
/// # Safety
///
/// `ptr` and `len` must be what [`lanyard_verify_alloc`] gave and was asked for.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lanyard_verify(ptr: *mut u8, len: u32) -> u32 {
    // SAFETY: the caller passes back the allocation of `len` bytes made above.
    let bytes = unsafe { Vec::from_raw_parts(ptr, len as usize, len as usize) };
    let out = verify(&bytes).to_string().into_bytes();
    let n = out.len() as u32;
    RESULT.with(|r| *r.borrow_mut() = out);
    n
}

/// Where the last outcome's JSON is.
#[unsafe(no_mangle)]
pub extern "C" fn lanyard_verify_result() -> *const u8 {
    RESULT.with(|r| r.borrow().as_ptr())
}

#[cfg(test)]
mod tests {
    use super::verify;

    #[test]
    fn junk_is_an_error_not_a_panic() {
        assert!(verify(b"not a recording")["error"].is_string());
    }
}
