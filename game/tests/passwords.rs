//! A locked game, as a player hears it: one who gave no password is told the game wants
//! one (not that a password was wrong), one who gave a wrong one is told so, and the right
//! one gets in; in one process on the in-memory hub.

mod common;

use common::{hub_addr, local_options, tick_together};
use lanyard_game::game::{Game, Options};

#[test]
fn no_password_and_a_wrong_one_are_told_apart_and_the_right_one_gets_in() {
    let hub = lanyard_net::Hub::new();
    let mut host = Game::server_on(
        Options {
            password: Some("open sesame".into()),
            ..local_options("yard")
        },
        Some("hostess".into()),
        hub.endpoint(hub_addr(1)),
    )
    .unwrap();
    let player = |n: u8, password: Option<&str>| {
        let options = Options {
            password: password.map(str::to_owned),
            ..local_options(&format!("p{n}"))
        };
        Game::client_on(options, hub.endpoint(hub_addr(n)), hub_addr(1), [n; 32]).unwrap()
    };
    let (mut none, mut wrong, mut right) = (
        player(2, None),
        player(3, Some("nope")),
        player(4, Some("open sesame")),
    );
    tick_together(&mut [&mut host, &mut none, &mut wrong, &mut right], 2.0);
    assert_eq!(
        none.ended(),
        Some("this game is locked: it wants a password")
    );
    assert_eq!(
        none.end_reason(),
        Some("refused: wrong password"),
        "the key tools read"
    );
    assert_eq!(wrong.ended(), Some("the server refused us: wrong password"));
    assert!(none.wants_password().is_some() && wrong.wants_password().is_some());
    assert!(!none.gave_password() && wrong.gave_password());
    assert!(right.is_joined() && right.ended().is_none());
}
