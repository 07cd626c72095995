//! The world's state of one broadcast, as the server has it: one entry per entity, the
//! server's sections and the newest accepted section of every client-owned entity, read
//! once and shared by every client's selection.

use super::slots::Slots;
use crate::session::baseline::History;
use lanyard::codec::PacketWriter;
use lanyard::delta::DeltaCodec;
use lanyard::predict::Tolerance;
use lanyard::{ClientId, EntityGroup, KindId, NetId, Owner, PoseCodec, Vec3};
use std::collections::BTreeMap;

/// One entity's state this broadcast, as the server has it.
pub(super) struct Current<'a> {
    pub(super) net: NetId,
    /// Its slot in the flat per-client arrays.
    pub(super) slot: u32,
    pub(super) bytes: &'a [u8],
    /// The broadcast since which `bytes` are current.
    pub(super) version: u32,
    pub(super) owner: Owner,
    pub(super) kind: KindId,
    /// What it gains in priority this broadcast if it changed.
    pub(super) urgency: f32,
    pub(super) codec: CodecRef<'a>,
    /// Whether its sections start with a pose, as its first section of the server's own
    /// did: it then goes whole as [`Body::FullPosed`](crate::wire::Body::FullPosed), and travels by its group's
    /// [`PoseCodec`] unless its kind set a codec of its own.
    pub(super) posed: bool,
    /// Whether clients predict it: the server's, of a kind whose codec predicts.
    pub(super) predicts: bool,
    /// Whether it is predicted and at rest ([`lanyard::predict::at_rest`]): its prediction
    /// stays where it is. Judged once a broadcast, for every client.
    pub(super) resting: bool,
    /// A client's, relayed with its time: how long (ms) before this broadcast its client
    /// sent it.
    pub(super) age: Option<u16>,
}

/// An entity's delta codec: its kind's, or, for a kind with none of its own whose sections
/// start with a pose, the entity's own prediction.
#[derive(Clone, Copy)]
pub(super) enum CodecRef<'a> {
    Kind(&'a dyn DeltaCodec),
    Pose(PoseCodec<'a>),
}

impl CodecRef<'_> {
    pub(super) fn get(&self) -> &dyn DeltaCodec {
        match self {
            CodecRef::Kind(c) => *c,
            CodecRef::Pose(c) => c,
        }
    }
}

/// A kind's options as a broadcast's world needs them, looked up once for a run of
/// entities of one kind (most entities share a kind with the one before).
struct KindLook<'a> {
    registry: &'a lanyard::KindRegistry,
    kind: Option<KindId>,
    /// What a changed entity of the kind gains in priority.
    weight: f32,
    codec: &'a dyn DeltaCodec,
    /// Whether the kind set a codec of its own (its sections are then never the group's
    /// prediction's).
    own_codec: bool,
    tolerance: Tolerance,
    /// Whether any kind looked up allows hand-off.
    takeable: bool,
}

impl<'a> KindLook<'a> {
    fn new(registry: &'a lanyard::KindRegistry) -> Self {
        KindLook {
            registry,
            kind: None,
            weight: 1.0,
            codec: &lanyard::delta::ByteDelta,
            own_codec: false,
            tolerance: Tolerance::default(),
            takeable: false,
        }
    }

    /// The options of `kind`, looked up only if it is not the last one's.
    fn of(&mut self, kind: KindId) -> &Self {
        if self.kind != Some(kind) {
            let r = self.registry;
            let options = r.options(kind);
            self.kind = Some(kind);
            self.weight = options.map_or(1.0, |o| o.priority);
            self.takeable |= options.is_some_and(|o| o.hand_off);
            self.codec = r.delta_codec(kind);
            self.own_codec = r.has_own_codec(kind);
            self.tolerance = r.tolerance(kind);
        }
        self
    }
}

/// A client's section to forward: the client, the bytes, and when the client sent it (the
/// server's clock, seconds).
pub(super) type Forward = (ClientId, Vec<u8>, f64);

