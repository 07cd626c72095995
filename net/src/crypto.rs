//! The cryptography of the protocol: session keys from an X25519 key agreement, the AEAD
//! (ChaCha20-Poly1305) that seals every datagram of a session, stateless handshake cookies
//! and password proofs (BLAKE3 keyed hashes and key derivation). Nothing here reads a clock
//! or draws randomness: callers pass both in.

use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use std::net::SocketAddr;
use x25519_dalek::{PublicKey, StaticSecret};

/// Bytes of a sealed datagram's authentication tag (Poly1305).
pub(crate) const TAG_LEN: usize = 16;
/// Bytes of the nonce a control datagram carries just before its tag.
pub(crate) const NONCE_LEN: usize = 8;
/// Bytes of a handshake cookie.
pub(crate) const COOKIE_LEN: usize = 16;

/// A 32-byte secret.
pub(crate) type Key = [u8; 32];

/// Which way a datagram travels: each way has its own key, so a datagram can never be
/// reflected back to the peer that sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    ToServer = 0,
    ToClient = 1,
}

/// Where a sealed datagram's nonce comes from. Under one key no two datagrams with
/// different bytes may share a nonce; the two sources never meet (the nonce's first byte
/// says which).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nonce {
    /// The datagram's sequence number, extended to 64 bits (DATA): its low 32 bits travel
    /// in the clear header, so it costs no bytes.
    Seq(u64),
    /// A keyed hash of the datagram's clear part and plaintext (control datagrams, which a
    /// stateless server may send again): the same datagram gets the same nonce, different
    /// ones different nonces. It travels as [`NONCE_LEN`] bytes before the tag.
    Synthetic,
}

/// One direction of a session: its AEAD key, and the key of its synthetic nonces.
#[derive(Clone)]
struct Way {
    aead: ChaCha20Poly1305,
    siv: Key,
}

/// The ciphers of one session, one per direction, both derived from the session key.
#[derive(Clone)]
pub(crate) struct Cipher {
    ways: [Way; 2],
}

impl Cipher {
    /// The ciphers of the session whose key is `session`.
    pub(crate) fn new(session: &Key) -> Self {
        let way = |dir: Direction| Way {
            aead: ChaCha20Poly1305::new(&derive(session, "lanyard 9 aead key", dir as u64).into()),
            siv: derive(session, "lanyard 9 nonce key", dir as u64),
        };
        Cipher {
            ways: [way(Direction::ToServer), way(Direction::ToClient)],
        }
    }

    /// Seals `datagram` going `dir`: its first `clear` bytes (the header, and whatever the
    /// receiver must read before it can open the rest) stay readable and are authenticated;
    /// the rest is encrypted in place; the tag (and a synthetic nonce) are appended.
    pub(crate) fn seal(&self, dir: Direction, datagram: &mut Vec<u8>, clear: usize, nonce: Nonce) {
        let way = &self.ways[dir as usize];
        let clear = clear.min(datagram.len());
        let (n, trailer) = match nonce {
            Nonce::Seq(seq) => (nonce_bytes(0, seq), None),
            Nonce::Synthetic => {
                let mut h = blake3::Hasher::new_keyed(&way.siv);
                h.update(&(clear as u64).to_le_bytes());
                h.update(datagram);
                let mut s = [0; NONCE_LEN];
                s.copy_from_slice(&h.finalize().as_bytes()[..NONCE_LEN]);
                (nonce_bytes(1, u64::from_le_bytes(s)), Some(s))
            }
        };
        let (head, body) = datagram.split_at_mut(clear);
        let tag = way
            .aead
            .encrypt_in_place_detached(&n.into(), head, body)
            .expect("a datagram is far below the AEAD's length limit");
        if let Some(s) = trailer {
            datagram.extend_from_slice(&s);
        }
        datagram.extend_from_slice(&tag);
    }

    /// Opens a datagram sealed going `dir` with [`seal`](Self::seal) and the same `clear`:
    /// its clear part followed by the plaintext, or `None` if it is too short, was sealed
    /// with another key, direction or nonce, or was changed on the way. For
    /// [`Nonce::Seq`] the caller gives the sequence number the datagram claims, extended.
    pub(crate) fn open(
        &self,
        dir: Direction,
        datagram: &[u8],
        clear: usize,
        nonce: Nonce,
    ) -> Option<Vec<u8>> {
        let way = &self.ways[dir as usize];
        let body_end = datagram.len().checked_sub(TAG_LEN)?;
        let (rest, tag) = datagram.split_at(body_end);
        let (sealed, n) = match nonce {
            Nonce::Seq(seq) => (rest, nonce_bytes(0, seq)),
            Nonce::Synthetic => {
                let end = rest.len().checked_sub(NONCE_LEN)?;
                let s: [u8; NONCE_LEN] = rest[end..].try_into().ok()?;
                (&rest[..end], nonce_bytes(1, u64::from_le_bytes(s)))
            }
        };
        if sealed.len() < clear {
            return None;
        }
        let mut out = sealed.to_vec();
        let (head, body) = out.split_at_mut(clear);
        way.aead
            .decrypt_in_place_detached(&n.into(), head, body, tag.into())
            .ok()?;
        Some(out)
    }
}

