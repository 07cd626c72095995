//! What a connection remembers of datagrams: the ones it sent, until the peer's acks
//! settle them, and the window of the ones it received, for replays and acks; and what
//! that shows of the link.

#[derive(Clone)]
pub(super) struct SentDatagram {
    pub(super) seq: u32,
    pub(super) at: u64,
    pub(super) messages: Vec<u32>,
    pub(super) acked: bool,
    /// Its size on the wire.
    pub(super) bytes: u32,
    /// An ack header written after a later datagram of ours arrived left this one out:
    /// unless it turns up late (and a later header says so), it was lost.
    pub(super) missed: bool,
}

/// Datagram sequence bookkeeping for what we received: the newest seq and a bitmask of the
/// 32 before it. Anything older than the window is refused as a replay.
#[derive(Debug, Default, Clone)]
pub(super) struct ReceiveWindow {
    pub(super) latest: Option<u32>,
    pub(super) bits: u32,
}

impl ReceiveWindow {
    /// Whether `seq` is new (not seen, not too old to tell), without recording it.
    pub(super) fn is_new(&self, seq: u32) -> bool {
        let Some(latest) = self.latest else {
            return true;
        };
        if seq == latest {
            return false;
        }
        if seq.wrapping_sub(latest) < u32::MAX / 2 {
            return true;
        }
        let back = latest.wrapping_sub(seq);
        back <= 32 && self.bits & (1 << (back - 1)) == 0
    }

    /// Records a new `seq`.
    pub(super) fn record(&mut self, seq: u32) {
        let Some(latest) = self.latest else {
            self.latest = Some(seq);
            return;
        };
        if seq.wrapping_sub(latest) < u32::MAX / 2 {
            let shift = seq.wrapping_sub(latest);
            self.bits = if shift > 32 {
                0
            } else {
                (self.bits << 1 | 1) << (shift - 1)
            };
            self.latest = Some(seq);
        } else {
            let back = latest.wrapping_sub(seq);
            if back <= 32 {
                self.bits |= 1 << (back - 1);
            }
        }
    }

    pub(super) fn header(&self) -> (u32, u32) {
        (self.latest.unwrap_or(u32::MAX), self.bits)
    }
}

/// What the link to a peer has shown, for a sender that paces itself.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Link {
    /// The smoothed round trip (ms); 0 before the first sample.
    pub(crate) ping_ms: f32,
    /// The least single round trip measured (ms): the link with nothing queued.
    pub(crate) least_ping_ms: Option<f32>,
    /// Datagrams of ours settled (known delivered or lost) since the connection began.
    pub(crate) settled: u32,
    /// Of those, the lost.
    pub(crate) lost: u32,
    /// Bytes of our datagrams the peer acknowledged since the connection began.
    pub(crate) delivered: u64,
}
