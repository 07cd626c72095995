//! Shared by the property tests and the `cargo fuzz` targets (feature `fuzzing`): sessions
//! built once and copied for every input ([`Fixture`], [`Handshake`]), and one function per
//! target that throws arbitrary bytes at a decoder through its real entry point.
//!
//! Most decoders sit behind the session's seal, where raw bytes never reach them. The
//! targets for those seal the fuzzer's bytes with the session's key, as a peer running
//! modified code would: [`from_client`] against the server, [`from_server`] against the
//! client, [`handshake`] for both sides' handshakes. Each function panics only if the code
//! under test does, or breaks a promise it checks.
//!
//! The crate has no kinds of its own: a session is built from a [`World`] its caller
//! gives (the fuzz targets and the tests give `lanyard_demo::fuzz_world()`), so the
//! feature adds no dependency.

use crate::connection::ReliableReceiver;
use crate::crypto::{Cipher, Direction, Nonce};
use crate::discovery::{self, ServerInfo};
use crate::wire::{self, DatagramKind, Fragment, MAX_FRAGMENT, MAX_MESSAGE};
use crate::{NetConfig, NetManager};
use lanyard::{
    ClientId, EntityGroup, FrameDriver, FramePass, GroupConfig, KindRegistry, Owner, Role,
};
use std::net::SocketAddr;
use std::sync::Arc;

/// The address of the admitted client.
pub const CLIENT: SocketAddr = SocketAddr::new(
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2)),
    4000,
);
/// The address of a stranger.
pub const STRANGER: SocketAddr = SocketAddr::new(
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 3)),
    4000,
);
/// The server's address, as the client knows it.
pub const SERVER: SocketAddr = SocketAddr::new(
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 1)),
    4000,
);

const DT: f32 = 1.0 / 60.0;

/// What a fuzzing session plays with: its kinds, what the server spawns before the client
/// comes (a few bodies), and what the client then asks for (a body of its own, with
/// [`EntityGroup::request_spawn`]).
pub type World = (
    Arc<KindRegistry>,
    fn(&mut EntityGroup),
    fn(&mut EntityGroup),
);

fn client_group(registry: &Arc<KindRegistry>) -> EntityGroup {
    EntityGroup::new(
        registry.clone(),
        GroupConfig {
            role: Role::Client(ClientId(0)),
            ..GroupConfig::default()
        },
    )
}

/// Runs one frame of `client` then `server`, moving their datagrams; gives every datagram
/// each sent to `seen` with its direction.
fn exchange(
    server: (&mut NetManager, &mut EntityGroup),
    client: (&mut NetManager, &mut EntityGroup),
    mut seen: impl FnMut(Direction, &NetManager, &[u8]),
) {
    client.0.update(client.1, DT);
    for (_, d) in client.0.drain_outgoing().collect::<Vec<_>>() {
        seen(Direction::ToServer, server.0, &d);
        server.0.receive(CLIENT, &d);
    }
    server.0.update(server.1, DT);
    for (_, d) in server.0.drain_outgoing().collect::<Vec<_>>() {
        seen(Direction::ToClient, client.0, &d);
        client.0.receive(SERVER, &d);
    }
}

/// A server with the bodies `world` spawns and one client admitted through the real
/// handshake at [`CLIENT`]; also returns the client, connected.
pub fn server_and_client(world: &World) -> (NetManager, EntityGroup, NetManager, EntityGroup) {
    let mut group = EntityGroup::new(world.0.clone(), GroupConfig::default());
    (world.1)(&mut group);
    let mut net = NetManager::server(NetConfig::default(), [1; 32]);
    let mut cgroup = client_group(&world.0);
    let mut client = NetManager::client(NetConfig::default(), SERVER, "fuzz", None, [2; 32]);
    for _ in 0..20 {
        exchange(
            (&mut net, &mut group),
            (&mut client, &mut cgroup),
            |_, _, _| (),
        );
    }
    assert_eq!(net.clients().len(), 1, "the client was not admitted");
    (net, group, client, cgroup)
}

/// A server with the bodies `world` spawns and one admitted client at [`CLIENT`].
pub fn server_with_client(world: &World) -> (NetManager, EntityGroup) {
    let (net, group, _, _) = server_and_client(world);
    (net, group)
}

