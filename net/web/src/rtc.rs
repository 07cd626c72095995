//! [`RtcHost`]: the pages' WebRTC data channels, sans-IO. It takes offers, datagrams off
//! one UDP port and the time, and gives answers, datagrams to send on that port, and the
//! pages' own datagrams; it never touches a socket or a clock.
//!
//! The host is ICE-lite: it has one host candidate (the address the page was served
//! from, at the WebRTC port) and answers the page's connectivity checks, never starting
//! its own. A page is known by the address its checks come from once the first arrives:
//! that is the address the network layer sees it at, as it sees a native client at its
//! socket's.

use crate::error::WebError;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use str0m::change::SdpOffer;
use str0m::channel::ChannelId;
use str0m::net::{Protocol, Receive};
use str0m::{Candidate, Event, IceConnectionState, Input, Output, Rtc};

/// The limits an [`RtcHost`] keeps to.
#[derive(Debug, Clone)]
pub struct RtcLimits {
    /// The most pages at once, open or opening.
    pub max_pages: usize,
    /// The most pages one address may have opening at once (a machine that sends offers
    /// without end does not hold every place).
    pub max_opening_per_address: usize,
    /// How long an offer may take to open its channel before it is dropped. On a LAN a
    /// channel opens within a second; a page whose channel has not opened asks for a fresh
    /// one after 3 s, so a page has at most two offers waiting here at once.
    pub open_within: Duration,
    /// How long a page may stay silent before it is dropped. Longer than the game's own
    /// timeout and grace, so that the network layer, not the channel, decides a session's
    /// end, and a page whose link comes back finds its channel still there.
    pub silent_for: Duration,
    /// The largest offer taken, in bytes.
    pub max_offer: usize,
}

impl Default for RtcLimits {
    fn default() -> Self {
        RtcLimits {
            max_pages: 32,
            max_opening_per_address: 4,
            open_within: Duration::from_secs(5),
            silent_for: Duration::from_secs(60),
            max_offer: 16 * 1024,
        }
    }
}

/// One page: its WebRTC session and what is known of it.
struct Page {
    rtc: Rtc,
    /// Where the page reaches this host: the host candidate it was given.
    local: SocketAddr,
    /// The address the page's offer came over HTTP from.
    asked_from: IpAddr,
    /// The address its datagrams come from, once its first connectivity check arrived.
    remote: Option<SocketAddr>,
    /// Its data channel, once open.
    channel: Option<ChannelId>,
    offered_at: Instant,
    heard_at: Instant,
}

impl Page {
    fn open(&self) -> bool {
        self.channel.is_some()
    }
}

/// What one [`RtcHost::poll`] gave.
#[derive(Debug, Default)]
pub struct Polled {
    /// Datagrams for the WebRTC UDP port to send: (to, bytes).
    pub transmit: Vec<(SocketAddr, Vec<u8>)>,
    /// What the pages sent over their channels: (page, bytes).
    pub received: Vec<(SocketAddr, Vec<u8>)>,
    /// When to poll again at the latest.
    pub next: Option<Instant>,
}

/// The pages' data channels, on one UDP port (see the module's documentation).
pub struct RtcHost {
    port: u16,
    limits: RtcLimits,
    pages: Vec<Page>,
    /// What a page gave while it was sent to (see [`send`](Self::send)): its transmits,
    /// until taken; anything else, until the next poll.
    pending: Polled,
    provider: Arc<str0m::crypto::CryptoProvider>,
}

impl RtcHost {
    /// A host whose pages reach its WebRTC UDP socket at `port`.
    pub fn new(port: u16, limits: RtcLimits) -> RtcHost {
        RtcHost {
            port,
            limits,
            pages: Vec::new(),
            pending: Polled::default(),
            provider: Arc::new(str0m::crypto::from_feature_flags()),
        }
    }

    /// Takes a page's offer (its SDP, as text), which came over HTTP from `from` to this
    /// host's `local` address, and returns the answer's SDP. Refused when the host is
    /// full, when `from` has too many offers opening, or when the offer does not parse.
    pub fn offer(
        &mut self,
        now: Instant,
        from: IpAddr,
        local: IpAddr,
        sdp: &[u8],
    ) -> Result<String, WebError> {
        self.expire(now);
        if sdp.len() > self.limits.max_offer {
            return Err(WebError::BadOffer(format!("{} bytes", sdp.len())));
        }
        if self.pages.len() >= self.limits.max_pages {
            return Err(WebError::Full(self.limits.max_pages));
        }
        let opening = self
            .pages
            .iter()
            .filter(|p| !p.open() && p.asked_from == from)
            .count();
        if opening >= self.limits.max_opening_per_address {
            return Err(WebError::Busy(from));
        }
        let text = std::str::from_utf8(sdp).map_err(|_| WebError::BadOffer("not UTF-8".into()))?;
        let offer =
            SdpOffer::from_sdp_string(text).map_err(|e| WebError::BadOffer(e.to_string()))?;
        let mut rtc = Rtc::builder()
            .set_ice_lite(true)
            .set_crypto_provider(self.provider.clone())
            .build(now);
        let local = SocketAddr::new(local, self.port);
        let candidate =
            Candidate::host(local, "udp").map_err(|e| WebError::BadOffer(e.to_string()))?;
        rtc.add_local_candidate(candidate);
        let answer = rtc
            .sdp_api()
            .accept_offer(offer)
            .map_err(|e| WebError::BadOffer(e.to_string()))?;
        self.pages.push(Page {
            rtc,
            local,
            asked_from: from,
            remote: None,
            channel: None,
            offered_at: now,
            heard_at: now,
        });
        Ok(answer.to_sdp_string())
    }

