//! EntityGroup behaviour: the registry, authority on received sections, bad sections,
//! commands from client paths, despawning mid-pass, and snapshots that cannot be read.

mod common;

use common::Feed;
use lanyard::codec::{PacketWriter, SectionWriter};
use lanyard::pose::{BodyState, PoseState};
use lanyard::prelude::*;
use lanyard::{Change, KindId, Role, Verdict};
use lanyard_demo::{self as demo, CrateParams, MoverParams};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

fn crate_at(x: f32) -> CrateParams {
    CrateParams {
        pos: [x, 0.5, 0.0],
        half_extents: [0.5; 3],
        color: [255; 4],
        can_sleep: false,
    }
}

fn demo_kinds() -> Arc<KindRegistry> {
    let mut r = KindRegistry::new();
    demo::register(&mut r).unwrap();
    Arc::new(r)
}

/// A group of the demo kinds; as a server, it plays one a network layer drives, with
/// clients 1 to 4 in session (so entities they own may be spawned).
fn demo_group(role: Role) -> EntityGroup {
    let mut g = EntityGroup::new(
        demo_kinds(),
        GroupConfig {
            role,
            gravity: Vec3::ZERO,
            ..GroupConfig::default()
        },
    );
    if role == Role::Server {
        g.replica().set_clients((1..=4).map(ClientId));
    }
    g
}

#[test]
fn registering_a_name_twice_is_an_error() {
    let mut r = KindRegistry::new();
    demo::register(&mut r).unwrap();
    let e = demo::register(&mut r).unwrap_err();
    assert_eq!(e, Error::DuplicateKind(demo::CRATE.into()));
}

#[test]
fn kind_ids_do_not_depend_on_registration_order() {
    let mut a = KindRegistry::new();
    demo::register(&mut a).unwrap();
    let mut b = KindRegistry::new();
    b.register("zzz.first", |_: &()| unreachable!()).unwrap();
    demo::register(&mut b).unwrap();
    for name in [demo::CRATE, demo::BALL, demo::MOVER] {
        assert_eq!(a.id_of(name), b.id_of(name));
        assert_eq!(a.id_of(name), Some(KindId::of_name(name)));
    }
    assert_eq!(a.id_of("zzz.first"), None);
}

#[test]
fn spawning_an_unknown_kind_or_bad_params_is_an_error() {
    let mut g = demo_group(Role::Server);
    assert_eq!(
        g.spawn("no.such.kind", &(), Owner::Server).unwrap_err(),
        Error::UnknownKindName("no.such.kind".into())
    );
    assert_eq!(
        g.spawn_encoded(KindId(12345), vec![], Owner::Server)
            .unwrap_err(),
        Error::UnknownKind(KindId(12345))
    );
    let crate_kind = KindId::of_name(demo::CRATE);
    let e = g
        .spawn_encoded(crate_kind, vec![1, 2, 3], Owner::Server)
        .unwrap_err();
    assert!(
        matches!(&e, Error::BadSpawnParams { kind, .. } if kind == demo::CRATE),
        "named by its kind: {e}"
    );
    assert!(e.to_string().contains("demo.crate"), "{e}");
    assert!(g.is_empty());
    assert_eq!(
        g.physics().bodies.len(),
        0,
        "a failed spawn left a body behind"
    );
}

#[test]
fn ids_are_generational_and_net_ids_never_reused() {
    let mut g = demo_group(Role::Server);
    let a = g.spawn(demo::CRATE, &crate_at(0.0), Owner::Server).unwrap();
    let net_a = g.get(a).unwrap().net_id();
    g.despawn(a).unwrap();
    assert!(g.get(a).is_none());
    assert_eq!(g.despawn(a), Err(Error::NoSuchEntity(a)));
    let b = g.spawn(demo::CRATE, &crate_at(1.0), Owner::Server).unwrap();
    assert_eq!(a.index(), b.index(), "the slot is reused");
    assert_ne!(a, b);
    assert!(
        g.get(a).is_none(),
        "a stale id must not reach the new entity"
    );
    assert!(g.get(b).unwrap().net_id() > net_a);
    assert_eq!(g.physics().bodies.len(), 1);
    assert_eq!(g.physics().colliders.len(), 1);
}

fn packet(sections: &[(NetId, &[u8])]) -> Vec<u8> {
    let mut p = PacketWriter::new();
    for (id, bytes) in sections {
        p.raw_section(Section {
            net_id: *id,
            payload: bytes,
        })
        .unwrap();
    }
    p.as_bytes().to_vec()
}

