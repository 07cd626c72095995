//! A connection alone: acks, resends, the replay window and timers on a virtual clock.

use super::*;
use crate::wire::{HEADER_LEN, PROTOCOL_VERSION};

fn timing() -> Timing {
    Timing {
        timeout: 5_000_000,
        heartbeat: 500_000,
        reliable_expiry: 15_000_000,
        connect_retry: 250_000,
        connect_timeout: 5_000_000,
    }
}

fn addr() -> SocketAddr {
    "127.0.0.1:9".parse().unwrap()
}

/// A server-side and a client-side connection sharing a key, as after a handshake.
fn pair() -> (Connection, Connection) {
    let server = Connection::accepted(addr(), [5; 32], 0, timing());
    let mut client = Connection::client(addr(), 1, [6; 32], 0, timing());
    client.set_key(Some([5; 32]));
    client.established(0);
    (server, client)
}

/// Delivers `datagrams` to `to`, returning the messages it delivered.
fn deliver(to: &mut Connection, datagrams: &[Vec<u8>], now: u64) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    for d in datagrams {
        let Ok(opened) = to.open(d) else { continue };
        if let Ok(inc) = to.on_data(&opened[HEADER_LEN..], d.len(), (now, now)) {
            got.extend(inc.delivered);
        }
    }
    got
}

#[test]
fn reliable_messages_are_resent_until_acked_and_delivered_once_in_order() {
    let (mut a, mut b) = pair();
    for i in 0..3u8 {
        a.push_reliable(vec![i; 10], false);
    }
    let first = a.build_data(0, PROTOCOL_VERSION, &[]);
    // Lost. Nothing is due again before the resend time...
    let again = a.build_data(100_000, PROTOCOL_VERSION, &[]);
    assert_eq!(deliver(&mut b, &again, 100_000), Vec::<Vec<u8>>::new());
    // ...and everything is after it.
    let later = a.build_data(300_000, PROTOCOL_VERSION, &[]);
    assert_eq!(a.stats.resends, 3);
    let mut got = deliver(&mut b, &later, 300_000);
    got.extend(deliver(&mut b, &first, 300_000));
    assert_eq!(got, vec![vec![0; 10], vec![1; 10], vec![2; 10]]);
    // b acks; a forgets the messages.
    let reply = b.build_data(310_000, PROTOCOL_VERSION, &[]);
    deliver(&mut a, &reply, 320_000);
    assert_eq!(a.unacked(), 0);
    assert!(a.stats.rtt_ms > 0.0);
    assert_eq!(a.timers.get(Timer::ReliableExpiry), None);
}

#[test]
fn a_flipped_bit_anywhere_is_refused_before_use_and_counted() {
    let (mut a, mut b) = pair();
    a.push_reliable(vec![1, 2, 3], false);
    let d = a
        .build_data(0, PROTOCOL_VERSION, &[&[1, 3, 7, 7, 7]])
        .remove(0);
    for i in 0..d.len() {
        let mut bad = d.clone();
        bad[i] ^= 0x10;
        assert_eq!(b.open(&bad).err(), Some(Refused::BadTag), "byte {i}");
    }
    assert_eq!(b.stats.bad_tags, d.len() as u64);
    assert_eq!(b.stats.packets_in, 0, "nothing was read");
    assert_eq!(deliver(&mut b, &[d], 0), vec![vec![1, 2, 3]]);
}

#[test]
fn a_replayed_datagram_is_refused_and_counted() {
    let (mut a, mut b) = pair();
    a.push_reliable(vec![9], false);
    let d = a.build_data(0, PROTOCOL_VERSION, &[]);
    assert_eq!(deliver(&mut b, &d, 0).len(), 1);
    let opened = b.open(&d[0]).unwrap();
    assert_eq!(
        b.on_data(&opened[HEADER_LEN..], d[0].len(), (1, 1)).err(),
        Some(Refused::Replayed)
    );
    assert_eq!(b.stats.duplicates, 1);
    // A datagram far older than the window is refused too.
    let old = a.build_data(10, PROTOCOL_VERSION, &[]);
    for i in 0..40 {
        deliver(&mut b, &a.build_data(20 + i, PROTOCOL_VERSION, &[]), 20 + i);
    }
    assert!(deliver(&mut b, &old, 100).is_empty());
    assert_eq!(b.stats.duplicates, 2);
}

