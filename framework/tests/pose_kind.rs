//! `PoseKind`, the short way to write a kind, with limits: a decision refused on every
//! peer by its reason, an owner's section judged by the server, inputs and motion passed
//! on to the kind, and a copy started over from its spawn parameters.

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

/// A copy started over (`Replica::restart_copy`, as the network layer does to a copy the
/// server sent whole again after a resume) gets a new controller from its spawn
/// parameters, so nothing its client path heard before counts; it keeps its body and its
/// ids. The recording marks it, and the replay starts it over at the same moment and
/// verifies bit for bit.
#[test]
fn a_copy_started_over_forgets_what_it_heard_and_replays_bit_for_bit() {
    let mut r = KindRegistry::new();
    r.register("test.limited", |_: &u8| {
        let kind = Posed(Limited { spin: 1.0 });
        Blueprint::dynamic_box([0.0, 0.5, 0.0], [0.5; 3], [0; 4], kind)
    })
    .unwrap();
    let kinds = Arc::new(r);
    let config = GroupConfig {
        gravity: Vec3::ZERO,
        role: lanyard::Role::Client(lanyard::ClientId(1)),
        ..GroupConfig::default()
    };
    // A client's copy of the server's entity: it spins as it last heard.
    let mut g = EntityGroup::new(kinds.clone(), config);
    let kind = g.registry().id_of("test.limited").unwrap();
    let params = lanyard::encode_params(kind, &0u8).unwrap();
    let net = NetId(1);
    let id = g
        .replica()
        .insert_with_net_id(net, kind, params, Owner::Server)
        .unwrap();
    g.start_recording("limited", "test").unwrap();
    let mut bytes = g.take_recording().unwrap();
    let spin = |g: &EntityGroup| g.controller::<Posed<Limited>>(id).unwrap().0.spin;
    for tick in 0..60 {
        let mut f = Feed::inbound_only();
        if tick == 5 {
            f.sections
                .push((net, limited_section(0.0, 2.5), Owner::Server));
        }
        if tick == 40 {
            assert_eq!(spin(&g), 2.5);
            let at = g.get(id).unwrap().body().translation();
            g.replica().restart_copy(id).unwrap();
            assert_eq!(spin(&g), 1.0, "what its spawn parameters make");
            let e = g.get(id).unwrap();
            assert_eq!((e.net_id(), e.body().translation()), (net, at));
        }
        g.run_frame(&mut f);
    }
    // Spinning as its new controller says, not as it heard before.
    let spun = g.get(id).unwrap().body().angvel().y;
    assert!((spun - 1.0).abs() < 1e-4, "{spun}");
    bytes.extend(g.stop_recording().unwrap());
    let mut replay = lanyard::replay::Replay::open(&bytes, kinds).unwrap();
    assert_eq!(replay.verify(|_, _| {}).unwrap(), None);
    assert_eq!(replay.group().state_hash(), g.state_hash());
}
