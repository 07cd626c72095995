//! The client's endpoint: hello, the answer to the challenge, the welcome's check, the
//! reconnect ladder that resumes a session, and following the game to a successor when
//! the host goes (host migration).

use crate::connection::{Connection, Deadline, State, Timer};
use crate::core::{Core, us};
use crate::crypto::{Direction, Key, Nonce};
use crate::error::{DisconnectReason, RejectReason};
use crate::event::NetEvent;
use crate::wire::{Bye, DatagramKind, Physics, RejectBody, Request, Resume, Welcome};
use crate::{crypto, wire};
use lanyard::ClientId;
use std::net::SocketAddr;

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

/// Following the game to a successor after the host went.
#[derive(Clone)]
struct Follow {
    /// The old host's name.
    left: String,
    /// The successors, in order, and the next to try.
    list: Vec<crate::succession::Successor>,
    next: usize,
    /// Our connection to the old host, and our session's token there (before it became
    /// the migration token): to try the host again if we stand by.
    host: Box<Connection>,
    token: Option<Key>,
    /// Whether the host said it quit (it is surely gone), rather than fell silent.
    quit: bool,
}

/// Standing by as the host's successor: silence alone does not make us the host (our own
/// link may be what failed, and the others still play there); another player coming to
/// us does (it lost the host too), or the host's grace window passing with no answer.
#[derive(Clone)]
struct Standby {
    /// The old host's name.
    left: String,
    /// When we knock next at the other players' addresses (µs), and until when: one byte
    /// each, which opens our NAT (if any) to their hellos, as a new host's knock does.
    knock: u64,
    knock_until: u64,
    /// When we ask the players after us in the succession whether one of them took the
    /// game over (µs; `u64::MAX` once asked): a player that lost the host when we did
    /// comes to us within a migration wait, so if none came by then, either only our link
    /// failed or the game went on without us (we were frozen, say).
    ask_at: u64,
}

