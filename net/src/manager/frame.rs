//! One frame on each side: the drivers that take datagrams in, run the group's pipeline,
//! and send state out. Every state section a server path writes passes through here twice:
//! on the server from the frame's packet to the broadcast, on a client from the server's
//! datagram to the frame's client paths.

use super::NetFrame;
use super::client::Client;
use super::server::Server;
use crate::connection::Refused;
use crate::core::Core;
use crate::endpoint::{Arrival, ClientArrival};
use crate::error::DisconnectReason;
use crate::session::unwrap_ms;
use crate::wire::DATA_ROOM;
use crate::{replication, wire};
use lanyard::codec::PacketWriter;
use lanyard::{
    ClientId, EntityGroup, FrameDriver, FramePass, FrameReport, Owner, Role, SpawnRequest,
};
use std::collections::BTreeSet;
use std::net::SocketAddr;

impl Server {
    /// One frame of a server: clients' datagrams in, the group's frame, then what changed
    /// announced and, when the rate cap allows, the broadcast.
    pub(super) fn update(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        inbox: Vec<Inbound>,
    ) -> NetFrame {
        group.replica().set_role(Role::Server);
        group.replica().set_clients(
            self.endpoint
                .peers
                .keys()
                .chain(self.endpoint.suspended.keys())
                .copied(),
        );
        if group.registry().any_hand_off() {
            // What a client holds is brought forward by its one-way delay: the server's
            // copy, which everyone else is sent, is where the holder has it now.
            let dt = group.config().dt.max(1e-4);
            for (id, p) in &self.endpoint.peers {
                let one_way = p.conn.stats.rtt_ms / 2000.0;
                let ticks = (one_way / dt).round() as u32;
                group.replica().set_holder_lead(Owner::Client(*id), ticks);
            }
        }
        self.repl.announce(core, group, &mut self.endpoint.peers);
        let broadcast = core.send_due();
        let mut driver = ServerFrame {
            core,
            server: self,
            inbox,
            heartbeats: BTreeSet::new(),
        };
        let frame = group.run_frame(&mut driver);
        let ServerFrame {
            core,
            server,
            heartbeats,
            ..
        } = driver;
        server.repl.settle_held(core, group);
        server
            .repl
            .announce(core, group, &mut server.endpoint.peers);
        let mut sent = BTreeSet::new();
        if broadcast {
            core.last_send = Some(core.now);
            core.counters.broadcasts += 1;
            // The packet the frame's server paths wrote is the broadcast's: the group keeps
            // it until its next frame.
            let group: &EntityGroup = group;
            sent = server.repl.broadcast(
                core,
                group,
                (group.last_packet(), frame.tick as u32),
                &mut server.endpoint.peers,
            );
        }
        // A client that got no state still gets its reliable messages when they are due (at
        // a broadcast), and a heartbeat when its own is due.
        let (version, number) = (core.config.version, server.repl.number());
        for (id, p) in &mut server.endpoint.peers {
            let due = heartbeats.contains(id) || (broadcast && p.conn.messages_due(core.now));
            if due && !sent.contains(id) {
                let d = p
                    .conn
                    .build_numbered(core.now, version, number, &[], &mut Vec::new());
                p.pace.spend(d.iter().map(Vec::len).sum());
                core.send_all(p.conn.addr, d);
            }
        }
        NetFrame {
            frame,
            sent: broadcast,
        }
    }
}

/// A datagram for a frame: its sender, its bytes, and when it arrived (µs, the core's
/// clock).
pub(super) type Inbound = (SocketAddr, Vec<u8>, u64);

/// The server's side of one frame.
struct ServerFrame<'a> {
    core: &'a mut Core,
    server: &'a mut Server,
    inbox: Vec<Inbound>,
    heartbeats: BTreeSet<ClientId>,
}

