//! Section deltas: a section written as its difference from an earlier section of the same
//! entity (a *baseline* the receiver already holds). The network layer sends a changed
//! section this way; an unchanged one costs nothing.
//!
//! A [`DeltaCodec`] is lossless for any pair of byte strings: whatever the baseline and the
//! new section are, [`decode`](DeltaCodec::decode) of what [`encode`](DeltaCodec::encode)
//! wrote gives the new section back exactly. A codec only decides how small the delta is.
//! By default a section that starts with a [`PoseState`](crate::pose::PoseState) travels
//! as a [`PoseDelta`] (which differences its quantized integers) against a prediction of
//! it ([`PoseCodec`](crate::PoseCodec), see [`crate::predict`]), and any other as a
//! [`ByteDelta`]. A kind that knows its data better sets a codec of its own
//! ([`KindRegistry::set_delta_codec`](crate::KindRegistry::set_delta_codec)): it implements
//! the trait itself, or describes its fixed-size fields to a [`FieldDelta`].
//!
//! A codec may also *predict* ([`DeltaCodec::predict`]): say what a section will be some
//! ticks later. The default pose codec does, and so does the explicit
//! [`PredictedPose`](crate::predict::PredictedPose).
//!
//! Decoding is total: any delta bytes give a section or an [`Error`], never a panic, and
//! never more than [`MAX_SECTION_LEN`] bytes.

use crate::codec::{MAX_SECTION_LEN, put_varint};
use crate::error::{CodecError, Error};

/// Writes a section as a difference from a baseline, and reads it back.
pub trait DeltaCodec {
    /// Appends to `out` what turns `base` into `cur`.
    fn encode(&self, base: &[u8], cur: &[u8], out: &mut Vec<u8>);
    /// Appends to `out` the section `delta` (written by [`encode`](Self::encode) against
    /// `base`) stands for.
    fn decode(&self, base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), Error>;

    /// Whether this codec predicts: whether [`predict`](Self::predict) can say what a
    /// section will be some ticks after another. The network layer then sends nothing
    /// for a body that follows its prediction, and a delta against the prediction for one
    /// that does not. No by default.
    fn predicts(&self) -> bool {
        false
    }

    /// Appends to `out` the section `ticks` ticks of `dt` seconds after `base`, as both
    /// ends compute it alike (the same code on the same quantized values), and returns
    /// true; returns false, appending nothing, if it cannot. The default cannot.
    fn predict(&self, base: &[u8], ticks: u32, dt: f32, out: &mut Vec<u8>) -> bool {
        let _ = (base, ticks, dt, out);
        false
    }

    /// The precision its [`agrees`](Self::agrees) judges by, if it is a pose's: checked
    /// when the codec is set on a kind. None by default.
    fn tolerance(&self) -> Option<crate::pose::Tolerance> {
        None
    }

    /// Whether the `predicted` section stands for the `actual` one closely enough that the
    /// receiver may keep its prediction: the kind's precision. By default only an equal
    /// section does.
    fn agrees(&self, predicted: &[u8], actual: &[u8]) -> bool {
        predicted == actual
    }
}

fn bad(why: &'static str) -> Error {
    Error::Codec(CodecError::InvalidValue(why))
}

/// Reads a varint from the front of `rest` (at most 5 bytes: values below 2^35).
fn varint(rest: &mut &[u8]) -> Result<u64, Error> {
    let mut v = 0u64;
    for i in 0..5 {
        let (&b, tail) = rest.split_first().ok_or(bad("truncated delta"))?;
        *rest = tail;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(bad("varint too long in delta"))
}

fn take<'a>(rest: &mut &'a [u8], n: usize) -> Result<&'a [u8], Error> {
    if rest.len() < n {
        return Err(bad("truncated delta"));
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Ok(head)
}

/// The generic delta: the new length, then the runs of bytes that differ from the
/// baseline, each as (bytes kept since the last run, run length, the run). An unchanged
/// section costs one or two bytes; a 31-byte pose whose position alone moved, about 16.
#[derive(Debug, Clone, Copy, Default)]
pub struct ByteDelta;

/// Unchanged bytes shorter than this between two changed runs are sent inside one run
/// (a run header costs two bytes).
const MERGE_GAP: usize = 3;

