//! Datagrams nobody can forge or replay, and a handshake nobody can use to amplify:
//! driven at the packet entry point with NetManagers in memory.

use lanyard::prelude::*;
use lanyard::{GroupConfig, Role};
use lanyard_net::discovery;
use lanyard_net::fuzzing::{CLIENT, SERVER, STRANGER, server_and_client};
use lanyard_net::harness::hub_addr;
use lanyard_net::{HELLO_LEN, NetConfig, NetEvent, NetManager, PROTOCOL_VERSION};
use lanyard_tests::demo_registry;
use lanyard_tests::scenario::{DemoScenario, Scenario, crates_and_balls, player};
use std::collections::BTreeMap;
use std::net::SocketAddr;

const DT: f32 = 1.0 / 60.0;

/// A client's group of the demo kinds, before it learns its id.
fn client_group() -> EntityGroup {
    EntityGroup::new(
        demo_registry(),
        GroupConfig {
            role: Role::Client(lanyard::ClientId(0)),
            ..GroupConfig::default()
        },
    )
}

/// Runs `frames` frames of a connected server and client, the client's datagrams going to
/// the server from [`CLIENT`]; returns every datagram the client sent.
fn exchange(
    server: &mut NetManager,
    sg: &mut EntityGroup,
    client: &mut NetManager,
    cg: &mut EntityGroup,
    frames: usize,
) -> Vec<Vec<u8>> {
    let mut sent = Vec::new();
    for _ in 0..frames {
        client.update(cg, DT);
        for (_, d) in client.drain_outgoing().collect::<Vec<_>>() {
            server.receive(CLIENT, &d);
            sent.push(d);
        }
        server.update(sg, DT);
        for (_, d) in server.drain_outgoing().collect::<Vec<_>>() {
            client.receive(SERVER, &d);
        }
    }
    sent
}

#[test]
fn forged_copies_from_another_address_change_nothing_and_a_replay_is_refused() {
    let (mut server, mut sg, mut client, mut cg) = server_and_client(&lanyard_demo::fuzz_world());
    let id = server.clients()[0].0;
    // Without entities of its own the client sends acks and heartbeats only.
    let sent = exchange(&mut server, &mut sg, &mut client, &mut cg, 240);
    assert!(sent.len() >= 6, "the client sent {} datagrams", sent.len());
    let before = server.peer_stats(id).unwrap();
    let strangers = server.counters().strangers;
    let hash = sg.state_hash();

    // A third host copies the client's datagrams, header fields and all, from its own
    // address, and a version of each with the fields after the header changed.
    for d in &sent {
        server.receive(STRANGER, d);
        let mut forged = d.clone();
        forged[9] ^= 0x40; // the sequence number
        server.receive(STRANGER, &forged);
    }
    server.update(&mut sg, DT);
    server.drain_outgoing().for_each(drop);
    let after = server.peer_stats(id).unwrap();
    assert_eq!(
        server.counters().strangers - strangers,
        2 * sent.len() as u64,
        "every forged datagram is counted"
    );
    assert_eq!(
        after.packets_in, before.packets_in,
        "a forged datagram was taken"
    );
    assert_eq!(server.clients().len(), 1);

    // The same forged variants from the client's own address: wrong tags, counted.
    for d in &sent {
        let mut forged = d.clone();
        forged[9] ^= 0x40;
        server.receive(CLIENT, &forged);
    }
    // And the client's own datagrams again, word for word: replays, refused.
    for d in &sent[sent.len() - 5..] {
        server.receive(CLIENT, d);
    }
    server.update(&mut sg, DT);
    server.drain_outgoing().for_each(drop);
    let after = server.peer_stats(id).unwrap();
    assert_eq!(after.bad_tags - before.bad_tags, sent.len() as u64);
    assert_eq!(after.duplicates - before.duplicates, 5);
    assert_eq!(after.packets_in, before.packets_in);
    assert_eq!(server.clients().len(), 1, "a forger ended the session");
    // The world only moved by its own physics: the same as a server that heard nothing.
    assert_ne!(hash, 0);
    let sent = exchange(&mut server, &mut sg, &mut client, &mut cg, 30);
    assert!(!sent.is_empty());
    assert!(client.is_connected());
    assert!(server.peer_stats(id).unwrap().packets_in > after.packets_in);
}

