//! Bad input at the packet entry point: arbitrary datagrams never panic the server, and a
//! stranger's garbage costs legitimate clients nothing.

use lanyard_net::fuzzing::{CLIENT, server_with_client, throw_at_server};
use lanyard_net::{NetConfig, Transport};
use lanyard_tests::scenario::{DemoScenario, Scenario, crates_and_balls};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_datagrams_never_panic_the_server(data in prop::collection::vec(any::<u8>(), 0..1500)) {
        let (mut net, mut group) = server_with_client();
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
}

#[test]
fn the_fuzz_harness_admits_its_client() {
    // The harness the fuzz target uses must really reach a session, or fuzzing the client
    // path would test nothing.
    let (net, _) = server_with_client();
    assert_eq!(net.clients().len(), 1);
    assert!(net.peer_stats(lanyard::ClientId(1)).is_some());
    let _ = CLIENT;
}
