//! The HUD's numbers are honest: an idle client on a clean link shows no loss and the
//! ping its server shows for it; a silent server is shown as silent, not as loss, and so
//! is a frozen client in the host's list; the net graph keeps ten seconds.

mod common;

use common::{hub_games, tick_together};
use lanyard_game::game::{GRAPH_SAMPLES, Game, TICK_HZ};

/// The server's figures for the client named `name`.
fn server_view(host: &Game, name: &str) -> lanyard_net::PeerStats {
    let sessions = host.net().sessions();
    let s = sessions.iter().find(|s| s.name == name).expect("a session");
    s.stats
}

#[test]
fn an_idle_client_shows_no_loss_and_the_ping_its_server_shows_for_it() {
    let hub = lanyard_net::Hub::new();
    let (mut host, mut clients) = hub_games(&hub, "hostess", &["ada"]);
    let mut ada = clients.remove(0);
    tick_together(&mut [&mut host, &mut ada], 3.0);
    assert!(ada.is_joined());
    // Ten seconds of a world at rest, where the server has little to say: the longest it
    // stays silent is no loss, however long that is.
    let (mut worst_loss, mut longest_silence) = (0.0f32, 0.0f32);
    for _ in 0..(10.0 * TICK_HZ) as usize {
        host.tick(1.0 / TICK_HZ);
        ada.tick(1.0 / TICK_HZ);
        worst_loss = worst_loss.max(ada.loss());
        let silence = ada.net().server_stats().expect("connected").silence_ms;
        longest_silence = longest_silence.max(silence);
        assert_eq!(ada.silence(), None, "a live server is never shown silent");
    }
    assert!(
        longest_silence > 250.0,
        "the server was quiet for a while ({longest_silence} ms at most), which once read as loss"
    );
    assert_eq!(worst_loss, 0.0, "loss on a clean link");
    assert_eq!(server_view(&host, "ada").loss, 0.0);
    let ping = ada.ping_ms().expect("a ping");
    let theirs = server_view(&host, "ada").ping_ms;
    assert!(
        (ping - theirs).abs() <= 2.0,
        "ada reads {ping} ms, the server {theirs} ms for her"
    );
    let line = host.players_table().join("\n");
    assert!(line.contains("loss  0%"), "{line}");
}

#[test]
fn a_silent_server_and_a_frozen_client_show_as_silent_not_as_loss() {
    let hub = lanyard_net::Hub::new();
    let (mut host, mut clients) = hub_games(&hub, "hostess", &["ada"]);
    let mut ada = clients.remove(0);
    tick_together(&mut [&mut host, &mut ada], 3.0);
    // The server stops answering (hung, or its machine gone).
    tick_together(&mut [&mut ada], 2.5);
    let silence = ada.silence().expect("shown silent");
    assert!((2.0..=3.0).contains(&silence), "silent {silence} s");
    assert_eq!(
        ada.loss(),
        0.0,
        "nothing sent was lost: it was not answered"
    );
    // It speaks again.
    tick_together(&mut [&mut host, &mut ada], 1.0);
    assert_eq!(ada.silence(), None);
    // Now ada freezes: the host's list says she is silent, not her last ping and loss.
    tick_together(&mut [&mut host], 3.0);
    let table = host.players_table().join("\n");
    let row = table
        .lines()
        .find(|l| l.contains("ada"))
        .expect("ada's row");
    assert!(row.contains("silent 3 s"), "{row}");
    assert!(!row.contains("ping"), "{row}");
    tick_together(&mut [&mut host, &mut ada], 6.0);
    assert_eq!(ada.presentation().graph().len(), GRAPH_SAMPLES);
    let row = host.players_table().join("\n");
    assert!(!row.contains("silent"), "{row}");
}

#[test]
fn a_body_a_player_holds_is_tinted_with_that_player_s_own_colour() {
    use lanyard::{KindId, Owner};
    let hub = lanyard_net::Hub::new();
    let (mut host, mut clients) = hub_games(&hub, "hostess", &["ada", "bob"]);
    let (mut ada, mut bob) = (clients.remove(0), clients.remove(0));
    tick_together(&mut [&mut host, &mut ada, &mut bob], 2.0);
    let player = KindId::of_name(lanyard_game::kinds::PLAYER);
    for who in [&ada, &bob] {
        let id = who.net().client_id().expect("joined");
        // The colour of the player body this client owns, as every peer sees it.
        let body = host
            .group()
            .iter()
            .find(|e| e.kind() == player && e.owner() == Owner::Client(id))
            .map(|e| e.visual.color)
            .expect("its player is in the host's world");
        for seen_by in [&host, &ada, &bob] {
            assert_eq!(
                lanyard_game::kinds::player_color_of(seen_by.group(), id),
                Some(body),
                "the tint of {:?}'s bodies on {:?}'s screen",
                who.my_name(),
                seen_by.my_name()
            );
        }
    }
}
