//! The passes of a frame, in the order [`pipeline`](crate::pipeline) runs them: server
//! paths into the packet, the loopback, sections offered to entities, client paths,
//! commands, and the physics step.

use super::*;

impl EntityGroup {
    /// Forgets the last frame's observed poses: a frame begins.
    pub(crate) fn begin_frame(&mut self) {
        self.observed.clear();
        self.faults.clear();
        self.section_errors.clear();
    }

    /// Runs the server path of every entity this group has authority over, in network-id
    /// order, into one packet (kept as [`last_packet`](Self::last_packet) until the next
    /// call).
    pub(crate) fn write_sections(&mut self) {
        self.outgoing.clear();
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
            if me.owner() != local {
                continue;
            }
            let Some(ctrl) = self.controllers[i].as_deref_mut() else {
                continue;
            };
            let outgoing = &mut self.outgoing;
            let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                outgoing.section(net, |w| ctrl.server_update(me, &view, w))
            }));
            match written {
                Ok(Ok(_)) => {}
                Ok(Err(_)) => self.counters.oversized_sections += 1,
                Err(payload) => {
                    // The half-written section is dropped with the panic's unwinding
                    // (`section` only commits what returned).
                    self.counters.faults += 1;
                    self.faults.push(Fault {
                        net,
                        kind: kind_label(&self.registry, me.kind()),
                        owner: me.owner(),
                        hook: Hook::ServerPath,
                        message: panic_message(payload.as_ref()),
                    });
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
        let mut hint = 0;
        for section in packet.sections() {
            self.offer_at(section, local, &mut hint);
        }
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
            match self.offer_at(section, from, &mut hint) {
                Verdict::Accepted => report.accepted += 1,
                Verdict::UnknownEntity => report.unknown_entity += 1,
                Verdict::NotOwner => report.not_owner += 1,
                Verdict::Illegal => report.illegal += 1,
            }
        }
        report
    }

    /// Judges one section from `from` and, if it is accepted, queues it for its entity's
    /// client path this frame (see [`FramePass::offer_section`](crate::FramePass::offer_section)).
    pub(crate) fn offer_section(&mut self, section: Section<'_>, from: Owner) -> Verdict {
        self.offer_at(section, from, &mut 0)
    }

    pub(super) fn offer_at(
        &mut self,
        section: Section<'_>,
        from: Owner,
        hint: &mut usize,
    ) -> Verdict {
        let pos = match self.order.get(*hint) {
            Some(&(net, _)) if net == section.net_id => *hint,
            _ => match self.order.binary_search_by_key(&section.net_id, |e| e.0) {
                Ok(pos) => pos,
                Err(_) => {
                    self.counters.unknown_entity += 1;
                    return Verdict::UnknownEntity;
                }
            },
        };
        *hint = pos + 1;
        let i = self.order[pos].1 as usize;
        let Some(me) = entity_ref(&self.slots[i], &self.physics) else {
            self.counters.unknown_entity += 1;
            return Verdict::UnknownEntity;
        };
        if from != Owner::Server {
            if me.owner() != from {
                self.counters.not_owner += 1;
                return Verdict::NotOwner;
            }
            let view = self.view();
            let judged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.controllers[i]
                    .as_deref()
                    .is_some_and(|c| c.validate(me, section, &view) == Legality::Legal)
            }));
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
                    self.faults.push(fault);
                    false
                }
            };
            if !legal {
                self.counters.illegal += 1;
                return Verdict::Illegal;
            }
        }
        let start = self.inbox.len() as u32;
        self.inbox.extend_from_slice(section.payload);
        self.slots[i].pending = Some((start, section.payload.len() as u32));
        self.counters.sections_in += 1;
        if let Some(r) = &mut self.recorder {
            r.section(section.net_id, section.payload);
        }
        Verdict::Accepted
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
        if let Some(r) = &mut self.recorder {
            r.op(Op::ClientPass);
        }
        let local = self.local_owner();
        let mut applied = 0;
        let mut bad = 0;
        let lead = self.lead_ticks as f32 * self.config.dt;
        for &(net, index) in &self.order {
            let i = index as usize;
            let slot = &mut self.slots[i];
            let pending = slot.pending.take();
            let Some(entity) = slot.entity.as_mut() else {
                continue;
            };
            if self.physics.bodies.get(entity.body).is_none() {
                continue;
            }
            let Some(ctrl) = self.controllers[i].as_deref_mut() else {
                continue;
            };
            let section = pending.and_then(|(start, len)| {
                let payload = self.inbox.get(start as usize..(start + len) as usize)?;
                Some(Section {
                    net_id: net,
                    payload,
                })
            });
            let had_section = section.is_some();
            let authority = entity.owner == local;
            let mut ctx = ClientContext {
                authority,
                bodies: &mut self.physics.bodies,
                handle: entity.body,
                me: entity.id,
                net_id: net,
                owner: entity.owner,
                tick: self.tick,
                dt: self.config.dt,
                kinds: &*self.registry,
                commands: &mut self.commands,
                effects: &mut self.effects,
                lead: if authority || !had_section { 0.0 } else { lead },
                gravity: self.config.gravity,
                observed: &mut self.observed,
            };
            let kind = entity.kind;
            let owner = entity.owner;
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                ctrl.client_update(entity, section, &mut ctx)
            }));
            match ran {
                Ok(Ok(())) if had_section => applied += 1,
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    bad += 1;
                    self.counters.bad_sections += 1;
                    self.section_errors.push(SectionError {
                        net,
                        kind: kind_label(&self.registry, kind),
                        error,
                    });
                }
                Err(payload) => {
                    bad += usize::from(had_section);
                    self.counters.faults += 1;
                    self.faults.push(Fault {
                        net,
                        kind: kind_label(&self.registry, kind),
                        owner,
                        hook: Hook::ClientPath {
                            section: had_section,
                        },
                        message: panic_message(payload.as_ref()),
                    });
                }
            }
        }
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
        if self.recorder.is_some() {
            let hash = self.state_hash();
            let now = self.poses();
            let tick = self.tick - 1;
            if let Some(r) = &mut self.recorder {
                let (poses, gone) = r.delta(now);
                let ops = std::mem::take(&mut r.ops);
                r.tick(TickRecord {
                    tick,
                    ops,
                    hash,
                    poses,
                    gone,
                });
            }
        }
    }
}