/// A session built once, between frames: the server of [`server_and_client`] and its
/// client, which owns the body it asked for and has traded events with the server. Every
/// input starts from a copy ([`server`](Self::server), [`client`](Self::client)): the
/// NetManagers are cloned and the worlds restored from snapshots.
pub struct Fixture {
    server: NetManager,
    server_world: Vec<u8>,
    client: NetManager,
    client_world: Vec<u8>,
    registry: Arc<KindRegistry>,
    id: ClientId,
    /// What the client's DATA datagrams carried after their sequence numbers, opened:
    /// seeds for [`from_client`].
    pub seeds_to_server: Vec<Vec<u8>>,
    /// What the server's DATA datagrams to the client carried after their sequence
    /// numbers, opened: seeds for [`from_server`].
    pub seeds_to_client: Vec<Vec<u8>>,
}

impl Fixture {
    /// Builds the session in `world` (about a second of play).
    pub fn new(world: &World) -> Self {
        let (mut net, mut group, mut client, mut cgroup) = server_and_client(world);
        let id = client.client_id().expect("admitted");
        (world.2)(&mut cgroup);
        net.send_event(b"from the server".to_vec()).expect("server");
        client
            .send_event(b"from the client".to_vec())
            .expect("client");
        let (mut to_server, mut to_client) = (Vec::new(), Vec::new());
        for _ in 0..60 {
            exchange(
                (&mut net, &mut group),
                (&mut client, &mut cgroup),
                |dir, receiver, d| {
                    let Some((DatagramKind::Data, _)) = wire::sealed_kind(d) else {
                        return;
                    };
                    let mut copy = receiver.clone();
                    let Some(opened) = copy.connection_mut(id).and_then(|c| c.open(d).ok()) else {
                        return;
                    };
                    let rest = opened[wire::clear_len(DatagramKind::Data)..].to_vec();
                    match dir {
                        Direction::ToServer => to_server.push(rest),
                        Direction::ToClient => to_client.push(rest),
                    }
                },
            );
        }
        assert!(
            cgroup.iter().any(|e| e.owner() == Owner::Client(id)),
            "the client got no body of its own"
        );
        Fixture {
            server_world: group.snapshot().expect("snapshot"),
            client_world: cgroup.snapshot().expect("snapshot"),
            registry: group.registry().clone(),
            server: net,
            client,
            id,
            seeds_to_server: to_server,
            seeds_to_client: to_client,
        }
    }

    /// A copy of the server and its world.
    pub fn server(&self) -> (NetManager, EntityGroup) {
        let g = EntityGroup::restore(self.registry.clone(), &self.server_world).expect("restore");
        (self.server.clone(), g)
    }

    /// A copy of the client and its world.
    pub fn client(&self) -> (NetManager, EntityGroup) {
        let g = EntityGroup::restore(self.registry.clone(), &self.client_world).expect("restore");
        (self.client.clone(), g)
    }
}

/// Feeds `data` to the server as datagrams: whole from the stranger and from the client,
/// then behind each valid header kind, then split in chunks; runs a frame after each batch.
/// Panics only if the server does, or loses its client (garbage, forged or not, never
/// ends a session: it carries no valid seal).
pub fn throw_at_server(net: &mut NetManager, group: &mut EntityGroup, data: &[u8]) {
    let mut batches: Vec<Vec<u8>> = vec![data.to_vec()];
    for kind in [
        DatagramKind::Hello,
        DatagramKind::Challenge,
        DatagramKind::Connect,
        DatagramKind::Welcome,
        DatagramKind::Reject,
        DatagramKind::Data,
        DatagramKind::Bye,
    ] {
        let mut d = wire::begin(kind, wire::PROTOCOL_VERSION);
        d.extend_from_slice(data);
        batches.push(d);
    }
    batches.extend(data.chunks(37).map(<[u8]>::to_vec));
    for b in &batches {
        net.receive(STRANGER, b);
        net.receive(CLIENT, b);
    }
    net.update(group, DT);
    net.drain_outgoing().for_each(drop);
    while net.poll_event().is_some() {}
    assert_eq!(net.clients().len(), 1, "garbage ended the client's session");
}

/// Splits fuzzer bytes into datagram bodies at each `0xFF 0xFE` pair, so one input can be
/// several datagrams.
fn bodies(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while let Some(i) = rest.windows(2).position(|w| w == [0xFF, 0xFE]) {
        out.push(&rest[..i]);
        rest = &rest[i + 2..];
    }
    out.push(rest);
    out
}

/// Seals each body of `data` as `sender`'s next datagram on its connection to `id` (DATA,
/// the last one a goodbye when there are several), hands it to `receiver` as if from `from`,
/// and runs one of `receiver`'s frames after each.
fn forged(
    sender: &mut NetManager,
    id: ClientId,
    (receiver, group, from): (&mut NetManager, &mut EntityGroup, SocketAddr),
    data: &[u8],
) {
    let conn = sender.connection_mut(id).expect("a session");
    let parts = bodies(data);
    for (i, body) in parts.iter().enumerate() {
        let kind = match i + 1 == parts.len() && parts.len() > 1 {
            true => DatagramKind::Bye,
            false => DatagramKind::Data,
        };
        if let Some(d) = conn.forge(kind, wire::PROTOCOL_VERSION, body) {
            receiver.receive(from, &d);
        }
        receiver.update(group, DT);
    }
    receiver.drain_outgoing().for_each(drop);
    while receiver.poll_event().is_some() {}
}