/// The allocation of a broadcast's world ([`Current`] per entity), kept for the next
/// broadcast. Allocating it afresh was not free: 65–70 µs a broadcast with 1000 entities
/// in the `server_frame` bench, timed around the allocation alone (a block this large is
/// not taken from the small ones a frame frees; the allocator works to find it).
#[derive(Default)]
pub(super) struct WorldBuf(Vec<Current<'static>>);

impl Clone for WorldBuf {
    /// A copy of the replication starts with no buffer of its own.
    fn clone(&self) -> Self {
        WorldBuf::default()
    }
}

impl WorldBuf {
    /// The buffer, empty, to fill with this broadcast's world.
    pub(super) fn take<'a>(&mut self) -> Vec<Current<'a>> {
        recycled(std::mem::take(&mut self.0))
    }

    /// Keeps `world`'s allocation for the next broadcast.
    pub(super) fn keep(&mut self, world: Vec<Current<'_>>) {
        self.0 = recycled(world);
    }
}

/// An empty vector with `v`'s allocation, for values that borrow for another lifetime.
/// (Collecting a vector's own iterator into a vector of a same-sized type reuses its
/// allocation; nothing is mapped, since `v` is emptied first.)
fn recycled<'b>(mut v: Vec<Current<'_>>) -> Vec<Current<'b>> {
    v.clear();
    v.into_iter().map(|_| unreachable!("emptied")).collect()
}

/// What clients own, forwarded as they sent it: the newest accepted section of each
/// client-owned entity, and whether it goes with its time.
pub(super) struct Forwarded<'a, 'r> {
    /// The sections, by network id.
    pub(super) sections: &'a BTreeMap<NetId, Forward>,
    /// The server's clock (s), to time them by.
    pub(super) now: f64,
    /// Whether they go with their time (the last broadcast's world had bodies a client may
    /// take); set for the next broadcast.
    pub(super) relaying: &'r mut bool,
}

/// Each entity's slot in the flat arrays, and what the broadcasts noted of it there: its
/// recent sections, by broadcast, and its linear velocity at the last one (a sudden change
/// is a hit).
#[derive(Default, Clone)]
pub(crate) struct Ledger {
    slots: Slots,
    history: Vec<History>,
    last_vel: Vec<Option<Vec3>>,
}

impl Ledger {
    /// Entity `net`'s slot, given it now if it had none.
    pub(super) fn of(&mut self, net: NetId) -> u32 {
        self.slots.of(net)
    }

    /// Entity `net`'s slot, if it has one.
    pub(super) fn get(&self, net: NetId) -> Option<u32> {
        self.slots.get(net)
    }

    /// How many slots there are.
    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Each slot's recent sections.
    pub(super) fn history(&self) -> &[History] {
        &self.history
    }

    /// Forgets entity `net` (it was despawned): what was noted in its slot, and the slot,
    /// which it returns.
    pub(super) fn forget(&mut self, net: NetId) -> Option<u32> {
        let slot = self.slots.get(net);
        if let Some(s) = slot.map(|s| s as usize) {
            self.history.get_mut(s).map(std::mem::take);
            self.last_vel.get_mut(s).map(Option::take);
        }
        self.slots.release(net);
        slot
    }

    /// Entity `e`'s slot (given it now if it had none), and how much its velocity changed
    /// since the last broadcast (a hit), noting the new one.
    fn note(&mut self, e: &lanyard::EntityRef<'_>, net: NetId) -> (u32, f32) {
        let slot = self.slots.of_entity(e.id().index(), net);
        let s = slot as usize;
        if s >= self.last_vel.len() {
            self.last_vel.resize(s + 1, None);
            self.history.resize_with(s + 1, History::default);
        }
        let v = e.body().linvel();
        let hit = self.last_vel[s]
            .replace(v)
            .map_or(0.0, |u| (v - u).length());
        (slot, hit)
    }