/// Bytes in and out per address, for one batch of datagrams to a fresh server.
fn probe(batches: &[(SocketAddr, Vec<u8>)], frames: usize) -> BTreeMap<SocketAddr, (usize, usize)> {
    let mut group = EntityGroup::new(demo_registry(), GroupConfig::default());
    crates_and_balls(&mut group, 30);
    let mut net = NetManager::server(NetConfig::default(), [3; 32]);
    let mut tally: BTreeMap<SocketAddr, (usize, usize)> = BTreeMap::new();
    for (from, d) in batches {
        tally.entry(*from).or_default().0 += d.len();
        net.receive(*from, d);
    }
    for _ in 0..frames {
        net.update(&mut group, DT);
        for (to, d) in net.drain_outgoing() {
            tally.entry(to).or_default().1 += d.len();
        }
    }
    assert!(net.clients().is_empty(), "a probe was admitted");
    tally
}

fn addr(i: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 50], 5000 + i))
}

#[test]
fn an_address_that_has_not_answered_the_challenge_never_gets_more_than_it_sent() {
    // A real client's hello, as a spoofer would send it in a victim's name.
    let mut cg = EntityGroup::new(
        demo_registry(),
        GroupConfig {
            role: Role::Client(ClientId(0)),
            ..GroupConfig::default()
        },
    );
    let mut c = NetManager::client(NetConfig::default(), SERVER, "victim", None, [4; 32]);
    c.update(&mut cg, DT);
    let hello: Vec<u8> = c.drain_outgoing().next().unwrap().1;
    assert_eq!(hello.len(), HELLO_LEN);

    let old = NetConfig {
        version: PROTOCOL_VERSION + 1,
        ..NetConfig::default()
    };
    let mut o = NetManager::client(old, SERVER, "old", None, [5; 32]);
    o.update(&mut cg, DT);
    let other_version: Vec<u8> = o.drain_outgoing().next().unwrap().1;

    let mut rng = SeededRng::new(17);
    let mut batches = vec![
        (addr(0), hello.clone()),
        (addr(1), hello[..HELLO_LEN - 1].to_vec()),
        (addr(2), other_version.clone()),
        (addr(3), other_version[..8].to_vec()),
    ];
    // The same hello over and over from one victim: each answer no larger than its hello.
    for _ in 0..50 {
        batches.push((addr(4), hello.clone()));
    }
    // Random datagrams behind every header kind, of every size, from many addresses.
    for i in 0..2000u16 {
        let len = 5 + rng.below(600) as usize;
        let mut d: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
        d[..4].copy_from_slice(&[b'L', b'Y', PROTOCOL_VERSION as u8, 0]);
        d[4] = 1 + (i % 7) as u8;
        batches.push((addr(10 + i % 40), d));
    }
    let tally = probe(&batches, 600);
    for (a, (got, sent)) in &tally {
        assert!(sent <= got, "{a}: received {got} bytes, sent {sent}");
    }
    // The victim got challenges and nothing else: no welcome, no world.
    let (got, sent) = tally[&addr(4)];
    assert!(
        sent > 0 && sent < got,
        "the hello was answered with {sent} of {got} bytes"
    );
    assert_eq!(tally[&addr(1)].1, 0, "a short hello was answered");
    assert!(
        tally[&addr(2)].1 > 0,
        "the version mismatch was not reported"
    );
    assert_eq!(tally[&addr(3)].1, 0, "a tiny datagram was answered");

    // Discovery obeys the same bound.
    let info = discovery::ServerInfo {
        name: "x".repeat(300),
        players: 1,
        max_players: 8,
        spectators: 0,
        max_spectators: 8,
        password: true,
        version: PROTOCOL_VERSION,
        game_port: 1,
        web_port: None,
    };
    let req = discovery::request();
    assert!(discovery::answer_to(&req, &info).unwrap().len() <= req.len());
    for n in 0..req.len() {
        assert_eq!(discovery::answer_to(&req[..n], &info), None);
    }
}

