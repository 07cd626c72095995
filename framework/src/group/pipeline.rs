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
//!
//! The passes themselves are the `EntityGroup` methods at the end of this file.

use super::{
    Counters, EntityGroup, Fault, Hook, ReceiveReport, SectionError, Verdict, guarded, kind_label,
    panic_message, push_fault,
};
use crate::codec::{PacketReader, PacketWriter, Section};
use crate::config::Role;
use crate::controller::{
    ClientContext, Command, Controller, Effect, Legality, SpawnRequest, WorldView, entity_ref,
};
use crate::entity::{Entity, Pending};
use crate::error::{CodecError, Error};
use crate::id::{EntityId, KindId, NetId, Owner};
use crate::predict::Steer;
use crate::record::format::{Op, TickRecord};
use crate::registry::KindRegistry;

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
    /// Sections that came to nothing, with the error, the kind by name and the network
    /// id: those client paths refused (counted in `bad_sections` too), those an owner sent
    /// that its kind judged illegal ([`Error::IllegalSection`]), and those a server path
    /// wrote too long to send ([`CodecError::SectionTooLong`]).
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

    /// When server paths run: whether only those of kinds that [decide
    /// alone](crate::KindOptions::decides_alone) do. A replay runs those (their sections
    /// were not recorded) and takes the others' sections from the recording.
    fn only_deciding_alone(&self) -> bool {
        false
    }

    /// Pass 1: take in what arrived from outside: sections (through
    /// [`FramePass::offer_section`] or [`FramePass::receive_packet`]), spawns, despawns,
    /// owner changes, body states.
    fn inbound(&mut self, pass: &mut FramePass<'_>) {
        let _ = pass;
    }

    /// Pass 2: the packet the server paths just wrote, before it is looped back (a replay
    /// compares it with the decisions it recorded here). What a network layer sends it
    /// reads after the frame from [`EntityGroup::last_packet`], which keeps the packet
    /// until the next frame, with no copy.
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
    /// ([`Controller::validate`]) judges whether the content is legal. Every refusal is
    /// counted in [`EntityGroup::counters`].
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
            self.write_sections(driver.only_deciding_alone());
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

impl EntityGroup {
    /// Forgets the last frame's observed poses: a frame begins.
    pub(crate) fn begin_frame(&mut self) {
        self.observed.clear();
        self.faults.clear();
        self.section_errors.clear();
    }

    /// Runs the server path of every entity this group has authority over (with
    /// `only_alone`, of those whose kind decides alone), in network-id order, into one
    /// packet (kept as [`last_packet`](Self::last_packet) until the next call).
    pub(crate) fn write_sections(&mut self, only_alone: bool) {
        self.outgoing.clear();
        self.written.clear();
        let local = self.local_owner();
        let view = WorldView {
            slots: &self.slots,
            order: &self.order,
            physics: &self.physics,
            tick: self.tick,
            dt: self.config.dt,
        };
        for &(net, index) in &self.order {
            let i = index as usize;
            let Some(me) = entity_ref(&self.slots[i], &self.physics) else {
                continue;
            };
            // A replay writes again what was not recorded: the sections of kinds that
            // decide alone, of entities nothing changed from outside.
            let recorded = !self.registry.decides_alone(me.kind()) || self.slots[i].outside;
            if me.owner() != local || (only_alone && recorded) {
                continue;
            }
            let Some(ctrl) = self.controllers[i].as_deref_mut() else {
                continue;
            };
            let packet = &mut self.outgoing;
            let written = guarded(|| packet.section(net, |w| ctrl.server_update(me, &view, w)));
            match written {
                Ok(Ok(0)) => {}
                Ok(Ok(_)) => self.written.push(index),
                Ok(Err(error)) => {
                    // Too long to send: dropped, and said so, with the kind and the entity.
                    self.counters.oversized_sections += 1;
                    self.section_errors.push(SectionError {
                        net,
                        kind: kind_label(&self.registry, me.kind()),
                        error: error.into(),
                    });
                }
                Err(payload) => {
                    // The half-written section is dropped with the panic's unwinding
                    // (`section` only commits what returned).
                    self.counters.faults += 1;
                    push_fault(
                        &mut self.faults,
                        Fault {
                            net,
                            kind: kind_label(&self.registry, me.kind()),
                            owner: me.owner(),
                            hook: Hook::ServerPath,
                            message: panic_message(payload.as_ref()),
                        },
                    );
                }
            }
        }
    }

