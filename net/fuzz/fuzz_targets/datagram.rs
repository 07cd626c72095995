//! Fuzzes the server's packet entry point: arbitrary bytes as datagrams from a stranger and
//! from an admitted client, bare and behind every valid header kind.
#![no_main]

use lanyard_net::fuzzing::{server_with_client, throw_at_server};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (mut net, mut group) = server_with_client();
    throw_at_server(&mut net, &mut group, data);
});
