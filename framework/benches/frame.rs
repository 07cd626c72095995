//! One EntityGroup frame against a bare rapier3d step, with the same 1000 awake bodies.
//!
//! Run with `cargo bench -p lanyard --bench frame`. Both worlds are built from the same
//! blueprints in the same order; the crates' controllers carry their pose through the
//! self-loopback, which never corrects the authority's own bodies, so both worlds follow
//! the same trajectory (checked bit for bit at the end) and the ratio is the cost of the
//! frame's controller passes, packet encoding and decoding alone.

use lanyard::pose::PoseState;
use lanyard::prelude::*;
use lanyard::rapier3d::prelude::PhysicsWorld;
use lanyard::{KindId, encode_params};
use lanyard_demo::{self as demo, CrateParams};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

const BODIES: usize = 1000;
const WARMUP: usize = 120;
/// Frames measured in each world.
const FRAMES: usize = 600;
/// Frames of one world in a row before the other's turn: one, so that the machine's noise
/// (this is a shared VM) lands on both alike. Each frame of either world then starts after
/// the other's step, with some of its own data out of the cache (a game's one world would
/// find more of it there): the group's passes, which read every body again, pay for that.
const TURN: usize = 1;

fn params(i: usize) -> CrateParams {
    let (x, y, z) = ((i % 10) as f32, (i / 100) as f32, ((i / 10) % 10) as f32);
    CrateParams {
        pos: [x * 1.3 - 6.0, 0.6 + y * 1.1, z * 1.3 - 6.0],
        half_extents: [0.5, 0.5, 0.5],
        color: [180, 120, 60, 255],
        can_sleep: false,
    }
}

fn build() -> (EntityGroup, PhysicsWorld) {
    let mut reg = KindRegistry::new();
    demo::register(&mut reg).expect("register");
    let reg = Arc::new(reg);
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
    (group, bare)
}

fn per_frame_ns(frames: usize, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..frames {
        f();
    }
    t.elapsed().as_nanos() as f64 / frames as f64
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The pose codec alone, per body: `PoseState::of` and `write`, then `read`, over the
/// group's bodies as they are (medians of 200 passes).
fn pose_codec_ns(group: &EntityGroup) -> (f64, f64) {
    let poses: Vec<PoseState> = group.iter().map(|e| PoseState::of(e.body())).collect();
    let mut buf = Vec::with_capacity(poses.len() * 32);
    let (mut enc, mut dec) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        buf.clear();
        enc.push(per_frame_ns(poses.len(), {
            let mut it = poses.iter();
            let mut w = SectionWriter::new(&mut buf);
            move || it.next().expect("a pose").write(&mut w)
        }));
        let mut r = SectionReader::new(&buf);
        dec.push(per_frame_ns(poses.len(), || {
            black_box(PoseState::read(&mut r).expect("a pose"));
        }));
    }
    (median(&mut enc), median(&mut dec))
}

fn main() {
    let (mut group, mut bare) = build();
    for _ in 0..WARMUP {
        group.frame();
        bare.step();
    }
    let turns = FRAMES / TURN;
    let mut g_ns = Vec::with_capacity(turns);
    let mut b_ns = Vec::with_capacity(turns);
    let mut ratios = Vec::with_capacity(turns);
    // Turns of a few frames each, one world then the other (and the other first every
    // second turn); the ratio is taken turn by turn.
    for i in 0..turns {
        let bare_turn = |bare: &mut PhysicsWorld| per_frame_ns(TURN, || bare.step());
        let group_turn =
            |group: &mut EntityGroup| per_frame_ns(TURN, || drop(black_box(group.frame())));
        let (b, g) = if i % 2 == 0 {
            let b = bare_turn(&mut bare);
            (b, group_turn(&mut group))
        } else {
            let g = group_turn(&mut group);
            (bare_turn(&mut bare), g)
        };
        b_ns.push(b);
        g_ns.push(g);
        ratios.push(g / b);
    }
    let bytes = group.last_packet().as_bytes().len();
    let awake_bare = bare
        .bodies
        .iter()
        .filter(|(_, b)| b.is_dynamic() && !b.is_sleeping())
        .count();
    let awake_group = group.iter().filter(|e| !e.body().is_sleeping()).count();
    let same = bare.bodies.iter().zip(group.iter()).all(|((_, b), e)| {
        b.translation() == e.body().translation() && b.rotation() == e.body().rotation()
    });
    let (g, b) = (median(&mut g_ns), median(&mut b_ns));
    let (encode, decode) = pose_codec_ns(&group);
    println!("bodies: {BODIES}, awake: bare {awake_bare}, group {awake_group}");
    println!(
        "bare rapier3d step:  {:>8.1} us/frame (median of {turns} turns of {TURN} frames)",
        b / 1e3
    );
    println!("EntityGroup frame:   {:>8.1} us/frame", g / 1e3);
    println!(
        "frame overhead:      {:>8.1} us/frame ({:.0} ns per entity)",
        (g - b) / 1e3,
        (g - b) / BODIES as f64
    );
    println!(
        "packet: {bytes} bytes, {:.1} bytes per entity",
        bytes as f64 / BODIES as f64
    );
    println!("pose codec alone: encode {encode:.1} ns, decode {decode:.1} ns per body");
    println!("identical trajectories: {same}");
    println!("ratio of the medians: {:.3}", g / b);
    println!(
        "ratio frame / bare step: {:.3} (median of the {turns} turns' ratios)",
        median(&mut ratios)
    );
}