    /// The packet the server paths of the last frame wrote (the sections this group has
    /// authority over).
    pub fn last_packet(&self) -> &PacketWriter {
        &self.outgoing
    }

    /// Offers the packet the server paths just wrote to this group's own client paths, as
    /// if it had come from the network (self-loopback), without parsing it again.
    pub(crate) fn loop_back(&mut self) {
        let packet = std::mem::take(&mut self.outgoing);
        let local = self.local_owner();
        self.looping_back = true;
        if local == Owner::Server && self.recorder.is_none() {
            // The server's word needs no judging, and each section's entity is known (its
            // path just wrote it, in the order the client pass goes): the client pass takes
            // them from the packet as it comes to them.
            self.counters.sections_in += self.written.len() as u64;
            self.own_in_step = true;
        } else if local == Owner::Server {
            // The same, queued one by one, so that the recorder sees each.
            let written = std::mem::take(&mut self.written);
            for (&i, (at, section)) in written.iter().zip(packet.sections_at()) {
                self.queue(i as usize, section, Some(at));
            }
            self.written = written;
        } else {
            let mut hint = 0;
            for (at, section) in packet.sections_at() {
                self.offer_at(section, local, &mut hint, Some(at));
            }
        }
        self.looping_back = false;
        self.outgoing = packet;
    }

    /// Decodes a packet body from `from` and offers each section to its entity
    /// ([`offer_section`](Self::offer_section)). Bad sections are skipped and counted; the
    /// rest of the packet still counts.
    pub(crate) fn receive_sections(&mut self, bytes: &[u8], from: Owner) -> ReceiveReport {
        let mut report = ReceiveReport::default();
        // Packets are written in network-id order, so the next section's entity is usually
        // the one after the last: try there before searching.
        let mut hint = 0;
        for section in PacketReader::new(bytes) {
            let Ok(section) = section else {
                report.framing_error = true;
                self.counters.framing_errors += 1;
                break;
            };
            match self.offer_at(section, from, &mut hint, None) {
                Verdict::Accepted => report.accepted += 1,
                Verdict::UnknownEntity => report.unknown_entity += 1,
                Verdict::NotOwner => report.not_owner += 1,
                Verdict::Illegal => report.illegal += 1,
            }
        }
        report
    }

    /// In strict mode, lists a refused section in the frame's report.
    fn strictly(&mut self, net: NetId, kind: String, error: Error) {
        if self.strict {
            self.section_errors.push(SectionError { net, kind, error });
        }
    }

    /// Judges one section from `from` and, if it is accepted, queues it for its entity's
    /// client path this frame (see [`FramePass::offer_section`](crate::FramePass::offer_section)).
    pub(crate) fn offer_section(&mut self, section: Section<'_>, from: Owner) -> Verdict {
        self.offer_at(section, from, &mut 0, None)
    }

    /// [`offer_section`](Self::offer_section) starting the search at `hint`; `own_at` is
    /// where the section's payload starts in this group's own packet, when it is looped back.
    pub(super) fn offer_at(
        &mut self,
        section: Section<'_>,
        from: Owner,
        hint: &mut usize,
        own_at: Option<u32>,
    ) -> Verdict {
        let Some(i) = self.locate(section.net_id, from, hint) else {
            return Verdict::UnknownEntity;
        };
        if from != Owner::Server
            && let Err(refused) = self.judge(i, section, from)
        {
            return refused;
        }
        self.queue(i, section, own_at);
        Verdict::Accepted
    }

