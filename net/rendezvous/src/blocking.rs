//! The blocking edge of a player's side: an exchange run over a real UDP socket against
//! the wall clock (not in a browser, which has no UDP).

use crate::Addrs;
use crate::client::{Exchange, Joiner, Lister, Path};
use crate::error::RendezvousError;
use lanyard_net::Transport;
use lanyard_net::discovery::ServerInfo;
use lanyard_net::udp::UdpTransport;
use std::time::{Duration, Instant};

/// Runs `e` over `socket` against the wall clock until it has an outcome. Datagrams that
/// are not rendezvous datagrams are dropped. Edge code: it blocks, for up to
/// [`JOIN_TIMEOUT`](crate::JOIN_TIMEOUT) plus [`PUNCH_TIMEOUT`](crate::PUNCH_TIMEOUT) seconds.
pub fn drive<E: Exchange>(
    socket: &mut UdpTransport,
    e: &mut E,
) -> Result<E::Outcome, RendezvousError> {
    let start = Instant::now();
    loop {
        let now = start.elapsed().as_secs_f64();
        e.poll(now);
        for (to, bytes) in e.drain_outgoing() {
            socket.send(to, &bytes);
        }
        if let Some(outcome) = e.outcome() {
            return outcome;
        }
        socket.wait(Duration::from_millis(10));
        while let Some((from, bytes)) = socket.recv() {
            e.receive(start.elapsed().as_secs_f64(), from, &bytes);
        }
    }
}

/// The games registered at the rendezvous server at `rendezvous`, by name. Blocks for at
/// most [`JOIN_TIMEOUT`](crate::JOIN_TIMEOUT) seconds.
pub fn list(rendezvous: impl Into<Addrs>) -> Result<Vec<ServerInfo>, RendezvousError> {
    let rendezvous = rendezvous.into();
    let mut socket = UdpTransport::bind(rendezvous.local())?;
    drive(&mut socket, &mut Lister::new(rendezvous))
}

/// Opens a path from `socket` to the game registered as `name` at `rendezvous`, punched or
/// relayed, and returns it: run the game's handshake to its peer from the same socket,
/// through its [`Path::routes`](crate::Path::routes). Blocks for at most [`JOIN_TIMEOUT`](crate::JOIN_TIMEOUT) plus
/// [`PUNCH_TIMEOUT`](crate::PUNCH_TIMEOUT) seconds.
pub fn punch(
    socket: &mut UdpTransport,
    rendezvous: impl Into<Addrs>,
    name: &str,
    nonce: u64,
) -> Result<Path, RendezvousError> {
    drive(socket, &mut Joiner::new(rendezvous, name, nonce))
}
