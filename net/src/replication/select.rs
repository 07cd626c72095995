//! Which entities a client could be sent this broadcast, and with what priority: found
//! in proportion to what changed, not to the size of the world.
//!
//! Every entity has a slot ([`Slots`](super::slots::Slots)). Per broadcast the
//! [`Selection`] lays the world out by slot and notes which slots' sections changed. Per
//! client, [`Ents::due`] gives the slots to look at: those that changed, those left
//! pending by the last broadcast (changed and not yet acknowledged, not yet announced, or
//! predicted, whose prediction moves on), and those whose refresh may be due. After a look
//! at an unchanged entity, it sleeps until the first broadcast at which its refresh can be
//! due ([`Cadence::next_look`]); a newer baseline only makes that early, which costs a look
//! and nothing else. So a world at rest costs a client next to nothing between refreshes.
//!
//! [`Ents::due`]: crate::session::baseline::Ents::due

use super::age::Ages;
use super::forecast::Forecasts;
use super::world::Current;
use super::{MIN_BUDGET, OVERDUE_PRIORITY, REFRESH_PRIORITY};
use crate::connection::Connection;
use crate::session::baseline::{ClientView, History, Seen};
use lanyard::{ClientId, NetId, Owner};
use std::collections::BTreeMap;

/// Marks a slot with no state this broadcast.
const ABSENT: u32 = u32::MAX;

/// When things go, in broadcasts, from the configuration.
pub(super) struct Cadence {
    /// This broadcast's number.
    pub(super) number: u32,
    /// Broadcasts a second.
    pub(super) rate: f32,
    /// The most bytes of state per client and broadcast (the configured budget's share).
    pub(super) budget: usize,
    /// The configured most bytes a second per client in all: a client's pace's ceiling.
    pub(super) ceiling: f32,
    /// Broadcasts after which an unchanged entity is sent again.
    pub(super) refresh: u32,
    /// Refreshes alone go out every this many broadcasts, so a resting world sends few
    /// datagrams; they also ride along with changed state that goes when they come due.
    pub(super) batch: u32,
    /// Whether this broadcast is a refresh round (every half refresh).
    pub(super) at_round: bool,
}

impl Cadence {
    /// Whether an unchanged entity the client acknowledged `age` broadcasts ago is sent
    /// again now: once it is a whole refresh old, or at a refresh round (every half
    /// refresh) once it is more than half a refresh old. What comes to rest together is
    /// then refreshed together (a client's copy of a stack is put back whole, not one
    /// crate at a time into the others' wrong places), and a steady refresh still comes
    /// once a refresh: half a refresh after a round, its age is not past the half.
    pub(super) fn refresh_due(&self, age: u32) -> bool {
        age >= self.refresh || (self.at_round && age > self.refresh / 2)
    }

    /// The first broadcast after this one at which an unchanged entity the client
    /// acknowledged at broadcast `f`, last sent at `last_sent`, may be due for its refresh:
    /// never later than it is (a whole refresh after `f`, or the next refresh round past
    /// half a refresh, and not before a batch after it was last sent).
    pub(super) fn next_look(&self, f: u32, last_sent: Option<u32>) -> u32 {
        let half = self.refresh / 2;
        let step = half.max(1);
        let after = f.saturating_add(half).max(self.number);
        let round = (after / step).saturating_add(1).saturating_mul(step);
        let whole = f
            .saturating_add(self.refresh)
            .max(self.number.saturating_add(1));
        let resend = last_sent.map_or(0, |s| s.saturating_add(self.batch));
        round
            .min(whole)
            .max(resend)
            .max(self.number.saturating_add(1))
    }

    /// How many broadcasts a client's wheel of wakes spans: more than the farthest wake.
    fn wheel_len(&self) -> usize {
        (self.refresh.max(self.batch) as usize + 2).next_power_of_two()
    }

    /// Seconds between broadcasts.
    pub(super) fn interval(&self) -> f32 {
        1.0 / self.rate
    }

    /// The least and the most a client's pace may be, bytes a second: at least a small
    /// datagram a broadcast.
    pub(super) fn bounds(&self) -> (f32, f32) {
        (2.0 * MIN_BUDGET as f32 * self.rate, self.ceiling)
    }

