//! Spawn parameters: how every peer encodes and decodes them (bincode 2, bounded).

use crate::error::Error;
use crate::id::KindId;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Spawn parameters larger than this are refused when decoding.
pub const MAX_PARAMS_LEN: usize = 16 * 1024;

fn config() -> bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Varint,
    bincode::config::Limit<MAX_PARAMS_LEN>,
> {
    bincode::config::standard().with_limit::<MAX_PARAMS_LEN>()
}

/// Encodes spawn parameters the way every peer decodes them.
pub fn encode_params<P: Serialize>(kind: KindId, params: &P) -> Result<Vec<u8>, Error> {
    bincode::serde::encode_to_vec(params, config()).map_err(|e| Error::BadSpawnParams {
        kind: kind.to_string(),
        reason: e.to_string(),
    })
}

/// Decodes spawn parameters encoded by [`encode_params`] (refusing oversized input and
/// trailing bytes).
pub fn decode_params<P: DeserializeOwned>(kind: KindId, bytes: &[u8]) -> Result<P, Error> {
    if bytes.len() > MAX_PARAMS_LEN {
        return Err(Error::BadSpawnParams {
            kind: kind.to_string(),
            reason: format!("{} bytes is over the limit", bytes.len()),
        });
    }
    match bincode::serde::decode_from_slice::<P, _>(bytes, config()) {
        Ok((p, used)) if used == bytes.len() => Ok(p),
        Ok((_, used)) => Err(Error::BadSpawnParams {
            kind: kind.to_string(),
            reason: format!("{} trailing bytes", bytes.len() - used),
        }),
        Err(e) => Err(Error::BadSpawnParams {
            kind: kind.to_string(),
            reason: e.to_string(),
        }),
    }
}
