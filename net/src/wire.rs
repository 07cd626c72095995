//! The datagram format, version 3.
//!
//! ```text
//! datagram  := "LY" version:u16 kind:u8 body
//! HELLO     (client -> server): nonce:u64 client_pub:[32] zeros to HELLO_LEN bytes in all
//! CHALLENGE (server -> client): nonce:u64 cookie:[16] server_pub:[32]       (< HELLO_LEN)
//! CONNECT   (client -> server): nonce:u64 client_pub:[32] cookie:[16] request, tag:[16]
//! WELCOME   (server -> client): bincode Welcome, tag:[16]
//! REJECT    (server -> client): bincode Refusal, tag:[16] once the cookie came back
//! DATA      (both ways):        seq:u32 ack:u32 ack_bits:u32 frame:u32 count:varint
//!                               (id:u32 len:varint message[len]){count} state, tag:[16]
//! BYE       (both ways):        bincode Bye, tag:[16]
//! ```
//!
//! All integers are little-endian. After the handshake every datagram ends in a tag: a
//! keyed BLAKE3 hash, under the session key both sides derived from an X25519 key
//! agreement and the direction it travels, of the datagram's first 21 bytes and the BLAKE3
//! digest of the rest. A datagram whose tag is wrong is dropped before any field in it is used, so corruption on the wire and forgery
//! by a third host change nothing; `seq` then refuses replays (a window of 32).
//!
//! The handshake costs the server nothing until the client proves it receives at its
//! address: the challenge carries a stateless cookie (a keyed hash of the address, the
//! hello's values and a time epoch), and it is smaller than the padded hello it answers.
//! The CONNECT is tagged with the session key the client derived, so the server admits
//! nobody whose key differs from its own (a corrupted challenge) and reads no request that
//! changed on the way. The password never travels: the request carries a keyed hash of
//! the session key under a key derived from the password.
//!
//! `seq` numbers datagrams for acks (`ack` is the newest datagram received from the peer,
//! bit `i` of `ack_bits` says whether `ack - 1 - i` was received too). `frame` numbers the
//! sender's broadcasts: the sections of a datagram from an older frame than one already
//! applied are stale and skipped. The messages are the reliable channel (ordered by `id`);
//! the state is the frame's entity state.
//!
//! A client's state is a packet of whole sections ([`lanyard::codec::PacketReader`]). The
//! server's is a run of *entries* in rising network-id order, each self-contained in its
//! datagram:
//!
//! ```text
//! entry := net:varint code:varint [len:varint bytes[len]]
//!   net   the first entry's network id, then the gap from the entry before
//!   code  mode | age << 2, where age counts frames back from the datagram's frame to the
//!         baseline: a section the client acknowledged
//!   mode 0: the whole section (age 0)
//!   mode 1: a delta against the baseline, by the kind's DeltaCodec
//!   mode 2: the same bytes as the baseline (no bytes)
//!   mode 3: the same bytes as the newest section the client holds (no bytes), for this
//!           entity and the next `age` network ids after it (a run of resting entities);
//!           only sent when nothing was sent since the baseline
//! ```
//!
//! Decoding is total: any bytes give a value or a [`NetError`], never a panic, and nothing
//! is allocated beyond what the datagram holds.

use crate::crypto::{COOKIE_LEN, TAG_LEN};
use crate::error::{DisconnectReason, NetError, RejectReason};
use lanyard::codec::put_varint;
use lanyard::pose::BodyState;
use lanyard::{ClientId, KindId, NetId, Owner};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use crate::config::PROTOCOL_VERSION;

/// The largest datagram payload Lanyard sends (well under a typical 1500-byte MTU).
pub const MAX_DATAGRAM: usize = 1200;

/// The largest reliable message.
pub const MAX_MESSAGE: usize = 1100;

const MAGIC: [u8; 2] = *b"LY";
/// Bytes before the body: magic, version, kind.
pub(crate) const HEADER_LEN: usize = 5;
/// Bytes of a DATA body before its messages: seq, ack, ack bits, frame.
pub(crate) const DATA_HEADER_LEN: usize = 22;
/// The size of a hello, padding included: larger than anything the server answers to an
/// address that has not proved it receives there.
pub const HELLO_LEN: usize = 256;
// The tag's split is the end of a DATA datagram's sequence fields.
const _: () = assert!(crate::crypto::SPLIT == HEADER_LEN + DATA_HEADER_LEN);

/// Room for sections in one DATA datagram after its header, message count and tag.
pub(crate) const DATA_ROOM: usize = MAX_DATAGRAM - HEADER_LEN - DATA_HEADER_LEN - 1 - TAG_LEN;

