//! Packet sections and their codec.
//!
//! A packet body is a sequence of sections, one per entity:
//!
//! ```text
//! section := varint(net_id) varint(len) payload[len]
//! ```
//!
//! The payload is whatever the entity's controller wrote with a [`SectionWriter`]; the
//! reader hands it back as a [`Section`]. Because every section carries its own length, a
//! reader skips a section it cannot apply (an unknown entity, a payload its controller
//! rejects) and keeps going. Only a broken frame (a length running past the end of the
//! packet, a malformed varint) stops the walk, since nothing after it can be trusted.
//!
//! Reading borrows from the input and never allocates; every length is checked against the
//! bytes that are actually there before it is used.

use crate::error::CodecError;
use crate::id::NetId;
use rapier3d::glamx::glam::{Quat, Vec3};

mod finite;
mod quantize;

use quantize::QUAT_SCALE;
pub(crate) use quantize::{
    from_root_scale, pos_mm_bytes, pose_bytes, quat_bytes, vec3_bounded_bytes, velocity_bytes,
};

/// The largest payload a single section may carry. A section must fit in one datagram.
pub const MAX_SECTION_LEN: usize = 1024;

/// Appends `v` as an unsigned LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads an unsigned LEB128 varint of at most `max_bytes` bytes from the front of `input`.
/// Returns the value and the number of bytes it took.
fn get_varint(input: &[u8], max_bytes: usize) -> Result<(u64, usize), CodecError> {
    let mut v: u64 = 0;
    for (i, &b) in input.iter().enumerate().take(max_bytes) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    if input.len() < max_bytes {
        Err(CodecError::Truncated {
            needed: 1,
            remaining: 0,
        })
    } else {
        Err(CodecError::BadVarint)
    }
}

/// Reads a varint that must fit in a `u32` (at most 5 bytes).
fn get_varint_u32(input: &[u8]) -> Result<(u32, usize), CodecError> {
    let (v, n) = get_varint(input, 5)?;
    let v = u32::try_from(v).map_err(|_| CodecError::BadVarint)?;
    Ok((v, n))
}

/// Writes the payload of one section. Controllers get one in their server path.
///
/// All multi-byte values are little-endian. The quantizing helpers (`pos_mm`, `quat`,
/// `vec3_bounded`) trade a little precision for a lot of bandwidth; a reader must use the
/// matching `SectionReader` method.
#[derive(Debug)]
pub struct SectionWriter<'a> {
    buf: &'a mut Vec<u8>,
    /// Where in `buf` this writer's bytes start.
    start: usize,
    /// Whether its first bytes are a pose ([`PoseState::write`](crate::pose::PoseState::write)
    /// wrote them): what makes a section predictable by default.
    posed: bool,
}

impl<'a> SectionWriter<'a> {
    /// A writer appending to `buf`.
    pub fn new(buf: &'a mut Vec<u8>) -> Self {
        SectionWriter {
            buf,
            start: 0,
            posed: false,
        }
    }

