//! The client's endpoint: hello, the answer to the challenge, the welcome's check, the
//! reconnect ladder that resumes a session, and following the game to a successor when
//! the host goes (host migration).

use crate::connection::{Connection, Deadline, State, Timer};
use crate::core::{Core, us};
use crate::crypto::{Direction, Key, Nonce};
use crate::error::{DisconnectReason, RejectReason};
use crate::event::NetEvent;
use crate::wire::{Bye, DatagramKind, Physics, RejectBody, Request, Resume, Welcome};
use crate::{SessionClaim, crypto, wire};
use lanyard::ClientId;
use std::net::SocketAddr;

mod follow;
mod vouch;

use follow::{Follow, Standby};

/// What a datagram to the client's endpoint came to.
pub(crate) enum ClientArrival {
    /// Nothing more to do.
    Done,
    /// The server resumed our session: the world it sends next replaces what changed.
    Resumed,
    /// A new host (the old one's successor) resumed our session: what we knew of the old
    /// host's broadcasts means nothing to it; its world replaces ours.
    Migrated,
    /// A DATA datagram of our session, opened (`len` bytes on the wire): for the frame.
    Data { opened: Vec<u8>, len: usize },
}

/// What a client keeps of its session to resume it.
#[derive(Clone)]
struct Session {
    token: Key,
    /// How long the server keeps it after we fall silent (µs).
    grace: u64,
}

/// The reconnect ladder under way: hellos at growing intervals until the grace window
/// the server promised has passed.
#[derive(Clone)]
struct Ladder {
    attempt: u32,
    /// The wait before the next hello (µs), doubled after each up to the maximum.
    delay: u64,
    /// When the grace window (and a timeout) ends (µs): the latest give-up time.
    until: u64,
    /// How long the ladder waits for an answer before the server is taken for gone (µs;
    /// 0: the whole grace window): for the first answer, and, in a game that migrates,
    /// once the server answered, for its welcome.
    unanswered: u64,
    /// When the server answered a hello of the ladder (µs), if it did: it was alive then.
    answered_at: Option<u64>,
}

impl Ladder {
    /// When the ladder gives up if nothing more comes from `now` on.
    fn give_up(&self, now: u64) -> u64 {
        match self.unanswered {
            0 => self.until,
            u => self.until.min(now + u),
        }
    }
}

/// The client's endpoint: its one connection, to the server, and what it asks for.
#[derive(Clone)]
pub(crate) struct ClientEndpoint {
    pub(crate) conn: Connection,
    /// The name we play under (the server's offer once welcomed).
    pub(crate) name: String,
    pub(crate) password: Option<String>,
    spectator: bool,
    pub(crate) id: Option<ClientId>,
    pub(crate) entropy: [u8; 32],
    /// The server's name, from its welcome.
    pub(crate) server_name: String,
    /// What the server last told of its succession.
    pub(crate) succession: crate::succession::Succession,
    /// Following the game to a successor.
    follow: Option<Follow>,
    /// Set when the host went and we are its successor: the old host's name. The manager
    /// then becomes a server.
    pub(crate) promote: Option<String>,
    /// The host fell silent and we are the successor to take over, while we try to resume
    /// with it ([`stand_by`](Self::stand_by)).
    standby: Option<Standby>,
    /// Handshakes started so far (each draws its own nonce and key pair).
    handshakes: u64,
    session: Option<Session>,
    ladder: Option<Ladder>,
    /// Times the session was resumed.
    pub(crate) resumes: u32,
    /// The server's physics from its last welcome, until the group takes it.
    pub(crate) physics: Option<Physics>,
    /// What players that lost the host asked us, and when.
    questions: vouch::Questions,
    /// We hosted the game and stepped down, claiming the session we had: if it is gone,
    /// we join anew ([`go_back`](Self::go_back)).
    stepped_down: bool,
    /// This process claims a session another one had (a [`SessionClaim`] from disk)
    /// until the server welcomes or refuses it: if it is gone, we join anew.
    restoring: bool,
}