#[test]
fn the_password_never_travels_and_still_admits() {
    let mut sg = EntityGroup::new(demo_registry(), GroupConfig::default());
    let config = NetConfig {
        password: Some("correct horse battery".into()),
        ..NetConfig::default()
    };
    let mut server = NetManager::server(config, [6; 32]);
    let mut cg = EntityGroup::new(
        demo_registry(),
        GroupConfig {
            role: Role::Client(ClientId(0)),
            ..GroupConfig::default()
        },
    );
    let mut client = NetManager::client(
        NetConfig::default(),
        SERVER,
        "ann",
        Some("correct horse battery"),
        [7; 32],
    );
    let sent = exchange(&mut server, &mut sg, &mut client, &mut cg, 30);
    assert!(client.is_connected(), "the right password was refused");
    for d in &sent {
        assert!(
            !d.windows(7).any(|w| w == b"correct"),
            "the password travelled"
        );
    }
}

/// Before its cookie comes back, a client can only be refused for its version, untagged.
/// A third host on the LAN that sends it such a refusal from the server's address (a real
/// one, made by a server of another version for another hello) is ignored: the refusal
/// does not echo this client's hello nonce. The client then joins.
#[test]
fn a_forged_refusal_before_the_cookie_is_ignored_and_the_client_joins() {
    let kinds = demo_registry;
    let mut sg = EntityGroup::new(kinds(), GroupConfig::default());
    crates_and_balls(&mut sg, 2);
    let mut server = NetManager::server(NetConfig::default(), [1; 32]);
    let mut cg = client_group();
    let mut client = NetManager::client(NetConfig::default(), SERVER, "ann", None, [2; 32]);
    // The forger's material: a server of another version refusing someone else's hello.
    let other = NetConfig {
        version: PROTOCOL_VERSION + 1,
        ..NetConfig::default()
    };
    let mut elsewhere = NetManager::server(other.clone(), [3; 32]);
    let mut someone = NetManager::client(NetConfig::default(), SERVER, "bob", None, [4; 32]);
    let mut scratch = EntityGroup::new(kinds(), GroupConfig::default());
    someone.update(&mut scratch, DT);
    for (_, d) in someone.drain_outgoing().collect::<Vec<_>>() {
        elsewhere.receive(STRANGER, &d);
    }
    elsewhere.update(&mut EntityGroup::new(kinds(), GroupConfig::default()), DT);
    let forged: Vec<Vec<u8>> = elsewhere.drain_outgoing().map(|(_, d)| d).collect();
    assert_eq!(forged.len(), 1, "a refusal of another version");
    let strangers = client.counters().strangers;
    let mut joined = false;
    for _ in 0..30 {
        client.update(&mut cg, DT);
        for (_, d) in client.drain_outgoing().collect::<Vec<_>>() {
            server.receive(CLIENT, &d);
        }
        // The forged refusal arrives first, every frame, as if from the server.
        client.receive(SERVER, &forged[0]);
        server.update(&mut sg, DT);
        for (_, d) in server.drain_outgoing().collect::<Vec<_>>() {
            client.receive(SERVER, &d);
        }
        while let Some(e) = client.poll_event() {
            assert!(!matches!(e, NetEvent::Rejected { .. }), "believed: {e:?}");
            joined |= matches!(e, NetEvent::Joined { .. });
        }
    }
    assert!(joined, "the client joined");
    assert_eq!(server.clients().len(), 1);
    assert!(
        client.counters().strangers > strangers,
        "the forgeries are counted"
    );

    // The real refusal of a client of another version echoes its nonce and is believed
    // (`net_sessions.rs` checks its reason).
    let mut old = NetManager::client(other, SERVER, "cat", None, [5; 32]);
    let mut og = EntityGroup::new(kinds(), GroupConfig::default());
    let mut refused = false;
    for _ in 0..5 {
        old.update(&mut og, DT);
        for (_, d) in old.drain_outgoing().collect::<Vec<_>>() {
            server.receive(STRANGER, &d);
        }
        server.update(&mut sg, DT);
        for (to, d) in server.drain_outgoing().collect::<Vec<_>>() {
            if to == STRANGER {
                old.receive(SERVER, &d);
            }
        }
        while let Some(e) = old.poll_event() {
            refused |= matches!(e, NetEvent::Rejected { .. });
        }
    }
    assert!(refused, "a real refusal is believed");
}

