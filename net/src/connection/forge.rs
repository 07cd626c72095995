//! A modified peer, for fuzzing (feature `fuzzing`): any bytes sealed as this connection's
//! next datagram, so they pass the other side's seal and reach every decoder behind it, as
//! they would from a peer that runs modified code with a real session key.

use super::Connection;
use crate::crypto::Nonce;
use crate::wire;
use crate::wire::DatagramKind;

impl Connection {
    /// `rest` sealed as our next datagram of `kind`. For DATA it follows our next sequence
    /// number (so `rest` starts with the acks and the broadcast number); for the others it
    /// is the whole body. `None` before the session has a key.
    pub(crate) fn forge(
        &mut self,
        kind: DatagramKind,
        version: u16,
        rest: &[u8],
    ) -> Option<Vec<u8>> {
        let cipher = self.cipher.as_ref()?;
        let mut d = wire::begin(kind, version);
        let nonce = if kind == DatagramKind::Data {
            let seq = self.next_seq;
            self.next_seq = seq.wrapping_add(1);
            d.extend_from_slice(&seq.to_le_bytes());
            Nonce::Seq(self.seq_wraps << 32 | u64::from(seq))
        } else {
            Nonce::Synthetic
        };
        d.extend_from_slice(rest);
        cipher.seal(self.out, &mut d, wire::clear_len(kind), nonce);
        Some(d)
    }
}
