//! The server's endpoint: addresses to client ids, the stateless challenge, admission
//! (version, password proof, name, room, bans), suspended sessions and resumes.

use super::admit::{admissible, free_name};
use super::{COOKIE_EPOCH_US, answer, limit, log_refusal};
use crate::connection::Connection;
use crate::core::Core;
use crate::crypto::{Direction, Nonce, ServerSecrets, TAG_LEN};
use crate::error::{DisconnectReason, RejectReason};
use crate::event::NetEvent;
use crate::session::ClientSession;
use crate::wire::{Bye, DatagramKind, RejectBody, Request, Welcome};
use crate::{crypto, wire};
use lanyard::ClientId;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;

/// A session whose client fell silent: kept for the grace window, for a resume.
#[derive(Clone)]
pub(crate) struct Suspended {
    pub(crate) peer: ClientSession,
    /// When it fell silent (µs).
    pub(crate) since: u64,
    /// When we last told its old address that the session waits for a resume.
    nudged: Option<u64>,
    /// A session a new host took over: when it knocks next at its address, and until when.
    knock: Option<(u64, u64)>,
}

/// How often, and for how long, a new host knocks at the sessions it took over (µs).
const KNOCK_EVERY_US: u64 = 250_000;
const KNOCK_FOR_US: u64 = 10_000_000;

/// How often a suspended session's old address is told, at most, that it must resume.
const NUDGE_US: u64 = 500_000;

/// What a datagram to the server's endpoint came to.
pub(crate) enum Arrival {
    /// Nothing more to do (handshake traffic handled, or refused and counted).
    Done,
    /// A new client was admitted.
    Joined(ClientId),
    /// A suspended (or still live) session was resumed from a new handshake.
    Resumed(ClientId),
    /// A known client's DATA datagram, opened (the header, then the plaintext), `len`
    /// bytes on the wire.
    Data {
        id: ClientId,
        opened: Vec<u8>,
        len: usize,
    },
    /// A known client ends its session.
    Left(ClientId, DisconnectReason),
}

/// The server's endpoint.
#[derive(Clone)]
pub(crate) struct ServerEndpoint {
    secrets: ServerSecrets,
    pub(crate) peers: BTreeMap<ClientId, ClientSession>,
    by_addr: HashMap<SocketAddr, ClientId>,
    /// Sessions waiting for a resume, and the addresses they were last at.
    pub(crate) suspended: BTreeMap<ClientId, Suspended>,
    suspended_addr: HashMap<SocketAddr, ClientId>,
    /// Names refused for the server's lifetime, in lower case.
    pub(crate) banned: BTreeSet<String>,
    next_client: u16,
    /// The current cookie epoch's handshake key pair, made once for the epoch.
    epoch_key: Option<(u64, x25519_dalek::StaticSecret, [u8; 32])>,
    /// How many hellos it answers.
    limiter: limit::HelloLimiter,
    /// Goes up whenever a session comes, goes, falls silent or resumes: what the clients
    /// are told of the succession is made again only then.
    pub(crate) epoch: u64,
    /// The sessions kicked lately (a resume of one is refused as kicked).
    pub(crate) kicks: super::kicks::Kicks,
    /// Addresses of peers that cannot host (a page behind a data channel): never named
    /// in the succession.
    pub(crate) cannot_host: BTreeSet<SocketAddr>,
}

impl ServerEndpoint {
    pub(crate) fn new(entropy: [u8; 32]) -> Self {
        ServerEndpoint {
            secrets: ServerSecrets::new(entropy),
            peers: BTreeMap::new(),
            by_addr: HashMap::new(),
            suspended: BTreeMap::new(),
            suspended_addr: HashMap::new(),
            banned: BTreeSet::new(),
            next_client: 1,
            epoch_key: None,
            limiter: limit::HelloLimiter::default(),
            epoch: 0,
            kicks: Default::default(),
            cannot_host: BTreeSet::new(),
        }
    }

