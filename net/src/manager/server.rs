//! The server's side of a [`NetManager`](crate::NetManager): its endpoint and replication,
//! leaving clients, and the frame driver that takes clients' datagrams in and broadcasts.

use super::*;

pub(super) struct Server {
    pub(super) endpoint: ServerEndpoint,
    pub(super) repl: ServerReplication,
}

impl Server {
    /// Removes a client: says goodbye (unless it timed out or left), hands over or despawns
    /// its entities, tells the user.
    pub(super) fn leave(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        id: ClientId,
        reason: DisconnectReason,
    ) {
        let Some(p) = self.endpoint.remove(id) else {
            return;
        };
        if !matches!(reason, DisconnectReason::TimedOut | DisconnectReason::Left) {
            core.goodbye(&p.conn, reason.clone());
        }
        self.repl.forget(group, id);
        tracing::info!("{} ({id}) left: {reason}", p.name);
        core.events.push_back(NetEvent::ClientLeft {
            client: id,
            name: p.name,
            reason,
        });
    }

    /// A client fell silent: with a grace window its session waits for a resume (its
    /// entities stay, replication forgets only what it knew of the client's copy);
    /// without one it leaves.
    pub(super) fn lost(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        id: ClientId,
        reason: DisconnectReason,
    ) {
        if core.config.grace <= 0.0 {
            return self.leave(core, group, id, reason);
        }
        let Some(name) = self.endpoint.suspend(core, id) else {
            return;
        };
        self.repl.suspend(id);
        tracing::info!("{name} ({id}) {reason}: keeping the session for a resume");
        core.events
            .push_back(NetEvent::ClientSuspended { client: id, name });
    }

    /// Ends the sessions whose grace window ran out.
    pub(super) fn expire(&mut self, core: &mut Core, group: &mut EntityGroup) {
        for (id, p) in self.endpoint.expired(core.now, us(core.config.grace)) {
            self.repl.forget(group, id);
            tracing::info!("{} ({id}): session expired", p.name);
            core.events.push_back(NetEvent::ClientLeft {
                client: id,
                name: p.name,
                reason: DisconnectReason::SessionExpired,
            });
        }
    }

    pub(super) fn update(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        inbox: Vec<(SocketAddr, Vec<u8>)>,
    ) -> NetFrame {
        group.replica().set_role(Role::Server);
        group.replica().set_clients(
            self.endpoint
                .peers
                .keys()
                .chain(self.endpoint.suspended.keys())
                .copied(),
        );
        self.repl.announce(core, group, &mut self.endpoint.peers);
        let broadcast = core.send_due();
        let mut driver = ServerFrame {
            core,
            server: self,
            inbox,
            broadcast,
            packet: PacketWriter::new(),
            heartbeats: BTreeSet::new(),
        };
        let frame = group.run_frame(&mut driver);
        let ServerFrame {
            core,
            server,
            packet,
            heartbeats,
            ..
        } = driver;
        server
            .repl
            .announce(core, group, &mut server.endpoint.peers);
        let mut sent = BTreeSet::new();
        if broadcast {
            core.last_send = Some(core.now);
            core.counters.broadcasts += 1;
            sent = server
                .repl
                .broadcast(core, group, &packet, &mut server.endpoint.peers);
        }
        let (version, number) = (core.config.version, server.repl.frame());
        for id in heartbeats.difference(&sent) {
            if let Some(p) = server.endpoint.peers.get_mut(id) {
                let d = p
                    .conn
                    .build_frame(core.now, version, number, &[], &mut Vec::new());
                core.send_all(p.conn.addr, d);
            }
        }
        NetFrame {
            frame,
            sent: broadcast,
        }
    }
}

/// The server's side of one frame.
struct ServerFrame<'a> {
    core: &'a mut Core,
    server: &'a mut Server,
    inbox: Vec<(SocketAddr, Vec<u8>)>,
    broadcast: bool,
    /// This broadcast's packet, written once for every client.
    packet: PacketWriter,
    heartbeats: BTreeSet<ClientId>,
}

impl FrameDriver for ServerFrame<'_> {
    fn inbound(&mut self, pass: &mut FramePass<'_>) {
        let core = &mut *self.core;
        let s = &mut *self.server;
        for (from, bytes) in std::mem::take(&mut self.inbox) {
            match s.endpoint.datagram(core, from, &bytes) {
                Arrival::Done => {}
                Arrival::Joined(id) => {
                    if let Some(p) = s.endpoint.peers.get_mut(&id) {
                        s.repl.welcome_world(core, pass.group(), id, &mut p.conn);
                    }
                }
                Arrival::Resumed(id) => {
                    if let Some(p) = s.endpoint.peers.get_mut(&id) {
                        s.repl.resume_world(core, pass.group(), id, &mut p.conn);
                    }
                }
                Arrival::Left(id, reason) => s.leave(core, pass.group_mut(), id, reason),
                Arrival::Data { id, body, len } => {
                    let Some(p) = s.endpoint.peers.get_mut(&id) else {
                        continue;
                    };
                    let incoming = match p.conn.on_data(body, len, core.now) {
                        Ok(i) => i,
                        Err(why) => {
                            if why == Refused::Replayed {
                                core.counters.duplicates += 1;
                            }
                            if p.conn.bad_streak > core.config.bad_packet_limit {
                                s.leave(
                                    core,
                                    pass.group_mut(),
                                    id,
                                    DisconnectReason::TooManyBadPackets,
                                );
                            }
                            continue;
                        }
                    };
                    for m in incoming.delivered {
                        if let Some(msg) = replication::decode_msg(&m, &mut p.conn.stats) {
                            s.repl.message(core, pass.group_mut(), id, p, msg);
                        }
                    }
                    if !incoming.fresh {
                        if !incoming.sections.is_empty() {
                            p.conn.stats.dropped_stale += 1;
                        }
                    } else {
                        s.repl
                            .sections(pass, id, &mut p.conn.stats, incoming.sections);
                    }
                }
            }
        }
        let ids: Vec<ClientId> = s.endpoint.peers.keys().copied().collect();
        for id in ids {
            let Some(p) = s.endpoint.peers.get_mut(&id) else {
                continue;
            };
            for d in p.conn.handle_timeout(core.now) {
                match d {
                    Deadline::Lost(
                        reason @ (DisconnectReason::TimedOut | DisconnectReason::ReliableExpired),
                    ) => {
                        s.lost(core, pass.group_mut(), id, reason);
                        break;
                    }
                    Deadline::Lost(reason) => {
                        s.leave(core, pass.group_mut(), id, reason);
                        break;
                    }
                    Deadline::Heartbeat => {
                        self.heartbeats.insert(id);
                    }
                    Deadline::GaveUp | Deadline::Retry => {}
                }
            }
        }
        s.expire(core, pass.group_mut());
    }

    fn outbound(&mut self, packet: &PacketWriter) {
        if self.broadcast {
            self.packet.clone_from(packet);
        }
    }
}
