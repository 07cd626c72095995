//! The rules on a host alone: fuses, blasts, crates off the yard.

use super::*;
use crate::kinds::GrenadeParams;
use crate::scene::DEFAULT_SCENE;
use lanyard::pose::BodyState;

fn host() -> Game {
    let options = Options {
        port: 0,
        name: "test yard".into(),
        max_players: 4,
        ..Options::new(Scene::load(std::path::Path::new(DEFAULT_SCENE)).unwrap())
    };
    Game::server(options, Some("hostess".into())).unwrap()
}

fn first_crate(g: &Game) -> (EntityId, NetId, Vec3) {
    let k = KindId::of_name(kinds::CRATE);
    let e = g.group.iter().find(|e| e.kind() == k).unwrap();
    (e.id(), e.net_id(), e.body().translation())
}

#[test]
fn a_grenade_goes_off_when_its_fuse_burns_down_and_pushes_the_crates_near_it() {
    let mut g = host();
    let (id, _, at) = first_crate(&g);
    let params = GrenadeParams {
        pos: [at.x + 1.0, at.y, at.z],
        vel: [0.0; 3],
        fuse_ticks: 3,
        thrower: Owner::Server,
    };
    g.group
        .spawn(kinds::GRENADE, &params, Owner::Server)
        .unwrap();
    for _ in 0..6 {
        g.tick(1.0 / TICK_HZ);
    }
    assert_eq!(
        g.presentation().blasts().len(),
        1,
        "the grenade did not go off"
    );
    assert!(
        g.group
            .iter()
            .all(|e| e.kind() != KindId::of_name(kinds::GRENADE))
    );
    let net = g.group.get(id).unwrap().net_id();
    let rules = g.rules.as_ref().unwrap();
    assert_eq!(rules.crate_hit(net), Some(Owner::Server));
    assert!(
        g.group.get(id).unwrap().body().linvel().length() > 1.0,
        "the crate was not pushed"
    );
}

#[test]
fn a_crate_off_the_yard_scores_for_whoever_blew_it_off_and_comes_back_home() {
    let mut g = host();
    let (id, net, home) = first_crate(&g);
    g.note_crate_hit(net, Owner::Server);
    let mut fell = BodyState::of(g.group.get(id).unwrap().body());
    fell.pos = [30.0, g.scene.kill_y - 1.0, 0.0];
    g.group.set_body_state(id, &fell).unwrap();
    let before = g.group.len();
    g.tick(1.0 / TICK_HZ);
    assert!(g.group.by_net(net).is_none());
    assert_eq!(g.group.len(), before, "the crate was not replaced");
    let k = KindId::of_name(kinds::CRATE);
    let back = g
        .group
        .iter()
        .filter(|e| e.kind() == k)
        .any(|e| (e.body().translation() - home).length() < 0.1);
    assert!(back, "no crate back at its home");
    assert_eq!(
        g.presentation().scores().first(),
        Some(&("hostess".to_string(), 1))
    );
    // A popup says who scored, on the yard's edge where the crate went over.
    let edge = g.scene.floor.half_extents[0];
    assert_eq!(g.presentation().popups().len(), 1);
    assert_eq!(g.presentation().popups()[0].name, "hostess");
    assert_eq!(
        [
            g.presentation().popups()[0].at.x,
            g.presentation().popups()[0].at.z
        ],
        [edge, 0.0]
    );
    // And it goes after a while.
    for _ in 0..(POPUP_SECONDS * TICK_HZ) as usize + 1 {
        g.tick(1.0 / TICK_HZ);
    }
    assert!(g.presentation().popups().is_empty());
}

#[test]
fn the_throw_cooldown_counts_down_from_a_throw_to_ready() {
    let mut g = host();
    for _ in 0..30 {
        g.tick(1.0 / TICK_HZ);
    }
    assert_eq!(g.throw_cooldown(), Some(0.0), "ready before any throw");
    g.set_input(PlayerInput {
        throw: Some(Vec3::new(1.0, 0.5, 0.0)),
        ..PlayerInput::default()
    });
    g.tick(1.0 / TICK_HZ);
    let just_after = g.throw_cooldown().expect("a player");
    let tuning = g.scene.tuning.throw_cooldown;
    assert!(
        just_after > tuning - 0.05 && just_after <= tuning,
        "{just_after} s after a throw, the cooldown being {tuning} s"
    );
    for _ in 0..(tuning * TICK_HZ) as usize + 1 {
        g.tick(1.0 / TICK_HZ);
    }
    assert_eq!(g.throw_cooldown(), Some(0.0), "ready again");
}

