//! Where this peer stands in the game ([`Standing`]): the name it plays under, whether it
//! joined, follows the game to a new host, or ended, and why; what it saw of the others.

use lanyard::prelude::*;
use lanyard_net::RejectReason;
use std::collections::BTreeSet;

/// This peer's standing in the session.
#[derive(Debug, Default)]
pub(super) struct Standing {
    /// This peer's player name (none on a dedicated server).
    my_name: Option<String>,
    joined: bool,
    /// Client: the host went and we follow the game to its successor.
    following: bool,
    /// Our client id, kept after the session ends (for the report).
    client_id: Option<ClientId>,
    /// Why the session ended, if it did (a sentence for people).
    ended: Option<String>,
    /// Why the session ended, in a bot report's words.
    end_reason: Option<String>,
    /// Why the server refused us, if it did.
    refused: Option<RejectReason>,
    /// The game's name: the server's (from its welcome, on a client).
    server_name: Option<String>,
    /// Every host change seen: who left, and who hosts since.
    host_changes: Vec<(String, String)>,
    /// Every other player this peer has seen.
    remote_players: BTreeSet<String>,
    /// Whether our player was below the yard at the last tick (it respawns).
    fallen: bool,
    /// Client: we took up an earlier run's session (our player is still in the world).
    restored: bool,
}

impl Standing {
    /// A server (`server_name`: the game's) is in its session from the start; a client
    /// joins later. `my_name`: the player's name, none for a dedicated server.
    pub(super) fn new(my_name: Option<String>, server_name: Option<String>) -> Standing {
        Standing {
            my_name,
            joined: server_name.is_some(),
            server_name,
            ..Standing::default()
        }
    }

    /// A host that stepped down for the game's new host: a client that has yet to join
    /// it or resume its session there, under the same name, in the same game (what it saw
    /// of the game stays).
    pub(super) fn stepped_down(&mut self) {
        self.joined = false;
        self.following = false;
        self.client_id = None;
    }

    /// A host that stepped down resumed the session it had as `client` before it took
    /// the game over: it is in the game again.
    pub(super) fn back(&mut self, client: ClientId) {
        self.joined = true;
        self.client_id = Some(client);
    }

    /// Our player is below the yard (`fallen`) or not: true when it has just fallen, for
    /// one word on the screen per fall.
    pub(super) fn fell(&mut self, fallen: bool) -> bool {
        let news = fallen && !self.fallen;
        self.fallen = fallen;
        news
    }

    /// Whether we took up an earlier run's session: our player came with the world.
    pub(super) fn restored(&self) -> bool {
        self.restored
    }

    pub(super) fn my_name(&self) -> Option<&str> {
        self.my_name.as_deref()
    }

    pub(super) fn is_joined(&self) -> bool {
        self.joined && self.ended.is_none()
    }

    pub(super) fn is_following(&self) -> bool {
        self.following
    }

    pub(super) fn client_id(&self) -> Option<ClientId> {
        self.client_id
    }

    pub(super) fn ended(&self) -> Option<&str> {
        self.ended.as_deref()
    }

    pub(super) fn end_reason(&self) -> Option<&str> {
        self.end_reason.as_deref()
    }

    pub(super) fn refused(&self) -> Option<&RejectReason> {
        self.refused.as_ref()
    }

    pub(super) fn server_name(&self) -> Option<&str> {
        self.server_name.as_deref()
    }

    pub(super) fn host_changes(&self) -> &[(String, String)] {
        &self.host_changes
    }

    pub(super) fn remote_players(&self) -> &BTreeSet<String> {
        &self.remote_players
    }

    /// The server took us in as `client`, in the game `server_name`, as `name`: the line
    /// to show if the name we asked for was taken.
    pub(super) fn joined(
        &mut self,
        client: ClientId,
        (server_name, name): (String, String),
        restored: bool,
    ) -> Option<String> {
        self.joined = true;
        self.restored = restored;
        self.client_id = Some(client);
        self.server_name = Some(server_name);
        match &self.my_name {
            Some(asked) if *asked != name => {
                let line = format!("the name {asked} is taken there: you play as {name}");
                self.my_name = Some(name);
                Some(line)
            }
            _ => None,
        }
    }

    /// The session ended (or never began): `sentence` for people, `key` for reports.
    pub(super) fn end(&mut self, sentence: String, key: String) {
        self.ended = Some(sentence);
        self.end_reason = Some(key);
    }

    /// The server refused us (`gave_password`: whether we gave one; a game that wants
    /// one and was given none says so, not that it was wrong).
    pub(super) fn refuse(&mut self, reason: RejectReason, gave_password: bool) {
        let sentence = match reason {
            RejectReason::BadPassword if !gave_password => {
                "this game is locked: it wants a password".to_owned()
            }
            _ => format!("the server refused us: {reason}"),
        };
        self.end(sentence, format!("refused: {reason}"));
        self.refused = Some(reason);
    }

    /// The host went: we follow the game to its successor.
    pub(super) fn follow(&mut self) {
        self.following = true;
    }

    /// Our session resumed at the host we had: it was still there (we were looking for its
    /// successor only because our own link to it failed).
    pub(super) fn resumed(&mut self) {
        self.following = false;
    }

    /// Another player, `host`, hosts the game now that `left` went.
    pub(super) fn new_host(&mut self, left: String, host: String) {
        self.host_changes.push((left, host));
        self.following = false;
    }

    /// We host the game `game` now that `left` went: in its session from now on.
    pub(super) fn promoted(&mut self, left: String, game: String) {
        let me = self.my_name.clone().unwrap_or_default();
        self.new_host(left, me);
        self.joined = true;
        self.server_name = Some(game);
    }

    /// Notes a player seen in the world: whether it is new.
    pub(super) fn saw_player(&mut self, name: &str) -> bool {
        !self.remote_players.contains(name) && self.remote_players.insert(name.to_owned())
    }
}
