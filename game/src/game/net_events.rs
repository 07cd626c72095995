//! What the network layer told a game ([`NetEvent`]s), turned into its messages, its state
//! and, on a server, the rules' bookkeeping.
//!
//! Host migration in the game: when the host of a `host` game goes, its first successor
//! plays the server's part with the world it holds (the scores as it last heard them,
//! answering LAN discovery and registered at the rendezvous server, if the game was, under
//! the game's name), and every other player is told who hosts now.

use super::Game;
use crate::events::GameEvent;
use crate::game::rules::Rules;
use crate::game::text::clean_line;
use crate::kinds;
use crate::kinds::Player;
use crate::witness::TakenPoses;
use lanyard::KindId;
use lanyard::prelude::*;
use lanyard_net::{DisconnectReason, NetEvent};
use std::collections::BTreeMap;

/// A host's name for a sentence: "the host" if it played under none.
fn who(name: &str) -> &str {
    if name.is_empty() { "the host" } else { name }
}

/// A new host's name for a sentence: "another player" if none was heard (it was not in
/// our succession).
fn player(name: &str) -> &str {
    if name.is_empty() {
        "another player"
    } else {
        name
    }
}

impl Game {
    /// Takes every event the NetManager has for us.
    pub(super) fn handle_events(&mut self) {
        while let Some(e) = self.link.net_mut().poll_event() {
            self.on_net_event(e);
        }
        self.note_players();
    }

    /// One event: a dispatch to what it concerns (the link, the session, who plays, the
    /// game's own events).
    fn on_net_event(&mut self, e: NetEvent) {
        match e {
            NetEvent::Joined {
                client,
                server_name,
                name,
                resumed,
            } => self.on_joined(client, server_name, name, resumed),
            NetEvent::Rejected { reason } => self
                .standing
                .refuse(reason, self.options.password.is_some()),
            NetEvent::ConnectFailed => {
                let server = self
                    .net()
                    .server_addr()
                    .map_or(String::new(), |a| format!(" at {a}"));
                let sentence = format!("no server answered{server}");
                self.standing.end(sentence, "no server answered".into());
            }
            NetEvent::ConnectionLost { reason } => self.on_lost(&reason),
            NetEvent::Reconnecting { attempt } => {
                // Following the game to a new host says so when it gets there.
                if attempt == 1 && !self.standing.is_following() {
                    self.say("lost the server: reconnecting".into());
                }
            }
            NetEvent::Resumed { client } => {
                self.standing.resumed();
                self.back(client);
                self.say("reconnected".into());
            }
            // A developer's matter: the network layer logs it as a warning.
            NetEvent::Mispredicted { .. } => {}
            NetEvent::HostLeft { host, next } => self.on_host_left(&host, &next),
            NetEvent::NewHost { left, host, client } => {
                let line = format!("{} left; {} is now hosting", who(&left), player(&host));
                self.say(line);
                self.back(client);
                self.standing.new_host(left, host);
                // The new host numbers its broadcasts afresh.
                self.received = TakenPoses::default();
            }
            NetEvent::Promoted { left } => self.promoted(&left),
            NetEvent::Superseded { host } => self.step_down(host),
            NetEvent::Handed { net, to, seq } => {
                tracing::debug!("{net} is held by {to:?} (its hand-off {seq})");
            }
            NetEvent::ClientJoined {
                name,
                spectator,
                client,
            } => self.on_client_joined(client, name, spectator),
            NetEvent::ClientSuspended { name, .. } => self.say(format!(
                "{name} went silent: keeping the session {:.0} s for a resume",
                self.options.grace
            )),
            NetEvent::ClientResumed {
                name,
                restarted,
                client,
            } => self.on_client_resumed(client, &name, restarted),
            NetEvent::ClientLeft { name, reason, .. } => self.on_client_left(name, &reason),
            NetEvent::Event {
                from: Owner::Server,
                bytes,
            } => self.on_server_event(&bytes),
            NetEvent::Event {
                from: Owner::Client(client),
                bytes,
            } => {
                if let Some(GameEvent::Chat { text }) = GameEvent::decode(&bytes) {
                    self.relay_chat(client, &text);
                }
            }
        }
    }

    /// Our session resumed as `client`: if this peer hosted the game and stepped down,
    /// it is back in it, with the world the server sends and the player it had there.
    fn back(&mut self, client: ClientId) {
        if !self.standing.is_joined() && self.standing.ended().is_none() {
            self.standing.back(client);
        }
    }

    /// The host went (`host`: the name it played under) and `next` is tried in its place.
    fn on_host_left(&mut self, host: &str, next: &str) {
        // The successor hears it too, just before it takes the game over and says so in
        // its own words.
        if self.standing.my_name() != Some(next) {
            tracing::info!("{} left: {} takes over", who(host), player(next));
        }
        self.standing.follow();
    }

    /// The server took us in, as `name` (maybe not the one we asked for).
    fn on_joined(&mut self, client: ClientId, server_name: String, name: String, resumed: bool) {
        let names = (server_name.clone(), name.clone());
        if let Some(line) = self.standing.joined(client, names, resumed) {
            self.say(line);
        }
        if resumed {
            // An earlier run's session: the same player, its score, its place in the yard.
            self.say(format!(
                "back in {server_name} as {name}, where you left off"
            ));
        } else if self.options.spectate {
            self.say(format!("watching {server_name}"));
        } else {
            self.say(format!("joined {server_name} as player {}", client.0));
        }
        // The player comes once the server's arena is in.
    }

