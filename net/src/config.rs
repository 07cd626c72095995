//! How a [`NetManager`](crate::NetManager) behaves ([`NetConfig`]) and where its secrets
//! come from ([`Entropy`]): plain values, below everything else in the crate.

/// The protocol version this build speaks. Peers with another version are refused at the
/// handshake. Version 19: a reliable message larger than a datagram travels as fragments
/// (a fragment's length is written plus 2048 when more of its message follows), up to
/// [`MAX_MESSAGE`](crate::MAX_MESSAGE). Version 18: a state head says when the server held back an entity whose
/// prediction does not stand (`partial`), and a client dates a prediction as the
/// broadcast's state only when it did not. Version 17: a pose's velocities travel on a square-root scale (finer the
/// slower: `SectionWriter::velocity`), and a pose delta packs its differences as bits
/// (`lanyard::delta::PoseDelta`); a broadcast whose predictions move on always goes, with
/// entries or none. Version 16: a whole section that starts with a pose says so (entry code 4),
/// and the entity's sections then travel as pose deltas against a prediction that runs
/// its kind's motion and rapier's free flight (`lanyard::PoseCodec`), with no codec set.
/// Version 15: a server where clients may hold its bodies (hand-off) relays
/// what clients own with when each client sent it (a state entry may begin with its age).
/// Version 14: changes of hands and claims carry the body's authority
/// sequence number, and so does a message after the spawn of a body that changed hands
/// before (`Msg::Authority`); a stale claim is refused. Version 13: a client may claim a server's body it pushes (hand-off,
/// `Msg::Claim`). Version 12: the succession carries the host's name and, to the successors,
/// what they need to take the game over (host migration). Version 11: the server keeps its clients told of the succession (who takes
/// over if it goes, and where each can be reached). Version 10: the welcome says the name the session plays under (a taken name
/// is offered as "ada (2)" instead of refused). Version 9: every datagram of a session is encrypted and authenticated with
/// ChaCha20-Poly1305 (it was tagged with BLAKE3 and travelled in clear). Version 8: a
/// refusal of another version's hello echoes its nonce (from the hello's fixed place), and
/// a client believes no refusal that does not. Version 20: a player still playing at a live
/// host answers another player's hello (one that came to it as the successor) with where
/// that host is (`RejectReason::HostAlive { at }`, echoing the hello's nonce), and a
/// successor stands by instead of taking over at the host's silence alone; a resume
/// confirms again the client's spawns that went meanwhile. Version 21: a resumed session
/// keeps its reliable messages both ways (the server's not yet acknowledged, and the game
/// events sent while the client was silent, are delivered once on the new connection), and
/// the server says where the world it sends again begins (`Msg::ResendingWorld`). Version
/// 22: a resume of a session the server kicked is refused as kicked
/// (`RejectReason::Kicked`), not as expired. Version 23: discovery's answer (and a
/// rendezvous listing) says where the game's page is served, for players in a browser
/// (`ServerInfo::web_port`). Version 24: a resume may come from a new process that holds
/// only the session's claim (`SessionClaim`, kept on disk by the game): it says so, and
/// gets the world and a reliable channel afresh under its old id, with its entities.
pub const PROTOCOL_VERSION: u16 = 24;

