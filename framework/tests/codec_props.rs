//! Property tests of the section decoder: arbitrary bytes never panic, and a bad section
//! costs only itself while the framing holds.

mod common;

use common::Feed;
use lanyard::codec::{PacketReader, PacketWriter, Section};
use lanyard::prelude::*;
use lanyard_demo::{self as demo, MoverParams};
use proptest::prelude::*;
use std::sync::Arc;

fn sections() -> impl Strategy<Value = Vec<(u32, Vec<u8>)>> {
    prop::collection::vec(
        (0u32..5000, prop::collection::vec(any::<u8>(), 1..64)),
        1..20,
    )
}

fn encode(s: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut p = PacketWriter::new();
    for (id, b) in s {
        p.raw_section(Section {
            net_id: NetId(*id),
            payload: b,
        })
        .unwrap();
    }
    p.as_bytes().to_vec()
}

fn group_with_movers(n: usize) -> EntityGroup {
    let mut r = KindRegistry::new();
    demo::register(&mut r).unwrap();
    let mut g = EntityGroup::new(Arc::new(r), GroupConfig::default());
    for i in 0..n {
        let p = MoverParams {
            pos: [i as f32 * 2.0, 1.0, 0.0],
            half_extents: [0.5; 3],
            seed: i as u64,
            speed: 3.0,
            period: 5,
            moves_for: 0,
        };
        g.spawn(demo::MOVER, &p, Owner::Server).unwrap();
    }
    g
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic_and_yield_in_bounds_sections(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let mut total = 0;
        let mut n = 0;
        for s in PacketReader::new(&bytes) {
            n += 1;
            prop_assert!(n <= bytes.len(), "more sections than bytes");
            match s {
                Ok(s) => total += s.payload.len(),
                Err(_) => break,
            }
        }
        prop_assert!(total <= bytes.len());
    }

    #[test]
    fn random_bytes_fed_to_a_group_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let mut g = group_with_movers(4);
        Feed::packet(&mut g, &bytes, Owner::Server);
        g.frame();
        // Random well-framed sections aimed at real entities: decoded, judged, never a panic.
        let mut p = PacketWriter::new();
        for (i, chunk) in bytes.chunks(13).enumerate() {
            p.raw_section(Section { net_id: NetId(1 + (i as u32 % 4)), payload: chunk }).unwrap();
        }
        Feed::packet(&mut g, p.as_bytes(), Owner::Server);
        g.frame();
        prop_assert!(g.state_hash() != 0);
    }

    #[test]
    fn valid_packets_roundtrip(s in sections()) {
        let bytes = encode(&s);
        let back: Vec<Section> = PacketReader::new(&bytes).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(back.len(), s.len());
        for (got, (id, b)) in back.iter().zip(&s) {
            prop_assert_eq!(got.net_id, NetId(*id));
            prop_assert_eq!(got.payload, &b[..]);
        }
    }

    #[test]
    fn a_garbled_payload_costs_only_its_own_section(s in sections(), pick in any::<prop::sample::Index>(), noise in prop::collection::vec(any::<u8>(), 64)) {
        let victim = pick.index(s.len());
        let mut garbled = s.clone();
        let len = garbled[victim].1.len();
        garbled[victim].1.copy_from_slice(&noise[..len]);
        let bytes = encode(&garbled);
        let back: Vec<Section> = PacketReader::new(&bytes).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(back.len(), s.len());
        for (i, (got, (id, b))) in back.iter().zip(&s).enumerate() {
            if i != victim {
                prop_assert_eq!(got.net_id, NetId(*id));
                prop_assert_eq!(got.payload, &b[..]);
            }
        }
    }

    #[test]
    fn a_truncated_packet_keeps_every_whole_section_before_the_cut(s in sections(), cut in any::<prop::sample::Index>()) {
        let bytes = encode(&s);
        let cut = cut.index(bytes.len());
        let mut whole = 0;
        let mut end = 0;
        for one in &s {
            end += encode(std::slice::from_ref(one)).len();
            if end > cut { break; }
            whole += 1;
        }
        let got: Vec<_> = PacketReader::new(&bytes[..cut]).collect();
        let ok = got.iter().take_while(|r| r.is_ok()).count();
        prop_assert_eq!(ok, whole);
        for (r, (id, b)) in got.iter().zip(&s).take(whole) {
            let r = r.as_ref().unwrap();
            prop_assert_eq!(r.net_id, NetId(*id));
            prop_assert_eq!(r.payload, &b[..]);
        }
        prop_assert!(got.len() <= whole + 1, "reading went on past a broken frame");
    }
}