/// What a datagram carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    Hello = 1,
    Challenge = 2,
    Connect = 3,
    Welcome = 4,
    Reject = 5,
    Data = 6,
    Bye = 7,
}

impl Kind {
    fn from_u8(b: u8) -> Result<Kind, NetError> {
        Ok(match b {
            1 => Kind::Hello,
            2 => Kind::Challenge,
            3 => Kind::Connect,
            4 => Kind::Welcome,
            5 => Kind::Reject,
            6 => Kind::Data,
            7 => Kind::Bye,
            other => return Err(NetError::UnknownKind(other)),
        })
    }
}

/// A client's first datagram: who it is for this handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hello {
    pub(crate) nonce: u64,
    pub(crate) client_pub: [u8; 32],
}

/// The server's stateless answer to a hello.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) nonce: u64,
    pub(crate) cookie: [u8; COOKIE_LEN],
    pub(crate) server_pub: [u8; 32],
}

/// What a client asks for once it has the challenge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Request {
    /// The player's name.
    pub(crate) name: String,
    /// The keyed hash that proves the password, if the client has one.
    pub(crate) proof: Option<[u8; 32]>,
    /// Whether the client only watches (it owns nothing and spawns nothing).
    pub(crate) spectator: bool,
    /// A session the client asks to resume instead of starting a new one.
    pub(crate) resume: Option<Resume>,
    /// The names of the kinds the client's world registers, sorted: the server refuses a
    /// client whose kinds differ from its own, naming the first that differs.
    pub(crate) kinds: Vec<String>,
}

/// A claim to an earlier session: its client id, and a keyed hash of this handshake's
/// session key under the earlier session's token (the token itself never travels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Resume {
    pub(crate) client: ClientId,
    pub(crate) proof: [u8; 32],
}

/// The client's answer to the challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Connect {
    pub(crate) hello: Hello,
    pub(crate) cookie: [u8; COOKIE_LEN],
    pub(crate) request: Request,
}

/// The server's acceptance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Welcome {
    /// The client's id from now on.
    pub(crate) client: ClientId,
    /// The server's name.
    pub(crate) server_name: String,
    /// How long (ms) the server keeps the session for a resume after the client falls
    /// silent; 0 if it keeps none.
    pub(crate) grace_ms: u32,
    /// Whether this welcome resumes an earlier session (the client keeps its id).
    pub(crate) resumed: bool,
}

/// A reliable message. Spawns, despawns, ownership, corrections and game events travel
/// this way: acknowledged, resent, delivered once and in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum Msg {
    /// Server to clients: an entity exists.
    Spawn {
        net: NetId,
        kind: KindId,
        owner: Owner,
        params: Vec<u8>,
        /// Where its body is now.
        state: Placed,
    },
    /// Server to clients: an entity is gone.
    Despawn { net: NetId },
    /// Server to clients: an entity changed hands.
    SetOwner { net: NetId, owner: Owner },
    /// Client to server: please spawn this entity for me; I already use it under
    /// `provisional`.
    SpawnRequest {
        provisional: NetId,
        kind: KindId,
        params: Vec<u8>,
        /// Where its body is now on the client.
        state: BodyState,
    },
    /// Server to the requesting client: your spawn is `net` from now on.
    SpawnConfirmed { provisional: NetId, net: NetId },
    /// Server to the requesting client: that spawn is not allowed; remove it.
    SpawnRefused { provisional: NetId },
    /// Client to server: I despawned my entity.
    DespawnRequest { net: NetId },
    /// Server to an owner: the server's own state of your entity's body, after it refused
    /// your section. Go back to it.
    Correction { net: NetId, state: BodyState },
    /// A game event (an explosion, a chat line), as bytes the game encodes.
    Event { bytes: Vec<u8> },
    /// Client to server: I lack the baseline your last state of this entity named; send it
    /// whole next time. (Never expected: a safety net, counted as `missing_baselines`.)
    Resync { net: NetId },
    /// Server to a client that resumed its session: the spawns since the resume named
    /// every entity you need; drop the others you have (they went while you were away).
    WorldSent,
    /// Client to server: send me the whole world again (I rebuilt mine); answered as a
    /// resume is, at most once every few seconds.
    ResendWorld,
}

/// A body's state in a spawn message: exact, with the velocities left out when the body
/// rests (most of a world a client joins does), 29 bytes instead of 53.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Placed {
    pos: [f32; 3],
    rot: [f32; 4],
    /// Linear and angular velocity, unless both are zero.
    vel: Option<([f32; 3], [f32; 3])>,
}