/// A modified client: each body of `data` sealed as the admitted client's next DATA
/// datagram (after its sequence number: acks, broadcast number, clock, reliable messages,
/// sections), fed to the server with a frame after each; then the last one as a goodbye.
/// The server may kick the client (that is its right); it may not panic.
pub fn from_client(fx: &Fixture, data: &[u8]) {
    let (mut net, mut group) = fx.server();
    forged(
        &mut fx.client.clone(),
        fx.id,
        (&mut net, &mut group, CLIENT),
        data,
    );
}

/// A modified server: each body of `data` sealed as the server's next DATA datagram to the
/// client (acks, broadcast number, clock, reliable messages such as spawns and events, and
/// state entries), fed to the client with a frame after each; then the last one as a
/// goodbye. The client may give up the session; it may not panic. Returns the client as
/// the input left it.
pub fn from_server(fx: &Fixture, data: &[u8]) -> NetManager {
    let (mut client, mut group) = fx.client();
    forged(
        &mut fx.server.clone(),
        fx.id,
        (&mut client, &mut group, SERVER),
        data,
    );
    client
}

/// The reliable channel putting messages together: `data` read as fragments, five bytes
/// each (an id under 512, so they meet and can make a message over the cap; whether more
/// follow; a length up to one over a fragment's), given to a receiver in that order.
/// Checks that it delivers exactly the messages the fragments make in id order (the first
/// copy of each id counts; a message over [`MAX_MESSAGE`] and a fragment over
/// [`MAX_FRAGMENT`] are dropped), and that what it holds stays within the window's
/// fragments and one message. Returns what it delivered.
pub fn fragments(data: &[u8]) -> Vec<Vec<u8>> {
    let mut r = ReliableReceiver::default();
    let mut got = Vec::new();
    let mut first = std::collections::BTreeMap::new();
    for c in data.chunks_exact(5) {
        let id = u32::from(u16::from_le_bytes([c[0], c[1]]) % 512);
        let more = c[2] & 1 == 1;
        let len = usize::from(u16::from_le_bytes([c[3], c[4]])) % (MAX_FRAGMENT + 2);
        let bytes = vec![c[0] ^ c[1]; len];
        if len <= MAX_FRAGMENT {
            first.entry(id).or_insert((more, bytes.clone()));
        }
        r.receive(
            Fragment {
                id,
                more,
                bytes: &bytes,
            },
            &mut got,
        );
        assert!(r.held_bytes() <= 512 * MAX_FRAGMENT + MAX_MESSAGE);
    }
    // The model: fragments in id order from 0 while none is missing, cut after each last
    // fragment; a message is delivered if it is whole and within the cap.
    let mut want = Vec::new();
    let mut message: Vec<u8> = Vec::new();
    let mut size = 0;
    for id in 0.. {
        let Some((more, bytes)) = first.get(&id) else {
            break;
        };
        size += bytes.len();
        message.extend_from_slice(bytes);
        if !more {
            if size <= MAX_MESSAGE {
                want.push(std::mem::take(&mut message));
            }
            message.clear();
            size = 0;
        }
    }
    assert_eq!(got, want, "delivered messages");
    got
}

/// The input of [`fragments`] that gives `(id, more, len)` fragments in this order.
pub fn fragment_input(fragments: &[(u16, bool, u16)]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(id, more, len) in fragments {
        out.extend_from_slice(&id.to_le_bytes());
        out.push(u8::from(more));
        out.extend_from_slice(&len.to_le_bytes());
    }
    out
}

/// A handshake built once: a server with no client yet, a client that has said hello,
/// and the same client once it has the server's challenge (it has sent its connect).
pub struct Handshake {
    registry: Arc<KindRegistry>,
    server: NetManager,
    hello: NetManager,
    connecting: NetManager,
}

