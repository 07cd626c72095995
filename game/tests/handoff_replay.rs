//! Tumbleyard with hand-off on (an arena that says `hand_off = true`), on the in-memory hub
//! with 20 ms each way: a dedicated server and two bots who walk into the crate stacks and
//! take them over; the server's recording replays bit for bit with the registry its own
//! header's arena gives (held crates' sections are brought forward by their holder's delay
//! only for a kind that allows hand-off, so a replay with another registry diverges).

mod common;

use common::{hub_addr, local_options};
use lanyard_game::bot::Bot;
use lanyard_game::game::{Game, TICK_HZ};
use lanyard_game::kinds;

#[test]
fn a_server_recording_of_bots_taking_crates_over_replays_bit_exact() {
    let hub = lanyard_net::Hub::new();
    let mut options = local_options("yard");
    options.scene.hand_off = true;
    let link = lanyard_net::Conditions {
        latency: 0.02,
        ..lanyard_net::Conditions::PERFECT
    };
    let ep = |n: u8| lanyard_net::Conditioned::new(hub.endpoint(hub_addr(n)), link, u64::from(n));
    let mut server = Game::server_on(options, None, ep(1)).unwrap();
    let dir = std::env::temp_dir().join(format!("lanyard-handoff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("server.lnyr");
    server.record_to(&path).unwrap();
    let mut bots: Vec<(Game, Bot)> = (0..2u8)
        .map(|i| {
            let n = i + 2;
            let mut o = local_options(&format!("bot-{i}"));
            o.scene.hand_off = true;
            let g = Game::client_on(o, ep(n), hub_addr(1), [n; 32]).unwrap();
            (g, Bot::new(u64::from(i) + 1, Some(12.0)))
        })
        .collect();
    let dt = 1.0 / TICK_HZ;
    let crate_kind = lanyard::KindId::of_name(kinds::CRATE);
    let mut held = 0;
    for i in 0..(12.0 * TICK_HZ) as usize {
        server.tick(dt);
        for (g, brain) in &mut bots {
            let input = brain.input(g, dt, 12.0 - i as f32 * dt);
            g.set_input(input);
            g.tick(dt);
        }
        held = held.max(
            server
                .group()
                .iter()
                .filter(|e| e.kind() == crate_kind && e.owner() != lanyard::Owner::Server)
                .count(),
        );
    }
    server.shutdown();
    assert!(held > 0, "no bot took a crate over");
    let bytes = std::fs::read(&path).unwrap();
    let mut replay = kinds::open_replay(&bytes).unwrap();
    let crates = lanyard::KindId::of_name(kinds::CRATE);
    let hand_off = replay
        .group()
        .registry()
        .options(crates)
        .is_some_and(|o| o.hand_off);
    assert!(hand_off, "the header's arena says hand-off");
    let diverged = replay.verify(|_, _| {}).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(diverged, None);
}
