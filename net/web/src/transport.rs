//! [`WebTransport`]: the edge. A host's game socket, and beside it, on one port number,
//! HTTP over TCP (the page's files and its offers) and WebRTC over UDP (its channel). The
//! network layer sees one [`Transport`]: a page is a peer at an address like any other.

use crate::error::WebError;
use crate::http::{Request, response};
use crate::rtc::{RtcHost, RtcLimits};
use crate::site::Site;
use lanyard_net::Transport;
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

/// The most HTTP connections open at once.
const MAX_CONNECTIONS: usize = 64;
/// How long an HTTP connection may take to ask and be answered.
const CONNECTION_TIME: Duration = Duration::from_secs(10);
/// The longest a wait on the game's socket lasts before the pages are looked at.
const PAGE_POLL: Duration = Duration::from_millis(2);

/// One HTTP connection: what it sent so far, then what it is sent.
struct Conn {
    stream: TcpStream,
    peer: IpAddr,
    local: IpAddr,
    inbox: Vec<u8>,
    outbox: Vec<u8>,
    written: usize,
    since: Instant,
}

/// A game's socket with a page and its channels beside it (see the module's docs).
pub struct WebTransport {
    inner: Box<dyn Transport>,
    http: TcpListener,
    udp: UdpSocket,
    conns: Vec<Conn>,
    host: RtcHost,
    site: Site,
    received: VecDeque<(SocketAddr, Vec<u8>, Instant)>,
    buf: Vec<u8>,
}

impl WebTransport {
    /// Serves `site` over HTTP on TCP `ip:port` and the pages' channels on UDP `ip:port`,
    /// beside `inner`, the game's own socket.
    pub fn bind(
        inner: Box<dyn Transport>,
        ip: IpAddr,
        port: u16,
        site: Site,
    ) -> Result<WebTransport, WebError> {
        let at = SocketAddr::new(ip, port);
        let http = TcpListener::bind(at)
            .map_err(|e| WebError::Io(format!("cannot serve the page on TCP {at}: {e}")))?;
        let port = http.local_addr()?.port();
        let at = SocketAddr::new(ip, port);
        let udp = UdpSocket::bind(at).map_err(|e| {
            WebError::Io(format!("cannot open the pages' channels on UDP {at}: {e}"))
        })?;
        http.set_nonblocking(true)?;
        udp.set_nonblocking(true)?;
        Ok(WebTransport {
            inner,
            http,
            udp,
            conns: Vec::new(),
            host: RtcHost::new(port, RtcLimits::default()),
            site,
            received: VecDeque::new(),
            buf: vec![0; 2048],
        })
    }

    /// The port the page is served on (TCP) and its channels run on (UDP).
    pub fn web_port(&self) -> u16 {
        self.udp.local_addr().map(|a| a.port()).unwrap_or(0)
    }

    /// The addresses of the pages whose channels are open.
    pub fn pages(&self) -> Vec<SocketAddr> {
        self.host.pages()
    }