impl DeltaCodec for ByteDelta {
    fn encode(&self, base: &[u8], cur: &[u8], out: &mut Vec<u8>) {
        put_varint(out, cur.len() as u64);
        let same = |i: usize| base.get(i) == Some(&cur[i]);
        let mut kept_from = 0;
        let mut i = 0;
        while i < cur.len() {
            if same(i) {
                i += 1;
                continue;
            }
            // A run starts at i: extend it over short gaps of equal bytes.
            let start = i;
            let mut end = i + 1;
            let mut j = end;
            while j < cur.len() {
                if !same(j) {
                    end = j + 1;
                } else if j - end >= MERGE_GAP {
                    break;
                }
                j += 1;
            }
            put_varint(out, (start - kept_from) as u64);
            put_varint(out, (end - start) as u64);
            out.extend_from_slice(&cur[start..end]);
            kept_from = end;
            i = end;
        }
    }

    fn decode(&self, base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let start = out.len();
        let result = decode_bytes(base, delta, out);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }
}

fn decode_bytes(base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
    let mut rest = delta;
    let len = usize::try_from(varint(&mut rest)?).unwrap_or(usize::MAX);
    if len > MAX_SECTION_LEN {
        return Err(bad("delta longer than a section"));
    }
    let mut at: usize = 0;
    while !rest.is_empty() {
        let skip = usize::try_from(varint(&mut rest)?).unwrap_or(usize::MAX);
        let run = usize::try_from(varint(&mut rest)?).unwrap_or(usize::MAX);
        let run_at = at.checked_add(skip).filter(|&a| a <= len);
        let run_end = run_at
            .and_then(|a| a.checked_add(run))
            .filter(|&e| e <= len);
        let (Some(run_at), Some(run_end)) = (run_at, run_end) else {
            return Err(bad("delta run past the section's end"));
        };
        copy_base(base, at, run_at, out);
        out.extend_from_slice(take(&mut rest, run)?);
        at = run_end;
    }
    copy_base(base, at, len, out);
    Ok(())
}

/// Appends the baseline's bytes `from..to`, zeros where the baseline is shorter.
fn copy_base(base: &[u8], from: usize, to: usize, out: &mut Vec<u8>) {
    let have = base.len().clamp(from, to);
    if let Some(kept) = base.get(from..have) {
        out.extend_from_slice(kept);
    }
    out.resize(out.len() + (to - have), 0);
}

/// A fixed-size little-endian integer field of a section, for [`FieldDelta`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// One byte.
    U8,
    /// Two bytes, signed.
    I16,
    /// Four bytes, signed.
    I32,
}

impl Field {
    fn len(self) -> usize {
        match self {
            Field::U8 => 1,
            Field::I16 => 2,
            Field::I32 => 4,
        }
    }

    fn read(self, b: &[u8]) -> i64 {
        match self {
            Field::U8 => i64::from(b[0]),
            Field::I16 => i64::from(i16::from_le_bytes([b[0], b[1]])),
            Field::I32 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        }
    }

    /// Appends `v` wrapped to the field's width.
    fn write(self, v: i64, out: &mut Vec<u8>) {
        let at = out.len();
        out.resize(at + self.len(), 0);
        self.write_at(v, &mut out[at..]);
    }

    /// Writes `v` wrapped to the field's width over the first bytes of `dst`.
    fn write_at(self, v: i64, dst: &mut [u8]) {
        match self {
            Field::U8 => dst[0] = v as u8,
            Field::I16 => dst[..2].copy_from_slice(&(v as i16).to_le_bytes()),
            Field::I32 => dst[..4].copy_from_slice(&(v as i32).to_le_bytes()),
        }
    }

