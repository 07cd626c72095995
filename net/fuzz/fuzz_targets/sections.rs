//! Fuzzes the section decoders: the bytes as a packet of sections, from the server to a
//! client's world and from a client to the server's.
#![no_main]

use lanyard_net::fuzzing::{Fixture, sections};
use libfuzzer_sys::fuzz_target;

thread_local! {
    static FIXTURE: Fixture = Fixture::new(&lanyard_demo::fuzz_world());
}

fuzz_target!(|data: &[u8]| {
    FIXTURE.with(|fx| sections(fx, data));
});
