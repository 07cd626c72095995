//! Succession, the first part of host migration, on the hub: the server keeps every client
//! told who would take the game over if it went, in order (the players, longest in the
//! game first; never a spectator), with the address it sees each at; the list follows
//! players who come, go and resume.

use lanyard_net::harness::hub_addr;
use lanyard_net::{NetConfig, Successor};
use lanyard_tests::scenario::{DemoScenario, Scenario, crates_and_balls};

/// The names in a succession, in order.
fn names(list: &[Successor]) -> Vec<&str> {
    list.iter().map(|s| s.name.as_str()).collect()
}

/// Whether every client still in session holds the server's list.
fn all_told(s: &Scenario) -> bool {
    let list = s.server.net.succession();
    s.clients
        .iter()
        .filter(|c| c.net.is_connected())
        .all(|c| c.net.succession() == list)
}

#[test]
fn every_client_is_told_the_succession_and_it_follows_players_who_come_and_go() {
    let mut s = Scenario::new(NetConfig::default(), None, 60.0, |g| crates_and_balls(g, 4));
    s.add_client(NetConfig::default(), "ann", None);
    s.join_within(2.0);
    s.add_client(NetConfig::default(), "bob", None);
    let watching = NetConfig {
        spectator: true,
        ..NetConfig::default()
    };
    s.add_client(watching, "eve", None);
    s.join_within(2.0);
    assert!(s.run_until(2.0, all_told), "not every client was told");

    // The players, longest in the game first, each where the server sees it; never the
    // spectator, who is told too.
    let list = s.server.net.succession();
    assert_eq!(names(&list), ["ann", "bob"]);
    assert_eq!(
        list.iter().map(|x| x.addr).collect::<Vec<_>>(),
        [hub_addr(1), hub_addr(2)]
    );
    assert_eq!(names(&s.clients[2].net.succession()), ["ann", "bob"]);
    let ann = s.clients[0].net.client_id().unwrap();
    assert_eq!(list[0].client, ann);

    // A newcomer goes last, and everyone hears.
    s.add_client(NetConfig::default(), "cat", None);
    s.join_within(2.0);
    assert!(s.run_until(2.0, all_told));
    assert_eq!(names(&s.clients[0].net.succession()), ["ann", "bob", "cat"]);

    // ann's link drops and she resumes: she keeps her place at the head.
    s.clients[0].cut = true;
    s.run_for(7.0);
    assert_eq!(
        names(&s.server.net.succession()),
        ["bob", "cat"],
        "a session kept for a resume is no successor"
    );
    assert!(s.run_until(2.0, all_told));
    s.clients[0].cut = false;
    assert!(s.run_until(8.0, |s| s.clients[0].net.is_connected()));
    assert!(s.run_until(3.0, all_told));
    assert_eq!(names(&s.clients[1].net.succession()), ["ann", "bob", "cat"]);
    assert_eq!(names(&s.clients[0].net.succession()), ["ann", "bob", "cat"]);

    // bob leaves: the rest hear the list without him.
    let (group, net) = {
        let c = &mut s.clients[1];
        (&mut c.group, &mut c.net)
    };
    net.disconnect(group);
    assert!(s.run_until(2.0, |s| names(&s.server.net.succession()) == ["ann", "cat"]));
    assert!(s.run_until(2.0, all_told));
    assert_eq!(names(&s.clients[3].net.succession()), ["ann", "cat"]);
    assert_eq!(names(&s.clients[2].net.succession()), ["ann", "cat"]);
}

#[test]
fn a_player_that_cannot_host_is_no_successor_and_every_client_hears_so() {
    let mut s = Scenario::new(NetConfig::default(), None, 60.0, |g| crates_and_balls(g, 4));
    s.add_client(NetConfig::default(), "page", None);
    s.join_within(2.0);
    s.add_client(NetConfig::default(), "ann", None);
    s.join_within(2.0);
    assert!(s.run_until(2.0, all_told));
    assert_eq!(names(&s.server.net.succession()), ["page", "ann"]);
    // The edge hears that the first player is a page behind a data channel (as
    // `WebTransport::can_host` tells the game): it is named no more, and the clients hear.
    s.server.net.cannot_host(hub_addr(1));
    assert_eq!(names(&s.server.net.succession()), ["ann"]);
    assert!(
        s.run_until(2.0, all_told),
        "the clients were not told again"
    );
    assert_eq!(names(&s.clients[0].net.succession()), ["ann"]);
    assert_eq!(names(&s.clients[1].net.succession()), ["ann"]);
}
