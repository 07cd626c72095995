//! A session's claim, for a new process to take the session up again: where it plays, as
//! which client, and the token that proves it (a game keeps it on disk for the grace
//! window, so that a player whose game crashed or was killed comes back as itself).

use crate::crypto::Key;
use lanyard::ClientId;
use std::net::SocketAddr;

/// What a client needs to resume its session from another process
/// ([`NetManager::session_claim`](crate::NetManager::session_claim), then
/// [`NetManager::client_claiming`](crate::NetManager::client_claiming)).
///
/// It holds the session's resume token: whoever has it can take the session over, so keep
/// it where only its user reads it. It is never sent; a resume proves it under the new
/// handshake's key.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionClaim {
    pub(crate) server: SocketAddr,
    pub(crate) client: ClientId,
    pub(crate) token: Key,
    /// How long the server keeps the session after its client falls silent (ms).
    pub(crate) grace_ms: u32,
}

/// The first line of a claim's text.
const HEAD: &str = "lanyard session claim 1";

impl SessionClaim {
    /// The server (or host) the session is at.
    pub fn server(&self) -> SocketAddr {
        self.server
    }

    /// The session's client id there.
    pub fn client(&self) -> ClientId {
        self.client
    }

    /// How long (seconds) the server keeps the session once its client fell silent: a
    /// claim older than this and a timeout is stale.
    pub fn grace(&self) -> f64 {
        f64::from(self.grace_ms) / 1000.0
    }

    /// The claim as a few lines of text, for a file.
    pub fn to_text(&self) -> String {
        let token: String = self.token.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{HEAD}\nserver {}\nclient {}\ngrace_ms {}\ntoken {token}\n",
            self.server, self.client.0, self.grace_ms
        )
    }

    /// A claim from its text ([`to_text`](Self::to_text)); `None` if it is not one. The
    /// address is parsed as an address: nothing is looked up.
    pub fn parse(text: &str) -> Option<Self> {
        let mut lines = text.lines();
        if lines.next()? != HEAD {
            return None;
        }
        let mut field = |name: &str| {
            let line = lines.next()?;
            line.strip_prefix(name)?
                .strip_prefix(' ')
                .map(str::to_owned)
        };
        let server = field("server")?.parse().ok()?;
        let client = ClientId(field("client")?.parse().ok()?);
        let grace_ms = field("grace_ms")?.parse().ok()?;
        let hex = field("token")?;
        if hex.len() != 64 || !hex.is_ascii() {
            return None;
        }
        let mut token = [0u8; 32];
        for (i, b) in token.iter_mut().enumerate() {
            *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(SessionClaim {
            server,
            client,
            token,
            grace_ms,
        })
    }
}

impl std::fmt::Debug for SessionClaim {
    /// The token stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionClaim")
            .field("server", &self.server)
            .field("client", &self.client)
            .field("grace_ms", &self.grace_ms)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::SessionClaim;
    use lanyard::ClientId;

    fn claim() -> SessionClaim {
        SessionClaim {
            server: "[::1]:47800".parse().expect("an address"),
            client: ClientId(7),
            token: std::array::from_fn(|i| (i * 37) as u8),
            grace_ms: 30_000,
        }
    }

    #[test]
    fn a_claim_reads_back_from_its_text() {
        let c = claim();
        assert_eq!(SessionClaim::parse(&c.to_text()), Some(c));
    }

    #[test]
    fn a_claim_s_text_cut_short_or_changed_is_no_claim() {
        let text = claim().to_text();
        for cut in 0..text.len() - 1 {
            assert_eq!(SessionClaim::parse(&text[..cut]), None, "cut at {cut}");
        }
        assert_eq!(
            SessionClaim::parse(&text.replace("client 7", "client x")),
            None
        );
        assert_eq!(
            SessionClaim::parse(&text.replace("token ", "token é")),
            None
        );
        assert_eq!(
            SessionClaim::parse(&text.replace("[::1]", "localhost")),
            None
        );
    }

    #[test]
    fn a_claim_s_debug_keeps_its_token_out() {
        let c = claim();
        let hex: String = c.token.iter().map(|b| format!("{b:02x}")).collect();
        assert!(!format!("{c:?}").contains(&hex[..8]));
    }
}
