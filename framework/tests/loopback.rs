//! Self-loopback: on the authority, an entity changes only through its own packet fed back
//! through decode and its client path.

mod common;

use common::Feed;
use lanyard::prelude::*;
use lanyard_demo::{self as demo, Mover, MoverParams};
use std::sync::Arc;

/// A group of the demo's kinds with no gravity, its loopback on or off.
fn weightless_demo_group(loopback: bool) -> EntityGroup {
    let mut r = KindRegistry::new();
    demo::register(&mut r).unwrap();
    EntityGroup::new(
        Arc::new(r),
        GroupConfig {
            gravity: Vec3::ZERO,
            loopback,
            ..GroupConfig::default()
        },
    )
}

/// A crate of the demo's at `pos`, kept awake.
fn crate_at(pos: [f32; 3]) -> demo::CrateParams {
    demo::CrateParams {
        pos,
        half_extents: [0.5; 3],
        color: [0, 0, 0, 255],
        can_sleep: false,
    }
}

fn floating_mover(loopback: bool) -> (EntityGroup, EntityId) {
    let mut g = weightless_demo_group(loopback);
    let params = MoverParams {
        pos: [0.0, 5.0, 0.0],
        half_extents: [0.5, 0.5, 0.5],
        seed: 3,
        speed: 5.0,
        period: 20,
        moves_for: 0,
    };
    let id = g.spawn(demo::MOVER, &params, Owner::Server).unwrap();
    (g, id)
}

/// Runs a floating mover for a second, checking every frame wrote its section and applied
/// `applied` of them; returns the group, the mover, and how far it moved.
fn second_of(loopback: bool, applied: usize) -> (EntityGroup, EntityId, f32) {
    let (mut g, id) = floating_mover(loopback);
    let start = g.get(id).unwrap().body().translation();
    for _ in 0..60 {
        let report = g.frame();
        assert_eq!(
            (report.sections_written, report.sections_applied),
            (1, applied)
        );
    }
    let moved = (g.get(id).unwrap().body().translation() - start).length();
    (g, id, moved)
}

#[test]
fn mover_moves_through_the_loopback() {
    let (g, id, moved) = second_of(true, 1);
    assert!(moved > 1.0, "moved only {moved}");
    assert_ne!(g.controller::<Mover>(id).unwrap().target(), Vec3::ZERO);
}

#[test]
fn mover_does_not_move_without_the_loopback() {
    // The server path still decides and writes every frame, but nothing feeds it back, so
    // the client path never hears of it.
    let (g, id, moved) = second_of(false, 0);
    assert_eq!(moved, 0.0);
    assert_eq!(g.controller::<Mover>(id).unwrap().target(), Vec3::ZERO);
}

#[test]
fn a_group_fed_the_servers_packet_every_frame_follows_it_bit_for_bit() {
    // The loopback is nothing more than receiving the packet the server paths wrote: a
    // second group that runs no server path of its own and is handed that packet every
    // frame stays bit-identical to the server.
    let (mut server, a) = floating_mover(true);
    let (mut mirror, b) = floating_mover(true);
    for _ in 0..30 {
        let mut capture = Feed::with_server_paths();
        server.run_frame(&mut capture);
        let (report, received) = Feed::packet(&mut mirror, &capture.outbound, Owner::Server);
        assert_eq!((received.accepted, report.sections_applied), (1, 1));
    }
    assert_eq!(
        server.get(a).unwrap().body().translation(),
        mirror.get(b).unwrap().body().translation()
    );
    assert_eq!(server.state_hash(), mirror.state_hash());
}

#[test]
fn the_authority_passes_over_its_own_pose_and_observes_it_as_its_section_carried_it() {
    // A crate floats where no millimetre grid puts it. On the server its own section comes
    // back looped and is passed over, not decoded, and not copied: the pose it observes is
    // decoded from its packet when asked, quantized, just as a group handed the same packet
    // from outside decodes it.
    let floating_crate = || {
        let mut g = weightless_demo_group(true);
        let params = crate_at([0.123_456, 2.0, -0.765_432]);
        let id = g.spawn(demo::CRATE, &params, Owner::Server).unwrap();
        (g, id)
    };
    let (mut server, _) = floating_crate();
    let (mut mirror, _) = floating_crate();
    let mut capture = Feed::with_server_paths();
    server.run_frame(&mut capture);
    Feed::packet(&mut mirror, &capture.outbound, Owner::Server);
    let seen = |g: &EntityGroup| {
        let [o] = g.observed_poses() else {
            panic!("one observed pose, not {}", g.observed_poses().len())
        };
        assert!(o.corrected_from.is_none());
        (o.authority, o.applied)
    };
    let quantized = Vec3::new(0.123, 2.0, -0.765);
    assert_eq!(seen(&server).0.pos, quantized);
    assert_eq!(seen(&server), seen(&mirror));
}

/// A kind whose server path writes nothing; its client path counts the sections it got.
#[derive(Default)]
struct Silent {
    sections: u32,
}

