//! Tumbleyard's rules on the world, run on the server: fuses and blasts, crates off the
//! yard coming home, points and the score table (kept by [`Rules`](super::rules::Rules)).

use super::{Game, fuse};
use crate::events::GameEvent;
use crate::kinds;
use crate::kinds::{Crate, Grenade, PlayerInput};
use lanyard::KindId;
use lanyard::prelude::*;

impl Game {
    /// An explosion happened: show it, and push our own player and the crates we hold if
    /// they are in reach.
    pub(super) fn on_blast(&mut self, at: Vec3, thrower: Owner) {
        let by_other = Some(thrower) != self.me();
        self.presentation.blast(at, thrower, by_other);
        if self.is_server() {
            return; // The server pushed everything it owns when it set the grenade off.
        }
        if let Some(id) = self.my_player()
            && let Some(push) =
                self.blast_push(at, self.group.get(id).map(|e| e.body().translation()))
        {
            self.input.push = Some(self.input.push.unwrap_or(Vec3::ZERO) + push);
        }
        // The crates we hold (we pushed them: hand-off) are ours to push too.
        let crate_kind = KindId::of_name(kinds::CRATE);
        let me = self.group.local_owner();
        let held: Vec<(EntityId, Vec3)> = self
            .group
            .iter()
            .filter(|e| e.kind() == crate_kind && e.owner() == me)
            .map(|e| (e.id(), e.body().translation()))
            .collect();
        for (id, pos) in held {
            if let Some(push) = self.blast_push(at, Some(pos)) {
                let _ = self.group.send_input(id, &Crate::push_input(push));
            }
        }
    }

    /// A point was scored: a popup at the edge of the yard nearest `at`.
    pub(super) fn on_point(&mut self, name: String, at: Vec3) {
        let half = self.scene.floor.half_extents;
        self.presentation.point(&name, at, half);
    }

    pub(super) fn blast_push(&self, at: Vec3, body: Option<Vec3>) -> Option<Vec3> {
        let p = body?;
        let t = &self.scene.tuning;
        let d = p - at;
        let dist = d.length();
        if dist >= t.blast_radius {
            return None;
        }
        let dir = (d.normalize_or_zero() + Vec3::Y * 0.6).normalize_or_zero();
        Some(dir * t.blast_impulse * (1.0 - dist / t.blast_radius))
    }

    /// The grenades that go off now (see `fuse`): their fuse burnt down, they touch a
    /// crate or a player other than their thrower's, or they have lain on the floor or a
    /// block for their short fuse.
    fn grenades_due(&mut self) -> Vec<(EntityId, NetId, Vec3, Owner)> {
        let grenade = KindId::of_name(kinds::GRENADE);
        let crate_kind = KindId::of_name(kinds::CRATE);
        let player = KindId::of_name(kinds::PLAYER);
        let tick = self.group.tick();
        let landed_ticks = (fuse::LANDED_FUSE / self.group.config().dt).ceil() as u64;
        let mut due = Vec::new();
        for e in self.group.iter().filter(|e| e.kind() == grenade) {
            let Some(g) = self.group.controller::<Grenade>(e.id()) else {
                continue;
            };
            let at = e.body().translation();
            let radius = match e.visual.shape {
                Shape::Ball { radius } => radius,
                _ => 0.0,
            };
            let touched = self.group.iter().any(|b| {
                let own_player = b.kind() == player && b.owner() == g.thrower;
                (b.kind() == crate_kind || b.kind() == player)
                    && !own_player
                    && fuse::touches(at, radius, &b)
            });
            let on_ground = self.on_scenery(at, radius);
            let lay = on_ground
                && self
                    .rules
                    .as_mut()
                    .is_some_and(|r| r.landed(e.net_id(), tick, landed_ticks));
            if g.fuse() == 0 || touched || lay {
                due.push((e.id(), e.net_id(), at, g.thrower));
            }
        }
        due
    }

    /// Whether a ball of `radius` at `at` touches the floor or a block.
    fn on_scenery(&self, at: Vec3, radius: f32) -> bool {
        let touch = radius + fuse::TOUCH;
        // The floor is a box whose top is at y = 0, centred under the yard's middle.
        let floor = &self.scene.floor;
        let on_floor = at.y < touch
            && at.x.abs() <= floor.half_extents[0]
            && at.z.abs() <= floor.half_extents[2];
        on_floor || self.on_block(at, radius)
    }

    /// Whether a ball of `radius` at `at` touches a block.
    pub(super) fn on_block(&self, at: Vec3, radius: f32) -> bool {
        let touch = radius + fuse::TOUCH;
        self.scene.blocks.iter().any(|b| {
            let half = Vec3::from(b.half_extents);
            fuse::box_distance(at, Vec3::from(b.center), lanyard::Quat::IDENTITY, half) < touch
        })
    }

