//! The dedicated server's console and the host's player list: `players`, `kick`, `ban`,
//! `say`, `quit`.

use super::{Console, Game};
use crate::events::GameEvent;
use crate::game::text::{clean_line, count};

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
                let _ = self
                    .net
                    .send_event(GameEvent::Say { text: text.clone() }.encode());
                self.messages.push(format!("[server] {text}"));
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
        let sessions = self.net.sessions();
        let watching = sessions.iter().filter(|s| s.spectator).count();
        let host = usize::from(self.server.as_ref().is_some_and(|s| s.host_name.is_some()));
        let playing = sessions.len() - watching + host;
        let mut out = vec![format!(
            "{} playing, {} watching",
            count(playing, "player"),
            count(watching, "spectator")
        )];
        if let Some(h) = self.server.as_ref().and_then(|s| s.host_name.clone()) {
            let score = self.score_of(&h);
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
        let scores = self.server.as_ref().map(|s| &s.scores);
        scores.and_then(|t| t.get(name)).copied().unwrap_or(0)
    }

    /// Server: removes the client named `name` (any case), telling it `reason`; with
    /// `ban`, the name is refused for the server's lifetime too. Returns lines to show.
    pub fn kick(&mut self, name: &str, reason: &str, ban: bool) -> Vec<String> {
        let mut out = Vec::new();
        if ban {
            let _ = self.net.ban(name);
            out.push(format!("{name} is banned until the server stops"));
        }
        let who = self
            .net
            .sessions()
            .into_iter()
            .find(|s| s.name.eq_ignore_ascii_case(name));
        match who {
            Some(s) => match self.net.kick(&mut self.group, s.client, reason) {
                Ok(()) => out.push(format!("kicked {}", s.name)),
                Err(e) => out.push(format!("cannot kick {}: {e}", s.name)),
            },
            None if !ban => out.push(format!("no client is named {name}")),
            None => {}
        }
        out
    }
}