/// A flood of hellos draws a bounded number of challenges: at most 32 a second from one
/// address and 1000 in all; the rest are counted and dropped, and a real client still joins.
#[test]
fn a_flood_of_hellos_is_answered_only_up_to_the_rate_limits() {
    let mut sg = EntityGroup::new(demo_registry(), GroupConfig::default());
    crates_and_balls(&mut sg, 2);
    let mut server = NetManager::server(NetConfig::default(), [1; 32]);
    let mut flooder = NetManager::client(NetConfig::default(), SERVER, "x", None, [6; 32]);
    flooder.update(
        &mut EntityGroup::new(demo_registry(), GroupConfig::default()),
        DT,
    );
    let hello = flooder.drain_outgoing().next().expect("a hello").1;
    assert_eq!(hello.len(), HELLO_LEN);
    let challenges = |server: &mut NetManager, sg: &mut EntityGroup| {
        server.update(sg, DT);
        server.drain_outgoing().count()
    };
    // One address asking 100 times in a second.
    for _ in 0..100 {
        server.receive(STRANGER, &hello);
    }
    assert_eq!(challenges(&mut server, &mut sg), 32);
    assert_eq!(server.counters().hellos_dropped, 68);
    // 5000 addresses (64 ports on each of many hosts) in the same second, in frames of
    // 1000 (the inbox takes 4096 datagrams a frame).
    let mut answered = 0;
    for batch in 0..5u32 {
        for i in batch * 1_000..(batch + 1) * 1_000 {
            let host = i / 64;
            let ip = std::net::Ipv4Addr::new(127, 1, (host / 256) as u8, (host % 256) as u8);
            server.receive(SocketAddr::from((ip, 10_000 + (i % 64) as u16)), &hello);
        }
        answered += challenges(&mut server, &mut sg);
    }
    assert_eq!(server.counters().inbox_overflow, 0);
    assert_eq!(answered, 1_000 - 32);
    assert_eq!(server.counters().hellos_dropped, 68 + 5_000 - 968);
    // A second later, a real client joins.
    for _ in 0..60 {
        server.update(&mut sg, DT);
        server.drain_outgoing().for_each(drop);
    }
    let mut cg = client_group();
    let mut client = NetManager::client(NetConfig::default(), SERVER, "ann", None, [2; 32]);
    exchange(&mut server, &mut sg, &mut client, &mut cg, 20);
    assert_eq!(server.clients().len(), 1, "the client joined");
}

