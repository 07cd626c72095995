//! Copies held where their authority rests.
//!
//! The server says nothing of a body whose state is what we hold (or, for a kind that
//! predicts, what we predict from it), and a body at rest is predicted to stay
//! ([`at_rest`]): a crate asleep on a pile is covered only by the occasional refresh. Our
//! copy of it is simulated between, in a world that differs from the server's by up to
//! the tolerance everywhere, and a copy balanced on an edge or on another copy creeps, or
//! slides off, where the server's sleeps (explorer seed 382: a crate 19 cm off, 9 s after
//! the last fault). The server's silence says its body is still within the tolerance of
//! the state we hold, so we hold the copy there too: each frame, a server body whose
//! newest state we hold is at rest, and whose copy drifted past the correction tolerance,
//! is offered that state again, as a guess (never dated). The client path corrects it as
//! it does any section; a section that comes this frame replaces the guess. A body we or
//! another client hold is never held, nor one whose state we asked to have whole.
//!
//! One the server took back from its holder is held too, at the holder's last state,
//! which the server relayed to us and took the body back with (explorer seeds 708, 1250,
//! 1542: a pushed crate came to rest on the server, which said nothing more of it, and a
//! spectator's copy fell or slid away from it, by 1.1 cm to 43 cm).

use super::ClientReplication;
use lanyard::codec::{Section, SectionReader};
use lanyard::pose::{CORRECTION_TOLERANCE, PoseState};
use lanyard::predict::at_rest;
use lanyard::{FramePass, NetId, Owner};

impl ClientReplication {
    /// Offers each server body at rest whose copy drifted from its resting state that
    /// state again (see the module). Runs before the frame's datagrams are taken, so
    /// their sections win.
    pub(crate) fn hold_resting(&self, pass: &mut FramePass<'_>) {
        let group = pass.group();
        let mut due: Vec<(NetId, Vec<u8>)> = Vec::new();
        for (net, rec) in &self.received {
            if self.asked.contains(net) {
                continue;
            }
            let Some(e) = group.by_net(*net) else {
                continue;
            };
            let Some((base, _)) = rec.newest() else {
                continue;
            };
            if e.owner() != Owner::Server || !rec.posed || !at_rest(base) {
                continue;
            }
            let Ok(pose) = PoseState::read(&mut SectionReader::new(base)) else {
                continue;
            };
            if pose.differs_from(e.body(), CORRECTION_TOLERANCE) {
                due.push((*net, base.to_vec()));
            }
        }
        due.sort_unstable_by_key(|(net, _)| *net);
        for (net_id, payload) in &due {
            let section = Section {
                net_id: *net_id,
                payload,
            };
            pass.offer_section(section, Owner::Server);
        }
    }
}