fn mover_target(v: Vec3) -> Vec<u8> {
    let mut b = Vec::new();
    let mut w = SectionWriter::new(&mut b);
    w.vec3(v);
    PoseState {
        pos: Vec3::new(0.0, 1.0, 0.0),
        rot: Quat::IDENTITY,
        linvel: Vec3::ZERO,
        angvel: Vec3::ZERO,
    }
    .write(&mut w);
    b
}

fn mover(g: &mut EntityGroup, owner: Owner) -> EntityId {
    let p = MoverParams::at([0.0, 1.0, 0.0]);
    g.spawn(demo::MOVER, &p, owner).unwrap()
}

#[test]
fn a_bad_section_is_skipped_and_the_rest_of_the_packet_still_applies() {
    let mut g = demo_group(Role::Server);
    let ids: Vec<EntityId> = (0..3).map(|_| mover(&mut g, Owner::Server)).collect();
    let nets: Vec<NetId> = ids.iter().map(|&i| g.get(i).unwrap().net_id()).collect();
    let good = mover_target(Vec3::new(1.0, 0.0, 0.0));
    let bad = [0xffu8, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0]; // a NaN
    let p = packet(&[
        (nets[0], &good),
        (nets[1], &bad),
        (NetId(999), &good),
        (nets[2], &good),
    ]);
    let (frame, r) = Feed::packet(&mut g, &p, Owner::Server);
    assert_eq!(
        (r.accepted, r.unknown_entity, r.framing_error),
        (3, 1, false)
    );
    assert_eq!((frame.sections_applied, frame.bad_sections), (2, 1));
    assert_eq!(g.counters().bad_sections, 1);
    assert_eq!(g.counters().unknown_entity, 1);
    let target = |g: &EntityGroup, i| g.controller::<demo::Mover>(i).unwrap().target();
    assert_eq!(target(&g, ids[0]), Vec3::X);
    assert_eq!(
        target(&g, ids[1]),
        Vec3::ZERO,
        "the bad section changed its entity"
    );
    assert_eq!(
        target(&g, ids[2]),
        Vec3::X,
        "the section after the bad one was lost"
    );
}

#[test]
fn sections_are_accepted_only_from_the_owner_or_the_server() {
    let mut g = demo_group(Role::Server);
    let server_owned = mover(&mut g, Owner::Server);
    let alices = mover(&mut g, Owner::Client(ClientId(1)));
    let (s, a) = (
        g.get(server_owned).unwrap().net_id(),
        g.get(alices).unwrap().net_id(),
    );
    let push = mover_target(Vec3::new(0.0, 0.0, 2.0));
    let p = packet(&[(s, &push), (a, &push)]);

    // Bob owns neither; Alice owns only hers.
    let mut feed = Feed::inbound_only();
    feed.packets.push((p.clone(), Owner::Client(ClientId(2))));
    feed.packets.push((p, Owner::Client(ClientId(1))));
    g.run_frame(&mut feed);
    let (bob, alice) = (feed.reports[0], feed.reports[1]);
    assert_eq!((bob.accepted, bob.not_owner), (0, 2));
    assert_eq!((alice.accepted, alice.not_owner), (1, 1));
    assert_eq!(
        g.controller::<demo::Mover>(server_owned).unwrap().target(),
        Vec3::ZERO
    );
    assert_eq!(
        g.controller::<demo::Mover>(alices).unwrap().target(),
        Vec3::new(0.0, 0.0, 2.0)
    );
    assert_eq!(g.counters().not_owner, 3);
    // Not strict (as in release builds): counted, and nothing in the report.
    g.set_strict(false);
    let fed = |g: &mut EntityGroup, from: u16| {
        let mut feed = Feed::inbound_only();
        let p = packet(&[(s, &push), (NetId(999), &push)]);
        feed.packets.push((p, Owner::Client(ClientId(from))));
        g.run_frame(&mut feed)
    };
    assert!(fed(&mut g, 2).section_errors.is_empty());
    // Strict, each is an entry naming the kind, the entity and why.
    g.set_strict(true);
    let report = fed(&mut g, 2);
    let why: Vec<(NetId, &str, &Error)> = report
        .section_errors
        .iter()
        .map(|e| (e.net, e.kind.as_str(), &e.error))
        .collect();
    let bob = Owner::Client(ClientId(2));
    assert_eq!(
        why,
        [
            (
                s,
                demo::MOVER,
                &Error::NotTheOwner {
                    from: bob,
                    owner: Owner::Server
                }
            ),
            (NetId(999), "?", &Error::SectionForNoEntity { from: bob }),
        ]
    );
}

