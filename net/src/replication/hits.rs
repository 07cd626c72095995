//! How often each kind's bodies follow their prediction while they touch nothing: the
//! server's check that a kind's motion is what its client path does. A kind whose free
//! bodies mostly miss is warned about once, by name ([`NetEvent::Mispredicted`]).

use super::world::Current;
use crate::event::NetEvent;
use crate::stats::PeerStats;
use lanyard::{EntityGroup, KindId, NetId};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Predicted updates of a kind weighed before it is judged.
pub(crate) const JUDGED_AFTER: u32 = 200;

/// The share of those that must miss for a warning.
pub(crate) const WARN_SHARE: f32 = 0.5;

/// One kind's predictions of free bodies since it was last judged.
#[derive(Default, Clone, Copy)]
struct Tally {
    held: u32,
    missed: u32,
    warned: bool,
}

/// The server's predictions of free bodies, by kind.
#[derive(Default, Clone)]
pub(super) struct Hits {
    kinds: BTreeMap<KindId, Tally>,
    /// Whether each entity that missed this broadcast touches anything (asked once).
    touching: HashMap<NetId, bool>,
}

impl Hits {
    /// A broadcast begins.
    pub(super) fn begin(&mut self) {
        self.touching.clear();
    }

    /// One client's predicted candidates (`outcomes`: index in `world`, whether the
    /// client's prediction stood for the state): counted in its stats and its kinds'
    /// tallies, except the misses of bodies that touch something (a collision, a slide: no
    /// motion predicts those). A kind judged mostly missed is warned about in `events`.
    pub(super) fn note(
        &mut self,
        outcomes: &[(u32, bool)],
        (world, group): (&[Current<'_>], &EntityGroup),
        stats: &mut PeerStats,
        events: &mut VecDeque<NetEvent>,
    ) {
        for &(i, held) in outcomes {
            let Some(c) = world.get(i as usize) else {
                continue;
            };
            if !held {
                let touching = *self.touching.entry(c.net).or_insert_with(|| {
                    group
                        .id_of(c.net)
                        .is_none_or(|id| group.touches_anything(id))
                });
                if touching {
                    continue;
                }
            }
            let t = self.kinds.entry(c.kind).or_default();
            if held {
                stats.predictions_held += 1;
                t.held += 1;
            } else {
                stats.predictions_missed += 1;
                t.missed += 1;
            }
            if t.held + t.missed < JUDGED_AFTER {
                continue;
            }
            let share = t.missed as f32 / (t.held + t.missed) as f32;
            if share >= WARN_SHARE && !t.warned {
                t.warned = true;
                let kind = group.registry().name_of(c.kind).unwrap_or("?").to_owned();
                tracing::warn!(
                    "{kind}: {:.0}% of updates mispredicted: does its motion match its \
                     client path? (bodies that touch nothing, {} updates)",
                    share * 100.0,
                    t.held + t.missed
                );
                let percent = (share * 100.0).round() as u8;
                events.push_back(NetEvent::Mispredicted { kind, percent });
            }
            // Judged afresh over the next ones, the older weighing half.
            t.held /= 2;
            t.missed /= 2;
        }
    }
}