    /// The difference `cur - base`, wrapped to the field's width and sign-extended, so
    /// small changes are small numbers whatever the values.
    fn diff(self, base: i64, cur: i64) -> i64 {
        let d = cur.wrapping_sub(base);
        match self {
            Field::U8 => i64::from(d as i8),
            Field::I16 => i64::from(d as i16),
            Field::I32 => i64::from(d as i32),
        }
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A delta for sections that start with fixed integer fields (quantized positions,
/// rotations, velocities): a mask of the fields that changed and each change as a small
/// signed number, then a [`ByteDelta`] of whatever follows the fields. A field that moved
/// by a few units costs one byte.
#[derive(Debug, Clone)]
pub struct FieldDelta {
    fields: Vec<Field>,
    len: usize,
}

impl FieldDelta {
    /// A delta for sections starting with `fields`, in order (at most 63 of them).
    pub fn new(fields: &[Field]) -> Self {
        let fields = fields[..fields.len().min(63)].to_vec();
        let len = fields.iter().map(|f| f.len()).sum();
        FieldDelta { fields, len }
    }
}

impl DeltaCodec for FieldDelta {
    fn encode(&self, base: &[u8], cur: &[u8], out: &mut Vec<u8>) {
        if base.len() < self.len || cur.len() < self.len {
            // Too short for the layout: the whole thing as bytes.
            out.push(0);
            ByteDelta.encode(base, cur, out);
            return;
        }
        out.push(1);
        let mut mask = 0u64;
        let mut diffs = Vec::with_capacity(self.fields.len());
        let mut at = 0;
        for (i, f) in self.fields.iter().enumerate() {
            let n = f.len();
            let d = f.diff(f.read(&base[at..at + n]), f.read(&cur[at..at + n]));
            if d != 0 {
                mask |= 1 << i;
                diffs.push(d);
            }
            at += n;
        }
        put_varint(out, mask);
        for d in diffs {
            put_varint(out, zigzag(d));
        }
        ByteDelta.encode(&base[self.len..], &cur[self.len..], out);
    }

    fn decode(&self, base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let mut rest = delta;
        match take(&mut rest, 1)?[0] {
            0 => return ByteDelta.decode(base, rest, out),
            1 if base.len() >= self.len => {}
            _ => return Err(bad("field delta against a short baseline")),
        }
        let mask = varint(&mut rest)?;
        let start = out.len();
        let mut at = 0;
        for (i, f) in self.fields.iter().enumerate() {
            let n = f.len();
            let b = f.read(&base[at..at + n]);
            let d = if mask & (1 << i) != 0 {
                match varint(&mut rest) {
                    Ok(v) => unzigzag(v),
                    Err(e) => {
                        out.truncate(start);
                        return Err(e);
                    }
                }
            } else {
                0
            };
            f.write(b.wrapping_add(d), out);
            at += n;
        }
        if let Err(e) = ByteDelta.decode(&base[self.len..], rest, out) {
            out.truncate(start);
            return Err(e);
        }
        if out.len() - start > MAX_SECTION_LEN {
            out.truncate(start);
            return Err(bad("delta longer than a section"));
        }
        Ok(())
    }
}

/// The delta for sections that start with a [`PoseState`](crate::pose::PoseState): its
/// millimetre position, smallest-three rotation and 16-bit velocities are differenced as
/// integers (wrapping, as [`FieldDelta`] does), and the differences are packed as bits:
/// each group of three (position, rotation, linear and angular velocity) at the width of its
/// largest, after that width (6 bits for the position, 5 for the others; 0 when the group
/// did not change). Anything after the pose is a [`ByteDelta`], or one bit when it did not
/// change. A body off its prediction by a millimetre and a little turn costs about 6
/// bytes; one knocked off course by a collision, about 14 (31 in full). A static model of
/// the residuals, in effect: small groups cost few bits, and no byte is spent on a
/// varint's continuation bits or a mask.
#[derive(Debug, Clone, Copy, Default)]
pub struct PoseDelta;

/// The pose's integer fields, as [`PoseDelta`] groups them: (field, how many, bits of the
/// width that says how wide the group's values are).
const POSE_GROUPS: [(Field, usize, u32); 4] = [
    (Field::I32, 3, 6),
    (Field::I16, 3, 5),
    (Field::I16, 3, 5),
    (Field::I16, 3, 5),
];

/// The byte of the rotation's largest component, between the position and the rest.
const LARGEST_AT: usize = 12;

/// Where field `k` (0..12, the groups' values in order, the largest component left out)
/// starts in a pose.
fn field_at(k: usize) -> usize {
    if k < 3 { 4 * k } else { 13 + 2 * (k - 3) }
}

impl DeltaCodec for PoseDelta {
    fn encode(&self, base: &[u8], cur: &[u8], out: &mut Vec<u8>) {
        let n = crate::pose::PoseState::LEN;
        let mut bits = Bits::new(out);
        if base.len() < n || cur.len() < n {
            // Too short for a pose: the whole thing as bytes.
            bits.put(0, 1);
            bits.finish();
            ByteDelta.encode(base, cur, out);
            return;
        }
        bits.put(1, 1);
        let mut k = 0;
        for (field, count, width_bits) in POSE_GROUPS {
            let mut zz = [0u64; 3];
            for z in zz.iter_mut().take(count) {
                let at = field_at(k);
                let b = field.read(&base[at..at + field.len()]);
                let c = field.read(&cur[at..at + field.len()]);
                *z = zigzag(field.diff(b, c));
                k += 1;
            }
            let width = 64 - zz.iter().fold(0, |a, z| a | z).leading_zeros();
            bits.put(u64::from(width), width_bits);
            for z in zz {
                bits.put(z, width);
            }
        }
        let largest = cur[LARGEST_AT];
        if largest == base[LARGEST_AT] {
            bits.put(0, 1);
        } else {
            bits.put(1, 1);
            bits.put(u64::from(largest), 8);
        }
        let same_tail = base[n..] == cur[n..];
        bits.put(u64::from(same_tail), 1);
        bits.finish();
        if !same_tail {
            ByteDelta.encode(&base[n..], &cur[n..], out);
        }
    }

    fn decode(&self, base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let start = out.len();
        let result = decode_pose(base, delta, out);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }
}

fn decode_pose(base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
    let n = crate::pose::PoseState::LEN;
    let mut bits = BitsIn::new(delta);
    if bits.take(1)? == 0 {
        return ByteDelta.decode(base, bits.rest(), out);
    }
    if base.len() < n {
        return Err(bad("pose delta against a short baseline"));
    }
    let start = out.len();
    out.extend_from_slice(&base[..n]);
    let mut k = 0;
    for (field, count, width_bits) in POSE_GROUPS {
        let width = bits.take(width_bits)? as u32;
        if width > 8 * field.len() as u32 {
            return Err(bad("pose delta wider than its field"));
        }
        for _ in 0..count {
            let d = unzigzag(bits.take(width)?);
            let at = start + field_at(k);
            let value = field.read(&out[at..at + field.len()]).wrapping_add(d);
            field.write_at(value, &mut out[at..]);
            k += 1;
        }
    }
    if bits.take(1)? == 1 {
        out[start + LARGEST_AT] = bits.take(8)? as u8;
    }
    let same_tail = bits.take(1)? == 1;
    let rest = bits.rest();
    if same_tail {
        if !rest.is_empty() {
            return Err(bad("bytes after a whole pose delta"));
        }
        out.extend_from_slice(&base[n..]);
    } else {
        ByteDelta.decode(&base[n..], rest, out)?;
    }
    if out.len() - start > MAX_SECTION_LEN {
        return Err(bad("delta longer than a section"));
    }
    Ok(())
}

/// Writes bits, least significant first, into whole bytes of `out`.
struct Bits<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    held: u32,
}

impl<'a> Bits<'a> {
    fn new(out: &'a mut Vec<u8>) -> Self {
        Bits {
            out,
            acc: 0,
            held: 0,
        }
    }

    /// The low `width` bits of `v` (at most 32 at a time).
    fn put(&mut self, v: u64, width: u32) {
        debug_assert!(width <= 32);
        self.acc |= (v & ((1u64 << width) - 1)) << self.held;
        self.held += width;
        while self.held >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.held -= 8;
        }
    }

    /// Writes the last, partial byte (its unused high bits zero).
    fn finish(self) {
        if self.held > 0 {
            self.out.push(self.acc as u8);
        }
    }
}

/// Reads what [`Bits`] wrote.
struct BitsIn<'a> {
    rest: &'a [u8],
    acc: u64,
    held: u32,
}

