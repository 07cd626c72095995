//! Discovery's sockets: the responder a server answers on, and browsing.

use super::{Found, ServerInfo, answer_to, parse_answer, request};
use crate::addrs::{Addrs, local_for};
use crate::error::NetError;
use crate::transport::Transport;
use crate::udp::UdpTransport;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

/// Answers discovery requests on a shared port.
pub struct Responder {
    socket: UdpTransport,
}

impl Responder {
    /// Listens for requests on `discovery.port()` on every interface, IPv6 and IPv4 alike
    /// where the system allows one socket both (`[::]`, dual-stack; else `0.0.0.0`):
    /// requests arrive as IPv4 broadcasts, or over IPv6 (to a multicast group the
    /// interface is in, such as all-nodes `ff02::1`, or unicast). Several responders may
    /// share the port.
    pub fn bind(discovery: SocketAddr) -> Result<Self, NetError> {
        let any6 = SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), discovery.port());
        let any4 = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), discovery.port());
        let socket = match UdpTransport::bind_shared(any6) {
            Ok(s) => s,
            Err(_) => UdpTransport::bind_shared(any4)?,
        };
        Ok(Responder { socket })
    }

    /// Answers every pending request with `info`. Returns how many it answered.
    pub fn poll(&mut self, info: &ServerInfo) -> usize {
        let mut n = 0;
        while let Some((from, bytes)) = self.socket.recv() {
            if let Some(a) = answer_to(&bytes, info) {
                self.socket.send(from, &a);
                n += 1;
            }
        }
        n
    }
}

/// Broadcasts a request to `discovery` and collects answers for `wait`. Reads the wall
/// clock (for the ping): this is edge code, for tools and menus.
pub fn browse(discovery: SocketAddr, wait: Duration) -> Result<Vec<Found>, NetError> {
    browse_each(discovery, wait)
}

/// [`browse`] at each of `discovery` at once (an IPv4 broadcast address and an IPv6 one),
/// from a socket of each one's family. A server that answers over both families is listed
/// at both of its addresses.
pub fn browse_each(discovery: impl Into<Addrs>, wait: Duration) -> Result<Vec<Found>, NetError> {
    let sent = Instant::now();
    let mut sockets = Vec::new();
    for d in discovery.into().iter() {
        let mut socket = UdpTransport::bind_broadcast(local_for(d))?;
        socket.send(d, &request());
        sockets.push(socket);
    }
    let mut found: Vec<Found> = Vec::new();
    while sent.elapsed() < wait {
        let Some((first, rest)) = sockets.split_first_mut() else {
            break;
        };
        first.wait(Duration::from_millis(10));
        for socket in std::iter::once(first).chain(rest) {
            collect(socket, sent, &mut found);
        }
    }
    found.sort_by(|a, b| a.info.name.cmp(&b.info.name).then(a.addr.cmp(&b.addr)));
    Ok(found)
}

/// The answers waiting on `socket`, into `found` (once per address).
fn collect(socket: &mut UdpTransport, sent: Instant, found: &mut Vec<Found>) {
    while let Some((from, bytes)) = socket.recv() {
        let Ok(info) = parse_answer(&bytes) else {
            continue;
        };
        let addr = SocketAddr::new(from.ip(), info.game_port);
        if found.iter().any(|f| f.addr == addr) {
            continue;
        }
        found.push(Found {
            addr,
            info,
            ping_ms: sent.elapsed().as_secs_f32() * 1000.0,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{Responder, browse_each};
    use crate::addrs::Addrs;
    use crate::discovery::ServerInfo;
    use crate::wire::PROTOCOL_VERSION;
    use std::net::{IpAddr, Ipv6Addr, SocketAddr};
    use std::time::Duration;

    #[test]
    fn a_responder_answers_the_loopback_broadcast_and_ipv6_loopback_alike() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let port = std::net::UdpSocket::bind("127.0.0.1:0")
            .and_then(|s| s.local_addr())
            .unwrap()
            .port();
        let v4 = SocketAddr::from(([127, 255, 255, 255], port));
        let v6 = SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), port);
        let mut responder = Responder::bind(v4).unwrap();
        let info = ServerInfo {
            name: "twin".into(),
            players: 0,
            max_players: 8,
            spectators: 0,
            max_spectators: 8,
            password: false,
            version: PROTOCOL_VERSION,
            game_port: 4000,
            web_port: None,
        };
        let done = Arc::new(AtomicBool::new(false));
        let stop = done.clone();
        let answering = std::thread::spawn(move || {
            let mut answered = 0;
            while !stop.load(Ordering::Relaxed) {
                responder.socket.wait(Duration::from_millis(10));
                answered += responder.poll(&info);
            }
            answered
        });
        let both = Addrs::new([v4, v6]).unwrap();
        let found = browse_each(both, Duration::from_millis(500)).unwrap();
        done.store(true, Ordering::Relaxed);
        assert_eq!(
            answering.join().unwrap(),
            2,
            "one socket heard both families"
        );
        let addrs: Vec<String> = found.iter().map(|f| f.addr.to_string()).collect();
        assert_eq!(addrs, ["127.0.0.1:4000", "[::1]:4000"]);
    }
}
