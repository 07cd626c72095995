//! One address, or one of each family.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// One address, or one of each family, IPv6 first: where one service is reached over both
/// (a dual-stack rendezvous server, which a host registers with and a player joins
/// through over each, so it knows both of their addresses and hands both out), or where
/// LAN discovery asks (an IPv4 broadcast address and an IPv6 one). Written (and parsed by
/// the game) as a comma-separated list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addrs {
    first: SocketAddr,
    other: Option<SocketAddr>,
}

impl Addrs {
    /// The addresses of `list`, the first of each family kept, IPv6 first; `None` if the
    /// list is empty.
    pub fn new(list: impl IntoIterator<Item = SocketAddr>) -> Option<Addrs> {
        let (mut v6, mut v4) = (None, None);
        for a in list {
            let a = canonical(a);
            let slot = if a.is_ipv6() { &mut v6 } else { &mut v4 };
            slot.get_or_insert(a);
        }
        let first = v6.or(v4)?;
        Some(Addrs {
            first,
            other: v6.and(v4),
        })
    }

    /// The address asked first (the IPv6 one, if there is one).
    pub fn first(&self) -> SocketAddr {
        self.first
    }

    /// Every address, IPv6 first.
    pub fn iter(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        std::iter::once(self.first).chain(self.other)
    }

    /// Whether `a` is one of them.
    pub fn contains(&self, a: SocketAddr) -> bool {
        self.iter().any(|x| x == a)
    }

    /// Whether both families are among them.
    pub fn both_families(&self) -> bool {
        self.other.is_some()
    }

    /// Where a socket that talks to all of them binds: the loopback or wildcard of their
    /// family ([`local_for`]), or for both families the IPv6 wildcard
    /// (dual-stack, as the UDP transport's `bind_any` binds).
    pub fn local(&self) -> SocketAddr {
        if self.both_families() {
            SocketAddr::new(std::net::Ipv6Addr::UNSPECIFIED.into(), 0)
        } else {
            local_for(self.first)
        }
    }
}

impl From<SocketAddr> for Addrs {
    fn from(a: SocketAddr) -> Addrs {
        Addrs {
            first: canonical(a),
            other: None,
        }
    }
}

impl fmt::Display for Addrs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.first)?;
        if let Some(o) = self.other {
            write!(f, ",{o}")?;
        }
        Ok(())
    }
}

/// The local address to bind, on any free port, for a socket that talks to `peer`: the
/// loopback address of `peer`'s family when `peer` is on loopback (so nothing of it leaves
/// the machine), every interface of that family otherwise.
pub fn local_for(peer: SocketAddr) -> SocketAddr {
    let ip = match (peer.ip(), peer.ip().is_loopback()) {
        (IpAddr::V4(_), true) => IpAddr::V4(Ipv4Addr::LOCALHOST),
        (IpAddr::V4(_), false) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        (IpAddr::V6(_), true) => IpAddr::V6(Ipv6Addr::LOCALHOST),
        (IpAddr::V6(_), false) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    SocketAddr::new(ip, 0)
}

/// `a` with an IPv4-mapped IPv6 address (`[::ffff:192.0.2.1]:5`, how a dual-stack socket
/// sees an IPv4 peer) written as the IPv4 address it is (`192.0.2.1:5`): one peer, one
/// address, whichever socket heard it.
pub fn canonical(a: SocketAddr) -> SocketAddr {
    match a {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), v6.port()),
            None => a,
        },
        SocketAddr::V4(_) => a,
    }
}