impl<'a> BitsIn<'a> {
    fn new(rest: &'a [u8]) -> Self {
        BitsIn {
            rest,
            acc: 0,
            held: 0,
        }
    }

    /// The next `width` bits (at most 32).
    fn take(&mut self, width: u32) -> Result<u64, Error> {
        while self.held < width {
            let (&b, tail) = self.rest.split_first().ok_or(bad("truncated delta"))?;
            self.rest = tail;
            self.acc |= u64::from(b) << self.held;
            self.held += 8;
        }
        let v = self.acc & ((1u64 << width) - 1);
        self.acc >>= width;
        self.held -= width;
        Ok(v)
    }

    /// The bytes after the partial byte the bits ended in.
    fn rest(&self) -> &'a [u8] {
        self.rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::SectionWriter;
    use crate::pose::PoseState;
    use crate::{Quat, Vec3};
    use proptest::prelude::*;

    fn round_trip(codec: &dyn DeltaCodec, base: &[u8], cur: &[u8]) -> usize {
        let mut d = Vec::new();
        codec.encode(base, cur, &mut d);
        let mut back = vec![9, 9];
        codec.decode(base, &d, &mut back).unwrap();
        assert_eq!(&back[2..], cur, "appended after what was there");
        d.len()
    }

    /// A body tumbling along a diagonal, `x` along it, at `vx`.
    fn pose(x: f32, vx: f32) -> Vec<u8> {
        let mut b = Vec::new();
        PoseState {
            pos: Vec3::new(x, 1.5 + x, -2.0 - x),
            rot: Quat::from_scaled_axis(Vec3::new(0.1, 0.2, 0.3) * x),
            linvel: Vec3::new(vx, vx, -vx),
            angvel: Vec3::ZERO,
        }
        .write(&mut SectionWriter::new(&mut b));
        b
    }

