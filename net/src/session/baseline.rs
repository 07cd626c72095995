//! The server's memory of what each client holds: each entity's recent sections by
//! broadcast ([`History`]), and per client the newest section it acknowledged of each
//! entity (its baseline) and what it has in flight ([`ClientView`]).

use lanyard::NetId;
use std::collections::VecDeque;
use std::sync::Arc;

/// Broadcasts back the server names a baseline it did not send last (a client keeps the
/// sections of `CLIENT_KEEP` broadcasts, and always its newest of each entity).
pub(crate) const SERVER_WINDOW: u32 = 32;
/// Datagrams a server remembers the entries of, awaiting their ack (past the 32 an ack
/// can name).
pub(crate) const IN_FLIGHT: usize = 48;

/// An entity's sections as the server sent them, by the broadcast each first went out in:
/// what a client's acknowledged broadcast number stands for.
#[derive(Default, Clone)]
pub(crate) struct History {
    versions: VecDeque<(u32, Arc<[u8]>)>,
    /// The newest version's broadcast, and its bytes when they are short: every broadcast
    /// compares every entity's section with its newest, and the histories of a thousand
    /// entities read front to back cost far less than a thousand pointers followed.
    tip: Tip,
    /// Whether the entity's sections start with a pose, fixed by its first.
    posed: Option<bool>,
}

/// The newest section of a [`History`], kept inline when it is at most [`Tip::INLINE`]
/// bytes long (a pose and a few bytes more).
#[derive(Clone)]
struct Tip {
    number: Option<u32>,
    len: u8,
    bytes: [u8; Tip::INLINE],
}

impl Default for Tip {
    fn default() -> Self {
        Tip {
            number: None,
            len: u8::MAX,
            bytes: [0; Tip::INLINE],
        }
    }
}

impl Tip {
    const INLINE: usize = 46;

    /// Whether `cur` is the tip's bytes, if the tip holds them inline.
    fn holds(&self, cur: &[u8]) -> Option<bool> {
        let len = usize::from(self.len);
        (len <= Self::INLINE).then(|| cur.len() == len && self.bytes[..len] == *cur)
    }

    fn set(&mut self, number: u32, cur: &[u8]) {
        self.number = Some(number);
        match u8::try_from(cur.len()) {
            Ok(len) if cur.len() <= Self::INLINE => {
                self.len = len;
                self.bytes[..cur.len()].copy_from_slice(cur);
            }
            _ => self.len = u8::MAX,
        }
    }
}

impl History {
    /// Whether the entity's sections start with a pose, if its first said yet.
    pub(crate) fn posed_known(&self) -> Option<bool> {
        self.posed
    }

    /// Whether the entity's sections start with a pose: what its first section said
    /// (`now`, for the first).
    pub(crate) fn posed(&mut self, now: bool) -> bool {
        *self.posed.get_or_insert(now)
    }

    /// Notes the section current at `number`.
    pub(crate) fn update(&mut self, number: u32, cur: &[u8]) {
        let same = match self.tip.holds(cur) {
            Some(same) => same,
            None => self.versions.back().is_some_and(|(_, b)| &b[..] == cur),
        };
        if !same {
            self.versions.push_back((number, cur.into()));
            self.tip.set(number, cur);
        }
        // Keep the newest version at or before the window's start, and all after it.
        let cutoff = number.saturating_sub(SERVER_WINDOW + IN_FLIGHT as u32);
        while self.versions.len() > 1 && self.versions[1].0 <= cutoff {
            self.versions.pop_front();
        }
    }

    /// The broadcast the newest section first went out in.
    pub(crate) fn newest(&self) -> Option<u32> {
        self.tip.number
    }

    /// The broadcast at which the section first changed after broadcast `number`: when a
    /// client that holds the section of `number` stopped holding the current one. If the
    /// history no longer reaches back to `number`, the oldest change it keeps (a moment
    /// the client's copy was out of date already). None if nothing changed since.
    pub(crate) fn changed_after(&self, number: u32) -> Option<u32> {
        // The versions are in the order of their broadcasts.
        let i = self.versions.partition_point(|(f, _)| *f <= number);
        self.versions.get(i).map(|(f, _)| *f)
    }

