//! The datagram format.
//!
//! ```text
//! datagram := "LY" version:u16 kind:u8 body
//! HELLO, WELCOME, REJECT, DISCONNECT: body is one bincode-2 message
//! DATA: seq:u32 ack:u32 ack_bits:u32 frame:u32 count:varint
//!       (id:u32 len:varint message[len]){count}  sections...
//! ```
//!
//! All integers are little-endian. `seq` numbers datagrams for acks (`ack` is the newest
//! datagram received from the peer, bit `i` of `ack_bits` says whether `ack - 1 - i` was
//! received too). `frame` numbers the sender's broadcasts: the sections of a datagram from
//! an older frame than one already applied are stale and skipped. The messages are the
//! reliable channel (ordered by `id`); the sections are the frame's entity state.
//!
//! Decoding is total: any bytes give a value or a [`NetError`], never a panic, and nothing
//! is allocated beyond what the datagram holds.

use crate::error::{DisconnectReason, NetError, RejectReason};
use lanyard::codec::put_varint;
use lanyard::pose::BodyState;
use lanyard::{ClientId, KindId, NetId, Owner};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The protocol version this build speaks. Peers with another version are refused at the
/// handshake.
pub const PROTOCOL_VERSION: u16 = 1;

/// The largest datagram payload Lanyard sends (well under a typical 1500-byte MTU).
pub const MAX_DATAGRAM: usize = 1200;

/// The largest reliable message.
pub const MAX_MESSAGE: usize = 1100;

const MAGIC: [u8; 2] = *b"LY";
/// Bytes before the body: magic, version, kind.
pub const HEADER_LEN: usize = 5;
/// Bytes of a DATA body before its messages: seq, ack, ack bits, frame.
pub const DATA_HEADER_LEN: usize = 16;

/// What a datagram carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A client asks to join.
    Hello = 1,
    /// The server accepts.
    Welcome = 2,
    /// The server refuses.
    Reject = 3,
    /// Acks, reliable messages and sections.
    Data = 4,
    /// A session ends.
    Disconnect = 5,
}

impl Kind {
    fn from_u8(b: u8) -> Result<Kind, NetError> {
        Ok(match b {
            1 => Kind::Hello,
            2 => Kind::Welcome,
            3 => Kind::Reject,
            4 => Kind::Data,
            5 => Kind::Disconnect,
            other => return Err(NetError::UnknownKind(other)),
        })
    }
}

/// A client's request to join.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The player's name.
    pub name: String,
    /// The server's password, if it has one.
    pub password: Option<String>,
    /// A random number the client picks per session, to tell a resent hello from a
    /// restarted client.
    pub nonce: u64,
}

/// The server's acceptance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Welcome {
    /// The client's id from now on.
    pub client: ClientId,
    /// The hello's nonce, echoed.
    pub nonce: u64,
    /// The server's name.
    pub server_name: String,
    /// Entities this client owns already (none for a new client).
    pub owned: Vec<NetId>,
}

/// A reliable message. Spawns, despawns, ownership, corrections and game events travel
/// this way: acknowledged, resent, delivered once and in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Msg {
    /// Server to clients: an entity exists.
    Spawn {
        /// Its network id.
        net: NetId,
        /// Its kind.
        kind: KindId,
        /// Its owner.
        owner: Owner,
        /// Its encoded spawn parameters.
        params: Vec<u8>,
        /// Where its body is now.
        state: BodyState,
    },
    /// Server to clients: an entity is gone.
    Despawn {
        /// Its network id.
        net: NetId,
    },
    /// Server to clients: an entity changed hands.
    SetOwner {
        /// Its network id.
        net: NetId,
        /// The new owner.
        owner: Owner,
    },
    /// Client to server: please spawn this entity for me; I already use it under
    /// `provisional`.
    SpawnRequest {
        /// The client's provisional id.
        provisional: NetId,
        /// The kind.
        kind: KindId,
        /// Encoded spawn parameters.
        params: Vec<u8>,
        /// Where its body is now on the client.
        state: BodyState,
    },
    /// Server to the requesting client: your spawn is `net` from now on.
    SpawnConfirmed {
        /// The client's provisional id.
        provisional: NetId,
        /// The id everyone uses.
        net: NetId,
    },
    /// Server to the requesting client: that spawn is not allowed; remove it.
    SpawnRefused {
        /// The client's provisional id.
        provisional: NetId,
    },
    /// Client to server: I despawned my entity.
    DespawnRequest {
        /// Its network id (provisional or confirmed).
        net: NetId,
    },
    /// Server to an owner: the server's view of your entity, after it refused your section.
    Correction {
        /// The entity.
        net: NetId,
        /// A section as the entity's server path writes it.
        section: Vec<u8>,
    },
    /// A game event (an explosion, a chat line), as bytes the game encodes.
    Event {
        /// The payload.
        bytes: Vec<u8>,
    },
}

fn config() -> bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Varint,
    bincode::config::Limit<MAX_DATAGRAM>,
> {
    bincode::config::standard().with_limit::<MAX_DATAGRAM>()
}

/// Encodes a control or reliable message.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, NetError> {
    bincode::serde::encode_to_vec(value, config()).map_err(|e| NetError::Malformed(e.to_string()))
}

/// Decodes a control or reliable message; trailing bytes are an error.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, NetError> {
    match bincode::serde::decode_from_slice::<T, _>(bytes, config()) {
        Ok((v, n)) if n == bytes.len() => Ok(v),
        Ok(_) => Err(NetError::Malformed("trailing bytes".into())),
        Err(e) => Err(NetError::Malformed(e.to_string())),
    }
}

