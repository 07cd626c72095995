//! Push what you touch: two players push one stack of the server's boxes, on the in-memory
//! hub. A box a player's body touches passes to her (the kind sets `KindOptions::hand_off`):
//! she simulates it and streams its state, so the push looks immediate on her screen. The
//! server takes every box back once it rests.
//!
//! `cargo run --release -p lanyard-net --example hand_off`

use lanyard::KindId;
use lanyard::pose::BodyState;
use lanyard::prelude::*;
use lanyard_demo as demo;
use lanyard_net::NetConfig;
use lanyard_net::harness::Scenario;

/// The floor and walls, on every peer (scenery is not sent).
fn floor(g: &mut EntityGroup) {
    for wall in demo::pit(10.0) {
        g.add_scenery(wall);
    }
}

/// The server's world: the floor, and a stack of three pushable boxes at the origin.
fn yard(g: &mut EntityGroup) {
    floor(g);
    for i in 0..3 {
        let params = demo::CrateParams::at([0.0, 0.45 + 0.9 * i as f32, 0.0]);
        g.spawn(demo::PUSHABLE, &params, Owner::Server).unwrap();
    }
}

/// Gives player `c` a body at `x` that stands still unless walked: its network id.
fn player(s: &mut Scenario, c: usize, x: f32) -> NetId {
    let mut still = demo::MoverParams::at([x, 0.55, 0.0]);
    (still.speed, still.period, still.moves_for) = (0.1, 1000, 1);
    let g = &mut s.clients[c].group;
    let ticket = g.request_spawn(demo::MOVER, &still).unwrap();
    let confirmed = move |s: &Scenario| {
        let g = &s.clients[c].group;
        let net = g.get(g.spawned(ticket)?)?.net_id();
        (!net.is_provisional()).then_some(net)
    };
    s.wait_for(3.0, "the server's id", |s| confirmed(s).is_some())
        .expect("confirmed");
    confirmed(s).expect("confirmed")
}

/// Walks player `c`'s body `net` at `vx` m/s along x for `seconds`.
fn walk(s: &mut Scenario, c: usize, net: NetId, vx: f32, seconds: f32) {
    for _ in 0..(seconds / s.dt).round() as usize {
        let g = &mut s.clients[c].group;
        let id = g.id_of(net).expect("the walker");
        let mut st = BodyState::of(g.get(id).expect("there").body());
        st.linvel[0] = vx;
        g.set_body_state(id, &st).expect("a finite state");
        s.step();
    }
}

/// The stack's boxes on the server: their ids, and who holds each.
fn holders(s: &Scenario, ann: ClientId) -> String {
    let pushable = KindId::of_name(demo::PUSHABLE);
    let who = |o: Owner| match o {
        Owner::Server => "server",
        Owner::Client(c) if c == ann => "ann",
        Owner::Client(_) => "bob",
    };
    let boxes = s.server.group.iter().filter(|e| e.kind() == pushable);
    let held: Vec<String> = boxes
        .map(|e| format!("{} {}", e.net_id(), who(e.owner())))
        .collect();
    held.join(", ")
}

fn main() {
    let (config, registry) = (NetConfig::default(), lanyard_demo::registry());
    let mut s = Scenario::with_registry(registry, floor, config.clone(), None, 60.0, yard);
    s.add_client(config.clone(), "ann", None);
    s.add_client(config, "bob", None);
    s.wait_for(3.0, "both to join", |s| s.all_joined())
        .expect("they join");
    let (ann, bob) = (player(&mut s, 0, -3.0), player(&mut s, 1, 3.0));
    s.run_for(2.0);
    let ann_id = s.clients[0].net.client_id().expect("joined");
    println!("at rest:             {}", holders(&s, ann_id));
    walk(&mut s, 0, ann, 2.0, 2.5);
    println!("ann walks into it:   {}", holders(&s, ann_id));
    walk(&mut s, 0, ann, 0.0, 8.0);
    println!("left alone, at rest: {}", holders(&s, ann_id));
    walk(&mut s, 1, bob, -2.0, 2.5);
    println!("bob pushes back:     {}", holders(&s, ann_id));
    walk(&mut s, 1, bob, 0.0, 8.0);
    println!("left alone, at rest: {}", holders(&s, ann_id));

    // Every screen has every box where the server has it.
    let gaps = s.server.group.iter().flat_map(|e| {
        let at = e.body().translation();
        s.clients
            .iter()
            .filter_map(move |c| Some((c.pos(e.net_id())? - at).length()))
    });
    let widest = gaps.fold(0.0f32, f32::max);
    println!(
        "the screens agree with the server within {:.1} mm",
        widest * 1000.0
    );
}
