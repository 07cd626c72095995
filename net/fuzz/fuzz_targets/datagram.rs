//! Fuzzes the server's packet entry point: arbitrary bytes as datagrams from a stranger and
//! from an admitted client, bare and behind every valid header kind (none carries a valid
//! seal: `from_client` fuzzes what lies behind it).
#![no_main]

use lanyard_net::fuzzing::{Fixture, throw_at_server};
use libfuzzer_sys::fuzz_target;

thread_local! {
    static FIXTURE: Fixture = Fixture::new(&lanyard_demo::fuzz_world());
}

fuzz_target!(|data: &[u8]| {
    FIXTURE.with(|fx| {
        let (mut net, mut group) = fx.server();
        throw_at_server(&mut net, &mut group, data);
    });
});
