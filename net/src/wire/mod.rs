//! The datagram format (its version is [`PROTOCOL_VERSION`]): the header and the control
//! messages here, and one file per message family: [`handshake`], [`data`], [`message`].
//!
//! ```text
//! datagram  := "LY" version:u16 kind:u8 body
//! HELLO     (client -> server): nonce:u64 client_pub:[32] zeros to HELLO_LEN bytes in all
//!                               (the nonce right after the header in every version)
//! CHALLENGE (server -> client): nonce:u64 cookie:[16] server_pub:[32]       (< HELLO_LEN)
//! CONNECT   (client -> server): nonce:u64 client_pub:[32] cookie:[16] | request,
//!                               siv:[8] tag:[16]
//! WELCOME   (server -> client): | bincode Welcome, siv:[8] tag:[16]
//! REJECT    (server -> client): bincode RejectBody (with the hello's nonce); once the
//!                               cookie came back: | bincode RejectBody, siv:[8] tag:[16]
//! DATA      (both ways):        seq:u32 | ack:u32 ack_bits:u32 broadcast:u32
//!                               time:u16 echo:u16 held:u16 count:varint
//!                               (id:u32 len:varint message[len]){count} state, tag:[16]
//! BYE       (both ways):        | bincode Bye, siv:[8] tag:[16]
//! ```
//!
//! All integers are little-endian. After the handshake every datagram is sealed with
//! ChaCha20-Poly1305 (`crypto::Cipher`) under a key for its direction, both derived from
//! the session key of an X25519 key agreement. What stands before `|` travels in the
//! clear and is authenticated; everything after it is encrypted. A DATA datagram's nonce
//! is its sequence number (extended to 64 bits across wraps); a control datagram's is a
//! keyed hash of its contents (`siv`), so a stateless server that answers twice answers
//! alike. A datagram that does not open is dropped before any field in it is used, so
//! corruption on the wire and forgery by a third host change nothing, and nobody else on
//! the LAN reads names, chat or state; `seq` then refuses replays (a window of 32).
//!
//! The handshake costs the server nothing until the client proves it receives at its
//! address: the challenge carries a stateless cookie (a keyed hash of the address, the
//! hello's values and a time epoch), and it is smaller than the padded hello it answers.
//! The CONNECT is sealed with the session key the client derived, so the server admits
//! nobody whose key differs from its own (a corrupted challenge) and reads no request that
//! changed on the way. The password never travels: the request carries a keyed hash of
//! the session key under a key derived from the password.
//!
//! `seq` numbers datagrams for acks (`ack` is the newest datagram received from the peer,
//! bit `i` of `ack_bits` says whether `ack - 1 - i` was received too). `broadcast` numbers
//! the sender's broadcasts: the sections of a datagram from an older broadcast than one already
//! applied are stale and skipped. The messages are the reliable channel (ordered by `id`);
//! the state is the broadcast's entity state.
//!
//! A client's state is a packet of whole sections ([`lanyard::codec::PacketReader`]). The
//! server's is a run of *entries* in rising network-id order, each self-contained in its
//! datagram:
//!
//! ```text
//! entry := net:varint code:varint [len:varint bytes[len]]
//!   net   the first entry's network id, then the gap from the entry before
//!   code  mode | age << 2, where age counts broadcasts back from the datagram's
//!         broadcast to the baseline: a section the client acknowledged
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

use crate::crypto::TAG_LEN;
use crate::error::{DisconnectReason, NetError, RejectReason};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

mod data;
mod handshake;
mod message;

pub use crate::config::PROTOCOL_VERSION;
pub(crate) use data::*;
pub(crate) use handshake::*;
pub(crate) use message::*;

/// The largest datagram payload Lanyard sends (well under a typical 1500-byte MTU).
pub const MAX_DATAGRAM: usize = 1200;

/// The largest reliable message, encoded: 256 KiB. One larger is refused when it is sent
/// ([`NetError::MessageTooLarge`], naming its size and this cap) and dropped if a peer
/// sends it anyway.
pub const MAX_MESSAGE: usize = 256 * 1024;

/// The largest piece of a reliable message in one datagram: a message larger than this
/// travels as fragments of this size, put together again at the peer.
pub const MAX_FRAGMENT: usize = 1100;

const MAGIC: [u8; 2] = *b"LY";
/// Bytes before the body: magic, version, kind.
pub(crate) const HEADER_LEN: usize = 5;
/// Bytes of a DATA body before its messages: seq, ack, ack bits, broadcast.
pub(crate) const DATA_HEADER_LEN: usize = 22;
/// The size of a hello, padding included: larger than anything the server answers to an
/// address that has not proved it receives there.
pub const HELLO_LEN: usize = 256;
/// Bytes of a connect body before its request: the hello's nonce and public key, and the
/// cookie.
pub(crate) const CONNECT_HEAD_LEN: usize = 8 + 32 + crate::crypto::COOKIE_LEN;