    /// A server that takes a game over from a host that went (host migration): every
    /// session in `heirs` but `me` waits to be resumed, under its id and name, with its
    /// migration token, and is knocked at (see [`knock`](Self::knock)). The players keep
    /// the order they had (the order of `heirs`). Later clients get ids above every one
    /// of these.
    pub(crate) fn take_over(
        &mut self,
        core: &Core,
        heirs: &[crate::succession::Heir],
        me: ClientId,
    ) {
        for (place, h) in heirs.iter().enumerate().filter(|(_, h)| h.client != me) {
            let conn = Connection::accepted(h.addr, [0; 32], core.now, core.timing());
            let hello = wire::Hello {
                nonce: 0,
                client_pub: [0; 32],
            };
            let mut peer = ClientSession::new(
                conn,
                h.name.clone(),
                hello,
                h.token,
                h.spectator,
                core.config.link_ceiling as f32,
                place as u64,
            );
            peer.suspend();
            self.suspended_addr.insert(h.addr, h.client);
            let s = Suspended {
                peer,
                since: core.now,
                nudged: None,
                knock: Some((core.now, core.now + KNOCK_FOR_US)),
            };
            self.suspended.insert(h.client, s);
        }
        let top = heirs.iter().map(|h| h.client.0).chain([me.0]).max();
        self.next_client = top.unwrap_or(0).wrapping_add(1).max(1);
        self.epoch += 1;
    }

    /// A new host knocks at the sessions it took over, every [`KNOCK_EVERY_US`] for
    /// [`KNOCK_FOR_US`] or until they resume: one byte each, which their clients count as
    /// a stranger's and drop, but which opens our NAT (if any) to their hellos (they are
    /// sending to us meanwhile, which opens theirs): beyond one LAN, the path between two
    /// players is punched as the rendezvous server's introduction does.
    pub(crate) fn knock(&mut self, core: &mut Core) {
        for s in self.suspended.values_mut() {
            let Some((last, until)) = s.knock else {
                continue;
            };
            if core.now >= until {
                s.knock = None;
                // No longer awaited: it leaves the succession.
                self.epoch += 1;
            } else if core.now >= last {
                s.knock = Some((core.now + KNOCK_EVERY_US, until));
                core.outbox.push((s.peer.conn.addr, vec![0]));
            }
        }
    }

    /// The sessions a new host took over that it still knocks at: awaited, they keep
    /// their place in the succession (see `manager/succession.rs`).
    pub(crate) fn awaited(&self) -> impl Iterator<Item = (&ClientId, &ClientSession)> {
        let awaited = self.suspended.iter().filter(|(_, s)| s.knock.is_some());
        awaited.map(|(id, s)| (id, &s.peer))
    }

    /// The handshake key pair of cookie epoch `epoch` (made once for the current one).
    fn epoch_key(&mut self, epoch: u64) -> (x25519_dalek::StaticSecret, [u8; 32]) {
        match &self.epoch_key {
            Some((e, secret, public)) if *e == epoch => (secret.clone(), *public),
            Some((e, _, _)) if *e > epoch => self.secrets.epoch_keypair(epoch),
            _ => {
                let (secret, public) = self.secrets.epoch_keypair(epoch);
                self.epoch_key = Some((epoch, secret.clone(), public));
                (secret, public)
            }
        }
    }

    /// Forgets a client, live or suspended (the caller handles its entities and tells the
    /// user).
    pub(crate) fn remove(&mut self, id: ClientId) -> Option<ClientSession> {
        self.epoch += 1;
        if let Some(p) = self.peers.remove(&id) {
            self.by_addr.remove(&p.conn.addr);
            return Some(p);
        }
        let s = self.suspended.remove(&id)?;
        self.suspended_addr.remove(&s.peer.conn.addr);
        Some(s.peer)
    }

    /// A live client fell silent: its session waits for a resume. Its old address is told
    /// so (tagged; a client that still hears us starts resuming at once). Returns its name.
    pub(crate) fn suspend(&mut self, core: &mut Core, id: ClientId) -> Option<String> {
        let mut p = self.peers.remove(&id)?;
        self.epoch += 1;
        p.suspend();
        self.by_addr.remove(&p.conn.addr);
        core.goodbye(&p.conn, DisconnectReason::TimedOut);
        let name = p.name.clone();
        self.suspended_addr.insert(p.conn.addr, id);
        self.suspended.insert(
            id,
            Suspended {
                peer: p,
                since: core.now,
                nudged: Some(core.now),
                knock: None,
            },
        );
        Some(name)
    }

    /// The addresses of the player sessions that wait for a resume.
    pub(crate) fn suspended_players(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        self.suspended
            .values()
            .filter(|s| !s.peer.spectator)
            .map(|s| s.peer.conn.addr)
    }