    /// The connection to the server is gone for good: the game ends, saying why.
    fn on_lost(&mut self, reason: &DisconnectReason) {
        let key = match reason {
            DisconnectReason::ServerShutdown => "server shut down".to_owned(),
            DisconnectReason::Kicked { .. } => clean_line(&reason.to_string()),
            DisconnectReason::SessionExpired => "session expired".to_owned(),
            _ => "connection lost".to_owned(),
        };
        let sentence = match reason {
            // A successor that took the game over from a succession told before we came.
            DisconnectReason::SessionExpired if self.standing.is_following() => {
                "session expired: the game's new host does not know this session; join it again"
                    .to_owned()
            }
            DisconnectReason::Kicked { .. } | DisconnectReason::SessionExpired => key.clone(),
            // Every successor was tried in vain.
            _ if self.standing.is_following() => {
                "connection lost: the host left and no player could take the game over".to_owned()
            }
            _ => format!("connection lost: {reason}"),
        };
        self.standing.end(sentence, key);
    }

    /// On a server: the table of scores changes (by `change`) and goes out again.
    fn scores_changed(&mut self, change: impl FnOnce(&mut BTreeMap<String, u32>)) {
        if let Some(s) = &mut self.rules {
            s.scores_changed(change);
        }
    }

    /// A client joined (to play, or to watch): it gets the arena, and the table goes out
    /// again, so the newcomer has it before any change.
    fn on_client_joined(&mut self, client: ClientId, name: String, spectator: bool) {
        self.send_arena(client);
        if spectator {
            self.say(format!("{name} joined to watch"));
            self.scores_changed(|_| {});
        } else {
            self.say(format!("{name} joined"));
            self.scores_changed(|scores| {
                scores.entry(name).or_insert(0);
            });
        }
    }

    /// A client resumed its session; `restarted`: from a new process (its game started
    /// again), which has nothing of ours yet.
    fn on_client_resumed(&mut self, client: ClientId, name: &str, restarted: bool) {
        if restarted {
            self.say(format!("{name} is back (its game started again)"));
            self.send_arena(client);
        } else {
            self.say(format!("{name} resumed the session"));
        }
        // It may have missed the table meanwhile (or it comes from the host this one took
        // the game over from).
        self.scores_changed(|_| {});
    }

    /// A client left (`reason`): its row stays in the table with its points (every screen
    /// shows it greyed while no player of that name is in the game; it scores no more),
    /// and a session lost is counted unless it left on purpose or was sent away.
    fn on_client_left(&mut self, name: String, reason: &DisconnectReason) {
        self.say(format!("{name} left ({reason})"));
        if !matches!(
            reason,
            DisconnectReason::Left
                | DisconnectReason::Kicked { .. }
                | DisconnectReason::ServerShutdown
                | DisconnectReason::Replaced
        ) && let Some(s) = &mut self.rules
        {
            s.session_lost();
        }
    }

    /// One of the game's own events from the server.
    fn on_server_event(&mut self, bytes: &[u8]) {
        match GameEvent::decode(bytes) {
            Some(GameEvent::Explosion { at, thrower, .. }) => {
                self.on_blast(Vec3::from_array(at), thrower)
            }
            Some(GameEvent::Scores { table }) => self.presentation.set_scores(table),
            Some(GameEvent::Point { name, at }) => self.on_point(name, Vec3::from_array(at)),
            Some(GameEvent::Arena { part, parts, bytes }) => self.arena_part(part, parts, bytes),
            // A client's message, not the server's: ignored.
            Some(GameEvent::Chat { .. }) => {}
            Some(GameEvent::ChatLine { from, text }) => {
                self.say(format!("{}: {}", clean_line(&from), clean_line(&text)))
            }
            Some(GameEvent::Say { text }) => self.say(format!("[server] {}", clean_line(&text))),
            None => {}
        }
    }

    /// Notes who else is playing.
    fn note_players(&mut self) {
        let me = self.me();
        let player = KindId::of_name(kinds::PLAYER);
        let others: Vec<String> = self
            .group
            .iter()
            .filter(|e| e.kind() == player && Some(e.owner()) != me)
            .filter_map(|e| {
                self.group
                    .controller::<Player>(e.id())
                    .map(|p| p.name.clone())
            })
            .collect();
        for name in others {
            if self.standing.saw_player(&name) {
                tracing::info!("first saw the player {name}");
            }
        }
    }

    /// The host (`left`) went and we took the game over: our NetManager is a server now
    /// and our group plays the server's role; the rules run here from now on.
    fn promoted(&mut self, left: &str) {
        let name = self.standing.my_name().map(str::to_owned);
        // The old host's row stays, greyed, as any player's who left.
        let mut scores: BTreeMap<String, u32> =
            self.presentation.scores().iter().cloned().collect();
        if let Some(n) = &name {
            scores.entry(n.clone()).or_insert(0);
        }
        self.rules = Some(Rules::new(name, scores));
        self.received = TakenPoses::default();
        // The game keeps its name: discovery answers with it.
        let game = self.net().config().server_name.clone();
        self.options.name = game.clone();
        self.standing.promoted(left.to_owned(), game.clone());
        // A game known at a rendezvous server is registered there again under its name
        // (once the old host's registration runs out, within its time to live), and one
        // on the LAN answers discovery.
        self.link
            .host(self.options.discovery, self.options.rendezvous);
        let line = format!("{} left; you host the game now ('{game}')", who(left));
        self.say(line);
    }
}