    /// The section that was current at `number`, if still known.
    pub(crate) fn at(&self, number: u32) -> Option<&[u8]> {
        self.shared_at(number).map(|b| &b[..])
    }

    /// The same, shared (a baseline holds it without a copy).
    pub(crate) fn shared_at(&self, number: u32) -> Option<&Arc<[u8]>> {
        let i = self.versions.partition_point(|(f, _)| *f <= number);
        i.checked_sub(1)
            .and_then(|i| self.versions.get(i))
            .map(|(_, b)| b)
    }
}

/// What the server knows of one entity for one client.
#[derive(Default, Clone)]
pub(crate) struct Seen {
    /// The reliable message that told the client of the entity, until it is acknowledged:
    /// no state goes before that.
    announced: Option<u32>,
    /// The newest section the client acknowledged (its broadcast: `baseline_at`). Apart,
    /// not as a pair: the pair's padding would take a slot past its cache line.
    baseline: Option<Arc<[u8]>>,
    /// The broadcast of `baseline` (0: none).
    baseline_at: u32,
    /// The broadcast the entity's state last went out in (0: never; broadcasts count from
    /// 1).
    last_sent: u32,
    /// The broadcast it went out in before that (0: none).
    sent_before: u32,
    /// No state sent at or before this broadcast becomes a baseline when its
    /// acknowledgement comes: the client held the entity itself until then (hand-off: its
    /// copy was the authority's, however old its baseline), or told us then that it lacked
    /// a baseline (a resync: what it acknowledged of the entity is not what it holds).
    /// 0: never.
    pub(crate) void_until: u32,
    /// The newest broadcast at which the client's copy stood for the entity's state: what
    /// it acknowledged was current, or its prediction from it held (0: never). A change
    /// before it left the copy current, so the copy's age counts from the first change
    /// after.
    pub(crate) current_at: u32,
    /// The accumulated priority.
    pub(crate) priority: f32,
}

impl Seen {
    /// The newest section the client acknowledged, and its broadcast.
    pub(crate) fn baseline(&self) -> Option<(u32, &[u8])> {
        self.baseline.as_ref().map(|b| (self.baseline_at, &b[..]))
    }

    /// The reliable message that announces the entity, until it is acknowledged.
    pub(crate) fn announced(&self) -> Option<u32> {
        self.announced
    }

    /// The broadcast the entity's state last went out in.
    pub(crate) fn last_sent(&self) -> Option<u32> {
        (self.last_sent != 0).then_some(self.last_sent)
    }

    /// Whether the client may hold as its newest a state it has not acknowledged and that
    /// the server no longer knows: the state went out more than once since the baseline
    /// (the server keeps the last two sends, and the client predicts from whichever arrived
    /// last).
    pub(crate) fn sent_twice_since_baseline(&self) -> bool {
        let bf = self.baseline.as_ref().map_or(0, |_| self.baseline_at);
        self.sent_before > bf
    }

    /// The entity's state goes out in broadcast `number`.
    pub(crate) fn sent(&mut self, number: u32) {
        if self.last_sent != number {
            self.sent_before = self.last_sent;
            self.last_sent = number;
        }
    }

    /// Forgets what was sent: what the client holds is known again from its next baseline.
    pub(crate) fn unsent(&mut self) {
        self.last_sent = 0;
        self.sent_before = 0;
    }
}

/// What the server knows of a client's entities, by the server's slot numbers
/// (`replication::Slots`), laid out so that a broadcast looks only at what may need
/// sending: the entities that changed this broadcast (the world's change log), those still
/// pending from the last (changed and not yet acknowledged, or predicted), and those whose
/// refresh may come due now (a timer wheel). Never at the whole world.
#[derive(Default, Clone)]
pub(crate) struct Ents {
    /// What the client holds at each slot, one cache line a slot: a broadcast looks at a
    /// few slots of every client, and each look then costs one miss, not one per field.
    slots: Vec<Slot>,
    /// Slots to look at next broadcast whatever happens.
    pending: Vec<u32>,
    /// Slots to look at by the broadcast they wake at, modulo the wheel's length.
    wheel: Vec<Vec<u32>>,
    /// How many held entities' announcements the client acknowledged.
    settled: usize,
}