    /// A writer appending to `buf` whose length counts only what it appends.
    fn at(buf: &'a mut Vec<u8>) -> Self {
        let start = buf.len();
        SectionWriter {
            buf,
            start,
            posed: false,
        }
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Writes any serde value (bincode), for the fields a kind does not need quantized:
    /// read it back with [`SectionReader::serde`].
    pub fn serde<T: serde::Serialize + ?Sized>(&mut self, value: &T) {
        // Encoding into a Vec cannot fail for the plain data a section carries.
        let _ = bincode::serde::encode_into_std_write(value, self.buf, bincode::config::standard());
    }

    /// Whether nothing has been written. An empty section is not sent at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// One byte.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// A bool as one byte.
    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    /// A little-endian `u16`.
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// An unsigned varint.
    pub fn varint(&mut self, v: u64) {
        put_varint(self.buf, v);
    }

    /// A full-precision `f32` (4 bytes).
    pub fn f32(&mut self, v: f32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A full-precision vector (12 bytes).
    pub fn vec3(&mut self, v: Vec3) {
        self.f32(v.x);
        self.f32(v.y);
        self.f32(v.z);
    }

    /// A full-precision rotation (16 bytes).
    pub fn quat_exact(&mut self, q: Quat) {
        self.f32(q.x);
        self.f32(q.y);
        self.f32(q.z);
        self.f32(q.w);
    }

    /// A position quantized to whole millimetres (12 bytes, ±2147 km range; NaN writes 0).
    pub fn pos_mm(&mut self, p: Vec3) {
        self.buf.extend_from_slice(&pos_mm_bytes(p));
    }

    /// A rotation in "smallest three" form: the index of the largest component and the
    /// other three as 16-bit fixed point (7 bytes, error below 2e-5 per component).
    pub fn quat(&mut self, q: Quat) {
        self.buf.extend_from_slice(&quat_bytes(q));
    }

    /// A vector whose components lie in `[-max, max]`, as three 16-bit fixed-point values
    /// (6 bytes). Components outside the range are clamped.
    pub fn vec3_bounded(&mut self, v: Vec3, max: f32) {
        self.buf.extend_from_slice(&vec3_bounded_bytes(v, max));
    }

    /// A velocity whose components lie in `[-max, max]` (clamped), as three 16-bit values
    /// on a square-root scale (6 bytes): finer the slower it is. A component `v` is off by
    /// at most `sqrt(|v| * max) / 32767`: under a `max` of 64, 0.35 mm/s at 0.5 m/s and
    /// 1.4 mm/s at 8 m/s, where [`vec3_bounded`](Self::vec3_bounded) is off by up to
    /// 0.98 mm/s at any speed. What a prediction runs on, so the finer, the longer it holds.
    /// A component slower than `vec3_bounded` would carry (`max / 65534`, 0.98 mm/s under
    /// 64) is written as zero, so a resting body's jitter reads as rest.
    pub fn velocity(&mut self, v: Vec3, max: f32) {
        self.buf.extend_from_slice(&velocity_bytes(v, max));
    }

    /// Whether the section starts with a pose: a [`PoseState`](crate::pose::PoseState)
    /// written first.
    pub fn starts_with_pose(&self) -> bool {
        self.posed
    }

    /// Notes that a pose is about to be written: if nothing was written before it, the
    /// section starts with one.
    pub(crate) fn mark_pose(&mut self) {
        if self.is_empty() {
            self.posed = true;
        }
    }

    /// Bytes as they are, with no length (the reader must know how many).
    pub(crate) fn fixed<const N: usize>(&mut self, b: &[u8; N]) {
        self.buf.extend_from_slice(b);
    }

    /// Raw bytes, prefixed by their length as a varint.
    pub fn bytes(&mut self, b: &[u8]) {
        self.varint(b.len() as u64);
        self.buf.extend_from_slice(b);
    }
}

/// One entity's section of a received packet: read-only bytes and the id they are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section<'a> {
    /// The entity this section is for.
    pub net_id: NetId,
    /// What its controller wrote.
    pub payload: &'a [u8],
}

impl<'a> Section<'a> {
    /// A cursor over the payload.
    pub fn reader(&self) -> SectionReader<'a> {
        SectionReader::new(self.payload)
    }

    /// Reads the whole section with `read` and checks nothing is left over
    /// ([`SectionReader::finish`]), so a client path cannot forget to: a longer section is
    /// not one of ours.
    pub fn parse<T>(
        &self,
        read: impl FnOnce(&mut SectionReader<'a>) -> Result<T, CodecError>,
    ) -> Result<T, CodecError> {
        let mut r = self.reader();
        let value = read(&mut r)?;
        r.finish()?;
        Ok(value)
    }
}

/// A bounded cursor over a section's payload. Every read checks the bytes left first, and
/// float reads refuse NaN and infinities, so a forged section cannot poison the physics.
#[derive(Debug, Clone)]
pub struct SectionReader<'a> {
    rest: &'a [u8],
}