/// Hellos of an older and of a newer protocol version are each refused with a datagram
/// that names ours, but within the same limits as the server's own: one address asking
/// 100 times a second of each draws 32 refusals in all, and the rest are counted and
/// dropped; a flood of them can cost no more answers than a flood of current hellos.
#[test]
fn a_flood_of_hellos_of_other_versions_draws_refusals_only_up_to_the_rate_limits() {
    let mut sg = EntityGroup::new(demo_registry(), GroupConfig::default());
    let mut server = NetManager::server(NetConfig::default(), [1; 32]);
    let hello_of = |version: u16| lanyard_tests::hello_of(version, SERVER);
    let (older, newer) = (
        hello_of(PROTOCOL_VERSION - 1),
        hello_of(PROTOCOL_VERSION + 1),
    );
    for _ in 0..100 {
        server.receive(STRANGER, &older);
        server.receive(STRANGER, &newer);
    }
    server.update(&mut sg, DT);
    let answers: Vec<Vec<u8>> = server.drain_outgoing().map(|(_, d)| d).collect();
    assert_eq!(answers.len(), 32);
    assert!(answers.iter().all(|d| d.len() <= older.len()));
    let c = server.counters();
    assert_eq!((c.version_refusals, c.hellos_dropped), (32, 200 - 32));
    // Its own hellos from that address wait for the next second too.
    server.receive(STRANGER, &hello_of(PROTOCOL_VERSION));
    server.update(&mut sg, DT);
    assert_eq!(server.drain_outgoing().count(), 0);
    assert_eq!(server.counters().hellos_dropped, 200 - 32 + 1);
}

/// Whether `needle` occurs anywhere in `hay`.
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A third host on the hub reads every datagram of a session (the hub's tap): a join with
/// a name, chat both ways, a player streaming its sections up and the world coming down.
/// It finds no name, no chat text and no section bytes in any of them, although the peers
/// got all of it.
#[test]
fn a_third_party_reading_every_datagram_finds_no_name_chat_or_section() {
    let mut s = Scenario::new(NetConfig::default(), None, 60.0, |g| crates_and_balls(g, 8));
    s.hub.tap();
    s.add_client(NetConfig::default(), "quokka-ada", None);
    s.add_client(NetConfig::default(), "wombat-bob", None);
    assert!(
        s.run_until(5.0, |s| s.all_joined()),
        "the clients did not join"
    );
    s.give_player(0, &player(0.0, 5, 10 * 60));
    s.server
        .net
        .send_event(b"server says: meet at the blue crate".to_vec())
        .unwrap();
    s.clients[1]
        .net
        .send_event(b"bob says: behind the ramp".to_vec())
        .unwrap();
    // The player's sections, as its client's group wrote them each frame.
    let mut sections: Vec<Vec<u8>> = Vec::new();
    for _ in 0..120 {
        s.step();
        let packet = s.clients[0].group.last_packet();
        sections.extend(packet.sections().map(|sec| sec.payload.to_vec()));
    }
    // The peers did get everything.
    let heard = |p: &lanyard_tests::scenario::Peer, text: &[u8]| {
        p.events.iter().any(|e| match e {
            NetEvent::Event { bytes, .. } => bytes == text,
            _ => false,
        })
    };
    assert!(heard(&s.clients[0], b"server says: meet at the blue crate"));
    assert!(heard(&s.server, b"bob says: behind the ramp"));
    assert!(
        s.server
            .events
            .iter()
            .any(|e| matches!(e, NetEvent::ClientJoined { name, .. } if name == "quokka-ada")),
        "the server was told ann's name"
    );
    let sections: Vec<Vec<u8>> = sections.into_iter().filter(|b| b.len() >= 12).collect();
    assert!(
        sections.len() >= 60,
        "the player streamed {} sections",
        sections.len()
    );

    let tapped = s.hub.tapped();
    for c in [hub_addr(1), hub_addr(2)] {
        for (from, to) in [(c, hub_addr(0)), (hub_addr(0), c)] {
            let n = tapped.iter().filter(|t| t.0 == from && t.1 == to).count();
            assert!(n >= 5, "the tap saw {n} datagrams from {from} to {to}");
        }
    }
    let needles: [&[u8]; 4] = [
        b"quokka-ada",
        b"wombat-bob",
        b"meet at the blue",
        b"behind the ramp",
    ];
    for (from, to, d) in &tapped {
        for n in needles {
            assert!(
                !contains(d, n),
                "{from} -> {to} carries {:?} in clear",
                String::from_utf8_lossy(n)
            );
        }
        // Any 12 bytes of a section (a position alone is 12).
        for sec in &sections {
            assert!(
                !contains(d, &sec[..12]),
                "{from} -> {to} carries section bytes in clear"
            );
        }
    }
}
