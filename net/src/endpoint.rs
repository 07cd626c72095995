//! Endpoints: which connection a datagram belongs to, and how a peer gets one.
//!
//! The server's endpoint maps addresses to client ids and admits new clients: it answers a
//! padded hello with a smaller stateless challenge (a cookie bound to the address, the
//! hello's values and a time epoch, and a key pair it can compute again from them), and
//! only when the cookie comes back does it check the version, the password proof, the name
//! and the room left, derive the session key, and open a [`Connection`]. Until then it keeps
//! nothing and sends an address no more bytes than it received from it.
//!
//! The client's endpoint says hello, answers the challenge with its name and password
//! proof, and checks the welcome's tag before it believes it.

use crate::connection::{Connection, Deadline, State};
use crate::core::Core;
use crate::crypto::{self, Direction, ServerSecrets, TAG_LEN};
use crate::error::{DisconnectReason, RejectReason};
use crate::manager::NetEvent;
use crate::wire::{self, Bye, Kind, Refusal, Request, Welcome};
use lanyard::ClientId;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

/// How long a challenge's cookie stays good: answers within one to two epochs are taken.
const COOKIE_EPOCH_US: u64 = 10_000_000;

/// A client the server admitted.
pub(crate) struct Peer {
    pub(crate) conn: Connection,
    pub(crate) name: String,
    /// The hello values of its session, to tell a resent answer from a new session.
    hello: wire::Hello,
}

/// What a datagram to the server's endpoint came to.
pub(crate) enum Arrival<'a> {
    /// Nothing more to do (handshake traffic handled, or refused and counted).
    Done,
    /// A new client was admitted.
    Joined(ClientId),
    /// A known client's DATA body (tag checked and removed), `len` bytes on the wire.
    Data {
        id: ClientId,
        body: &'a [u8],
        len: usize,
    },
    /// A known client ends its session.
    Left(ClientId, DisconnectReason),
}

/// The server's endpoint.
pub(crate) struct ServerEndpoint {
    secrets: ServerSecrets,
    pub(crate) peers: BTreeMap<ClientId, Peer>,
    by_addr: HashMap<SocketAddr, ClientId>,
    next_client: u16,
}

impl ServerEndpoint {
    pub(crate) fn new(entropy: [u8; 32]) -> Self {
        ServerEndpoint {
            secrets: ServerSecrets::new(entropy),
            peers: BTreeMap::new(),
            by_addr: HashMap::new(),
            next_client: 1,
        }
    }

    /// Forgets a client (the caller handles its entities and tells the user).
    pub(crate) fn remove(&mut self, id: ClientId) -> Option<Peer> {
        let p = self.peers.remove(&id)?;
        self.by_addr.remove(&p.conn.addr);
        Some(p)
    }

