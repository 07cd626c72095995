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

use crate::error::NetError;
use crate::wire::{self, PROTOCOL_VERSION};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// The discovery port when none is given.
pub const DEFAULT_PORT: u16 = 47800;

// The sockets: a responder and browsing (not in a browser, which has no UDP).
#[cfg(not(target_arch = "wasm32"))]
mod lan;
#[cfg(not(target_arch = "wasm32"))]
pub use lan::{Responder, browse, browse_each};
#[cfg(target_arch = "wasm32")]
pub use no_lan::Responder;

/// A browser's page has no UDP socket to answer discovery on: its responder never binds.
#[cfg(target_arch = "wasm32")]
mod no_lan {
    use super::ServerInfo;
    use crate::error::NetError;
    use std::net::SocketAddr;

    /// Answers discovery requests: not in a browser, where [`Responder::bind`] refuses.
    pub struct Responder;

    impl Responder {
        /// Refuses: a page has no UDP socket.
        pub fn bind(discovery: SocketAddr) -> Result<Self, NetError> {
            Err(NetError::Io(format!(
                "a browser cannot answer discovery on {discovery}"
            )))
        }

        /// Answers nothing.
        pub fn poll(&mut self, info: &ServerInfo) -> usize {
            let _ = info;
            0
        }
    }
}

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
    /// The port its game's page is served on, for players in a browser (none: no page).
    pub web_port: Option<u16>,
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

#[cfg(test)]
mod tests {
    use super::{
        PROTOCOL_VERSION, REQUEST_LEN, ServerInfo, answer, answer_to, is_request, parse_answer,
        request,
    };

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
            web_port: None,
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
}