/// What a client's view has at one slot.
#[derive(Default, Clone)]
#[repr(align(64))]
struct Slot {
    /// The entity held there.
    net: Option<NetId>,
    /// The broadcast at which the slot's wheel entry is meant to wake it (an entry whose
    /// slot was given a later wake since is stale, and passed over).
    wake: u32,
    /// The broadcast the slot was last looked at, so it is looked at once per broadcast.
    looked: u32,
    seen: Seen,
}

impl Ents {
    fn grow(&mut self, slot: usize) {
        if slot >= self.slots.len() {
            self.slots.resize(slot + 1, Slot::default());
        }
    }

    /// Whether entity `net` is held at `slot`.
    pub(crate) fn holds(&self, slot: u32, net: NetId) -> bool {
        self.slots
            .get(slot as usize)
            .is_some_and(|s| s.net == Some(net))
    }

    fn held(&self, slot: u32) -> bool {
        self.slots
            .get(slot as usize)
            .is_some_and(|s| s.net.is_some())
    }

    /// Holds entity `net` at `slot`, announced by reliable message `announced` (none: known
    /// already), with no baseline.
    pub(crate) fn insert(&mut self, slot: u32, net: NetId, announced: Option<u32>) {
        let s = slot as usize;
        if let Some(held) = self.slots.get(s).and_then(|s| s.net) {
            self.remove(slot, held);
        }
        self.grow(s);
        self.slots[s].net = Some(net);
        self.slots[s].seen = Seen {
            announced,
            ..Seen::default()
        };
        if announced.is_none() {
            self.settled += 1;
        }
        self.pending.push(slot);
    }

    /// Forgets entity `net` at `slot`; what was known of it, if it was held.
    pub(crate) fn remove(&mut self, slot: u32, net: NetId) -> Option<Seen> {
        if !self.holds(slot, net) {
            return None;
        }
        let s = slot as usize;
        self.slots[s].net = None;
        let seen = std::mem::take(&mut self.slots[s].seen);
        if seen.announced.is_none() {
            self.settled -= 1;
        }
        Some(seen)
    }

    /// What is known of entity `net` at `slot`, if it is held.
    pub(crate) fn get(&self, slot: u32, net: NetId) -> Option<&Seen> {
        self.holds(slot, net)
            .then(|| &self.slots[slot as usize].seen)
    }

    /// The same, to change its priority and when it was last sent.
    pub(crate) fn get_mut(&mut self, slot: u32, net: NetId) -> Option<&mut Seen> {
        self.holds(slot, net)
            .then(|| &mut self.slots[slot as usize].seen)
    }

    /// The client acknowledged the message that announced the entity at `slot`.
    pub(crate) fn settle(&mut self, slot: u32) {
        if let Some(s) = self.slots.get_mut(slot as usize)
            && s.seen.announced.take().is_some()
        {
            self.settled += 1;
        }
    }

    /// How many entities the client holds whose announcement it acknowledged.
    pub(crate) fn settled(&self) -> usize {
        self.settled
    }

    /// Sets the baseline of the held entity at `slot` (none: send it whole next). With
    /// `look`, the entity is looked at next broadcast: a state that came back to an older
    /// baseline's bytes differs from a newer one's.
    pub(crate) fn set_baseline(
        &mut self,
        slot: u32,
        baseline: Option<(u32, Arc<[u8]>)>,
        look: bool,
    ) {
        if !self.held(slot) {
            return;
        }
        if look || baseline.is_none() {
            self.pending.push(slot);
        }
        let seen = &mut self.slots[slot as usize].seen;
        seen.baseline_at = baseline.as_ref().map_or(0, |(f, _)| *f);
        seen.baseline = baseline.map(|(_, b)| b);
    }

