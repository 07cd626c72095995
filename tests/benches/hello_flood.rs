//! A server's frame under a flood of hellos: 27 000 a second from 64 ports of one address
//! (the trial), against the same server idle; and the same flood of hellos of an
//! older and of a newer protocol version, which the server refuses (within the same
//! limits) instead of challenging.
//!
//! Run with `cargo bench -p lanyard-tests --bench hello_flood`. The server holds 40 demo
//! crates and one client; the hellos are real ones (a client's first datagram) sent again
//! from each port, 450 in each 60 Hz frame, for 5 s. It prints the mean frame (the server's
//! `receive`, `update` and `drain_outgoing`) idle and flooded, and what it answered (and,
//! for other versions, how many refusals it sent). With `LANYARD_BENCH_LOG=1` it logs as
//! the game does (at `info`, to stderr: run it with `2>/dev/null`), so what the server
//! logs per datagram shows in its frame.

use lanyard::prelude::*;
use lanyard::{GroupConfig, Role};
use lanyard_net::{NetConfig, NetManager, PROTOCOL_VERSION};
use lanyard_tests::demo_registry;
use lanyard_tests::scenario::crates_and_balls;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

const DT: f32 = 1.0 / 60.0;
const FRAMES: usize = 300;
const PER_FRAME: usize = 450;

fn main() {
    if std::env::var_os("LANYARD_BENCH_LOG").is_some_and(|v| v == "1") {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_max_level(tracing_subscriber::filter::LevelFilter::INFO)
            .init();
    }
    let server_addr = SocketAddr::from((Ipv4Addr::LOCALHOST, 4000));
    let client_addr = SocketAddr::from((Ipv4Addr::new(127, 0, 0, 2), 4001));
    let mut sg = EntityGroup::new(demo_registry(), GroupConfig::default());
    crates_and_balls(&mut sg, 40);
    let mut server = NetManager::server(NetConfig::default(), [1; 32]);
    let mut cg = EntityGroup::new(
        demo_registry(),
        GroupConfig {
            role: Role::Client(lanyard::ClientId(0)),
            ..GroupConfig::default()
        },
    );
    let mut client = NetManager::client(NetConfig::default(), server_addr, "ann", None, [2; 32]);
    // A flood from 64 ports of one address, or from a new address for every hello.
    let mut frame = |server: &mut NetManager, flood: Option<(&[u8], bool)>, k: usize| {
        client.update(&mut cg, DT);
        let from_client: Vec<_> = client.drain_outgoing().collect();
        let t = Instant::now();
        for (_, d) in &from_client {
            server.receive(client_addr, d);
        }
        if let Some((hello, spread)) = flood {
            for i in 0..PER_FRAME {
                let n = (k * PER_FRAME + i) as u32;
                let from = match spread {
                    false => SocketAddr::from((Ipv4Addr::LOCALHOST, 20_000 + (n % 64) as u16)),
                    true => SocketAddr::from((Ipv4Addr::from(0x7f00_0000 | n), 20_000)),
                };
                server.receive(from, hello);
            }
        }
        server.update(&mut sg, DT);
        let out: Vec<_> = server.drain_outgoing().collect();
        let spent = t.elapsed();
        for (to, d) in out {
            if to == client_addr {
                client.receive(server_addr, &d);
            }
        }
        spent
    };
    for k in 0..120 {
        frame(&mut server, None, k);
    }
    assert_eq!(server.clients().len(), 1, "the client joined");
    let hello_of = |version: u16| lanyard_tests::hello_of(version, server_addr);
    let hello = hello_of(PROTOCOL_VERSION);
    let idle: f64 = (0..FRAMES)
        .map(|k| frame(&mut server, None, k).as_secs_f64())
        .sum::<f64>()
        / FRAMES as f64;
    let older = hello_of(PROTOCOL_VERSION - 1);
    let newer = hello_of(PROTOCOL_VERSION + 1);
    let floods = [
        (&hello, false, ""),
        (&hello, true, ""),
        (&older, false, " of an older version"),
        (&newer, false, " of a newer version"),
    ];
    for (hello, spread, which) in floods {
        let before = server.counters();
        let flooded: f64 = (0..FRAMES)
            .map(|k| frame(&mut server, Some((hello, spread)), k).as_secs_f64())
            .sum::<f64>()
            / FRAMES as f64;
        let after = server.counters();
        let received = (FRAMES * PER_FRAME) as u64;
        let from = match spread {
            false => "64 ports of one address",
            true => "a new address each",
        };
        println!(
            "server frame: idle {:.3} ms, under {} hellos/s{which} from {from} {:.3} ms; answered {} \
             of {received}, dropped {}, refusals {}; bytes out {} of {} in; the client still in: {}",
            idle * 1e3,
            PER_FRAME * 60,
            flooded * 1e3,
            received - (after.hellos_dropped - before.hellos_dropped),
            after.hellos_dropped - before.hellos_dropped,
            after.version_refusals - before.version_refusals,
            after.bytes_out - before.bytes_out,
            after.bytes_in - before.bytes_in,
            server.clients().len() == 1
        );
    }
}
