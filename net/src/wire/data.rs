//! DATA datagrams: the fixed header (sequence, acks, clock stamps, broadcast number), the
//! reliable messages a datagram carries, and a server's state entries.

use super::{DATA_HEADER_LEN, MAX_FRAGMENT, take};
use crate::error::NetError;
use lanyard::NetId;
use lanyard::codec::put_varint;

/// The fixed fields of a DATA datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DataHeader {
    /// This datagram's sequence number.
    pub(crate) seq: u32,
    /// The newest datagram the sender received from us.
    pub(crate) ack: u32,
    /// Which of the 32 datagrams before `ack` the sender received.
    pub(crate) ack_bits: u32,
    /// The sender's broadcast number.
    pub(crate) number: u32,
    /// The sender's clock when it sent this, in milliseconds (wrapping).
    pub(crate) time: u16,
    /// The newest `time` the sender received from us...
    pub(crate) echo: u16,
    /// ...and how many milliseconds it held it before sending this ([`NO_ECHO`]: none
    /// yet). The round trip is our clock now, less `echo`, less `held`: it does not count
    /// the time the peer waited for its next send, as an ack's timing would.
    pub(crate) held: u16,
}

/// `held` when there is nothing to echo yet.
pub(crate) const NO_ECHO: u16 = u16::MAX;

impl DataHeader {
    /// Appends it.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        for v in [self.seq, self.ack, self.ack_bits, self.number] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [self.time, self.echo, self.held] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// A reliable message as it travels: a whole message, or a fragment of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fragment<'a> {
    /// Its id on the connection.
    pub(crate) id: u32,
    /// More fragments of the same message follow.
    pub(crate) more: bool,
    /// Its bytes.
    pub(crate) bytes: &'a [u8],
}

/// A decoded DATA body (tag already checked and removed): its header, its reliable messages
/// (still encoded) and its packet of sections (for [`lanyard::codec::PacketReader`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Data<'a> {
    pub(crate) header: DataHeader,
    /// `(id, encoded message)` in the order they were written.
    pub(crate) messages: Vec<Fragment<'a>>,
    pub(crate) sections: &'a [u8],
}

/// A varint of at most `max_bytes` bytes.
fn varint_within(rest: &mut &[u8], max_bytes: u32) -> Result<u64, NetError> {
    let mut v: u64 = 0;
    for i in 0..max_bytes {
        let [b] = take::<1>(rest)?;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(NetError::Malformed("varint too long".into()))
}

/// A length or a count: a varint of at most 3 bytes.
fn varint(rest: &mut &[u8]) -> Result<usize, NetError> {
    // At most 21 bits: it fits.
    varint_within(rest, 3).map(|v| v as usize)
}

/// Reads only the header of a DATA body (for the replay check before anything else).
pub(crate) fn parse_data_header(body: &[u8]) -> Result<DataHeader, NetError> {
    let mut rest = body;
    let mut field = || -> Result<u32, NetError> { Ok(u32::from_le_bytes(take::<4>(&mut rest)?)) };
    let (seq, ack, ack_bits, number) = (field()?, field()?, field()?, field()?);
    let mut short = || -> Result<u16, NetError> { Ok(u16::from_le_bytes(take::<2>(&mut rest)?)) };
    Ok(DataHeader {
        seq,
        ack,
        ack_bits,
        number,
        time: short()?,
        echo: short()?,
        held: short()?,
    })
}

/// Decodes a DATA body.
pub(crate) fn parse_data(body: &[u8]) -> Result<Data<'_>, NetError> {
    let header = parse_data_header(body)?;
    let mut rest = &body[DATA_HEADER_LEN..];
    let count = varint(&mut rest)?;
    // Each message takes at least 5 bytes, so the count cannot exceed what is there.
    if count > rest.len() / 5 {
        return Err(NetError::Malformed(
            "message count larger than the datagram".into(),
        ));
    }
    let mut messages = Vec::with_capacity(count);
    for _ in 0..count {
        let id = u32::from_le_bytes(take::<4>(&mut rest)?);
        let len_more = varint(&mut rest)?;
        let (len, more) = match len_more.checked_sub(MORE) {
            Some(len) => (len, true),
            None => (len_more, false),
        };
        if len > rest.len() || len > MAX_FRAGMENT {
            return Err(NetError::Truncated);
        }
        let (bytes, tail) = rest.split_at(len);
        messages.push(Fragment { id, more, bytes });
        rest = tail;
    }
    Ok(Data {
        header,
        messages,
        sections: rest,
    })
}