thread_local! {
    /// While a client pass runs: where the running client path's section starts and ends
    /// (addresses), and the furthest any reader of them got (0: none was dropped yet).
    static WATCH: std::cell::Cell<(usize, usize, usize)> = const { std::cell::Cell::new((0, 0, 0)) };
}

/// Starts watching the readers of a client pass's sections: a client path that read some
/// of its section but not to the end forgot [`SectionReader::finish`], and the frame's
/// report says so. The pass names each section with [`ReadWatch::section`] before its
/// client path runs and asks [`ReadWatch::furthest`] after; [`ReadWatch::end`] watches
/// again what was watched before (a pass this one runs inside).
pub(crate) fn watch_reads() -> ReadWatch {
    ReadWatch {
        before: WATCH.with(|w| w.replace((0, 0, 0))),
    }
}

/// The watch of one client pass ([`watch_reads`]). Not a guard (a pass's loop inside a
/// closure costs the frame more than the watch itself): the caller ends it.
#[must_use]
pub(crate) struct ReadWatch {
    before: (usize, usize, usize),
}

impl ReadWatch {
    /// Watches the readers of `section` (the payload of the client path about to run), or
    /// none.
    #[inline]
    pub(crate) fn section(&self, section: Option<&[u8]>) {
        let (start, end) = section.map_or((0, 0), |p| {
            let start = p.as_ptr() as usize;
            (start, start + p.len())
        });
        WATCH.with(|w| w.set((start, end, 0)));
    }

    /// `None` if no reader of the watched section was dropped, else the furthest offset
    /// one got to.
    #[inline]
    pub(crate) fn furthest(&self) -> Option<usize> {
        let (start, _, far) = WATCH.with(std::cell::Cell::get);
        (far != 0).then(|| far - start)
    }

    /// Stops watching, and watches again what was watched before.
    pub(crate) fn end(self) {
        WATCH.with(|w| w.set(self.before));
    }
}

impl Drop for SectionReader<'_> {
    fn drop(&mut self) {
        let at = self.rest.as_ptr() as usize;
        WATCH.with(|w| {
            let (start, end, far) = w.get();
            if start != end && (start..=end).contains(&at) && at > far {
                w.set((start, end, at));
            }
        });
    }
}

impl<'a> SectionReader<'a> {
    /// A reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        SectionReader { rest: bytes }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// Reads a serde value written by [`SectionWriter::serde`] (bincode, bounded by the
    /// bytes left). As [`f32`](Self::f32) does, it refuses NaN and infinities, in any
    /// float of the value (which is why the type must be `Serialize` too: that is how its
    /// floats are found).
    pub fn serde<T: serde::de::DeserializeOwned + serde::Serialize>(
        &mut self,
    ) -> Result<T, CodecError> {
        let config = bincode::config::standard().with_limit::<{ MAX_SECTION_LEN }>();
        match bincode::serde::decode_from_slice::<T, _>(self.rest, config) {
            // As `f32` does, a float that is not finite is refused wherever it sits.
            Ok((v, _)) if !finite::all_finite(&v) => {
                Err(CodecError::InvalidValue("non-finite float"))
            }
            Ok((v, n)) => {
                self.rest = &self.rest[n..];
                Ok(v)
            }
            Err(_) => Err(CodecError::InvalidValue("serde value in a section")),
        }
    }