    pub(super) fn server_rules(&mut self) {
        let now = self.link.net().now();
        let crate_kind = KindId::of_name(kinds::CRATE);
        let player = KindId::of_name(kinds::PLAYER);
        for (id, net, at, thrower) in self.grenades_due() {
            let _ = self.group.despawn(id);
            if let Some(r) = &mut self.rules {
                r.grenade_gone(net);
            }
            self.explode(at, thrower, net, now);
        }
        let kill_y = self.scene.kill_y;
        // Crates off the yard score for whoever last blew them about, and come back home.
        let off: Vec<(EntityId, Option<Owner>, Vec<u8>, Vec3)> = self
            .group
            .iter()
            .filter(|e| e.kind() == crate_kind && e.body().translation().y < kill_y)
            .map(|e| {
                let by = self.rules.as_mut().and_then(|s| s.crate_fell(e.net_id()));
                (
                    e.id(),
                    by,
                    self.group.spawn_params(e.id()).unwrap_or_default().to_vec(),
                    e.body().translation(),
                )
            })
            .collect();
        for (id, by, params, at) in off {
            let _ = self.group.despawn(id);
            let _ = self.group.spawn_encoded(crate_kind, params, Owner::Server);
            if let Some(by) = by {
                self.add_point(by, at);
            }
        }
        // Players off the yard score for whoever blew them off in the last 8 seconds.
        let falling: Vec<(NetId, Owner, Vec3)> = self
            .group
            .iter()
            .filter(|e| e.kind() == player)
            .map(|e| (e.net_id(), e.owner(), e.body().translation()))
            .collect();
        for (net, owner, at) in falling {
            let scorer = self.rules.as_mut().and_then(|s| {
                let off = at.y < kill_y;
                s.player_at_edge(net, owner, off, now)
            });
            if let Some(by) = scorer {
                self.add_point(by, at);
            }
        }
        self.publish_scores();
    }

    /// A point for `by`, if they are still in the game: a grenade of a player who left
    /// scores for nobody (it would bring back a row under a made-up name). Everyone is
    /// told where, for a popup.
    pub(super) fn add_point(&mut self, by: Owner, at: Vec3) {
        let Some(name) = self.player_in_game(by) else {
            return;
        };
        let Some(s) = &mut self.rules else {
            return;
        };
        s.add_point(&name);
        let point = GameEvent::Point {
            name: name.clone(),
            at: at.to_array(),
        };
        let _ = self.link.net_mut().send_event(point.encode());
        self.on_point(name, at);
    }

    /// The name of `owner` if they play in this game now: the host, or a client with a
    /// session that is not a spectator's.
    fn player_in_game(&self, owner: Owner) -> Option<String> {
        match owner {
            Owner::Server => self.rules.as_ref()?.host_name().map(str::to_owned),
            Owner::Client(c) => self
                .link
                .net()
                .sessions()
                .into_iter()
                .find(|s| s.client == c && !s.spectator)
                .map(|s| s.name),
        }
    }

    /// Sends the score table to everyone if it changed, and shows it here.
    fn publish_scores(&mut self) {
        let Some(s) = &mut self.rules else {
            return;
        };
        let sessions = self.link.net().sessions();
        let players = sessions.iter().filter(|x| !x.spectator).map(|x| &x.name);
        let Some(table) = s.table_to_send(players) else {
            return;
        };
        self.presentation.set_scores(table.clone());
        let _ = self
            .link
            .net_mut()
            .send_event(GameEvent::Scores { table }.encode());
    }

    /// On a server: notes that `by` last blew the crate `net` about, as a blast does; it
    /// scores for them if it goes off the yard. Nothing on a client.
    pub fn note_crate_hit(&mut self, net: NetId, by: Owner) {
        if let Some(s) = &mut self.rules {
            s.hit_crate(net, by);
        }
    }

    pub(super) fn explode(&mut self, at: Vec3, thrower: Owner, grenade: NetId, now: f64) {
        let in_reach: Vec<(EntityId, NetId, KindId, Owner, Vec3)> = self
            .group
            .iter()
            .map(|e| {
                (
                    e.id(),
                    e.net_id(),
                    e.kind(),
                    e.owner(),
                    e.body().translation(),
                )
            })
            .collect();
        let crate_kind = KindId::of_name(kinds::CRATE);
        let player = KindId::of_name(kinds::PLAYER);
        for (id, net, kind, owner, pos) in in_reach {
            let Some(push) = self.blast_push(at, Some(pos)) else {
                continue;
            };
            if kind == crate_kind {
                // A crate a player holds (it pushed it) is pushed by that player, who
                // hears of the blast as every client does.
                let pushed = owner != Owner::Server
                    || self.group.send_input(id, &Crate::push_input(push)).is_ok();
                if pushed {
                    self.note_crate_hit(net, thrower);
                }
            } else if kind == player {
                if let Some(s) = &mut self.rules {
                    s.hit_player(net, thrower, now);
                }
                // The host's own player is pushed here; clients push their own.
                if owner == Owner::Server {
                    let input = PlayerInput {
                        push: Some(push),
                        ..PlayerInput::default()
                    };
                    let _ = self.group.send_input(id, &input.to_input());
                }
            }
        }
        let _ = self.link.net_mut().send_event(
            GameEvent::Explosion {
                at: at.to_array(),
                thrower,
                grenade,
            }
            .encode(),
        );
        self.on_blast(at, thrower);
    }
}
