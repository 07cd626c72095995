//! A controller's own state (its seeded generator, its timers, what it decided) in
//! snapshots, without hand-mirrored code: derive serde on the controller and put
//! [`serde_state!`](crate::serde_state) in its `impl Controller`.
//!
//! ```
//! use lanyard::prelude::*;
//! use lanyard::codec::{Section, SectionWriter};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Blinker { rng: SeededRng, lit: bool }
//!
//! impl Controller for Blinker {
//!     fn server_update(&mut self, _me: EntityRef<'_>, _w: &WorldView<'_>, out: &mut SectionWriter<'_>) {
//!         self.lit = self.rng.next_f32() < 0.5;
//!         out.bool(self.lit);
//!     }
//!     fn client_update(&mut self, _me: &mut Entity, s: Option<Section<'_>>, _ctx: &mut ClientContext<'_>) -> Result<(), Error> {
//!         if let Some(s) = s {
//!             self.lit = s.parse(|r| r.bool())?;
//!         }
//!         Ok(())
//!     }
//!     lanyard::serde_state!();
//! }
//!
//! let mut a = Blinker { rng: SeededRng::new(3), lit: false };
//! let _ = a.rng.next_u64();
//! let mut saved = Vec::new();
//! a.save_state(&mut saved);
//! let mut b = Blinker { rng: SeededRng::new(0), lit: true };
//! b.load_state(&saved).unwrap();
//! assert_eq!(b.rng, a.rng);
//! ```

use crate::error::{CodecError, Error};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Appends `value` (bincode) to `out`: a controller's `save_state`.
pub fn save<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) {
    // Encoding plain data into a Vec cannot fail.
    let _ = bincode::serde::encode_into_std_write(value, out, bincode::config::standard());
}

/// Reads what [`save`] wrote, all of it: a controller's `load_state`.
pub fn load<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    let config = bincode::config::standard().with_limit::<{ 1 << 20 }>();
    match bincode::serde::decode_from_slice::<T, _>(bytes, config) {
        Ok((v, n)) if n == bytes.len() => Ok(v),
        Ok((_, n)) => Err(Error::Codec(CodecError::TrailingBytes(bytes.len() - n))),
        Err(e) => Err(Error::BadSnapshot(format!("controller state: {e}"))),
    }
}

/// Implements [`Controller::save_state`](crate::Controller::save_state) and
/// [`load_state`](crate::Controller::load_state) for a controller that is itself serde
/// (`Serialize` and `Deserialize`): the whole controller is its state. Put it inside the
/// `impl Controller for ... { }` block.
#[macro_export]
macro_rules! serde_state {
    () => {
        fn save_state(&self, out: &mut ::std::vec::Vec<u8>) {
            $crate::state::save(self, out)
        }

        fn load_state(&mut self, bytes: &[u8]) -> ::std::result::Result<(), $crate::Error> {
            *self = $crate::state::load(bytes)?;
            Ok(())
        }
    };
}
