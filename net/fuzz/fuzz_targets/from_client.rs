//! Fuzzes the server behind the seal: the bytes, sealed with the session key as a modified
//! client would send them, reach the DATA header, the reliable messages and the sections.
#![no_main]

use lanyard_net::fuzzing::{Fixture, from_client};
use libfuzzer_sys::fuzz_target;

thread_local! {
    static FIXTURE: Fixture = Fixture::new(&lanyard_demo::fuzz_world());
}

fuzz_target!(|data: &[u8]| {
    FIXTURE.with(|fx| from_client(fx, data));
});