    /// The slot of entity `net`, searched from `hint` (moved past it); counted as unknown
    /// (a section from `from` for no entity) if there is none.
    fn locate(&mut self, net: NetId, from: Owner, hint: &mut usize) -> Option<usize> {
        let pos = match self.order.get(*hint) {
            Some(&(n, _)) if n == net => Some(*hint),
            _ => self.order.binary_search_by_key(&net, |e| e.0).ok(),
        };
        let i = pos.map(|pos| {
            *hint = pos + 1;
            self.order[pos].1 as usize
        });
        let i = i.filter(|&i| entity_ref(&self.slots[i], &self.physics).is_some());
        if i.is_none() {
            self.counters.unknown_entity += 1;
            self.strictly(net, "?".into(), Error::SectionForNoEntity { from });
        }
        i
    }

    /// Whether client `from` may send `section` for the entity in slot `i`: it must hold
    /// it, and the controller must find the section legal (or the entity be trusted for
    /// now). A panic in the controller's check refuses it, as a fault.
    fn judge(&mut self, i: usize, section: Section<'_>, from: Owner) -> Result<(), Verdict> {
        let Some(me) = entity_ref(&self.slots[i], &self.physics) else {
            return Err(Verdict::UnknownEntity);
        };
        if me.owner() != from {
            self.counters.not_owner += 1;
            let kind = kind_label(&self.registry, me.kind());
            let owner = me.owner();
            self.strictly(section.net_id, kind, Error::NotTheOwner { from, owner });
            return Err(Verdict::NotOwner);
        }
        let view = self.view();
        let judged = guarded(|| {
            self.controllers[i]
                .as_deref()
                .is_some_and(|c| c.validate(me, section, &view) == Legality::Legal)
        });
        // A section the controller refuses is taken anyway while the entity is trusted (a
        // new host's first words from each client after a migration).
        let judged = match (judged, self.trusted.get_mut(&section.net_id)) {
            (Ok(legal), Some(left)) => {
                *left -= 1;
                if *left == 0 {
                    self.trusted.remove(&section.net_id);
                }
                if !legal {
                    self.counters.trusted += 1;
                }
                Ok(true)
            }
            (judged, _) => judged,
        };
        let legal = match judged {
            Ok(legal) => legal,
            Err(payload) => {
                let fault = Fault {
                    net: section.net_id,
                    kind: kind_label(&self.registry, me.kind()),
                    owner: me.owner(),
                    hook: Hook::Validate,
                    message: panic_message(payload.as_ref()),
                };
                self.counters.faults += 1;
                push_fault(&mut self.faults, fault);
                false
            }
        };
        if !legal {
            self.counters.illegal += 1;
            self.section_errors.push(SectionError {
                net: section.net_id,
                kind: kind_label(&self.registry, me.kind()),
                error: Error::IllegalSection { from },
            });
            return Err(Verdict::Illegal);
        }
        Ok(())
    }

    /// Queues an accepted section for the client path of the entity in slot `i` (see
    /// [`offer_at`](Self::offer_at)), and records it.
    fn queue(&mut self, i: usize, section: Section<'_>, own_at: Option<u32>) {
        let len = section.payload.len() as u32;
        self.slots[i].pending = Some(match own_at {
            // The packet the server paths wrote stays as it is until the client paths ran.
            Some(start) => Pending {
                start,
                len,
                own: true,
            },
            None => {
                let start = self.inbox.len() as u32;
                self.inbox.extend_from_slice(section.payload);
                Pending {
                    start,
                    len,
                    own: false,
                }
            }
        });
        self.counters.sections_in += 1;
        if let Some(r) = &mut self.recorder {
            // A section this group's own server path wrote for a kind that decides alone
            // is written again by the replay's.
            let slot = &self.slots[i];
            let regenerated = self.looping_back
                && !slot.outside
                && slot
                    .entity
                    .as_ref()
                    .is_some_and(|e| self.registry.decides_alone(e.kind));
            if !regenerated {
                r.section(section.net_id, section.payload);
            }
        }
    }