/// Room for sections in one DATA datagram after its header, message count and tag.
pub(crate) const DATA_ROOM: usize = MAX_DATAGRAM - HEADER_LEN - DATA_HEADER_LEN - 1 - TAG_LEN;

/// What a datagram carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum DatagramKind {
    Hello = 1,
    Challenge = 2,
    Connect = 3,
    Welcome = 4,
    Reject = 5,
    Data = 6,
    Bye = 7,
}

impl DatagramKind {
    fn from_u8(b: u8) -> Result<DatagramKind, NetError> {
        Ok(match b {
            1 => DatagramKind::Hello,
            2 => DatagramKind::Challenge,
            3 => DatagramKind::Connect,
            4 => DatagramKind::Welcome,
            5 => DatagramKind::Reject,
            6 => DatagramKind::Data,
            7 => DatagramKind::Bye,
            other => return Err(NetError::UnknownKind(other)),
        })
    }
}

/// A BYE datagram's body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Bye {
    pub(crate) reason: DisconnectReason,
}

/// A REJECT datagram's body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RejectBody {
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

/// The configuration of reliable messages: the control one's, reading up to
/// [`MAX_MESSAGE`] (bincode limits decoding only).
fn message_config() -> bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Varint,
    bincode::config::Limit<MAX_MESSAGE>,
> {
    bincode::config::standard().with_limit::<MAX_MESSAGE>()
}

/// Encodes a control message (at most a datagram).
pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, NetError> {
    bincode::serde::encode_to_vec(value, config()).map_err(|e| NetError::Malformed(e.to_string()))
}

/// Decodes a control message; trailing bytes are an error.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, NetError> {
    finish(
        bytes,
        bincode::serde::decode_from_slice::<T, _>(bytes, config()),
    )
}

/// Encodes a reliable message: one over [`MAX_MESSAGE`] is
/// [`NetError::MessageTooLarge`], naming its size and the cap.
pub(crate) fn encode_message<T: Serialize>(value: &T) -> Result<Vec<u8>, NetError> {
    let bytes = encode(value)?;
    if bytes.len() > MAX_MESSAGE {
        return Err(NetError::MessageTooLarge {
            len: bytes.len(),
            max: MAX_MESSAGE,
        });
    }
    Ok(bytes)
}

/// Decodes a reliable message; trailing bytes are an error.
pub(crate) fn decode_message<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, NetError> {
    finish(
        bytes,
        bincode::serde::decode_from_slice::<T, _>(bytes, message_config()),
    )
}

fn finish<T>(
    bytes: &[u8],
    decoded: Result<(T, usize), bincode::error::DecodeError>,
) -> Result<T, NetError> {
    match decoded {
        Ok((v, n)) if n == bytes.len() => Ok(v),
        Ok(_) => Err(NetError::Malformed("trailing bytes".into())),
        Err(e) => Err(NetError::Malformed(e.to_string())),
    }
}

/// Starts a datagram of `kind`.
pub(crate) fn begin(kind: DatagramKind, version: u16) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAX_DATAGRAM);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.push(kind as u8);
    out
}

/// A control datagram: the header and one encoded message (untagged).
pub(crate) fn control<T: Serialize>(
    kind: DatagramKind,
    version: u16,
    body: &T,
) -> Result<Vec<u8>, NetError> {
    let mut out = begin(kind, version);
    out.extend_from_slice(&encode(body)?);
    Ok(out)
}

/// How many bytes of a sealed datagram of `kind` travel in the clear (authenticated, not
/// encrypted): the header; for DATA its sequence number, the nonce; for a connect the
/// hello's values and the cookie, which the server reads to find the key. The rest is
/// encrypted.
pub(crate) fn clear_len(kind: DatagramKind) -> usize {
    match kind {
        DatagramKind::Data => HEADER_LEN + 4,
        DatagramKind::Connect => HEADER_LEN + CONNECT_HEAD_LEN,
        _ => HEADER_LEN,
    }
}

/// The kind of a sealed datagram and, for DATA, the sequence number it claims (its
/// nonce's low half); `None` if the header does not read.
pub(crate) fn sealed_kind(bytes: &[u8]) -> Option<(DatagramKind, Option<u32>)> {
    let (_, kind, body) = parse_header(bytes).ok()?;
    let seq = match kind {
        DatagramKind::Data => Some(u32::from_le_bytes(body.get(..4)?.try_into().ok()?)),
        _ => None,
    };
    Some((kind, seq))
}

/// Splits a datagram into its version, kind and body. Checks only the header.
pub(crate) fn parse_header(bytes: &[u8]) -> Result<(u16, DatagramKind, &[u8]), NetError> {
    if bytes.len() < HEADER_LEN {
        return Err(NetError::Truncated);
    }
    if bytes[..2] != MAGIC {
        return Err(NetError::BadMagic);
    }
    let version = u16::from_le_bytes([bytes[2], bytes[3]]);
    let kind = DatagramKind::from_u8(bytes[4])?;
    Ok((version, kind, &bytes[HEADER_LEN..]))
}