    pub(super) fn of(config: &crate::config::NetConfig, number: u32) -> Self {
        let rate = config.rate.max(0.001);
        let refresh = ((config.refresh * rate).round() as u32).max(1);
        Cadence {
            number,
            rate,
            budget: ((config.budget as f32 / rate) as usize).max(MIN_BUDGET),
            ceiling: config.link_ceiling as f32,
            refresh,
            batch: ((0.25 * rate).round() as u32).max(1),
            at_round: number.is_multiple_of((refresh / 2).max(1)),
        }
    }
}

/// The world of one broadcast laid out by slot, and a buffer for what one client looks at.
#[derive(Default, Clone)]
pub(super) struct Selection {
    /// Each slot's index in the broadcast's world; [`ABSENT`] where it has no state.
    at: Vec<u32>,
    /// The slots whose section changed at this broadcast.
    changed: Vec<u32>,
    /// How many of the world's entities each client owns.
    owned: BTreeMap<ClientId, usize>,
    /// The last broadcast's refresh schedule: (refresh, batch).
    schedule: Option<(u32, u32)>,
    /// The slots one client looks at.
    due: Vec<u32>,
    /// Of one client's candidates, those it predicts that changed since what it holds:
    /// (index in the world, whether its prediction stands for the state).
    pub(super) outcomes: Vec<(u32, bool)>,
}

impl Selection {
    /// A broadcast begins with `world` (each entity's slot below `slots`). Returns the
    /// length of the clients' wheels if the refresh schedule changed, when every client
    /// must look at everything again.
    pub(super) fn begin(
        &mut self,
        world: &[Current<'_>],
        slots: usize,
        cadence: &Cadence,
    ) -> Option<usize> {
        self.at.clear();
        self.at.resize(slots, ABSENT);
        self.changed.clear();
        self.owned.clear();
        for (i, c) in world.iter().enumerate() {
            self.at[c.slot as usize] = i as u32;
            if c.version == cadence.number {
                self.changed.push(c.slot);
            }
            if let Owner::Client(o) = c.owner {
                *self.owned.entry(o).or_default() += 1;
            }
        }
        let schedule = Some((cadence.refresh, cadence.batch));
        (std::mem::replace(&mut self.schedule, schedule) != schedule).then(|| cadence.wheel_len())
    }
}

/// An entity a client could be sent this broadcast.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Candidate {
    /// Where it is in the broadcast's world.
    pub(super) at: usize,
    /// Whether it changed (or else is only due for a refresh).
    pub(super) changed: bool,
    /// Its priority, grown by its urgency (a change) or by how overdue its refresh is.
    pub(super) priority: f32,
}

/// What a client could be sent this broadcast ([`candidates`]).
#[derive(Debug, Default)]
pub(super) struct Candidates {
    /// The entities, in the world's order.
    pub(super) list: Vec<Candidate>,
    /// Whether the client predicts a moving entity the server need not send: it then needs
    /// the broadcast's datagram even with no entries, to move its prediction on.
    pub(super) predicted_moving: bool,
    /// Whether the client may predict an entity whose state cannot go yet (its spawn is
    /// not acknowledged): the broadcast then vouches for no prediction.
    pub(super) unannounced: bool,
}

impl Candidates {
    /// How many changed.
    pub(super) fn changed(&self) -> usize {
        self.list.iter().filter(|c| c.changed).count()
    }

    fn push(&mut self, at: usize, changed: bool, priority: f32) {
        self.list.push(Candidate {
            at,
            changed,
            priority,
        });
    }
}