/// How a server's state entry gives an entity's section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Body<'a> {
    /// The whole section.
    Full(&'a [u8]),
    /// The whole section, which starts with a pose: the entity's sections travel by its
    /// group's [`PoseCodec`](lanyard::PoseCodec) (predicted, if its kind has no codec of
    /// its own).
    FullPosed(&'a [u8]),
    /// A delta against the section of `age` broadcasts ago, or, when `predicted`, against
    /// the kind's prediction from it.
    Delta {
        age: u32,
        predicted: bool,
        delta: &'a [u8],
    },
    /// The kind's prediction from the section of `age` broadcasts ago.
    Predicted { age: u32 },
    /// The same as the section of `age` broadcasts ago.
    Same { age: u32 },
    /// The same as the newest section the client holds, for this entity and the `run`
    /// network ids after it.
    SameAsNewest { run: u32 },
}

/// One state entry of a server's DATA body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry<'a> {
    pub(crate) net: NetId,
    pub(crate) body: Body<'a>,
    /// A client's section relayed with its time: how long (ms) before the datagram's
    /// stamp its client sent it.
    pub(crate) relayed: Option<u16>,
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    put_varint(out, u64::from(v));
}

fn get_u32(rest: &mut &[u8]) -> Result<u32, NetError> {
    let v = varint_within(rest, 5)?;
    u32::try_from(v).map_err(|_| NetError::Malformed("varint too large".into()))
}

/// Appends a state entry; `prev` is the network id of the entry before it in the same
/// datagram (entries go in rising order).
pub(crate) fn put_entry(out: &mut Vec<u8>, prev: Option<NetId>, e: &Entry<'_>) {
    put_u32(out, prev.map_or(e.net.0, |p| e.net.0.wrapping_sub(p.0)));
    // A relayed section's time first, as a code no body has (low three bits clear, the
    // rest one more than the milliseconds).
    if let Some(ms) = e.relayed {
        put_varint(out, (u64::from(ms) + 1) << 3);
    }
    // The low two bits say which body; the third marks a prediction; the rest is the age
    // (or run).
    let (code, bytes) = match e.body {
        Body::Full(b) => (0, Some(b)),
        // A prediction of broadcast 0 ago would mean nothing: its code says "posed".
        Body::FullPosed(b) => (4, Some(b)),
        Body::Predicted { age } => (4 | u64::from(age) << 3, None),
        Body::Delta {
            age,
            predicted,
            delta,
        } => (
            1 | u64::from(predicted) << 2 | u64::from(age) << 3,
            Some(delta),
        ),
        Body::Same { age } => (2 | u64::from(age) << 3, None),
        Body::SameAsNewest { run } => (3 | u64::from(run) << 3, None),
    };
    put_varint(out, code);
    if let Some(b) = bytes {
        put_varint(out, b.len() as u64);
        out.extend_from_slice(b);
    }
}

/// The bytes [`put_entry`] writes.
pub(crate) fn entry_cost(prev: Option<NetId>, e: &Entry<'_>) -> usize {
    let mut scratch = Vec::with_capacity(8);
    let payload = match e.body {
        Body::Full(b) | Body::FullPosed(b) | Body::Delta { delta: b, .. } => b.len(),
        Body::Same { .. } | Body::SameAsNewest { .. } | Body::Predicted { .. } => 0,
    };
    let head = match e.body {
        Body::Full(_) => Entry {
            body: Body::Full(&[]),
            ..*e
        },
        Body::FullPosed(_) => Entry {
            body: Body::FullPosed(&[]),
            ..*e
        },
        Body::Delta { age, predicted, .. } => Entry {
            body: Body::Delta {
                age,
                predicted,
                delta: &[],
            },
            ..*e
        },
        _ => *e,
    };
    put_entry(&mut scratch, prev, &head);
    // The length varint of an empty payload took one byte; a long one takes two.
    scratch.len() + payload + usize::from(payload >= 128)
}

/// What a server's state in one datagram begins with, when any of its entities predict:
/// the tick its sections were written at, and the network ids it speaks for. An entity in
/// that range that the datagram does not list, and whose kind predicts, is where its
/// prediction puts it; the server vouches for that unless the head is `partial`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StateHead {
    pub(crate) tick: u32,
    pub(crate) from: NetId,
    /// The last id it speaks for; `None`: every id from `from` on.
    pub(crate) to: Option<NetId>,
    /// The server held back the state of an entity whose prediction does not stand (its
    /// budget was spent, or its spawn is not acknowledged yet): a prediction in this
    /// broadcast is the client's best guess, not the server's state of it.
    pub(crate) partial: bool,
}

impl StateHead {
    /// Appends `head`: one byte when there is none (nothing predicts).
    pub(crate) fn write(head: Option<&Self>, out: &mut Vec<u8>) {
        let Some(h) = head else {
            out.push(0);
            return;
        };
        put_varint(out, ((u64::from(h.tick) + 1) << 1) | u64::from(h.partial));
        put_u32(out, h.from.0);
        let count =
            h.to.map_or(0, |t| u64::from(t.0.saturating_sub(h.from.0)) + 1);
        put_varint(out, count);
    }

