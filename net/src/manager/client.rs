//! The client's side of a [`NetManager`](crate::NetManager): its endpoint and replication,
//! the server's clock and the lead, and the frame driver that applies the server's state
//! and sends ours up.

use super::*;

pub(super) struct Client {
    pub(super) endpoint: ClientEndpoint,
    pub(super) repl: ClientReplication,
    pub(super) ack_owed: bool,
    /// The server's clock, unwrapped from the datagrams' millisecond stamps: (the last
    /// stamp, seconds).
    pub(super) server_clock: Option<(u16, f64)>,
    /// The server's clock when it sent the newest state taken in the last update.
    pub(super) remote_time: Option<f64>,
    /// Ticks the server's state is behind our present (half the round trip).
    pub(super) lead: u32,
}

/// The server's clock, in seconds, for a datagram stamped `ms`, given the last stamp read
/// (`clock`): the stamps wrap every 65.5 s, so each is read as the nearest one to the last.
pub(super) fn server_time(clock: &mut Option<(u16, f64)>, ms: u16) -> f64 {
    let t = match *clock {
        None => f64::from(ms) / 1000.0,
        Some((last, secs)) => secs + f64::from(ms.wrapping_sub(last) as i16) / 1000.0,
    };
    if clock.is_none_or(|(_, s)| t > s) {
        *clock = Some((ms, t));
    }
    t
}

impl Client {
    /// The lead for a round trip of `ping_ms` at timestep `dt`: half of it in whole ticks,
    /// changed only when the estimate is most of a tick away (so it does not flicker).
    pub(super) fn lead_for(&self, ping_ms: f32, dt: f32) -> u32 {
        let ticks = ping_ms / 2000.0 / dt;
        if (ticks - self.lead as f32).abs() < 0.75 {
            return self.lead;
        }
        ticks.round().clamp(0.0, 60.0) as u32
    }
}

impl Client {
    pub(super) fn update(
        &mut self,
        core: &mut Core,
        group: &mut EntityGroup,
        inbox: Vec<(SocketAddr, Vec<u8>)>,
    ) -> NetFrame {
        let server = self.endpoint.conn.addr;
        let mut data = Vec::new();
        for (from, bytes) in inbox {
            if from != server {
                core.counters.strangers += 1;
                continue;
            }
            let was_connected = self.endpoint.conn.is_connected();
            let kind = wire::parse_header(&bytes).map(|(_, k, _)| k);
            if was_connected && kind == Ok(wire::DatagramKind::Data) {
                // Opened and read inside the frame, where its sections can be applied.
                data.push(bytes);
                continue;
            }
            if let ClientArrival::Resumed = self.endpoint.datagram(core, &bytes) {
                self.repl.begin_resync();
            }
            if !was_connected
                && self.endpoint.conn.is_connected()
                && let Some(id) = self.endpoint.id
            {
                group.replica().set_role(Role::Client(id));
            }
        }
        if !self.endpoint.timeouts(core) {
            self.endpoint.conn.state = crate::connection::State::Closed;
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
            own: PacketWriter::new(),
        };
        let frame: FrameReport = group.run_frame(&mut driver);
        let ClientFrame {
            core, client, own, ..
        } = driver;
        let conn = &mut client.endpoint.conn;
        let mut sent = false;
        if core.send_due() {
            let has_work = !own.as_bytes().is_empty() || conn.unacked() > 0 || client.ack_owed;
            let idle = conn
                .timers
                .is_due(crate::connection::Timer::Heartbeat, core.now)
                || conn
                    .timers
                    .get(crate::connection::Timer::Heartbeat)
                    .is_none();
            if has_work || idle {
                core.last_send = Some(core.now);
                core.counters.broadcasts += 1;
                let parts = replication::chunks(&own, DATA_ROOM);
                let parts: Vec<&[u8]> = parts.iter().map(|r| &own.as_bytes()[r.clone()]).collect();
                let d = conn.build_data(core.now, core.config.version, &parts);
                core.send_all(conn.addr, d);
                client.ack_owed = false;
                sent = true;
            }
        }
        NetFrame { frame, sent }
    }
}

/// The client's side of one frame.
struct ClientFrame<'a> {
    core: &'a mut Core,
    client: &'a mut Client,
    data: Vec<Vec<u8>>,
    me: Owner,
    /// Our own sections, to send up.
    own: PacketWriter,
}

impl FrameDriver for ClientFrame<'_> {
    fn inbound(&mut self, pass: &mut FramePass<'_>) {
        let core = &mut *self.core;
        let c = &mut *self.client;
        c.remote_time = None;
        if let (Some(ping), true) = (c.endpoint.conn.ping_ms, core.config.bring_forward) {
            c.lead = c.lead_for(ping, pass.group().config().dt);
            pass.group_mut().replica().set_lead(c.lead);
        }
        for bytes in std::mem::take(&mut self.data) {
            let ClientArrival::Data { body, len } = c.endpoint.datagram(core, &bytes) else {
                continue;
            };
            let conn = &mut c.endpoint.conn;
            let incoming = match conn.on_data(body, len, core.now) {
                Ok(i) => i,
                Err(why) => {
                    if why == Refused::Replayed {
                        core.counters.duplicates += 1;
                    }
                    continue;
                }
            };
            // A resent message we already have still needs an ack, or it is resent forever.
            if incoming.carried_messages {
                c.ack_owed = true;
            }
            for m in incoming.delivered {
                if let Some(msg) = replication::decode_msg(&m, &mut conn.stats) {
                    c.repl.message(core, pass.group_mut(), &mut conn.stats, msg);
                }
            }
            if !incoming.sections.is_empty() {
                let t = server_time(&mut c.server_clock, incoming.sent_ms);
                c.remote_time = Some(c.remote_time.map_or(t, |r: f64| r.max(t)));
            }
            // State is acknowledged promptly: the server's baselines advance with our acks.
            if c.repl.state(
                pass,
                &mut conn.stats,
                incoming.frame,
                incoming.sections,
                core.now,
            ) {
                c.ack_owed = true;
            }
            c.repl.ask_resync(core, conn);
        }
    }

    fn outbound(&mut self, packet: &PacketWriter) {
        self.own = packet.clone();
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
