//! Fuzzes both sides' handshakes: challenges and refusals to a client that said hello,
//! sealed welcomes and refusals to one that answered the challenge, and sealed requests
//! behind a good cookie to the server.
#![no_main]

use lanyard_net::fuzzing::{Handshake, handshake};
use libfuzzer_sys::fuzz_target;

thread_local! {
    static HANDSHAKE: Handshake = Handshake::new(&lanyard_demo::fuzz_world());
}

fuzz_target!(|data: &[u8]| {
    HANDSHAKE.with(|hs| handshake(hs, data));
});