    /// Whether a section is queued for the entity with network id `net` this frame.
    pub fn has_pending_section(&self, net: NetId) -> bool {
        self.order
            .binary_search_by_key(&net, |e| e.0)
            .is_ok_and(|pos| self.slots[self.order[pos].1 as usize].pending.is_some())
    }

    /// Runs every entity's client path once, in network-id order, with its queued section
    /// or without one. Returns how many ran with a section and how many rejected theirs.
    pub(crate) fn run_client_paths(&mut self) -> (usize, usize) {
        self.recorder.iter_mut().for_each(|r| r.op(Op::ClientPass));
        let local = self.local_owner();
        let (mut applied, mut bad) = (0, 0);
        let lead = self.lead_ticks as f32 * self.config.dt;
        let in_step = std::mem::take(&mut self.own_in_step);
        let own_count = if in_step { self.written.len() } else { 0 };
        let mut next_own = 0;
        // One context for the pass: what differs from entity to entity is set before each
        // client path runs.
        let mut ctx = pass_context(
            &mut self.physics.bodies,
            &self.registry,
            (&mut self.commands, &mut self.effects, &mut self.observed),
            (self.tick, self.config.dt, self.config.gravity),
        );
        let watch = crate::codec::watch_reads();
        for &(net, index) in &self.order {
            let i = index as usize;
            let slot = &mut self.slots[i];
            let mut pending = slot.pending.take();
            let still = slot.still;
            // This group's own section, looped back in step (see `loop_back`).
            let mut own_here = false;
            if next_own < own_count && self.written[next_own] == index {
                if let Some((start, len)) = self.outgoing.payload_span(next_own) {
                    (pending, own_here) = (Some(Pending::own(start, len)), true);
                }
                next_own += 1;
            }
            let Some(entity) = slot.entity.as_mut() else {
                continue;
            };
            // A body whose server path ran this frame was there then, and nothing removes
            // bodies before the commands.
            if !own_here && ctx.bodies.get(entity.body).is_none() {
                continue;
            }
            let Some(ctrl) = self.controllers[i].as_deref_mut() else {
                continue;
            };
            let section = section_of(pending, net, (self.outgoing.as_bytes(), &self.inbox));
            let had_section = section.is_some();
            let authority = entity.owner == local;
            let lead = match authority || !had_section {
                true => 0.0,
                false => holder_lead((&self.holder_leads, &self.registry), entity, lead, ctx.dt),
            };
            ctx.aim(entity, net, (authority, pending), lead);
            let (kind, owner) = (entity.kind, entity.owner);
            let len = section.map_or(0, |s| s.payload.len());
            watch.section(section.map(|s| s.payload));
            let (ran, unsteered) = client_path(ctrl, entity, section, &mut ctx, still);
            if unsteered {
                self.slots[i].still = true;
            }
            match ran {
                // The common case, handled here: taken, or run without a section.
                Ok(Ok(())) => {
                    applied += usize::from(had_section);
                    // Read in part and taken: the rest was ignored (no `finish`).
                    if let Some(read) = watch.furthest().filter(|r| had_section && *r < len) {
                        let error = Error::Codec(CodecError::SectionNotFinished { read, len });
                        let kind = kind_label(&self.registry, kind);
                        self.section_errors.push(SectionError { net, kind, error });
                    }
                }
                failed => {
                    let (errors, faults) = (&mut self.section_errors, &mut self.faults);
                    let who = (had_section, (net, kind, owner));
                    let sink = (errors, faults, &mut self.counters);
                    bad += note_failure(failed, who, sink, &self.registry);
                }
            }
        }
        watch.end();
        self.inbox.clear();
        (applied, bad)
    }

