//! Starting a game: its network configuration and world, a server (dedicated or host), a
//! client by address, by name through a rendezvous server, or on a punched socket.

use super::{Game, Options, TICK_HZ, entropy};
use crate::game::link::Link;
use crate::game::rules::Rules;
use crate::game::standing::Standing;
use crate::kinds;
use crate::kinds::{CrateParams, PlayerInput};
use crate::scene::Scene;
use crate::witness::{SentLog, TakenPoses};
use lanyard::prelude::*;
use lanyard_net::discovery::Responder;
use lanyard_net::{Entropy, NetConfig, NetManager, SessionClaim, Transport};
use lanyard_rendezvous::Path;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

impl Game {
    pub(super) fn net_config(o: &Options) -> NetConfig {
        NetConfig {
            rate: o.rate,
            max_clients: o.max_players,
            password: o.password.clone(),
            server_name: o.name.clone(),
            grace: o.grace,
            max_spectators: o.max_spectators,
            spectator: o.spectate,
            ..NetConfig::default()
        }
    }

    pub(super) fn world(scene: &Scene, role: Role) -> EntityGroup {
        let mut g = EntityGroup::new(
            Arc::new(kinds::registry_for(scene)),
            GroupConfig {
                dt: 1.0 / TICK_HZ,
                role,
                ..GroupConfig::default()
            },
        );
        scene.add_scenery(&mut g);
        g
    }

    /// A server on `socket`, any [`Transport`] (a hub endpoint in tests); `options.port`
    /// is not used. With `host_player`, the host plays too, under that name.
    pub fn server_on(
        options: Options,
        host_player: Option<String>,
        socket: impl Transport + 'static,
    ) -> Result<Game, String> {
        let mut group = Self::world(&options.scene, Role::Server);
        for (pos, size, color) in options.scene.crate_slots() {
            group
                .spawn(
                    kinds::CRATE,
                    &CrateParams { pos, size, color },
                    Owner::Server,
                )
                .map_err(|e| e.to_string())?;
        }
        let mut config = Self::net_config(&options);
        if let Some(h) = &host_player {
            config.reserved_names.push(h.clone());
            // A listen server: if the host goes, the game goes on at a player's.
            config.host_name = Some(h.clone());
            config.host_migration = true;
            // The host takes one of the places.
            config.max_clients = config.max_clients.saturating_sub(1);
        }
        let responder = match options.discovery {
            Some(d) => Some(
                Responder::bind(d).map_err(|e| format!("cannot answer discovery on {d}: {e}"))?,
            ),
            None => None,
        };
        let rules = Rules::new(host_player.clone(), BTreeMap::new());
        let net = NetManager::server(config, entropy());
        let rendezvous = options.rendezvous;
        let link = Link::new(net, Box::new(socket), responder, rendezvous);
        let standing = Standing::new(host_player.clone(), Some(options.name.clone()));
        let mut game = Self::assemble(options, group, link, Some(rules), standing);
        if let Some(name) = host_player {
            game.spawn_my_player(0, &name, Owner::Server)
                .map_err(|e| e.to_string())?;
        }
        Ok(game)
    }

    /// A client of the host at the end of `path` (punched, or relayed by the rendezvous
    /// server until a direct path opens), on the `socket` the path was opened from.
    pub fn client_on_path(
        options: Options,
        socket: impl Transport + 'static,
        path: Path,
        entropy: Entropy,
    ) -> Result<Game, String> {
        let mut game = Self::client_on(options, socket, path.peer, entropy)?;
        let routes = path.routes(game.clock());
        game.link.set_routes(routes);
        if let Some((relay, _)) = path.relay {
            let line = format!(
                "no direct path to {}: the rendezvous server {relay} relays the game (still looking for one)",
                path.peer
            );
            game.say(line);
        }
        Ok(game)
    }

    /// A client of the server at `server` on `socket`: one a path was punched from, or any
    /// [`Transport`] (a hub endpoint in tests).
    pub fn client_on(
        options: Options,
        socket: impl Transport + 'static,
        server: SocketAddr,
        entropy: Entropy,
    ) -> Result<Game, String> {
        Self::client_claiming_on(options, socket, (server, None), entropy)
    }

    /// A client of the server at `server` on `socket` that takes up the session `claim`
    /// holds, if it has one (an earlier run's, that crashed or was killed): it plays on as
    /// that player, or joins anew if the server no longer keeps the session.
    pub fn client_claiming_on(
        options: Options,
        socket: impl Transport + 'static,
        (server, claim): (SocketAddr, Option<&SessionClaim>),
        entropy: Entropy,
    ) -> Result<Game, String> {
        let group = Self::world(&options.scene, Role::Client(ClientId(0)));
        let mut config = Self::net_config(&options);
        // Should it take the game over (host migration), it plays too, and counts.
        config.max_clients = config.max_clients.saturating_sub(1);
        let (name, password) = (&options.name, options.password.as_deref());
        let net = match claim.filter(|c| c.server() == server) {
            Some(claim) => NetManager::client_claiming(config, claim, name, password, entropy),
            None => NetManager::client(config, server, name, password, entropy),
        };
        let link = Link::new(net, Box::new(socket), None, None);
        let standing = Standing::new(Some(options.name.clone()), None);
        Ok(Self::assemble(options, group, link, None, standing))
    }

    /// This host was stopped (or cut off) past its players' timeout, and one of them took
    /// the game over at `host` ([`NetEvent::Superseded`](lanyard_net::NetEvent::Superseded)):
    /// its NetManager is a client of the game there now (claiming the session it had, if
    /// it had one, or joining under its player's name), and the game a client with a world
    /// of its own, its recording started again.
    pub(super) fn step_down(&mut self, host: SocketAddr) {
        self.recorder.stop(&mut self.group);
        self.link.stepped_down();
        self.group = Self::world(&self.scene, Role::Client(ClientId(0)));
        self.rules = None;
        self.standing.stepped_down();
        self.arena = Default::default();
        self.received = TakenPoses::default();
        self.sent_log = SentLog::default();
        if let Some(sink) = self.recorder.sink()
            && let Err(e) = self.record_into(sink)
        {
            self.say(format!("recording stopped: {e}"));
        }
        let line = format!("the game went on at {host} while this machine was away: joining it");
        self.say(line);
    }

    /// A game of its parts; the rest starts empty.
    fn assemble(
        options: Options,
        group: EntityGroup,
        link: Link,
        rules: Option<Rules>,
        standing: Standing,
    ) -> Game {
        Game {
            scene: options.scene.clone(),
            options,
            group,
            link,
            rules,
            standing,
            presentation: Default::default(),
            arena: Default::default(),
            recorder: Default::default(),
            input: PlayerInput::default(),
            sent_log: SentLog::default(),
            received: TakenPoses::default(),
            #[cfg(not(target_arch = "wasm32"))]
            claim_slot: None,
        }
    }
}
