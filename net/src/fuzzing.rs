//! Shared by the property tests and the `cargo fuzz` target: a server with one admitted
//! client, and a function that throws arbitrary bytes at it through the packet entry point.

use crate::wire::{self, Hello, Kind};
use crate::{NetConfig, NetManager};
use lanyard::{EntityGroup, GroupConfig, KindRegistry, Owner, demo};
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

/// A server with a few demo entities and one admitted client at [`CLIENT`].
pub fn server_with_client() -> (NetManager, EntityGroup) {
    let mut r = KindRegistry::new();
    demo::register(&mut r).expect("demo kinds");
    let mut group = EntityGroup::new(Arc::new(r), GroupConfig::default());
    for i in 0..3 {
        let p = demo::CrateParams {
            pos: [i as f32, 0.5, 0.0],
            half_extents: [0.4; 3],
            color: [0; 4],
            can_sleep: true,
        };
        group.spawn(demo::CRATE, &p, Owner::Server).expect("spawn");
    }
    let mut net = NetManager::server(NetConfig::default());
    let hello = Hello {
        name: "fuzz".into(),
        password: None,
        nonce: 1,
    };
    let d = wire::control(Kind::Hello, wire::PROTOCOL_VERSION, &hello).expect("hello encodes");
    net.receive(CLIENT, &d);
    net.update(&mut group, 1.0 / 60.0);
    net.drain_outgoing().for_each(drop);
    (net, group)
}

/// Feeds `data` to the server as datagrams: whole from the stranger and from the client,
/// then behind each valid header kind, then split in chunks; runs a frame after each batch.
/// Panics only if the server does (or loses its client, which garbage alone may not cause
/// within the bad-packet limit).
pub fn throw_at_server(net: &mut NetManager, group: &mut EntityGroup, data: &[u8]) {
    let mut batches: Vec<Vec<u8>> = vec![data.to_vec()];
    for kind in [
        Kind::Hello,
        Kind::Welcome,
        Kind::Reject,
        Kind::Data,
        Kind::Disconnect,
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
}
