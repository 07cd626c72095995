//! The codec's tests: rounding, quantizers, readers' refusals, packets.

use super::quantize::{
    NEAR_LIMIT, all_near, round_any_i32x4, round_i16, round_i32, round_near_i32x4, saturate_i16,
};
use super::*;

#[test]
fn rounding_matches_the_standard_library_for_every_kind_of_f32() {
    let mut specials = vec![
        0.0f32,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.499_999_97,
        -0.499_999_97,
        8_388_607.5,
        -8_388_607.5,
        8_388_608.0,
        16_777_217.0,
        4_194_303.5,
        -4_194_303.5,
        4_194_304.0,
        -4_194_304.0,
        4_194_304.5,
        32_767.5,
        -32_768.5,
        32_768.0,
        -32_769.0,
        2_147_483_520.0,
        3e9,
        -3e9,
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        -f32::EPSILON,
    ];
    // A stride through every bit pattern reaches all exponents, signs and NaNs.
    specials.extend((0..=u32::MAX).step_by(997).map(f32::from_bits));
    // And every half-way value and its neighbours in the ranges the codec uses.
    for i in -70_000i32..70_000 {
        let h = i as f32 + 0.5;
        specials.extend([h, h.next_up(), h.next_down()]);
    }
    for x in &specials {
        let x = *x;
        assert_eq!(round_i32(x), x.round() as i32, "{x:e} ({:#x})", x.to_bits());
        assert_eq!(round_i16(x), x.round() as i16, "{x:e} ({:#x})", x.to_bits());
    }
    // Four at a time, each in every lane: the general way for any value, the way in float
    // arithmetic for values under its limit (checked once for all 2^32 floats).
    for lane in 0..4 {
        for x in &specials {
            let mut four = [1.5, -0.5, 7.0, f32::NAN];
            four[lane] = *x;
            assert_eq!(round_any_i32x4(four), four.map(round_i32), "{x:e}");
            let i16s = round_any_i32x4(four).map(saturate_i16);
            assert_eq!(i16s, four.map(round_i16), "{x:e}");
            let mut four = [1.5, -0.5, 7.0, -4_194_303.5];
            four[lane] = *x;
            if x.abs() < NEAR_LIMIT {
                assert!(all_near(&four));
                assert_eq!(round_near_i32x4(four), four.map(round_i32), "{x:e}");
            } else {
                assert!(!all_near(&four), "{x:e}");
            }
        }
    }
}

#[test]
fn a_pose_in_one_piece_is_the_bytes_of_its_parts() {
    // `pose_bytes` must write exactly what `pos_mm`, `quat` and two `velocity` write:
    // recordings and baselines hold those bytes.
    let mut rng = crate::rng::SeededRng::new(11);
    let odd = [
        0.0f32,
        -0.0,
        0.0005,
        -0.0005,
        64.0,
        -64.0,
        64.1,
        1e30,
        -1e30,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    let mut value = |i: usize| {
        if i.is_multiple_of(7) {
            odd[rng.range_f32(0.0, odd.len() as f32) as usize % odd.len()]
        } else {
            rng.range_f32(-100.0, 100.0)
        }
    };
    for i in 0..20_000 {
        let v: Vec<f32> = (0..13).map(|k| value(i + k)).collect();
        let pos = Vec3::new(v[0] * 1000.0, v[1], v[2]);
        let rot = Quat::from_xyzw(v[3], v[4], v[5], v[6]);
        let (lin, ang) = (Vec3::new(v[7], v[8], v[9]), Vec3::new(v[10], v[11], v[12]));
        let mut parts = Vec::new();
        let mut w = SectionWriter::new(&mut parts);
        w.pos_mm(pos);
        w.quat(rot);
        w.velocity(lin, 64.0);
        w.velocity(ang, 32.0);
        assert_eq!(
            pose_bytes(pos, rot, lin, ang, 64.0, 32.0).as_slice(),
            parts.as_slice(),
            "{v:?}"
        );
    }
}

#[test]
fn parse_reads_a_whole_section_and_serde_fields_round_trip() {
    let mut buf = Vec::new();
    let mut w = SectionWriter::new(&mut buf);
    w.u8(7);
    w.serde(&("spin", 2.5f32, vec![1u16, 2]));
    let s = Section {
        net_id: NetId(1),
        payload: &buf,
    };
    let got = s
        .parse(|r| Ok((r.u8()?, r.serde::<(String, f32, Vec<u16>)>()?)))
        .unwrap();
    assert_eq!(got, (7, ("spin".to_owned(), 2.5, vec![1, 2])));
    // Reading less than the section holds is refused.
    assert_eq!(
        s.parse(|r| r.u8()).unwrap_err(),
        CodecError::TrailingBytes(buf.len() - 1)
    );
    // Garbage where a serde value should be is an error, not a panic.
    let junk = [0xffu8; 9];
    let s = Section {
        net_id: NetId(1),
        payload: &junk,
    };
    assert!(s.parse(|r| r.serde::<Vec<String>>()).is_err());
}

#[test]
fn varint_roundtrip_and_limits() {
    for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
        let mut b = Vec::new();
        put_varint(&mut b, v);
        assert_eq!(get_varint(&b, 10).unwrap(), (v, b.len()));
    }
    // Six continuation bytes cannot be a u32.
    assert_eq!(get_varint_u32(&[0x80; 6]), Err(CodecError::BadVarint));
    // A value over u32::MAX in five bytes is refused too.
    assert_eq!(
        get_varint_u32(&[0xff, 0xff, 0xff, 0xff, 0x7f]),
        Err(CodecError::BadVarint)
    );
    assert!(matches!(
        get_varint_u32(&[0x80]),
        Err(CodecError::Truncated { .. })
    ));
}

