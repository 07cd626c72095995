//! What a replay reports where it stops agreeing with its recording: the entities whose
//! bodies differ, the server paths that decided otherwise (by field, where the kind
//! describes its sections), and what the replayed frames reported on the way.

use crate::codec::Section;
pub use crate::describe::FieldDiff;
use crate::describe::differences;
use crate::id::NetId;
use crate::record::BodyBits;
use crate::registry::KindRegistry;

/// An entity whose state differs between the recording and the replay.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityDiff {
    /// The entity.
    pub net: NetId,
    /// Which parts of its body's state differ, bit for bit: `"position"`, `"rotation"`,
    /// `"linear velocity"`, `"angular velocity"` (empty if one side lacks it).
    pub fields: Vec<&'static str>,
    /// Where the recording has it (position, rotation), if it has it.
    pub recorded: Option<[f32; 7]>,
    /// Where the replay has it, if it has it.
    pub replayed: Option<[f32; 7]>,
    /// Distance between the two positions, metres (infinite if one side lacks it),
    /// computed in double precision.
    pub distance: f64,
    /// Angle between the two rotations, radians, computed in double precision (a
    /// difference of 1e-4 rad is 1e-4, not rounded to zero as single precision does).
    pub angle: f64,
}

/// A small number as people read it: fixed point, or scientific when it would show as 0.
fn small(x: f64) -> String {
    if x == 0.0 || x >= 1e-3 {
        format!("{x:.6}")
    } else {
        format!("{x:.3e}")
    }
}

/// The angle between two rotations (x y z w), in double precision.
fn angle_between(a: [f32; 4], b: [f32; 4]) -> f64 {
    let [ax, ay, az, aw] = a.map(f64::from);
    let [bx, by, bz, bw] = b.map(f64::from);
    // The relative rotation conj(a) * b.
    let w = aw * bw + ax * bx + ay * by + az * bz;
    let x = aw * bx - ax * bw - ay * bz + az * by;
    let y = aw * by + ax * bz - ay * bw - az * bx;
    let z = aw * bz - ax * by + ay * bx - az * bw;
    2.0 * (x * x + y * y + z * z).sqrt().atan2(w.abs())
}

/// Where a replay stopped agreeing with its recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// The first tick whose state differs.
    pub tick: u64,
    /// The recorded hash.
    pub expected: u64,
    /// The replayed hash.
    pub found: u64,
    /// The tick the entities were compared at: the recording's first body frame at or
    /// after the divergence (the replay runs on to it, on a copy). `None` if the recording
    /// has none that late (it was not stopped, but cut).
    pub compared_at: Option<u64>,
    /// The entities that differ there (by their body's state, or by existing on one side
    /// only).
    pub entities: Vec<EntityDiff>,
    /// In decision mode ([`Replay::rerun_decisions`](super::Replay::rerun_decisions)): the entities whose server path
    /// decided otherwise than the recording says, this tick.
    pub decisions: Vec<DecisionDiff>,
    /// What the replayed frames reported in the last ticks up to this one (sections
    /// their client paths refused, hooks that panicked, commands that failed), oldest
    /// first: often why it diverged.
    pub notes: Vec<FrameNote>,
}

/// A server path that, re-run on the recorded inputs, wrote another section than the
/// recorded one: a change in the controller's decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionDiff {
    /// The entity.
    pub net: NetId,
    /// Its kind, by name.
    pub kind: String,
    /// The section the recording has (empty: it wrote none).
    pub recorded: Vec<u8>,
    /// The section the server path wrote now (empty: none).
    pub rerun: Vec<u8>,
    /// The fields that differ, by name with both values, if the kind describes its
    /// sections ([`KindRegistry::describe_sections`]); empty otherwise.
    pub fields: Vec<FieldDiff>,
}

