//! Addresses as players type them: `HOST[:PORT]`, an IPv6 address in brackets, or a
//! comma-separated list for a rendezvous server. An address is parsed as an address;
//! only a host name is looked up.

use crate::game::DEFAULT_PORT;
use lanyard_rendezvous::{self as rendezvous, Addrs};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

/// Reads a server's address typed as `HOST[:PORT]` (the game's port by default), on the
/// command line or the start screen. An address is parsed as an address; only a host name
/// is looked up, and a bad port is an error before any lookup.
pub fn server_addr(text: &str) -> Result<SocketAddr, String> {
    addr_or_default(text, DEFAULT_PORT)
}

/// Reads a rendezvous server's addresses typed as `HOST[:PORT]` (port 47820 by default),
/// the way [`server_addr`] reads a game's, or a comma-separated list of them: a host name
/// gives its IPv6 and IPv4 addresses, and at most one of each family is kept (the first),
/// so a host registers, and a player joins, over both.
pub fn rendezvous_addr(text: &str) -> Result<Addrs, String> {
    let mut all = Vec::new();
    for part in text.split(',') {
        all.extend(addrs_or_default(part, rendezvous::DEFAULT_PORT)?);
    }
    Addrs::new(all).ok_or_else(|| format!("'{}' names no rendezvous server", text.trim()))
}

/// The address of `text`: of a host name's addresses, an IPv4 one if it has one.
fn addr_or_default(text: &str, default_port: u16) -> Result<SocketAddr, String> {
    let all = addrs_or_default(text, default_port)?;
    all.iter()
        .find(|a| a.is_ipv4())
        .or(all.first())
        .copied()
        .ok_or_else(|| format!("'{}' has no address", text.trim()))
}

/// The addresses of `text`: the one it is, or all a host name has.
fn addrs_or_default(text: &str, default_port: u16) -> Result<Vec<SocketAddr>, String> {
    use std::net::ToSocketAddrs;
    let text = text.trim();
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Ok(vec![a]);
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, default_port)]);
    }
    // An IPv6 address in brackets with no port: `[::1]`.
    if let Some(ip) = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .and_then(|t| t.parse::<Ipv6Addr>().ok())
    {
        return Ok(vec![SocketAddr::new(IpAddr::V6(ip), default_port)]);
    }
    let (host, port) = match text.rsplit_once(':') {
        Some((host, p)) => match p.parse::<u16>() {
            Ok(port) if port > 0 => (host, port),
            _ => return Err(format!("'{text}': '{p}' is not a port (1 to 65535)")),
        },
        None => (text, default_port),
    };
    if host.is_empty() {
        return Err(format!("'{text}' names no host"));
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let all: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve '{host}': {e}"))?
        .collect();
    if all.is_empty() {
        return Err(format!("'{host}' has no address"));
    }
    Ok(all)
}
