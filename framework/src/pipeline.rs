//! The frame: the one definition of the pass order.
//!
//! Every frame of every group runs the same passes in the same order, whoever drives it:
//!
//! 1. **inbound**: what arrived from outside (a network layer's datagrams, a replay's
//!    recorded ops) is taken in through a [`FramePass`];
//! 2. **server paths**: the controller of every entity this group has authority over writes
//!    its section into one packet, which the driver sees ([`FrameDriver::outbound`]);
//! 3. **loopback**: that packet goes back through decode into this group's own client
//!    paths, as if it had come from the network;
//! 4. **client paths**: every entity's client path runs, with its section or without one;
//! 5. **commands**: despawns, then spawns the client paths asked for; spawns this side
//!    cannot carry out alone go to the driver ([`FrameDriver::after_commands`]);
//! 6. **physics**: one fixed step, and the tick advances.
//!
//! [`EntityGroup::frame`] is a frame with nothing from outside. The network layer
//! (`lanyard-net`) drives the server's and the client's frames through a [`FrameDriver`], and
//! a [`Replay`](crate::replay::Replay) drives its frames from a recording; none of them can
//! run the passes in another order, so recording and replay always agree.

use crate::codec::{PacketWriter, Section};
use crate::controller::SpawnRequest;
use crate::error::Error;
use crate::group::{EntityGroup, Fault, ReceiveReport, SectionError, Verdict};
use crate::id::Owner;

/// What one frame did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameReport {
    /// The tick this frame computed (the group's tick is one more afterwards).
    pub tick: u64,
    /// Sections the server paths wrote.
    pub sections_written: usize,
    /// Client paths that ran with a section.
    pub sections_applied: usize,
    /// Client paths that rejected their section.
    pub bad_sections: usize,
    /// Entities spawned after the client pass.
    pub spawned: usize,
    /// Entities despawned after the client pass.
    pub despawned: usize,
    /// Errors from carrying out commands (failed spawns).
    pub errors: Vec<Error>,
    /// Sections client paths refused, with the error, the kind by name and the network
    /// id (counted in `bad_sections` too).
    pub section_errors: Vec<SectionError>,
    /// Controller hooks that panicked, caught (see [`Fault`]).
    pub faults: Vec<Fault>,
}

/// The parts of a frame that differ between a standalone group, a networked server, a
/// networked client and a replay. Every hook has a default that does nothing.
pub trait FrameDriver {
    /// Whether this frame runs server paths (and loops their packet back). A replay does
    /// not: its sections come from the recording.
    fn runs_server_paths(&self) -> bool {
        true
    }

    /// Pass 1: take in what arrived from outside: sections (through
    /// [`FramePass::offer_section`] or [`FramePass::receive_packet`]), spawns, despawns,
    /// owner changes, body states.
    fn inbound(&mut self, pass: &mut FramePass<'_>) {
        let _ = pass;
    }

    /// Pass 2: the packet the server paths just wrote, before it is looped back. A network
    /// layer keeps what it sends from here.
    fn outbound(&mut self, packet: &PacketWriter) {
        let _ = packet;
    }

    /// Pass 5: after the commands, before physics. `requests` holds spawns of entities
    /// this client will own, which only the server can give ids to: take the ones you
    /// carry out; the rest wait for the next frame.
    fn after_commands(&mut self, pass: &mut FramePass<'_>, requests: &mut Vec<SpawnRequest>) {
        let _ = (pass, requests);
    }
}

/// A frame with nothing from outside.
struct Standalone;

impl FrameDriver for Standalone {}

/// A group in the middle of a frame, as a [`FrameDriver`] sees it: the group itself, plus
/// the one thing only a frame may do, queueing sections for this frame's client paths.
pub struct FramePass<'g> {
    group: &'g mut EntityGroup,
}

impl FramePass<'_> {
    /// The group.
    pub fn group(&self) -> &EntityGroup {
        self.group
    }

    /// The group, to spawn, despawn, hand over, rename or place entities.
    pub fn group_mut(&mut self) -> &mut EntityGroup {
        self.group
    }

    /// Judges one section from `from` and, if accepted, queues it for its entity's client
    /// path this frame (the newest section for an entity wins).
    ///
    /// The server (`from == Owner::Server`) may send a section for any entity. Anyone else
    /// only for an entity they own, and then the entity's controller
    /// ([`Controller::validate`](crate::Controller::validate)) judges whether the content is
    /// legal. Every refusal is counted in [`EntityGroup::counters`].
    pub fn offer_section(&mut self, section: Section<'_>, from: Owner) -> Verdict {
        self.group.offer_section(section, from)
    }

    /// Decodes a packet body from `from` and offers each section. Bad sections are skipped
    /// and counted; the rest of the packet still counts.
    pub fn receive_packet(&mut self, bytes: &[u8], from: Owner) -> ReceiveReport {
        self.group.receive_sections(bytes, from)
    }
}

impl EntityGroup {
    /// One whole frame with nothing from outside: server paths into one packet, the packet
    /// looped back through decode and the client paths (unless loopback is off), spawns and
    /// despawns, one physics step.
    pub fn frame(&mut self) -> FrameReport {
        self.run_frame(&mut Standalone)
    }

    /// One frame, with `driver` supplying what comes from outside and taking what goes out.
    /// The passes run in the one order this module defines.
    pub fn run_frame(&mut self, driver: &mut dyn FrameDriver) -> FrameReport {
        let tick = self.tick();
        self.begin_frame();
        driver.inbound(&mut FramePass { group: self });
        let mut sections_written = 0;
        if driver.runs_server_paths() {
            self.write_sections();
            sections_written = self.last_packet().section_count();
            driver.outbound(self.last_packet());
            if self.config().loopback {
                self.loop_back();
            }
        }
        let (sections_applied, bad_sections) = self.run_client_paths();
        let (spawned, despawned, errors) = self.apply_commands();
        let mut requests = self.take_spawn_requests();
        driver.after_commands(&mut FramePass { group: self }, &mut requests);
        self.requeue_spawn_requests(requests);
        self.step_physics();
        let (faults, section_errors) = self.take_frame_problems();
        FrameReport {
            tick,
            sections_written,
            sections_applied,
            bad_sections,
            spawned,
            despawned,
            errors,
            section_errors,
            faults,
        }
    }
}