impl DecisionDiff {
    /// Fills [`fields`](Self::fields) from the kind's description of both sections.
    pub(super) fn describe(&mut self, registry: &KindRegistry, kind: crate::id::KindId) {
        let read = |bytes: &[u8]| {
            let section = Section {
                net_id: self.net,
                payload: bytes,
            };
            match registry.describe_section(kind, &section)? {
                Ok(fields) => Some(fields),
                // No section at all, or one the kind's reader refuses, says so.
                Err(_) if bytes.is_empty() => Some(Vec::new()),
                Err(e) => Some(vec![("(section)".to_owned(), format!("unreadable: {e}"))]),
            }
        };
        if let (Some(a), Some(b)) = (read(&self.recorded), read(&self.rerun)) {
            self.fields = differences(&a, &b);
        }
    }
}

impl std::fmt::Display for DecisionDiff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: its server path decided otherwise:",
            self.kind, self.net
        )?;
        if !self.fields.is_empty() {
            for d in &self.fields {
                let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
                write!(
                    f,
                    "\n    {} was {}, now {}",
                    d.name,
                    show(&d.recorded),
                    show(&d.rerun)
                )?;
            }
            return Ok(());
        }
        // Without a description: the bytes from the first that differs.
        let (a, b) = (&self.recorded, &self.rerun);
        let at = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let window = |v: &[u8]| v[at.min(v.len())..(at + 16).min(v.len())].to_vec();
        write!(
            f,
            " {} bytes recorded, {} now; they differ from byte {at}: recorded {:02x?}, now {:02x?}",
            a.len(),
            b.len(),
            window(a),
            window(b)
        )
    }
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "diverged at tick {}: hash {:016x} recorded, {:016x} replayed",
            self.tick, self.expected, self.found
        )?;
        for d in &self.decisions {
            writeln!(f, "  {d}")?;
        }
        if !self.notes.is_empty() {
            writeln!(f, "  what the replayed frames reported:")?;
        }
        for n in &self.notes {
            writeln!(f, "    tick {}: {}", n.tick, n.what)?;
        }
        match self.compared_at {
            Some(k) if k == self.tick => writeln!(f, "  against the recording's bodies here:")?,
            Some(k) => writeln!(
                f,
                "  against the recording's bodies at tick {k}, its next body frame (the replay \
                 ran on):"
            )?,
            None => writeln!(
                f,
                "  the recording has no body frame after it to say which entities differ"
            )?,
        }
        if self.compared_at.is_some() && self.entities.is_empty() {
            writeln!(f, "  every body matches there")?;
        }
        for d in &self.entities {
            match (d.recorded, d.replayed) {
                (Some(_), Some(_)) => writeln!(
                    f,
                    "  {}: {} differ; position off by {} m, rotation by {} rad",
                    d.net,
                    d.fields.join(", "),
                    small(d.distance),
                    small(d.angle)
                )?,
                (Some(_), None) => {
                    writeln!(f, "  {}: in the recording, missing from the replay", d.net)?
                }
                _ => writeln!(f, "  {}: in the replay, missing from the recording", d.net)?,
            }
        }
        Ok(())
    }
}