impl ClientEndpoint {
    pub(crate) fn new(
        core: &Core,
        server: SocketAddr,
        name: &str,
        password: Option<&str>,
        entropy: [u8; 32],
    ) -> Self {
        let mut e = ClientEndpoint {
            conn: Connection::client(server, 0, [0; 32], core.now, core.timing()),
            name: name.to_owned(),
            password: password.map(str::to_owned),
            spectator: core.config.spectator,
            id: None,
            entropy,
            server_name: String::new(),
            succession: Default::default(),
            follow: None,
            promote: None,
            standby: None,
            handshakes: 0,
            session: None,
            ladder: None,
            resumes: 0,
            physics: None,
            questions: Default::default(),
            stepped_down: false,
            restoring: false,
        };
        e.conn = e.handshake(core, server);
        e
    }

    /// A client that claims the session `claim` holds, which another process had (one
    /// that crashed or was killed): it resumes under the same id, with the world and a
    /// reliable channel afresh, or joins anew if the server no longer keeps the session.
    pub(crate) fn restore(
        core: &Core,
        claim: &SessionClaim,
        name: &str,
        password: Option<&str>,
        entropy: [u8; 32],
    ) -> Self {
        let mut e = Self::new(core, claim.server, name, password, entropy);
        e.id = Some(claim.client);
        e.session = Some(Session {
            token: claim.token,
            grace: u64::from(claim.grace_ms) * 1000,
        });
        e.restoring = true;
        e
    }

    /// What another process needs to take this session up again (see [`SessionClaim`]):
    /// once welcomed, and while reconnecting.
    pub(crate) fn claim(&self) -> Option<SessionClaim> {
        if self.restoring || !(self.conn.is_connected() || self.reconnecting()) {
            return None;
        }
        let session = self.session.as_ref()?;
        Some(SessionClaim {
            server: self.conn.addr,
            client: self.id?,
            token: session.token,
            grace_ms: u32::try_from(session.grace / 1000).unwrap_or(u32::MAX),
        })
    }

    /// The next hello's number, and its nonce (derived under `label`).
    fn next_nonce(&mut self, label: &str) -> (u64, u64) {
        let i = self.handshakes;
        self.handshakes += 1;
        let nonce = u64::from_le_bytes(
            crypto::derive(&self.entropy, label, i)[..8]
                .try_into()
                .unwrap_or_default(),
        );
        (i, nonce)
    }

    /// A connection about to say hello, with the next nonce and key pair.
    fn handshake(&mut self, core: &Core, server: SocketAddr) -> Connection {
        let (i, nonce) = self.next_nonce("nonce");
        let secret = crypto::derive(&self.entropy, "key pair", i);
        Connection::client(server, nonce, secret, core.now, core.timing())
    }

    /// How long (µs) the server keeps our session after we fall silent, as its welcome
    /// said (0 with no session).
    pub(crate) fn grace(&self) -> u64 {
        self.session.as_ref().map_or(0, |s| s.grace)
    }

    /// Whether the reconnect ladder runs.
    pub(crate) fn reconnecting(&self) -> bool {
        self.ladder.is_some()
    }

    /// The link is lost: if the session can be resumed, starts the reconnect ladder and
    /// returns true; the reliable messages not yet acknowledged go to the new connection.
    fn start_ladder(&mut self, core: &mut Core) -> bool {
        let unanswered = core.config.reconnect_unanswered;
        self.ladder_to(core, self.conn.addr, unanswered)
    }

    /// The reconnect ladder to `to`, given up if nothing answers for `unanswered`
    /// seconds (0: the whole grace window). To another host than the last (a successor),
    /// the messages it has not acknowledged go numbered afresh.
    fn ladder_to(&mut self, core: &mut Core, to: SocketAddr, unanswered: f32) -> bool {
        let Some(grace) = self.session.as_ref().map(|s| s.grace) else {
            return false;
        };
        let mut conn = self.handshake(core, to);
        if self.follow.as_ref().is_some_and(|f| !f.at_host) {
            conn.carry_reliable_afresh(&self.conn);
        } else {
            // The same session at the same server: both halves of the reliable channel go
            // on (what the server sends again is delivered once).
            conn.carry_reliable_out(&mut self.conn);
            conn.carry_reliable_in(&mut self.conn);
        }
        // The server starts its grace window when it notices our silence, about when we
        // did: a timeout more of trying lets a late try hear "session expired".
        let until = core.now + grace + us(core.config.timeout);
        // A server that answers nothing for a while is gone (a host that quit or crashed):
        // the player hears so then, not a whole grace window later.
        let ladder = Ladder {
            attempt: 0,
            delay: us(core.config.reconnect_backoff),
            until,
            unanswered: us(unanswered),
            answered_at: None,
        };
        conn.timers.set(Timer::GiveUp, ladder.give_up(core.now));
        self.conn = conn;
        self.ladder = Some(ladder);
        tracing::info!("reconnecting to {}", self.conn.addr);
        true
    }

