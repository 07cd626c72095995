//! A peer's path onto the hub, with faults the explorer turns on and off while the game
//! owns it: [`Knobs`] behind a shared handle, and [`FaultyLink`], the transport.

use lanyard_net::{Conditioned, Conditions, HubEndpoint, Transport};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::rc::Rc;

/// What is wrong with one peer's path right now.
#[derive(Debug, Clone, PartialEq)]
pub struct Knobs {
    /// Loss, duplication, reordering and delay of what it sends.
    pub conditions: Conditions,
    /// Addresses nothing it sends reaches.
    pub cut: BTreeSet<SocketAddr>,
    /// The longest datagram its path takes (none: any).
    pub mtu: Option<usize>,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            conditions: Conditions::PERFECT,
            cut: BTreeSet::new(),
            mtu: None,
        }
    }
}

/// A shared handle on a peer's [`Knobs`].
pub type KnobHandle = Rc<RefCell<Knobs>>;

/// What a [`FaultyLink`] dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Datagrams to an address cut off.
    pub cut: u64,
    /// Datagrams over the path's MTU.
    pub mtu: u64,
}

/// A hub endpoint whose outgoing datagrams go through a seeded conditioner, minus what a
/// partition or the MTU drops; the knobs may change between any two ticks.
pub struct FaultyLink {
    inner: Conditioned<HubEndpoint>,
    knobs: KnobHandle,
    applied: Conditions,
    dropped: Rc<RefCell<Dropped>>,
}

impl FaultyLink {
    /// A link over `endpoint`, drawing from `seed`, with the knobs `knobs` and counting
    /// what it drops in `dropped`.
    pub fn new(
        endpoint: HubEndpoint,
        seed: u64,
        knobs: KnobHandle,
        dropped: Rc<RefCell<Dropped>>,
    ) -> FaultyLink {
        FaultyLink {
            inner: Conditioned::new(endpoint, Conditions::PERFECT, seed),
            knobs,
            applied: Conditions::PERFECT,
            dropped,
        }
    }
}

impl Transport for FaultyLink {
    fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr()
    }

    fn send(&mut self, to: SocketAddr, bytes: &[u8]) {
        let knobs = self.knobs.borrow();
        if knobs.conditions != self.applied {
            self.applied = knobs.conditions;
            self.inner.set_conditions(knobs.conditions);
        }
        if knobs.cut.contains(&to) {
            self.dropped.borrow_mut().cut += 1;
            return;
        }
        if knobs.mtu.is_some_and(|m| bytes.len() > m) {
            self.dropped.borrow_mut().mtu += 1;
            return;
        }
        drop(knobs);
        self.inner.send(to, bytes);
    }

    fn recv(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.inner.recv()
    }

    fn advance(&mut self, dt: f32) {
        self.inner.advance(dt);
    }
}
