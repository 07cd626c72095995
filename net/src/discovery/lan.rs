//! Discovery's sockets: the responder a server answers on, and browsing.

use super::{Found, ServerInfo, answer_to, parse_answer, request};
use crate::addrs::{Addrs, local_for};
use crate::error::NetError;
use crate::transport::Transport;
use crate::udp::UdpTransport;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Answers discovery requests on a shared port, from a thread of its own: a request is
/// answered the moment it comes, with what the game last said of itself
/// ([`poll`](Self::poll)), so the round trip a browser measures is the network's, not the
/// time until the game's next tick.
pub struct Responder {
    shared: Arc<Answering>,
    thread: Option<JoinHandle<()>>,
}

/// What the responder's thread answers with, and what it did.
#[derive(Default)]
struct Answering {
    /// The game as it last said (none yet: nothing is answered).
    info: Mutex<Option<ServerInfo>>,
    /// Requests answered since the last poll.
    answered: AtomicUsize,
    stop: AtomicBool,
}

/// How often the responder's thread looks whether it was dropped.
const STOP_POLL: Duration = Duration::from_millis(20);

impl Answering {
    /// Answers requests on `socket` until the responder is dropped.
    fn run(&self, mut socket: UdpTransport) {
        while !self.stop.load(Ordering::Relaxed) {
            socket.wait(STOP_POLL);
            while let Some((from, bytes)) = socket.recv() {
                let info = self.info.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(a) = info.as_ref().and_then(|i| answer_to(&bytes, i)) {
                    drop(info);
                    socket.send(from, &a);
                    self.answered.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

impl Responder {
    /// Listens for requests on `discovery.port()` on every interface, IPv6 and IPv4 alike
    /// where the system allows one socket both (`[::]`, dual-stack; else `0.0.0.0`):
    /// requests arrive as IPv4 broadcasts, or over IPv6 (to a multicast group the
    /// interface is in, such as all-nodes `ff02::1`, or unicast). Several responders may
    /// share the port. Nothing is answered before the first [`poll`](Self::poll).
    pub fn bind(discovery: SocketAddr) -> Result<Self, NetError> {
        let any6 = SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), discovery.port());
        let any4 = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), discovery.port());
        let socket = match UdpTransport::bind_shared(any6) {
            Ok(s) => s,
            Err(_) => UdpTransport::bind_shared(any4)?,
        };
        let shared = Arc::new(Answering::default());
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("discovery".into())
            .spawn(move || theirs.run(socket))
            .map_err(|e| NetError::Io(format!("cannot start the discovery responder: {e}")))?;
        Ok(Responder {
            shared,
            thread: Some(thread),
        })
    }

    /// Answers from now on with `info`. Returns how many requests were answered since the
    /// last poll.
    pub fn poll(&mut self, info: &ServerInfo) -> usize {
        let mut now = self.shared.info.lock().unwrap_or_else(|p| p.into_inner());
        if now.as_ref() != Some(info) {
            *now = Some(info.clone());
        }
        drop(now);
        self.shared.answered.swap(0, Ordering::Relaxed)
    }
}

impl Drop for Responder {
    /// Its thread ends (within a few tens of milliseconds), closing the socket.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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
    let began = Instant::now();
    let mut sockets = Vec::new();
    for d in discovery.into().iter() {
        let mut socket = UdpTransport::bind_broadcast(local_for(d))?;
        // Each request's round trip counts from when it left.
        let sent = Instant::now();
        socket.send(d, &request());
        sockets.push((socket, sent));
    }
    let mut found: Vec<Found> = Vec::new();
    while began.elapsed() < wait {
        let Some((first, _)) = sockets.first_mut() else {
            break;
        };
        first.wait(Duration::from_millis(10));
        for (socket, sent) in &mut sockets {
            collect(socket, *sent, &mut found);
        }
    }
    found.sort_by(|a, b| a.info.name.cmp(&b.info.name).then(a.addr.cmp(&b.addr)));
    Ok(found)
}

/// The answers waiting on `socket`, into `found` (once per address).
fn collect(socket: &mut UdpTransport, sent: Instant, found: &mut Vec<Found>) {
    while let Some((from, bytes, age)) = socket.recv_aged() {
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
            // Timed to when the answer came, not to when this loop looked.
            ping_ms: sent.elapsed().saturating_sub(age).as_secs_f32() * 1000.0,
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
        assert_eq!(responder.poll(&info), 0, "nothing asked yet");
        let both = Addrs::new([v4, v6]).unwrap();
        let found = browse_each(both, Duration::from_millis(500)).unwrap();
        assert_eq!(responder.poll(&info), 2, "one socket heard both families");
        let addrs: Vec<String> = found.iter().map(|f| f.addr.to_string()).collect();
        assert_eq!(addrs, ["127.0.0.1:4000", "[::1]:4000"]);
    }
}
