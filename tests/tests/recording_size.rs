//! Recordings stay small and exact: a resting world grows by well under a kilobyte a
//! second, and a server's recording of the cube field with a player knocking cubes about
//! stays under 3 MB for 12 s. Both replay bit-exact.

use lanyard::GroupConfig;
use lanyard::prelude::*;
use lanyard::replay::Replay;
use lanyard_demo as demo;
use lanyard_game::bot::Bot;
use lanyard_game::game::{Game, Options, TICK_HZ};
use lanyard_game::kinds;
use lanyard_game::scene::Scene;
use lanyard_tests::demo_registry;
use lanyard_tests::scenario::add_scenery;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

#[test]
fn a_resting_world_grows_by_well_under_a_kilobyte_a_second() {
    let mut g = EntityGroup::new(demo_registry(), GroupConfig::default());
    add_scenery(&mut g);
    for i in 0..400 {
        let pos = [
            (i % 20) as f32 * 1.1 - 10.0,
            0.5,
            (i / 20) as f32 * 1.1 - 10.0,
        ];
        let params = demo::CrateParams {
            pos,
            half_extents: [0.5; 3],
            color: [200; 4],
            can_sleep: true,
        };
        g.spawn(demo::CRATE, &params, Owner::Server).unwrap();
    }
    for _ in 0..600 {
        if g.iter().all(|e| e.body().is_sleeping()) {
            break;
        }
        g.frame();
    }
    assert!(g.iter().all(|e| e.body().is_sleeping()), "the crates rest");
    g.start_recording("400 crates", "test").unwrap();
    let mut bytes = g.take_recording();
    let start = bytes.len();
    let seconds = 20;
    for _ in 0..seconds * 60 {
        g.frame();
        if g.tick().is_multiple_of(60) {
            bytes.extend(g.take_recording());
        }
    }
    bytes.extend(g.take_recording());
    let per_second = (bytes.len() - start) as f64 / f64::from(seconds);
    eprintln!(
        "initial world {start} bytes for 400 crates; {per_second:.0} bytes per second at rest"
    );
    assert!(per_second <= 1024.0, "{per_second:.0} bytes per second");
    let mut r = Replay::open(&bytes, demo_registry()).unwrap();
    assert_eq!(r.len(), seconds as usize * 60);
    assert_eq!(r.verify(|_, _| {}).unwrap(), None);
}

#[test]
fn twelve_seconds_of_the_cube_field_with_a_player_fit_in_3_mb_and_replay_exactly() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/cubes.toml");
    let scene = Scene::load(&path).unwrap();
    let options = |name: &str| Options {
        port: 0,
        name: name.to_owned(),
        rate: 30.0,
        ..Options::new(scene.clone())
    };
    let mut server = Game::server(options("server"), None).unwrap();
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, server.local_addr().port()));
    let mut player = Game::client(options("knocker"), addr, [3; 32]).unwrap();
    let dt = 1.0 / TICK_HZ;
    for _ in 0..120 {
        server.tick(dt);
        player.tick(dt);
    }
    assert!(player.my_player().is_some(), "the player joined");
    server.group.start_recording("cubes", "server").unwrap();
    let mut bytes = server.group.take_recording();
    let mut brain = Bot::new(5, None);
    let ticks = 12 * TICK_HZ as usize;
    let mut moved = 0;
    for t in 0..ticks {
        // It walks through the field, pushing cubes aside (no grenades: see the bandwidth
        // bench for those).
        let mut input = brain.input(&player, dt, f32::INFINITY);
        input.throw = None;
        player.set_input(input);
        server.tick(dt);
        player.tick(dt);
        if t % 60 == 59 {
            bytes.extend(server.group.take_recording());
        }
    }
    bytes.extend(server.group.take_recording());
    for e in server.group.iter() {
        if !e.body().is_sleeping() {
            moved += 1;
        }
    }
    eprintln!(
        "12 s of the cube field: {} bytes ({moved} bodies awake at the end)",
        bytes.len()
    );
    assert!(moved >= 10, "the player knocked cubes about: {moved} awake");
    assert!(bytes.len() <= 3_000_000, "{} bytes", bytes.len());
    let registry = Arc::new(kinds::registry());
    let mut r = Replay::open(&bytes, registry).unwrap();
    assert_eq!(r.len(), ticks);
    assert_eq!(r.verify(|_, _| {}).unwrap(), None);
}
