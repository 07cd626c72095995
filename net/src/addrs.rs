//! One address, or one of each family.

use std::fmt;
use std::net::SocketAddr;

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
            let a = crate::udp::canonical(a);
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
    /// family ([`crate::udp::local_for`]), or for both families the IPv6 wildcard
    /// (dual-stack, as [`UdpTransport::bind_any`](crate::udp::UdpTransport::bind_any)).
    pub fn local(&self) -> SocketAddr {
        if self.both_families() {
            SocketAddr::new(std::net::Ipv6Addr::UNSPECIFIED.into(), 0)
        } else {
            crate::udp::local_for(self.first)
        }
    }
}

impl From<SocketAddr> for Addrs {
    fn from(a: SocketAddr) -> Addrs {
        Addrs {
            first: crate::udp::canonical(a),
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
