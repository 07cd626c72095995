//! A frame driver for tests: feeds packets and single sections into a frame's inbound pass
//! and keeps what the frame gives back.
#![allow(dead_code)] // each test file uses part of it

use lanyard::codec::{PacketWriter, Section};
use lanyard::{
    EntityGroup, FrameDriver, FramePass, FrameReport, NetId, Owner, ReceiveReport, SpawnRequest,
    Verdict,
};

/// Feeds what it holds into the next frame's inbound pass.
#[derive(Default)]
pub struct Feed {
    /// Packets to receive, with their sender.
    pub packets: Vec<(Vec<u8>, Owner)>,
    /// Single sections to offer, with their sender.
    pub sections: Vec<(NetId, Vec<u8>, Owner)>,
    /// Whether the frame runs server paths (off: only what is fed reaches client paths).
    pub server_paths: bool,
    /// What each fed packet came to.
    pub reports: Vec<ReceiveReport>,
    /// What each fed section came to, with whether it was then pending.
    pub verdicts: Vec<(Verdict, bool)>,
    /// The packet the server paths wrote.
    pub outbound: Vec<u8>,
    /// Spawn requests the frame handed over (taken, as a network layer would).
    pub requests: Vec<SpawnRequest>,
}

impl Feed {
    /// A driver that runs no server paths.
    pub fn inbound_only() -> Self {
        Feed::default()
    }

    /// A driver that runs server paths as a normal frame does.
    pub fn with_server_paths() -> Self {
        Feed {
            server_paths: true,
            ..Feed::default()
        }
    }

    /// Runs one frame of `g` feeding `packet` from `from`.
    pub fn packet(g: &mut EntityGroup, packet: &[u8], from: Owner) -> (FrameReport, ReceiveReport) {
        let mut f = Feed::inbound_only();
        f.packets.push((packet.to_vec(), from));
        let r = g.run_frame(&mut f);
        (r, f.reports[0])
    }
}

impl FrameDriver for Feed {
    fn runs_server_paths(&self) -> bool {
        self.server_paths
    }

    fn inbound(&mut self, pass: &mut FramePass<'_>) {
        for (p, from) in std::mem::take(&mut self.packets) {
            self.reports.push(pass.receive_packet(&p, from));
        }
        for (net, payload, from) in std::mem::take(&mut self.sections) {
            let v = pass.offer_section(
                Section {
                    net_id: net,
                    payload: &payload,
                },
                from,
            );
            self.verdicts
                .push((v, pass.group().has_pending_section(net)));
        }
    }

    fn outbound(&mut self, packet: &PacketWriter) {
        self.outbound = packet.as_bytes().to_vec();
    }

    fn after_commands(&mut self, _pass: &mut FramePass<'_>, requests: &mut Vec<SpawnRequest>) {
        self.requests.append(requests);
    }
}
