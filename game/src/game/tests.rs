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
