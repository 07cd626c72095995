//! Fuzzes the rendezvous server's entry point: arbitrary bytes from a stranger, bare,
//! behind a valid rendezvous header and behind a relay header, after one game registered;
//! and a peer's relay routes, which take whatever the game socket receives.
#![no_main]

use lanyard_rendezvous::relay::Routes;
use lanyard_rendezvous::{
    Message, RendezvousConfig, RendezvousServer, VERSION, decode, encode,
};
use libfuzzer_sys::fuzz_target;
use std::net::SocketAddr;

fuzz_target!(|data: &[u8]| {
    let _ = decode(data);
    let mut rv = RendezvousServer::new(RendezvousConfig::default(), [7; 32]).unwrap();
    let host: SocketAddr = "203.0.113.2:47810".parse().unwrap();
    rv.receive(0.0, host, &encode(&Message::Hello).unwrap());
    if let Some((_, c)) = rv.drain_outgoing().pop()
        && let Ok(Message::Challenge { cookie, .. }) = decode(&c)
    {
        let info = lanyard_net::fuzzing::server_info();
        let register = Message::Register {
            cookie,
            owner: [1; 16],
            info,
        };
        rv.receive(0.0, host, &encode(&register).unwrap());
    }
    rv.drain_outgoing();
    let stranger: SocketAddr = "192.0.2.50:9999".parse().unwrap();
    let mut framed = b"LYRV".to_vec();
    framed.push(VERSION);
    framed.extend_from_slice(data);
    let mut relayed = b"LYRD".to_vec();
    relayed.extend_from_slice(data);
    for bytes in [data, &framed[..], &relayed[..]] {
        rv.receive(1.0, stranger, bytes);
        let sent: usize = rv.drain_outgoing().iter().map(|(_, b)| b.len()).sum();
        assert!(sent <= bytes.len(), "amplified {} into {sent}", bytes.len());
    }
    let relay: SocketAddr = "203.0.113.1:47820".parse().unwrap();
    let mut routes = Routes::new();
    routes.relay(0.0, host, relay, 5, 7);
    let _ = routes.incoming(1.0, relay, data);
    let _ = routes.incoming(1.0, host, data);
    let _ = routes.incoming(1.0, host, &framed);
});
