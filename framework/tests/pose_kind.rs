//! `PoseKind`, the short way to write a kind, with limits: a decision refused on every
//! peer by its reason, an owner's section judged by the server, inputs and motion passed
//! on to the kind.

mod common;

use common::Feed;
use lanyard::prelude::*;
use lanyard::{Error, Verdict};
use std::sync::Arc;

/// A short kind with limits: spins no faster than 3 rad/s, and a client that owns one
/// may not carry it more than half a metre from the server's copy.
#[derive(serde::Serialize, serde::Deserialize)]
struct Limited {
    spin: f32,
}

impl PoseKind for Limited {
    type Decision = f32;

    fn decide(&mut self, _: EntityRef<'_>, _: &WorldView<'_>) -> f32 {
        self.spin
    }

    fn apply(&mut self, spin: Option<f32>, ctx: &mut ClientContext<'_>) {
        self.spin = spin.unwrap_or(self.spin);
        ctx.set_angvel(Vec3::new(0.0, self.spin, 0.0));
    }

    fn refuse(&self, spin: &f32) -> Option<&'static str> {
        (spin.abs() > 3.0).then_some("a spin over 3 rad/s")
    }

    fn validate(&self, c: &lanyard::SectionClaim<'_, f32>) -> lanyard::Legality {
        c.pose.plausible(c.me.body(), 10.0, 0.5).into()
    }
}

/// A section of a [`Limited`]: at `x` on the ground, spinning `spin`.
fn limited_section(x: f32, spin: f32) -> Vec<u8> {
    use lanyard::pose::PoseState;
    let mut b = Vec::new();
    let mut w = lanyard::codec::SectionWriter::new(&mut b);
    let pose = PoseState {
        pos: Vec3::new(x, 0.5, 0.0),
        rot: lanyard::Quat::IDENTITY,
        linvel: Vec3::ZERO,
        angvel: Vec3::new(0.0, spin, 0.0),
    };
    pose.write(&mut w);
    w.serde(&spin);
    b
}

#[test]
fn a_pose_kind_refuses_a_decision_by_its_reason_and_judges_an_owners_section() {
    let mut r = KindRegistry::new();
    r.register("test.limited", |_: &u8| {
        let kind = Posed(Limited { spin: 1.0 });
        Blueprint::dynamic_box([0.0, 0.5, 0.0], [0.5; 3], [0; 4], kind)
    })
    .unwrap();
    let config = GroupConfig {
        gravity: Vec3::ZERO,
        ..GroupConfig::default()
    };
    let mut g = EntityGroup::new(Arc::new(r), config);
    // A section its client path takes: refused past the limit, by its reason, with the
    // kind, and nothing changes.
    let mine = g.spawn("test.limited", &0u8, Owner::Server).unwrap();
    let net = g.get(mine).unwrap().net_id();
    let mut f = Feed::inbound_only();
    f.sections
        .push((net, limited_section(0.0, 5.0), Owner::Server));
    let report = g.run_frame(&mut f);
    let refused = &report.section_errors;
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].kind, "test.limited");
    assert_eq!(
        refused[0].error,
        Error::Codec(lanyard::CodecError::InvalidValue("a spin over 3 rad/s"))
    );
    assert_eq!(g.get(mine).unwrap().body().angvel(), Vec3::ZERO);
    // A client's own: the server judges its sections by the kind's limits and validation.
    g.replica().set_clients([ClientId(1)]);
    let theirs = g
        .spawn("test.limited", &0u8, Owner::Client(ClientId(1)))
        .unwrap();
    let net = g.get(theirs).unwrap().net_id();
    let verdict = |g: &mut EntityGroup, x: f32, spin: f32| {
        let mut f = Feed::inbound_only();
        f.sections
            .push((net, limited_section(x, spin), Owner::Client(ClientId(1))));
        g.run_frame(&mut f);
        f.verdicts[0].0
    };
    assert_eq!(verdict(&mut g, 0.0, 2.0), Verdict::Accepted);
    assert_eq!(
        verdict(&mut g, 0.0, 5.0),
        Verdict::Illegal,
        "past the limit"
    );
    assert_eq!(
        verdict(&mut g, 2.0, 2.0),
        Verdict::Illegal,
        "2 m from the server's"
    );
}