    /// From broadcast `number` on, the client holds none of the server's sections of the
    /// entity at `slot`: it holds the body itself (hand-off), or it lacked the baseline a
    /// state named (a resync). It has no baseline, and no state sent up to now becomes one
    /// when its acknowledgement comes.
    pub(crate) fn void_from(&mut self, slot: u32, number: u32) {
        if !self.held(slot) {
            return;
        }
        self.pending.push(slot);
        let seen = &mut self.slots[slot as usize].seen;
        seen.baseline = None;
        seen.baseline_at = 0;
        seen.void_until = seen.void_until.max(number);
    }

    /// Looks at the held entity at `slot` again next broadcast.
    pub(crate) fn pend(&mut self, slot: u32) {
        if self.held(slot) {
            self.pending.push(slot);
        }
    }

    /// Looks at the held entity at `slot` again at broadcast `wake` (which must be within
    /// the wheel's length of now), unless it changes first.
    pub(crate) fn sleep_until(&mut self, slot: u32, wake: u32) {
        if !self.held(slot) {
            return;
        }
        if self.wheel.is_empty() {
            self.pending.push(slot);
            return;
        }
        self.slots[slot as usize].wake = wake;
        let len = self.wheel.len();
        self.wheel[wake as usize % len].push(slot);
    }

    /// Sets the wheel to `len` broadcasts (more than the farthest wake) and looks at every
    /// held entity next broadcast: the refresh schedule changed.
    pub(crate) fn wake_all(&mut self, len: usize) {
        self.wheel = vec![Vec::new(); len.max(1)];
        self.pending.clear();
        for (s, at) in self.slots.iter().enumerate() {
            if at.net.is_some() {
                self.pending.push(s as u32);
            }
        }
    }

    /// Adds to `out`, once each, the held slots to look at in broadcast `number`: those
    /// pending, those in `changed` (the slots whose state changed this broadcast), and
    /// those whose wake is now. `wheel` is how many broadcasts the wheel must span (a new
    /// view gets its wheel here, and looks at everything once).
    pub(crate) fn due(&mut self, number: u32, changed: &[u32], wheel: usize, out: &mut Vec<u32>) {
        if self.wheel.len() != wheel.max(1) {
            self.wake_all(wheel);
        }
        let at = number as usize % self.wheel.len();
        let bucket = std::mem::take(&mut self.wheel[at]);
        let pending = std::mem::take(&mut self.pending);
        let woken = bucket.iter().map(|s| (*s, true));
        let any = pending.iter().chain(changed).map(|s| (*s, false));
        for (slot, if_woken) in any.chain(woken) {
            if let Some(at) = self.slots.get_mut(slot as usize)
                && at.net.is_some()
                && at.looked != number
                && (!if_woken || at.wake == number)
            {
                at.looked = number;
                out.push(slot);
            }
        }
        // The buffers go back, emptied, to be filled again without allocating.
        self.pending = pending;
        self.pending.clear();
        self.wheel[at] = bucket;
        self.wheel[at].clear();
    }
}

/// The entries of one datagram: (slot, entity, broadcast).
pub(crate) type SentEntries = Vec<(u32, NetId, u32)>;

/// What the server knows of one client's copy of the world.
#[derive(Default, Clone)]
pub(crate) struct ClientView {
    /// The entities the client was told of.
    pub(crate) ents: Ents,
    /// The entries of datagrams not yet acknowledged: (sequence number, [(slot, entity,
    /// broadcast)]).
    pub(crate) in_flight: VecDeque<(u32, SentEntries)>,
    /// The reliable messages telling the client that entities changed hands or are no
    /// longer relevant to it, until it acknowledges them: meanwhile it may still take a
    /// body a client now holds for the server's, or hold one the server no longer speaks
    /// for, and predict it, so no broadcast vouches for its predictions.
    pub(crate) changes_told: Vec<u32>,
}

