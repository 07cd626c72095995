//! What people type: chat, and the server's console.
//!
//! Chat: a client's line goes to the server on the reliable channel, which cleans it,
//! limits each player's rate and passes it to everyone with the sender's name. The
//! dedicated server's console and the host's player list: `players`, `kick`, `ban`,
//! `say`, `quit`.

use super::{CHAT_MAX, Console, Game};
use crate::events::GameEvent;
use crate::game::text::{clean_line, count};
use lanyard::prelude::*;

const CONSOLE_HELP: &str =
    "commands: players | kick NAME [REASON] | ban NAME [REASON] | say TEXT | quit";

impl Game {
    /// Server: one command of the operator's console (`players`, `kick NAME [REASON]`,
    /// `ban NAME [REASON]`, `say TEXT`, `quit`, `help`).
    pub fn console(&mut self, line: &str) -> Console {
        let line = line.trim();
        let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let lines = match cmd {
            "" => Vec::new(),
            "players" => self.players_table(),
            "kick" | "ban" => {
                let (name, reason) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                if name.is_empty() {
                    vec![format!("usage: {cmd} NAME [REASON]")]
                } else {
                    self.kick(name, reason.trim(), cmd == "ban")
                }
            }
            "say" => {
                let text = clean_line(rest);
                let say = GameEvent::Say { text: text.clone() };
                let _ = self.link.net_mut().send_event(say.encode());
                self.say(format!("[server] {text}"));
                vec![format!("said: {text}")]
            }
            "quit" | "exit" => return Console::Quit,
            "help" => vec![CONSOLE_HELP.to_owned()],
            other => vec![format!("unknown command '{other}'. {CONSOLE_HELP}")],
        };
        Console::Lines(lines)
    }

    /// Server: every session, one line each: id, name, ping, loss, score, and whether it
    /// plays, watches or waits for a resume.
    pub fn players_table(&self) -> Vec<String> {
        let sessions = self.net().sessions();
        let watching = sessions.iter().filter(|s| s.spectator).count();
        let host = usize::from(self.host_name().is_some());
        let playing = sessions.len() - watching + host;
        let mut out = vec![format!(
            "{} playing, {} watching",
            count(playing, "player"),
            count(watching, "spectator")
        )];
        if let Some(h) = self.host_name() {
            let score = self.score_of(h);
            out.push(format!(
                "   0  {h:<16} ping    - ms  loss  -%  score {score:>3}  host"
            ));
        }
        for s in sessions {
            let score = self.score_of(&s.name);
            let what = match (s.spectator, s.suspended) {
                (_, true) => "reconnecting",
                (true, false) => "spectator",
                (false, false) => "player",
            };
            let link = match super::silent_for(&s.stats) {
                Some(_) => format!("{:<22}", super::link_text(&s.stats)),
                None => format!(
                    "ping {:>4.0} ms  loss {:>2.0}%",
                    s.stats.ping_ms,
                    s.stats.loss * 100.0
                ),
            };
            let relayed = if self.relayed_to(s.addr) {
                ", relayed"
            } else {
                ""
            };
            out.push(format!(
                "{:>4}  {:<16} {link}  score {score:>3}  {what}{relayed}",
                s.client.0, s.name,
            ));
        }
        out
    }

    /// Server: the points of the player named `name`.
    pub fn score_of(&self, name: &str) -> u32 {
        self.rules.as_ref().map_or(0, |s| s.score_of(name))
    }

    /// Server: removes the client named `name` (any case), telling it `reason`; with
    /// `ban`, the name is refused for the server's lifetime too. Returns lines to show.
    pub fn kick(&mut self, name: &str, reason: &str, ban: bool) -> Vec<String> {
        let mut out = Vec::new();
        if ban {
            let _ = self.link.net_mut().ban(name);
            out.push(format!("{name} is banned until the server stops"));
        }
        let who = self
            .net()
            .sessions()
            .into_iter()
            .find(|s| s.name.eq_ignore_ascii_case(name));
        match who {
            Some(s) => match self.link.net_mut().kick(&mut self.group, s.client, reason) {
                Ok(()) => out.push(format!("kicked {}", s.name)),
                Err(e) => out.push(format!("cannot kick {}: {e}", s.name)),
            },
            None if !ban => out.push(format!("no client is named {name}")),
            None => {}
        }
        out
    }

    /// Sends a chat line from this peer's player: a client sends it to the server, which
    /// passes it on to everyone; a host passes it on itself. Control characters are
    /// removed and it is cut to [`CHAT_MAX`] characters; empty lines are not sent.
    pub fn chat(&mut self, text: &str) {
        let text: String = clean_line(text).chars().take(CHAT_MAX).collect();
        if text.trim().is_empty() {
            return;
        }
        if self.is_server() {
            let from = self.my_name().unwrap_or("server").to_owned();
            self.pass_on(from, text);
        } else if let Err(e) = self
            .link
            .net_mut()
            .send_event(GameEvent::Chat { text }.encode())
        {
            self.say(format!("cannot chat: {e}"));
        }
    }

    /// Server: a chat line from a client: cleaned, cut, rate-limited (at most
    /// [`CHAT_BURST`](super::CHAT_BURST) lines in [`CHAT_WINDOW`](super::CHAT_WINDOW) seconds; more are dropped and counted), then
    /// sent to everyone with the client's name.
    pub(super) fn relay_chat(&mut self, client: ClientId, text: &str) {
        let now = self.net().now();
        let Some(s) = &mut self.rules else {
            return;
        };
        if !s.chat_allowed(client, now) {
            return;
        }
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
        self.say(format!("{from}: {text}"));
        let _ = self
            .link
            .net_mut()
            .send_event(GameEvent::ChatLine { from, text }.encode());
    }
}
