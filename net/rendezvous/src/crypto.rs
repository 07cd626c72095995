//! The rendezvous protocol's keyed hashes: the server's address cookies and the proofs a
//! registration's owner secret keys.

use std::net::SocketAddr;

/// Bytes of an address cookie.
pub(crate) const COOKIE_LEN: usize = 16;

/// A 32-byte secret key.
pub(crate) type Key = [u8; 32];

/// Constant-time equality of two secrets of the same length (owners, proofs, cookies).
pub(crate) fn same<const N: usize>(a: &[u8; N], b: &[u8; N]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A cookie that binds only an address and an epoch (a rendezvous request carries nothing
/// else worth binding): `key` is the server's secret.
pub(crate) fn address_cookie(key: &Key, from: SocketAddr, epoch: u64) -> [u8; COOKIE_LEN] {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(addr_bytes(from).as_slice());
    h.update(&epoch.to_le_bytes());
    let mut out = [0; COOKIE_LEN];
    out.copy_from_slice(&h.finalize().as_bytes()[..COOKIE_LEN]);
    out
}

/// A proof that a message comes from whoever holds `owner` (a registration's secret,
/// shared by the host and its rendezvous server): the keyed hash of `parts`.
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
