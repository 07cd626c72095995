//! The entity store's changes: spawning (here, by request, or as the server said),
//! despawning, owners, network ids, and body states set from outside.

use super::{Change, EntityGroup, kind_label};
use crate::config::Role;
use crate::controller::{KindLookup, SpawnRequest, SpawnTicket};
use crate::entity::{Entity, Slot};
use crate::error::Error;
use crate::id::{EntityId, KindId, NetId, Owner};
use crate::params::encode_params;
use crate::pose::{BodyState, Observed};
use crate::record::format::Op;
use serde::Serialize;

impl EntityGroup {
    /// The id of the kind registered as `kind_name`, and `params` encoded for it.
    fn encode_spawn<P: Serialize>(
        &self,
        kind_name: &str,
        params: &P,
    ) -> Result<(KindId, Vec<u8>), Error> {
        let kind = self
            .registry
            .id_of(kind_name)
            .ok_or_else(|| Error::UnknownKindName(kind_name.to_owned()))?;
        self.registry
            .check_params(kind, std::any::type_name::<P>())?;
        let params = encode_params(kind, params).map_err(|e| e.naming_kind(kind_name))?;
        Ok((kind, params))
    }

    /// Spawns an entity of the kind registered as `kind_name`, with a new network id.
    pub fn spawn<P: Serialize>(
        &mut self,
        kind_name: &str,
        params: &P,
        owner: Owner,
    ) -> Result<EntityId, Error> {
        let (kind, params) = self.encode_spawn(kind_name, params)?;
        self.spawn_encoded(kind, params, owner)
    }

    /// Asks for an entity this group's side will own, the way a client path does with
    /// [`ClientContext::spawn`](crate::controller::ClientContext::spawn): on the server it is spawned at once (owned by the server);
    /// on a client it waits for the next frame's
    /// [`FrameDriver::after_commands`](crate::FrameDriver::after_commands), where the network
    /// layer spawns it under a provisional id and asks the server. The ticket finds the
    /// entity once it exists ([`spawned`](Self::spawned)), before and after the server
    /// confirms it.
    pub fn request_spawn<P: Serialize>(
        &mut self,
        kind_name: &str,
        params: &P,
    ) -> Result<SpawnTicket, Error> {
        let (kind, params) = self.encode_spawn(kind_name, params)?;
        self.next_ticket += 1;
        let ticket = SpawnTicket(self.next_ticket);
        match self.config.role {
            Role::Server => {
                let id = self.spawn_encoded(kind, params, Owner::Server)?;
                self.note_spawned(ticket, id);
            }
            Role::Client(c) => self.requests.push(SpawnRequest {
                kind,
                params,
                owner: Owner::Client(c),
                requested_by: NetId(0),
                ticket: Some(ticket),
            }),
        }
        Ok(ticket)
    }

    /// Notes the entity a [`SpawnTicket`] became (the network layer calls it when it
    /// carries out a request).
    pub(crate) fn note_spawned(&mut self, ticket: SpawnTicket, id: EntityId) {
        if self.tickets.len() >= 1024 {
            // Forget the tickets of entities that are gone.
            let live: Vec<(SpawnTicket, EntityId)> = self
                .tickets
                .iter()
                .filter(|(_, id)| self.get(**id).is_some())
                .map(|(t, id)| (*t, *id))
                .collect();
            self.tickets = live.into_iter().collect();
        }
        self.tickets.insert(ticket, id);
    }

    /// The entity a [`request_spawn`](Self::request_spawn) became, if it exists (yet, and
    /// still): under its provisional network id until the server confirms it, then under
    /// the server's.
    pub fn spawned(&self, ticket: SpawnTicket) -> Option<EntityId> {
        let id = *self.tickets.get(&ticket)?;
        self.get(id).map(|_| id)
    }

