//! Fuzzes the reliable channel putting large messages together from fragments that come
//! in any order, twice, or too long, against a model of what it must deliver.
#![no_main]

use lanyard_net::fuzzing::fragments;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    fragments(data);
});
