//! Chat: a client's line goes to the server on the reliable channel, which cleans it,
//! limits each player's rate and passes it to everyone with the sender's name.

use super::{CHAT_BURST, CHAT_MAX, CHAT_WINDOW, Game};
use crate::events::GameEvent;
use crate::game::text::clean_line;
use lanyard::prelude::*;

impl Game {
    /// Sends a chat line from this peer's player: a client sends it to the server, which
    /// passes it on to everyone; a host passes it on itself. Control characters are
    /// removed and it is cut to [`CHAT_MAX`] characters; empty lines are not sent.
    pub fn chat(&mut self, text: &str) {
        let text: String = clean_line(text).chars().take(CHAT_MAX).collect();
        if text.trim().is_empty() {
            return;
        }
        if self.is_server() {
            let from = self.my_name.clone().unwrap_or_else(|| "server".into());
            self.pass_on(from, text);
        } else if let Err(e) = self.net.send_event(GameEvent::Chat { text }.encode()) {
            self.messages.push(format!("cannot chat: {e}"));
        }
    }

    /// Server: a chat line from a client: cleaned, cut, rate-limited (at most
    /// [`CHAT_BURST`] lines in [`CHAT_WINDOW`] seconds; more are dropped and counted), then
    /// sent to everyone with the client's name.
    pub(super) fn relay_chat(&mut self, client: ClientId, text: &str) {
        let now = self.net.now();
        let Some(s) = &mut self.server else {
            return;
        };
        let times = s.chat_times.entry(client).or_default();
        times.retain(|t| now - t < CHAT_WINDOW);
        if times.len() >= CHAT_BURST {
            self.chat_dropped += 1;
            return;
        }
        times.push(now);
        let text: String = clean_line(text).chars().take(CHAT_MAX).collect();
        if text.trim().is_empty() {
            return;
        }
        let from = self.name_of(Owner::Client(client));
        self.pass_on(from, text);
    }

    /// Server: shows a clean chat line, logs it, and sends it to everyone.
    fn pass_on(&mut self, from: String, text: String) {
        tracing::info!("chat {from}: {text}");
        self.messages.push(format!("{from}: {text}"));
        let _ = self
            .net
            .send_event(GameEvent::ChatLine { from, text }.encode());
    }
}