    /// The world's state at broadcast `number`: the server's sections (`packet`, of
    /// `group`) and what clients own (`forwarded`), in network-id order, each with its
    /// urgency (a fast or suddenly knocked body is more urgent) and the broadcast since
    /// which it is current, in `world` (emptied, for its allocation). Notes each entity's
    /// velocity and section for the next broadcast.
    pub(super) fn world<'a>(
        &mut self,
        group: &'a EntityGroup,
        packet: &'a PacketWriter,
        forwarded: Forwarded<'a, '_>,
        (world, number): (Vec<Current<'a>>, u32),
    ) -> Vec<Current<'a>> {
        let Forwarded {
            sections: forward,
            now,
            relaying,
        } = forwarded;
        let mut world = world;
        let mut kind = KindLook::new(group.registry());
        world.reserve(packet.section_count() + forward.len());
        let own = packet
            .sections_posed()
            .map(|(s, posed)| (s.net_id, s.payload, Owner::Server, None, posed));
        // What clients own goes out as they sent it. Where they may hold the server's bodies
        // (hand-off), each with how long before this broadcast its client had it: what a
        // client moves is drawn at the instant it moved it, on every screen. (Where they may
        // not, the server's world is what the others should see a client's player push.)
        let relayed = *relaying;
        let forwarded = forward.iter().map(move |(net, (from, b, sent))| {
            let age =
                relayed.then(|| ((now - sent).max(0.0) * 1000.0).round().min(60_000.0) as u16);
            (*net, b.as_slice(), Owner::Client(*from), age, false)
        });
        // The packet and the group are both in network-id order: walk them together.
        let mut entities = group.iter().peekable();
        for (net, bytes, owner, age, posed) in own.chain(forwarded) {
            while entities.next_if(|e| e.net_id() < net).is_some() {}
            let e = match entities.next_if(|e| e.net_id() == net) {
                Some(e) => e,
                None => match group.by_net(net) {
                    Some(e) => e,
                    None => continue,
                },
            };
            let (slot, hit) = self.note(&e, net);
            let speed = e.body().linvel().length() + 0.25 * e.body().angvel().length();
            let k = kind.of(e.kind());
            // Fixed by the entity's first section (a client's, forwarded, never starts with a
            // pose), so that every whole section a client gets of it says the same.
            let posed = self.history[slot as usize].posed(posed);
            let codec = match posed && !k.own_codec {
                true => CodecRef::Pose(PoseCodec::new(group, e.id(), k.tolerance)),
                false => CodecRef::Kind(k.codec),
            };
            let weight = k.weight;
            let predicts = owner == Owner::Server && codec.get().predicts();
            world.push(Current {
                net,
                slot,
                bytes,
                version: 0,
                owner,
                kind: e.kind(),
                urgency: weight * (1.0 + 0.5 * speed + 2.0 * hit),
                codec,
                posed,
                predicts,
                resting: predicts && lanyard::predict::at_rest(bytes),
                age,
            });
        }
        *relaying = kind.takeable;
        // Only entities forwarded for clients can be out of order (they come after the rest).
        if !world.is_sorted_by_key(|c| c.net) {
            world.sort_by_key(|c| c.net);
        }
        for c in &mut world {
            let h = &mut self.history[c.slot as usize];
            h.update(number, c.bytes);
            c.version = h.newest().unwrap_or(number);
        }
        world
    }
}

/// For tests: an entry of the server's, current since `version`, sent whole.
#[cfg(test)]
impl<'a> Current<'a> {
    pub(super) fn server(net: NetId, slot: u32, bytes: &'a [u8], version: u32) -> Self {
        Current {
            net,
            slot,
            bytes,
            version,
            owner: Owner::Server,
            kind: lanyard::KindId(0),
            urgency: 1.0,
            codec: CodecRef::Kind(&lanyard::delta::ByteDelta),
            posed: false,
            predicts: false,
            resting: false,
            age: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broadcast_world_keeps_its_allocation_for_the_next() {
        let mut buf = WorldBuf::default();
        let bytes = [1u8, 2, 3];
        let mut world = buf.take();
        for n in 0..1000 {
            world.push(Current::server(NetId(n), n, &bytes, 0));
        }
        let (at, capacity) = (world.as_ptr() as usize, world.capacity());
        buf.keep(world);
        let next = buf.take();
        assert!(next.is_empty());
        assert_eq!(next.capacity(), capacity);
        assert_eq!(next.as_ptr() as usize, at);
    }
}