    /// Takes one datagram from the server's address: the handshake and a goodbye are
    /// handled here; a DATA datagram of our session is opened, for the frame
    /// (`manager/frame.rs`).
    pub(crate) fn datagram(&mut self, core: &mut Core, bytes: &[u8]) -> ClientArrival {
        let Ok((version, kind, body)) = wire::parse_header(bytes) else {
            self.refuse(core);
            return ClientArrival::Done;
        };
        if kind == DatagramKind::Data && version == core.config.version && self.conn.is_connected()
        {
            let Ok(opened) = self.conn.open(bytes) else {
                core.counters.bad_tags += 1;
                return ClientArrival::Done;
            };
            let len = bytes.len();
            return ClientArrival::Data { opened, len };
        }
        let state = self.conn.state();
        let handshaking = matches!(state, State::Hello { .. } | State::Connect { .. });
        let connecting = matches!(state, State::Connect { .. });
        match kind {
            DatagramKind::Reject if handshaking => self.on_reject(core, bytes, body),
            _ if version != core.config.version => self.refuse(core),
            DatagramKind::Challenge => self.on_challenge(core, version, body),
            DatagramKind::Welcome if connecting => return self.on_welcome(core, bytes),
            DatagramKind::Bye if self.conn.is_connected() => self.on_bye(core, bytes),
            _ => {}
        }
        ClientArrival::Done
    }

    /// A refusal while we shake hands (`body` after the header). Once the server has our
    /// cookie back it tags its refusals; before, only a version mismatch is believed
    /// (nothing else is refused then), and only if it echoes our hello's nonce: anyone can
    /// send an untagged refusal.
    fn on_reject(&mut self, core: &mut Core, bytes: &[u8], body: &[u8]) {
        let r = match self.conn.open(bytes) {
            Ok(opened) => wire::decode::<RejectBody>(&opened[wire::HEADER_LEN..]).ok(),
            Err(_) => wire::decode::<RejectBody>(body).ok().filter(|r| {
                matches!(
                    r.reason,
                    RejectReason::VersionMismatch { .. } | RejectReason::HostAlive { .. }
                )
            }),
        };
        let Some(r) = r.filter(|r| r.nonce == self.conn.nonce()) else {
            // Not an answer to our hello: counted, and ignored.
            self.refuse(core);
            return;
        };
        if let RejectReason::HostAlive { at } = r.reason {
            self.host_alive(core, at);
            return;
        }
        if let RejectReason::Kicked { reason } = r.reason {
            // Kicked while we could not hear it: the session is over, at every host.
            self.ladder = None;
            self.follow = None;
            self.conn.close();
            let reason = DisconnectReason::Kicked { reason };
            core.events.push_back(NetEvent::ConnectionLost { reason });
            return;
        }
        if r.reason == RejectReason::SessionExpired && self.try_again_expired(core) {
            return;
        }
        if self.follow.is_some() {
            if r.reason == RejectReason::SessionExpired {
                // The successor hosts the game and keeps no session of ours: it took the
                // game over from a succession told before we came (it was frozen when the
                // host told the next). Every other player follows it, and sends us back
                // there: the session is over, and we may join afresh (explorer seed 828,
                // where the follower went round between the two for the grace window).
                self.follow = None;
            } else {
                // This successor will not have us: the next one may.
                self.ladder = None;
                if self.next_successor(core) {
                    return;
                }
            }
        }
        self.conn.close();
        let event = match (self.ladder.take(), r.reason) {
            (Some(_), RejectReason::SessionExpired) => NetEvent::ConnectionLost {
                reason: DisconnectReason::SessionExpired,
            },
            (_, reason) => NetEvent::Rejected { reason },
        };
        core.events.push_back(event);
    }