#[test]
fn quantizers_roundtrip_within_their_precision() {
    let mut buf = Vec::new();
    let mut w = SectionWriter::new(&mut buf);
    let p = Vec3::new(1.23456, -9.8765, 1000.0004);
    let q = Quat::from_euler(crate::glam::EulerRot::XYZ, 0.3, -2.1, 1.4);
    let v = Vec3::new(3.0, -49.0, 100.0);
    w.pos_mm(p);
    w.quat(q);
    w.quat(-q);
    w.vec3_bounded(v, 50.0);
    assert_eq!(buf.len(), 12 + 7 + 7 + 6);
    let mut r = SectionReader::new(&buf);
    assert!((r.pos_mm().unwrap() - p).abs().max_element() <= 0.0005);
    for _ in 0..2 {
        let back = r.quat().unwrap();
        assert!(back.dot(q).abs() > 0.99999, "{back:?} vs {q:?}");
    }
    let vb = r.vec3_bounded(50.0).unwrap();
    assert!((vb - Vec3::new(3.0, -49.0, 50.0)).abs().max_element() < 0.002);
    r.finish().unwrap();
}

#[test]
fn a_velocity_is_finer_the_slower_it_is_and_a_crawl_is_still() {
    let max = 64.0;
    let back = |v: f32| {
        let mut buf = Vec::new();
        SectionWriter::new(&mut buf).velocity(Vec3::new(v, -v, 0.0), max);
        assert_eq!(buf.len(), 6);
        let r = SectionReader::new(&buf).velocity(max).unwrap();
        assert_eq!(r.y, -r.x, "symmetric about zero");
        r.x
    };
    let mut v = 0.001f32;
    while v <= max {
        // Off by at most half a step of the scale where it is: sqrt(v * max) / 32767.
        let bound = (v * max).sqrt() / 32767.0;
        let err = (back(v) - v).abs();
        assert!(err <= bound * 1.01, "{v} m/s read back {err} off");
        v *= 1.37;
    }
    // 0.35 mm/s at 0.5 m/s, where a 16-bit linear scale of 64 is off by up to 0.98.
    assert!((back(0.5) - 0.5).abs() <= 0.000_35);
    // Under a step of the linear scale: still, so a resting body's jitter reads as rest.
    assert_eq!(back(0.000_9), 0.0);
    assert_eq!(back(-0.000_9), 0.0);
    assert!(back(0.001) > 0.0);
    // Clamped at the end, and NaN is still.
    assert!((back(1e9) - max).abs() <= 0.001);
    assert_eq!(back(f32::NAN), 0.0);
}

#[test]
fn a_rotation_is_written_as_its_unit_rotation_whatever_its_length() {
    // A body's rotation is unit to within a few ulps and is written as it is; any other
    // length is normalized first, so a scaled rotation writes the same bytes as the unit
    // one, and one that is not a rotation at all writes the identity.
    let q = Quat::from_euler(crate::glam::EulerRot::XYZ, 0.3, -2.1, 1.4);
    let bytes = |q: Quat| {
        let mut buf = Vec::new();
        SectionWriter::new(&mut buf).quat(q);
        buf
    };
    for scale in [2.0, 0.5, 1.001, 0.999] {
        assert_eq!(bytes(q * scale), bytes(q), "scaled by {scale}");
    }
    for bad in [
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
    ] {
        assert_eq!(bytes(bad), bytes(Quat::IDENTITY), "{bad:?}");
    }
}

