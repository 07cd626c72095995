//! What only a network layer (or a replay) may do to a group, behind one narrow handle:
//! [`EntityGroup::replica`]. A game never needs these; they keep a group in step with an
//! authority elsewhere.

use super::{Change, EntityGroup};
use crate::config::Role;
use crate::controller::SpawnTicket;
use crate::error::Error;
use crate::id::{ClientId, EntityId, KindId, NetId, Owner};
use crate::record::format::Op;

/// The network layer's handle on a group ([`EntityGroup::replica`]): the role and the
/// clients it serves, the lead of the states it takes, entities under ids the server
/// assigned, and the journal of changes to announce. A game calls none of these; a
/// [`NetManager`](https://docs.rs/lanyard-net) does.
pub struct Replica<'a> {
    group: &'a mut EntityGroup,
}

impl EntityGroup {
    /// The handle through which a network layer keeps this group in step with its peers
    /// (see [`Replica`]). What a game may call is on `EntityGroup` itself.
    pub fn replica(&mut self) -> Replica<'_> {
        Replica { group: self }
    }
}

impl Replica<'_> {
    /// Changes the role (a client learns its id when the server accepts it).
    pub fn set_role(&mut self, role: Role) {
        self.group.set_role(role);
    }

    /// Tells a server's group which clients have a session (every frame): a spawn owned by
    /// any other client is refused ([`Error::NoSuchOwner`]).
    pub fn set_clients(&mut self, clients: impl IntoIterator<Item = ClientId>) {
        self.group.set_clients(clients);
    }

    /// Says that the sections the group takes from outside describe their authorities'
    /// bodies `ticks` ticks before this peer's present (from the measured round trip);
    /// client paths bring states forward by it ([`ClientContext::lead`](crate::controller::ClientContext::lead)), and a recording
    /// notes each change.
    pub fn set_lead(&mut self, ticks: u32) {
        self.group.set_lead(ticks);
    }

    /// On a server: says that the sections client `holder` sends of the bodies it holds
    /// (kinds with [`KindOptions::hand_off`](crate::KindOptions::hand_off)) describe them
    /// `ticks` ticks before the server's present (its one-way delay): their client paths
    /// bring them forward by that much ([`ClientContext::lead`](crate::controller::ClientContext::lead)), so the server's copy, which
    /// the other clients are sent, is where the holder has it now. A recording notes each
    /// change.
    pub fn set_holder_lead(&mut self, holder: Owner, ticks: u32) {
        self.group.set_holder_lead(holder, ticks);
    }

    /// Sets an entity's [authority sequence](crate::entity::Entity::authority_seq) to the server's word
    /// (a client hears it with each change of hands, and with each spawn): nothing else
    /// changes, and nothing is recorded (the sequence is no part of the world's state).
    pub fn set_authority_seq(&mut self, id: EntityId, seq: u16) -> Result<(), Error> {
        self.group.entity_mut(id)?.authority_seq = seq;
        Ok(())
    }

    /// Spawns an entity under a network id the server assigned (a spawn message on a
    /// client). Later local spawns use ids above it.
    pub fn insert_with_net_id(
        &mut self,
        net: NetId,
        kind: KindId,
        params: Vec<u8>,
        owner: Owner,
    ) -> Result<EntityId, Error> {
        self.group.insert_at(net, (kind, owner), params)
    }

    /// Starts a copy over: the server sent entity `id` whole again after a gap in what this
    /// group heard of it (a session resumed after a freeze or a host migration). Its
    /// controller is built anew from the entity's kind and spawn parameters, as a late
    /// joiner's copy is, so nothing its client path remembered from the sections before
    /// the gap (a count it compares with the next one's, a pose it held) is taken for
    /// news; its body, local id, network id and owner stay.
    pub fn restart_copy(&mut self, id: EntityId) -> Result<(), Error> {
        self.group.restart(id)
    }

    /// Gives an entity a new network id: a client's provisional id becomes the one the
    /// server assigned.
    pub fn rename_net_id(&mut self, from: NetId, to: NetId) -> Result<EntityId, Error> {
        self.group.rename_net_id(from, to)
    }

    /// Takes the owner's next `n` sections of the entity with network id `net` even when
    /// its controller judges them illegal (each such one is counted in
    /// [`Counters::trusted`](crate::group::Counters::trusted)): a new host after a host migration knows only the old host's
    /// last word of each client's entities, which the client has moved on from since, and
    /// its client path may take a few sections to bring its copy there.
    pub fn trust_sections(&mut self, net: NetId, n: u32) {
        if n > 0 {
            self.group.trusted.insert(net, n);
        }
    }

    /// Leaves the next `n` network ids unused: a new host (after a host migration) skips
    /// the ids the old one may have given in its last moments, which some clients may hold.
    pub fn skip_net_ids(&mut self, n: u32) {
        self.group.next_net_id = self.group.next_net_id.saturating_add(n);
        if let Some(r) = &mut self.group.recorder {
            r.op(Op::SkipNetIds(n));
        }
    }

    /// Notes the entity a [`SpawnTicket`] became, when the request is carried out.
    pub fn note_spawned(&mut self, ticket: SpawnTicket, id: EntityId) {
        self.group.note_spawned(ticket, id);
    }

    /// The changes to the set of entities since the last call, oldest first: what the
    /// network layer announces to peers.
    pub fn drain_changes(&mut self) -> std::vec::Drain<'_, Change> {
        self.group.drain_changes()
    }
}
