//! Lanyard for browsers: a host serves its game's page, and the page plays over a WebRTC
//! data channel, unreliable and unordered, as a native client plays over UDP.
//!
//! A page served over plain HTTP from a LAN address is not a secure context, so it has no
//! WebTransport; a data channel it has. Its offer and the host's answer travel over HTTP
//! on the same port the page came from.
//!
//! * [`RtcHost`]: the channels, sans-IO (ICE-lite, DTLS and SCTP through `str0m`), with
//!   time as a parameter.
//! * [`http`]: just enough HTTP/1.1, sans-IO.
//! * [`Site`]: the page's files, compressed once.
//! * [`WebTransport`]: the edge, a [`lanyard_net::Transport`] that puts the page and its
//!   channels beside a game's socket. The network layer sees a page as a peer at the
//!   address its channel's datagrams come from.
#![warn(missing_docs)]

pub mod error;
pub mod http;
mod rtc;
mod site;
mod transport;

pub use error::WebError;
pub use rtc::{Polled, RtcHost, RtcLimits};
pub use site::{File, Site};
pub use transport::WebTransport;
