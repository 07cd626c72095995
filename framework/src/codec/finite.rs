//! Whether every float in a serde value is finite: what a section's serde fields are checked
//! with, as `SectionReader::f32` checks a float it reads, so NaN cannot reach the physics
//! through a kind's own types either.

use serde::Serialize;
use serde::ser::{self, Serializer};

/// Whether every `f32` and `f64` in `value` is finite.
pub(crate) fn all_finite<T: Serialize + ?Sized>(value: &T) -> bool {
    value.serialize(Finite).is_ok()
}

/// A serializer that writes nothing and fails at the first float that is not finite.
struct Finite;

#[derive(Debug)]
struct NotFinite;

impl std::fmt::Display for NotFinite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a float that is not finite")
    }
}

impl std::error::Error for NotFinite {}

impl ser::Error for NotFinite {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        NotFinite
    }
}

type Done = Result<(), NotFinite>;

/// Methods that take a plain value and have nothing to check.
macro_rules! fine {
    ($($name:ident: $t:ty),*) => {
        $(fn $name(self, _: $t) -> Done { Ok(()) })*
    };
}

impl Serializer for Finite {
    type Ok = ();
    type Error = NotFinite;
    type SerializeSeq = Finite;
    type SerializeTuple = Finite;
    type SerializeTupleStruct = Finite;
    type SerializeTupleVariant = Finite;
    type SerializeMap = Finite;
    type SerializeStruct = Finite;
    type SerializeStructVariant = Finite;

    fine!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_char: char, serialize_str: &str, serialize_bytes: &[u8],
        serialize_unit_struct: &'static str);

    fn serialize_f32(self, v: f32) -> Done {
        if v.is_finite() {
            Ok(())
        } else {
            Err(NotFinite)
        }
    }

    fn serialize_f64(self, v: f64) -> Done {
        if v.is_finite() {
            Ok(())
        } else {
            Err(NotFinite)
        }
    }

    fn serialize_none(self) -> Done {
        Ok(())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Done {
        v.serialize(Finite)
    }

    fn serialize_unit(self) -> Done {
        Ok(())
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Done {
        Ok(())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, v: &T) -> Done {
        v.serialize(Finite)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        v: &T,
    ) -> Done {
        v.serialize(Finite)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Finite, NotFinite> {
        Ok(Finite)
    }

    fn serialize_tuple(self, _: usize) -> Result<Finite, NotFinite> {
        Ok(Finite)
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Finite, NotFinite> {
        Ok(Finite)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Finite, NotFinite> {
        Ok(Finite)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Finite, NotFinite> {
        Ok(Finite)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Finite, NotFinite> {
        Ok(Finite)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Finite, NotFinite> {
        Ok(Finite)
    }
}

/// The compound parts: each element, field, key and value is checked in turn.
macro_rules! parts {
    ($($tr:ident :: $m:ident),*) => {
        $(impl ser::$tr for Finite {
            type Ok = ();
            type Error = NotFinite;
            fn $m<T: ?Sized + Serialize>(&mut self, v: &T) -> Done {
                v.serialize(Finite)
            }
            fn end(self) -> Done {
                Ok(())
            }
        })*
    };
}

parts!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Finite {
    type Ok = ();
    type Error = NotFinite;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, k: &T) -> Done {
        k.serialize(Finite)
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Done {
        v.serialize(Finite)
    }
    fn end(self) -> Done {
        Ok(())
    }
}

/// The named fields of a struct or a struct variant: each value is checked in turn.
macro_rules! fields {
    ($($tr:ident),*) => {
        $(impl ser::$tr for Finite {
            type Ok = ();
            type Error = NotFinite;
            fn serialize_field<T: ?Sized + Serialize>(&mut self, _: &'static str, v: &T) -> Done {
                v.serialize(Finite)
            }
            fn end(self) -> Done {
                Ok(())
            }
        })*
    };
}

fields!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Deep {
        a: (u8, Option<[f32; 2]>),
        b: Vec<f64>,
        c: std::collections::BTreeMap<String, f32>,
    }

    #[test]
    fn a_float_that_is_not_finite_anywhere_in_a_value_is_found() {
        let fine = Deep {
            a: (1, Some([1.0, -2.5])),
            b: vec![0.0, 1e300],
            c: [("x".to_owned(), 3.0)].into(),
        };
        assert!(all_finite(&fine));
        for bad in [
            Deep {
                a: (1, Some([1.0, f32::NAN])),
                ..Deep {
                    a: (0, None),
                    b: vec![],
                    c: Default::default(),
                }
            },
            Deep {
                a: (0, None),
                b: vec![0.0, f64::INFINITY],
                c: Default::default(),
            },
            Deep {
                a: (0, None),
                b: vec![],
                c: [("y".to_owned(), f32::NEG_INFINITY)].into(),
            },
        ] {
            assert!(!all_finite(&bad));
        }
        assert!(!all_finite(&f32::NAN));
        assert!(all_finite(&None::<f32>));
    }
}
