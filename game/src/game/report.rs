//! What a game reports: byte rates, ping and loss for the HUD and its graph, and the
//! machine-readable summary and bot report.

use super::Game;
use crate::kinds;
use crate::kinds::{Player, PlayerParams};
use lanyard::prelude::*;
use lanyard::{KindId, decode_params};
use std::net::SocketAddr;

impl Game {
    /// Bytes received and sent so far (all peers, never decreasing).
    pub fn bytes(&self) -> (u64, u64) {
        let c = self.net().counters();
        (c.bytes_in, c.bytes_out)
    }

    /// Round trip to the server (clients), milliseconds: from clock stamps echoed on the
    /// wire, so it leaves out the time the server waits for its next send (the ack round
    /// trip, which counts that wait, stands in until the first echo; a ping of 0 on
    /// loopback is a ping).
    pub fn ping_ms(&self) -> Option<f32> {
        let s = self.net().server_stats()?;
        Some(if s.pinged { s.ping_ms } else { s.rtt_ms })
    }

    /// The median of the ping shown over the last ten seconds (the net graph's points,
    /// four a second), milliseconds: one figure for a run, steadier than the last reading,
    /// which one late datagram moves by a few milliseconds for a second.
    pub fn ping_median_ms(&self) -> Option<f32> {
        self.presentation.ping_median()
    }

    /// Whether datagrams to `peer` go through the rendezvous server's relay now (punching
    /// found no direct path yet).
    pub fn relayed_to(&self, peer: SocketAddr) -> bool {
        self.link.relayed_to(peer)
    }

    /// Clients: the server's address (the host's public one, for a game joined by name).
    pub fn server_peer(&self) -> Option<SocketAddr> {
        self.net().server_addr()
    }

    /// Clients: whether the link to the server goes through the rendezvous server's relay.
    pub fn relayed(&self) -> bool {
        !self.is_server() && self.link.relays_any()
    }

    /// Estimated loss towards the server (clients), 0 to 1: of the datagrams we sent, the
    /// share the server's acks left out. A silent server is not loss (nothing was sent and
    /// lost): [`silence`](Self::silence) says how long it has been silent.
    pub fn loss(&self) -> f32 {
        self.net().server_stats().map_or(0.0, |s| s.loss)
    }

    /// Clients: seconds since the server was last heard, once that is
    /// [`SILENT_AFTER`](crate::game::SILENT_AFTER) or more (a live server is heard at least
    /// every heartbeat).
    pub fn silence(&self) -> Option<f32> {
        super::silent_for(&self.net().server_stats()?)
    }