impl FrameDriver for ServerFrame<'_> {
    fn inbound(&mut self, pass: &mut FramePass<'_>) {
        let core = &mut *self.core;
        let s = &mut *self.server;
        // The clock first: a session silent past its timeout is lost before what came in
        // the meantime is taken. A host stopped past its players' timeout (they have gone
        // on without it) takes its backlog to sessions waiting for a resume, not live
        // ones: a player as stale as it resumes, and is held while it asks (seed 5947).
        s.deadlines(core, pass.group_mut(), &mut self.heartbeats);
        let held = s.held_connects(core).into_iter().map(|d| (d, true));
        let inbox = std::mem::take(&mut self.inbox)
            .into_iter()
            .map(|d| (d, false));
        for (d, was_held) in held.chain(inbox) {
            if let Some(host) = s.hosted_at(core, d.0, &d.1) {
                // The game is hosted there: this server has no session left to serve.
                s.step_down(core, host);
                return;
            }
            if !was_held && s.hold(core, &d) {
                continue;
            }
            let (from, bytes, arrived) = d;
            match s.endpoint.datagram(core, from, &bytes) {
                Arrival::Done => {}
                Arrival::Joined(id) => {
                    s.tell_succession_first(core, id);
                    if let Some(p) = s.endpoint.peers.get_mut(&id) {
                        s.repl.welcome_world(core, pass.group(), id, p);
                    }
                }
                Arrival::Resumed(id) => {
                    s.tell_succession_first(core, id);
                    if let Some(p) = s.endpoint.peers.get_mut(&id) {
                        s.repl.resume_world(core, pass.group(), id, p);
                    }
                }
                Arrival::Left(id, reason) => s.leave(core, pass.group_mut(), id, reason),
                Arrival::Data { id, opened, len } => {
                    let body = &opened[wire::HEADER_LEN..];
                    let Some(p) = s.endpoint.peers.get_mut(&id) else {
                        continue;
                    };
                    let taken = p.conn.take_data(body, len, (core.now, arrived));
                    let Some((incoming, messages)) = taken_in(core, taken) else {
                        if p.conn.bad_streak > core.config.bad_packet_limit {
                            let reason = DisconnectReason::TooManyBadPackets;
                            s.leave(core, pass.group_mut(), id, reason);
                        }
                        continue;
                    };
                    for msg in messages {
                        s.repl.message(core, pass.group_mut(), id, p, msg);
                    }
                    // The wire's round trip, without either side's wait before answering
                    // (an ack's round trip counts the client's, and would date every
                    // relayed pose early by half of it).
                    let rtt = f64::from(p.conn.ping_ms.unwrap_or(p.conn.stats.rtt_ms)) / 1000.0;
                    let sent = p.clock.sent_at(incoming.sent_ms, arrived as f64 / 1e6, rtt);
                    if !incoming.fresh {
                        if !incoming.sections.is_empty() {
                            p.conn.stats.dropped_stale += 1;
                        }
                    } else {
                        s.repl.sections(pass, (id, sent), p, incoming.sections);
                    }
                }
            }
        }
        s.expire(core, pass.group_mut());
        s.endpoint.knock(core);
        s.tell_succession(core);
        s.ask_whether_replaced(core);
    }
}

impl Client {
    /// One frame of a client: the server's control datagrams first (its DATA waits for the
    /// frame's inbound pass), the group's frame, then our own sections up at the rate cap.
    pub(super) fn update(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        inbox: impl IntoIterator<Item = Inbound>,
    ) -> NetFrame {
        let data = self.take_control(core, group, inbox);
        self.endpoint.knock(core);
        if !self.endpoint.timeouts(core) {
            self.endpoint.conn.close();
            return NetFrame::default();
        }
        let (Some(id), true) = (self.endpoint.id, self.endpoint.conn.is_connected()) else {
            return NetFrame::default();
        };
        let me = Owner::Client(id);
        let mut driver = ClientFrame {
            core,
            client: self,
            data,
            me,
        };
        let frame: FrameReport = group.run_frame(&mut driver);
        let ClientFrame { core, client, .. } = driver;
        let conn = &mut client.endpoint.conn;
        client.repl.claim_touched(core, group, conn);
        // The packet the frame's server paths wrote (our own entities') goes up: the group
        // keeps it until its next frame, as on the server.
        let sent = client.send_own(core, group.last_packet());
        NetFrame { frame, sent }
    }

    /// The server's datagrams of this frame, taken by the endpoint now; its DATA datagrams
    /// come back opened, to be read inside the frame (where their sections can be
    /// applied).
    fn take_control(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        inbox: impl IntoIterator<Item = Inbound>,
    ) -> Vec<(Vec<u8>, usize, u64)> {
        let server = self.endpoint.conn.addr;
        let mut data = Vec::new();
        for (from, bytes, arrived) in inbox {
            if from != server {
                if self.endpoint.confirmed_alive(core, from, &bytes) {
                    continue;
                }
                if self.endpoint.comes_to_us(core, from, &bytes) {
                    self.handed.push((from, bytes, arrived));
                } else {
                    core.counters.strangers += 1;
                }
                continue;
            }
            let was_connected = self.endpoint.conn.is_connected();
            match self.endpoint.datagram(core, &bytes) {
                ClientArrival::Done => {}
                // Read inside the frame, where its sections can be applied.
                ClientArrival::Data { opened, len } => data.push((opened, len, arrived)),
                ClientArrival::Resumed => self.repl.forget_baselines(),
                ClientArrival::Migrated => {
                    self.repl = self.repl.for_new_host();
                    self.repl.begin_resync();
                    self.server_clock = None;
                    self.remote_time = None;
                }
            }
            if !was_connected
                && self.endpoint.conn.is_connected()
                && let Some(id) = self.endpoint.id
            {
                group.replica().set_role(Role::Client(id));
            }
            if let Some(physics) = self.endpoint.physics.take() {
                take_physics(group, physics);
            }
        }
        data
    }

