//! Fuzzes LAN discovery: the bytes as a request (never answered with more) and as an answer.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| lanyard_net::fuzzing::discovery(data));