    /// Takes out the suspended sessions older than `grace` µs.
    pub(crate) fn expired(&mut self, now: u64, grace: u64) -> Vec<(ClientId, ClientSession)> {
        let old: Vec<ClientId> = self
            .suspended
            .iter()
            .filter(|(_, s)| now.saturating_sub(s.since) >= grace)
            .map(|(id, _)| *id)
            .collect();
        old.into_iter()
            .filter_map(|id| self.remove(id).map(|p| (id, p)))
            .collect()
    }

    /// Sessions (live or suspended) that play, and that watch.
    pub(crate) fn counts(&self) -> (usize, usize) {
        let all = self
            .peers
            .values()
            .chain(self.suspended.values().map(|s| &s.peer));
        let watching = all.clone().filter(|p| p.spectator).count();
        (all.count() - watching, watching)
    }

    /// A tagged datagram from the old address of a suspended session: a BYE ends it; DATA
    /// means the client has not noticed, so it is told (now and then) to resume.
    fn suspended_datagram(
        &mut self,
        core: &mut Core,
        from: SocketAddr,
        kind: DatagramKind,
        bytes: &[u8],
    ) -> Arrival {
        let Some(&id) = self.suspended_addr.get(&from) else {
            core.counters.strangers += 1;
            return Arrival::Done;
        };
        let Some(s) = self.suspended.get_mut(&id) else {
            return Arrival::Done;
        };
        if s.peer.conn.open(bytes).is_err() {
            core.counters.bad_tags += 1;
            return Arrival::Done;
        }
        if kind == DatagramKind::Bye {
            return Arrival::Left(id, DisconnectReason::Left);
        }
        if s.nudged
            .is_none_or(|t| core.now.saturating_sub(t) >= NUDGE_US)
        {
            s.nudged = Some(core.now);
            core.goodbye(&s.peer.conn, DisconnectReason::TimedOut);
        }
        Arrival::Done
    }

