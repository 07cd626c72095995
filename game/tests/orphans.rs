//! A player whose game crashed keeps its place: the server holds its session for a
//! resume, and its copy of the player, which hears nothing from its owner any more, walks
//! on for half a second and then stands; in one process on the in-memory hub. (Found by
//! the explorer, `cargo run --release -p lanyard-tests --bin explore -- --seed 24`: the
//! server's copy walked off the yard and fell for the whole grace window.)

mod common;

use common::{hub_games, tick_together};
use lanyard::KindId;
use lanyard::prelude::*;
use lanyard_game::game::Game;
use lanyard_game::kinds::{PLAYER, PlayerInput};

/// Where the host holds the player of `owner`.
fn player_at(host: &Game, owner: Owner) -> Vec3 {
    let kind = KindId::of_name(PLAYER);
    host.group()
        .iter()
        .find(|e| e.kind() == kind && e.owner() == owner)
        .map(|e| e.body().translation())
        .expect("the host holds the player")
}

#[test]
fn a_crashed_players_copy_stops_where_it_was_instead_of_walking_off_the_yard() {
    let hub = lanyard_net::Hub::new();
    let (mut host, mut clients) = hub_games(&hub, "ada", &["bob"]);
    let mut bob = clients.remove(0);
    tick_together(&mut [&mut host, &mut bob], 3.0);
    let owner = Owner::Client(bob.net().client_id().expect("bob joined"));
    // bob walks across the yard, then his game is gone without a word.
    for _ in 0..10 {
        bob.set_input(PlayerInput {
            walk: [-1.0, 0.0],
            ..PlayerInput::default()
        });
        tick_together(&mut [&mut host, &mut bob], 1.0 / 60.0);
    }
    let last = player_at(&host, owner);
    drop(bob);
    tick_together(&mut [&mut host], 10.0);
    let now = player_at(&host, owner);
    assert!(
        now.y > host.scene().kill_y,
        "bob's player fell off the yard: {now}"
    );
    let walked = (now - last).length();
    assert!(
        walked < 5.0,
        "bob's player walked {walked:.1} m after his game went silent"
    );
}
