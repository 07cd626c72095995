//! The score table is everyone's: a spectator who joins after the players has it at once,
//! and a player who left keeps the points she had but scores no more (her row stays, and
//! no row comes under a made-up name); in one process on the in-memory hub.

mod common;

use common::{hub_addr, hub_games, knock_off, local_options, tick_together};
use lanyard::prelude::*;
use lanyard_game::game::Game;

#[test]
fn a_late_spectator_has_the_table_and_a_departed_player_keeps_her_points_but_scores_no_more() {
    let hub = lanyard_net::Hub::new();
    let (mut host, mut clients) = hub_games(&hub, "hostess", &["ada"]);
    let mut ada = clients.remove(0);
    tick_together(&mut [&mut host, &mut ada], 2.0);
    let ada_owner = Owner::Client(ada.net().client_id().expect("ada joined"));
    knock_off(&mut host, ada_owner);
    tick_together(&mut [&mut host, &mut ada], 1.0);
    assert_eq!(
        host.presentation().scores(),
        [("ada".to_owned(), 1), ("hostess".to_owned(), 0)]
    );

    // eve comes to watch once nothing changes any more.
    let mut eve = Game::client_on(
        lanyard_game::game::Options {
            spectate: true,
            ..local_options("eve")
        },
        hub.endpoint(hub_addr(9)),
        hub_addr(1),
        [9; 32],
    )
    .unwrap();
    tick_together(&mut [&mut host, &mut ada, &mut eve], 2.0);
    assert!(eve.is_joined());
    assert_eq!(
        eve.presentation().scores(),
        host.presentation().scores(),
        "the spectator's table is everyone's"
    );
    assert_eq!(ada.presentation().scores(), host.presentation().scores());

    // ada leaves; a crate she pushed before falls off afterwards.
    ada.shutdown();
    tick_together(&mut [&mut host, &mut eve], 1.0);
    knock_off(&mut host, ada_owner);
    tick_together(&mut [&mut host, &mut eve], 1.0);
    let table = [("ada".to_owned(), 1), ("hostess".to_owned(), 0)];
    assert_eq!(
        host.presentation().scores(),
        table,
        "ada keeps her point, and no more"
    );
    assert_eq!(
        eve.presentation().scores(),
        table,
        "the spectator still shows it"
    );
    assert!(
        !eve.players_here().contains("ada") && eve.players_here().contains("hostess"),
        "ada's row is shown greyed: no player of hers is in the game"
    );
}

#[test]
fn a_point_pops_up_on_every_screen_with_who_scored() {
    let hub = lanyard_net::Hub::new();
    let (mut host, mut clients) = hub_games(&hub, "hostess", &["ada"]);
    let mut ada = clients.remove(0);
    tick_together(&mut [&mut host, &mut ada], 2.0);
    assert!(host.presentation().popups().is_empty() && ada.presentation().popups().is_empty());
    let ada_owner = Owner::Client(ada.net().client_id().expect("ada joined"));
    knock_off(&mut host, ada_owner);
    tick_together(&mut [&mut host, &mut ada], 0.5);
    for g in [&host, &ada] {
        let who: Vec<&str> = g
            .presentation()
            .popups()
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(who, ["ada"], "{:?}'s popups", g.my_name());
    }
    assert_eq!(
        host.presentation().popups()[0].at,
        ada.presentation().popups()[0].at,
        "the same place"
    );
}