    /// Takes one datagram from `from`.
    pub(crate) fn datagram(&mut self, core: &mut Core, from: SocketAddr, bytes: &[u8]) -> Arrival {
        let known = self.by_addr.get(&from).copied();
        let Ok((version, kind, body)) = wire::parse_header(bytes) else {
            return self.refuse(core, known);
        };
        if version != core.config.version {
            self.other_version(core, from, (version, kind), body, bytes.len());
            return Arrival::Done;
        }
        match kind {
            DatagramKind::Hello => match wire::parse_hello(body) {
                Ok(h) => self.challenge(core, from, h, bytes.len()),
                Err(_) => self.refuse(core, known),
            },
            DatagramKind::Connect => {
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
            DatagramKind::Data | DatagramKind::Bye => match known {
                Some(id) => self.sealed(core, id, kind, bytes),
                None => self.suspended_datagram(core, from, kind, bytes),
            },
            DatagramKind::Challenge | DatagramKind::Welcome | DatagramKind::Reject => {
                self.refuse(core, known)
            }
        }
    }

    /// A hello within the limits: the stateless challenge, no larger than the hello (an
    /// answer never amplifies what a forged source sent).
    fn challenge(
        &mut self,
        core: &mut Core,
        from: SocketAddr,
        h: wire::Hello,
        len: usize,
    ) -> Arrival {
        if !self.answers(core, from) {
            return Arrival::Done;
        }
        let epoch = core.now / COOKIE_EPOCH_US;
        let cookie = self.secrets.cookie(from, h.nonce, &h.client_pub, epoch);
        let (_, server_pub) = self.epoch_key(epoch);
        let c = wire::challenge(
            core.config.version,
            &wire::Challenge {
                nonce: h.nonce,
                cookie,
                server_pub,
            },
        );
        if c.len() <= len {
            core.outbox.push((from, c));
        }
        Arrival::Done
    }

    /// Whether the hello limits let an answer go to `from` now: every answer before a
    /// session exists (a challenge, a refusal of another version, a connect's outcome)
    /// counts against them; one past them is counted and dropped.
    fn answers(&mut self, core: &mut Core, from: SocketAddr) -> bool {
        let allowed = self.limiter.allow(from.ip(), core.now);
        if !allowed {
            core.counters.hellos_dropped += 1;
        }
        allowed
    }

    /// A datagram of another protocol `version` (of `kind`, `len` bytes, `body` after the
    /// header): a hello is refused, within the hello limits, saying which version this
    /// server speaks; anything else is a stranger's.
    fn other_version(
        &mut self,
        core: &mut Core,
        from: SocketAddr,
        (version, kind): (u16, DatagramKind),
        body: &[u8],
        len: usize,
    ) {
        if kind != DatagramKind::Hello {
            core.counters.strangers += 1;
            return;
        }
        // Echoing the nonce from the place no version moves is what tells the client this
        // refusal answers its own hello.
        let Some(nonce) = wire::hello_nonce(body) else {
            core.counters.strangers += 1;
            return;
        };
        if !self.answers(core, from) {
            return;
        }
        let reason = RejectReason::VersionMismatch {
            server: core.config.version,
            client: version,
        };
        core.counters.version_refusals += 1;
        log_refusal_of(from, core.counters.version_refusals, &reason);
        answer(core, from, len, &RejectBody { reason, nonce });
    }

    /// A sealed datagram (data or a goodbye) from client `id`'s address: opened under its
    /// session's key.
    fn sealed(
        &mut self,
        core: &mut Core,
        id: ClientId,
        kind: DatagramKind,
        bytes: &[u8],
    ) -> Arrival {
        let Some(peer) = self.peers.get_mut(&id) else {
            return Arrival::Done;
        };
        let Ok(opened) = peer.conn.open(bytes) else {
            core.counters.bad_tags += 1;
            log_refusal(id, &peer.conn.stats.bad_tags, "datagrams with a wrong tag");
            return Arrival::Done;
        };
        if kind == DatagramKind::Data {
            return Arrival::Data {
                id,
                opened,
                len: bytes.len(),
            };
        }
        match wire::decode::<Bye>(&opened[wire::HEADER_LEN..]) {
            Ok(_) => Arrival::Left(id, DisconnectReason::Left),
            Err(_) => {
                peer.conn.stats.bad_datagrams += 1;
                Arrival::Done
            }
        }
    }

    /// Counts a datagram nobody can use: a stranger's, or a known client's that is not
    /// even a well-formed header (which a forger can send from its address, so it never
    /// ends a session).
    fn refuse(&mut self, core: &mut Core, known: Option<ClientId>) -> Arrival {
        match known.and_then(|id| self.peers.get_mut(&id)) {
            Some(p) => {
                p.conn.stats.bad_tags += 1;
                core.counters.bad_tags += 1;
            }
            None => core.counters.strangers += 1,
        }
        Arrival::Done
    }

    /// A connect datagram with a well-formed head (`hello`, `cookie`): admits, resumes or
    /// refuses its client.
    fn connect(
        &mut self,
        core: &mut Core,
        from: SocketAddr,
        hello: wire::Hello,
        cookie: [u8; crypto::COOKIE_LEN],
        datagram: &[u8],
    ) -> Arrival {
        let Some(good) = self.cookie_epoch(core.now, from, &hello, &cookie) else {
            core.counters.bad_cookies += 1;
            return Arrival::Done;
        };
        // A replayed connect costs a key agreement and draws an answer: it counts against
        // the same limits as a hello (the client sends it again if it goes unanswered).
        if !self.answers(core, from) {
            return Arrival::Done;
        }
        // The address receives what is sent to it: from here on, answers may be larger.
        let here = self.by_addr.get(&from).copied();
        if let Some(id) = here
            && self.peers.get(&id).is_some_and(|p| p.hello == hello)
        {
            // Our welcome was lost: say it again.
            self.welcome(core, id);
            return Arrival::Done;
        }
        let Some((key, cipher, request)) = self.open_request(core, good, &hello, datagram) else {
            return Arrival::Done;
        };
        let refuser = Refuser {
            asked: request
                .name
                .chars()
                .filter(|c| !c.is_control())
                .take(40)
                .collect(),
            from,
            nonce: hello.nonce,
            cipher: &cipher,
        };
        if let Some(claim) = request.resume {
            return self.resume(core, (from, here), (hello, key), claim, &refuser);
        }
        let kicked = self
            .kicks
            .of_session(&crypto::session_token(&key), core.now);
        if let Some(reason) = kicked {
            // The connect of a session we kicked, sent again (our welcome and goodbye were
            // still on their way to it): that session, not a new one (explorer seed 9473:
            // a kicked player was back in the game a tenth of a second later).
            return refuser.refuse(core, RejectReason::Kicked { reason });
        }
        if let Some(id) = here {
            // The same address started a new session (the client restarted).
            return Arrival::Left(id, DisconnectReason::Replaced);
        }
        if let Err(reason) = admissible(core, &request, &key, (&self.banned, self.counts())) {
            return refuser.refuse(core, reason);
        }
        self.join(core, from, (hello, key), &request)
    }

    /// The epoch whose cookie `cookie` is, for a hello from `from` at `now`: this epoch or
    /// the one before is good (that epoch's key pair made the challenge).
    fn cookie_epoch(
        &self,
        now: u64,
        from: SocketAddr,
        hello: &wire::Hello,
        cookie: &[u8; crypto::COOKIE_LEN],
    ) -> Option<u64> {
        let epoch = now / COOKIE_EPOCH_US;
        [Some(epoch), epoch.checked_sub(1)]
            .into_iter()
            .flatten()
            .find(|&e| {
                let want = self.secrets.cookie(from, hello.nonce, &hello.client_pub, e);
                crypto::same(&want, cookie)
            })
    }

    /// The session key of a connect from a client that answered the challenge of epoch
    /// `epoch`, its cipher, and the request the datagram carries. The request is read only
    /// under a tag made with the same key: a client whose challenge was corrupted on the
    /// way starts again instead of being admitted with a key that differs from ours.
    fn open_request(
        &mut self,
        core: &mut Core,
        epoch: u64,
        hello: &wire::Hello,
        datagram: &[u8],
    ) -> Option<(crypto::Key, crypto::Cipher, Request)> {
        let (secret, server_pub) = self.epoch_key(epoch);
        let key = crypto::session_key(
            &secret,
            &hello.client_pub,
            hello.nonce,
            &hello.client_pub,
            &server_pub,
        );
        let Some(key) = key else {
            core.counters.bad_cookies += 1;
            return None;
        };
        let cipher = crypto::Cipher::new(&key);
        let clear = wire::clear_len(DatagramKind::Connect);
        let Some(opened) = cipher.open(Direction::ToServer, datagram, clear, Nonce::Synthetic)
        else {
            core.counters.bad_cookies += 1;
            return None;
        };
        let request = wire::parse_connect_head(&opened[wire::HEADER_LEN..])
            .and_then(|(_, _, r)| wire::decode::<Request>(r));
        let Ok(request) = request else {
            core.counters.strangers += 1;
            return None;
        };
        Some((key, cipher, request))
    }

    /// A connect that claims a session (`claim`) from `from` (which session `here` had the
    /// address, if any): resumed if its proof holds, refused if not.
    fn resume(
        &mut self,
        core: &mut Core,
        (from, here): (SocketAddr, Option<ClientId>),
        (hello, key): (wire::Hello, crypto::Key),
        claim: wire::Resume,
        refuser: &Refuser<'_>,
    ) -> Arrival {
        let token = self
            .peers
            .get(&claim.client)
            .or_else(|| self.suspended.get(&claim.client).map(|s| &s.peer))
            .map(|p| p.token);
        let proven =
            token.is_some_and(|t| crypto::same(&crypto::resume_proof(&t, &key), &claim.proof));
        let old = match proven {
            true => self.remove(claim.client),
            false => None,
        };
        let Some(mut old) = old else {
            let refusal = match self.kicks.of(&claim, &key, core.now) {
                Some(reason) => RejectReason::Kicked { reason },
                None => RejectReason::SessionExpired,
            };
            return refuser.refuse(core, refusal);
        };
        if let Some(other) = here.filter(|&o| o != claim.client) {
            // Another session had this address (a NAT reused it): it is over.
            return self.displace(core, other, claim.client, old);
        }
        let mut conn = Connection::accepted(from, key, core.now, core.timing());
        if claim.restarted {
            // A new process: it has nothing of the session but its claim, and gets what a
            // newcomer gets, under its old id and with its entities.
            old.restarted();
        } else {
            // Both halves of the reliable channel go on: what the client sends again is
            // delivered once, and what we had not got acknowledged (and the game's events
            // while it was silent) goes again under the same numbers.
            conn.carry_reliable_in(&mut old.conn);
            conn.carry_reliable_out(&mut old.conn);
        }
        let id = claim.client;
        let name = old.name.clone();
        self.admit(
            id,
            ClientSession {
                conn,
                hello,
                resumed: true,
                // A resumed client is told the succession again.
                told: None,
                ..old
            },
        );
        self.welcome(core, id);
        let restarted = claim.restarted;
        let again = if restarted {
            " (its game started again)"
        } else {
            ""
        };
        tracing::info!("{name} ({id}) resumed its session from {from}{again}");
        core.events.push_back(NetEvent::ClientResumed {
            client: id,
            name,
            restarted,
        });
        match restarted {
            // Sent the world as a newcomer is: it holds none of it.
            true => Arrival::Joined(id),
            false => Arrival::Resumed(id),
        }
    }

    /// A new session for an admissible `request` from `from`, under a name of its own.
    fn join(
        &mut self,
        core: &mut Core,
        from: SocketAddr,
        (hello, key): (wire::Hello, crypto::Key),
        request: &Request,
    ) -> Arrival {
        // A suspended session keeps its name until it expires. A taken name is not refused:
        // the newcomer plays as the first free "name (2)", "name (3)"...
        let taken: Vec<&str> = self
            .peers
            .values()
            .chain(self.suspended.values().map(|s| &s.peer))
            .map(|p| p.name.as_str())
            .chain(core.config.reserved_names.iter().map(String::as_str))
            .collect();
        let name = free_name(request.name.trim(), &taken);
        let id = loop {
            let id = ClientId(self.next_client);
            self.next_client = self.next_client.wrapping_add(1).max(1);
            if !self.peers.contains_key(&id) {
                break id;
            }
        };
        let peer = ClientSession::new(
            Connection::accepted(from, key, core.now, core.timing()),
            name.clone(),
            hello,
            crypto::session_token(&key),
            request.spectator,
            core.config.link_ceiling as f32,
            core.now,
        );
        self.admit(id, peer);
        self.welcome(core, id);
        let what = if request.spectator {
            "to watch"
        } else {
            "to play"
        };
        tracing::info!("{name} joined as {id} {what}");
        core.events.push_back(NetEvent::ClientJoined {
            client: id,
            name,
            spectator: request.spectator,
        });
        Arrival::Joined(id)
    }

    fn admit(&mut self, id: ClientId, peer: ClientSession) {
        self.epoch += 1;
        self.by_addr.insert(peer.conn.addr, id);
        self.peers.insert(id, peer);
    }

    /// A proven resume came from the address of another live session: that one ends (its
    /// client is gone from there), and the resuming one is put back to wait for its next
    /// try, which then finds the address free.
    fn displace(
        &mut self,
        core: &mut Core,
        other: ClientId,
        id: ClientId,
        old: ClientSession,
    ) -> Arrival {
        self.suspended_addr.insert(old.conn.addr, id);
        self.suspended.insert(
            id,
            Suspended {
                peer: old,
                since: core.now,
                nudged: None,
                knock: None,
            },
        );
        Arrival::Left(other, DisconnectReason::Replaced)
    }

    fn welcome(&mut self, core: &mut Core, id: ClientId) {
        let Some(p) = self.peers.get(&id) else {
            return;
        };
        let w = Welcome {
            client: id,
            server_name: core.config.server_name.clone(),
            grace_ms: (f64::from(core.config.grace.max(0.0)) * 1000.0).min(f64::from(u32::MAX))
                as u32,
            resumed: p.resumed,
            physics: core.physics,
            name: p.name.clone(),
        };
        if let Ok(body) = wire::encode(&w)
            && let Some(d) = p
                .conn
                .sealed(DatagramKind::Welcome, core.config.version, &body)
        {
            core.outbox.push((p.conn.addr, d));
        }
    }
}

/// Logs the refusal of a hello from `from` (the `count`th so far): each of the first few,
/// then at each power of two, so a flood of them costs no log line each.
fn log_refusal_of(from: SocketAddr, count: u64, reason: &RejectReason) {
    if count <= 8 || count.is_power_of_two() {
        tracing::info!("refused a hello from {from}: {reason} ({count} such refusals so far)");
    }
}

/// Refuses one connect, sealed under the key it was made with, so its client knows the
/// refusal is the server's.
struct Refuser<'a> {
    /// The name asked for, as logged.
    asked: String,
    from: SocketAddr,
    /// The client's hello nonce, which the refusal echoes.
    nonce: u64,
    cipher: &'a crypto::Cipher,
}

impl Refuser<'_> {
    fn refuse(&self, core: &mut Core, reason: RejectReason) -> Arrival {
        tracing::info!("refused '{}' from {}: {reason}", self.asked, self.from);
        let r = RejectBody {
            reason,
            nonce: self.nonce,
        };
        if let Ok(mut d) = wire::control(DatagramKind::Reject, core.config.version, &r) {
            let clear = wire::clear_len(DatagramKind::Reject);
            self.cipher
                .seal(Direction::ToClient, &mut d, clear, Nonce::Synthetic);
            core.outbox.push((self.from, d));
        }
        Arrival::Done
    }
}