    /// The server keeps no session of the one we claimed: true if we try again, as one
    /// migration on (we may have missed one), or as a new session (our claim came from an
    /// earlier process, too late; or we hosted the game a while and ours is gone).
    fn try_again_expired(&mut self, core: &mut Core) -> bool {
        if let (Some(f), Some(session)) = (self.follow.as_mut(), self.session.as_mut())
            && f.missed < follow::MISSED_MIGRATIONS
        {
            f.missed += 1;
            session.token = crypto::migration_token(&session.token);
            tracing::info!(
                "{} does not know our session: trying it as one migration on",
                self.conn.addr
            );
            self.ladder_to(core, self.conn.addr, core.config.migration_wait);
            return true;
        }
        let why = if std::mem::take(&mut self.restoring) {
            "of our claim"
        } else if std::mem::take(&mut self.stepped_down) {
            "of ours"
        } else {
            return false;
        };
        tracing::info!("{} keeps no session {why}: joining it", self.conn.addr);
        self.join_anew(core, self.conn.addr);
        true
    }

    /// The server's challenge (`body` after the header): we answer it with our request,
    /// sealed under the session key.
    fn on_challenge(&mut self, core: &mut Core, version: u16, body: &[u8]) {
        let Ok(c) = wire::parse_challenge(body) else {
            self.refuse(core);
            return;
        };
        let (name, password) = (self.name.clone(), self.password.clone());
        let kinds = core.kinds.clone();
        let spectator = self.spectator;
        let restarted = self.restoring;
        let claim = match (self.ladder.is_some() || restarted, &self.session, self.id) {
            (true, Some(s), Some(id)) => Some((id, s.token)),
            _ => None,
        };
        let connect = |hello: wire::Hello, key: &crypto::Key| {
            let request = Request {
                name,
                proof: password.as_deref().map(|p| crypto::password_proof(p, key)),
                spectator,
                resume: claim.map(|(client, token)| Resume {
                    client,
                    proof: crypto::resume_proof(&token, key),
                    restarted,
                }),
                kinds,
            };
            let mut d = wire::connect(
                version,
                &wire::Connect {
                    hello,
                    cookie: c.cookie,
                    request,
                },
            )
            .ok()?;
            let clear = wire::clear_len(DatagramKind::Connect);
            crypto::Cipher::new(key).seal(Direction::ToServer, &mut d, clear, Nonce::Synthetic);
            Some(d)
        };
        if !self.conn.on_challenge(&c, connect, core.now) {
            self.refuse(core);
        } else if let Some(l) = self.ladder.as_mut().filter(|l| l.answered_at.is_none()) {
            // The server is alive: the resume may take the whole grace window (its link
            // may hear us only now and then). In a game that migrates, a host that
            // answered and then fell silent before it welcomed us is taken for gone as one
            // that never answered: we follow the game to its successor, which says so if
            // the host lives (explorer seed 2869: a thawed player's resume was answered
            // half a second before the host was killed, and it tried the dead host for
            // its whole grace window while the game went on).
            l.answered_at = Some(core.now);
            let s = &self.succession;
            let give_up = match s.migrate && !s.list.is_empty() {
                true => l.give_up(core.now),
                false => l.until,
            };
            self.conn.timers.set(Timer::GiveUp, give_up);
        }
    }

    /// The server's welcome: the session starts, or resumes (at the host we followed, if
    /// it took the game over).
    fn on_welcome(&mut self, core: &mut Core, bytes: &[u8]) -> ClientArrival {
        let Ok(opened) = self.conn.open(bytes) else {
            // Corrupted on the way: the next answer to the challenge brings it again.
            return ClientArrival::Done;
        };
        let Ok(w) = wire::decode::<Welcome>(&opened[wire::HEADER_LEN..]) else {
            self.refuse(core);
            return ClientArrival::Done;
        };
        self.conn.established(core.now);
        self.physics = Some(w.physics);
        self.stepped_down = false;
        let restored = std::mem::take(&mut self.restoring) && w.resumed;
        if self.ladder.take().is_some() && w.resumed && self.id == Some(w.client) {
            // The host was alive: the game goes on there.
            self.standby = None;
            return self.resumed(core, w);
        }
        self.id = Some(w.client);
        self.session = match (w.grace_ms, self.conn.key()) {
            (0, _) | (_, None) => None,
            (ms, Some(key)) => Some(Session {
                token: crypto::session_token(key),
                grace: u64::from(ms) * 1000,
            }),
        };
        if w.name != self.name {
            tracing::info!("the name {} is taken: playing as {}", self.name, w.name);
            self.name.clone_from(&w.name);
        }
        self.server_name.clone_from(&w.server_name);
        if restored {
            tracing::info!("took up the session of an earlier run as {}", w.client);
        }
        core.events.push_back(NetEvent::Joined {
            client: w.client,
            server_name: w.server_name,
            name: w.name,
            resumed: restored,
        });
        ClientArrival::Done
    }