    /// The entities in the machine-readable shape: net id -> kind and position; on a
    /// client also the newest state it took from the server, if any came: the number of
    /// the `broadcast` that carried it and the position it `received` (see
    /// [`witness`](crate::witness)).
    pub fn entities_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for e in self.group.iter() {
            let kind = self.group.registry().name_of(e.kind()).unwrap_or("?");
            let p = e.body().translation();
            let owner = match e.owner() {
                Owner::Server => "server".to_owned(),
                Owner::Client(c) => format!("client {}", c.0),
            };
            let mut v = serde_json::json!({ "kind": kind, "pos": [p.x, p.y, p.z], "owner": owner });
            if let Some((n, r)) = self.received.of(e.net_id()) {
                v["broadcast"] = n.into();
                v["received"] = serde_json::json!(r);
            }
            m.insert(e.net_id().0.to_string(), v);
        }
        serde_json::Value::Object(m)
    }

    /// Writes the summary a server (dedicated or host) writes at exit to `path`, as pretty
    /// JSON: players, entities, and the poses of its broadcasts of the last 10 s
    /// ([`SentLog::to_json`](crate::witness::SentLog::to_json)).
    pub fn write_summary(&self, path: &std::path::Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(&self.summary_json()).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// The summary as JSON (see [`write_summary`](Self::write_summary)).
    pub fn summary_json(&self) -> serde_json::Value {
        let my_throws = self
            .my_player()
            .and_then(|id| self.group.controller::<Player>(id))
            .map(Player::throws);
        serde_json::json!({
            "players": self.player_names(),
            "spectators": self.spectator_names(),
            "my_throws": my_throws,
            "entities": self.entities_json(),
            "broadcasts": self.sent_log.to_json(),
            "network": self.network_json(),
        })
    }

    /// What the network layer refused and dropped: on a server per client (by name), plus
    /// the strangers' datagrams and stale or forged handshakes; on a client, its link's.
    pub fn network_json(&self) -> serde_json::Value {
        let peer = |s: lanyard_net::PeerStats| {
            serde_json::json!({
                "bad_tags": s.bad_tags,
                "bad_datagrams": s.bad_datagrams,
                "duplicates": s.duplicates,
                "dropped_illegal": s.dropped_illegal,
                "dropped_not_owner": s.dropped_not_owner,
                "late_sections": s.late_sections,
                "refused_spawns": s.refused_spawns,
                "corrections": s.corrections,
                "resends": s.resends,
                "state_entries": s.entries,
                "missing_baselines": s.missing_baselines,
            })
        };
        let net = self.net();
        let c = net.counters();
        let clients: serde_json::Map<String, serde_json::Value> = self
            .net()
            .clients()
            .into_iter()
            .filter_map(|(id, name)| Some((name, peer(net.peer_stats(id)?))))
            .collect();
        let g = self.group.counters();
        serde_json::json!({
            "bad_sections": g.bad_sections,
            "framing_errors": g.framing_errors,
            "strangers": c.strangers,
            "bad_cookies": c.bad_cookies,
            "bad_tags": c.bad_tags,
            "duplicates": c.duplicates,
            "largest_datagram_in": c.largest_in,
            "largest_datagram_out": c.largest_out,
            "clients": clients,
            "server": net.server_stats().map(peer),
        })
    }

    /// How a timed run ended, for a bot's report: why the game ended if it did, "time
    /// up" if it played its time, or "never joined" if its time ran out before the
    /// server let it in (no server answered, or it kept it waiting).
    pub fn run_outcome(&self) -> String {
        match self.end_reason() {
            Some(why) => why.to_owned(),
            None if self.is_joined() => "time up".to_owned(),
            None => "never joined: no server answered in time".to_owned(),
        }
    }

    /// The report a bot prints at exit; `ended` says why the run ended (`"time up"`, or
    /// [`end_reason`](Self::end_reason)).
    pub fn bot_report_json(&self, ended: &str) -> serde_json::Value {
        let (bytes_in, bytes_out) = self.bytes();
        let mut report = serde_json::json!({
            "ended": ended,
            "resumes": self.net().resumes(),
            "server_name": self.server_name(),
            "host_changes": self
                .host_changes()
                .iter()
                .map(|(left, host)| serde_json::json!({ "left": left, "host": host }))
                .collect::<Vec<_>>(),
            "hosting": self.is_server(),
            "spectator": self.options.spectate,
            "arena": self.scene.name,
            "client_id": self.standing.client_id().map(|c| c.0),
            "name": self.standing.my_name(),
            "restarted_session": self.standing.restored(),
            "scores": self
                .presentation
                .scores()
                .iter()
                .map(|(name, points)| (name.clone(), *points))
                .collect::<std::collections::BTreeMap<String, u32>>(),
            "remote_players": self.standing.remote_players().iter().collect::<Vec<_>>(),
            "explosions_seen": self.presentation.explosions_by_others(),
            "explosions": self.presentation.seen().blasts,
            "entities": self.entities_json(),
            "bytes_in": bytes_in,
            "bytes_out": bytes_out,
            "loss": self.loss(),
            "ping_ms": self.ping_ms(),
            "ping_median_ms": self.ping_median_ms(),
            "relayed": self.relayed(),
            "network": self.network_json(),
        });
        // A bot that took the game over (host migration) logs its broadcasts as a server's
        // summary does, so other bots' states can be compared with it.
        if self.is_server() {
            report["broadcasts"] = self.sent_log.to_json();
        }
        report
    }

    /// The spawn parameters of a player entity, decoded.
    pub fn player_params(&self, id: EntityId) -> Option<PlayerParams> {
        let kind = KindId::of_name(kinds::PLAYER);
        decode_params(kind, self.group.spawn_params(id)?).ok()
    }
}