    /// Carries out what client paths asked for: despawns first, then spawns. On the server
    /// a spawn happens at once with a new network id; on a client a spawn of an entity this
    /// client will own waits in [`take_spawn_requests`](Self::take_spawn_requests) for the
    /// network layer, and other spawns are left to the server. Returns the spawn count, the
    /// despawn count, and the errors of failed spawns.
    pub(crate) fn apply_commands(&mut self) -> (usize, usize, Vec<Error>) {
        if let Some(r) = &mut self.recorder {
            r.op(Op::Commands);
            r.quiet = true;
        }
        let result = self.carry_out_commands();
        if let Some(r) = &mut self.recorder {
            r.quiet = false;
        }
        result
    }

    pub(super) fn carry_out_commands(&mut self) -> (usize, usize, Vec<Error>) {
        let mut spawned = 0;
        let mut despawned = 0;
        let mut errors = Vec::new();
        let commands = std::mem::take(&mut self.commands);
        for c in &commands {
            // A client despawns only its own entities: the server's word decides the rest.
            if let Command::Despawn(net) = c
                && let Some(e) = self.by_net(*net)
                && (self.config.role == Role::Server || e.owner() == self.local_owner())
                && self.despawn(e.id()).is_ok()
            {
                despawned += 1;
            }
        }
        for c in commands {
            if let Command::Spawn(req) = c {
                match self.config.role {
                    Role::Server => match self.spawn_encoded(req.kind, req.params, req.owner) {
                        Ok(_) => spawned += 1,
                        Err(e) => {
                            self.counters.failed_spawns += 1;
                            errors.push(e);
                        }
                    },
                    Role::Client(_) if req.owner == self.local_owner() => self.requests.push(req),
                    Role::Client(_) => {}
                }
            }
        }
        (spawned, despawned, errors)
    }

    /// Spawns this client asked for that the network layer has to send up.
    pub(crate) fn take_spawn_requests(&mut self) -> Vec<SpawnRequest> {
        std::mem::take(&mut self.requests)
    }

    /// Puts back the spawn requests a driver did not carry out, ahead of newer ones.
    pub(crate) fn requeue_spawn_requests(&mut self, mut requests: Vec<SpawnRequest>) {
        if !requests.is_empty() {
            requests.append(&mut self.requests);
            self.requests = requests;
        }
    }

    /// The effects client paths emitted since the last call.
    pub fn drain_effects(&mut self) -> std::vec::Drain<'_, Effect> {
        self.effects.drain(..)
    }

    /// Steps physics once with the fixed timestep and advances the tick.
    pub(crate) fn step_physics(&mut self) {
        self.physics.step();
        self.tick += 1;
        if let Some(r) = &self.recorder {
            let hash = self.state_hash();
            let tick = self.tick - 1;
            let (keyframe_due, bodies_due) = r.due();
            let keyframe = keyframe_due.then(|| self.snapshot().ok()).flatten();
            let now = (bodies_due || keyframe_due).then(|| self.body_bits());
            if let Some(r) = &mut self.recorder {
                let keyframe = keyframe.map(|k| r.keyframe(k));
                let bodies = now.map(|n| r.body_frame(n));
                let ops = std::mem::take(&mut r.ops);
                r.tick(TickRecord {
                    tick,
                    ops,
                    hash,
                    bodies,
                    keyframe,
                });
            }
        }
    }
}

/// The lead entity `entity`'s section is brought forward by: `lead` (the group's), or, for
/// a body a client holds (hand-off), its holder's.
#[inline]
fn holder_lead(
    (holder_leads, registry): (&std::collections::BTreeMap<Owner, u32>, &KindRegistry),
    entity: &Entity,
    lead: f32,
    dt: f32,
) -> f32 {
    match entity.owner {
        Owner::Server => lead,
        holder => match holder_leads.get(&holder) {
            Some(&ticks) if registry.options(entity.kind).is_some_and(|o| o.hand_off) => {
                ticks as f32 * dt
            }
            _ => lead,
        },
    }
}