    /// Spawns an entity from encoded parameters, with a new network id. Only the server's
    /// group (or a standalone one) gives out network ids: on a client's group this is an
    /// error that points to [`request_spawn`](Self::request_spawn).
    pub fn spawn_encoded(
        &mut self,
        kind: KindId,
        params: Vec<u8>,
        owner: Owner,
    ) -> Result<EntityId, Error> {
        if let Role::Client(_) = self.config.role {
            return Err(Error::SpawnOnClient {
                kind: kind_label(&self.registry, kind),
            });
        }
        if let Owner::Client(c) = owner {
            match &self.clients {
                Some(known) if known.binary_search(&c).is_err() => {
                    return Err(Error::NoSuchOwner {
                        kind: kind_label(&self.registry, kind),
                        owner: c.0,
                    });
                }
                Some(_) => {}
                // No network layer: nothing would ever run the entity's server path.
                None => {
                    return Err(Error::NoNetwork {
                        kind: kind_label(&self.registry, kind),
                        owner: c.0,
                    });
                }
            }
        }
        let net = NetId(self.next_net_id);
        self.insert_at(net, (kind, owner), params)
    }

    /// The network id the next [`spawn`](Self::spawn) will use.
    pub fn next_net_id(&self) -> NetId {
        NetId(self.next_net_id)
    }

