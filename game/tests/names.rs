//! Names never collide: two first-time players (both "player") and one who took the host's
//! name all get in, each under a name of its own, told to them; in one process on the
//! in-memory hub.

mod common;

use common::{hub_games, tick_together};

#[test]
fn players_with_a_taken_name_get_in_under_the_first_free_one_and_are_told() {
    let hub = lanyard_net::Hub::new();
    let (mut host, mut clients) = hub_games(&hub, "hostess", &["player", "player", "Hostess"]);
    for c in clients.iter_mut() {
        // One at a time, so the order of the numbers is known.
        tick_together(&mut [&mut host, c], 1.0);
    }
    let mut all: Vec<&mut lanyard_game::game::Game> = clients.iter_mut().collect();
    all.push(&mut host);
    tick_together(&mut all, 2.0);
    let names: Vec<_> = clients
        .iter()
        .map(|c| c.my_name().map(str::to_owned))
        .collect();
    assert_eq!(
        names,
        [
            Some("player".into()),
            Some("player (2)".into()),
            Some("Hostess (2)".into())
        ]
    );
    assert!(clients.iter().all(|c| c.is_joined() && c.ended().is_none()));
    assert!(
        clients[1]
            .presentation()
            .messages()
            .iter()
            .any(|m| m == "the name player is taken there: you play as player (2)"),
        "{:?}",
        clients[1].presentation().messages()
    );
    let mut on_host = host.player_names();
    on_host.sort();
    assert_eq!(
        on_host,
        ["Hostess (2)", "hostess", "player", "player (2)"],
        "the host's list, its own name among them"
    );
}
