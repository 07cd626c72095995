//! The keyed hashes of the protocol: session keys from an X25519 key agreement, datagram
//! tags, stateless handshake cookies and password proofs. All BLAKE3 (keyed mode and key
//! derivation); nothing here reads a clock or draws randomness: callers pass both in.

use std::net::SocketAddr;
use x25519_dalek::{PublicKey, StaticSecret};

/// Bytes of a datagram tag.
pub(crate) const TAG_LEN: usize = 16;
/// Bytes of a handshake cookie.
pub(crate) const COOKIE_LEN: usize = 16;

/// A 32-byte secret.
pub(crate) type Key = [u8; 32];

/// Which way a datagram travels: part of its tag, so a datagram can never be reflected
/// back to the peer that sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    ToServer = 0,
    ToClient = 1,
}

/// Where a datagram's tag splits it: the first `SPLIT` bytes (the fixed header and, for
/// DATA, its sequence fields) go into the keyed hash as they are, the rest as its BLAKE3
/// digest. The split sits at a fixed offset, so the receiver reads no field to find it.
pub(crate) const SPLIT: usize = 27;

/// The unkeyed digest of what follows the split.
pub(crate) fn digest(rest: &[u8]) -> [u8; 32] {
    *blake3::hash(rest).as_bytes()
}

/// The tag of a datagram whose first bytes are `head` and the digest of whose rest is
/// `rest`, under the session key, going `dir`. Hash-then-MAC: BLAKE3's collision
/// resistance makes a tag over the digest as strong as one over the bytes, and a digest
/// of bytes that every client receives alike (a shared chunk of the world) is computed
/// once per broadcast instead of once per client.
pub(crate) fn tag_parts(key: &Key, dir: Direction, head: &[u8], rest: &[u8; 32]) -> [u8; TAG_LEN] {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(&[dir as u8]);
    h.update(head);
    h.update(rest);
    let mut out = [0; TAG_LEN];
    out.copy_from_slice(&h.finalize().as_bytes()[..TAG_LEN]);
    out
}

/// The tag of `bytes` under the session key, for datagrams going `dir`.
pub(crate) fn tag(key: &Key, dir: Direction, bytes: &[u8]) -> [u8; TAG_LEN] {
    let split = bytes.len().min(SPLIT);
    tag_parts(key, dir, &bytes[..split], &digest(&bytes[split..]))
}

/// Appends the tag of everything in `datagram` so far.
pub(crate) fn seal(key: &Key, dir: Direction, datagram: &mut Vec<u8>) {
    let t = tag(key, dir, datagram);
    datagram.extend_from_slice(&t);
}

/// Checks and strips the tag of a received datagram; `None` if it is missing or wrong.
/// Compares in constant time.
pub(crate) fn open<'a>(key: &Key, dir: Direction, datagram: &'a [u8]) -> Option<&'a [u8]> {
    let split = datagram.len().checked_sub(TAG_LEN)?;
    let (body, got) = datagram.split_at(split);
    let want = tag(key, dir, body);
    let got: &[u8; TAG_LEN] = got.try_into().ok()?;
    same(&want, got).then_some(body)
}

/// An X25519 key pair made from 32 bytes of the caller's randomness.
pub(crate) fn keypair(secret: Key) -> (StaticSecret, [u8; 32]) {
    let s = StaticSecret::from(secret);
    let p = PublicKey::from(&s).to_bytes();
    (s, p)
}

/// The session key both sides derive from the key agreement and the handshake's values.
/// `None` if the peer's public key is degenerate (a low-order point gives a shared secret
/// anyone could compute).
pub(crate) fn session_key(
    mine: &StaticSecret,
    theirs: &[u8; 32],
    nonce: u64,
    client_pub: &[u8; 32],
    server_pub: &[u8; 32],
) -> Option<Key> {
    let shared = mine.diffie_hellman(&PublicKey::from(*theirs));
    if !shared.was_contributory() {
        return None;
    }
    let mut h = blake3::Hasher::new_derive_key("lanyard 2 session key");
    h.update(shared.as_bytes());
    h.update(&nonce.to_le_bytes());
    h.update(client_pub);
    h.update(server_pub);
    Some(*h.finalize().as_bytes())
}

/// The proof that a client knows the password: a keyed hash over the session key, so it
/// proves nothing to anyone who does not hold that key, and the password never travels.
pub(crate) fn password_proof(password: &str, session: &Key) -> Key {
    let k = blake3::derive_key("lanyard 2 password", password.as_bytes());
    *blake3::keyed_hash(&k, session).as_bytes()
}

/// A session's resume token: both peers compute it from the session key once the welcome
/// is in, so it is agreed at the welcome without ever crossing the wire.
pub(crate) fn session_token(session: &Key) -> Key {
    derive(session, "lanyard 4 session token", 0)
}

/// The proof that a client holds an earlier session's `token`, bound to the key of the
/// handshake that carries it (so a captured proof is worth nothing in another handshake).
pub(crate) fn resume_proof(token: &Key, session: &Key) -> Key {
    let k = blake3::derive_key("lanyard 4 resume", token);
    *blake3::keyed_hash(&k, session).as_bytes()
}

