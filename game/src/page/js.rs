//! The calls into the page's script (`game/web/lanyard.js`, registered with miniquad's
//! loader as the plugin `lanyard`), and the data channel as a [`Transport`].

use lanyard_net::{Entropy, Transport};
use std::net::SocketAddr;
use std::time::Duration;

unsafe extern "C" {
    fn lanyard_random(ptr: *mut u8, len: u32);
    fn lanyard_query(ptr: *mut u8, cap: u32) -> u32;
    fn lanyard_host(ptr: *mut u8, cap: u32) -> u32;
    fn lanyard_console(ptr: *const u8, len: u32);
    fn lanyard_shot(width: u32, height: u32, ptr: *const u8, len: u32);
    fn lanyard_now() -> f64;
    fn lanyard_rtc_open();
    fn lanyard_rtc_state() -> i32;
    fn lanyard_rtc_send(ptr: *const u8, len: u32);
    fn lanyard_rtc_recv(ptr: *mut u8, cap: u32) -> i32;
    fn lanyard_rtc_age() -> f64;
}

/// The plugin's version, which miniquad's loader checks against the script's.
#[unsafe(no_mangle)]
pub extern "C" fn lanyard_crate_version() -> u32 {
    1
}

/// A text the script writes into a buffer of ours (growing it if it did not fit).
fn text(call: unsafe extern "C" fn(*mut u8, u32) -> u32) -> String {
    let mut buf = vec![0u8; 256];
    // SAFETY: the script writes at most `cap` bytes at `ptr`, and returns the whole length.
    let n = unsafe { call(buf.as_mut_ptr(), buf.len() as u32) } as usize;
    if n > buf.len() {
        buf.resize(n, 0);
        // SAFETY: as above, with room for all of it.
        unsafe { call(buf.as_mut_ptr(), buf.len() as u32) };
    }
    buf.truncate(n);
    String::from_utf8_lossy(&buf).into_owned()
}

/// 32 bytes of the page's randomness (`crypto.getRandomValues`).
pub fn random() -> Entropy {
    let mut e = [0u8; 32];
    // SAFETY: the script fills exactly `len` bytes at `ptr`.
    unsafe { lanyard_random(e.as_mut_ptr(), e.len() as u32) };
    e
}

/// The page's query string (`location.search`).
pub fn query() -> String {
    text(lanyard_query)
}

/// Where the page was served from (`location.host`).
pub fn host() -> String {
    text(lanyard_host)
}

/// A line to the page's console.
pub fn console(line: &str) {
    // SAFETY: the script reads `len` bytes at `ptr`.
    unsafe { lanyard_console(line.as_ptr(), line.len() as u32) };
}

/// The screen's RGBA pixels (`width` by `height`, bottom row first) to the page's
/// console as a PNG.
pub fn shot(width: u32, height: u32, rgba: &[u8]) {
    // SAFETY: the script reads `len` bytes at `ptr`.
    unsafe { lanyard_shot(width, height, rgba.as_ptr(), rgba.len() as u32) };
}

/// Milliseconds on the page's clock (`performance.now()`: since the page was opened).
pub fn now_ms() -> f64 {
    // SAFETY: no arguments.
    unsafe { lanyard_now() }
}

/// How long a channel may take to open before a fresh one is asked for, in milliseconds.
const OPEN_WITHIN_MS: f64 = 3000.0;
/// How long a channel that carried the host's datagrams may then carry nothing before a
/// fresh one is asked for: the host's heartbeats come much more often. A channel whose
/// link was cut stays "open" to the page for many seconds, and the host keeps its end; a
/// fresh one comes up at once when the link is back, and the session resumes over it.
///
/// Only a channel that carried something is replaced for being quiet: a fresh one hears
/// nothing until the session resumes over it (the host does not know its address yet),
/// and replacing it then would replace every channel before a resume could finish on it
/// (seen in CI: a page stalled by load churned channels and never resumed).
const QUIET_MS: f64 = 2500.0;

/// The data channel to the host that served the page, as a [`Transport`]: every datagram
/// goes to the host, and every one comes from it (at `server`).
pub struct PageChannel {
    server: SocketAddr,
    opened_at: f64,
    heard_at: f64,
    buf: Vec<u8>,
}

impl PageChannel {
    /// Opens a channel to the host, whose game the network layer knows at `server`.
    pub fn open(server: SocketAddr) -> PageChannel {
        // SAFETY: no arguments.
        unsafe { lanyard_rtc_open() };
        let now = now_ms();
        PageChannel {
            server,
            opened_at: now,
            heard_at: now,
            buf: vec![0; lanyard_net::MAX_DATAGRAM + 64],
        }
    }

    /// Asks for a fresh channel if this one never opened in time or went quiet.
    fn keep_open(&mut self) {
        let now = now_ms();
        // SAFETY: no arguments.
        let state = unsafe { lanyard_rtc_state() };
        let stuck = state == 0 && now - self.opened_at > OPEN_WITHIN_MS;
        let carried = self.heard_at > self.opened_at;
        let quiet = state == 1 && carried && now - self.heard_at > QUIET_MS;
        if state == 2 || stuck || quiet {
            // SAFETY: no arguments.
            unsafe { lanyard_rtc_open() };
            self.opened_at = now;
        }
    }
}

impl Transport for PageChannel {
    fn local_addr(&self) -> SocketAddr {
        SocketAddr::from(([0, 0, 0, 0], 0))
    }

    fn send(&mut self, _to: SocketAddr, bytes: &[u8]) {
        self.keep_open();
        // SAFETY: the script reads `len` bytes at `ptr`.
        unsafe { lanyard_rtc_send(bytes.as_ptr(), bytes.len() as u32) };
    }

    fn recv(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.recv_aged().map(|(from, bytes, _)| (from, bytes))
    }

    fn recv_aged(&mut self) -> Option<(SocketAddr, Vec<u8>, Duration)> {
        // SAFETY: the script writes at most `cap` bytes at `ptr`, or none (-1).
        let n = unsafe { lanyard_rtc_recv(self.buf.as_mut_ptr(), self.buf.len() as u32) };
        if n < 0 {
            return None;
        }
        self.heard_at = now_ms();
        // SAFETY: no arguments.
        let age = unsafe { lanyard_rtc_age() }.max(0.0);
        let bytes = self.buf[..(n as usize).min(self.buf.len())].to_vec();
        Some((self.server, bytes, Duration::from_secs_f64(age / 1000.0)))
    }

    fn wait(&mut self, _timeout: Duration) {}
}