    /// Fails with [`CodecError::TrailingBytes`] unless everything was read. Call it after the
    /// last read to reject sections that are longer than their kind writes (or read the
    /// section with [`Section::parse`], which does).
    pub fn finish(&self) -> Result<(), CodecError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(CodecError::TrailingBytes(self.rest.len()))
        }
    }

    /// Passes over `n` bytes without reading them (a truncated section fails as a read
    /// of them would).
    pub fn skip(&mut self, n: usize) -> Result<(), CodecError> {
        match self.rest.split_at_checked(n) {
            Some((_, tail)) => {
                self.rest = tail;
                Ok(())
            }
            None => Err(CodecError::Truncated {
                needed: n,
                remaining: self.rest.len(),
            }),
        }
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], CodecError> {
        match self.rest.split_first_chunk::<N>() {
            Some((head, tail)) => {
                self.rest = tail;
                Ok(*head)
            }
            None => Err(CodecError::Truncated {
                needed: N,
                remaining: self.rest.len(),
            }),
        }
    }

    /// `N` values of `S` bytes each: all at once when they are there (one bounds check),
    /// else one by one, so a cut fails where reading them one by one would.
    #[inline(always)]
    fn take_each<const S: usize, const N: usize>(&mut self) -> Result<[[u8; S]; N], CodecError> {
        let mut out = [[0u8; S]; N];
        match self.rest.split_at_checked(S * N) {
            Some((head, tail)) => {
                for (o, b) in out.iter_mut().zip(head.chunks_exact(S)) {
                    o.copy_from_slice(b);
                }
                self.rest = tail;
            }
            None => {
                for o in &mut out {
                    *o = self.take()?;
                }
            }
        }
        Ok(out)
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8, CodecError> {
        Ok(self.take::<1>()?[0])
    }

    /// A bool; any byte other than 0 or 1 is an error.
    pub fn bool(&mut self) -> Result<bool, CodecError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(CodecError::InvalidValue("bool out of range")),
        }
    }

    /// A little-endian `u16`.
    pub fn u16(&mut self) -> Result<u16, CodecError> {
        Ok(u16::from_le_bytes(self.take()?))
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, CodecError> {
        Ok(u32::from_le_bytes(self.take()?))
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self) -> Result<u64, CodecError> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    /// An unsigned varint (at most 10 bytes).
    pub fn varint(&mut self) -> Result<u64, CodecError> {
        let (v, n) = get_varint(self.rest, 10)?;
        self.rest = &self.rest[n..];
        Ok(v)
    }

    /// A finite `f32`.
    pub fn f32(&mut self) -> Result<f32, CodecError> {
        let v = f32::from_le_bytes(self.take()?);
        if v.is_finite() {
            Ok(v)
        } else {
            Err(CodecError::InvalidValue("non-finite float"))
        }
    }

    /// A full-precision vector.
    pub fn vec3(&mut self) -> Result<Vec3, CodecError> {
        Ok(Vec3::new(self.f32()?, self.f32()?, self.f32()?))
    }

    /// A full-precision rotation, normalised; a zero quaternion is an error.
    pub fn quat_exact(&mut self) -> Result<Quat, CodecError> {
        let q = Quat::from_xyzw(self.f32()?, self.f32()?, self.f32()?, self.f32()?);
        let len2 = q.length_squared();
        if !(len2 > 1e-6 && len2.is_finite()) {
            return Err(CodecError::InvalidValue("degenerate quaternion"));
        }
        Ok(q.normalize())
    }

    /// A position written by [`SectionWriter::pos_mm`].
    pub fn pos_mm(&mut self) -> Result<Vec3, CodecError> {
        let c = self
            .take_each::<4, 3>()?
            .map(|b| i32::from_le_bytes(b) as f32 / 1000.0);
        Ok(Vec3::from_array(c))
    }

    /// A rotation written by [`SectionWriter::quat`].
    pub fn quat(&mut self) -> Result<Quat, CodecError> {
        let largest = usize::from(self.u8()?);
        if largest > 3 {
            return Err(CodecError::InvalidValue("quaternion component index"));
        }
        let mut c = [0.0f32; 4];
        let mut sum = 0.0;
        for (i, v) in c.iter_mut().enumerate() {
            if i != largest {
                *v = f32::from(i16::from_le_bytes(self.take()?)) / QUAT_SCALE;
                sum += *v * *v;
            }
        }
        c[largest] = (1.0 - sum).max(0.0).sqrt();
        Ok(Quat::from_xyzw(c[0], c[1], c[2], c[3]).normalize())
    }

    /// A vector written by [`SectionWriter::vec3_bounded`] with the same `max`.
    pub fn vec3_bounded(&mut self, max: f32) -> Result<Vec3, CodecError> {
        let c = self
            .take_each::<2, 3>()?
            .map(|b| f32::from(i16::from_le_bytes(b)) / f32::from(i16::MAX) * max);
        Ok(Vec3::from_array(c))
    }

    /// A velocity written by [`SectionWriter::velocity`] with the same `max`.
    #[inline]
    pub fn velocity(&mut self, max: f32) -> Result<Vec3, CodecError> {
        let c = self
            .take_each::<2, 3>()?
            .map(|b| from_root_scale(i16::from_le_bytes(b), max));
        Ok(Vec3::from_array(c))
    }

    /// Bytes written by [`SectionWriter::bytes`], borrowed from the input.
    pub fn bytes(&mut self) -> Result<&'a [u8], CodecError> {
        let len = self.varint()?;
        let len = usize::try_from(len).map_err(|_| CodecError::InvalidValue("length"))?;
        if len > self.rest.len() {
            return Err(CodecError::Truncated {
                needed: len,
                remaining: self.rest.len(),
            });
        }
        let (head, tail) = self.rest.split_at(len);
        self.rest = tail;
        Ok(head)
    }
}