pub(super) fn diff(
    recorded: &[(NetId, BodyBits)],
    replayed: &[(NetId, BodyBits)],
) -> Vec<EntityDiff> {
    let mut out = Vec::new();
    let find = |v: &[(NetId, BodyBits)], n: NetId| {
        v.binary_search_by_key(&n, |(k, _)| *k).ok().map(|i| v[i].1)
    };
    let bits = |x: &[f32]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    let mut ids: Vec<NetId> = recorded.iter().chain(replayed).map(|(n, _)| *n).collect();
    ids.sort_unstable();
    ids.dedup();
    for net in ids {
        let (a, b) = (find(recorded, net), find(replayed, net));
        let mut fields = Vec::new();
        if let (Some(a), Some(b)) = (a, b) {
            let parts: [(&'static str, &[f32], &[f32]); 4] = [
                ("position", &a[..3], &b[..3]),
                ("rotation", &a[3..7], &b[3..7]),
                ("linear velocity", &a[7..10], &b[7..10]),
                ("angular velocity", &a[10..], &b[10..]),
            ];
            fields = parts
                .iter()
                .filter(|(_, x, y)| bits(x) != bits(y))
                .map(|(name, _, _)| *name)
                .collect();
            if fields.is_empty() {
                continue;
            }
        }
        let pose = |s: BodyBits| -> [f32; 7] { [s[0], s[1], s[2], s[3], s[4], s[5], s[6]] };
        let (a, b) = (a.map(pose), b.map(pose));
        let (distance, angle) = match (a, b) {
            (Some(a), Some(b)) => {
                let d = (0..3)
                    .map(|i| (f64::from(a[i]) - f64::from(b[i])).powi(2))
                    .sum::<f64>()
                    .sqrt();
                (
                    d,
                    angle_between([a[3], a[4], a[5], a[6]], [b[3], b[4], b[5], b[6]]),
                )
            }
            _ => (f64::INFINITY, 0.0),
        };
        out.push(EntityDiff {
            net,
            fields,
            recorded: a,
            replayed: b,
            distance,
            angle,
        });
    }
    out
}

/// How many ticks back a divergence report looks for what the frames reported.
pub(super) const NOTES_TICKS: u64 = 120;

/// Something a replayed frame reported: a section its client path refused, a hook that
/// panicked, a command that failed. Often why a replay diverges.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameNote {
    /// The tick of the frame.
    pub tick: u64,
    /// What it said, with the kind, the network id and the reason.
    pub what: String,
}

/// Keeps what a replayed frame reported, forgetting what is older than [`NOTES_TICKS`].
pub(super) fn note(
    notes: &mut std::collections::VecDeque<FrameNote>,
    report: &crate::pipeline::FrameReport,
) {
    let tick = report.tick;
    let said = report
        .section_errors
        .iter()
        .map(|e| format!("section refused: {e}"))
        .chain(report.faults.iter().map(ToString::to_string))
        .chain(report.errors.iter().map(|e| format!("command failed: {e}")));
    notes.extend(said.map(|what| FrameNote { tick, what }));
    while notes.front().is_some_and(|n| n.tick + NOTES_TICKS < tick) {
        notes.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Quat;

    #[test]
    fn a_tiny_rotation_is_reported_as_itself_not_as_zero() {
        let q = |r: Quat| [r.x, r.y, r.z, r.w];
        let a = Quat::from_rotation_y(0.3);
        let b = Quat::from_rotation_y(0.3 + 1e-4);
        let d = diff(
            &[(
                NetId(7),
                [1.0, 2.0, 3.0, a.x, a.y, a.z, a.w, 0., 0., 0., 0., 0., 0.],
            )],
            &[(
                NetId(7),
                [1.0, 2.0, 3.0, b.x, b.y, b.z, b.w, 0., 0., 0., 0., 0., 0.],
            )],
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].fields, ["rotation"]);
        assert!((d[0].angle - 1e-4).abs() < 2e-6, "{}", d[0].angle);
        assert!(
            a.angle_between(b) == 0.0 || (f64::from(a.angle_between(b)) - 1e-4).abs() > 1e-5,
            "single precision cannot say it (the reason for doing it in double)"
        );
        let text = Divergence {
            tick: 5,
            expected: 1,
            found: 2,
            compared_at: Some(5),
            entities: d,
            decisions: Vec::new(),
            notes: Vec::new(),
        }
        .to_string();
        assert!(!text.contains("rotation by 0.000000"), "{text}");
        assert!(
            text.contains("rotation by 9.997e-5 rad") || text.contains("rotation by 1.000e-4 rad"),
            "{text}"
        );
        assert!(text.contains("position off by 0.000000 m"), "{text}");
        assert!((angle_between(q(a), q(a))).abs() < 1e-9);
        assert!(
            (angle_between(q(Quat::IDENTITY), q(Quat::from_rotation_x(1.0))) - 1.0).abs() < 1e-6
        );
    }
}