#[test]
fn the_server_runs_server_paths_only_for_what_it_owns() {
    let mut g = demo_group(Role::Server);
    mover(&mut g, Owner::Server);
    mover(&mut g, Owner::Client(ClientId(1)));
    assert_eq!(g.frame().sections_written, 1);

    // A client's entities come from the server, with the ids it gave them.
    let mut c = demo_group(Role::Client(ClientId(1)));
    let params = lanyard::encode_params(
        KindId::of_name(demo::MOVER),
        &MoverParams::at([0.0, 1.0, 0.0]),
    )
    .unwrap();
    for (n, owner) in [
        (1, Owner::Server),
        (2, Owner::Client(ClientId(1))),
        (3, Owner::Client(ClientId(2))),
    ] {
        c.replica()
            .insert_with_net_id(
                NetId(n),
                KindId::of_name(demo::MOVER),
                params.clone(),
                owner,
            )
            .unwrap();
    }
    assert_eq!(c.frame().sections_written, 1);
}

#[test]
fn a_clients_group_refuses_to_spawn_and_points_to_request_spawn() {
    let mut c = demo_group(Role::Client(ClientId(1)));
    let p = MoverParams::at([0.0, 1.0, 0.0]);
    let e = c
        .spawn(demo::MOVER, &p, Owner::Client(ClientId(1)))
        .unwrap_err();
    assert_eq!(
        e,
        lanyard::Error::SpawnOnClient {
            kind: demo::MOVER.to_owned()
        }
    );
    assert!(e.to_string().contains("request_spawn"), "{e}");
    assert!(c.is_empty(), "nothing was spawned");
    // request_spawn is the way: it waits for the network layer.
    c.request_spawn(demo::MOVER, &p).unwrap();
}

#[test]
fn non_finite_spawn_parameters_unknown_owners_and_bad_configurations_are_refused() {
    let mut g = demo_group(Role::Server);
    let p = MoverParams::at([f32::NAN, 1.0, 0.0]);
    let e = g.spawn(demo::MOVER, &p, Owner::Server).unwrap_err();
    assert_eq!(
        e,
        lanyard::Error::NonFinite {
            kind: demo::MOVER.to_owned(),
            what: "position"
        }
    );
    assert!(
        e.to_string().contains("demo.mover"),
        "named by its kind: {e}"
    );
    assert!(g.is_empty());
    // An owner that is no client of the server (a network layer says which are).
    g.replica().set_clients([ClientId(1)]);
    let fine = MoverParams {
        pos: [0.0, 1.0, 0.0],
        ..p
    };
    let e = g
        .spawn(demo::MOVER, &fine, Owner::Client(ClientId(2)))
        .unwrap_err();
    assert_eq!(
        e,
        lanyard::Error::NoSuchOwner {
            kind: demo::MOVER.to_owned(),
            owner: 2
        }
    );
    g.spawn(demo::MOVER, &fine, Owner::Client(ClientId(1)))
        .unwrap();
    g.spawn(demo::MOVER, &fine, Owner::Server).unwrap();
    assert_eq!(g.len(), 2);
    let g = &mut demo_group(Role::Server);
    for dt in [0.0, f32::NAN, -1.0, 2.0] {
        let config = GroupConfig {
            dt,
            ..GroupConfig::default()
        };
        let e = EntityGroup::try_new(demo_kinds(), config).unwrap_err();
        assert!(e.to_string().contains("timestep"), "{e}");
        assert!(g.set_dt(dt).is_err(), "set_dt({dt}) refused");
    }
    assert_eq!(g.config().dt, GroupConfig::default().dt, "unchanged");
    let built = std::panic::catch_unwind(|| {
        EntityGroup::new(
            demo_kinds(),
            GroupConfig {
                dt: 0.0,
                ..GroupConfig::default()
            },
        )
    });
    assert!(built.is_err(), "EntityGroup::new says so at once");
}

/// A kind for testing commands: on a given tick its client path spawns a copy of itself
/// and despawns a victim (possibly itself). It counts its client-path calls.
#[derive(Serialize, Deserialize)]
struct Saboteur {
    on_tick: u64,
    victim: Option<u32>,
    spawn: bool,
}

