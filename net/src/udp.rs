//! Real UDP sockets, through message-io. The only place in the network layer that does I/O.

use crate::config::{Entropy, NetConfig};
use crate::error::NetError;
use crate::manager::NetManager;
use crate::transport::Transport;
use message_io::adapters::udp::UdpListenConfig;
use message_io::network::TransportListen;
use message_io::network::{
    self, Endpoint, NetEvent, NetworkController, NetworkProcessor, ResourceId,
};
use std::collections::VecDeque;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A UDP socket bound to one address, used both to receive and to send to any peer. A
/// thread of its own takes datagrams off the socket the moment they arrive and stamps
/// them, so [`recv_aged`](Transport::recv_aged) knows how long each waited however seldom
/// its owner looks (a window that draws for 30 ms between ticks); the owner never blocks
/// but in [`wait`](Transport::wait).
pub struct UdpTransport {
    controller: NetworkController,
    listener: ResourceId,
    local: SocketAddr,
    inbox: Arc<Inbox>,
    receiver: Option<JoinHandle<()>>,
}

/// What the receiving thread took off the socket, for the owner to take.
#[derive(Default)]
struct Inbox {
    /// Each datagram, with when it came off the socket.
    queue: Mutex<VecDeque<(SocketAddr, Vec<u8>, Instant)>>,
    arrived: Condvar,
    stop: AtomicBool,
}

/// At most this many datagrams wait for the owner (a flood while it stalls costs no more
/// memory than this); more are dropped, as a full socket buffer drops them.
const INBOX_LIMIT: usize = 4096;

/// How often the receiving thread looks whether its transport was dropped.
const POLL: Duration = Duration::from_millis(10);

/// The instant every socket's clock counts from.
fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

impl Inbox {
    /// Takes datagrams off `processor`'s socket until the transport is dropped.
    fn receive(&self, mut processor: NetworkProcessor) {
        while !self.stop.load(Ordering::Relaxed) {
            processor.process_poll_event(Some(POLL), |e| {
                if let NetEvent::Message(ep, data) = e {
                    let at = Instant::now();
                    let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                    if q.len() < INBOX_LIMIT {
                        q.push_back((canonical(ep.addr()), data.to_vec(), at));
                    }
                    self.arrived.notify_all();
                }
            });
        }
    }
}

/// 32 bytes from the operating system's random source: the [`Entropy`] a [`NetManager`]
/// makes its session secrets from
/// (`NetManager::server(config, os_entropy()?)`). Like the sockets, this is the edge's
/// work: the core never draws randomness itself, so tests give it fixed bytes.
pub fn os_entropy() -> Result<Entropy, NetError> {
    let mut e = [0u8; 32];
    getrandom::fill(&mut e).map_err(|err| NetError::Io(format!("no OS randomness: {err}")))?;
    Ok(e)
}

/// The constructors that draw their entropy from the OS (at the edge: the manager itself
/// never touches the OS, and tests give it fixed bytes).
impl NetManager {
    /// [`NetManager::server`](crate::NetManager::server) with entropy from the OS.
    pub fn server_with_os_entropy(config: NetConfig) -> Result<Self, NetError> {
        Ok(Self::server(config, os_entropy()?))
    }

    /// [`NetManager::client`](crate::NetManager::client) with entropy from the OS.
    pub fn client_with_os_entropy(
        config: NetConfig,
        server: SocketAddr,
        name: &str,
        password: Option<&str>,
    ) -> Result<Self, NetError> {
        Ok(Self::client(config, server, name, password, os_entropy()?))
    }
}

pub use crate::addrs::{canonical, local_for};

impl UdpTransport {
    /// Binds `addr` (port 0 for any free port).
    pub fn bind(addr: SocketAddr) -> io::Result<Self> {
        Self::bind_with(addr, false)
    }

    /// Binds `port` on every interface, IPv6 and IPv4 alike where the operating system
    /// allows one socket both (`[::]`, dual-stack: the default on Linux, unless
    /// `net.ipv6.bindv6only` is set), else IPv4 only (`0.0.0.0`). IPv4 peers of a
    /// dual-stack socket keep their IPv4 addresses ([`canonical`]).
    pub fn bind_any(port: u16) -> io::Result<Self> {
        match Self::bind(SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port)) {
            Err(e) if e.kind() != io::ErrorKind::AddrInUse => {
                Self::bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port))
            }
            bound => bound,
        }
    }

    /// Binds `addr` with permission to send broadcasts (for LAN discovery).
    pub fn bind_broadcast(addr: SocketAddr) -> io::Result<Self> {
        Self::bind_with(addr, true)
    }

    /// Binds `addr` so that several sockets can share the port (each receives its own copy
    /// of a broadcast): for LAN discovery responders.
    pub fn bind_shared(addr: SocketAddr) -> io::Result<Self> {
        let config = UdpListenConfig::default()
            .with_reuse_address()
            .with_reuse_port();
        Self::bind_config(addr, config)
    }

    fn bind_with(addr: SocketAddr, broadcast: bool) -> io::Result<Self> {
        let mut config = UdpListenConfig::default();
        if broadcast {
            config = config.with_send_broadcasts();
        }
        Self::bind_config(addr, config)
    }

    fn bind_config(addr: SocketAddr, config: UdpListenConfig) -> io::Result<Self> {
        let (controller, processor) = network::split();
        let (listener, local) = controller.listen_with(TransportListen::Udp(config), addr)?;
        let inbox = Arc::new(Inbox::default());
        let theirs = Arc::clone(&inbox);
        let receiver = std::thread::Builder::new()
            .name(format!("udp {local}"))
            .spawn(move || theirs.receive(processor))?;
        epoch();
        Ok(UdpTransport {
            controller,
            listener,
            local,
            inbox,
            receiver: Some(receiver),
        })
    }

    /// Waits up to `timeout` for a datagram (returns at once if one is waiting).
    pub fn wait(&mut self, timeout: Duration) {
        let q = self.inbox.queue.lock().unwrap_or_else(|p| p.into_inner());
        if q.is_empty() && !timeout.is_zero() {
            let waited = self
                .inbox
                .arrived
                .wait_timeout_while(q, timeout, |q| q.is_empty());
            drop(waited);
        }
    }
}

