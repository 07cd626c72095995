//! Chat, with games in one process on the in-memory hub: a line reaches every player with its
//! sender's name, control characters removed and cut to length; a flood is rate-limited.

mod common;

use common::{hub_games, tick_together};
use lanyard_game::game::{CHAT_BURST, CHAT_MAX, Game};

fn chat_lines(g: &Game) -> Vec<String> {
    g.presentation()
        .messages()
        .iter()
        .filter(|m| m.starts_with("ada: ") || m.starts_with("hostess: "))
        .cloned()
        .collect()
}

#[test]
fn chat_reaches_everyone_cleaned_cut_and_rate_limited() {
    let hub = lanyard_net::Hub::new();
    let (mut host, clients) = hub_games(&hub, "hostess", &["ada", "bob"]);
    let [mut ada, mut bob]: [Game; 2] = clients.try_into().ok().unwrap();
    tick_together(&mut [&mut host, &mut ada, &mut bob], 1.5);
    assert!(ada.is_joined() && bob.is_joined());

    ada.chat("hello\u{7} yard\n");
    host.chat("welcome");
    tick_together(&mut [&mut host, &mut ada, &mut bob], 0.5);
    for (who, g) in [("host", &host), ("ada", &ada), ("bob", &bob)] {
        let lines = chat_lines(g);
        assert!(
            lines.contains(&"ada: hello yard".to_owned()),
            "{who}: {lines:?}"
        );
        assert!(
            lines.contains(&"hostess: welcome".to_owned()),
            "{who}: {lines:?}"
        );
    }

    let long = "x".repeat(3 * CHAT_MAX);
    ada.chat(&long);
    tick_together(&mut [&mut host, &mut ada, &mut bob], 0.5);
    let cut = format!("ada: {}", "x".repeat(CHAT_MAX));
    assert!(
        chat_lines(&bob).contains(&cut),
        "the long line is cut to {CHAT_MAX}"
    );

    // A flood: only the burst gets through; the rest is dropped and counted.
    bob.clear_messages();
    for i in 0..CHAT_BURST + 4 {
        ada.chat(&format!("spam {i}"));
    }
    tick_together(&mut [&mut host, &mut ada, &mut bob], 0.5);
    let got = chat_lines(&bob).len();
    // Two lines of this window went already (the greeting and the long one).
    assert_eq!(got, CHAT_BURST - 2, "{:?}", bob.presentation().messages());
    assert_eq!(
        host.chat_dropped() as usize,
        CHAT_BURST + 4 - (CHAT_BURST - 2)
    );
}
