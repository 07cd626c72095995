//! A player whose game crashed keeps its place: the server holds its session for a
//! resume, and its copy of the player, which hears nothing from its owner any more, walks
//! on for half a second and then holds where its owner last put it, in the same place on
//! every screen; in one process on the in-memory hub. (Found by
//! the explorer, `cargo run --release -p lanyard-tests --bin explore -- --seed 24`: the
//! server's copy walked off the yard and fell for the whole grace window.)

mod common;

use common::{hub_games, tick_together};
use lanyard::KindId;
use lanyard::prelude::*;
use lanyard_game::game::Game;
use lanyard_game::kinds::{PLAYER, PlayerInput};

/// Where `host` (or any game) holds the player of `owner`.
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

#[test]
fn a_crashed_players_copies_hold_in_one_place_on_every_screen() {
    // Found by the explorer (seeds 24 and 47: a client killed; its player stood up to 1.8 m
    // apart on the host's screen and the others', since each copy walked on from where it
    // last heard of it, at its own moment).
    let hub = lanyard_net::Hub::new();
    let (mut host, mut clients) = hub_games(&hub, "ada", &["bob", "cat"]);
    let (mut bob, mut cat) = (clients.remove(0), clients.remove(0));
    tick_together(&mut [&mut host, &mut bob, &mut cat], 3.0);
    let owner = Owner::Client(bob.net().client_id().expect("bob joined"));
    // bob runs and jumps, and his game is gone mid-stride.
    for i in 0..40 {
        bob.set_input(PlayerInput {
            walk: [1.0, -1.0],
            jump: i == 20,
            ..PlayerInput::default()
        });
        tick_together(&mut [&mut host, &mut bob, &mut cat], 1.0 / 60.0);
    }
    drop(bob);
    tick_together(&mut [&mut host, &mut cat], 5.0);
    let (here, there) = (player_at(&host, owner), player_at(&cat, owner));
    assert!(
        (here - there).length() < 0.01,
        "bob's player at {here} on the host, at {there} on cat's screen"
    );
    // And it stays there.
    tick_together(&mut [&mut host, &mut cat], 5.0);
    assert!((player_at(&host, owner) - here).length() < 0.01);
    assert!((player_at(&cat, owner) - there).length() < 0.01);
}