/// Builds a packet body: a sequence of sections.
#[derive(Debug, Default, Clone)]
pub struct PacketWriter {
    buf: Vec<u8>,
    /// Where each section is, so a packet is never parsed by the peer that wrote it.
    spans: Vec<Span>,
}

/// Where one section of a [`PacketWriter`] lies in its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    net_id: NetId,
    payload: u32,
    end: u32,
    /// Whether the section starts with a pose ([`SectionWriter::starts_with_pose`]).
    posed: bool,
}

impl PacketWriter {
    /// An empty packet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every section, keeping the allocations.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.spans.clear();
    }

    /// Appends the section `write` produces for `net_id`. An empty section is not appended;
    /// one longer than [`MAX_SECTION_LEN`] is refused. Returns the payload length written.
    pub fn section(
        &mut self,
        net_id: NetId,
        write: impl FnOnce(&mut SectionWriter<'_>),
    ) -> Result<usize, CodecError> {
        // Written in place after its id and a one-byte length, which a longer payload
        // widens afterwards. Until it is committed, the section is taken back on any way
        // out, a panic in `write` included.
        let head = self.buf.len();
        put_varint(&mut self.buf, u64::from(net_id.0));
        self.buf.push(0);
        let mut payload = self.buf.len();
        let undo = Uncommitted {
            buf: &mut self.buf,
            head,
        };
        let mut writer = SectionWriter::at(undo.buf);
        write(&mut writer);
        let posed = writer.posed;
        let len = undo.buf.len() - payload;
        if len > MAX_SECTION_LEN {
            return Err(CodecError::SectionTooLong {
                len,
                max: MAX_SECTION_LEN,
            });
        }
        if len == 0 {
            return Ok(0);
        }
        if len < 0x80 {
            undo.buf[payload - 1] = len as u8;
        } else {
            // Two bytes (a section is at most 1024): the payload moves up by one.
            let wide = [(len as u8) | 0x80, (len >> 7) as u8];
            undo.buf.splice(payload - 1..payload, wide);
            payload += 1;
        }
        std::mem::forget(undo);
        self.spans.push(Span {
            net_id,
            payload: payload as u32,
            end: self.buf.len() as u32,
            posed,
        });
        Ok(len)
    }

    /// Appends an already-encoded section (for forwarding what a peer sent).
    pub fn raw_section(&mut self, section: Section<'_>) -> Result<(), CodecError> {
        if section.payload.len() > MAX_SECTION_LEN {
            return Err(CodecError::SectionTooLong {
                len: section.payload.len(),
                max: MAX_SECTION_LEN,
            });
        }
        if !section.payload.is_empty() {
            put_varint(&mut self.buf, u64::from(section.net_id.0));
            put_varint(&mut self.buf, section.payload.len() as u64);
            let payload = self.buf.len() as u32;
            self.buf.extend_from_slice(section.payload);
            self.spans.push(Span {
                net_id: section.net_id,
                payload,
                end: self.buf.len() as u32,
                posed: false,
            });
        }
        Ok(())
    }

    /// The encoded packet body.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// How many sections it holds.
    pub fn section_count(&self) -> usize {
        self.spans.len()
    }

    /// Its sections, in the order they were written, without parsing the bytes.
    pub fn sections(&self) -> impl Iterator<Item = Section<'_>> + '_ {
        self.sections_at().map(|(_, s)| s)
    }

    /// Its sections, in the order they were written, each with whether it starts with a
    /// pose ([`SectionWriter::starts_with_pose`]; never for a section appended already
    /// encoded).
    pub fn sections_posed(&self) -> impl Iterator<Item = (Section<'_>, bool)> + '_ {
        self.sections().zip(self.spans.iter().map(|s| s.posed))
    }

    /// Where the payload of the `k`th section starts in [`as_bytes`](Self::as_bytes), and
    /// its length.
    pub(crate) fn payload_span(&self, k: usize) -> Option<(u32, u32)> {
        self.spans.get(k).map(|s| (s.payload, s.end - s.payload))
    }

    /// Its sections with the offset of each payload in [`as_bytes`](Self::as_bytes).
    pub(crate) fn sections_at(&self) -> impl Iterator<Item = (u32, Section<'_>)> + '_ {
        self.spans.iter().map(|s| {
            let section = Section {
                net_id: s.net_id,
                payload: &self.buf[s.payload as usize..s.end as usize],
            };
            (s.payload, section)
        })
    }

    /// The byte offset where each section ends, in order: whole-section boundaries for
    /// splitting the packet across datagrams without parsing it.
    pub fn section_ends(&self) -> impl Iterator<Item = usize> + '_ {
        self.spans.iter().map(|s| s.end as usize)
    }
}

/// A section being written into a packet: dropped before it is committed (by
/// `mem::forget`), it takes the section's bytes back out.
struct Uncommitted<'a> {
    buf: &'a mut Vec<u8>,
    head: usize,
}