struct SaboteurCtl {
    p: Saboteur,
    calls: u32,
}

impl Controller for SaboteurCtl {
    fn server_update(&mut self, _: EntityRef<'_>, _: &WorldView<'_>, _: &mut SectionWriter<'_>) {}

    fn client_update(
        &mut self,
        _: &mut Entity,
        _: Option<Section<'_>>,
        ctx: &mut ClientContext<'_>,
    ) -> Result<(), Error> {
        self.calls += 1;
        if ctx.tick() == self.p.on_tick {
            if let Some(v) = self.p.victim {
                ctx.despawn(NetId(v));
            }
            if self.p.spawn {
                ctx.spawn(
                    "saboteur",
                    &Saboteur {
                        on_tick: u64::MAX,
                        victim: None,
                        spawn: false,
                    },
                )?;
            }
        }
        Ok(())
    }
}

fn saboteur_group(role: Role) -> EntityGroup {
    let mut r = KindRegistry::new();
    r.register("saboteur", |p: &Saboteur| Blueprint {
        body: RigidBodyBuilder::fixed().build(),
        colliders: vec![],
        visual: Visual {
            shape: Shape::Ball { radius: 1.0 },
            color: [0; 4],
        },
        controller: Box::new(SaboteurCtl {
            p: Saboteur {
                on_tick: p.on_tick,
                victim: p.victim,
                spawn: p.spawn,
            },
            calls: 0,
        }),
    })
    .unwrap();
    EntityGroup::new(
        Arc::new(r),
        GroupConfig {
            role,
            ..GroupConfig::default()
        },
    )
}

#[test]
fn despawning_during_the_pass_is_safe_and_happens_after_it() {
    let mut g = saboteur_group(Role::Server);
    let calm = |victim| Saboteur {
        on_tick: 1,
        victim,
        spawn: false,
    };
    // #1 despawns #3 (later in the pass), #2 despawns itself, #4 spawns.
    let e0 = g.spawn("saboteur", &calm(Some(3)), Owner::Server).unwrap();
    let e1 = g.spawn("saboteur", &calm(Some(2)), Owner::Server).unwrap();
    let e2 = g.spawn("saboteur", &calm(None), Owner::Server).unwrap();
    let e3 = g
        .spawn(
            "saboteur",
            &Saboteur {
                on_tick: 1,
                victim: None,
                spawn: true,
            },
            Owner::Server,
        )
        .unwrap();
    g.frame();
    let r = g.frame();
    assert_eq!((r.despawned, r.spawned), (2, 1));
    assert!(g.get(e1).is_none() && g.get(e2).is_none());
    assert_eq!(g.len(), 3);
    // Every entity alive at the start of the pass ran exactly twice, the victims included.
    assert_eq!(g.controller::<SaboteurCtl>(e0).unwrap().calls, 2);
    assert_eq!(g.controller::<SaboteurCtl>(e3).unwrap().calls, 2);
    // The newcomer got the next network id and runs from the next frame on.
    let newcomer = g.iter().last().unwrap().id();
    assert_eq!(g.get(newcomer).unwrap().net_id(), NetId(5));
    assert_eq!(g.controller::<SaboteurCtl>(newcomer).unwrap().calls, 0);
    g.frame();
    assert_eq!(g.controller::<SaboteurCtl>(newcomer).unwrap().calls, 1);
}

#[test]
fn a_client_keeps_its_own_spawns_for_the_network_layer() {
    let mut g = saboteur_group(Role::Client(ClientId(4)));
    let spawner = Saboteur {
        on_tick: 0,
        victim: None,
        spawn: true,
    };
    g.replica()
        .insert_with_net_id(
            NetId(10),
            KindId::of_name("saboteur"),
            lanyard::encode_params(KindId(0), &spawner).unwrap(),
            Owner::Client(ClientId(4)),
        )
        .unwrap();
    g.replica()
        .insert_with_net_id(
            NetId(11),
            KindId::of_name("saboteur"),
            lanyard::encode_params(KindId(0), &spawner).unwrap(),
            Owner::Server,
        )
        .unwrap();
    let mut feed = Feed::with_server_paths();
    let r = g.run_frame(&mut feed);
    assert_eq!(r.spawned, 0, "a client must not assign network ids");
    let reqs = feed.requests;
    assert_eq!(reqs.len(), 1, "only the spawn of its own entity goes up");
    assert_eq!(reqs[0].owner, Owner::Client(ClientId(4)));
    assert_eq!(reqs[0].requested_by, NetId(10));
}

#[test]
fn unreadable_snapshots_are_errors_not_panics() {
    let mut g = demo_group(Role::Server);
    mover(&mut g, Owner::Server);
    g.frame();
    let snap = g.snapshot().unwrap();
    let reg = g.registry().clone();
    let restore = |b: &[u8]| EntityGroup::restore(reg.clone(), b);
    assert!(matches!(restore(b"nope"), Err(Error::BadSnapshot(_))));
    let mut other_version = snap.clone();
    other_version[4] ^= 0xff;
    assert!(matches!(restore(&other_version), Err(Error::BadSnapshot(m)) if m.contains("version")));
    for cut in [5, 12, 20, snap.len() / 2, snap.len() - 1] {
        assert!(
            restore(&snap[..cut]).is_err(),
            "truncated at {cut} was accepted"
        );
    }
    for at in [30, snap.len() / 3, snap.len() - 3] {
        let mut corrupted = snap.clone();
        corrupted[at] ^= 0x10;
        assert!(
            matches!(restore(&corrupted), Err(Error::BadSnapshot(m)) if m.contains("checksum")),
            "a flipped bit at {at} was not caught"
        );
    }
    let empty = KindRegistry::new();
    assert!(matches!(
        EntityGroup::restore(Arc::new(empty), &snap),
        Err(Error::UnknownKind(_))
    ));
    assert_eq!(restore(&snap).unwrap().state_hash(), g.state_hash());
}

#[test]
fn the_validation_hook_refuses_an_owners_illegal_section() {
    let mut g = demo_group(Role::Server);
    let alices = mover(&mut g, Owner::Client(ClientId(1)));
    let net = g.get(alices).unwrap().net_id();
    let alice = Owner::Client(ClientId(1));
    // The mover's top speed is 5 m/s; its hook refuses targets over 10 m/s.
    let fast = mover_target(Vec3::new(50.0, 0.0, 0.0));
    let fine = mover_target(Vec3::new(4.0, 0.0, 0.0));
    let mut feed = Feed::inbound_only();
    feed.sections.push((net, fast.clone(), alice));
    // The server itself is not judged.
    feed.sections.push((net, fast, Owner::Server));
    feed.sections.push((net, fine, alice));
    let report = g.run_frame(&mut feed);
    // The refusal is in the frame's report, with the kind and the entity, not only counted.
    assert_eq!(
        report.section_errors.len(),
        1,
        "{:?}",
        report.section_errors
    );
    let refused = &report.section_errors[0];
    assert_eq!((refused.net, refused.kind.as_str()), (net, demo::MOVER));
    assert_eq!(refused.error, Error::IllegalSection { from: alice });
    assert_eq!(
        feed.verdicts,
        vec![
            (Verdict::Illegal, false),
            (Verdict::Accepted, true),
            (Verdict::Accepted, true)
        ]
    );
    assert_eq!(g.counters().illegal, 1);
    assert_eq!(
        g.controller::<demo::Mover>(alices).unwrap().target(),
        Vec3::new(4.0, 0.0, 0.0)
    );
}

#[test]
fn a_trusted_entity_takes_its_owners_next_sections_even_illegal_ones_then_judges_again() {
    let mut g = demo_group(Role::Server);
    let alices = mover(&mut g, Owner::Client(ClientId(1)));
    let net = g.get(alices).unwrap().net_id();
    let alice = Owner::Client(ClientId(1));
    let fast = mover_target(Vec3::new(50.0, 0.0, 0.0));
    let fine = mover_target(Vec3::new(4.0, 0.0, 0.0));
    // Two sections trusted: an illegal one, then a legal one (which counts too); the
    // third illegal one is refused.
    g.replica().trust_sections(net, 2);
    let verdicts: Vec<Verdict> = [fast.clone(), fine, fast]
        .into_iter()
        .map(|section| {
            let mut feed = Feed::inbound_only();
            feed.sections.push((net, section, alice));
            g.run_frame(&mut feed);
            feed.verdicts[0].0
        })
        .collect();
    assert_eq!(
        verdicts,
        [Verdict::Accepted, Verdict::Accepted, Verdict::Illegal]
    );
    assert_eq!((g.counters().trusted, g.counters().illegal), (1, 1));
}

#[test]
fn a_snapshot_keeps_who_is_trusted_and_how_many_sections_were_taken_on_trust() {
    let mut g = demo_group(Role::Server);
    let alices = mover(&mut g, Owner::Client(ClientId(1)));
    let net = g.get(alices).unwrap().net_id();
    let alice = Owner::Client(ClientId(1));
    let fast = mover_target(Vec3::new(50.0, 0.0, 0.0));
    g.replica().trust_sections(net, 2);
    let mut feed = Feed::inbound_only();
    feed.sections.push((net, fast.clone(), alice));
    g.run_frame(&mut feed);
    let mut back = EntityGroup::restore(g.registry().clone(), &g.snapshot().unwrap()).unwrap();
    assert_eq!(back.counters().trusted, 1);
    // One trusted section is left after the restore, then the group judges again.
    let verdicts: Vec<Verdict> = [fast.clone(), fast]
        .into_iter()
        .map(|section| {
            let mut feed = Feed::inbound_only();
            feed.sections.push((net, section, alice));
            back.run_frame(&mut feed);
            feed.verdicts[0].0
        })
        .collect();
    assert_eq!(verdicts, [Verdict::Accepted, Verdict::Illegal]);
}

#[test]
fn the_journal_records_spawns_despawns_owner_changes_and_renames() {
    let mut g = demo_group(Role::Server);
    let a = g.spawn(demo::CRATE, &crate_at(0.0), Owner::Server).unwrap();
    let b = mover(&mut g, Owner::Client(ClientId(3)));
    let (na, nb) = (g.get(a).unwrap().net_id(), g.get(b).unwrap().net_id());
    g.set_owner(b, Owner::Server).unwrap();
    g.despawn(a).unwrap();
    let prov = NetId(NetId::PROVISIONAL_BIT | 1);
    g.replica().rename_net_id(nb, prov).unwrap();
    assert_eq!(
        g.replica().drain_changes().collect::<Vec<_>>(),
        vec![
            Change::Spawned(na),
            Change::Spawned(nb),
            Change::OwnerChanged {
                net: nb,
                owner: Owner::Server,
                seq: 1
            },
            Change::Despawned {
                net: na,
                owner: Owner::Server
            },
            Change::Renamed { from: nb, to: prov },
        ]
    );
    assert_eq!(g.replica().drain_changes().count(), 0);
    assert_eq!(g.id_of(prov), Some(b));
    assert_eq!(g.id_of(nb), None);
    assert_eq!(
        g.replica().rename_net_id(NetId(77), NetId(78)),
        Err(Error::NoSuchNetId(NetId(77)))
    );
}

#[test]
fn a_body_state_with_nan_is_refused_and_changes_nothing() {
    let mut g = demo_group(Role::Server);
    let a = g.spawn(demo::CRATE, &crate_at(2.0), Owner::Server).unwrap();
    let before = g.state_hash();
    let mut s = BodyState::of(g.get(a).unwrap().body());
    s.linvel[1] = f32::NAN;
    assert!(g.set_body_state(a, &s).is_err());
    assert_eq!(g.state_hash(), before);
    s.linvel[1] = 3.0;
    g.set_body_state(a, &s).unwrap();
    assert_eq!(g.get(a).unwrap().body().linvel().y, 3.0);
}

#[test]
fn a_client_despawns_only_its_own_entities() {
    let mut g = saboteur_group(Role::Client(ClientId(4)));
    let kind = KindId::of_name("saboteur");
    let killer = |victim| {
        lanyard::encode_params(
            kind,
            &Saboteur {
                on_tick: 0,
                victim: Some(victim),
                spawn: false,
            },
        )
        .unwrap()
    };
    // #10 (the server's) tries to despawn #11 (also the server's); #12 (ours) despawns #13 (ours).
    g.replica()
        .insert_with_net_id(NetId(10), kind, killer(11), Owner::Server)
        .unwrap();
    g.replica()
        .insert_with_net_id(NetId(11), kind, killer(99), Owner::Server)
        .unwrap();
    g.replica()
        .insert_with_net_id(NetId(12), kind, killer(13), Owner::Client(ClientId(4)))
        .unwrap();
    g.replica()
        .insert_with_net_id(NetId(13), kind, killer(99), Owner::Client(ClientId(4)))
        .unwrap();
    assert_eq!(g.frame().despawned, 1);
    assert!(
        g.by_net(NetId(11)).is_some(),
        "a client despawned a server entity"
    );
    assert!(g.by_net(NetId(13)).is_none());
}
