//! Everything a server keeps for one client, in one place: its connection, who it is, and
//! what replication knows of its copy of the world. The endpoint keeps the sessions by
//! client id (live, or suspended for a resume); replication reads and updates them.

use crate::connection::Connection;
use crate::core::Core;
use crate::crypto::Key;
use crate::wire;
use crate::wire::Msg;
use lanyard::NetId;
use std::collections::{BTreeSet, HashMap, VecDeque};

pub(crate) mod baseline;
mod clock;
mod pace;

use baseline::ClientView;
pub(crate) use clock::{PeerClock, unwrap_ms};
pub(crate) use pace::Pace;

/// A client the server admitted.
#[derive(Clone)]
pub(crate) struct ClientSession {
    pub(crate) conn: Connection,
    pub(crate) name: String,
    /// The hello values of its session, to tell a resent answer from a new session.
    pub(crate) hello: wire::Hello,
    /// The session's resume token (from the first handshake's key; it never travels).
    pub(crate) token: Key,
    /// Whether it only watches.
    pub(crate) spectator: bool,
    /// Whether its last welcome resumed a session (a resent welcome says so again).
    pub(crate) resumed: bool,
    /// Its copy of the world as far as the server knows it: `None` until the world was
    /// sent to it, and again while it is silent (a resume sends the world again).
    pub(crate) view: Option<ClientView>,
    /// Its provisional ids, mapped to the ids the server gave its spawns.
    pub(crate) spawned: HashMap<NetId, NetId>,
    /// The same for its last [`GONE_SPAWNS`] spawns that went (a grenade that went off):
    /// a resume tells the client of them again, since their confirmations may have been
    /// lost with the link and the client would otherwise hold them under their
    /// provisional ids for good.
    pub(crate) gone_spawns: VecDeque<(NetId, NetId)>,
    /// Its last [`GONE_SPAWNS`] spawn requests refused, by provisional id: a resume tells
    /// the client of them again, for the same reason.
    pub(crate) refused_spawns: VecDeque<NetId>,
    /// Its entities whose sections were illegal: the server's state of them goes to it
    /// at the next broadcast.
    pub(crate) corrections: BTreeSet<NetId>,
    /// When (µs) it last had the whole world resent at its request.
    pub(crate) world_resent: Option<u64>,
    /// When (µs) the server last warned that this client's state goes stale.
    pub(crate) stale_warned: Option<u64>,
    /// How much state the link to it carries.
    pub(crate) pace: Pace,
    /// When (µs) it first joined (a resume keeps it): the succession's order.
    pub(crate) joined: u64,
    /// The endpoint's epoch when it was last sent the succession (`None`: not yet).
    pub(crate) told: Option<u64>,
    /// Its clock: when it sent what it sends.
    pub(crate) clock: PeerClock,
}

/// How many of a client's spawns that went a session keeps, for a resume to tell again.
pub(crate) const GONE_SPAWNS: usize = 64;

impl ClientSession {
    /// Refuses its spawn request `provisional`: says so, and keeps it among the last
    /// [`GONE_SPAWNS`] refused for a resume to say again.
    pub(crate) fn refuse_spawn(&mut self, core: &mut Core, provisional: NetId) {
        core.push(&mut self.conn, &Msg::SpawnRefused { provisional });
        self.refused_spawns.push_back(provisional);
        while self.refused_spawns.len() > GONE_SPAWNS {
            self.refused_spawns.pop_front();
        }
    }

    /// Forgets the spawns it asked for that `gone` says went, keeping the last
    /// [`GONE_SPAWNS`] of them for a resume to tell again.
    pub(crate) fn spawns_gone(&mut self, gone: impl Fn(NetId) -> bool) {
        let kept = &mut self.gone_spawns;
        self.spawned.retain(|p, n| {
            let went = gone(*n);
            if went {
                kept.push_back((*p, *n));
            }
            !went
        });
        while kept.len() > GONE_SPAWNS {
            kept.pop_front();
        }
    }

    /// After a resume: confirms again the spawns it asked for, those that went meanwhile
    /// too (`gone` says which: it may hold them under their provisional ids; they go when
    /// the world is sent), and refuses again the last it was refused.
    pub(crate) fn tell_spawns_again(&mut self, core: &mut Core, gone: impl Fn(NetId) -> bool) {
        self.spawns_gone(gone);
        let mut mine: Vec<(NetId, NetId)> = self.spawned.iter().map(|(p, n)| (*p, *n)).collect();
        mine.extend(self.gone_spawns.iter().copied());
        mine.sort_unstable();
        for (provisional, net) in mine {
            let msg = Msg::SpawnConfirmed { provisional, net };
            core.push(&mut self.conn, &msg);
        }
        for provisional in self.refused_spawns.clone() {
            core.push(&mut self.conn, &Msg::SpawnRefused { provisional });
        }
    }

    /// Its client started again and claims the session from a new process: what the old
    /// process knew (its copy of the world, its spawn requests, its clock) is gone with it.
    pub(crate) fn restarted(&mut self) {
        self.view = None;
        self.spawned.clear();
        self.gone_spawns.clear();
        self.refused_spawns.clear();
        self.corrections.clear();
        self.world_resent = None;
        self.stale_warned = None;
        self.clock = PeerClock::default();
    }

    /// A session just admitted, on connection `conn`.
    pub(crate) fn new(
        conn: Connection,
        name: String,
        hello: wire::Hello,
        token: Key,
        spectator: bool,
        ceiling: f32,
        joined: u64,
    ) -> Self {
        ClientSession {
            conn,
            name,
            hello,
            token,
            spectator,
            resumed: false,
            view: None,
            spawned: HashMap::new(),
            gone_spawns: VecDeque::new(),
            refused_spawns: VecDeque::new(),
            corrections: BTreeSet::new(),
            world_resent: None,
            stale_warned: None,
            pace: Pace::new(ceiling),
            joined,
            told: None,
            clock: PeerClock::default(),
        }
    }

    /// The client fell silent: what the server knew of its copy is worthless now; what
    /// it owns and asked for stays.
    pub(crate) fn suspend(&mut self) {
        self.view = None;
        self.corrections.clear();
    }
}
