//! The host's data channels against a str0m peer standing in for the page, on a virtual
//! clock: no socket, no browser.

use lanyard_web::{RtcHost, RtcLimits, WebError};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use str0m::change::SdpAnswer;
use str0m::channel::{ChannelConfig, ChannelId, Reliability};
use str0m::net::{Protocol, Receive};
use str0m::{Candidate, Event, Input, Output, Rtc};

const HOST_PORT: u16 = 47810;
const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

fn host_addr() -> SocketAddr {
    SocketAddr::new(LOOPBACK, HOST_PORT)
}

/// A page: a str0m peer with one unordered, unreliable channel, as the page opens.
struct Page {
    rtc: Rtc,
    addr: SocketAddr,
    channel: ChannelId,
    open: bool,
    got: Vec<Vec<u8>>,
}

impl Page {
    /// Offers to `host` at `now`; the answer (or the refusal) comes back.
    fn offer(host: &mut RtcHost, now: Instant, port: u16) -> Result<Page, WebError> {
        let addr = SocketAddr::new(LOOPBACK, port);
        let mut rtc = Rtc::builder()
            .set_crypto_provider(Arc::new(str0m::crypto::from_feature_flags()))
            .build(now);
        rtc.add_local_candidate(Candidate::host(addr, "udp").unwrap());
        let mut change = rtc.sdp_api();
        let channel = change.add_channel_with_config(ChannelConfig {
            label: "lanyard".into(),
            ordered: false,
            reliability: Reliability::MaxRetransmits { retransmits: 0 },
            ..ChannelConfig::default()
        });
        let (offer, pending) = change.apply().unwrap();
        let answer = host.offer(now, LOOPBACK, LOOPBACK, offer.to_sdp_string().as_bytes())?;
        let answer = SdpAnswer::from_sdp_string(&answer).unwrap();
        rtc.sdp_api().accept_answer(pending, answer).unwrap();
        Ok(Page {
            rtc,
            addr,
            channel,
            open: false,
            got: Vec::new(),
        })
    }

    /// What the page sends now (to the host's port).
    fn outgoing(&mut self, now: Instant) -> Vec<Vec<u8>> {
        self.rtc.handle_input(Input::Timeout(now)).unwrap();
        let mut out = Vec::new();
        loop {
            match self.rtc.poll_output().unwrap() {
                Output::Timeout(_) => return out,
                Output::Transmit(t) => out.push(t.contents.to_vec()),
                Output::Event(Event::ChannelOpen(..)) => self.open = true,
                Output::Event(Event::ChannelData(d)) => self.got.push(d.data),
                Output::Event(_) => {}
            }
        }
    }

    fn take(&mut self, now: Instant, bytes: &[u8]) {
        let input = Input::Receive(
            now,
            Receive {
                proto: Protocol::Udp,
                source: host_addr(),
                destination: self.addr,
                contents: bytes.try_into().unwrap(),
            },
        );
        self.rtc.handle_input(input).unwrap();
    }

    fn send(&mut self, bytes: &[u8]) {
        let mut ch = self.rtc.channel(self.channel).expect("the channel is open");
        ch.write(true, bytes).unwrap();
    }
}

/// Moves datagrams both ways for `ms` milliseconds of virtual time, 5 ms a step; what
/// the pages sent over their channels comes back.
fn run(
    host: &mut RtcHost,
    pages: &mut [&mut Page],
    now: &mut Instant,
    ms: u64,
) -> Vec<(SocketAddr, Vec<u8>)> {
    let mut received = Vec::new();
    for _ in 0..ms / 5 {
        *now += Duration::from_millis(5);
        for page in pages.iter_mut() {
            for d in page.outgoing(*now) {
                host.receive(*now, page.addr, &d);
            }
        }
        let polled = host.poll(*now);
        received.extend(polled.received);
        for (to, bytes) in polled.transmit {
            if let Some(p) = pages.iter_mut().find(|p| p.addr == to) {
                p.take(*now, &bytes);
            }
        }
    }
    received
}

/// A host and a page whose channel opened (two seconds of virtual time).
fn opened(port: u16) -> (Instant, RtcHost, Page) {
    let mut now = Instant::now();
    let mut host = RtcHost::new(HOST_PORT, RtcLimits::default());
    let mut page = Page::offer(&mut host, now, port).unwrap();
    run(&mut host, &mut [&mut page], &mut now, 2000);
    assert!(page.open, "the page's channel opened");
    (now, host, page)
}

