//! What the user of a [`NetManager`](crate::NetManager) is told ([`NetEvent`]).

use crate::error::{DisconnectReason, RejectReason};
use lanyard::{ClientId, Owner};
use std::net::SocketAddr;

/// What the user of a [`NetManager`](crate::NetManager) is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetEvent {
    /// Server: a client finished the handshake.
    ClientJoined {
        /// Its id.
        client: ClientId,
        /// Its player name.
        name: String,
        /// Whether it joined to watch.
        spectator: bool,
    },
    /// Server: a client fell silent; its session (id, entities) is kept for the grace
    /// window ([`NetConfig::grace`](crate::NetConfig::grace)) for it to resume. Past that, [`NetEvent::ClientLeft`]
    /// follows with [`DisconnectReason::SessionExpired`].
    ClientSuspended {
        /// Its id.
        client: ClientId,
        /// Its player name.
        name: String,
    },
    /// Server: a client resumed its session (perhaps from a new address).
    ClientResumed {
        /// Its id, the same as before.
        client: ClientId,
        /// Its player name.
        name: String,
        /// Whether it resumed from a new process (its game started again): it holds
        /// nothing of the game, and gets the world as a newcomer does. Send it what the
        /// game sends a newcomer.
        restarted: bool,
    },
    /// Server: a client is gone; its entities were handled as their kinds say.
    ClientLeft {
        /// Its id.
        client: ClientId,
        /// Its player name.
        name: String,
        /// Why.
        reason: DisconnectReason,
    },
    /// Server: the bodies of a kind mostly miss their prediction while they touch nothing
    /// (told once a kind): its [motion](lanyard::Controller::motion) is likely not what its
    /// client path does to them, and each miss costs a delta on the wire.
    Mispredicted {
        /// The kind, by name.
        kind: String,
        /// The share of its free bodies' updates that missed, percent.
        percent: u8,
    },
    /// Client: the server accepted us.
    Joined {
        /// Our id.
        client: ClientId,
        /// The server's name.
        server_name: String,
        /// The name we play under: the one we asked for, or, if another session had it,
        /// the one the server offered instead ("ada (2)").
        name: String,
        /// Whether this took up the session of an earlier process
        /// ([`NetManager::client_claiming`](crate::NetManager::client_claiming)): the
        /// same id, and the entities it owned are still ours (the world brings them).
        resumed: bool,
    },
    /// Client: the server refused us.
    Rejected {
        /// Why.
        reason: RejectReason,
    },
    /// Client: no server answered.
    ConnectFailed,
    /// Client: the session ended. After a lost link that could not be resumed in time
    /// the reason is [`DisconnectReason::TimedOut`]; when the server no longer kept the
    /// session, [`DisconnectReason::SessionExpired`] (join afresh).
    ConnectionLost {
        /// Why.
        reason: DisconnectReason,
    },
    /// Client: the link to the server is lost and the reconnect ladder sent its hello
    /// number `attempt` (1, 2, ...). The world is frozen until [`NetEvent::Resumed`].
    Reconnecting {
        /// Which hello of the ladder this is.
        attempt: u32,
    },
    /// Client: the session is resumed: the same client id, our entities, and the world
    /// brought up to date by the server.
    Resumed {
        /// Our id (unchanged).
        client: ClientId,
    },
    /// Client: the host left or fell silent, and the game moves to its successor `next`
    /// ([`NetConfig::host_migration`](crate::NetConfig::host_migration)): we resume our
    /// session there ([`NetEvent::NewHost`] follows), or, if `next` is us,
    /// [`NetEvent::Promoted`] follows. Told again for each further successor tried when
    /// one does not answer.
    HostLeft {
        /// The name the old host played under ("" if it did not play).
        host: String,
        /// The successor now tried.
        next: String,
    },
    /// Client: the host went and we are its successor: this manager is a server now
    /// ([`NetManager::is_server`](crate::NetManager::is_server)), its group plays the
    /// server's role with the world it held (the old host's entities of kinds whose
    /// [`on_host_leave`](lanyard::KindOptions::on_host_leave) says so are gone, our own are
    /// the server's), and the other players' and spectators' sessions wait for them to
    /// resume, under their ids and names.
    Promoted {
        /// The name the old host played under ("" if it did not play).
        left: String,
    },
    /// Server (a host of a game that migrates): none of our players spoke for two
    /// heartbeats (we were stopped, or cut off, past their timeout), and one of them
    /// answered at its address as a server does: it took the game over, and the players
    /// are there. This server ended every session (saying nothing: nobody is listening),
    /// and the manager is a client of the game at `host` from now on: it claims the
    /// session it had there if it took the game over as a player (a
    /// [`Resumed`](NetEvent::Resumed) or [`NewHost`](NetEvent::NewHost) follows; a
    /// session kicked meanwhile ends with
    /// [`ConnectionLost`](NetEvent::ConnectionLost)), and joins under its host's name
    /// otherwise ([`Joined`](NetEvent::Joined) follows). Give it a world of its own: the
    /// server's is not the game's any more.
    Superseded {
        /// Where the game is hosted now.
        host: SocketAddr,
    },
    /// Client: we resumed our session with the new host after the old one went: the same
    /// client id and entities, and the world as the new host has it.
    NewHost {
        /// The name the old host played under ("" if it did not play).
        left: String,
        /// The new host's name.
        host: String,
        /// Our id (unchanged).
        client: ClientId,
    },
    /// Server: a client took over one of the server's bodies by pushing it (hand-off), or
    /// a body a client held returned to the server (`to: None`: it came to rest, its
    /// holder went away from it, or left the game).
    Handed {
        /// The body's network id.
        net: lanyard::NetId,
        /// The client that holds it now, if one does.
        to: Option<ClientId>,
        /// Its authority's sequence number now (`Entity::authority_seq`).
        seq: u16,
    },
    /// A game event from a peer (reliable, in order).
    Event {
        /// Who sent it: the server, or a client.
        from: Owner,
        /// The payload.
        bytes: Vec<u8>,
    },
}
