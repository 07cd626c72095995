//! On a server, the copy of a held body (hand-off) that the other clients are sent eases
//! from where the server had it to where its holder's sections put it, instead of stepping
//! there.
//!
//! Between its holder's sections the server simulates a held body itself, and each
//! section puts the body where its holder has it now (brought forward by the holder's
//! one-way delay). Those sections come late by however much the link jitters, and the
//! first comes a one-way trip after the holder took the body: on a bad link each can move
//! the server's copy by centimetres, the first by tens of them, and every other screen
//! would see the steps. So a step is kept as an offset that the copy sent to them carries,
//! shrinking a little every tick (by [`EASE_RATE`] of it a second, and never faster than
//! [`EASE_SPEED`]). The server's world itself takes each section at once: only what the
//! shadow packet says is eased.

use crate::id::NetId;
use crate::{Quat, Vec3};
use rapier3d::prelude::RigidBody;
use std::collections::BTreeMap;

/// The share of an offset that goes each second (as a rate: `1/EASE_RATE` is its time
/// constant).
pub const EASE_RATE: f32 = 30.0;
/// The fastest an offset shrinks, metres a second: a large step is spread evenly.
pub const EASE_SPEED: f32 = 2.0;

/// What a held body's copy carries: it is shown this far from the body.
#[derive(Debug, Clone, Copy)]
struct Offset {
    pos: Vec3,
    rot: Quat,
}

/// The held bodies whose copies ease (see the module).
#[derive(Debug, Default)]
pub(crate) struct Easing {
    offsets: BTreeMap<NetId, Offset>,
}

impl Easing {
    /// The bodies clients hold are `now` (sorted): a body no longer held eases no more.
    pub(crate) fn held(&mut self, now: &[NetId]) {
        self.offsets.retain(|n, _| now.binary_search(n).is_ok());
    }

    /// A section of its holder moved held body `net` from `before` to `after`: its copy
    /// stays where it was shown.
    pub(crate) fn took(
        &mut self,
        net: NetId,
        (pos0, rot0): (Vec3, Quat),
        (pos1, rot1): (Vec3, Quat),
    ) {
        let o = self.offsets.entry(net).or_insert(Offset {
            pos: Vec3::ZERO,
            rot: Quat::IDENTITY,
        });
        let pos = o.pos + pos0 - pos1;
        let rot = (o.rot * rot0 * rot1.inverse()).normalize();
        if pos.is_finite() && rot.is_finite() {
            *o = Offset { pos, rot };
        }
    }

    /// `body` as the copy of `net` shows it, if it carries an offset: a clone, moved by it.
    pub(crate) fn shown(&self, net: NetId, body: &RigidBody) -> Option<RigidBody> {
        let o = self.offsets.get(&net)?;
        let mut shown = body.clone();
        shown.set_translation(body.translation() + o.pos, false);
        shown.set_rotation((o.rot * *body.rotation()).normalize(), false);
        Some(shown)
    }

    /// A tick of `dt` seconds passes: every offset shrinks, and the ones gone are forgotten.
    pub(crate) fn tick(&mut self, dt: f32) {
        self.offsets.retain(|_, o| {
            let len = o.pos.length();
            let angle = o.rot.angle_between(Quat::IDENTITY);
            let shrink = (len * EASE_RATE * dt).min(EASE_SPEED * dt);
            let keep = if len > 0.0 { 1.0 - shrink / len } else { 0.0 };
            let keep_rot = (1.0 - EASE_RATE * dt).max(0.0);
            o.pos *= keep.max(0.0);
            o.rot = Quat::IDENTITY.slerp(o.rot, keep_rot).normalize();
            o.pos.length() > 1e-4 || angle * keep_rot > 1e-4
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rapier3d::prelude::RigidBodyBuilder;

    fn x(e: &Easing, net: NetId, body: &RigidBody) -> f32 {
        e.shown(net, body)
            .map_or(body.translation().x, |b| b.translation().x)
    }

    #[test]
    fn a_step_is_shown_where_it_was_and_eased_out_no_faster_than_the_speed_allows() {
        let mut e = Easing::default();
        let net = NetId(3);
        let q = Quat::IDENTITY;
        let at = |x: f32| {
            RigidBodyBuilder::dynamic()
                .translation(Vec3::new(x, 0.0, 0.0))
                .build()
        };
        e.took(net, (Vec3::ZERO, q), (Vec3::new(0.6, 0.0, 0.0), q));
        let body = at(0.6);
        assert_eq!(x(&e, net, &body), 0.0, "shown where the server had it");
        let dt = 1.0 / 60.0;
        let mut shown = vec![0.0];
        for _ in 0..120 {
            e.tick(dt);
            shown.push(x(&e, net, &body));
        }
        let most = shown.windows(2).map(|w| w[1] - w[0]).fold(0.0, f32::max);
        assert!(most <= EASE_SPEED * dt + 1e-6, "a frame moved it {most} m");
        assert!(
            shown.windows(2).all(|w| w[1] >= w[0]),
            "only toward the body"
        );
        assert_eq!(*shown.last().unwrap(), 0.6, "eased out: the body itself");
        assert!(e.offsets.is_empty(), "and forgotten");
    }

    #[test]
    fn steps_add_up_and_a_body_let_go_is_shown_as_it_is() {
        let mut e = Easing::default();
        let net = NetId(4);
        let q = Quat::IDENTITY;
        e.took(net, (Vec3::ZERO, q), (Vec3::new(0.1, 0.0, 0.0), q));
        e.took(
            net,
            (Vec3::new(0.1, 0.0, 0.0), q),
            (Vec3::new(0.15, 0.0, 0.0), q),
        );
        let body = RigidBodyBuilder::dynamic()
            .translation(Vec3::new(0.15, 0.0, 0.0))
            .build();
        assert!(x(&e, net, &body).abs() < 1e-6, "both steps carried");
        e.held(&[]);
        assert_eq!(x(&e, net, &body), 0.15);
    }
}
