//! Starting a game on a real UDP socket: a server on its port, a client by address, by
//! name through a rendezvous server (not in a browser, whose page has a data channel).

use super::claims::ClaimSlot;
use super::{Game, Options, entropy};
use lanyard_net::Entropy;
use lanyard_net::udp::UdpTransport;
use lanyard_rendezvous::{self as rendezvous, Addrs, Path};
use std::net::SocketAddr;

impl Game {
    /// A server. With `host_player`, the host plays too, under that name.
    pub fn server(options: Options, host_player: Option<String>) -> Result<Game, String> {
        // IPv6 and IPv4 alike, where the system allows.
        let socket = UdpTransport::bind_any(options.port)
            .map_err(|e| format!("cannot listen on UDP port {}: {e}", options.port))?;
        match options.web {
            Some(port) => {
                let web = crate::game::web::serve(Box::new(socket), port)?;
                let options = Options {
                    web: Some(web.web_port()),
                    ..options
                };
                Self::server_on(options, host_player, web)
            }
            None => Self::server_on(options, host_player, socket),
        }
    }

    /// A client of the server at `server`, playing as `options.name`.
    /// If `options.sessions` names a folder, the game keeps its session's claim there
    /// ([`claims`](crate::game::claims)), and takes up the claim an earlier run kept for
    /// `server`, if one did.
    pub fn client(options: Options, server: SocketAddr, entropy: Entropy) -> Result<Game, String> {
        let socket = Self::client_socket(server)?;
        let slot = options
            .sessions
            .as_deref()
            .and_then(|dir| ClaimSlot::take(dir, server));
        let Some((slot, claim)) = slot else {
            return Self::client_on(options, socket, server, entropy);
        };
        if claim.is_some() {
            tracing::info!(
                "taking up the session an earlier run kept in {}",
                slot.path().display()
            );
        }
        let mut game =
            Self::client_claiming_on(options, socket, (server, claim.as_ref()), entropy)?;
        game.claim_slot = Some(slot);
        Ok(game)
    }

    /// A socket for a client talking to `toward`: a game, or a rendezvous server (over
    /// both families, if given both: see [`Addrs::local`]).
    pub fn client_socket(toward: impl Into<Addrs>) -> Result<UdpTransport, String> {
        UdpTransport::bind(toward.into().local())
            .map_err(|e| format!("cannot open a UDP socket: {e}"))
    }

    /// A client of the game registered as `name` at the rendezvous server at
    /// `rendezvous`: asks for it, punches a path through the NATs between the two (this
    /// blocks for up to ten seconds), then joins it over that path as
    /// [`Game::client`] does.
    pub fn client_by_name(
        mut options: Options,
        rendezvous: impl Into<Addrs>,
        name: &str,
        entropy: Entropy,
    ) -> Result<Game, String> {
        let rendezvous = rendezvous.into();
        // Should it take the game over, it registers the game there again.
        options.rendezvous = Some(rendezvous);
        let mut socket = Self::client_socket(rendezvous)?;
        let path = Self::punch(&mut socket, rendezvous, name)?;
        Self::client_on_path(options, socket, path, entropy)
    }

    /// Opens a path from `socket` to the game registered as `name` (see
    /// [`lanyard_rendezvous::punch`]), with a nonce from the system's randomness.
    pub fn punch(
        socket: &mut UdpTransport,
        rendezvous: impl Into<Addrs>,
        name: &str,
    ) -> Result<Path, String> {
        let mut n = [0; 8];
        n.copy_from_slice(&entropy()[..8]);
        rendezvous::punch(socket, rendezvous, name, u64::from_le_bytes(n))
            .map_err(|e| e.to_string())
    }
}