    /// Spawns an entity of `kind` owned by `owner` under network id `net` (the next local
    /// one, or one someone else assigned: a server's spawn message on a client). Later
    /// local spawns use ids above it.
    pub(crate) fn insert_at(
        &mut self,
        net: NetId,
        (kind, owner): (KindId, Owner),
        params: Vec<u8>,
    ) -> Result<EntityId, Error> {
        let pos = match self.order.binary_search_by_key(&net, |e| e.0) {
            Ok(_) => return Err(Error::NetIdInUse(net)),
            Err(pos) => pos,
        };
        let bp = self.registry.build(kind, &params)?;
        if let Some(what) = non_finite(&bp.body) {
            return Err(Error::NonFinite {
                kind: kind_label(&self.registry, kind),
                what,
            });
        }
        let body = self.physics.insert_body(bp.body);
        for c in bp.colliders {
            self.physics.insert_collider(c, Some(body));
        }
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    entity: None,
                    params: Vec::new(),
                    pending: None,
                    outside: false,
                    still: false,
                });
                self.controllers.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        let slot = &mut self.slots[index as usize];
        let id = EntityId {
            index,
            generation: slot.generation,
        };
        slot.entity = Some(Entity {
            id,
            net_id: net,
            owner,
            kind,
            body,
            authority_seq: 0,
            owner_since: self.tick,
            visual: bp.visual,
        });
        slot.params = params;
        slot.pending = None;
        slot.outside = false;
        slot.still = false;
        self.controllers[index as usize] = Some(bp.controller);
        self.order.insert(pos, (net, index));
        self.journal.push(Change::Spawned(net));
        if let Some(r) = &mut self.recorder {
            r.op(Op::Spawn {
                net,
                kind,
                owner,
                params: self.slots[index as usize].params.clone(),
            });
        }
        if !net.is_provisional() && net.0 >= self.next_net_id {
            self.next_net_id = net.0.saturating_add(1);
        }
        Ok(id)
    }

    /// Despawns an entity now, with its body and colliders. Its slot is reused later under
    /// a new generation, so `id` never resolves again. (Inside a frame, controllers ask for
    /// despawns through their [`ClientContext`](crate::controller::ClientContext); those wait until the pass is over.)
    pub fn despawn(&mut self, id: EntityId) -> Result<(), Error> {
        let slot = self
            .slots
            .get_mut(id.index as usize)
            .filter(|s| s.generation == id.generation && s.entity.is_some())
            .ok_or(Error::NoSuchEntity(id))?;
        let Some(entity) = slot.entity.take() else {
            return Err(Error::NoSuchEntity(id));
        };
        slot.generation = slot.generation.wrapping_add(1);
        slot.params = Vec::new();
        slot.pending = None;
        slot.outside = false;
        slot.still = false;
        self.controllers[id.index as usize] = None;
        self.trusted.remove(&entity.net_id);
        self.physics.remove_body(entity.body);
        if let Ok(pos) = self.order.binary_search_by_key(&entity.net_id, |e| e.0) {
            self.order.remove(pos);
        }
        self.free.push(id.index);
        self.journal.push(Change::Despawned {
            net: entity.net_id,
            owner: entity.owner,
        });
        if let Some(r) = &mut self.recorder {
            r.op(Op::Despawn { net: entity.net_id });
        }
        Ok(())
    }

    /// Hands an entity to another owner (a leaving client's entity to the server): its
    /// [authority sequence](Entity::authority_seq) goes up by one, and its owner has had
    /// it since this tick.
    pub fn set_owner(&mut self, id: EntityId, owner: Owner) -> Result<(), Error> {
        let tick = self.tick;
        let entity = self.entity_mut(id)?;
        entity.owner = owner;
        entity.authority_seq = entity.authority_seq.wrapping_add(1);
        entity.owner_since = tick;
        let (net, seq) = (entity.net_id, entity.authority_seq);
        self.journal.push(Change::OwnerChanged { net, owner, seq });
        if let Some(r) = &mut self.recorder {
            r.op(Op::SetOwner { net, owner });
        }
        Ok(())
    }

    /// Gives an entity a new network id: a client's provisional id becomes the one the
    /// server assigned.
    pub(crate) fn rename_net_id(&mut self, from: NetId, to: NetId) -> Result<EntityId, Error> {
        if self.order.binary_search_by_key(&to, |e| e.0).is_ok() {
            return Err(Error::NetIdInUse(to));
        }
        let pos = self
            .order
            .binary_search_by_key(&from, |e| e.0)
            .map_err(|_| Error::NoSuchNetId(from))?;
        let (_, index) = self.order.remove(pos);
        let slot = &mut self.slots[index as usize];
        let Some(entity) = slot.entity.as_mut() else {
            return Err(Error::NoSuchNetId(from));
        };
        entity.net_id = to;
        let id = entity.id;
        let at = self
            .order
            .binary_search_by_key(&to, |e| e.0)
            .unwrap_or_else(|p| p);
        self.order.insert(at, (to, index));
        if !to.is_provisional() && to.0 >= self.next_net_id {
            self.next_net_id = to.0.saturating_add(1);
        }
        self.journal.push(Change::Renamed { from, to });
        if let Some(r) = &mut self.recorder {
            r.op(Op::Rename { from, to });
        }
        Ok(id)
    }

    /// Gives an entity a new controller, built from its kind and spawn parameters as a new
    /// copy's is: what the old one remembered is dropped. Its body, local id, network id
    /// and owner stay.
    pub(crate) fn restart(&mut self, id: EntityId) -> Result<(), Error> {
        let entity = self.entity_mut(id)?;
        let (net, kind) = (entity.net_id, entity.kind);
        let index = id.index as usize;
        let bp = self.registry.build(kind, &self.slots[index].params)?;
        self.controllers[index] = Some(bp.controller);
        if let Some(r) = &mut self.recorder {
            r.op(Op::Restart { net });
        }
        Ok(())
    }

    /// Puts an entity's body in `state` (a spawn message's snapshot of where it is now).
    /// Refuses non-finite values.
    pub fn set_body_state(&mut self, id: EntityId, state: &BodyState) -> Result<(), Error> {
        let entity = self.entity_mut(id)?;
        let (handle, net) = (entity.body, entity.net_id);
        let body = self
            .physics
            .bodies
            .get_mut(handle)
            .ok_or(Error::NoSuchEntity(id))?;
        let before = (body.translation(), *body.rotation());
        state.apply(body)?;
        let now = crate::pose::PoseState::of(body);
        self.observed.push(Observed {
            id,
            authority: now,
            applied: now,
            corrected_from: Some(before),
        });
        if let Some(r) = &mut self.recorder {
            r.op(Op::BodyState { net, state: *state });
        }
        Ok(())
    }
}

/// What of a new body is not a finite number (or not a rotation), if anything: a factory's
/// blueprint is checked before its body joins the world.
fn non_finite(b: &rapier3d::prelude::RigidBody) -> Option<&'static str> {
    let r = b.rotation();
    [
        (b.translation().is_finite(), "position"),
        (r.is_finite() && r.length_squared() > 1e-6, "rotation"),
        (b.linvel().is_finite(), "linear velocity"),
        (b.angvel().is_finite(), "angular velocity"),
    ]
    .into_iter()
    .find_map(|(ok, what)| (!ok).then_some(what))
}