#[test]
fn sections_are_placed_in_whole_chunks_across_datagrams() {
    let (mut a, mut b) = pair();
    let chunk = vec![7u8; 700];
    let chunks = [&chunk[..], &chunk, &chunk];
    let dgs = a.build_data(0, PROTOCOL_VERSION, &chunks);
    assert_eq!(dgs.len(), 3);
    for d in &dgs {
        assert!(d.len() <= wire::MAX_DATAGRAM);
        let opened = b.open(d).unwrap();
        let inc = b.on_data(&opened[HEADER_LEN..], d.len(), (0, 0)).unwrap();
        assert!(inc.fresh, "one broadcast, one number");
        assert_eq!(inc.sections.len(), 700);
    }
}

#[test]
fn deadlines_end_the_session_and_heartbeats_fall_due() {
    let (mut a, _) = pair();
    assert_eq!(a.poll_timeout(), Some(500_000));
    assert_eq!(a.handle_timeout(500_000), vec![Deadline::Heartbeat]);
    a.push_reliable(vec![1], false);
    a.build_data(600_000, PROTOCOL_VERSION, &[]);
    assert_eq!(a.poll_timeout(), Some(1_100_000));
    assert_eq!(
        a.handle_timeout(5_000_000),
        vec![
            Deadline::Lost(DisconnectReason::TimedOut),
            Deadline::Heartbeat
        ]
    );
    assert!(matches!(a.state, State::Closed));
    let (mut c, _) = pair();
    c.push_reliable(vec![1], false);
    c.build_data(0, PROTOCOL_VERSION, &[]);
    c.timers.set(Timer::Idle, 9_000_000);
    assert!(
        c.handle_timeout(15_000_001)
            .contains(&Deadline::Lost(DisconnectReason::ReliableExpired))
    );
}

/// `n` datagrams from `from`, each built at `now`.
fn burst(from: &mut Connection, n: usize, now: u64) -> Vec<Vec<u8>> {
    (0..n)
        .flat_map(|_| from.build_data(now, PROTOCOL_VERSION, &[]))
        .collect()
}

#[test]
fn loss_counts_only_what_an_ack_left_out() {
    let (mut a, mut b) = pair();
    // 40 of a's datagrams, every fifth lost: b acknowledges the rest, one reply each.
    let mut replies = Vec::new();
    for (i, d) in burst(&mut a, 40, 0).into_iter().enumerate() {
        if i % 5 != 4 {
            deliver(&mut b, &[d], 1_000);
            replies.extend(b.build_data(1_000, PROTOCOL_VERSION, &[]));
        }
    }
    // The replies arrive out of order: the second half first, then the first.
    let (early, late) = replies.split_at(replies.len() / 2);
    deliver(&mut a, late, 2_000);
    deliver(&mut a, early, 2_000);
    // More traffic, all delivered and answered, moves the window past the first 40 and
    // seven more (the window is 32 deep behind the newest, seq 79).
    for d in burst(&mut a, 40, 3_000) {
        deliver(&mut b, &[d], 3_000);
        deliver(&mut a, &b.build_data(3_000, PROTOCOL_VERSION, &[]), 3_000);
    }
    let link = a.link();
    assert_eq!(link.settled, 47, "{link:?}");
    assert_eq!(link.lost, 8, "the late replies lose nothing more: {link:?}");
}

