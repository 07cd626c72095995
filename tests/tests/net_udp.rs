//! Real UDP sockets on 127.0.0.1 (message-io): a server and two clients exchange spawns and
//! state, while a stranger throws garbage at the server. Nothing leaves the loopback
//! interface; the loop is bounded and stops by itself.

use lanyard::prelude::*;
use lanyard_demo as demo;
use lanyard_net::udp::UdpTransport;
use lanyard_net::{NetConfig, NetManager, Transport, pump};
use lanyard_tests::demo_registry;
use lanyard_tests::scenario::{add_scenery, crates_and_balls, entropy, player};
use std::net::SocketAddr;
use std::time::Duration;

struct UdpPeer {
    net: NetManager,
    group: EntityGroup,
    socket: UdpTransport,
}

impl UdpPeer {
    fn step(&mut self) {
        pump(&mut self.net, &mut self.socket);
        self.net.update(&mut self.group, 1.0 / 60.0);
        pump(&mut self.net, &mut self.socket);
        while self.net.poll_event().is_some() {}
    }
}

fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

#[test]
fn a_server_and_two_clients_exchange_spawns_and_state_over_udp() {
    let mut server_group = EntityGroup::new(demo_registry(), GroupConfig::default());
    crates_and_balls(&mut server_group, 12);
    let mut server = UdpPeer {
        net: NetManager::server(NetConfig::default(), entropy(0)),
        group: server_group,
        socket: UdpTransport::bind(loopback()).expect("bind a loopback UDP port"),
    };
    let server_addr = server.socket.local_addr();
    assert!(server_addr.ip().is_loopback());
    let mut clients: Vec<UdpPeer> = ["ann", "bob"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut group = EntityGroup::new(
                demo_registry(),
                GroupConfig {
                    role: Role::Client(ClientId(0)),
                    ..GroupConfig::default()
                },
            );
            add_scenery(&mut group);
            UdpPeer {
                net: NetManager::client(
                    NetConfig::default(),
                    server_addr,
                    name,
                    None,
                    entropy(77 + i as u64),
                ),
                group,
                socket: UdpTransport::bind(loopback()).unwrap(),
            }
        })
        .collect();
    let mut stranger = UdpTransport::bind(loopback()).unwrap();
    let mut junk = SeededRng::new(9);

    let mut spawned = false;
    let mut mover: Option<NetId> = None;
    let mut start: Option<Vec3> = None;
    let mut done = false;
    // A bounded loop: 30 simulated seconds at most.
    for frame in 0..1800 {
        server.step();
        for c in &mut clients {
            c.step();
        }
        // Garbage from a stranger: random lengths, some behind a valid-looking header.
        if frame % 3 == 0 {
            let len = junk.below(300) as usize;
            let mut d: Vec<u8> = (0..len).map(|_| junk.next_u64() as u8).collect();
            if frame % 2 == 0 && d.len() > 5 {
                d[..5].copy_from_slice(&[b'L', b'Y', 1, 0, 4]);
            }
            stranger.send(server_addr, &d);
        }
        server.socket.wait(Duration::from_millis(1));
        if !spawned && clients.iter().all(|c| c.net.is_connected()) {
            clients[0]
                .group
                .request_spawn(demo::MOVER, &player(0.0, 11, 0))
                .unwrap();
            spawned = true;
        }
        let ann_id = clients[0].net.client_id();
        if mover.is_none() {
            mover = server
                .group
                .iter()
                .find(|e| ann_id.is_some_and(|a| e.owner() == Owner::Client(a)))
                .map(|e| e.net_id());
        }
        if let Some(m) = mover
            && let Some(e) = clients[1].group.by_net(m)
        {
            let p = e.body().translation();
            let s = *start.get_or_insert(p);
            if (p - s).length() > 1.0 && clients[1].group.len() == server.group.len() {
                done = true;
                break;
            }
        }
    }
    assert!(
        done,
        "bob never saw ann's player move, or never got the whole world"
    );
    assert_eq!(
        server.net.clients().len(),
        2,
        "the garbage cost a legitimate client its session"
    );
    assert!(clients.iter().all(|c| c.net.is_connected()));
    assert!(
        server.net.counters().strangers > 0,
        "the stranger's garbage was not counted"
    );
    let crates_at_bob: Vec<NetId> = clients[1].group.iter().map(|e| e.net_id()).collect();
    let crates_at_server: Vec<NetId> = server.group.iter().map(|e| e.net_id()).collect();
    assert_eq!(crates_at_bob, crates_at_server);
}
