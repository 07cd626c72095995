//! The HUD's numbers are honest: the loss a client shows rises while the server is
//! silent, and falls back once it speaks again; the net graph keeps ten seconds.

mod common;

use common::{hub_games, tick_together};
use lanyard_game::game::GRAPH_SAMPLES;

#[test]
fn loss_rises_while_the_server_is_silent_and_the_graph_keeps_ten_seconds() {
    let hub = lanyard_net::Hub::new();
    let (mut host, mut clients) = hub_games(&hub, "hostess", &["ada"]);
    let mut ada = clients.remove(0);
    tick_together(&mut [&mut host, &mut ada], 3.0);
    assert!(ada.is_joined());
    assert!(ada.loss() < 0.1, "loss {} on a clean loopback", ada.loss());
    assert!(ada.ping_ms().is_some_and(|p| p >= 0.0));
    // The server stops answering (hung, or its machine gone): ada's loss climbs.
    tick_together(&mut [&mut ada], 2.5);
    assert!(
        ada.loss() > 0.9,
        "loss {} after 2.5 s of silence",
        ada.loss()
    );
    // It speaks again: the loss falls back (the datagrams the silence swallowed age out
    // of the estimate within a few seconds).
    tick_together(&mut [&mut host, &mut ada], 4.0);
    assert!(
        ada.loss() < 0.1,
        "loss {} once the server is back",
        ada.loss()
    );
    tick_together(&mut [&mut host, &mut ada], 5.0);
    assert_eq!(ada.graph.len(), GRAPH_SAMPLES);
    assert!(
        ada.graph.iter().any(|s| s.loss > 0.9),
        "the silence is on the graph"
    );
}