#[test]
fn datagrams_sent_while_the_peer_was_silent_are_not_counted_lost() {
    let (mut a, mut b) = pair();
    // a sends 100 datagrams, all delivered, and b answers only once, at the end: the
    // first 67 are past its ack window, but none was left out.
    for d in burst(&mut a, 100, 0) {
        deliver(&mut b, &[d], 1_000);
    }
    deliver(&mut a, &b.build_data(2_000, PROTOCOL_VERSION, &[]), 2_000);
    assert_eq!(a.link().lost, 0);
    assert_eq!(a.stats.loss, 0.0);
}

/// Delivers `datagrams` that arrived at `arrived` to `to`, in its frame at `now`.
fn deliver_late(to: &mut Connection, datagrams: &[Vec<u8>], (now, arrived): (u64, u64)) {
    for d in datagrams {
        let opened = to.open(d).expect("a sealed datagram");
        to.on_data(&opened[HEADER_LEN..], d.len(), (now, arrived))
            .expect("taken");
    }
}

#[test]
fn the_ping_is_the_wire_round_trip_not_the_waits_for_the_next_frame() {
    // Frames every 16 ms on each side; the wire takes 1 ms each way. a sends at 0; it
    // arrives at 1 ms and waits for b's frame at 16; b answers in that frame; the answer
    // arrives at 17 ms and waits for a's frame at 32.
    let (mut a, mut b) = pair();
    for round in 0..3u64 {
        let t = round * 32_000;
        let out = a.build_data(t, PROTOCOL_VERSION, &[]);
        deliver_late(&mut b, &out, (t + 16_000, t + 1_000));
        let back = b.build_data(t + 16_000, PROTOCOL_VERSION, &[]);
        deliver_late(&mut a, &back, (t + 32_000, t + 17_000));
    }
    // Every answer echoes a's stamp of the same round: each is a sample of 2 ms.
    assert_eq!(
        a.link().ping_ms,
        2.0,
        "the wire's round trip: {:?}",
        a.link()
    );
    // The same exchange with no arrival times (each taken as its frame's): two waits more.
    let (mut a, mut b) = pair();
    let out = a.build_data(0, PROTOCOL_VERSION, &[]);
    deliver_late(&mut b, &out, (16_000, 16_000));
    let back = b.build_data(16_000, PROTOCOL_VERSION, &[]);
    deliver_late(&mut a, &back, (32_000, 32_000));
    assert_eq!(a.link().ping_ms, 32.0);
    // An arrival given as later than its frame is taken as the frame's.
    let (mut a, mut b) = pair();
    let out = a.build_data(0, PROTOCOL_VERSION, &[]);
    deliver_late(&mut b, &out, (16_000, 16_000));
    let back = b.build_data(16_000, PROTOCOL_VERSION, &[]);
    deliver_late(&mut a, &back, (32_000, 90_000));
    assert_eq!(a.link().ping_ms, 32.0);
}

#[test]
fn a_round_trip_under_a_millisecond_is_measured_as_under_one() {
    // Loopback: the wire takes 0.1 ms each way; b holds each datagram 0.7 ms. The stamps
    // are whole milliseconds: a sends at whole milliseconds, so each of its stamps is
    // exact, and the answer comes back within the same millisecond; b's held time rounds
    // to 1 ms. Every sample is a hair below zero: each counts as a zero, none is dropped
    // (dropped, the link would have no ping at all, and the game would show the ack
    // round trip, which counts the waits for the next frame).
    let (mut a, mut b) = pair();
    assert!(!a.stats.pinged);
    for round in 0..50u64 {
        let t = round * 17_000;
        let out = a.build_data(t, PROTOCOL_VERSION, &[]);
        deliver_late(&mut b, &out, (t + 100, t + 100));
        let back = b.build_data(t + 800, PROTOCOL_VERSION, &[]);
        deliver_late(&mut a, &back, (t + 900, t + 900));
    }
    assert!(a.stats.pinged, "a zero is a measure: {:?}", a.stats);
    assert_eq!(a.stats.ping_ms, 0.0, "0.2 ms, in whole milliseconds");
}
