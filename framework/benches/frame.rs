//! Criterion benchmarks of the frame: one `EntityGroup` frame against a bare rapier3d step
//! with the same 1000 awake bodies, and the pose codec alone.
//!
//! ```sh
//! cargo bench -p lanyard-core --bench frame -- --save-baseline main   # keep these figures
//! cargo bench -p lanyard-core --bench frame -- --baseline main        # compare a change with them
//! ```
//!
//! Both worlds are built from the same blueprints in the same order; the crates'
//! controllers carry their pose through the self-loopback, which never corrects the
//! authority's own bodies, so both worlds follow the same trajectory (checked before the
//! measurement) and the difference is the cost of the frame's controller passes, packet
//! encoding and decoding alone.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use lanyard::pose::PoseState;
use lanyard::prelude::*;
use lanyard::rapier3d::prelude::PhysicsWorld;
use lanyard::{KindId, encode_params};
use lanyard_demo::{self as demo, CrateParams};
use std::hint::black_box;

const BODIES: usize = 1000;
const WARMUP: usize = 120;

fn params(i: usize) -> CrateParams {
    let (x, y, z) = ((i % 10) as f32, (i / 100) as f32, ((i / 10) % 10) as f32);
    CrateParams {
        pos: [x * 1.3 - 6.0, 0.6 + y * 1.1, z * 1.3 - 6.0],
        half_extents: [0.5, 0.5, 0.5],
        color: [180, 120, 60, 255],
        can_sleep: false,
    }
}

/// The same 1000 crates in a group and in a bare rapier world, stepped `WARMUP` frames.
fn build() -> (EntityGroup, PhysicsWorld) {
    let reg = demo::registry();
    let cfg = GroupConfig::default();
    let mut group = EntityGroup::new(reg.clone(), cfg);
    let mut bare = PhysicsWorld {
        gravity: cfg.gravity,
        ..PhysicsWorld::default()
    };
    bare.integration_parameters.dt = cfg.dt;
    for c in demo::pit(8.0) {
        group.add_scenery(c.clone());
        bare.insert_collider(c, None);
    }
    let kind = KindId::of_name(demo::CRATE);
    for i in 0..BODIES {
        let p = encode_params(kind, &params(i)).expect("encode");
        let bp = reg.build(kind, &p).expect("build");
        let h = bare.insert_body(bp.body);
        for c in bp.colliders {
            bare.insert_collider(c, Some(h));
        }
        group.spawn_encoded(kind, p, Owner::Server).expect("spawn");
    }
    for _ in 0..WARMUP {
        group.frame();
        bare.step();
    }
    let same = bare.bodies.iter().zip(group.iter()).all(|((_, b), e)| {
        b.translation() == e.body().translation() && b.rotation() == e.body().rotation()
    });
    assert!(
        same,
        "the group and the bare world went apart: not the same work"
    );
    (group, bare)
}

fn frame(c: &mut Criterion) {
    let (mut group, mut bare) = build();
    let bytes = group.last_packet().as_bytes().len();
    eprintln!("{BODIES} awake bodies; the frame's packet: {bytes} bytes");
    let mut g = c.benchmark_group("frame");
    g.throughput(Throughput::Elements(BODIES as u64));
    g.sample_size(50);
    g.bench_function("bare rapier3d step", |b| b.iter(|| bare.step()));
    g.bench_function("EntityGroup frame", |b| {
        b.iter(|| drop(black_box(group.frame())))
    });
    g.finish();
}

fn pose_codec(c: &mut Criterion) {
    let (group, _) = build();
    let poses: Vec<PoseState> = group.iter().map(|e| PoseState::of(e.body())).collect();
    let mut encoded = Vec::with_capacity(poses.len() * 32);
    let mut w = SectionWriter::new(&mut encoded);
    for p in &poses {
        p.write(&mut w);
    }
    let mut g = c.benchmark_group("pose codec");
    g.throughput(Throughput::Elements(poses.len() as u64));
    g.bench_function("encode", |b| {
        b.iter_batched_ref(
            || Vec::with_capacity(poses.len() * 32),
            |buf| {
                let mut w = SectionWriter::new(buf);
                for p in &poses {
                    p.write(&mut w);
                }
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("decode", |b| {
        b.iter(|| {
            let mut r = SectionReader::new(&encoded);
            for _ in 0..poses.len() {
                black_box(PoseState::read(&mut r).expect("a pose"));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, frame, pose_codec);
criterion_main!(benches);