    /// Takes one datagram from `from`.
    pub(crate) fn datagram<'a>(
        &mut self,
        core: &mut Core,
        from: SocketAddr,
        bytes: &'a [u8],
    ) -> Arrival<'a> {
        let known = self.by_addr.get(&from).copied();
        let Ok((version, kind, body)) = wire::parse_header(bytes) else {
            return self.refuse(core, known);
        };
        if version != core.config.version {
            if kind == Kind::Hello {
                let reason = RejectReason::VersionMismatch {
                    server: core.config.version,
                    client: version,
                };
                answer(core, from, bytes.len(), &Refusal { reason, nonce: 0 });
            } else {
                core.counters.strangers += 1;
            }
            return Arrival::Done;
        }
        match kind {
            Kind::Hello => match wire::parse_hello(body) {
                Ok(h) => {
                    let epoch = core.now / COOKIE_EPOCH_US;
                    let cookie = self.secrets.cookie(from, h.nonce, &h.client_pub, epoch);
                    let (_, server_pub) =
                        self.secrets.handshake_keypair(from, h.nonce, &h.client_pub);
                    let c = wire::challenge(
                        version,
                        &wire::Challenge {
                            nonce: h.nonce,
                            cookie,
                            server_pub,
                        },
                    );
                    if c.len() <= bytes.len() {
                        core.outbox.push((from, c));
                    }
                    Arrival::Done
                }
                Err(_) => self.refuse(core, known),
            },
            Kind::Connect => {
                let head = bytes
                    .len()
                    .checked_sub(TAG_LEN)
                    .filter(|&end| end >= wire::HEADER_LEN)
                    .map(|end| wire::parse_connect_head(&bytes[wire::HEADER_LEN..end]));
                match head {
                    Some(Ok((hello, cookie, _))) => self.connect(core, from, hello, cookie, bytes),
                    _ => self.refuse(core, known),
                }
            }
            Kind::Data | Kind::Bye => {
                let Some(id) = known else {
                    core.counters.strangers += 1;
                    return Arrival::Done;
                };
                let Some(peer) = self.peers.get_mut(&id) else {
                    return Arrival::Done;
                };
                let Ok(opened) = peer.conn.open(bytes) else {
                    core.counters.bad_tags += 1;
                    log_refusal(id, &peer.conn.stats.bad_tags, "datagrams with a wrong tag");
                    return Arrival::Done;
                };
                let body = &opened[wire::HEADER_LEN..];
                if kind == Kind::Data {
                    return Arrival::Data {
                        id,
                        body,
                        len: bytes.len(),
                    };
                }
                match wire::decode::<Bye>(body) {
                    Ok(_) => Arrival::Left(id, DisconnectReason::Left),
                    Err(_) => {
                        peer.conn.stats.bad_datagrams += 1;
                        Arrival::Done
                    }
                }
            }
            Kind::Challenge | Kind::Welcome | Kind::Reject => self.refuse(core, known),
        }
    }

    /// Counts a datagram nobody can use: a stranger's, or a known client's that is not
    /// even a well-formed header (which a forger can send from its address, so it never
    /// ends a session).
    fn refuse<'a>(&mut self, core: &mut Core, known: Option<ClientId>) -> Arrival<'a> {
        match known.and_then(|id| self.peers.get_mut(&id)) {
            Some(p) => {
                p.conn.stats.bad_tags += 1;
                core.counters.bad_tags += 1;
            }
            None => core.counters.strangers += 1,
        }
        Arrival::Done
    }

    fn connect<'a>(
        &mut self,
        core: &mut Core,
        from: SocketAddr,
        hello: wire::Hello,
        cookie: [u8; crypto::COOKIE_LEN],
        datagram: &[u8],
    ) -> Arrival<'a> {
        // A cookie from this epoch or the one before is good.
        let epoch = core.now / COOKIE_EPOCH_US;
        let good = [Some(epoch), epoch.checked_sub(1)]
            .into_iter()
            .flatten()
            .any(|e| {
                let want = self.secrets.cookie(from, hello.nonce, &hello.client_pub, e);
                crypto::same(&want, &cookie)
            });
        if !good {
            core.counters.bad_cookies += 1;
            return Arrival::Done;
        }
        // The address receives what is sent to it: from here on, answers may be larger.
        if let Some(&id) = self.by_addr.get(&from) {
            if self.peers.get(&id).is_some_and(|p| p.hello == hello) {
                // Our welcome was lost: say it again.
                self.welcome(core, id);
                return Arrival::Done;
            }
            // The same address started a new session (the client restarted).
            return Arrival::Left(id, DisconnectReason::Replaced);
        }
        let (secret, server_pub) =
            self.secrets
                .handshake_keypair(from, hello.nonce, &hello.client_pub);
        let Some(key) = crypto::session_key(
            &secret,
            &hello.client_pub,
            hello.nonce,
            &hello.client_pub,
            &server_pub,
        ) else {
            core.counters.bad_cookies += 1;
            return Arrival::Done;
        };
        // The request is read only under a tag made with the same key: a client whose
        // challenge was corrupted on the way starts again instead of being admitted with a
        // key that differs from ours.
        let Some(opened) = crypto::open(&key, Direction::ToServer, datagram) else {
            core.counters.bad_cookies += 1;
            return Arrival::Done;
        };
        let request = wire::parse_connect_head(&opened[wire::HEADER_LEN..])
            .and_then(|(_, _, r)| wire::decode::<Request>(r));
        let Ok(request) = request else {
            core.counters.strangers += 1;
            return Arrival::Done;
        };
        let reject = |core: &mut Core, reason| {
            let r = Refusal {
                reason,
                nonce: hello.nonce,
            };
            if let Ok(mut d) = wire::control(Kind::Reject, core.config.version, &r) {
                crypto::seal(&key, Direction::ToClient, &mut d);
                core.outbox.push((from, d));
            }
            Arrival::Done
        };
        if let Some(pw) = &core.config.password {
            let want = crypto::password_proof(pw, &key);
            if !request.proof.is_some_and(|p| crypto::same(&p, &want)) {
                return reject(core, RejectReason::BadPassword);
            }
        }
        let name = request.name.trim();
        if name.is_empty() || name.chars().count() > 32 {
            return reject(core, RejectReason::BadName);
        }
        if self.peers.len() >= usize::from(core.config.max_clients) {
            let max = core.config.max_clients;
            return reject(core, RejectReason::ServerFull { max });
        }
        let mut taken = self
            .peers
            .values()
            .map(|p| p.name.as_str())
            .chain(core.config.reserved_names.iter().map(String::as_str));
        if taken.any(|n: &str| n.eq_ignore_ascii_case(name)) {
            return reject(core, RejectReason::NameTaken);
        }
        let id = loop {
            let id = ClientId(self.next_client);
            self.next_client = self.next_client.wrapping_add(1).max(1);
            if !self.peers.contains_key(&id) {
                break id;
            }
        };
        let peer = Peer {
            conn: Connection::accepted(from, key, core.now, core.timing()),
            name: name.to_owned(),
            hello,
        };
        self.peers.insert(id, peer);
        self.by_addr.insert(from, id);
        self.welcome(core, id);
        tracing::info!("{name} joined as {id}");
        core.events.push_back(NetEvent::ClientJoined {
            client: id,
            name: name.to_owned(),
        });
        Arrival::Joined(id)
    }

    fn welcome(&mut self, core: &mut Core, id: ClientId) {
        let Some(p) = self.peers.get(&id) else {
            return;
        };
        let w = Welcome {
            client: id,
            server_name: core.config.server_name.clone(),
        };
        if let Ok(body) = wire::encode(&w)
            && let Some(d) = p.conn.sealed(Kind::Welcome, core.config.version, &body)
        {
            core.outbox.push((p.conn.addr, d));
        }
    }
}

