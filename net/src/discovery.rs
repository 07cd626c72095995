//! LAN discovery: a client broadcasts a request to the discovery port; every server that
//! listens there answers with its name, player count, maximum, whether it has a password,
//! its protocol version and its game port.
//!
//! The request is padded to [`REQUEST_LEN`] bytes and an answer is never larger than the
//! request it answers (a long server name is shortened to fit), so a spoofed request can
//! never make a server send more to someone than the spoofer sent.
//!
//! The broadcast address is the caller's choice: the game takes it from
//! `--discovery-addr` or `LANYARD_DISCOVERY_ADDR`, and every automated run uses the
//! loopback broadcast `127.255.255.255`.

use crate::addrs::Addrs;
use crate::error::NetError;
use crate::transport::Transport;
use crate::udp::UdpTransport;
use crate::wire::{self, PROTOCOL_VERSION};
use serde::{Deserialize, Serialize};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

/// The discovery port when none is given.
pub const DEFAULT_PORT: u16 = 47800;

const REQUEST: &[u8; 4] = b"LYD?";
const ANSWER: &[u8; 4] = b"LYD!";

/// What a server says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// Its name.
    pub name: String,
    /// Players connected (the host counts).
    pub players: u16,
    /// Players it takes.
    pub max_players: u16,
    /// Spectators watching.
    pub spectators: u16,
    /// Spectators it takes (on top of the players).
    pub max_spectators: u16,
    /// Whether it wants a password.
    pub password: bool,
    /// The protocol version it speaks.
    pub version: u16,
    /// The UDP port its game listens on.
    pub game_port: u16,
}

/// The size of a discovery request, padding included: an answer is never larger.
pub const REQUEST_LEN: usize = 160;

/// A discovery request, padded to [`REQUEST_LEN`].
pub fn request() -> Vec<u8> {
    let mut d = REQUEST.to_vec();
    d.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
    d.resize(REQUEST_LEN, 0);
    d
}

/// Whether `bytes` is a discovery request (of at least the padded size).
pub fn is_request(bytes: &[u8]) -> bool {
    bytes.len() >= REQUEST_LEN && bytes.starts_with(REQUEST)
}

/// An answer carrying `info`, whatever its size.
pub fn answer(info: &ServerInfo) -> Result<Vec<u8>, NetError> {
    let mut d = ANSWER.to_vec();
    d.extend_from_slice(&wire::encode(info)?);
    Ok(d)
}

/// The answer to `request`: `None` if it is not a request; otherwise `info`, with its name
/// shortened if need be so the answer is no larger than the request.
pub fn answer_to(request: &[u8], info: &ServerInfo) -> Option<Vec<u8>> {
    if !is_request(request) {
        return None;
    }
    let mut info = info.clone();
    loop {
        let a = answer(&info).ok()?;
        if a.len() <= request.len() {
            return Some(a);
        }
        let cut = info.name.len().checked_sub(a.len() - request.len())?;
        let cut = (0..=cut).rev().find(|&i| info.name.is_char_boundary(i))?;
        if cut == info.name.len() {
            info.name.pop()?;
        } else {
            info.name.truncate(cut);
        }
    }
}

/// Reads an answer.
pub fn parse_answer(bytes: &[u8]) -> Result<ServerInfo, NetError> {
    let body = bytes.strip_prefix(ANSWER).ok_or(NetError::BadMagic)?;
    wire::decode(body)
}

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

/// A server found on the LAN.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Where its game listens.
    pub addr: SocketAddr,
    /// What it said.
    pub info: ServerInfo,
    /// Time from request to answer, milliseconds.
    pub ping_ms: f32,
}

impl Found {
    /// Whether it speaks this build's protocol.
    pub fn compatible(&self) -> bool {
        self.info.version == PROTOCOL_VERSION
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
        let mut socket = UdpTransport::bind_broadcast(crate::udp::local_for(d))?;
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
    use super::*;

    fn info(name: impl Into<String>, players: u16, password: bool) -> ServerInfo {
        ServerInfo {
            name: name.into(),
            players,
            max_players: 8,
            spectators: 0,
            max_spectators: 8,
            password,
            version: PROTOCOL_VERSION,
            game_port: 4000,
        }
    }

    #[test]
    fn requests_and_answers_roundtrip_and_garbage_is_refused() {
        assert!(is_request(&request()));
        assert!(!is_request(b"LYD?"));
        assert!(!is_request(&request()[..REQUEST_LEN - 1]));
        let info = info("yard", 2, true);
        assert_eq!(parse_answer(&answer(&info).unwrap()).unwrap(), info);
        assert!(parse_answer(b"LYD!\xff\xff\xff").is_err());
        assert!(parse_answer(b"nope").is_err());
    }

    #[test]
    fn an_answer_is_never_larger_than_the_request() {
        let mut info = info("a yard with a very long name, ".repeat(20) + "é", 2, false);
        let req = request();
        let a = answer_to(&req, &info).unwrap();
        assert!(a.len() <= req.len());
        let got = parse_answer(&a).unwrap();
        assert!(info.name.starts_with(&got.name) && got.name.len() > 100);
        assert_eq!(
            answer_to(&req[..20], &info),
            None,
            "a short request gets nothing"
        );
        info.name = "yard".into();
        assert_eq!(
            parse_answer(&answer_to(&req, &info).unwrap()).unwrap(),
            info
        );
    }

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
        let info = info("twin", 0, false);
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