impl ClientView {
    /// The peer acknowledged datagrams `acked`: their entries become baselines.
    pub(crate) fn acked(&mut self, acked: &[u32], history: &[History]) {
        for seq in acked {
            let Some(pos) = self.in_flight.iter().position(|(s, _)| s == seq) else {
                continue;
            };
            let Some((_, entries)) = self.in_flight.remove(pos) else {
                continue;
            };
            for (slot, net, number) in entries {
                let (Some(seen), Some(h)) = (self.ents.get(slot, net), history.get(slot as usize))
                else {
                    continue;
                };
                // Nor a state sent before or while the client held the body, or before it
                // said it lacked a baseline: it dropped what it had of the server's then,
                // or could not resolve it, and takes the state whole next.
                if seen.baseline.is_some() && seen.baseline_at >= number
                    || number <= seen.void_until
                {
                    continue;
                }
                // Unchanged since: it stays unchanged against the newer baseline, and its
                // refresh only comes later. Changed since: look at it again.
                let changed = h.newest().is_some_and(|v| v > number);
                if let Some(bytes) = h.shared_at(number) {
                    let baseline = Some((number, bytes.clone()));
                    self.ents.set_baseline(slot, baseline, changed);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_client_has_at_a_slot_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Slot>(), 64);
        assert_eq!(std::mem::align_of::<Slot>(), 64);
    }

    #[test]
    fn a_history_finds_its_versions_short_and_long_alike() {
        let short = |b: u8| vec![b; 31];
        let long = |b: u8| vec![b; 200];
        let mut h = History::default();
        assert_eq!(h.newest(), None);
        h.update(1, &short(1));
        h.update(2, &short(1));
        assert_eq!(h.newest(), Some(1), "the same bytes are no new version");
        h.update(3, &short(2));
        h.update(4, &long(3));
        h.update(5, &long(3));
        assert_eq!(h.newest(), Some(4), "long bytes are compared too");
        h.update(6, &long(4));
        h.update(7, &short(2));
        assert_eq!(h.newest(), Some(7), "back to old bytes is a new version");
        assert_eq!(h.at(2), Some(&short(1)[..]));
        assert_eq!(h.at(3), Some(&short(2)[..]));
        assert_eq!(h.at(5), Some(&long(3)[..]));
        assert_eq!(h.at(6), Some(&long(4)[..]));
        assert_eq!(h.at(9), Some(&short(2)[..]));
        // Lengths differ at the inline limit: never the same.
        let mut h = History::default();
        h.update(1, &[7; Tip::INLINE]);
        h.update(2, &[7; Tip::INLINE + 1]);
        h.update(3, &[7; Tip::INLINE - 1]);
        assert_eq!(h.newest(), Some(3));
        assert_eq!(h.at(2), Some(&[7; Tip::INLINE + 1][..]));
    }

    #[test]
    fn a_history_forgets_what_no_baseline_can_name_any_more() {
        // It keeps the newest version at or before the window's start, and all after.
        let window = SERVER_WINDOW + IN_FLIGHT as u32;
        let mut h = History::default();
        for (n, b) in [(1, 1u8), (2, 2), (3, 3)] {
            h.update(n, &[b; 31]);
        }
        h.update(2 + window, &[3; 31]);
        assert_eq!(h.at(1), None, "version 1 went");
        assert_eq!(h.at(2), Some(&[2; 31][..]));
        assert_eq!(h.changed_after(1), Some(2), "the oldest change it keeps");
        assert_eq!(h.changed_after(2), Some(3));
        h.update(3 + window, &[3; 31]);
        assert_eq!(h.at(2), None, "version 2 went");
        assert_eq!(h.at(3 + window), Some(&[3; 31][..]));
        assert_eq!(h.changed_after(3), None, "nothing changed since 3");
        // A new version after a long quiet is kept with the one before it.
        h.update(10 + window, &[4; 31]);
        assert_eq!(h.at(9 + window), Some(&[3; 31][..]));
        assert_eq!(h.changed_after(9 + window), Some(10 + window));
    }
}