/// Starts a datagram of `kind`.
pub fn begin(kind: Kind, version: u16) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAX_DATAGRAM);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.push(kind as u8);
    out
}

/// A control datagram: the header and one encoded message.
pub fn control<T: Serialize>(kind: Kind, version: u16, body: &T) -> Result<Vec<u8>, NetError> {
    let mut out = begin(kind, version);
    out.extend_from_slice(&encode(body)?);
    Ok(out)
}

/// Splits a datagram into its version, kind and body. Checks only the header.
pub fn parse_header(bytes: &[u8]) -> Result<(u16, Kind, &[u8]), NetError> {
    if bytes.len() < HEADER_LEN {
        return Err(NetError::Truncated);
    }
    if bytes[..2] != MAGIC {
        return Err(NetError::BadMagic);
    }
    let version = u16::from_le_bytes([bytes[2], bytes[3]]);
    let kind = Kind::from_u8(bytes[4])?;
    Ok((version, kind, &bytes[HEADER_LEN..]))
}

/// The fixed fields of a DATA datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataHeader {
    /// This datagram's sequence number.
    pub seq: u32,
    /// The newest datagram the sender received from us.
    pub ack: u32,
    /// Which of the 32 datagrams before `ack` the sender received.
    pub ack_bits: u32,
    /// The sender's broadcast number.
    pub frame: u32,
}

impl DataHeader {
    /// Appends it.
    pub fn write(&self, out: &mut Vec<u8>) {
        for v in [self.seq, self.ack, self.ack_bits, self.frame] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// A decoded DATA body: its header, its reliable messages (still encoded) and its packet of
/// sections (for [`lanyard::codec::PacketReader`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data<'a> {
    /// The fixed fields.
    pub header: DataHeader,
    /// `(id, encoded message)` in the order they were written.
    pub messages: Vec<(u32, &'a [u8])>,
    /// The sections.
    pub sections: &'a [u8],
}

fn take<const N: usize>(rest: &mut &[u8]) -> Result<[u8; N], NetError> {
    let (head, tail) = rest.split_first_chunk::<N>().ok_or(NetError::Truncated)?;
    *rest = tail;
    Ok(*head)
}

fn varint(rest: &mut &[u8]) -> Result<usize, NetError> {
    let mut v: usize = 0;
    for i in 0..3 {
        let [b] = take::<1>(rest)?;
        v |= usize::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(NetError::Malformed("varint too long".into()))
}

/// Decodes a DATA body.
pub fn parse_data(body: &[u8]) -> Result<Data<'_>, NetError> {
    let mut rest = body;
    let mut field = || -> Result<u32, NetError> { Ok(u32::from_le_bytes(take::<4>(&mut rest)?)) };
    let header = DataHeader {
        seq: field()?,
        ack: field()?,
        ack_bits: field()?,
        frame: field()?,
    };
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
        let len = varint(&mut rest)?;
        if len > rest.len() || len > MAX_MESSAGE {
            return Err(NetError::Truncated);
        }
        let (m, tail) = rest.split_at(len);
        messages.push((id, m));
        rest = tail;
    }
    Ok(Data {
        header,
        messages,
        sections: rest,
    })
}

/// Appends one reliable message to a DATA body under construction.
pub fn put_message(out: &mut Vec<u8>, id: u32, encoded: &[u8]) {
    out.extend_from_slice(&id.to_le_bytes());
    put_varint(out, encoded.len() as u64);
    out.extend_from_slice(encoded);
}

/// The bytes a message takes inside a DATA body.
pub fn message_cost(encoded_len: usize) -> usize {
    4 + if encoded_len < 128 { 1 } else { 2 } + encoded_len
}

/// A DISCONNECT datagram's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bye {
    /// Why.
    pub reason: DisconnectReason,
}

/// A REJECT datagram's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// Why.
    pub reason: RejectReason,
    /// The hello's nonce, echoed.
    pub nonce: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_roundtrip() {
        let mut out = begin(Kind::Data, PROTOCOL_VERSION);
        DataHeader {
            seq: 7,
            ack: 5,
            ack_bits: 0b101,
            frame: 3,
        }
        .write(&mut out);
        let m = encode(&Msg::Despawn { net: NetId(9) }).unwrap();
        put_varint(&mut out, 1);
        put_message(&mut out, 42, &m);
        out.extend_from_slice(&[1, 2, 9, 9]);
        let (v, k, body) = parse_header(&out).unwrap();
        assert_eq!((v, k), (PROTOCOL_VERSION, Kind::Data));
        let d = parse_data(body).unwrap();
        assert_eq!(d.header.seq, 7);
        assert_eq!(d.messages.len(), 1);
        assert_eq!(d.messages[0].0, 42);
        assert_eq!(
            decode::<Msg>(d.messages[0].1).unwrap(),
            Msg::Despawn { net: NetId(9) }
        );
        assert_eq!(d.sections, &[1, 2, 9, 9]);
        assert_eq!(message_cost(m.len()), 4 + 1 + m.len());
    }

    #[test]
    fn a_huge_message_count_is_refused_before_allocating() {
        let mut body = vec![0u8; DATA_HEADER_LEN];
        body.extend_from_slice(&[0xff, 0xff, 0x7f]);
        assert!(matches!(parse_data(&body), Err(NetError::Malformed(_))));
    }
}