#[test]
fn a_cut_quantized_value_says_how_far_it_got() {
    // The whole value is read at once; a cut one component by component, so the error
    // names the first component missing, not the whole value.
    let (pos, vel) = ([1u8; 12], [1u8; 6]);
    let cut = |n: usize| SectionReader::new(&pos[..n]).pos_mm();
    assert_eq!(
        cut(9),
        Err(CodecError::Truncated {
            needed: 4,
            remaining: 1
        })
    );
    assert!(cut(12).is_ok());
    assert_eq!(
        SectionReader::new(&vel[..5]).vec3_bounded(8.0),
        Err(CodecError::Truncated {
            needed: 2,
            remaining: 1
        })
    );
    assert_eq!(
        SectionReader::new(&[3, 0, 0, 0]).quat(),
        Err(CodecError::Truncated {
            needed: 2,
            remaining: 1
        })
    );
}

#[test]
fn reader_refuses_non_finite_floats_and_bad_bools() {
    let mut r = SectionReader::new(&[0, 0, 0xc0, 0x7f]);
    assert_eq!(r.f32(), Err(CodecError::InvalidValue("non-finite float")));
    assert!(SectionReader::new(&[2]).bool().is_err());
    assert!(SectionReader::new(&[9, 0, 0, 0, 0, 0, 0]).quat().is_err());
}

#[test]
fn packet_roundtrip_skips_empty_sections() {
    let mut p = PacketWriter::new();
    p.section(NetId(1), |w| w.u32(7)).unwrap();
    p.section(NetId(2), |_| {}).unwrap();
    p.section(NetId(300), |w| w.bytes(b"hey")).unwrap();
    assert_eq!(p.section_count(), 2);
    let got: Vec<_> = PacketReader::new(p.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].net_id, NetId(1));
    assert_eq!(got[0].reader().u32().unwrap(), 7);
    assert_eq!(got[1].net_id, NetId(300));
    assert_eq!(got[1].reader().bytes().unwrap(), b"hey");
}

#[test]
fn oversized_sections_are_refused_on_both_sides() {
    let mut p = PacketWriter::new();
    let r = p.section(NetId(1), |w| {
        for _ in 0..=MAX_SECTION_LEN {
            w.u8(0)
        }
    });
    assert!(matches!(r, Err(CodecError::SectionTooLong { .. })));
    assert!(p.as_bytes().is_empty());
    let mut forged = Vec::new();
    put_varint(&mut forged, 1);
    put_varint(&mut forged, 5000);
    forged.resize(forged.len() + 5000, 0);
    let mut it = PacketReader::new(&forged);
    assert!(matches!(
        it.next(),
        Some(Err(CodecError::SectionTooLong { .. }))
    ));
    assert!(it.next().is_none());
}

#[test]
fn sections_written_in_place_frame_alike_whatever_their_length_or_fate() {
    // Each section is written straight into the packet behind a one-byte length, which a
    // payload of 128 bytes or more widens. The packet must read back the same either way,
    // its spans must point where a reader finds the payloads, and a section refused or
    // abandoned by a panic must leave no trace.
    let mut p = PacketWriter::new();
    let fill = |n: usize| move |w: &mut SectionWriter<'_>| (0..n).for_each(|i| w.u8(i as u8));
    for (net, n) in [(1, 127), (2, 128), (3, 5), (200, MAX_SECTION_LEN), (4, 1)] {
        let written = p.section(NetId(net), |w| {
            fill(n)(w);
            assert_eq!(w.len(), n, "a writer counts only its own bytes");
        });
        assert_eq!(written.unwrap(), n);
        let before = p.as_bytes().to_vec();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            p.section(NetId(9), |w| {
                fill(40)(w);
                panic!("a server path fails half-way");
            })
        }));
        assert!(panicked.is_err());
        assert!(p.section(NetId(9), fill(MAX_SECTION_LEN + 1)).is_err());
        assert_eq!(
            p.as_bytes(),
            &before[..],
            "refused or abandoned: nothing left"
        );
    }
    let read: Vec<_> = PacketReader::new(p.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    let spans: Vec<_> = p.sections().collect();
    assert_eq!(read, spans);
    let lens: Vec<_> = read.iter().map(|s| (s.net_id.0, s.payload.len())).collect();
    assert_eq!(
        lens,
        [(1, 127), (2, 128), (3, 5), (200, MAX_SECTION_LEN), (4, 1)]
    );
    assert!(
        read.iter()
            .all(|s| s.payload.iter().enumerate().all(|(i, &b)| b == i as u8))
    );
}
