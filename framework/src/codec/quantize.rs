//! The quantizers' arithmetic: what the section writer's `pos_mm`, `quat`, `vec3_bounded`
//! and `velocity` write, as bytes (and what `velocity` reads), and the rounding they share.

use rapier3d::glamx::glam::{Quat, Vec3};

/// What [`SectionWriter::pos_mm`](super::SectionWriter::pos_mm) writes.
#[inline(always)]
pub(crate) fn pos_mm_bytes(p: Vec3) -> [u8; 12] {
    let mut b = [0u8; 12];
    for (out, c) in b.chunks_exact_mut(4).zip([p.x, p.y, p.z]) {
        // Saturates and maps NaN to 0, which is what we want on the sending side.
        out.copy_from_slice(&round_i32(c * 1000.0).to_le_bytes());
    }
    b
}

/// What [`SectionWriter::quat`](super::SectionWriter::quat) writes.
#[inline(always)]
pub(crate) fn quat_bytes(q: Quat) -> [u8; 7] {
    let (largest, others) = quat_parts(q);
    let mut b = [0u8; 7];
    b[0] = largest;
    for (out, v) in b[1..].chunks_exact_mut(2).zip(others) {
        out.copy_from_slice(&round_i16(v).to_le_bytes());
    }
    b
}

/// What [`SectionWriter::vec3_bounded`](super::SectionWriter::vec3_bounded) writes.
#[inline(always)]
pub(crate) fn vec3_bounded_bytes(v: Vec3, max: f32) -> [u8; 6] {
    three_i16(v, |c| bounded(c, max))
}

/// Each component of `v` on a 16-bit `scale` (before rounding), rounded, little-endian.
#[inline(always)]
fn three_i16(v: Vec3, scale: impl Fn(f32) -> f32) -> [u8; 6] {
    let mut b = [0u8; 6];
    for (out, c) in b.chunks_exact_mut(2).zip([v.x, v.y, v.z]) {
        out.copy_from_slice(&round_i16(scale(c)).to_le_bytes());
    }
    b
}

/// A component of a vector bounded by `max`, in 16-bit fixed point before rounding.
#[inline(always)]
fn bounded(c: f32, max: f32) -> f32 {
    (c / max).clamp(-1.0, 1.0) * f32::from(i16::MAX)
}

/// What [`SectionWriter::velocity`](super::SectionWriter::velocity) writes.
#[inline(always)]
pub(crate) fn velocity_bytes(v: Vec3, max: f32) -> [u8; 6] {
    three_i16(v, |c| on_root_scale(c, max))
}

/// A component of a velocity bounded by `max` on the square-root scale of
/// [`SectionWriter::velocity`](super::SectionWriter::velocity), before rounding:
/// `sign(c) * sqrt(|c| / max) * 32767`, and 0 below [`still_below`] (NaN stays NaN, which
/// rounds to 0).
#[inline(always)]
fn on_root_scale(c: f32, max: f32) -> f32 {
    // One product and a root: `sqrt(|c| * 32767^2 / max)`, clamped at the scale's end
    // (`clamp`, unlike `min`, keeps a NaN).
    let speed = c.abs();
    let root = (speed * (ROOT_SCALE_END / max))
        .clamp(0.0, ROOT_SCALE_END)
        .sqrt();
    let root = if speed < still_below(max) { 0.0 } else { root };
    // The sign as a bit, without a branch (a NaN's root is NaN whatever its sign).
    root.copysign(c)
}

/// `32767^2` (as the nearest `f32`): the square of the root scale's largest value.
const ROOT_SCALE_END: f32 = 1_073_676_289.0;

/// Below this speed a velocity component of `max` travels as zero: what a 16-bit fixed
/// point scale of `max` rounds to zero (under 64, 0.98 mm/s). A resting body's jitter,
/// which rapier leaves under that, so reads as rest on every peer, and the body sleeps:
/// carried finer, it would be set on the peers that take it (waking the body every time).
#[inline(always)]
fn still_below(max: f32) -> f32 {
    max / (2.0 * f32::from(i16::MAX))
}

