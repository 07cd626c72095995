//! Shared by the property tests and the `cargo fuzz` target (feature `fuzzing`): a server
//! with one admitted client, and a function that throws arbitrary bytes at it through the
//! packet entry point.

use crate::wire::{self, DatagramKind};
use crate::{NetConfig, NetManager};
use lanyard::{EntityGroup, GroupConfig, KindRegistry, Owner, Role};
use lanyard_demo as demo;
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

fn registry() -> Arc<KindRegistry> {
    let mut r = KindRegistry::new();
    demo::register(&mut r).expect("demo kinds");
    Arc::new(r)
}

/// A server with a few demo entities and one client admitted through the real handshake
/// at [`CLIENT`]; also returns the client, connected.
pub fn server_and_client() -> (NetManager, EntityGroup, NetManager, EntityGroup) {
    let mut group = EntityGroup::new(registry(), GroupConfig::default());
    for i in 0..3 {
        let p = demo::CrateParams {
            pos: [i as f32, 0.5, 0.0],
            half_extents: [0.4; 3],
            color: [0; 4],
            can_sleep: true,
        };
        group.spawn(demo::CRATE, &p, Owner::Server).expect("spawn");
    }
    let mut net = NetManager::server(NetConfig::default(), [1; 32]);
    let mut cgroup = EntityGroup::new(
        registry(),
        GroupConfig {
            role: Role::Client(lanyard::ClientId(0)),
            ..GroupConfig::default()
        },
    );
    let mut client = NetManager::client(NetConfig::default(), SERVER, "fuzz", None, [2; 32]);
    for _ in 0..20 {
        client.update(&mut cgroup, 1.0 / 60.0);
        for (_, d) in client.drain_outgoing().collect::<Vec<_>>() {
            net.receive(CLIENT, &d);
        }
        net.update(&mut group, 1.0 / 60.0);
        for (_, d) in net.drain_outgoing().collect::<Vec<_>>() {
            client.receive(SERVER, &d);
        }
    }
    assert_eq!(net.clients().len(), 1, "the client was not admitted");
    (net, group, client, cgroup)
}

/// A server with a few demo entities and one admitted client at [`CLIENT`].
pub fn server_with_client() -> (NetManager, EntityGroup) {
    let (net, group, _, _) = server_and_client();
    (net, group)
}

/// Feeds `data` to the server as datagrams: whole from the stranger and from the client,
/// then behind each valid header kind, then split in chunks; runs a frame after each batch.
/// Panics only if the server does, or loses its client (garbage, forged or not, never
/// ends a session: it carries no valid tag).
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
    net.update(group, 1.0 / 60.0);
    net.drain_outgoing().for_each(drop);
    while net.poll_event().is_some() {}
    assert_eq!(net.clients().len(), 1, "garbage ended the client's session");
}