/// How a [`NetManager`](crate::NetManager) behaves. The defaults suit a LAN game.
#[derive(Debug, Clone, PartialEq)]
pub struct NetConfig {
    /// The protocol version spoken (tests change it to provoke a mismatch).
    pub version: u16,
    /// Broadcasts per second, on the server and for a client's own entities. Under 30 unless
    /// you mean it.
    pub rate: f32,
    /// Seconds of silence after which a peer is considered gone.
    pub timeout: f32,
    /// Seconds of idleness after which a heartbeat is sent.
    pub heartbeat: f32,
    /// Seconds after which an unacknowledged reliable message fails the session.
    pub reliable_expiry: f32,
    /// Seconds between a client's hello attempts.
    pub connect_retry: f32,
    /// Seconds a client tries to reach a server before giving up.
    pub connect_timeout: f32,
    /// Server: how many clients it takes.
    pub max_clients: u16,
    /// Server: the password clients must give, if any.
    pub password: Option<String>,
    /// Server: its name, shown to clients.
    pub server_name: String,
    /// Server: names no client may take (the host's own player).
    pub reserved_names: Vec<String>,
    /// Server: the name the host plays under, if it plays (a listen server). Clients are
    /// told it, so a game can say "ada left" if the host goes.
    pub host_name: Option<String>,
    /// Server: when it goes (it says goodbye, or falls silent for the `timeout`), the game
    /// goes on at its first successor (see [`NetManager::succession`](crate::NetManager::succession)):
    /// that client becomes the server with the world it holds, and the others resume their
    /// sessions with it. Off by default: the clients' sessions then end with the server's.
    pub host_migration: bool,
    /// Client: seconds to wait for a successor to answer, after the host went, before the
    /// next one in the succession is tried (a successor that went too). A client that
    /// comes to itself in the list becomes the server.
    pub migration_wait: f32,
    /// Server: how many entities one client may own at once.
    pub max_owned_per_client: usize,
    /// Datagrams queued between two updates before more are dropped.
    pub inbox_limit: usize,
    /// Consecutive undecodable datagrams after which a client is dropped.
    pub bad_packet_limit: u32,
    /// Server: bytes of entity state per second each client may be sent at most (split
    /// evenly over the broadcasts), on top of datagram headers and reliable messages. What
    /// does not fit waits, by priority (see [`lanyard::KindOptions::priority`]). A link
    /// that carries less gets less: see `link_ceiling`.
    pub budget: u32,
    /// Server: the most bytes a second it sends one client in all (state, reliable
    /// messages, headers). Below it, the server finds what each client's link carries, as
    /// congestion control does: it starts at a quarter of this, grows while the client
    /// needs more and the link keeps up, backs off when the round trip rises and stays up
    /// (a queue) and when datagrams are lost, and reports the rate it found
    /// ([`PeerStats::send_rate`](crate::PeerStats::send_rate)).
    pub link_ceiling: u32,
    /// Server: seconds after which an entity that has not changed is sent again, so a
    /// client whose copy drifted is healed.
    pub refresh: f32,
    /// Server: seconds a silent client's session (its id, its entities) is kept for it to
    /// resume, after it timed out. 0 ends the session at the timeout.
    pub grace: f32,
    /// Server: how many spectators it takes, on top of `max_clients` players.
    pub max_spectators: u16,
    /// Client: join to watch (no entities of our own, no spawns).
    pub spectator: bool,
    /// Client: seconds before the second hello of the reconnect ladder; each wait after
    /// doubles, up to `reconnect_backoff_max`. The ladder runs until the server's grace
    /// window (which the welcome says) and one `timeout` more have passed, then the
    /// session is lost ([`NetEvent::ConnectionLost`](crate::NetEvent::ConnectionLost)).
    pub reconnect_backoff: f32,
    /// Client: the longest wait between two hellos of the reconnect ladder.
    pub reconnect_backoff_max: f32,
    /// Client: seconds the reconnect ladder waits for any answer from the server's address
    /// before the session is lost (the host is gone:
    /// [`DisconnectReason::TimedOut`](crate::DisconnectReason::TimedOut)). Once the server
    /// answers a hello, the ladder runs to the end of the grace window, but in a game that
    /// migrates the welcome must come within as long (a host that answered and then fell
    /// silent is gone as well, and the game goes on at its successor). 0 waits the whole
    /// window even for a server that never answers, which keeps a session through a long
    /// outage of the client's own link but leaves a player watching a dead host that long.
    pub reconnect_unanswered: f32,
    /// Client: bring the server's state forward to our present before applying it (half
    /// the measured round trip, in whole ticks: see [`lanyard::ClientContext::lead`]).
    pub bring_forward: bool,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            version: PROTOCOL_VERSION,
            rate: 20.0,
            timeout: 5.0,
            heartbeat: 0.5,
            reliable_expiry: 15.0,
            connect_retry: 0.25,
            connect_timeout: 5.0,
            max_clients: 8,
            password: None,
            server_name: "Lanyard server".into(),
            reserved_names: Vec::new(),
            host_name: None,
            host_migration: false,
            migration_wait: 2.0,
            max_owned_per_client: 64,
            inbox_limit: 4096,
            bad_packet_limit: 64,
            budget: 12_000,
            link_ceiling: 256_000,
            refresh: 4.0,
            grace: 30.0,
            max_spectators: 8,
            spectator: false,
            reconnect_unanswered: 5.0,
            reconnect_backoff: 0.25,
            reconnect_backoff_max: 4.0,
            bring_forward: true,
        }
    }
}

/// Where a session's secrets come from: 32 bytes of randomness the caller draws (the
/// NetManager draws none itself). Give every server and every client session its own.
pub type Entropy = [u8; 32];