    /// Reads what [`write`](Self::write) wrote from the front of `rest`.
    pub(crate) fn read(rest: &mut &[u8]) -> Result<Option<Self>, NetError> {
        let (tick, partial) = match varint_within(rest, 5)? {
            0 => return Ok(None),
            1 => return Err(NetError::Malformed("a state head with no tick".into())),
            t => (
                u32::try_from((t >> 1) - 1)
                    .map_err(|_| NetError::Malformed("tick too large".into()))?,
                t & 1 == 1,
            ),
        };
        let from = NetId(get_u32(rest)?);
        let count = varint_within(rest, 5)?;
        let to = match count {
            0 => None,
            n => Some(NetId(u32::try_from(u64::from(from.0) + n - 1).map_err(
                |_| NetError::Malformed("state range past the last id".into()),
            )?)),
        };
        Ok(Some(StateHead {
            tick,
            from,
            to,
            partial,
        }))
    }

    /// Whether it speaks for `net`.
    pub(crate) fn covers(&self, net: NetId) -> bool {
        net >= self.from && self.to.is_none_or(|t| net <= t)
    }
}

/// Reads the state entries of a server's DATA body. Yields each well-formed entry; on a
/// malformed one it yields the error once and ends.
pub(crate) struct Entries<'a> {
    rest: &'a [u8],
    prev: Option<NetId>,
    failed: bool,
}

impl<'a> Entries<'a> {
    pub(crate) fn new(state: &'a [u8]) -> Self {
        Entries {
            rest: state,
            prev: None,
            failed: false,
        }
    }

    fn next_entry(&mut self) -> Result<Entry<'a>, NetError> {
        let n = get_u32(&mut self.rest)?;
        let net = match self.prev {
            None => NetId(n),
            Some(p) if n > 0 => NetId(
                p.0.checked_add(n)
                    .ok_or_else(|| NetError::Malformed("network id overflow".into()))?,
            ),
            Some(_) => return Err(NetError::Malformed("entries out of order".into())),
        };
        let mut code = get_u32(&mut self.rest)?;
        let mut relayed = None;
        if code & 7 == 0 && code >> 3 != 0 {
            let ms = (code >> 3) - 1;
            relayed = Some(
                u16::try_from(ms)
                    .map_err(|_| NetError::Malformed("relayed too long ago".into()))?,
            );
            code = get_u32(&mut self.rest)?;
        }
        let (age, predicted) = (code >> 3, code & 4 != 0);
        let bytes = |rest: &mut &'a [u8]| -> Result<&'a [u8], NetError> {
            let len = get_u32(rest)? as usize;
            if len > rest.len() {
                return Err(NetError::Truncated);
            }
            let (b, tail) = rest.split_at(len);
            *rest = tail;
            Ok(b)
        };
        let body = match (code & 3, predicted) {
            (0, false) if age == 0 => Body::Full(bytes(&mut self.rest)?),
            (0, true) if age == 0 => Body::FullPosed(bytes(&mut self.rest)?),
            (0, true) => Body::Predicted { age },
            (1, _) => Body::Delta {
                age,
                predicted,
                delta: bytes(&mut self.rest)?,
            },
            (2, false) => Body::Same { age },
            (3, false) => Body::SameAsNewest { run: age },
            _ => return Err(NetError::Malformed("bad entry code".into())),
        };
        self.prev = Some(match body {
            Body::SameAsNewest { run } => NetId(
                net.0
                    .checked_add(run)
                    .ok_or_else(|| NetError::Malformed("network id overflow".into()))?,
            ),
            _ => net,
        });
        if relayed.is_some() && matches!(body, Body::SameAsNewest { run } if run > 0) {
            return Err(NetError::Malformed("a run with one time".into()));
        }
        Ok(Entry { net, body, relayed })
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<Entry<'a>, NetError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.rest.is_empty() {
            return None;
        }
        let e = self.next_entry();
        self.failed = e.is_err();
        Some(e)
    }
}

/// Added to a fragment's length when more fragments of its message follow: above any
/// fragment's length, so a whole message's length reads as it always did, and a fragment
/// (which is long, its varint two bytes either way) costs nothing more.
const MORE: usize = 2048;
const _: () = assert!(MAX_FRAGMENT < MORE);

/// Appends one reliable message or fragment to a DATA body under construction: its id,
/// its length (plus [`MORE`] if more of its message follows), its bytes.
pub(crate) fn put_message(out: &mut Vec<u8>, f: Fragment<'_>) {
    out.extend_from_slice(&f.id.to_le_bytes());
    let more = if f.more { MORE } else { 0 };
    put_varint(out, (f.bytes.len() + more) as u64);
    out.extend_from_slice(f.bytes);
}

/// The bytes a message or fragment of `encoded_len` bytes takes inside a DATA body (a
/// fragment with more to follow is at least 128 bytes: its varint is two bytes).
pub(crate) fn message_cost(encoded_len: usize) -> usize {
    4 + if encoded_len < 128 { 1 } else { 2 } + encoded_len
}