#[test]
fn addresses_read_in_both_forms_with_or_without_a_port() {
    let v6 = |s: &str| s.parse::<SocketAddr>().unwrap();
    assert_eq!(server_addr("[::1]:47999"), Ok(v6("[::1]:47999")));
    assert_eq!(server_addr("[::1]"), Ok(v6("[::1]:47810")));
    assert_eq!(server_addr("::1"), Ok(v6("[::1]:47810")));
    assert_eq!(
        rendezvous_addr(" [::1] "),
        Ok(Addrs::from(v6("[::1]:47820")))
    );
    assert_eq!(server_addr("127.0.0.1"), Ok(v6("127.0.0.1:47810")));
    assert_eq!(v6("[::1]:47810").to_string(), "[::1]:47810");
    assert!(server_addr("[::1]:x").is_err());
}

#[test]
fn a_rendezvous_server_is_named_by_one_address_or_one_of_each_family_ipv6_first() {
    let a = |s: &str| s.parse::<SocketAddr>().unwrap();
    let both = rendezvous_addr("127.0.0.1:5000, [::1]").unwrap();
    assert_eq!(
        both.iter().collect::<Vec<_>>(),
        vec![a("[::1]:47820"), a("127.0.0.1:5000")],
        "IPv6 first"
    );
    assert!(both.both_families());
    assert_eq!(both.to_string(), "[::1]:47820,127.0.0.1:5000");
    assert_eq!(
        rendezvous_addr(&both.to_string()),
        Ok(both),
        "prints as it reads"
    );
    // At most one of each family: the first.
    let one = rendezvous_addr("127.0.0.1,127.0.0.2,[::ffff:127.0.0.3]").unwrap();
    assert_eq!(one.iter().collect::<Vec<_>>(), vec![a("127.0.0.1:47820")]);
    assert!(!one.both_families());
    assert!(rendezvous_addr("127.0.0.1,").is_err(), "an empty part");
    assert!(rendezvous_addr("127.0.0.1,[::1]:x").is_err());
}

#[test]
fn a_player_who_walks_off_the_edge_is_told_once_that_they_are_back_at_their_spawn() {
    let mut g = host();
    g.tick(1.0 / TICK_HZ);
    let id = g.my_player().expect("the host plays");
    let below = BodyState {
        pos: [0.0, g.scene.kill_y - 1.0, 0.0],
        rot: [0.0, 0.0, 0.0, 1.0],
        linvel: [0.0; 3],
        angvel: [0.0; 3],
    };
    g.group.set_body_state(id, &below).unwrap();
    for _ in 0..10 {
        g.tick(1.0 / TICK_HZ);
    }
    let told: Vec<&String> = g
        .presentation()
        .messages()
        .iter()
        .filter(|m| m.contains("fell off the yard"))
        .collect();
    assert_eq!(told.len(), 1, "{:?}", g.presentation().messages());
    let y = g.group.get(id).unwrap().body().translation().y;
    assert!(y > g.scene.kill_y, "back on the yard");
}

/// The crates of the stack whose base is nearest `base` (x, z), by id, with where each is.
fn stack_at(g: &Game, base: [f32; 2]) -> Vec<(EntityId, Vec3)> {
    let k = KindId::of_name(kinds::CRATE);
    g.group
        .iter()
        .filter(|e| e.kind() == k)
        .map(|e| (e.id(), e.body().translation()))
        .filter(|(_, p)| (p.x - base[0]).abs() < 2.0 && (p.z - base[1]).abs() < 2.0)
        .collect()
}

/// A stack's crates where they stand, and where the window's cursor ray meets its top
/// crate: the middle of its top face.
fn stack_and_top(g: &Game, stack: &crate::scene::Stack) -> (Vec<(EntityId, Vec3)>, Vec3) {
    let crates = stack_at(g, stack.base);
    assert!(crates.len() >= 6, "{} crates", crates.len());
    let top = crates
        .iter()
        .map(|(_, p)| *p)
        .max_by(|a, b| a.y.total_cmp(&b.y))
        .unwrap();
    (crates, top + Vec3::Y * stack.size / 2.0)
}

/// How far the farthest moved of `crates` is from where it stood.
fn moved_most(g: &Game, crates: &[(EntityId, Vec3)]) -> f32 {
    crates
        .iter()
        .filter_map(|(id, p)| Some((g.group.get(*id)?.body().translation() - *p).length()))
        .fold(0.0f32, f32::max)
}

/// Throws `throw` from the host's player and lets the grenade fly and go off: where it
/// went off.
fn throw_and_wait(g: &mut Game, throw: Vec3) -> Vec3 {
    g.set_input(PlayerInput {
        throw: Some(throw),
        ..PlayerInput::default()
    });
    let mut at = None;
    for _ in 0..(4.0 * TICK_HZ) as usize {
        g.tick(1.0 / TICK_HZ);
        at = at.or_else(|| g.presentation().blasts().first().map(|b| b.at));
    }
    assert_eq!(g.presentation().seen().blasts, 1, "one grenade went off");
    at.expect("the grenade went off")
}