/// A client path that refused its section or panicked, for entity `who` (network id,
/// kind, owner), with a section or not: noted where the group keeps section errors, faults
/// and their counts. Returns 1 if it had a section, which counts as refused.
#[cold]
fn note_failure(
    failed: std::thread::Result<Result<(), Error>>,
    (had_section, (net, kind, owner)): (bool, (NetId, KindId, Owner)),
    (section_errors, faults, counters): (&mut Vec<SectionError>, &mut Vec<Fault>, &mut Counters),
    registry: &KindRegistry,
) -> usize {
    match failed {
        Ok(Ok(())) => 0,
        Ok(Err(error)) => {
            counters.bad_sections += 1;
            let kind = kind_label(registry, kind);
            section_errors.push(SectionError { net, kind, error });
            1
        }
        Err(payload) => {
            counters.faults += 1;
            let hook = Hook::ClientPath {
                section: had_section,
            };
            let kind = kind_label(registry, kind);
            let message = panic_message(payload.as_ref());
            push_fault(
                faults,
                Fault {
                    net,
                    kind,
                    owner,
                    hook,
                    message,
                },
            );
            usize::from(had_section)
        }
    }
}

/// The client context of a pass of client paths, aimed at no entity yet: the group's
/// bodies, kinds, command, effect and observation lists, and (tick, dt, gravity).
fn pass_context<'a>(
    bodies: &'a mut rapier3d::prelude::RigidBodySet,
    kinds: &'a KindRegistry,
    (commands, effects, observed): (
        &'a mut Vec<Command>,
        &'a mut Vec<Effect>,
        &'a mut crate::pose::Observations,
    ),
    (tick, dt, gravity): (u64, f32, rapier3d::glamx::glam::Vec3),
) -> ClientContext<'a> {
    ClientContext {
        authority: false,
        own_section: false,
        own_at: 0,
        bodies,
        handle: rapier3d::prelude::RigidBodyHandle::invalid(),
        me: EntityId {
            index: u32::MAX,
            generation: 0,
        },
        net_id: NetId(0),
        owner: Owner::Server,
        tick,
        dt,
        kinds,
        commands,
        effects,
        lead: 0.0,
        gravity,
        observed,
    }
}

/// Entity `net`'s queued section, if one is: from the group's own packet (`outgoing`, a
/// section looped back) or from what it received (`inbox`).
#[inline]
fn section_of<'a>(
    pending: Option<Pending>,
    net: NetId,
    (outgoing, inbox): (&'a [u8], &'a [u8]),
) -> Option<Section<'a>> {
    let p = pending?;
    let from = if p.own { outgoing } else { inbox };
    let payload = from.get(p.start as usize..(p.start + p.len) as usize)?;
    Some(Section {
        net_id: net,
        payload,
    })
}

/// Runs `ctrl`'s client path for `entity` with `section`, then its motion (on every peer,
/// whatever the section did: what a prediction of the body repeats), unless it is `still`
/// (a controller whose motion is the default, which does nothing, is not asked again).
/// What the path returned, or that it panicked, and whether its motion was the default.
#[inline]
fn client_path(
    ctrl: &mut dyn Controller,
    entity: &mut Entity,
    section: Option<Section<'_>>,
    ctx: &mut ClientContext<'_>,
    still: bool,
) -> (std::thread::Result<Result<(), Error>>, bool) {
    let mut unsteered = false;
    let ran = guarded(|| {
        let taken = ctrl.client_update(entity, section, ctx);
        if !still {
            let mut steer = Steer::body(ctx.bodies, ctx.handle, ctx.dt);
            ctrl.motion(&mut steer);
            unsteered = steer.unsteered;
        }
        taken
    });
    (ran, unsteered)
}