impl Handshake {
    /// Builds it, with the kinds of `world`.
    pub fn new(world: &World) -> Self {
        let mut server = NetManager::server(NetConfig::default(), [1; 32]);
        let mut group = EntityGroup::new(world.0.clone(), GroupConfig::default());
        let mut cgroup = client_group(&world.0);
        let mut client = NetManager::client(NetConfig::default(), SERVER, "fuzz", None, [2; 32]);
        client.update(&mut cgroup, DT);
        let hello = client.clone();
        for (_, d) in client.drain_outgoing().collect::<Vec<_>>() {
            server.receive(CLIENT, &d);
        }
        server.update(&mut group, DT);
        for (_, d) in server.drain_outgoing().collect::<Vec<_>>() {
            client.receive(SERVER, &d);
        }
        client.update(&mut cgroup, DT);
        client.drain_outgoing().for_each(drop);
        Handshake {
            registry: world.0.clone(),
            server,
            hello,
            connecting: client,
        }
    }
}

/// Both sides' handshakes: `data` as a challenge or refusal to a client that said hello;
/// sealed with the handshake's key as a welcome or refusal to a client that answered the
/// challenge; and as the request of a connect with a good cookie, sealed, to the server.
pub fn handshake(hs: &Handshake, data: &[u8]) {
    let version = wire::PROTOCOL_VERSION;
    let mut group = client_group(&hs.registry);
    for kind in [DatagramKind::Challenge, DatagramKind::Reject] {
        let mut client = hs.hello.clone();
        let mut d = wire::begin(kind, version);
        d.extend_from_slice(data);
        client.receive(SERVER, &d);
        client.receive(SERVER, data);
        client.update(&mut group, DT);
    }
    let mut client = hs.connecting.clone();
    let conn = client.connection_mut(ClientId(0)).expect("a client");
    let (Some(key), crate::connection::State::Connect { datagram, .. }) =
        (conn.key().copied(), conn.state())
    else {
        panic!("the client is not answering a challenge");
    };
    let head = datagram[..wire::clear_len(DatagramKind::Connect)].to_vec();
    let cipher = Cipher::new(&key);
    for kind in [DatagramKind::Welcome, DatagramKind::Reject] {
        let mut client = hs.connecting.clone();
        let mut d = wire::begin(kind, version);
        d.extend_from_slice(data);
        cipher.seal(
            Direction::ToClient,
            &mut d,
            wire::HEADER_LEN,
            Nonce::Synthetic,
        );
        client.receive(SERVER, &d);
        client.update(&mut group, DT);
        while client.poll_event().is_some() {}
    }
    let mut server = hs.server.clone();
    let mut sgroup = EntityGroup::new(hs.registry.clone(), GroupConfig::default());
    let mut d = head;
    d.extend_from_slice(data);
    cipher.seal(
        Direction::ToServer,
        &mut d,
        wire::clear_len(DatagramKind::Connect),
        Nonce::Synthetic,
    );
    server.receive(CLIENT, &d);
    server.update(&mut sgroup, DT);
    server.drain_outgoing().for_each(drop);
    while server.poll_event().is_some() {}
}

/// A frame driver that offers one packet of sections from one owner.
struct Offer<'a> {
    bytes: &'a [u8],
    from: Owner,
}

impl FrameDriver for Offer<'_> {
    fn inbound(&mut self, pass: &mut FramePass<'_>) {
        pass.receive_packet(self.bytes, self.from);
    }
}

/// `data` as a packet of sections: from the server to the fixture's client world, and from
/// the client to the server's world (which checks what a client may say), a frame each.
pub fn sections(fx: &Fixture, data: &[u8]) {
    let (_, mut client) = fx.client();
    client.run_frame(&mut Offer {
        bytes: data,
        from: Owner::Server,
    });
    let (_, mut server) = fx.server();
    server.run_frame(&mut Offer {
        bytes: data,
        from: Owner::Client(fx.id),
    });
}

/// What a server of the fuzz targets says about itself (discovery, rendezvous).
pub fn server_info() -> ServerInfo {
    ServerInfo {
        name: "yard".into(),
        players: 1,
        max_players: 8,
        spectators: 0,
        max_spectators: 8,
        password: false,
        version: wire::PROTOCOL_VERSION,
        game_port: 47810,
        web_port: None,
    }
}

/// `data` as a discovery request (the answer is never larger) and as an answer.
pub fn discovery(data: &[u8]) {
    let info = server_info();
    if let Some(a) = discovery::answer_to(data, &info) {
        assert!(
            a.len() <= data.len(),
            "amplified {} into {}",
            data.len(),
            a.len()
        );
    }
    let _ = discovery::is_request(data);
    let _ = discovery::parse_answer(data);
}

/// `data` as a recording of the kinds of `registry`: opened, and replayed for up to two
/// seconds.
pub fn recording(data: &[u8], registry: Arc<KindRegistry>) {
    let Ok(mut replay) = lanyard::replay::Replay::open(data, registry) else {
        return;
    };
    let end = replay.end_tick().min(replay.tick() + 120);
    let _ = replay.run_to(end);
}