    /// Our session resumed (`w`): at the same server, or at the successor we followed.
    fn resumed(&mut self, core: &mut Core, w: Welcome) -> ClientArrival {
        self.resumes += 1;
        if let Some(f) = self.follow.take().filter(|f| !f.at_host) {
            let at = self.conn.addr;
            let host = f.list.iter().find(|s| s.addr == at).map(|s| s.name.clone());
            let name = host.as_deref().unwrap_or("the successor");
            tracing::info!("{name} took the game over: resumed as {}", w.client);
            self.server_name = w.server_name;
            self.succession = Default::default();
            core.events.push_back(NetEvent::NewHost {
                left: f.left,
                host: host.unwrap_or_default(),
                client: w.client,
            });
            return ClientArrival::Migrated;
        }
        tracing::info!("resumed the session as {}", w.client);
        core.events
            .push_back(NetEvent::Resumed { client: w.client });
        ClientArrival::Resumed
    }

    /// The server's goodbye. "Timed out": it stopped hearing us and keeps the session for
    /// a resume. The host quit: the game goes on at its successor, if it migrates.
    fn on_bye(&mut self, core: &mut Core, bytes: &[u8]) {
        let Ok(opened) = self.conn.open(bytes) else {
            return;
        };
        let Ok(b) = wire::decode::<Bye>(&opened[wire::HEADER_LEN..]) else {
            return;
        };
        if b.reason == DisconnectReason::TimedOut && self.start_ladder(core) {
            return;
        }
        if b.reason == DisconnectReason::ServerShutdown && self.migrate(core, true) {
            return;
        }
        self.conn.close();
        core.events
            .push_back(NetEvent::ConnectionLost { reason: b.reason });
    }

    fn refuse(&mut self, core: &mut Core) {
        if self.conn.is_connected() {
            self.conn.stats.bad_tags += 1;
            core.counters.bad_tags += 1;
        } else {
            core.counters.strangers += 1;
        }
    }

    /// Handles the connection's deadlines: handshake retries (the ladder's, while
    /// reconnecting), giving up, timeouts. Returns false if the session is over.
    pub(crate) fn timeouts(&mut self, core: &mut Core) -> bool {
        if matches!(self.conn.state(), State::Closed) {
            return false;
        }
        self.ask_the_others(core);
        self.confirm(core);
        for d in self.conn.handle_timeout(core.now) {
            match d {
                Deadline::GaveUp if self.ladder.take().is_some() => {
                    tracing::info!("gave up reconnecting to {}", self.conn.addr);
                    return self.ladder_gave_up(core);
                }
                Deadline::GaveUp => {
                    core.events.push_back(NetEvent::ConnectFailed);
                    return false;
                }
                Deadline::Lost(reason) => {
                    let link = matches!(
                        reason,
                        DisconnectReason::TimedOut | DisconnectReason::ReliableExpired
                    );
                    // A silent host: the game goes on at its successor, if it migrates;
                    // otherwise we try to resume with it.
                    if link && (self.migrate(core, false) || self.start_ladder(core)) {
                        return true;
                    }
                    if reason != DisconnectReason::TimedOut {
                        core.goodbye(&self.conn, reason.clone());
                    }
                    core.events.push_back(NetEvent::ConnectionLost { reason });
                    return false;
                }
                Deadline::Retry => {
                    let hello = matches!(self.conn.state(), State::Hello { .. });
                    if let Some(d) = self.conn.handshake_datagram(core.now, core.config.version) {
                        core.outbox.push((self.conn.addr, d));
                        if let (true, Some(l)) = (hello, &mut self.ladder) {
                            l.attempt += 1;
                            self.conn.timers.set(Timer::Retry, core.now + l.delay);
                            let max = us(core.config.reconnect_backoff_max).max(l.delay);
                            l.delay = (l.delay * 2).min(max);
                            core.events
                                .push_back(NetEvent::Reconnecting { attempt: l.attempt });
                        }
                    }
                }
                Deadline::Heartbeat => {}
            }
        }
        true
    }
}
