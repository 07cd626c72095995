//! Replication: what goes to whom.
//!
//! * **Server.** Every spawn, despawn and owner change is announced on each client's
//!   reliable channel; a late joiner gets the whole world. A client's sections are applied
//!   only to entities it owns and only if the kind's [`Controller::validate`] hook calls
//!   them legal; accepted ones are forwarded to the other clients (never back). A refused
//!   one earns the owner a correction: the server's own body state of the entity (never a
//!   decision made by running the owner's server path here). A client's spawn request is
//!   judged by the kind's spawn judge ([`KindRegistry::judge_spawns`]) before anything is
//!   built; the client's provisional id maps to the id the server assigns. Every refusal is
//!   counted for the peer and logged now and then.
//! * **Client.** Applies the server's announcements, corrections and sections; sends its
//!   own spawns up under provisional ids and its despawns as requests.
//! * **Baselines.** The server numbers its broadcasts. Per client and entity it
//!   keeps the newest section the client acknowledged (its baseline) and sends nothing while
//!   the entity's section equals it; a changed section travels as a delta against it (the
//!   kind's [`DeltaCodec`]), naming the baseline's broadcast. Only acknowledged sections are
//!   ever baselines, so loss cannot desynchronise the two ends. A resting entity is sent
//!   again every `refresh` seconds (a couple of bytes), which heals a client whose copy
//!   drifted; refreshes go in rounds every half refresh, so what came to rest together
//!   is refreshed together. A body that just came to rest is sent until its resting
//!   state is acknowledged. State for an entity goes to a client only once the client acknowledged
//!   the message that announced the entity.
//! * **Prediction.** For the server's entities of a kind whose codec predicts
//!   ([`DeltaCodec::predicts`]), the server sends nothing while the prediction from what
//!   the client holds (its baseline, and the newer section in flight if any) agrees with
//!   the entity's section; otherwise a delta against that prediction, or the prediction
//!   itself when a refresh is due. Every datagram's state starts with the tick its
//!   sections were written at and the network ids it speaks for (`wire::StateHead`);
//!   the client offers each such entity it was not sent its prediction from the newest
//!   section it holds, over the ticks between.
//! * **Budget.** Each broadcast fills a per-client byte budget by priority: every
//!   broadcast a changed entity gains its kind's priority, more the faster it moves or the
//!   harder it was just hit, and a refresh that is due gains a little; the highest go, the
//!   rest keep what they accumulated. Spawns, despawns and events are reliable messages,
//!   outside the budget.
//! * **Pace.** Under the budget, each client's link sets the pace: the server finds what
//!   it carries as congestion control does (`session::pace`: a slow start, back-offs on a
//!   queue in the round trip and under the rate the client acknowledged, a cap from the
//!   loss), and holds everything it sends that client to it, reliable messages first and
//!   then state. A client the link starves shows it in its state age.
//! * **Relevance.** A per-client filter ([`NetManager::set_relevance`]) decides which
//!   entities a client needs. An entity that stops being relevant is despawned on that
//!   client (a reliable despawn) and spawned there again, where it is then, once it is
//!   relevant again; a client's own entities are always relevant to it.
//! * **In proportion to change.** A broadcast looks, per client, only at the entities that
//!   changed, are still pending (changed and not yet acknowledged, predicted, or not yet
//!   announced) or whose refresh may be due (a timer wheel), by flat arrays indexed by
//!   each entity's slot (`select`, `slots`): a world at rest costs a client next to
//!   nothing between refreshes, however many entities it holds.
//! * **One broadcast, in steps** (`server`): the world's state ([`world::Ledger::world`],
//!   which owns each entity's slot, recent sections and last velocity), then for each
//!   client `send_state`: what it could be sent (`select::candidates`), the budget filled
//!   by priority, the picks packetized. Hand-off's state is a [`handoff::Handoff`] the
//!   replication owns.
//! * **Encode once.** The server's sections are written once per broadcast (the frame's
//!   packet); a delta against a given baseline is computed once for every client that
//!   holds that baseline. Per client only the selection, the entry headers and the
//!   datagram headers differ.
//!
//! [`Controller::validate`]: lanyard::Controller::validate
//! [`DeltaCodec`]: lanyard::delta::DeltaCodec
//! [`DeltaCodec::predicts`]: lanyard::delta::DeltaCodec::predicts
//! [`NetManager::set_relevance`]: crate::NetManager::set_relevance
//! [`KindRegistry::judge_spawns`]: lanyard::KindRegistry::judge_spawns

use lanyard::codec::PacketWriter;
use lanyard::{ClientId, EntityRef, WorldView};
use std::ops::Range;

mod age;
mod client;
mod forecast;
mod handoff;
mod hits;
mod requests;
mod select;
mod server;
mod slots;
mod takeover;
mod world;

pub(crate) use client::ClientReplication;
pub(crate) use server::ServerReplication;

/// Broadcasts of sections a client keeps for deltas to name.
const CLIENT_KEEP: u32 = 64;
/// The smallest state budget per broadcast, in bytes, whatever the configuration says.
const MIN_BUDGET: usize = 64;
/// What a due refresh gains per broadcast; more the longer it is overdue (see
/// [`OVERDUE_PRIORITY`]), so a busy world cannot starve it.
const REFRESH_PRIORITY: f32 = 0.05;
/// What an overdue refresh gains on top, per broadcast and second overdue.
const OVERDUE_PRIORITY: f32 = 4.0;

/// Decides whether a client needs an entity (see [`crate::NetManager::set_relevance`]).
pub type Relevance =
    std::sync::Arc<dyn Fn(ClientId, EntityRef<'_>, &WorldView<'_>) -> bool + Send + Sync>;

/// Splits a packet into runs of whole sections of at most `room` bytes, by the section
/// boundaries its writer recorded (nothing is parsed).
pub(crate) fn chunks(packet: &PacketWriter, room: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut last = 0;
    for end in packet.section_ends() {
        if end - start > room && last > start {
            out.push(start..last);
            start = last;
        }
        last = end;
    }
    if last > start {
        out.push(start..last);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lanyard::NetId;
    use lanyard::codec::PacketReader;

    #[test]
    fn chunks_hold_whole_sections_and_fit_the_room() {
        let mut p = PacketWriter::new();
        for i in 0..100u32 {
            p.section(NetId(i), |w| {
                for _ in 0..40 {
                    w.u8(i as u8)
                }
            })
            .unwrap();
        }
        let c = chunks(&p, 500);
        assert!(c.len() >= 9);
        let mut n = 0;
        for r in &c {
            assert!(r.len() <= 500);
            for s in PacketReader::new(&p.as_bytes()[r.clone()]) {
                assert_eq!(s.unwrap().net_id, NetId(n));
                n += 1;
            }
        }
        assert_eq!(n, 100);
        assert_eq!(c.last().unwrap().end, p.as_bytes().len());
    }
}
