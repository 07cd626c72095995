//! Sections as people read them: a kind can name the fields of its sections
//! ([`KindRegistry::describe_sections`](crate::KindRegistry::describe_sections)), so a
//! decision-replay report says which field changed and from what to what, not only which
//! bytes.

use crate::codec::Section;
use crate::error::Error;
use serde::Serialize;

/// A section's fields by name, each with its value as text, in the order written.
pub type Fields = Vec<(String, String)>;

/// Reads a section of one kind into [`Fields`].
pub type Describer = dyn Fn(&Section<'_>) -> Result<Fields, Error> + Send + Sync;

/// The fields of a serialisable value, flattened: a struct's fields by name (`spin`,
/// `target.x`), a tuple's or a list's by position (`0`, `1`), and a value that is neither
/// under `name` itself. Floats that came from `f32` print as `f32` (`1.3`, not
/// `1.2999999523162842`).
pub fn serde_fields<T: Serialize + ?Sized>(name: &str, value: &T) -> Fields {
    let mut out = Vec::new();
    match serde_json::to_value(value) {
        Ok(v) => flatten(name, &v, &mut out),
        Err(e) => out.push((name.to_owned(), format!("(cannot be shown: {e})"))),
    }
    out
}

fn flatten(path: &str, v: &serde_json::Value, out: &mut Fields) {
    use serde_json::Value;
    let join = |key: &str| match path {
        "" => key.to_owned(),
        p => format!("{p}.{key}"),
    };
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                flatten(&join(k), x, out);
            }
        }
        Value::Array(items) if items.iter().all(|x| x.is_number()) && items.len() <= 4 => {
            let parts: Vec<String> = items.iter().map(number).collect();
            out.push((path.to_owned(), format!("[{}]", parts.join(", "))));
        }
        Value::Array(items) => {
            for (k, x) in items.iter().enumerate() {
                flatten(&join(&k.to_string()), x, out);
            }
        }
        Value::Number(_) => out.push((path.to_owned(), number(v))),
        Value::String(s) => out.push((path.to_owned(), format!("{s:?}"))),
        other => out.push((path.to_owned(), other.to_string())),
    }
}

/// A number as it was written: an `f32` shows as one.
fn number(v: &serde_json::Value) -> String {
    match v.as_f64() {
        Some(x) if v.is_f64() && f64::from(x as f32) == x => format!("{}", x as f32),
        _ => v.to_string(),
    }
}

/// One field whose value differs between two descriptions of a section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDiff {
    /// The field's name.
    pub name: String,
    /// Its value in the first (the recording's), or `None` where it has no such field.
    pub recorded: Option<String>,
    /// Its value in the second (the re-run's), or `None`.
    pub rerun: Option<String>,
}

/// The fields of `b` that differ from `a`'s, in `a`'s order, then `b`'s new ones.
pub fn differences(a: &Fields, b: &Fields) -> Vec<FieldDiff> {
    let find = |f: &Fields, name: &str| f.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let mut out: Vec<FieldDiff> = a
        .iter()
        .filter_map(|(name, va)| {
            let vb = find(b, name);
            (vb.as_deref() != Some(va.as_str())).then(|| FieldDiff {
                name: name.clone(),
                recorded: Some(va.clone()),
                rerun: vb,
            })
        })
        .collect();
    out.extend(
        b.iter()
            .filter(|(name, _)| find(a, name).is_none())
            .map(|(name, vb)| FieldDiff {
                name: name.clone(),
                recorded: None,
                rerun: Some(vb.clone()),
            }),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Aim {
        spin: f32,
        target: [f32; 3],
        mode: (u8, bool),
    }

    #[test]
    fn a_struct_flattens_into_named_fields_with_f32_values_as_written() {
        let f = serde_fields(
            "extra",
            &Aim {
                spin: 1.3,
                target: [0.5, 2.0, -1.25],
                mode: (3, true),
            },
        );
        let want = [
            ("extra.spin", "1.3"),
            ("extra.target", "[0.5, 2, -1.25]"),
            ("extra.mode.0", "3"),
            ("extra.mode.1", "true"),
        ];
        let got: Vec<(&str, &str)> = f.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(got, want);
        assert_eq!(
            serde_fields("spin", &2.6f32),
            [("spin".into(), "2.6".into())]
        );
    }

    #[test]
    fn differences_name_each_changed_field_with_both_values() {
        let a = serde_fields(
            "",
            &Aim {
                spin: 1.3,
                target: [0.0; 3],
                mode: (1, false),
            },
        );
        let b = serde_fields(
            "",
            &Aim {
                spin: 2.6,
                target: [0.0; 3],
                mode: (1, true),
            },
        );
        let d = differences(&a, &b);
        assert_eq!(d.len(), 2);
        assert_eq!(
            (
                d[0].name.as_str(),
                d[0].recorded.as_deref(),
                d[0].rerun.as_deref()
            ),
            ("spin", Some("1.3"), Some("2.6"))
        );
        assert_eq!(d[1].name, "mode.1");
    }
}