impl Drop for UdpTransport {
    /// The receiving thread ends (within 10 ms) and closes the socket with it.
    fn drop(&mut self) {
        self.inbox.stop.store(true, Ordering::Relaxed);
        if let Some(r) = self.receiver.take() {
            let _ = r.join();
        }
    }
}

impl Transport for UdpTransport {
    fn wait(&mut self, timeout: Duration) {
        UdpTransport::wait(self, timeout);
    }

    fn local_addr(&self) -> SocketAddr {
        self.local
    }

    fn send(&mut self, to: SocketAddr, bytes: &[u8]) {
        // An IPv6 socket reaches an IPv4 peer at its mapped address (dual-stack).
        let to = match (self.local, to) {
            (SocketAddr::V6(_), SocketAddr::V4(v4)) => {
                SocketAddr::new(IpAddr::V6(v4.ip().to_ipv6_mapped()), v4.port())
            }
            _ => to,
        };
        // Best effort, like UDP itself: a failed send is a lost datagram.
        let _ = self
            .controller
            .send(Endpoint::from_listener(self.listener, to), bytes);
    }

    fn recv(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.recv_aged().map(|(from, bytes, _)| (from, bytes))
    }

    fn recv_aged(&mut self) -> Option<(SocketAddr, Vec<u8>, Duration)> {
        let mut q = self.inbox.queue.lock().unwrap_or_else(|p| p.into_inner());
        let (from, bytes, at) = q.pop_front()?;
        Some((from, bytes, at.elapsed()))
    }

    fn wall_clock(&self) -> Option<Duration> {
        Some(epoch().elapsed())
    }
}

#[cfg(test)]
mod tests {
    /// The first datagram `t` receives within about two seconds.
    fn first_of(t: &mut super::UdpTransport) -> Option<(std::net::SocketAddr, Vec<u8>)> {
        use crate::transport::Transport;
        (0..100).find_map(|_| {
            t.wait(std::time::Duration::from_millis(20));
            t.recv()
        })
    }

    #[test]
    fn a_dual_stack_socket_hears_ipv4_and_ipv6_peers_at_their_own_addresses() {
        use super::UdpTransport;
        use crate::transport::Transport;
        let mut server = UdpTransport::bind_any(0).unwrap();
        let port = server.local_addr().port();
        let targets = [format!("127.0.0.1:{port}"), format!("[::1]:{port}")];
        for to in targets {
            let to: std::net::SocketAddr = to.parse().unwrap();
            let mut client = UdpTransport::bind(super::local_for(to)).unwrap();
            client.send(to, b"ping");
            let (from, bytes) = first_of(&mut server).expect("the server heard the client");
            assert_eq!(bytes, b"ping");
            assert_eq!(
                from,
                client.local_addr(),
                "the client's own address, not a mapped one"
            );
            server.send(from, b"pong");
            assert_eq!(
                first_of(&mut client).map(|(_, b)| b),
                Some(b"pong".to_vec())
            );
        }
        let mapped: std::net::SocketAddr = "[::ffff:192.0.2.1]:5".parse().unwrap();
        assert_eq!(super::canonical(mapped).to_string(), "192.0.2.1:5");
    }

    #[test]
    fn os_entropy_draws_fresh_bytes_each_time() {
        let (a, b) = (super::os_entropy().unwrap(), super::os_entropy().unwrap());
        assert_ne!(a, b);
        assert_ne!(a, [0; 32]);
    }

    #[test]
    fn two_clients_made_with_os_entropy_say_different_hellos() {
        use crate::config::NetConfig;
        use crate::manager::NetManager;
        let server: std::net::SocketAddr = "127.0.0.1:47810".parse().unwrap();
        let hello = || {
            let mut net =
                NetManager::client_with_os_entropy(NetConfig::default(), server, "ada", None)
                    .unwrap();
            let registry = std::sync::Arc::new(lanyard::KindRegistry::new());
            let mut group = lanyard::EntityGroup::new(registry, Default::default());
            net.update(&mut group, 0.016);
            let out: Vec<(std::net::SocketAddr, Vec<u8>)> = net.drain_outgoing().collect();
            assert_eq!(out.len(), 1, "one hello");
            out[0].1.clone()
        };
        // Fixed entropy would give the same nonce and key both times.
        assert_ne!(hello(), hello());
        assert!(NetManager::server_with_os_entropy(NetConfig::default()).is_ok());
    }
}