impl From<BodyState> for Placed {
    fn from(s: BodyState) -> Self {
        let moving = s.linvel != [0.0; 3] || s.angvel != [0.0; 3];
        Placed {
            pos: s.pos,
            rot: s.rot,
            vel: moving.then_some((s.linvel, s.angvel)),
        }
    }
}

impl From<Placed> for BodyState {
    fn from(p: Placed) -> Self {
        let (linvel, angvel) = p.vel.unwrap_or_default();
        BodyState {
            pos: p.pos,
            rot: p.rot,
            linvel,
            angvel,
        }
    }
}

/// A BYE datagram's body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Bye {
    pub(crate) reason: DisconnectReason,
}

/// A REJECT datagram's body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Refusal {
    pub(crate) reason: RejectReason,
    /// The hello's nonce, echoed.
    pub(crate) nonce: u64,
}

fn config() -> bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Varint,
    bincode::config::Limit<MAX_DATAGRAM>,
> {
    bincode::config::standard().with_limit::<MAX_DATAGRAM>()
}

/// Encodes a control or reliable message.
pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, NetError> {
    bincode::serde::encode_to_vec(value, config()).map_err(|e| NetError::Malformed(e.to_string()))
}

/// Decodes a control or reliable message; trailing bytes are an error.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, NetError> {
    match bincode::serde::decode_from_slice::<T, _>(bytes, config()) {
        Ok((v, n)) if n == bytes.len() => Ok(v),
        Ok(_) => Err(NetError::Malformed("trailing bytes".into())),
        Err(e) => Err(NetError::Malformed(e.to_string())),
    }
}

/// Starts a datagram of `kind`.
pub(crate) fn begin(kind: Kind, version: u16) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAX_DATAGRAM);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.push(kind as u8);
    out
}

/// A control datagram: the header and one encoded message (untagged).
pub(crate) fn control<T: Serialize>(
    kind: Kind,
    version: u16,
    body: &T,
) -> Result<Vec<u8>, NetError> {
    let mut out = begin(kind, version);
    out.extend_from_slice(&encode(body)?);
    Ok(out)
}