    #[test]
    fn an_unchanged_section_costs_a_byte_or_two() {
        let p = pose(1.0, 0.5);
        assert_eq!(round_trip(&ByteDelta, &p, &p), 1);
        assert_eq!(round_trip(&PoseDelta, &p, &p), 3);
    }

    #[test]
    fn a_moving_pose_costs_far_less_than_the_pose() {
        let (a, b) = (pose(1.0, 2.0), pose(1.07, 2.1));
        let bytes = round_trip(&ByteDelta, &a, &b);
        let fields = round_trip(&PoseDelta, &a, &b);
        assert!(fields < bytes, "{fields} vs {bytes}");
        assert!(
            fields <= PoseState::LEN / 2,
            "{fields} bytes for a move of 7 cm"
        );
    }

    #[test]
    fn garbage_deltas_are_refused_without_panicking() {
        let base = pose(0.0, 0.0);
        let mut out = Vec::new();
        for d in [
            &[][..],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            &[5, 0, 9, 1],
            &[1, 0xff, 0xff, 0xff, 0x7f],
            &[0x80, 0x80, 0x80, 0x01],
        ] {
            let _ = ByteDelta.decode(&base, d, &mut out);
            let _ = PoseDelta.decode(&base, d, &mut out);
        }
    }

    proptest! {
        #[test]
        fn any_pair_round_trips(
            base in proptest::collection::vec(any::<u8>(), 0..80),
            cur in proptest::collection::vec(any::<u8>(), 0..80),
        ) {
            round_trip(&ByteDelta, &base, &cur);
            round_trip(&PoseDelta, &base, &cur);
        }

        #[test]
        fn near_pairs_round_trip(
            base in proptest::collection::vec(any::<u8>(), 31..60),
            flips in proptest::collection::vec((0usize..60, any::<u8>()), 0..6),
        ) {
            let mut cur = base.clone();
            for (i, v) in flips {
                if i < cur.len() {
                    cur[i] = v;
                }
            }
            round_trip(&ByteDelta, &base, &cur);
            round_trip(&PoseDelta, &base, &cur);
        }

        #[test]
        fn decoding_any_bytes_never_panics(
            base in proptest::collection::vec(any::<u8>(), 0..40),
            delta in proptest::collection::vec(any::<u8>(), 0..60),
        ) {
            let mut out = Vec::new();
            let _ = ByteDelta.decode(&base, &delta, &mut out);
            prop_assert!(out.len() <= MAX_SECTION_LEN);
            out.clear();
            let _ = PoseDelta.decode(&base, &delta, &mut out);
            prop_assert!(out.len() <= MAX_SECTION_LEN);
        }
    }
}
