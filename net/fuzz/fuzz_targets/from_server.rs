//! Fuzzes the client behind the seal: the bytes, sealed with the session key as a modified
//! server would send them, reach the DATA header, the reliable messages (spawns, events)
//! and the state entries.
#![no_main]

use lanyard_net::fuzzing::{Fixture, from_server};
use libfuzzer_sys::fuzz_target;

thread_local! {
    static FIXTURE: Fixture = Fixture::new(&lanyard_demo::fuzz_world());
}

fuzz_target!(|data: &[u8]| {
    FIXTURE.with(|fx| {
        from_server(fx, data);
    });
});