    /// Our own sections (`own`) up, at the rate cap, with whatever the connection owes (an
    /// ack, a heartbeat). Whether a datagram went.
    fn send_own(&mut self, core: &mut Core, own: &PacketWriter) -> bool {
        let conn = &mut self.endpoint.conn;
        if !core.send_due() {
            return false;
        }
        let has_work = !own.as_bytes().is_empty() || conn.unacked() > 0 || self.ack_owed;
        let idle = conn
            .timers
            .is_due(crate::connection::Timer::Heartbeat, core.now)
            || conn
                .timers
                .get(crate::connection::Timer::Heartbeat)
                .is_none();
        if !(has_work || idle) {
            return false;
        }
        core.last_send = Some(core.now);
        core.counters.broadcasts += 1;
        let parts = replication::chunks(own, DATA_ROOM);
        let parts: Vec<&[u8]> = parts.iter().map(|r| &own.as_bytes()[r.clone()]).collect();
        let d = conn.build_data(core.now, core.config.version, &parts);
        core.send_all(conn.addr, d);
        self.ack_owed = false;
        true
    }
}

/// The client's side of one frame.
struct ClientFrame<'a> {
    core: &'a mut Core,
    client: &'a mut Client,
    /// The server's DATA datagrams, opened, with their length on the wire and when each
    /// arrived.
    data: Vec<(Vec<u8>, usize, u64)>,
    me: Owner,
}

impl FrameDriver for ClientFrame<'_> {
    fn inbound(&mut self, pass: &mut FramePass<'_>) {
        let core = &mut *self.core;
        let c = &mut *self.client;
        c.remote_time = None;
        c.repl.relayed.clear();
        c.repl.relayed_ages.clear();
        c.repl.hold_resting(pass);
        if let (Some(ping), true) = (c.endpoint.conn.ping_ms, core.config.bring_forward) {
            c.lead = c.lead_for(ping, pass.group().config().dt);
            pass.group_mut().replica().set_lead(c.lead);
        }
        for (opened, len, arrived) in std::mem::take(&mut self.data) {
            let conn = &mut c.endpoint.conn;
            let body = &opened[wire::HEADER_LEN..];
            let taken = conn.take_data(body, len, (core.now, arrived));
            let Some((incoming, messages)) = taken_in(core, taken) else {
                continue;
            };
            // A resent message we already have still needs an ack, or it is resent forever.
            if incoming.carried_messages {
                c.ack_owed = true;
            }
            for msg in messages {
                let from = (&mut conn.stats, incoming.number);
                c.repl.message(core, pass.group_mut(), from, msg);
            }
            if let Some(s) = c.repl.succession.take() {
                if s.list != c.endpoint.succession.list {
                    let names: Vec<&str> = s.list.iter().map(|x| x.name.as_str()).collect();
                    match names.is_empty() {
                        true => {
                            tracing::info!("the succession: nobody (no player could take over)")
                        }
                        false => tracing::info!("the succession: {}", names.join(", ")),
                    }
                }
                c.endpoint.succession = s;
            }
            let sent = unwrap_ms(&mut c.server_clock, incoming.sent_ms);
            if !incoming.sections.is_empty() {
                c.remote_time = Some(c.remote_time.map_or(sent, |r: f64| r.max(sent)));
            }
            // State is acknowledged promptly: the server's baselines advance with our acks.
            if c.repl.state(
                pass,
                &mut conn.stats,
                (incoming.number, sent),
                incoming.sections,
                core.now,
            ) {
                c.ack_owed = true;
            }
            c.repl.ask_resync(core, conn);
        }
        if core.config.bring_forward {
            // What another client holds came relayed, as it had it a while ago: brought
            // forward by that while as well as by our own lead.
            let dt = pass.group().config().dt.max(1e-4);
            for (&holder, &ms) in &c.repl.relayed_ages {
                let ticks = c.lead + (f32::from(ms) / 1000.0 / dt).round() as u32;
                pass.group_mut().replica().set_holder_lead(holder, ticks);
            }
        }
    }

    fn after_commands(&mut self, pass: &mut FramePass<'_>, requests: &mut Vec<SpawnRequest>) {
        let c = &mut *self.client;
        c.repl.after_commands(
            self.core,
            pass.group_mut(),
            &mut c.endpoint.conn,
            self.me,
            requests,
        );
    }
}

/// What a DATA body the connection took brought, on either side; a replayed one is
/// counted.
fn taken_in<T>(core: &mut Core, taken: Result<T, Refused>) -> Option<T> {
    match taken {
        Ok(t) => Some(t),
        Err(why) => {
            if why == Refused::Replayed {
                core.counters.duplicates += 1;
            }
            None
        }
    }
}

/// A client takes the server's physics from its welcome: a group that moved otherwise
/// would drift from the server's between states. A setting that makes no sense is refused
/// (and logged), and the group keeps its own.
fn take_physics(group: &mut EntityGroup, physics: wire::Physics) {
    let ours = *group.config();
    let theirs = physics.applied_to(ours);
    if theirs == ours {
        return;
    }
    match group.set_config(theirs) {
        Ok(()) => tracing::info!(
            "simulating with the server's physics: dt {} s, gravity {:?} (ours was dt {} s, gravity {:?})",
            theirs.dt,
            theirs.gravity.to_array(),
            ours.dt,
            ours.gravity.to_array()
        ),
        Err(e) => tracing::warn!("the server's physics cannot be used: {e}"),
    }
}
