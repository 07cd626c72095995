//! Recordings stay small and exact: a resting world grows by well under a kilobyte a
//! second, a server's recording of the cube field with a player throwing grenades into it
//! stays under 1 MB for 12 s, and the asteroid scene (250 bodies that never rest) records
//! under 20 kB a second. All replay bit-exact, and a changed input is found at its tick.

use lanyard::GroupConfig;
use lanyard::prelude::*;
use lanyard::record::{Op, Recording};
use lanyard::replay::Replay;
use lanyard_demo as demo;
use lanyard_game::bot::Bot;
use lanyard_game::game::{Game, Options, TICK_HZ};
use lanyard_game::kinds;
use lanyard_game::scene::Scene;
use lanyard_net::NetConfig;
use lanyard_tests::demo_registry;
use lanyard_tests::scenario::{DemoScenario, add_scenery, asteroid_field};
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
    let mut bytes = g.take_recording().expect("recording");
    let start = bytes.len();
    let seconds = 20;
    for _ in 0..seconds * 60 {
        g.frame();
        if g.tick().is_multiple_of(60) {
            bytes.extend(g.take_recording().expect("recording"));
        }
    }
    bytes.extend(g.take_recording().expect("recording"));
    let per_second = (bytes.len() - start) as f64 / f64::from(seconds);
    eprintln!(
        "initial world {start} bytes for 400 crates; {per_second:.0} bytes per second at rest"
    );
    assert!(per_second <= 1024.0, "{per_second:.0} bytes per second");
    let mut r = Replay::open(&bytes, demo_registry()).unwrap();
    assert_eq!(r.len(), seconds as usize * 60);
    assert_eq!(r.verify(|_, _| {}).unwrap(), None);
}

/// The grenade-heavy 12 s: the cube field, a bot walking through it and throwing as it
/// likes (a grenade every 1.5 s or so), recorded on the server.
#[test]
fn twelve_grenade_heavy_seconds_of_the_cube_field_fit_in_1_mb_and_replay_exactly() {
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
    server
        .group_mut()
        .start_recording("cubes", "server")
        .unwrap();
    let mut bytes = server.group_mut().take_recording().expect("recording");
    let mut brain = Bot::new(5, None);
    let ticks = 12 * TICK_HZ as usize;
    let mut throws = 0;
    for t in 0..ticks {
        let input = brain.input(&player, dt, f32::INFINITY);
        throws += usize::from(input.throw.is_some());
        player.set_input(input);
        server.tick(dt);
        player.tick(dt);
        if t % 60 == 59 && t + 1 < ticks {
            bytes.extend(server.group_mut().take_recording().expect("recording"));
        }
    }
    bytes.extend(server.group_mut().stop_recording().unwrap());
    let awake = server
        .group()
        .iter()
        .filter(|e| !e.body().is_sleeping())
        .count();
    eprintln!(
        "12 s of the cube field, {throws} throws: {} bytes ({awake} bodies awake at the end)",
        bytes.len()
    );
    assert!(throws >= 5, "grenades flew: {throws}");
    assert!(
        awake >= 300,
        "the grenades knocked cubes about: {awake} awake"
    );
    assert!(bytes.len() <= 1_000_000, "{} bytes", bytes.len());
    let registry = Arc::new(kinds::registry());
    let mut r = Replay::open(&bytes, registry.clone()).unwrap();
    assert_eq!(r.len(), ticks);
    assert_eq!(r.verify(|_, _| {}).unwrap(), None);

    // The crates' sections are not in the file: the replay's crates write them again, and
    // an explosion's push reaches them as a recorded input. A push changed by a little is
    // found at its tick, and the crate it pushed is named at the next body frame.
    let mut rec = Recording::from_bytes(&bytes).unwrap();
    let (tick, net) = rec
        .ticks
        .iter_mut()
        .find_map(|t| {
            t.ops
                .iter_mut()
                .find_map(|op| match op {
                    Op::Input { net, input } if input.len() == 12 => {
                        let x = f32::from_le_bytes(input[0..4].try_into().unwrap());
                        input[0..4].copy_from_slice(&(x * 1.01).to_le_bytes());
                        Some(*net)
                    }
                    _ => None,
                })
                .map(|net| (t.tick, net))
        })
        .expect("an explosion pushed a crate");
    let mut r = Replay::from_recording(rec, registry).unwrap();
    let d = r
        .verify(|_, _| {})
        .unwrap()
        .expect("a changed push diverges");
    assert_eq!(d.tick, tick, "{d}");
    assert!(d.entities.iter().any(|e| e.net == net), "{d}");
}

/// The asteroid scene of the bench (250 bodies that never rest, 30 broadcasts a second),
/// recorded on the server for 10 s.
#[test]
fn the_asteroid_scene_records_under_20_kb_a_second() {
    let config = NetConfig {
        rate: 30.0,
        ..NetConfig::default()
    };
    let mut s = asteroid_field(demo_registry(), config.clone(), None, (250, 5));
    s.add_client(config, "ann", None);
    s.join_within(5.0);
    s.server
        .group
        .start_recording("asteroids", "server")
        .unwrap();
    let mut bytes = s.server.group.take_recording().expect("recording");
    let seconds = 10;
    for _ in 0..seconds {
        s.run_for(1.0);
        bytes.extend(s.server.group.take_recording().expect("recording"));
    }
    bytes.extend(s.server.group.stop_recording().unwrap());
    let initial = Recording::from_bytes(&bytes).unwrap().snapshot.len();
    let rec = Recording::from_bytes(&bytes).unwrap();
    let per_second = bytes.len() as f64 / f64::from(seconds);
    eprintln!(
        "asteroids: {} bytes in {seconds} s ({per_second:.0} B/s; the initial world \
         {initial} B unpacked), {} ticks",
        bytes.len(),
        rec.ticks.len()
    );
    assert!(per_second <= 20_000.0, "{per_second:.0} B/s");
    let mut r = Replay::from_recording(rec, demo_registry()).unwrap();
    assert_eq!(r.verify(|_, _| {}).unwrap(), None);
}