/// The velocity component a 16-bit value `q` on the square-root scale of `max` stands for:
/// `sign(q) * q^2 * max / 32767^2`. The square is exact in integers; every peer then
/// rounds it to an `f32` and multiplies, alike.
#[inline(always)]
pub(crate) fn from_root_scale(q: i16, max: f32) -> f32 {
    let q = i32::from(q);
    (q * q.abs()) as f32 * (max / ROOT_SCALE_END)
}

/// Whether every value is under [`NEAR_LIMIT`] in magnitude (NaN is not), checked without
/// a branch for each.
#[inline(always)]
pub(super) fn all_near(x: &[f32]) -> bool {
    x.iter().fold(true, |all, v| all & (v.abs() < NEAR_LIMIT))
}

/// [`round_i32`] of any four values at once, without branches, so that the compiler can
/// do the four in one go: the same integers as four calls.
#[inline(always)]
pub(super) fn round_any_i32x4(x: [f32; 4]) -> [i32; 4] {
    let mut out = [0i32; 4];
    for (o, x) in out.iter_mut().zip(x) {
        // As `round_i32`: below 2^23 truncation and the remainder are exact; from there up
        // (and for NaN) the truncation is the answer.
        let t = x as i32;
        let rest = x - t as f32;
        let near = i32::from(rest >= 0.5) - i32::from(rest <= -0.5);
        *o = t + near * i32::from(x.abs() < 8_388_608.0);
    }
    out
}

/// Below this magnitude (2^22) [`round_near_i32x4`] is exact: every velocity and rotation
/// the pose codec rounds, and positions within 4 km of the origin.
pub(super) const NEAR_LIMIT: f32 = 4_194_304.0;

/// 1.5 * 2^23: any value under [`NEAR_LIMIT`] added to it lands where the floats are the
/// whole numbers, so the sum is the value rounded (half-way to even), and the sum's bits
/// less this one's are that whole number.
const MAGIC: f32 = 12_582_912.0;

/// [`round_any_i32x4`] of four values under [`NEAR_LIMIT`] in magnitude, in float
/// arithmetic and bit operations only: no conversion to an integer, which Rust saturates
/// and the compiler then does one value at a time. Every value a pose holds but a
/// position over 4 km out, checked once for all 2^32 floats under the limit.
#[inline(always)]
pub(super) fn round_near_i32x4(x: [f32; 4]) -> [i32; 4] {
    let mut out = [0i32; 4];
    for (o, x) in out.iter_mut().zip(x) {
        let sum = x + MAGIC;
        let whole = (sum.to_bits() as i32).wrapping_sub(MAGIC.to_bits() as i32);
        // Exact, and in [-0.5, 0.5]: at a half-way value the sum went to the even
        // neighbour; rounding goes away from zero instead.
        let rest = x - (sum - MAGIC);
        *o = whole + i32::from(rest == 0.5 && x > 0.0) - i32::from(rest == -0.5 && x < 0.0);
    }
    out
}

/// The nearest `i16`.
#[inline(always)]
pub(super) fn saturate_i16(v: i32) -> i16 {
    v.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
}

