//! The handshake's datagrams: HELLO, CHALLENGE, CONNECT (with its request or resume) and
//! WELCOME.

use super::{DatagramKind, HEADER_LEN, HELLO_LEN, begin, encode, take};
use crate::crypto::COOKIE_LEN;
use crate::error::NetError;
use lanyard::ClientId;
use serde::{Deserialize, Serialize};

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
    /// Whether the claim comes from a new process (the game started again with the
    /// session's claim from disk): it has no reliable channel and no world to carry on,
    /// and gets both afresh.
    pub(crate) restarted: bool,
}

/// The client's answer to the challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Connect {
    pub(crate) hello: Hello,
    pub(crate) cookie: [u8; COOKIE_LEN],
    pub(crate) request: Request,
}

/// The server's acceptance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// How the server's world moves: every client simulates with it.
    pub(crate) physics: Physics,
    /// The name the session plays under: the one asked for, or, when that was taken,
    /// the first free "name (N)".
    pub(crate) name: String,
}

/// The settings of a world that change how its bodies move, which a client takes from the
/// server so that it cannot simulate another world.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Physics {
    /// The fixed timestep, seconds.
    pub(crate) dt: f32,
    /// Gravity, m/s².
    pub(crate) gravity: [f32; 3],
}

impl Physics {
    /// A group's.
    pub(crate) fn of(config: &lanyard::GroupConfig) -> Self {
        Physics {
            dt: config.dt,
            gravity: config.gravity.to_array(),
        }
    }

    /// `config` with these settings in it.
    pub(crate) fn applied_to(self, config: lanyard::GroupConfig) -> lanyard::GroupConfig {
        lanyard::GroupConfig {
            dt: self.dt,
            gravity: lanyard::Vec3::from_array(self.gravity),
            ..config
        }
    }
}

/// The nonce of a hello of any protocol version: the 8 bytes right after the header. No
/// version may move it, so a server can echo it in a refusal of a version it does not
/// speak, and a client can tell that refusal from a forged one.
pub(crate) fn hello_nonce(body: &[u8]) -> Option<u64> {
    let bytes: [u8; 8] = body.get(..8)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// A hello datagram, padded to [`HELLO_LEN`].
pub(crate) fn hello(version: u16, h: &Hello) -> Vec<u8> {
    let mut out = begin(DatagramKind::Hello, version);
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
    let mut out = begin(DatagramKind::Challenge, version);
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
    let mut out = begin(DatagramKind::Connect, version);
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