fn take<const N: usize>(rest: &mut &[u8]) -> Result<[u8; N], NetError> {
    let (head, tail) = rest.split_first_chunk::<N>().ok_or(NetError::Truncated)?;
    *rest = tail;
    Ok(*head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::COOKIE_LEN;
    use lanyard::codec::put_varint;
    use lanyard::{ClientId, NetId};

    #[test]
    fn data_roundtrip() {
        let mut out = begin(DatagramKind::Data, PROTOCOL_VERSION);
        DataHeader {
            seq: 7,
            ack: 5,
            ack_bits: 0b101,
            number: 3,
            time: 1000,
            echo: 900,
            held: 12,
        }
        .write(&mut out);
        let m = encode(&Msg::Despawn { net: NetId(9) }).unwrap();
        put_varint(&mut out, 1);
        put_message(
            &mut out,
            Fragment {
                id: 42,
                more: false,
                bytes: &m,
            },
        );
        out.extend_from_slice(&[1, 2, 9, 9]);
        let (v, k, body) = parse_header(&out).unwrap();
        assert_eq!((v, k), (PROTOCOL_VERSION, DatagramKind::Data));
        let d = parse_data(body).unwrap();
        assert_eq!(d.header.seq, 7);
        assert_eq!(d.messages.len(), 1);
        assert_eq!((d.messages[0].id, d.messages[0].more), (42, false));
        assert_eq!(
            decode_message::<Msg>(d.messages[0].bytes).unwrap(),
            Msg::Despawn { net: NetId(9) }
        );
        assert_eq!(d.sections, &[1, 2, 9, 9]);
        assert_eq!(message_cost(m.len()), 4 + 1 + m.len());
    }

    #[test]
    fn state_entries_roundtrip_and_garbage_ends_the_walk() {
        let delta = |age, predicted, delta| Body::Delta {
            age,
            predicted,
            delta,
        };
        let entries = [
            (5, Body::Full(&[1, 2, 3])),
            (6, delta(300, false, &[7; 200])),
            (7, delta(3, true, &[1, 2])),
            (8, Body::Predicted { age: 41 }),
            (90, Body::Same { age: 2 }),
            (91, Body::SameAsNewest { run: 40 }),
            (150, Body::FullPosed(&[4; 31])),
            (200, Body::SameAsNewest { run: 0 }),
            (201, Body::Full(&[9])),
            (202, delta(1, false, &[4])),
            (203, Body::Same { age: 1 }),
            (204, Body::SameAsNewest { run: 0 }),
        ]
        .map(|(net, body)| Entry {
            net: NetId(net),
            body,
            // The last four are a client's, relayed with their times.
            relayed: (net > 200).then(|| (net as u16 - 201) * 1000),
        });
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
        // A whole section marked as a prediction of this very broadcast is a section that
        // starts with a pose.
        let posed: Vec<_> = Entries::new(&[1, 4, 1, 9]).map(Result::unwrap).collect();
        assert_eq!(posed[0].body, Body::FullPosed(&[9]));
    }

    #[test]
    fn state_heads_roundtrip() {
        for head in [
            StateHead {
                tick: 70_000,
                from: NetId(0),
                to: None,
                partial: false,
            },
            StateHead {
                tick: 3,
                from: NetId(12),
                to: Some(NetId(12)),
                partial: true,
            },
            StateHead {
                tick: u32::MAX,
                from: NetId(5),
                to: Some(NetId(u32::MAX)),
                partial: true,
            },
        ] {
            let mut out = Vec::new();
            StateHead::write(Some(&head), &mut out);
            out.push(77);
            let mut rest = out.as_slice();
            assert_eq!(StateHead::read(&mut rest).unwrap(), Some(head));
            assert_eq!(rest, [77]);
            assert!(head.covers(head.from));
            assert!(head.from.0 == 0 || !head.covers(NetId(head.from.0 - 1)));
        }
        let mut none = Vec::new();
        StateHead::write(None, &mut none);
        assert_eq!(none, [0], "a byte when nothing predicts");
        assert_eq!(StateHead::read(&mut none.as_slice()).unwrap(), None);
        let mut no_tick = Vec::new();
        put_varint(&mut no_tick, 1);
        no_tick.extend_from_slice(&[0; 5]);
        assert!(StateHead::read(&mut no_tick.as_slice()).is_err());
        let mut past = Vec::new();
        put_varint(&mut past, 4);
        put_varint(&mut past, u64::from(u32::MAX));
        put_varint(&mut past, 2);
        assert!(StateHead::read(&mut past.as_slice()).is_err());
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
                    restarted: true,
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