/// A 96-bit AEAD nonce: which source made it, then 64 bits of it.
fn nonce_bytes(source: u8, value: u64) -> [u8; 12] {
    let mut n = [0; 12];
    n[0] = source;
    n[4..].copy_from_slice(&value.to_le_bytes());
    n
}

/// Extends a 32-bit sequence number to the 64-bit one nearest `near` (the newest one
/// opened): a session outlives the wrap of its 32-bit numbers without reusing a nonce.
pub(crate) fn extend_seq(seq: u32, near: u64) -> u64 {
    let base = near & !0xFFFF_FFFF;
    let candidates = [
        base.checked_sub(1 << 32),
        Some(base),
        base.checked_add(1 << 32),
    ];
    candidates
        .into_iter()
        .flatten()
        .map(|b| b | u64::from(seq))
        .min_by_key(|&c| c.abs_diff(near))
        .unwrap_or(u64::from(seq))
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

/// The token a session's client proves to a new host after a migration, from the session's
/// resume token: both ends derive it, and only successors are told it.
pub(crate) fn migration_token(token: &[u8; 32]) -> [u8; 32] {
    derive(token, "lanyard host migration", 0)
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
#[derive(Clone)]
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
    fn a_datagram_opens_only_with_the_key_direction_and_nonce_it_was_sealed_with() {
        let c = Cipher::new(&[7; 32]);
        for nonce in [Nonce::Seq(5), Nonce::Synthetic] {
            let mut d = b"head:secret payload".to_vec();
            c.seal(Direction::ToServer, &mut d, 5, nonce);
            assert_eq!(&d[..5], b"head:", "the clear part stays readable");
            assert!(
                !d.windows(6).any(|w| w == b"secret"),
                "the rest is encrypted"
            );
            let open = |c: &Cipher, dir, d: &[u8], n| c.open(dir, d, 5, n);
            assert_eq!(
                open(&c, Direction::ToServer, &d, nonce).as_deref(),
                Some(&b"head:secret payload"[..])
            );
            assert_eq!(open(&c, Direction::ToClient, &d, nonce), None, "reflected");
            let other = Cipher::new(&[8; 32]);
            assert_eq!(
                open(&other, Direction::ToServer, &d, nonce),
                None,
                "other key"
            );
            if nonce == Nonce::Seq(5) {
                assert_eq!(open(&c, Direction::ToServer, &d, Nonce::Seq(6)), None);
            }
            for i in 0..d.len() {
                let mut bad = d.clone();
                bad[i] ^= 0x01;
                assert_eq!(
                    open(&c, Direction::ToServer, &bad, nonce),
                    None,
                    "bit at {i}"
                );
            }
            assert_eq!(open(&c, Direction::ToServer, &d[..5], nonce), None);
        }
    }

    #[test]
    fn synthetic_nonces_differ_for_different_datagrams_and_repeat_for_the_same() {
        let c = Cipher::new(&[7; 32]);
        let sealed = |p: &[u8]| {
            let mut d = p.to_vec();
            c.seal(Direction::ToClient, &mut d, 2, Nonce::Synthetic);
            d
        };
        assert_eq!(sealed(b"ab-one"), sealed(b"ab-one"));
        let (a, b) = (sealed(b"ab-one"), sealed(b"ab-two"));
        let nonce = |d: &[u8]| d[d.len() - TAG_LEN - NONCE_LEN..d.len() - TAG_LEN].to_vec();
        assert_ne!(nonce(&a), nonce(&b));
    }

    #[test]
    fn sequence_numbers_extend_across_the_wrap() {
        assert_eq!(extend_seq(7, 0), 7);
        assert_eq!(extend_seq(3, 0xFFFF_FFF0), 0x1_0000_0003);
        assert_eq!(extend_seq(0xFFFF_FFF0, 0x1_0000_0003), 0xFFFF_FFF0);
        assert_eq!(extend_seq(0xFFFF_FFF0, 2), 0xFFFF_FFF0);
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
