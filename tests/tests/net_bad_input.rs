//! Bad input at the packet entry point: arbitrary datagrams never panic the server, and a
//! stranger's garbage costs legitimate clients nothing.

use lanyard_demo::fuzz_world;
use lanyard_net::MAX_FRAGMENT;
use lanyard_net::fuzzing::{self, CLIENT, Fixture, Handshake, server_with_client, throw_at_server};
use lanyard_net::{NetConfig, Transport};
use lanyard_tests::scenario::{DemoScenario, Scenario, crates_and_balls};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_datagrams_never_panic_the_server(data in prop::collection::vec(any::<u8>(), 0..1500)) {
        let (mut net, mut group) = server_with_client(&fuzz_world());
        throw_at_server(&mut net, &mut group, &data);
        // And it still runs frames afterwards.
        for _ in 0..3 {
            net.update(&mut group, 1.0 / 60.0);
        }
    }

    #[test]
    fn a_strangers_garbage_costs_the_clients_nothing(
        datagrams in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 1..40),
    ) {
        let mut s = Scenario::new(NetConfig::default(), None, 60.0, |g| crates_and_balls(g, 3));
        s.add_client(NetConfig::default(), "ann", None);
        s.add_client(NetConfig::default(), "bob", None);
        prop_assert!(s.run_until(2.0, |s| s.all_joined()));
        let mut rogue = s.hub.endpoint(std::net::SocketAddr::from(([127, 0, 0, 66], 1)));
        for d in &datagrams {
            rogue.send(lanyard_tests::scenario::hub_addr(0), d);
            s.step();
        }
        s.run_for(1.0);
        prop_assert_eq!(s.server.net.clients().len(), 2);
        prop_assert!(s.clients.iter().all(|c| c.net.is_connected()));
    }

    #[test]
    fn messages_cut_into_fragments_come_back_whole_in_any_order_of_arrival(
        sizes in prop::collection::vec(0..4 * MAX_FRAGMENT, 1..6),
        shuffle in any::<u64>(),
        again in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let mut cut = Vec::new();
        for &size in &sizes {
            let n = size.div_ceil(MAX_FRAGMENT).max(1);
            for k in 0..n {
                let len = (size - k * MAX_FRAGMENT).min(MAX_FRAGMENT) as u16;
                cut.push((cut.len() as u16, k + 1 < n, len));
            }
        }
        // Some arrive twice; then all in an order the seed draws.
        let twice: Vec<_> = again.iter().map(|i| cut[i.index(cut.len())]).collect();
        cut.extend(twice);
        let mut state = shuffle | 1;
        for i in (1..cut.len()).rev() {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            cut.swap(i, (state >> 33) as usize % (i + 1));
        }
        let got = fuzzing::fragments(&fuzzing::fragment_input(&cut));
        let lens: Vec<usize> = got.iter().map(Vec::len).collect();
        prop_assert_eq!(lens, sizes);
    }
}

#[test]
fn the_fuzz_harness_admits_its_client() {
    // The harness the fuzz target uses must really reach a session, or fuzzing the client
    // path would test nothing.
    let (net, _) = server_with_client(&fuzz_world());
    assert_eq!(net.clients().len(), 1);
    assert!(net.peer_stats(lanyard::ClientId(1)).is_some());
    let _ = CLIENT;
}

/// Every file under `net/fuzz/<dir>/<target>/`, by target.
fn fuzz_inputs(dir: &str) -> Vec<(String, Vec<u8>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../net/fuzz")
        .join(dir);
    let mut out = Vec::new();
    for target in std::fs::read_dir(&root).expect("the fuzz directory") {
        let target = target.expect("an entry").path();
        for file in std::fs::read_dir(&target).expect("a target's directory") {
            let bytes = std::fs::read(file.expect("an entry").path()).expect("a file");
            let name = target.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, bytes));
        }
    }
    out.sort();
    out
}

/// Runs `data` through the fuzz target `target`, as `cargo fuzz` would.
fn run_target(target: &str, data: &[u8], fx: &Fixture, hs: &Handshake) {
    match target {
        "datagram" => {
            let (mut net, mut group) = fx.server();
            throw_at_server(&mut net, &mut group, data);
        }
        "from_client" => fuzzing::from_client(fx, data),
        "from_server" => {
            fuzzing::from_server(fx, data);
        }
        "handshake" => fuzzing::handshake(hs, data),
        "sections" => fuzzing::sections(fx, data),
        "discovery" => fuzzing::discovery(data),
        "recording" => fuzzing::recording(data, lanyard_demo::registry()),
        "fragments" => {
            fuzzing::fragments(data);
        }
        "rendezvous" => {}
        other => panic!("no fuzz target {other}"),
    }
}

/// Every crash the fuzzers found (`net/fuzz/regressions/<target>/`) stays fixed, and every
/// seed of the committed corpus runs through its target: the harness the fuzz targets use
/// keeps working, so `cargo fuzz` finds it working too.
#[test]
fn fuzz_regressions_and_seeds_run_clean() {
    let (fx, hs) = (Fixture::new(&fuzz_world()), Handshake::new(&fuzz_world()));
    let regressions = fuzz_inputs("regressions");
    assert!(!regressions.is_empty());
    for (target, data) in regressions.iter().chain(&fuzz_inputs("corpus")) {
        run_target(target, data, &fx, &hs);
    }
}

/// A recording whose header claims a string of 2^40 bytes is refused as damaged, without
/// trying to allocate them (the first crash the `recording` fuzz target found).
#[test]
fn a_recording_header_that_claims_too_much_is_refused() {
    let mut r = lanyard_demo::mixed_recording(10);
    // The header starts after magic, version and its length: its first field is the scene
    // name, a varint length (251 = the next u64 is the length) and bytes.
    let at = 12;
    r.splice(at..at + 1, [253u8, 0, 0, 0, 0, 0, 1, 0, 0]);
    let err = lanyard::replay::Replay::open(&r, lanyard_demo::registry()).err();
    assert!(
        matches!(
            err,
            Some(lanyard::Error::Record(
                lanyard::RecordError::RecordingCorrupted { tick: None }
            ))
        ),
        "{err:?}"
    );
}

/// A state entry that says "the same as before, for this entity and the next 2^28 ids" is
/// malformed (a run names consecutive entities the client holds): the client counts it and
/// reads no further, instead of walking 2^28 ids (the fuzzer's input took 51 s and 1.7 GB).
#[test]
fn a_run_longer_than_the_world_is_refused_as_malformed() {
    let fx = Fixture::new(&fuzz_world());
    let before = fx.client().0.server_stats().unwrap().bad_datagrams;
    let slow = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../net/fuzz/regressions/from_server/slow-unit-097561aaf3d5fbb7dc6151dc3f7f5725a2513dd7",
    ))
    .unwrap();
    let client = fuzzing::from_server(&fx, &slow);
    let after = client.server_stats().unwrap().bad_datagrams;
    assert!(after > before, "bad datagrams {before} -> {after}");
}
