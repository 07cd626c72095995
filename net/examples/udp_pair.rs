//! A server and a client over real UDP on 127.0.0.1, in one process: the server holds a row
//! of crates in a walled pit, the client joins, asks for a mover of its own and drives it,
//! and the server forwards its state. Each side is a `NetManager` (sans-IO) pumped through
//! a `UdpTransport`; a game runs one of the two loops, in its own process.
//!
//! `cargo run --release -p lanyard-net --example udp_pair`

use lanyard::prelude::*;
use lanyard_demo as demo;
use lanyard_net::udp::UdpTransport;
use lanyard_net::{NetConfig, NetManager, Transport, pump};
use std::net::SocketAddr;
use std::time::Duration;

/// One peer: its world, its network layer and its socket.
struct Peer {
    group: EntityGroup,
    net: NetManager,
    socket: UdpTransport,
}

impl Peer {
    fn new(role: Role, net: NetManager) -> std::io::Result<Peer> {
        let mut group = EntityGroup::new(
            demo::registry(),
            GroupConfig {
                role,
                ..GroupConfig::default()
            },
        );
        for wall in demo::pit(10.0) {
            group.add_scenery(wall);
        }
        let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
        Ok(Peer {
            group,
            net,
            socket: UdpTransport::bind(loopback)?,
        })
    }

    /// One frame: what came in, a frame of the world, what goes out; then its events.
    fn step(&mut self, who: &str) {
        pump(&mut self.net, &mut self.socket);
        self.net.update(&mut self.group, 1.0 / 60.0);
        pump(&mut self.net, &mut self.socket);
        while let Some(event) = self.net.poll_event() {
            println!("{who}: {event:?}");
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let entropy = lanyard_net::os_entropy()?;
    let mut server = Peer::new(
        Role::Server,
        NetManager::server(NetConfig::default(), entropy),
    )?;
    for i in 0..5 {
        let params = demo::CrateParams::at([i as f32 * 1.2 - 2.4, 0.45, 0.0]);
        server.group.spawn(demo::CRATE, &params, Owner::Server)?;
    }
    let at = server.socket.local_addr();
    println!("server: listening on {at}");

    let config = NetConfig::default();
    let join = NetManager::client(config, at, "ann", None, lanyard_net::os_entropy()?);
    let mut client = Peer::new(Role::Client(ClientId(0)), join)?;
    let mut ticket = None;
    // Ten seconds at most, at about 60 frames a second.
    for _ in 0..600 {
        server.step("server");
        client.step("client");
        server.socket.wait(Duration::from_millis(16));
        if ticket.is_none() && client.net.is_connected() {
            let mover = demo::MoverParams::at([0.0, 0.6, 4.0]);
            ticket = Some(client.group.request_spawn(demo::MOVER, &mover)?);
        }
        let mine = ticket.and_then(|t| client.group.spawned(t));
        let Some(net_id) = mine.and_then(|id| client.group.get(id)).map(|e| e.net_id()) else {
            continue;
        };
        // The server's copy of the client's mover, as the client's sections put it.
        if let Some(copy) = server.group.by_net(net_id) {
            let p = copy.body().translation();
            if (p - Vec3::new(0.0, 0.6, 4.0)).length() > 1.0 {
                println!("server: ann's mover {net_id:?} is at {p:.2}, as ann drives it");
                println!("client: holds {} entities", client.group.len());
                return Ok(());
            }
        }
    }
    Err("the client's mover never reached the server".into())
}