/// What client `id` could be sent (whose view is `view`, on `conn`), each entity's
/// priority grown by its urgency (a change) or by how overdue its refresh is. Not its own
/// entities, and none whose spawn message it has not acknowledged yet. An entity whose
/// prediction from what the client holds stands for its state counts as unchanged. Notes
/// in `ages` how many entities the client holds (its own aside) and how old the changed
/// ones are.
pub(super) fn candidates(
    id: ClientId,
    view: &mut ClientView,
    conn: &Connection,
    (sel, world): (&mut Selection, &[Current<'_>]),
    cadence: &Cadence,
    ages: &mut Ages,
    (forecasts, history): (&mut Forecasts, &[History]),
) -> Candidates {
    let number = cadence.number;
    let mut cands = Candidates::default();
    sel.outcomes.clear();
    let own = sel.owned.get(&id).copied().unwrap_or(0);
    let mut due = std::mem::take(&mut sel.due);
    due.clear();
    view.ents
        .due(number, &sel.changed, cadence.wheel_len(), &mut due);
    for &slot in &due {
        let Some(i) = sel.at.get(slot as usize).filter(|i| **i != ABSENT) else {
            // No state to send yet: look again next broadcast.
            view.ents.pend(slot);
            continue;
        };
        let i = *i as usize;
        let c = &world[i];
        if c.owner == Owner::Client(id) {
            if let Some(seen) = view.ents.get_mut(slot, c.net) {
                seen.void_until = number;
            }
            continue;
        }
        if !spawned_there(view, (slot, c.net), conn) {
            cands.unannounced |= c.predicts && view.ents.get(slot, c.net).is_some();
            continue;
        }
        let Some(seen) = view.ents.get_mut(slot, c.net) else {
            continue;
        };
        // Unchanged if the client acknowledged a broadcast at which the current bytes were
        // already current (or, rarely, if they came back to what it holds).
        let (void_until, current_at) = (seen.void_until, seen.current_at);
        let base = seen.baseline();
        let (same, foreseen) = current(c, seen, forecasts, history);
        // A prediction of a body at rest stays where it is: only a moving one needs the
        // broadcast's datagram to move on.
        cands.predicted_moving |= foreseen && !c.resting;
        // Judged only against a state the client holds (before its first, nothing is).
        if !same && c.predicts && base.is_some() {
            sel.outcomes.push((i as u32, foreseen));
        }
        if same || foreseen {
            let f = base.map_or(0, |(f, _)| f);
            seen.current_at = number;
            match unchanged(seen, same, f, cadence) {
                Look::Sleep(wake) => view.ents.sleep_until(slot, wake),
                Look::Pend => view.ents.pend(slot),
                // When it is looked at again depends on whether anything goes to the
                // client now: see `next_looks`.
                Look::Refresh(priority) => cands.push(i, false, priority),
            }
            continue;
        }
        if let Some((b, _)) = base {
            ages.stale.push(stale_for(
                &history[c.slot as usize],
                b.max(void_until).max(current_at),
                number,
            ));
        }
        seen.priority += c.urgency;
        cands.push(i, true, seen.priority);
        // Sent or not, a changed candidate is looked at again next broadcast.
        view.ents.pend(slot);
    }
    sel.due = due;
    ages.held = view.ents.settled().saturating_sub(own);
    cands
}

/// Whether the client has entity `net` (in `slot`): it knows it, and has acknowledged the
/// message that spawned it there (until then it is looked at again every broadcast).
fn spawned_there(view: &mut ClientView, (slot, net): (u32, NetId), conn: &Connection) -> bool {
    let Some(announced) = view.ents.get(slot, net).map(Seen::announced) else {
        return false;
    };
    if let Some(m) = announced {
        if !conn.delivered(m) {
            view.ents.pend(slot);
            return false;
        }
        view.ents.settle(slot);
    }
    true
}

/// What an entity whose state the client holds, or predicts, needs this broadcast.
enum Look {
    /// Nothing until this broadcast.
    Sleep(u32),
    /// Nothing now; look again next broadcast (a prediction moves on, and may stop
    /// standing for the state).
    Pend,
    /// A refresh, at this priority.
    Refresh(f32),
}

/// [`Look`] for an entity the client holds (`same`) or predicts, whose baseline is of
/// broadcast `f` and which was last sent `seen.last_sent`: a refresh once one is due (and
/// not within a batch of its last send), its priority grown by how overdue it is.
fn unchanged(seen: &mut Seen, same: bool, f: u32, cadence: &Cadence) -> Look {
    let number = cadence.number;
    let age = number - f;
    let resend_ok = seen.last_sent().is_none_or(|s| number - s >= cadence.batch);
    if !cadence.refresh_due(age) || !resend_ok {
        return if same {
            Look::Sleep(cadence.next_look(f, seen.last_sent()))
        } else {
            Look::Pend
        };
    }
    let overdue = age.saturating_sub(cadence.refresh) as f32 / cadence.rate;
    seen.priority += REFRESH_PRIORITY + OVERDUE_PRIORITY * overdue;
    Look::Refresh(seen.priority)
}

/// How many broadcasts a changed entity's copy on a client has been out of date at
/// broadcast `number`: since the first change after `held`, the newest of the state the
/// client holds, when it last held the body itself (`Seen::void_until`) and when its copy
/// last stood for the server's state (`Seen::current_at`: a prediction from its state
/// held). Not since it was sent that state: a body that rested long, that the client
/// pushed, or that flew where both ends predicted, is not stale the moment the server's
/// copy moves, or leaves the prediction. No change since: its copy is current.
fn stale_for(history: &History, held: u32, number: u32) -> u32 {
    let since = history.changed_after(held).unwrap_or(number);
    number.saturating_sub(since)
}

/// When the refreshes among `cands` are looked at again: at the next broadcast if state
/// goes to the client now (sent or not, a candidate is looked at again), or else at the
/// next batch, when refreshes alone go (until then, looking at them again would find the
/// same: anything that changes is looked at anyway).
pub(super) fn next_looks(
    view: &mut ClientView,
    cands: &[Candidate],
    world: &[Current<'_>],
    cadence: &Cadence,
    sends: bool,
) {
    let batch = cadence.batch.max(1);
    let next_batch = (cadence.number / batch + 1) * batch;
    for c in cands.iter().filter(|c| !c.changed) {
        let slot = world[c.at].slot;
        if sends {
            view.ents.pend(slot);
        } else {
            view.ents.sleep_until(slot, next_batch);
        }
    }
}

/// Whether the client holds `c`'s state (`same`), or predicts it (`foreseen`).
///
/// The client predicts a predicted entity the server says nothing of, from the newest
/// section it holds: unchanged is not enough, the prediction must stand too (a body at
/// rest predicts itself; one creeping under gravity, say, would sink). Where it does not,
/// even an unchanged one goes (as "the same", a byte or two).
fn current(
    c: &Current<'_>,
    seen: &Seen,
    forecasts: &mut Forecasts,
    history: &[History],
) -> (bool, bool) {
    // Bytes that came back to the baseline's stand for the client's copy only if nothing
    // newer went since: a section sent after it may have arrived, and the client predicts
    // from the newest it holds.
    let unchanged = seen.baseline().is_some_and(|(f, b)| {
        f >= c.version || (b == c.bytes && seen.last_sent().is_none_or(|s| s <= f))
    });
    match (c.predicts, unchanged) {
        (false, _) => (unchanged, false),
        (true, true) if c.resting => (true, false),
        (true, _) => (false, follows_prediction(c, seen, forecasts, history)),
    }
}

/// Whether the client's prediction of `c` stands for its state now, whichever section the
/// client predicts from (its newest): its baseline, or the one sent since if that arrived.
/// Not after two sends since the baseline: any of them may be the client's newest, and the
/// server knows only the last two (until an acknowledgement catches up, it goes).
fn follows_prediction(
    c: &Current<'_>,
    seen: &Seen,
    forecasts: &mut Forecasts,
    history: &[History],
) -> bool {
    let Some((bf, base)) = seen.baseline() else {
        return false;
    };
    if seen.sent_twice_since_baseline()
        || !forecasts.agrees(c.net, c.codec.get(), (bf, base), c.bytes)
    {
        return false;
    }
    match seen.last_sent().filter(|s| *s > bf) {
        None => true,
        Some(s) => history
            .get(c.slot as usize)
            .and_then(|h| h.at(s))
            .is_some_and(|b| forecasts.agrees(c.net, c.codec.get(), (s, b), c.bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::baseline::Ents;
    use lanyard::NetId;

    fn cadence(refresh: u32, batch: u32, number: u32) -> Cadence {
        let step = (refresh / 2).max(1);
        Cadence {
            number,
            rate: 20.0,
            budget: 600,
            ceiling: 1e6,
            refresh,
            batch,
            at_round: number.is_multiple_of(step),
        }
    }

    /// Whether the original rule (every entity looked at every broadcast) finds an
    /// unchanged entity due at `n`.
    fn due_at(refresh: u32, batch: u32, n: u32, f: u32, last_sent: Option<u32>) -> bool {
        let c = cadence(refresh, batch, n);
        c.refresh_due(n - f) && last_sent.is_none_or(|s| n - s >= batch)
    }

    #[test]
    fn an_unchanged_entity_wakes_no_later_than_its_refresh_comes_due() {
        for (refresh, batch) in [(80, 5), (1, 1), (7, 3), (2, 9), (40, 1)] {
            for number in 1..200u32 {
                for f in number.saturating_sub(90).max(1)..=number {
                    for last_sent in [None, Some(f), Some(number), Some(number.saturating_sub(2))] {
                        if last_sent.is_some_and(|s| s < f) {
                            continue;
                        }
                        let wake = cadence(refresh, batch, number).next_look(f, last_sent);
                        assert!(wake > number, "a wake is in the future");
                        let first = (number + 1..number + 400)
                            .find(|n| due_at(refresh, batch, *n, f, last_sent))
                            .expect("an unchanged entity comes due");
                        assert!(
                            wake <= first,
                            "refresh {refresh} batch {batch} now {number} baseline {f} \
                             sent {last_sent:?}: wakes at {wake}, due at {first}"
                        );
                        let len = cadence(refresh, batch, number).wheel_len();
                        assert!(((wake - number) as usize) < len, "the wheel spans the wake");
                    }
                }
            }
        }
    }

    #[test]
    fn a_client_looks_at_what_changed_what_is_pending_and_what_wakes_and_nothing_else() {
        let mut ents = Ents::default();
        for s in 0..10u32 {
            ents.insert(s, NetId(100 + s), None);
        }
        let mut out = Vec::new();
        ents.due(1, &[], 8, &mut out);
        assert_eq!(out.len(), 10, "new entities are looked at once");
        for s in 0..10 {
            ents.sleep_until(s, 5);
        }
        ents.sleep_until(3, 2);
        ents.pend(4);
        out.clear();
        ents.due(2, &[7, 7, 11], 8, &mut out);
        out.sort_unstable();
        assert_eq!(
            out,
            [3, 4, 7],
            "the woken, the pending and the changed, once each"
        );
        // A look ends with a new wake (or pending again): here, unchanged.
        for s in [3, 4, 7] {
            ents.sleep_until(s, 9);
        }
        out.clear();
        ents.due(3, &[], 8, &mut out);
        assert!(
            out.is_empty(),
            "a world at rest costs nothing between wakes"
        );
        ents.remove(6, NetId(106));
        out.clear();
        ents.due(5, &[], 8, &mut out);
        out.sort_unstable();
        assert_eq!(
            out,
            [0, 1, 2, 5, 8, 9],
            "what sleeps wakes, what is gone does not"
        );
        out.clear();
        ents.due(9, &[], 8, &mut out);
        out.sort_unstable();
        assert_eq!(out, [3, 4, 7]);
    }

    #[test]
    fn refreshes_that_cannot_go_alone_wait_for_the_batch_unless_state_goes_now() {
        let bytes = [1u8; 4];
        let world: Vec<Current<'_>> = (0..3u32)
            .map(|s| Current::server(NetId(100 + s), s, &bytes, 1))
            .collect();
        let looks = |sends: bool| {
            let mut view = ClientView::default();
            let mut out = Vec::new();
            for s in 0..3u32 {
                view.ents.insert(s, NetId(100 + s), None);
            }
            view.ents.due(1, &[], 16, &mut out);
            // Broadcast 6 (batches every 5): entities 0 and 2 are due for a refresh.
            let refresh = |at| Candidate {
                at,
                changed: false,
                priority: 1.0,
            };
            let cands = [refresh(0), refresh(2)];
            next_looks(&mut view, &cands, &world, &cadence(80, 5, 6), sends);
            (7..=10)
                .map(|n| {
                    out.clear();
                    view.ents.due(n, &[], 16, &mut out);
                    out.sort_unstable();
                    out.clone()
                })
                .collect::<Vec<_>>()
        };
        let nothing: Vec<u32> = Vec::new();
        assert_eq!(
            looks(false),
            [
                nothing.clone(),
                nothing.clone(),
                nothing.clone(),
                vec![0, 2]
            ],
            "nothing went: looked at again at the next batch, not before"
        );
        assert_eq!(
            looks(true),
            [vec![0, 2], nothing.clone(), nothing.clone(), nothing],
            "state went: looked at again next broadcast"
        );
    }
}