/// Logs a refusal now and then (at powers of two), so a flood does not flood the log.
pub(crate) fn log_refusal(id: ClientId, count: &u64, what: &str) {
    if count.is_power_of_two() {
        tracing::warn!("{id}: {count} {what} so far");
    }
}

/// Answers an address that has not proved it receives: only if the answer is no larger
/// than what came from it.
fn answer(core: &mut Core, to: SocketAddr, received: usize, r: &Refusal) {
    match wire::control(Kind::Reject, core.config.version, r) {
        Ok(d) if d.len() <= received => core.outbox.push((to, d)),
        _ => core.counters.strangers += 1,
    }
}

/// What a datagram to the client's endpoint came to.
pub(crate) enum ClientArrival<'a> {
    /// Nothing more to do.
    Done,
    /// A DATA body from the server (tag checked and removed).
    Data { body: &'a [u8], len: usize },
}

/// The client's endpoint: its one connection, to the server, and what it asks for.
pub(crate) struct ClientEndpoint {
    pub(crate) conn: Connection,
    name: String,
    password: Option<String>,
    pub(crate) id: Option<ClientId>,
}

impl ClientEndpoint {
    pub(crate) fn new(
        core: &Core,
        server: SocketAddr,
        name: &str,
        password: Option<&str>,
        entropy: [u8; 32],
    ) -> Self {
        let nonce = u64::from_le_bytes(
            crypto::derive(&entropy, "nonce", 0)[..8]
                .try_into()
                .unwrap_or_default(),
        );
        let secret = crypto::derive(&entropy, "key pair", 0);
        ClientEndpoint {
            conn: Connection::client(server, nonce, secret, core.now, core.timing()),
            name: name.to_owned(),
            password: password.map(str::to_owned),
            id: None,
        }
    }