/// The host, settled, where it stands, and the yard's stacks nearest first.
fn settled_host() -> (Game, Vec3, Vec<crate::scene::Stack>) {
    let mut g = host();
    for _ in 0..30 {
        g.tick(1.0 / TICK_HZ);
    }
    let me = g.my_player().expect("the host plays");
    let from = g.group.get(me).unwrap().body().translation();
    let mut stacks = g.scene.stacks.clone();
    let d = |s: &crate::scene::Stack| (s.base[0] - from.x).hypot(s.base[1] - from.z);
    stacks.sort_by(|a, b| d(a).total_cmp(&d(b)));
    (g, from, stacks)
}

#[test]
fn a_grenade_aimed_at_a_stack_s_top_crate_knocks_the_stack_about() {
    let (mut g, _, stacks) = settled_host();
    let (before, target) = stack_and_top(&g, &stacks[0]);
    // Its top is higher than a flat throw rises: a lob lands on it.
    let throw = g.throw_at(target).expect("the host plays");
    assert!(throw.y > 0.0, "a lob: {throw}");
    let at = throw_and_wait(&mut g, throw);
    assert!(
        (at - target).length() < 1.0,
        "aimed at {target}, went off at {at}"
    );
    let moved = moved_most(&g, &before);
    eprintln!("aimed at the top crate: the stack's crates moved up to {moved:.2} m");
    assert!(
        moved > 0.5,
        "aimed at the top crate, the stack moved {moved:.2} m at most"
    );
}

#[test]
fn a_grenade_aimed_behind_a_stack_is_lobbed_over_it_and_goes_off_where_aimed() {
    let (mut g, from, stacks) = settled_host();
    let near = &stacks[0];
    // The ground 3 m beyond the nearest stack, on the line from the host through it: in
    // reach, and a flat throw at it goes off on the stack (it rises 0.5 m above the hand,
    // the stack stands 2.7 m).
    let centre = Vec3::new(near.base[0], 0.0, near.base[1]);
    let target = centre + (centre - Vec3::new(from.x, 0.0, from.z)).normalize() * 3.0;
    let gravity = -g.group.config().gravity.y;
    let flat = crate::aim::aim(from, target, &g.scene.tuning, gravity);
    assert!(flat.length() < 1.0, "in reach of a flat throw: {flat}");
    let throw = g.throw_at(target).expect("the host plays");
    assert!(throw.y > 0.0, "a lob: {throw}");
    let at = throw_and_wait(&mut g, throw);
    eprintln!("aimed at {target}, the lob went off at {at}");
    assert!(
        (at - target).length() < 1.0,
        "aimed at {target}, went off at {at}"
    );
    // The flat throw at it, for comparison, goes off on the stack.
    let (mut g, _, _) = settled_host();
    let at = throw_and_wait(&mut g, flat);
    eprintln!("the flat throw went off at {at}");
    assert!(
        (at - target).length() > 2.0,
        "the flat throw reached {at}: nothing was in its way"
    );
}

#[test]
fn the_sent_log_answers_for_a_crate_at_rest_since_before_its_reach_and_not_for_one_moved() {
    let mut g = host();
    let (id, net, _) = first_crate(&g);
    // Let the yard settle, then note a broadcast while everything rests.
    for _ in 0..TICK_HZ as usize {
        g.tick(1.0 / TICK_HZ);
    }
    let number = |g: &Game| g.link.net().broadcast_number().unwrap();
    let early = number(&g);
    let resting = g.sent_log.pose_at(net, early).expect("logged at rest");
    // Past the log's reach: the early broadcast is older than the log, the crate is not.
    for _ in 0..=SentLog::KEEP_TICKS {
        g.tick(1.0 / TICK_HZ);
    }
    assert_eq!(g.sent_log.pose_at(net, early), Some(resting));
    // Moved after that broadcast: the log still says where it was then while it keeps
    // the move, and no longer once the move passed out of its reach.
    let mut moved = BodyState::of(g.group.get(id).unwrap().body());
    moved.pos[0] += 2.0;
    g.group.set_body_state(id, &moved).unwrap();
    for _ in 0..TICK_HZ as usize {
        g.tick(1.0 / TICK_HZ);
    }
    assert_eq!(g.sent_log.pose_at(net, early), Some(resting));
    for _ in 0..=SentLog::KEEP_TICKS {
        g.tick(1.0 / TICK_HZ);
    }
    assert_eq!(g.sent_log.pose_at(net, early), None);
    let now = g.sent_log.pose_at(net, number(&g)).unwrap();
    assert!((now[0] - resting[0] - 2.0).abs() < 0.01, "{now:?}");
}