/// How often, and for how long, a successor standing by knocks at the other players (µs).
const KNOCK_EVERY_US: u64 = 250_000;
const KNOCK_FOR_US: u64 = 10_000_000;

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
    /// When the grace window (and a timeout) ends (µs): the give-up time once the server
    /// has answered.
    until: u64,
    /// Whether the server answered a hello of the ladder (it is alive).
    answered: bool,
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
        };
        e.conn = e.handshake(core, server);
        e
    }

    /// A connection about to say hello, with the next nonce and key pair.
    fn handshake(&mut self, core: &Core, server: SocketAddr) -> Connection {
        let i = self.handshakes;
        self.handshakes += 1;
        let nonce = u64::from_le_bytes(
            crypto::derive(&self.entropy, "nonce", i)[..8]
                .try_into()
                .unwrap_or_default(),
        );
        let secret = crypto::derive(&self.entropy, "key pair", i);
        Connection::client(server, nonce, secret, core.now, core.timing())
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
        if self.follow.is_some() {
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
        let give_up = match us(unanswered) {
            0 => until,
            u => until.min(core.now + u),
        };
        conn.timers.set(Timer::GiveUp, give_up);
        self.conn = conn;
        self.ladder = Some(Ladder {
            attempt: 0,
            delay: us(core.config.reconnect_backoff),
            until,
            answered: false,
        });
        tracing::info!("reconnecting to {}", self.conn.addr);
        true
    }

    /// The host went (it said goodbye: `quit`, or fell silent): if the game migrates,
    /// follows it to the first successor and returns true. Our session's token becomes its
    /// migration token, which the new host knows. If we are that successor and the host
    /// only fell silent, we stand by instead ([`standby`](Self::standby)), trying the host
    /// again.
    fn migrate(&mut self, core: &mut Core, quit: bool) -> bool {
        let s = &self.succession;
        if !s.migrate || s.list.is_empty() || self.id.is_none() || self.session.is_none() {
            return false;
        }
        let mut follow = Follow {
            left: s.host.clone(),
            list: s.list.clone(),
            next: 0,
            host: Box::new(self.conn.clone()),
            token: None,
            quit,
        };
        if let Some(session) = &mut self.session {
            follow.token = Some(session.token);
            session.token = crypto::migration_token(&session.token);
        }
        self.follow = Some(follow);
        self.next_successor(core)
    }

    /// Tries the next successor: resumes our session there, or, if it is us, asks the
    /// manager to make us the server. False when none is left.
    fn next_successor(&mut self, core: &mut Core) -> bool {
        let Some(f) = self.follow.as_mut() else {
            return false;
        };
        let Some(to) = f.list.get(f.next).cloned() else {
            // Asking the others while standing by: what we need to stand by on the host
            // again stays.
            if self.standby.is_none() {
                self.follow = None;
            }
            return false;
        };
        f.next += 1;
        let left = f.left.clone();
        let host = if left.is_empty() { "the host" } else { &left };
        // Players after us in the succession come to us if they lost the host too.
        let after_us = f.list.len() > f.next;
        if Some(to.client) == self.id && !f.quit && after_us {
            return self.stand_by(core);
        }
        tracing::info!("{host} went: {} ({}) takes over", to.name, to.addr);
        core.events.push_back(NetEvent::HostLeft {
            host: left.clone(),
            next: to.name.clone(),
        });
        if Some(to.client) == self.id {
            self.follow = None;
            self.ladder = None;
            self.promote = Some(left);
            return true;
        }
        self.ladder_to(core, to.addr, core.config.migration_wait)
    }

    /// Whether `bytes`, from `from` (not the server), is a player of the game coming to us
    /// while we stand by as the host's successor: its hello says it lost the host too, so
    /// we take the game over (and the server we become answers it).
    ///
    /// While we play at a live host, such a hello is answered that the host is alive
    /// ([`RejectReason::HostAlive`], echoing its nonce): that player lost only its own link
    /// to the host, and tries the host again instead of taking the game over alone.
    pub(crate) fn comes_to_us(&mut self, core: &mut Core, from: SocketAddr, bytes: &[u8]) -> bool {
        // One of the game's sessions: a successor, or one the host keeps for a resume (its
        // own link to the host may be what failed).
        let s = &self.succession;
        let listed = s.list.iter().map(|p| (p.client, p.addr));
        let player = listed
            .chain(s.heirs.iter().map(|h| (h.client, h.addr)))
            .any(|(c, a)| a == from && Some(c) != self.id);
        let Ok((version, DatagramKind::Hello, body)) = wire::parse_header(bytes) else {
            return false;
        };
        if !player || version != core.config.version {
            return false;
        }
        let Some(standby) = self.standby.take() else {
            // Only a host heard from lately is alive: one that went silent a moment ago
            // may be gone for us too (our own timeout has not come yet).
            let heard =
                core.now.saturating_sub(self.conn.last_heard) <= 2 * us(core.config.heartbeat);
            let playing = self.conn.is_connected() && self.ladder.is_none() && heard;
            if let (true, Some(nonce)) = (playing, wire::hello_nonce(body)) {
                let reason = RejectReason::HostAlive { at: self.conn.addr };
                super::answer(core, from, bytes.len(), &RejectBody { reason, nonce });
            }
            return false;
        };
        let left = standby.left;
        let host = if left.is_empty() { "the host" } else { &left };
        tracing::info!("{host} is gone for another player too: taking the game over");
        core.events.push_back(NetEvent::HostLeft {
            host: left.clone(),
            next: self.name.clone(),
        });
        self.ladder = None;
        self.follow = None;
        self.promote = Some(left);
        true
    }

    /// While we stand by, knocks at the other players every [`KNOCK_EVERY_US`] for
    /// [`KNOCK_FOR_US`]: one byte each, which their clients drop, but which opens our NAT
    /// (if any) to their hellos, should they come to us.
    pub(crate) fn knock(&mut self, core: &mut Core) {
        let Some(s) = &mut self.standby else {
            return;
        };
        if core.now >= s.knock_until || core.now < s.knock {
            return;
        }
        s.knock = core.now + KNOCK_EVERY_US;
        for p in self
            .succession
            .list
            .iter()
            .filter(|p| Some(p.client) != self.id)
        {
            core.outbox.push((p.addr, vec![0]));
        }
    }

    /// We are the successor to take the game over, but the host only fell silent: our own
    /// link may be what failed, while the others still play there. We try to resume with
    /// the host, with our own token, for its whole grace window, and take the game over
    /// if another player comes to us first ([`comes_to_us`](Self::comes_to_us)), or if the
    /// window passes with no answer. If nobody comes for a while, we ask the players
    /// after us once ([`ask_the_others`](Self::ask_the_others)).
    fn stand_by(&mut self, core: &mut Core) -> bool {
        let Some(f) = self.follow.take() else {
            return false;
        };
        // Back from asking the others: they are not to be asked again.
        let asked = self.standby.is_some();
        if let (Some(session), Some(token)) = (&mut self.session, f.token) {
            session.token = token;
        }
        let host = if f.left.is_empty() {
            "the host"
        } else {
            &f.left
        };
        tracing::info!(
            "{host} fell silent: trying it again, and taking the game over if another player comes"
        );
        let wait = us(core.config.migration_wait);
        self.standby = Some(Standby {
            left: f.left,
            knock: core.now,
            knock_until: core.now + KNOCK_FOR_US,
            ask_at: if asked { u64::MAX } else { core.now + wait },
        });
        // What we had not got acknowledged goes on to the host, numbered as it was.
        self.conn = *f.host;
        self.ladder_to(core, self.conn.addr, 0.0)
    }

    /// Standing by, nobody came for a migration wait: we ask the players
    /// after us in the succession, in turn, as a follower would (with our migration
    /// token). One that took the game over (while we were frozen, say) resumes our session
    /// there; one that plays at the live host says so, and we stand by on the host again;
    /// if none answers, we stand by on the host for the rest of its grace window.
    fn ask_the_others(&mut self, core: &mut Core) -> bool {
        let Some(s) = self.standby.as_mut().filter(|s| core.now >= s.ask_at) else {
            return false;
        };
        s.ask_at = u64::MAX;
        let left = s.left.clone();
        let list = self.succession.list.clone();
        let Some(next) = list.iter().position(|p| Some(p.client) == self.id) else {
            return false;
        };
        let Some(session) = &mut self.session else {
            return false;
        };
        let token = session.token;
        session.token = crypto::migration_token(&token);
        tracing::info!("nobody came to us: asking the players after us");
        self.follow = Some(Follow {
            left,
            list,
            next: next + 1,
            host: Box::new(self.conn.clone()),
            token: Some(token),
            quit: false,
        });
        if self.next_successor(core) {
            return true;
        }
        self.stand_by(core)
    }

    /// A successor we tried plays at a live host at `at`. Our old host: only our link to it
    /// failed, and we stand by on it. Another: the game moved on there while we could not
    /// reach the successor that took it over, and we follow it there. (A host that said
    /// goodbye is gone whatever the successor has not heard yet: we keep trying that
    /// successor, which takes over once the goodbye reaches it.)
    fn host_alive(&mut self, core: &mut Core, at: SocketAddr) {
        let Some(f) = self
            .follow
            .as_mut()
            .filter(|f| !(f.quit && f.host.addr == at))
        else {
            self.refuse(core);
            return;
        };
        tracing::info!("{} plays at a live host at {at}", self.conn.addr);
        self.ladder = None;
        if f.host.addr == at {
            self.stand_by(core);
            return;
        }
        // The successor there: the one we try after it is the next in the list.
        if let Some(i) = f.list.iter().position(|s| s.addr == at) {
            f.next = i;
        }
        let host = f.list.iter().find(|s| s.addr == at).map(|s| s.name.clone());
        core.events.push_back(NetEvent::HostLeft {
            host: f.left.clone(),
            next: host.unwrap_or_default(),
        });
        f.next += 1;
        self.ladder_to(core, at, core.config.migration_wait);
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
        if self.follow.is_some() {
            // This successor will not have us: the next one may.
            self.ladder = None;
            if self.next_successor(core) {
                return;
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
        let claim = match (&self.ladder, &self.session, self.id) {
            (Some(_), Some(s), Some(id)) => Some((id, s.token)),
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
        } else if let Some(l) = self.ladder.as_mut().filter(|l| !l.answered) {
            // The server is alive: the resume may take the whole grace window.
            l.answered = true;
            self.conn.timers.set(Timer::GiveUp, l.until);
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
        core.events.push_back(NetEvent::Joined {
            client: w.client,
            server_name: w.server_name,
            name: w.name,
        });
        ClientArrival::Done
    }

    /// Our session resumed (`w`): at the same server, or at the successor we followed.
    fn resumed(&mut self, core: &mut Core, w: Welcome) -> ClientArrival {
        self.resumes += 1;
        if let Some(f) = self.follow.take() {
            let host = f.list.get(f.next - 1).map(|s| s.name.clone());
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
        for d in self.conn.handle_timeout(core.now) {
            match d {
                Deadline::GaveUp if self.ladder.take().is_some() => {
                    tracing::info!("gave up reconnecting to {}", self.conn.addr);
                    if self.standby.is_some() && self.follow.is_some() {
                        // Asking the others while standing by: the next, or back to the host.
                        if !self.next_successor(core) {
                            self.stand_by(core);
                        }
                        return true;
                    }
                    if let Some(Standby { left, .. }) = self.standby.take() {
                        // The host's grace window passed, and nobody came: we are the
                        // only player left.
                        core.events.push_back(NetEvent::HostLeft {
                            host: left.clone(),
                            next: self.name.clone(),
                        });
                        self.promote = Some(left);
                        return true;
                    }
                    let following = self.follow.is_some();
                    if self.next_successor(core) {
                        return true;
                    }
                    // Nothing answered our resume with the host: if the game migrates,
                    // the host may have gone while we could not hear it (it timed us out,
                    // then quit or crashed), and the game goes on at its successor.
                    if !following && self.migrate(core, false) {
                        return true;
                    }
                    core.events.push_back(NetEvent::ConnectionLost {
                        reason: DisconnectReason::TimedOut,
                    });
                    return false;
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