    /// Takes one datagram from the server's address.
    pub(crate) fn datagram<'a>(&mut self, core: &mut Core, bytes: &'a [u8]) -> ClientArrival<'a> {
        let Ok((version, kind, body)) = wire::parse_header(bytes) else {
            self.refuse(core);
            return ClientArrival::Done;
        };
        let handshaking = matches!(self.conn.state, State::Hello { .. } | State::Connect { .. });
        match kind {
            Kind::Reject if handshaking => {
                // Once the server has our cookie back it tags its refusals; before, only a
                // version mismatch is believed (nothing else is refused then).
                let r = match self.conn.open(bytes) {
                    Ok(opened) => wire::decode::<Refusal>(&opened[wire::HEADER_LEN..]).ok(),
                    Err(_) => wire::decode::<Refusal>(body)
                        .ok()
                        .filter(|r| matches!(r.reason, RejectReason::VersionMismatch { .. })),
                };
                let Some(r) = r else {
                    self.refuse(core);
                    return ClientArrival::Done;
                };
                let ours = r.nonce == self.conn.nonce()
                    || matches!(r.reason, RejectReason::VersionMismatch { .. });
                if ours {
                    self.conn.state = State::Closed;
                    core.events
                        .push_back(NetEvent::Rejected { reason: r.reason });
                }
            }
            _ if version != core.config.version => self.refuse(core),
            Kind::Challenge => {
                let Ok(c) = wire::parse_challenge(body) else {
                    self.refuse(core);
                    return ClientArrival::Done;
                };
                let (name, password) = (self.name.clone(), self.password.clone());
                let connect = |hello: wire::Hello, key: &crypto::Key| {
                    let request = Request {
                        name,
                        proof: password.as_deref().map(|p| crypto::password_proof(p, key)),
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
                    crypto::seal(key, Direction::ToServer, &mut d);
                    Some(d)
                };
                if !self.conn.on_challenge(&c, connect, core.now) {
                    self.refuse(core);
                }
            }
            Kind::Welcome if matches!(self.conn.state, State::Connect { .. }) => {
                let Ok(opened) = self.conn.open(bytes) else {
                    // Corrupted on the way: the next answer to the challenge brings it again.
                    return ClientArrival::Done;
                };
                let Ok(w) = wire::decode::<Welcome>(&opened[wire::HEADER_LEN..]) else {
                    self.refuse(core);
                    return ClientArrival::Done;
                };
                self.conn.established(core.now);
                self.id = Some(w.client);
                core.events.push_back(NetEvent::Joined {
                    client: w.client,
                    server_name: w.server_name,
                });
            }
            Kind::Data if self.conn.is_connected() => match self.conn.open(bytes) {
                Ok(opened) => {
                    return ClientArrival::Data {
                        body: &opened[wire::HEADER_LEN..],
                        len: bytes.len(),
                    };
                }
                Err(_) => core.counters.bad_tags += 1,
            },
            Kind::Bye if self.conn.is_connected() => {
                if let Ok(opened) = self.conn.open(bytes)
                    && let Ok(b) = wire::decode::<Bye>(&opened[wire::HEADER_LEN..])
                {
                    self.conn.state = State::Closed;
                    core.events
                        .push_back(NetEvent::ConnectionLost { reason: b.reason });
                }
            }
            _ => {}
        }
        ClientArrival::Done
    }

    fn refuse(&mut self, core: &mut Core) {
        if self.conn.is_connected() {
            self.conn.stats.bad_tags += 1;
            core.counters.bad_tags += 1;
        } else {
            core.counters.strangers += 1;
        }
    }

    /// Handles the connection's deadlines: handshake retries, giving up, timeouts.
    /// Returns false if the session is over.
    pub(crate) fn timeouts(&mut self, core: &mut Core) -> bool {
        if matches!(self.conn.state, State::Closed) {
            return false;
        }
        for d in self.conn.handle_timeout(core.now) {
            match d {
                Deadline::GaveUp => {
                    core.events.push_back(NetEvent::ConnectFailed);
                    return false;
                }
                Deadline::Lost(reason) => {
                    if reason != DisconnectReason::TimedOut {
                        core.goodbye(&self.conn, reason);
                    }
                    core.events.push_back(NetEvent::ConnectionLost { reason });
                    return false;
                }
                Deadline::Retry => {
                    if let Some(d) = self.conn.handshake_datagram(core.now, core.config.version) {
                        core.outbox.push((self.conn.addr, d));
                    }
                }
                Deadline::Heartbeat => {}
            }
        }
        true
    }
}