    /// Takes a datagram that arrived on the WebRTC port from `source`. Returns whether a
    /// page took it (a stranger's, or junk, is dropped).
    pub fn receive(&mut self, now: Instant, source: SocketAddr, bytes: &[u8]) -> bool {
        for page in &mut self.pages {
            let Ok(contents) = bytes.try_into() else {
                return false;
            };
            // A page already known takes only its own address's datagrams.
            if page.remote.is_some_and(|r| r != source) {
                continue;
            }
            let input = Input::Receive(
                now,
                Receive {
                    proto: Protocol::Udp,
                    source,
                    destination: page.local,
                    contents,
                },
            );
            if !page.rtc.accepts(&input) {
                continue;
            }
            if page.rtc.handle_input(input).is_err() {
                page.rtc.disconnect();
                return true;
            }
            page.remote.get_or_insert(source);
            page.heard_at = now;
            return true;
        }
        tracing::debug!(%source, len = bytes.len(), "a datagram no page takes");
        false
    }

    /// Lets time pass to `now` and gathers what every page has to give.
    pub fn poll(&mut self, now: Instant) -> Polled {
        let mut out = std::mem::take(&mut self.pending);
        for page in &mut self.pages {
            if page.rtc.handle_input(Input::Timeout(now)).is_err() {
                page.rtc.disconnect();
            }
            drain(page, &mut out);
        }
        self.expire(now);
        out
    }

    /// Sends `bytes` to the page at `to` over its channel. Returns whether there was an
    /// open channel to send on. The datagrams that carry it wait in
    /// [`take_transmit`](Self::take_transmit) (only this page is asked: a broadcast to
    /// every page does not poll every page once per page).
    pub fn send(&mut self, to: SocketAddr, bytes: &[u8]) -> bool {
        let Some(i) = self.pages.iter().position(|p| p.remote == Some(to)) else {
            return false;
        };
        let page = &mut self.pages[i];
        let Some(id) = page.channel else {
            return false;
        };
        let written = match page.rtc.channel(id) {
            Some(mut ch) => ch.write(true, bytes).unwrap_or(false),
            None => false,
        };
        if written {
            drain(page, &mut self.pending);
        }
        written
    }

    /// The datagrams for the WebRTC UDP port that sends made since this was last asked.
    pub fn take_transmit(&mut self) -> Vec<(SocketAddr, Vec<u8>)> {
        std::mem::take(&mut self.pending.transmit)
    }

    /// Whether `addr` is a page's (its channel open), so that datagrams to it go over
    /// its channel and not the game's socket.
    pub fn is_page(&self, addr: SocketAddr) -> bool {
        self.pages
            .iter()
            .any(|p| p.remote == Some(addr) && p.open())
    }

    /// The pages' addresses whose channels are open.
    pub fn pages(&self) -> Vec<SocketAddr> {
        self.pages
            .iter()
            .filter(|p| p.open())
            .filter_map(|p| p.remote)
            .collect()
    }

    /// Offers taken and not yet dropped, open or opening.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Drops the pages that died, never opened in time, or fell silent too long.
    fn expire(&mut self, now: Instant) {
        let limits = &self.limits;
        self.pages.retain(|p| {
            let unopened = !p.open() && now.duration_since(p.offered_at) > limits.open_within;
            let silent = now.duration_since(p.heard_at) > limits.silent_for;
            let gone = !p.rtc.is_alive() || unopened || silent;
            if gone {
                tracing::debug!(remote = ?p.remote, unopened, silent, "a page's channel is gone");
            }
            !gone
        });
    }
}

/// Everything `page` has to give, into `out`.
fn drain(page: &mut Page, out: &mut Polled) {
    loop {
        match page.rtc.poll_output() {
            Ok(Output::Timeout(t)) => {
                out.next = Some(out.next.map_or(t, |n| n.min(t)));
                return;
            }
            Ok(Output::Transmit(t)) => out.transmit.push((t.destination, t.contents.to_vec())),
            Ok(Output::Event(e)) => event(page, e, out),
            Err(_) => {
                page.rtc.disconnect();
                return;
            }
        }
    }
}

fn event(page: &mut Page, e: Event, out: &mut Polled) {
    match e {
        Event::ChannelOpen(id, _) => page.channel = Some(id),
        Event::ChannelClose(id) if page.channel == Some(id) => page.channel = None,
        Event::ChannelData(d) if Some(d.id) == page.channel => {
            if let Some(remote) = page.remote {
                out.received.push((remote, d.data));
            }
        }
        // A page whose link goes quiet is kept: the network layer times its session out
        // (and keeps it for a resume), not the channel.
        Event::IceConnectionStateChange(IceConnectionState::Disconnected) => {
            tracing::debug!(remote = ?page.remote, "a page's link went quiet");
        }
        _ => {}
    }
}
