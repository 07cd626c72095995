//! The web layer's one error type.

use std::net::IpAddr;

/// What went wrong serving a page or opening its channel.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WebError {
    /// The offer was not an SDP offer this host takes.
    #[error("the offer was refused: {0}")]
    BadOffer(String),
    /// Every place for a page is taken.
    #[error("the host has channels for {0} pages, all taken")]
    Full(usize),
    /// This address has too many channels opening at once.
    #[error("{0} has too many channels opening at once")]
    Busy(IpAddr),
    /// An HTTP request this host does not read.
    #[error("a bad request: {0}")]
    BadRequest(&'static str),
    /// The page's files could not be read.
    #[error("{0}")]
    Site(String),
    /// A socket failed.
    #[error("{0}")]
    Io(String),
}

impl From<std::io::Error> for WebError {
    fn from(e: std::io::Error) -> Self {
        WebError::Io(e.to_string())
    }
}