impl Controller for Silent {
    fn server_update(&mut self, _: EntityRef<'_>, _: &WorldView<'_>, _: &mut SectionWriter<'_>) {}

    fn client_update(
        &mut self,
        _: &mut Entity,
        section: Option<Section<'_>>,
        _: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        self.sections += u32::from(section.is_some());
        Ok(())
    }
}

#[test]
fn each_entity_on_the_server_gets_back_its_own_section_and_no_other() {
    // Three movers, each with its own seed, with entities that write no section between
    // them: every mover ends exactly where it ends alone, and the silent ones get nothing.
    let mut r = KindRegistry::new();
    demo::register(&mut r).unwrap();
    r.register("silent", |_: &()| Blueprint {
        body: RigidBodyBuilder::fixed().build(),
        colliders: vec![],
        visual: Visual {
            shape: Shape::Ball { radius: 1.0 },
            color: [0; 4],
        },
        controller: Box::new(Silent::default()),
    })
    .unwrap();
    let config = GroupConfig {
        gravity: Vec3::ZERO,
        ..GroupConfig::default()
    };
    let mover = |seed: u64| MoverParams {
        seed,
        ..MoverParams::at([10.0 * seed as f32, 5.0, 0.0])
    };
    let registry = Arc::new(r);
    let mut mixed = EntityGroup::new(registry.clone(), config);
    let mut movers = Vec::new();
    let mut silent = Vec::new();
    for seed in 1..=3 {
        silent.push(mixed.spawn("silent", &(), Owner::Server).unwrap());
        movers.push((
            seed,
            mixed
                .spawn(demo::MOVER, &mover(seed), Owner::Server)
                .unwrap(),
        ));
    }
    for _ in 0..60 {
        assert_eq!(mixed.frame().sections_applied, 3);
    }
    for (seed, id) in movers {
        let mut alone = EntityGroup::new(registry.clone(), config);
        let solo = alone
            .spawn(demo::MOVER, &mover(seed), Owner::Server)
            .unwrap();
        for _ in 0..60 {
            alone.frame();
        }
        let at = |g: &EntityGroup, id| g.get(id).unwrap().body().translation();
        assert_eq!(at(&mixed, id), at(&alone, solo), "mover {seed}");
    }
    for id in silent {
        assert_eq!(mixed.controller::<Silent>(id).unwrap().sections, 0);
    }
}

/// A crate whose server path writes its pose and one byte more, which its client path
/// (`PoseState::take`) does not expect.
#[derive(Default)]
struct Padded;

impl Controller for Padded {
    fn server_update(&mut self, me: EntityRef<'_>, _: &WorldView<'_>, out: &mut SectionWriter<'_>) {
        lanyard::pose::PoseState::of(me.body()).write(out);
        out.u8(7);
    }

    fn client_update(
        &mut self,
        _: &mut Entity,
        section: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        match &section {
            Some(s) => lanyard::pose::PoseState::take(s, ctx, 0.002),
            None => Ok(()),
        }
    }
}

#[test]
fn a_looped_back_pose_with_a_byte_left_over_is_refused_on_the_authority_too() {
    // The authority passes over its own pose without decoding it; a section longer than a
    // pose is still read as a whole, and refused for what is left over.
    let mut r = KindRegistry::new();
    r.register("padded", |_: &()| Blueprint {
        body: RigidBodyBuilder::dynamic().build(),
        colliders: vec![],
        visual: Visual {
            shape: Shape::Ball { radius: 1.0 },
            color: [0; 4],
        },
        controller: Box::new(Padded),
    })
    .unwrap();
    let mut g = EntityGroup::new(Arc::new(r), GroupConfig::default());
    g.spawn("padded", &(), Owner::Server).unwrap();
    let report = g.frame();
    assert_eq!((report.sections_written, report.bad_sections), (1, 1));
    assert_eq!(
        report.section_errors[0].error,
        Error::Codec(lanyard::CodecError::TrailingBytes(1))
    );
    assert!(g.observed_poses().is_empty());
}

#[test]
fn observed_poses_keep_the_client_pass_order_with_the_authoritys_own_among_them() {
    // Three crates on a server: the first and the last its own, the middle one a client's.
    // The client's section is taken (and observed as the section says); the server's own
    // are observed exactly, each where the client pass came to it.
    let mut g = weightless_demo_group(true);
    g.replica().set_clients([ClientId(1)]);
    let client = Owner::Client(ClientId(1));
    let at = |x: f32| crate_at([x, 2.0, 0.0]);
    let ids = [
        g.spawn(demo::CRATE, &at(0.0), Owner::Server).unwrap(),
        g.spawn(demo::CRATE, &at(3.0), client).unwrap(),
        g.spawn(demo::CRATE, &at(6.0), Owner::Server).unwrap(),
    ];
    let held = g.get(ids[1]).unwrap();
    let mut packet = lanyard::codec::PacketWriter::new();
    let mut sent = lanyard::pose::PoseState::of(held.body());
    sent.pos.x += 0.25;
    packet.section(held.net_id(), |w| sent.write(w)).unwrap();
    let mut feed = common::Feed::with_server_paths();
    feed.packets.push((packet.as_bytes().to_vec(), client));
    g.run_frame(&mut feed);
    let seen: Vec<(EntityId, f32, bool)> = g
        .observed_poses()
        .iter()
        .map(|o| (o.id, o.authority.pos.x, o.corrected_from.is_some()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (ids[0], 0.0, false),
            (ids[1], 3.25, true),
            (ids[2], 6.0, false)
        ]
    );
    // Asked again, the same; a frame later, that frame's.
    assert_eq!(g.observed_poses().len(), 3);
    g.frame();
    let ids_seen: Vec<EntityId> = g.observed_poses().iter().map(|o| o.id).collect();
    assert_eq!(ids_seen, vec![ids[0], ids[2]]);
}