impl Drop for Uncommitted<'_> {
    fn drop(&mut self) {
        self.buf.truncate(self.head);
    }
}

/// Walks the sections of a packet body.
///
/// Yields `Ok(section)` for each well-framed section. On a framing error it yields that
/// error once and then ends: the bytes after a broken frame cannot be located.
#[derive(Debug, Clone)]
pub struct PacketReader<'a> {
    rest: &'a [u8],
    failed: bool,
}

impl<'a> PacketReader<'a> {
    /// A reader over a packet body.
    pub fn new(bytes: &'a [u8]) -> Self {
        PacketReader {
            rest: bytes,
            failed: false,
        }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    fn next_section(&mut self) -> Result<Section<'a>, CodecError> {
        let (id, n) = get_varint_u32(self.rest)?;
        let after_id = &self.rest[n..];
        let (len, m) = get_varint_u32(after_id)?;
        let len = len as usize;
        if len > MAX_SECTION_LEN {
            return Err(CodecError::SectionTooLong {
                len,
                max: MAX_SECTION_LEN,
            });
        }
        let body = &after_id[m..];
        if len > body.len() {
            return Err(CodecError::Truncated {
                needed: len,
                remaining: body.len(),
            });
        }
        let (payload, tail) = body.split_at(len);
        self.rest = tail;
        Ok(Section {
            net_id: NetId(id),
            payload,
        })
    }
}

impl<'a> Iterator for PacketReader<'a> {
    type Item = Result<Section<'a>, CodecError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.rest.is_empty() {
            return None;
        }
        let r = self.next_section();
        if r.is_err() {
            self.failed = true;
        }
        Some(r)
    }
}

#[cfg(test)]
mod tests;