/// What [`SectionWriter::pos_mm`](super::SectionWriter::pos_mm),
/// [`quat`](super::SectionWriter::quat) and two
/// [`velocity`](super::SectionWriter::velocity) (of `max_lin` and `max_ang`) write, in one
/// piece: the same bytes, with the roundings four at a time.
#[inline(always)]
pub(crate) fn pose_bytes(
    pos: Vec3,
    rot: Quat,
    linvel: Vec3,
    angvel: Vec3,
    max_lin: f32,
    max_ang: f32,
) -> [u8; 31] {
    let (largest, others) = quat_parts(rot);
    let values = [
        [pos.x * 1000.0, pos.y * 1000.0, pos.z * 1000.0, 0.0],
        [others[0], others[1], others[2], 0.0],
        [
            on_root_scale(linvel.x, max_lin),
            on_root_scale(linvel.y, max_lin),
            on_root_scale(linvel.z, max_lin),
            on_root_scale(angvel.x, max_ang),
        ],
        [
            on_root_scale(angvel.y, max_ang),
            on_root_scale(angvel.z, max_ang),
            0.0,
            0.0,
        ],
    ];
    // One check for the sixteen, so that a pose takes one way or the other as a whole.
    // (Spelled out call by call: `values.map(..)` left the calls out of line.)
    let [mm, q, lin, ang] = if all_near(values.as_flattened()) {
        let [a, b, c, d] = values;
        [
            round_near_i32x4(a),
            round_near_i32x4(b),
            round_near_i32x4(c),
            round_near_i32x4(d),
        ]
    } else {
        let [a, b, c, d] = values;
        [
            round_any_i32x4(a),
            round_any_i32x4(b),
            round_any_i32x4(c),
            round_any_i32x4(d),
        ]
    };
    let (q, lin, ang) = (
        q.map(saturate_i16),
        lin.map(saturate_i16),
        ang.map(saturate_i16),
    );
    let mut b = [0u8; 31];
    for (out, v) in b[..12].chunks_exact_mut(4).zip(mm) {
        out.copy_from_slice(&v.to_le_bytes());
    }
    b[12] = largest;
    let sixteen = [
        q[0], q[1], q[2], lin[0], lin[1], lin[2], lin[3], ang[0], ang[1],
    ];
    for (out, v) in b[13..].chunks_exact_mut(2).zip(sixteen) {
        out.copy_from_slice(&v.to_le_bytes());
    }
    b
}

/// A rotation's "smallest three" before rounding: the index of its largest component,
/// and the other three, signed so the largest is positive, scaled to 16-bit fixed point.
#[inline(always)]
fn quat_parts(q: Quat) -> (u8, [f32; 3]) {
    // A body's rotation is a unit quaternion to within a few ulps. Dividing one by its
    // length (a square root and a division the rest waits for) would move a component by
    // less than a fortieth of the quantum, so only a rotation further from unit is
    // normalized.
    let len2 = q.length_squared();
    let q = if !(len2.is_finite() && len2 > 0.0) {
        Quat::IDENTITY
    } else if (len2 - 1.0).abs() > 1e-6 {
        q.normalize()
    } else {
        q
    };
    let c = [q.x, q.y, q.z, q.w];
    // The first component of greatest magnitude, chosen without branches: which one
    // it is changes from body to body, and a mispredicted branch costs more than this.
    let mut largest = 0;
    let mut most = c[0].abs();
    for (i, v) in c.iter().enumerate().skip(1) {
        let bigger = v.abs() > most;
        largest = if bigger { i } else { largest };
        most = if bigger { v.abs() } else { most };
    }
    let sign = if c[largest] < 0.0 { -1.0 } else { 1.0 };
    let others = OTHER_THREE[largest].map(|i| c[i] * sign * QUAT_SCALE);
    (largest as u8, others)
}

/// `x.round() as i32`: halves away from zero, saturating, NaN as 0. The same integer for
/// every `f32` (the test checks a spread, and all 2^32 were checked once), without the libm
/// call `round` costs on a baseline x86-64 target, twelve times a pose.
#[inline]
pub(super) fn round_i32(x: f32) -> i32 {
    // From 2^23 up every f32 is whole. Below, truncation and the remainder are exact.
    if x.abs() < 8_388_608.0 {
        let t = x as i32;
        let rest = x - t as f32;
        t + i32::from(rest >= 0.5) - i32::from(rest <= -0.5)
    } else {
        x as i32
    }
}

/// `x.round() as i16`, saturating, NaN as 0 (see [`round_i32`]).
#[inline]
pub(super) fn round_i16(x: f32) -> i16 {
    round_i32(x).clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
}

/// For the largest component of a quaternion, the other three in order.
const OTHER_THREE: [[usize; 3]; 4] = [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]];

/// `i16::MAX * sqrt(2)`: the three smaller components of a unit quaternion lie in
/// `[-1/sqrt(2), 1/sqrt(2)]`.
pub(super) const QUAT_SCALE: f32 = 32767.0 * std::f32::consts::SQRT_2;