/// An offer's SDP with one channel, from a peer nobody answers.
fn bare_offer(now: Instant) -> String {
    let mut rtc = Rtc::builder()
        .set_crypto_provider(Arc::new(str0m::crypto::from_feature_flags()))
        .build(now);
    let mut change = rtc.sdp_api();
    change.add_channel("lanyard".into());
    change.apply().unwrap().0.to_sdp_string()
}

#[test]
fn a_page_opens_its_channel_and_datagrams_cross_both_ways() {
    let (mut now, mut host, mut page) = opened(50001);
    assert_eq!(
        host.pages(),
        [page.addr],
        "the host knows the page by its address"
    );
    assert!(host.is_page(page.addr));

    page.send(b"hello host");
    let got = run(&mut host, &mut [&mut page], &mut now, 100);
    assert_eq!(got, [(page.addr, b"hello host".to_vec())]);

    assert!(host.send(page.addr, b"hello page"));
    run(&mut host, &mut [&mut page], &mut now, 100);
    assert_eq!(page.got, [b"hello page".to_vec()]);
    assert!(
        !host.send(SocketAddr::new(LOOPBACK, 1), b"nobody"),
        "no channel there"
    );
}

#[test]
fn a_quiet_link_keeps_its_channel_and_a_page_silent_a_minute_is_dropped() {
    let (mut now, mut host, mut page) = opened(50002);
    // Ten seconds with nothing crossing (the page's link cut).
    now += Duration::from_secs(10);
    host.poll(now);
    run(&mut host, &mut [&mut page], &mut now, 2000);
    page.send(b"back");
    let got = run(&mut host, &mut [&mut page], &mut now, 100);
    assert_eq!(
        got,
        [(page.addr, b"back".to_vec())],
        "the channel carries data again"
    );
    // A minute of silence: the page is gone.
    now += Duration::from_secs(61);
    host.poll(now);
    assert!(host.is_empty(), "a page silent past the limit is dropped");
}

#[test]
fn offers_are_capped_in_all_and_per_address_and_unopened_ones_go() {
    let now = Instant::now();
    let limits = RtcLimits {
        max_pages: 6,
        ..RtcLimits::default()
    };
    let mut host = RtcHost::new(HOST_PORT, limits);
    for n in 0..4 {
        Page::offer(&mut host, now, 50100 + n).unwrap();
    }
    assert!(matches!(
        Page::offer(&mut host, now, 50200),
        Err(WebError::Busy(_))
    ));
    // Another machine may still offer, until every place is taken.
    let other = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
    let sdp = |host: &mut RtcHost| host.offer(now, other, LOOPBACK, bare_offer(now).as_bytes());
    assert!(sdp(&mut host).is_ok());
    assert!(sdp(&mut host).is_ok());
    assert_eq!(sdp(&mut host), Err(WebError::Full(6)));
    // Five seconds unopened: all go.
    host.poll(now + Duration::from_secs(6));
    assert!(host.is_empty());
}

#[test]
fn cut_offers_and_junk_datagrams_are_refused_and_the_channel_still_works() {
    let mut now = Instant::now();
    let mut host = RtcHost::new(HOST_PORT, RtcLimits::default());
    let whole = bare_offer(now).into_bytes();
    for cut in (0..whole.len()).step_by(7) {
        // Whatever a cut offer gives, it is not a panic; most are refused.
        let _ = host.offer(now, LOOPBACK, LOOPBACK, &whole[..cut]);
        host.poll(now + Duration::from_secs(11));
    }
    assert!(
        host.offer(now, LOOPBACK, LOOPBACK, b"\xff\x00junk")
            .is_err()
    );
    host.poll(now + Duration::from_secs(11));
    assert!(host.is_empty());

    let mut page = Page::offer(&mut host, now, 50003).unwrap();
    run(&mut host, &mut [&mut page], &mut now, 2000);
    assert!(page.open, "the page's channel opened");
    let mut seed = 7u32;
    for n in 0..400 {
        let len = (seed % 300) as usize;
        let junk: Vec<u8> = (0..len)
            .map(|i| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (seed >> 16) as u8 ^ i as u8
            })
            .collect();
        // From a stranger, and from the page's own address.
        let from = match n % 2 {
            0 => SocketAddr::new(LOOPBACK, 40000),
            _ => page.addr,
        };
        host.receive(now, from, &junk);
    }
    host.poll(now);
    page.send(b"still here");
    let got = run(&mut host, &mut [&mut page], &mut now, 100);
    assert_eq!(got, [(page.addr, b"still here".to_vec())]);
}