    /// Does what is due: takes HTTP connections and answers them, and moves the
    /// channels' datagrams.
    pub fn pump(&mut self) {
        let now = Instant::now();
        self.accept(now);
        let mut conns = std::mem::take(&mut self.conns);
        conns.retain_mut(|c| self.serve(c, now));
        self.conns = conns;
        loop {
            match self.udp.recv_from(&mut self.buf) {
                Ok((n, from)) => {
                    let from = lanyard_net::addrs::canonical(from);
                    self.host.receive(now, from, &self.buf[..n]);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                // An ICMP "port unreachable" from a page that went: nothing to read.
                Err(_) => break,
            }
        }
        self.flush(now);
    }

    /// Sends what the channels have to send, and keeps what the pages sent.
    fn flush(&mut self, now: Instant) {
        let polled = self.host.poll(now);
        for (to, bytes) in polled.transmit {
            let _ = self.udp.send_to(&bytes, to);
        }
        for (from, bytes) in polled.received {
            self.received.push_back((from, bytes, now));
        }
    }

    fn accept(&mut self, now: Instant) {
        while let Ok((stream, peer)) = self.http.accept() {
            if self.conns.len() >= MAX_CONNECTIONS || stream.set_nonblocking(true).is_err() {
                continue;
            }
            let local = stream
                .local_addr()
                .map(|a| lanyard_net::addrs::canonical(a).ip())
                .unwrap_or(peer.ip());
            self.conns.push(Conn {
                stream,
                peer: lanyard_net::addrs::canonical(peer).ip(),
                local,
                inbox: Vec::new(),
                outbox: Vec::new(),
                written: 0,
                since: now,
            });
        }
    }

    /// Reads, answers and writes one connection. Returns whether to keep it.
    fn serve(&mut self, c: &mut Conn, now: Instant) -> bool {
        if now.duration_since(c.since) > CONNECTION_TIME {
            return false;
        }
        if c.outbox.is_empty() {
            let mut chunk = [0u8; 4096];
            loop {
                match c.stream.read(&mut chunk) {
                    Ok(0) => return false,
                    Ok(n) => c.inbox.extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(_) => return false,
                }
                if c.inbox.len() > crate::http::MAX_HEAD + crate::http::MAX_BODY {
                    break;
                }
            }
            c.outbox = match Request::parse(&c.inbox) {
                Ok(None) => return true,
                Ok(Some(req)) => self.answer(&req, c.peer, c.local, now),
                Err(e) => response(
                    "400 Bad Request",
                    "text/plain",
                    false,
                    e.to_string().as_bytes(),
                ),
            };
        }
        while c.written < c.outbox.len() {
            match c.stream.write(&c.outbox[c.written..]) {
                Ok(n) => c.written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(_) => return false,
            }
        }
        false
    }

    fn answer(&mut self, req: &Request, peer: IpAddr, local: IpAddr, now: Instant) -> Vec<u8> {
        match (req.method.as_str(), req.path.as_str()) {
            ("POST", "/rtc") => match self.host.offer(now, peer, local, &req.body) {
                Ok(answer) => response("200 OK", "application/sdp", false, answer.as_bytes()),
                Err(e @ (WebError::Full(_) | WebError::Busy(_))) => response(
                    "503 Service Unavailable",
                    "text/plain",
                    false,
                    e.to_string().as_bytes(),
                ),
                Err(e) => response(
                    "400 Bad Request",
                    "text/plain",
                    false,
                    e.to_string().as_bytes(),
                ),
            },
            ("GET", path) => match self.site.get(path) {
                Some(f) if req.gzip => response("200 OK", f.content_type, true, &f.gzip),
                Some(f) => response("200 OK", f.content_type, false, &f.plain),
                None => response("404 Not Found", "text/plain", false, b"not here"),
            },
            _ => response(
                "405 Method Not Allowed",
                "text/plain",
                false,
                b"GET or POST /rtc",
            ),
        }
    }
}

impl Transport for WebTransport {
    fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr()
    }

    fn send(&mut self, to: SocketAddr, bytes: &[u8]) {
        if self.host.is_page(to) {
            self.host.send(to, bytes);
            for (to, bytes) in self.host.take_transmit() {
                let _ = self.udp.send_to(&bytes, to);
            }
        } else {
            self.inner.send(to, bytes);
        }
    }

    fn recv(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.recv_aged().map(|(from, bytes, _)| (from, bytes))
    }

    fn recv_aged(&mut self) -> Option<(SocketAddr, Vec<u8>, Duration)> {
        if let Some(d) = self.inner.recv_aged() {
            return Some(d);
        }
        if self.received.is_empty() {
            self.pump();
        }
        let (from, bytes, at) = self.received.pop_front()?;
        Some((from, bytes, at.elapsed()))
    }

    fn advance(&mut self, dt: f32) {
        self.inner.advance(dt);
    }

    fn wall_clock(&self) -> Option<Duration> {
        self.inner.wall_clock()
    }

    fn can_host(&self, peer: SocketAddr) -> bool {
        !self.host.is_page(peer) && self.inner.can_host(peer)
    }

    fn wait(&mut self, timeout: Duration) {
        self.pump();
        if self.received.is_empty() {
            self.inner.wait(timeout.min(PAGE_POLL));
            self.pump();
        }
    }
}