/// Constant-time equality of two secrets of the same length (keys, tags, cookies).
pub(crate) fn same<const N: usize>(a: &[u8; N], b: &[u8; N]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The server's secrets: the key of its cookies and the root of its per-epoch handshake
/// key pairs, both derived from the entropy its owner gives it.
pub(crate) struct ServerSecrets {
    cookie_key: Key,
    keypair_root: Key,
}

impl ServerSecrets {
    /// From 32 bytes of randomness.
    pub(crate) fn new(entropy: Key) -> Self {
        ServerSecrets {
            cookie_key: blake3::derive_key("lanyard 2 cookie key", &entropy),
            keypair_root: blake3::derive_key("lanyard 2 handshake keys", &entropy),
        }
    }

    /// The cookie for a hello from `from`, in cookie epoch `epoch`: only someone who
    /// received the challenge at `from` can echo it.
    pub(crate) fn cookie(
        &self,
        from: SocketAddr,
        nonce: u64,
        client_pub: &[u8; 32],
        epoch: u64,
    ) -> [u8; COOKIE_LEN] {
        let mut h = blake3::Hasher::new_keyed(&self.cookie_key);
        h.update(addr_bytes(from).as_slice());
        h.update(&nonce.to_le_bytes());
        h.update(client_pub);
        h.update(&epoch.to_le_bytes());
        let mut out = [0; COOKIE_LEN];
        out.copy_from_slice(&h.finalize().as_bytes()[..COOKIE_LEN]);
        out
    }

    /// The server's handshake key pair for cookie epoch `epoch`: one for every hello of
    /// the epoch, so answering a hello costs a keyed hash (its cookie) and no key exchange.
    /// The key agreement happens only once a good cookie comes back; the server keeps no
    /// state for a hello.
    pub(crate) fn epoch_keypair(&self, epoch: u64) -> (StaticSecret, [u8; 32]) {
        keypair(derive(
            &self.keypair_root,
            "lanyard 8 epoch handshake key",
            epoch,
        ))
    }
}

/// A cookie that binds only an address and an epoch, for services whose requests carry
/// nothing else worth binding (the rendezvous server): `key` is the service's secret.
pub(crate) fn address_cookie(key: &Key, from: SocketAddr, epoch: u64) -> [u8; COOKIE_LEN] {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(addr_bytes(from).as_slice());
    h.update(&epoch.to_le_bytes());
    let mut out = [0; COOKIE_LEN];
    out.copy_from_slice(&h.finalize().as_bytes()[..COOKIE_LEN]);
    out
}

/// A proof that a message comes from whoever holds `owner` (a rendezvous registration's
/// secret, shared by the host and its rendezvous server): the keyed hash of `parts`.
pub(crate) fn owner_proof(owner: &[u8; 16], what: &str, parts: &[&[u8]]) -> [u8; 16] {
    let key = blake3::derive_key("lanyard rendezvous owner proof", owner);
    let mut h = blake3::Hasher::new_keyed(&key);
    h.update(what.as_bytes());
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    let mut out = [0; 16];
    out.copy_from_slice(&h.finalize().as_bytes()[..16]);
    out
}

/// The bytes of an address, for keyed hashes.
pub(crate) fn addr_bytes(a: SocketAddr) -> Vec<u8> {
    let mut v = match a.ip() {
        std::net::IpAddr::V4(ip) => ip.octets().to_vec(),
        std::net::IpAddr::V6(ip) => ip.octets().to_vec(),
    };
    v.extend_from_slice(&a.port().to_le_bytes());
    v
}

/// A stream of keys from one seed (a client's per-session secrets, the entropy a test
/// gives): `derive(i)` is the i-th.
pub(crate) fn derive(seed: &Key, what: &str, i: u64) -> Key {
    let mut h = blake3::Hasher::new_keyed(seed);
    h.update(what.as_bytes());
    h.update(&i.to_le_bytes());
    *h.finalize().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_opens_only_with_the_key_and_direction_it_was_sealed_with() {
        let k = [7; 32];
        let mut d = b"hello datagram".to_vec();
        seal(&k, Direction::ToServer, &mut d);
        assert_eq!(
            open(&k, Direction::ToServer, &d),
            Some(&b"hello datagram"[..])
        );
        assert_eq!(open(&k, Direction::ToClient, &d), None, "reflected");
        assert_eq!(open(&[8; 32], Direction::ToServer, &d), None, "other key");
        for i in 0..d.len() {
            let mut bad = d.clone();
            bad[i] ^= 0x01;
            assert_eq!(open(&k, Direction::ToServer, &bad), None, "bit at {i}");
        }
        assert_eq!(open(&k, Direction::ToServer, &d[..5]), None);
    }

    #[test]
    fn both_sides_derive_the_same_session_key() {
        let (cs, cp) = keypair([1; 32]);
        let (ss, sp) = keypair([2; 32]);
        let a = session_key(&cs, &sp, 9, &cp, &sp).unwrap();
        let b = session_key(&ss, &cp, 9, &cp, &sp).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, session_key(&cs, &sp, 10, &cp, &sp).unwrap());
        // A low-order public key is refused.
        assert_eq!(session_key(&cs, &[0; 32], 9, &cp, &[0; 32]), None);
    }

    #[test]
    fn cookies_bind_the_address_and_the_epoch() {
        let s = ServerSecrets::new([3; 32]);
        let a: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let b: SocketAddr = "127.0.0.2:5000".parse().unwrap();
        let c = s.cookie(a, 1, &[4; 32], 10);
        assert_eq!(c, s.cookie(a, 1, &[4; 32], 10));
        assert_ne!(c, s.cookie(b, 1, &[4; 32], 10));
        assert_ne!(c, s.cookie(a, 1, &[4; 32], 11));
        assert_ne!(c, ServerSecrets::new([5; 32]).cookie(a, 1, &[4; 32], 10));
    }
}
