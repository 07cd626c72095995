//! Fuzzes recordings: the bytes opened as a recording of the demo kinds and replayed.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| lanyard_net::fuzzing::recording(data, lanyard_demo::registry()));
