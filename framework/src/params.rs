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
            reason: match field_of::<P>(bytes) {
                Some(field) => format!("{e} (in the field `{field}`)"),
                None => e.to_string(),
            },
        }),
    }
}

/// Which field of `P` the bytes fail to decode at (`mode`, `pos[2]`; `[1]` for a
/// tuple's second), by decoding them again and tracking the way in. Bincode reads a struct
/// as a sequence, so the way in is by position; the top level's positions are named from
/// `P`'s own field names.
fn field_of<P: DeserializeOwned>(bytes: &[u8]) -> Option<String> {
    use serde_path_to_error::Segment;
    let reader = bincode::de::read::SliceReader::new(bytes);
    let mut decoder = bincode::serde::OwnedSerdeDecoder::from_reader(reader, config());
    let e = serde_path_to_error::deserialize::<_, P>(decoder.as_deserializer()).err()?;
    let names = field_names::<P>();
    let mut out = String::new();
    for (depth, segment) in e.path().iter().enumerate() {
        match segment {
            Segment::Seq { index } => match names.get(*index) {
                Some(name) if depth == 0 => out.push_str(name),
                _ => out.push_str(&format!("[{index}]")),
            },
            Segment::Map { key } => out.push_str(&format!(".{key}")),
            Segment::Enum { variant } => out.push_str(&format!("::{variant}")),
            Segment::Unknown => out.push_str(".?"),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The field names of a struct type (none for anything else), asked of its `Deserialize`.
fn field_names<P: DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};
    struct Names<'a>(&'a mut &'static [&'static str]);
    impl<'de> de::Deserializer<'de> for Names<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("only its field names were wanted"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut names: &'static [&'static str] = &[];
    let _ = P::deserialize(Names(&mut names));
    names
}