/// Splits a datagram into its version, kind and body. Checks only the header.
pub(crate) fn parse_header(bytes: &[u8]) -> Result<(u16, Kind, &[u8]), NetError> {
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

fn take<const N: usize>(rest: &mut &[u8]) -> Result<[u8; N], NetError> {
    let (head, tail) = rest.split_first_chunk::<N>().ok_or(NetError::Truncated)?;
    *rest = tail;
    Ok(*head)
}

/// A hello datagram, padded to [`HELLO_LEN`].
pub(crate) fn hello(version: u16, h: &Hello) -> Vec<u8> {
    let mut out = begin(Kind::Hello, version);
    out.extend_from_slice(&h.nonce.to_le_bytes());
    out.extend_from_slice(&h.client_pub);
    out.resize(HELLO_LEN, 0);
    out
}

fn read_hello(rest: &mut &[u8]) -> Result<Hello, NetError> {
    Ok(Hello {
        nonce: u64::from_le_bytes(take::<8>(rest)?),
        client_pub: take::<32>(rest)?,
    })
}

/// Reads a hello body; one shorter than the padded size is refused (it would let a small
/// request draw a larger answer).
pub(crate) fn parse_hello(body: &[u8]) -> Result<Hello, NetError> {
    if body.len() + HEADER_LEN < HELLO_LEN {
        return Err(NetError::Truncated);
    }
    read_hello(&mut &body[..])
}

/// A challenge datagram.
pub(crate) fn challenge(version: u16, c: &Challenge) -> Vec<u8> {
    let mut out = begin(Kind::Challenge, version);
    out.extend_from_slice(&c.nonce.to_le_bytes());
    out.extend_from_slice(&c.cookie);
    out.extend_from_slice(&c.server_pub);
    out
}

/// Reads a challenge body.
pub(crate) fn parse_challenge(body: &[u8]) -> Result<Challenge, NetError> {
    let mut rest = body;
    let c = Challenge {
        nonce: u64::from_le_bytes(take::<8>(&mut rest)?),
        cookie: take::<COOKIE_LEN>(&mut rest)?,
        server_pub: take::<32>(&mut rest)?,
    };
    if !rest.is_empty() {
        return Err(NetError::Malformed("trailing bytes".into()));
    }
    Ok(c)
}

/// A connect datagram, untagged (the caller seals it with the session key).
pub(crate) fn connect(version: u16, c: &Connect) -> Result<Vec<u8>, NetError> {
    let mut out = begin(Kind::Connect, version);
    out.extend_from_slice(&c.hello.nonce.to_le_bytes());
    out.extend_from_slice(&c.hello.client_pub);
    out.extend_from_slice(&c.cookie);
    out.extend_from_slice(&encode(&c.request)?);
    Ok(out)
}

/// Reads the head of a connect body (its tag already removed): the hello's values, the
/// cookie, and the still-encoded request, which is decoded only once the tag checked out.
pub(crate) fn parse_connect_head(
    body: &[u8],
) -> Result<(Hello, [u8; COOKIE_LEN], &[u8]), NetError> {
    let mut rest = body;
    let hello = read_hello(&mut rest)?;
    let cookie = take::<COOKIE_LEN>(&mut rest)?;
    Ok((hello, cookie, rest))
}

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
    pub(crate) frame: u32,
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
        for v in [self.seq, self.ack, self.ack_bits, self.frame] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [self.time, self.echo, self.held] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// A decoded DATA body (tag already checked and removed): its header, its reliable messages
/// (still encoded) and its packet of sections (for [`lanyard::codec::PacketReader`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Data<'a> {
    pub(crate) header: DataHeader,
    /// `(id, encoded message)` in the order they were written.
    pub(crate) messages: Vec<(u32, &'a [u8])>,
    pub(crate) sections: &'a [u8],
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

/// Reads only the header of a DATA body (for the replay check before anything else).
pub(crate) fn parse_data_header(body: &[u8]) -> Result<DataHeader, NetError> {
    let mut rest = body;
    let mut field = || -> Result<u32, NetError> { Ok(u32::from_le_bytes(take::<4>(&mut rest)?)) };
    let (seq, ack, ack_bits, frame) = (field()?, field()?, field()?, field()?);
    let mut short = || -> Result<u16, NetError> { Ok(u16::from_le_bytes(take::<2>(&mut rest)?)) };
    Ok(DataHeader {
        seq,
        ack,
        ack_bits,
        frame,
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

/// How a server's state entry gives an entity's section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Body<'a> {
    /// The whole section.
    Full(&'a [u8]),
    /// A delta against the section of `age` frames ago.
    Delta { age: u32, delta: &'a [u8] },
    /// The same as the section of `age` frames ago.
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
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    put_varint(out, u64::from(v));
}

fn get_u32(rest: &mut &[u8]) -> Result<u32, NetError> {
    let mut v: u64 = 0;
    for i in 0..5 {
        let [b] = take::<1>(rest)?;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return u32::try_from(v).map_err(|_| NetError::Malformed("varint too large".into()));
        }
    }
    Err(NetError::Malformed("varint too long".into()))
}

/// Appends a state entry; `prev` is the network id of the entry before it in the same
/// datagram (entries go in rising order).
pub(crate) fn put_entry(out: &mut Vec<u8>, prev: Option<NetId>, e: &Entry<'_>) {
    put_u32(out, prev.map_or(e.net.0, |p| e.net.0.wrapping_sub(p.0)));
    let (code, bytes) = match e.body {
        Body::Full(b) => (0, Some(b)),
        Body::Delta { age, delta } => (1 | u64::from(age) << 2, Some(delta)),
        Body::Same { age } => (2 | u64::from(age) << 2, None),
        Body::SameAsNewest { run } => (3 | u64::from(run) << 2, None),
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
        Body::Full(b) | Body::Delta { delta: b, .. } => b.len(),
        Body::Same { .. } | Body::SameAsNewest { .. } => 0,
    };
    let head = match e.body {
        Body::Full(_) => Entry {
            net: e.net,
            body: Body::Full(&[]),
        },
        Body::Delta { age, .. } => Entry {
            net: e.net,
            body: Body::Delta { age, delta: &[] },
        },
        _ => *e,
    };
    put_entry(&mut scratch, prev, &head);
    // The length varint of an empty payload took one byte; a long one takes two.
    scratch.len() + payload + usize::from(payload >= 128)
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
        let code = get_u32(&mut self.rest)?;
        let age = code >> 2;
        let bytes = |rest: &mut &'a [u8]| -> Result<&'a [u8], NetError> {
            let len = get_u32(rest)? as usize;
            if len > rest.len() {
                return Err(NetError::Truncated);
            }
            let (b, tail) = rest.split_at(len);
            *rest = tail;
            Ok(b)
        };
        let body = match code & 3 {
            0 if age == 0 => Body::Full(bytes(&mut self.rest)?),
            1 => Body::Delta {
                age,
                delta: bytes(&mut self.rest)?,
            },
            2 => Body::Same { age },
            3 => Body::SameAsNewest { run: age },
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
        Ok(Entry { net, body })
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

/// Appends one reliable message to a DATA body under construction.
pub(crate) fn put_message(out: &mut Vec<u8>, id: u32, encoded: &[u8]) {
    out.extend_from_slice(&id.to_le_bytes());
    put_varint(out, encoded.len() as u64);
    out.extend_from_slice(encoded);
}

/// The bytes a message takes inside a DATA body.
pub(crate) fn message_cost(encoded_len: usize) -> usize {
    4 + if encoded_len < 128 { 1 } else { 2 } + encoded_len
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
            time: 1000,
            echo: 900,
            held: 12,
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
    fn state_entries_roundtrip_and_garbage_ends_the_walk() {
        let entries = [
            Entry {
                net: NetId(5),
                body: Body::Full(&[1, 2, 3]),
            },
            Entry {
                net: NetId(6),
                body: Body::Delta {
                    age: 300,
                    delta: &[7; 200],
                },
            },
            Entry {
                net: NetId(90),
                body: Body::Same { age: 2 },
            },
            Entry {
                net: NetId(91),
                body: Body::SameAsNewest { run: 40 },
            },
            Entry {
                net: NetId(200),
                body: Body::SameAsNewest { run: 0 },
            },
        ];
        let mut out = Vec::new();
        let mut prev = None;
        for e in &entries {
            let before = out.len();
            put_entry(&mut out, prev, e);
            assert_eq!(out.len() - before, entry_cost(prev, e));
            prev = Some(match e.body {
                Body::SameAsNewest { run } => NetId(e.net.0 + run),
                _ => e.net,
            });
        }
        let back: Vec<_> = Entries::new(&out).map(Result::unwrap).collect();
        assert_eq!(back, entries);
        for cut in 0..out.len() {
            for e in Entries::new(&out[..cut]) {
                let _ = e;
            }
        }
        let bad = [1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        assert!(Entries::new(&bad).any(|e| e.is_err()));
    }

    proptest::proptest! {
        #[test]
        fn any_state_bytes_walk_to_entries_or_one_error(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
        ) {
            let mut errors = 0;
            let mut last = None;
            for e in Entries::new(&bytes) {
                match e {
                    Ok(e) => {
                        // Network ids rise strictly within a datagram.
                        proptest::prop_assert!(last.is_none_or(|l: NetId| e.net > l));
                        last = Some(match e.body {
                            Body::SameAsNewest { run } => NetId(e.net.0 + run),
                            _ => e.net,
                        });
                    }
                    Err(_) => errors += 1,
                }
            }
            proptest::prop_assert!(errors <= 1);
        }
    }

    #[test]
    fn a_huge_message_count_is_refused_before_allocating() {
        let mut body = vec![0u8; DATA_HEADER_LEN];
        body.extend_from_slice(&[0xff, 0xff, 0x7f]);
        assert!(matches!(parse_data(&body), Err(NetError::Malformed(_))));
    }

    #[test]
    fn the_challenge_is_smaller_than_the_hello_and_a_short_hello_is_refused() {
        let h = Hello {
            nonce: 3,
            client_pub: [9; 32],
        };
        let d = hello(PROTOCOL_VERSION, &h);
        assert_eq!(d.len(), HELLO_LEN);
        assert_eq!(parse_hello(&d[HEADER_LEN..]).unwrap(), h);
        assert!(parse_hello(&d[HEADER_LEN..HELLO_LEN - 1]).is_err());
        let c = Challenge {
            nonce: 3,
            cookie: [1; COOKIE_LEN],
            server_pub: [2; 32],
        };
        let cd = challenge(PROTOCOL_VERSION, &c);
        assert!(cd.len() < HELLO_LEN);
        assert_eq!(parse_challenge(&cd[HEADER_LEN..]).unwrap(), c);
        let conn = Connect {
            hello: h,
            cookie: [1; COOKIE_LEN],
            request: Request {
                name: "ann".into(),
                proof: Some([5; 32]),
                spectator: false,
                resume: Some(Resume {
                    client: ClientId(3),
                    proof: [6; 32],
                }),
                kinds: vec!["demo.crate".into(), "player".into()],
            },
        };
        let d = connect(PROTOCOL_VERSION, &conn).unwrap();
        let (h2, cookie, request) = parse_connect_head(&d[HEADER_LEN..]).unwrap();
        assert_eq!((h2, cookie), (h, conn.cookie));
        assert_eq!(decode::<Request>(request).unwrap(), conn.request);
    }
}
