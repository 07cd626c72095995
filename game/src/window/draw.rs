//! Drawing the yard: lit, rotated boxes and balls for every entity, and the blasts.

use super::{Viewer, color, mq3};
use lanyard::{EntityGroup, EntityRef, Owner, Shape};
use lanyard_game::game::{Blast, Game, POPUP_SECONDS, Popup, popup_rows};
use lanyard_game::kinds::{self, Player};
use lanyard_game::scene::Scene;
use macroquad::prelude as mq;
use macroquad::prelude::{Color, KeyCode, Mesh, Vertex, vec2, vec3, vec4};

/// Towards the sun: the one directional light, which shades faces and casts shadows.
fn sun() -> mq::Vec3 {
    vec3(0.4, 1.0, 0.3).normalize()
}

pub(crate) fn light(n: mq::Vec3) -> f32 {
    0.45 + 0.55 * n.dot(sun()).max(0.0)
}

/// The height shadows are drawn at: just above the yard's top (at 0), far enough for the
/// depth buffer to keep them apart at the camera's distance.
const SHADOW_Y: f32 = 0.02;

/// Points on a shape's outline as the sun sees it: a box's corners, a ball's (or a
/// capsule end's) rim across the sun's direction.
fn outline(pos: mq::Vec3, rot: mq::Quat, shape: &Shape) -> Vec<mq::Vec3> {
    let rim = |c: mq::Vec3, r: f32, out: &mut Vec<mq::Vec3>| {
        let l = sun();
        let u = l.cross(mq::Vec3::X).normalize();
        let v = l.cross(u);
        for k in 0..16 {
            let a = k as f32 / 16.0 * std::f32::consts::TAU;
            out.push(c + (u * a.cos() + v * a.sin()) * r);
        }
    };
    let mut out = Vec::new();
    match *shape {
        Shape::Cuboid { half_extents: h } => {
            for k in 0..8 {
                let sign = |bit: i32| if k & bit == 0 { -1.0 } else { 1.0 };
                out.push(pos + rot * vec3(h[0] * sign(1), h[1] * sign(2), h[2] * sign(4)));
            }
        }
        Shape::Ball { radius } => rim(pos, radius, &mut out),
        Shape::Capsule {
            half_height,
            radius,
        } => {
            let axis = rot * vec3(0.0, half_height, 0.0);
            rim(pos + axis, radius, &mut out);
            rim(pos - axis, radius, &mut out);
        }
    }
    out
}

/// The shadow of a body whose outline is `points` on the yard's top: the points slid along
/// the sunlight onto it, and their convex hull filled with `shade`. Nothing for a body
/// below the top.
fn draw_shadow(points: &[mq::Vec3], shade: Color) {
    let l = sun();
    let mut flat: Vec<mq::Vec2> = points
        .iter()
        .filter(|p| p.y > 0.0)
        .map(|p| {
            let s = p.y / l.y;
            vec2(p.x - l.x * s, p.z - l.z * s)
        })
        .collect();
    let hull = convex_hull(&mut flat);
    if hull.len() < 3 {
        return;
    }
    let vertices = hull
        .iter()
        .map(|p| Vertex {
            position: vec3(p.x, SHADOW_Y, p.y),
            uv: vec2(0.0, 0.0),
            color: shade.into(),
            normal: vec4(0.0, 1.0, 0.0, 0.0),
        })
        .collect();
    let indices = (1..hull.len() as u16 - 1)
        .flat_map(|k| [0, k, k + 1])
        .collect();
    mq::draw_mesh(&Mesh {
        vertices,
        indices,
        texture: None,
    });
}

/// The convex hull of `points`, counter-clockwise (Andrew's monotone chain).
pub(crate) fn convex_hull(points: &mut [mq::Vec2]) -> Vec<mq::Vec2> {
    points.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    let cross = |o: mq::Vec2, a: mq::Vec2, b: mq::Vec2| (a - o).perp_dot(b - o);
    let mut hull: Vec<mq::Vec2> = Vec::with_capacity(points.len() + 1);
    for pass in 0..2 {
        let start = hull.len();
        let side = |p: mq::Vec2, hull: &mut Vec<mq::Vec2>| {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(p);
        };
        if pass == 0 {
            points.iter().for_each(|p| side(*p, &mut hull));
        } else {
            points.iter().rev().for_each(|p| side(*p, &mut hull));
        }
        hull.pop();
    }
    hull
}

/// A box's faces: each one's normal and its corners (counter-clockwise from outside), on
/// the unit cube.
const FACES: [([f32; 3], [[f32; 3]; 4]); 6] = [
    (
        [1.0, 0.0, 0.0],
        [
            [1.0, -1.0, -1.0],
            [1.0, 1.0, -1.0],
            [1.0, 1.0, 1.0],
            [1.0, -1.0, 1.0],
        ],
    ),
    (
        [-1.0, 0.0, 0.0],
        [
            [-1.0, -1.0, 1.0],
            [-1.0, 1.0, 1.0],
            [-1.0, 1.0, -1.0],
            [-1.0, -1.0, -1.0],
        ],
    ),
    (
        [0.0, 1.0, 0.0],
        [
            [-1.0, 1.0, -1.0],
            [-1.0, 1.0, 1.0],
            [1.0, 1.0, 1.0],
            [1.0, 1.0, -1.0],
        ],
    ),
    (
        [0.0, -1.0, 0.0],
        [
            [-1.0, -1.0, 1.0],
            [-1.0, -1.0, -1.0],
            [1.0, -1.0, -1.0],
            [1.0, -1.0, 1.0],
        ],
    ),
    (
        [0.0, 0.0, 1.0],
        [
            [-1.0, -1.0, 1.0],
            [1.0, -1.0, 1.0],
            [1.0, 1.0, 1.0],
            [-1.0, 1.0, 1.0],
        ],
    ),
    (
        [0.0, 0.0, -1.0],
        [
            [1.0, -1.0, -1.0],
            [-1.0, -1.0, -1.0],
            [-1.0, 1.0, -1.0],
            [1.0, 1.0, -1.0],
        ],
    ),
];

/// A corner of the unit cube.
type Corner = (f32, f32, f32);

/// A box's twelve edges, on the unit cube.
const EDGES: [(Corner, Corner); 12] = [
    ((-1., -1., -1.), (1., -1., -1.)),
    ((-1., 1., -1.), (1., 1., -1.)),
    ((-1., -1., 1.), (1., -1., 1.)),
    ((-1., 1., 1.), (1., 1., 1.)),
    ((-1., -1., -1.), (-1., 1., -1.)),
    ((1., -1., -1.), (1., 1., -1.)),
    ((-1., -1., 1.), (-1., 1., 1.)),
    ((1., -1., 1.), (1., 1., 1.)),
    ((-1., -1., -1.), (-1., -1., 1.)),
    ((1., -1., -1.), (1., -1., 1.)),
    ((-1., 1., -1.), (-1., 1., 1.)),
    ((1., 1., -1.), (1., 1., 1.)),
];

/// A box as a mesh with one shade per face, so its rotation shows.
pub(crate) fn draw_box(center: mq::Vec3, rot: mq::Quat, half: mq::Vec3, base: Color) {
    let mut vertices = Vec::with_capacity(24);
    let mut indices = Vec::with_capacity(36);
    for (n, corners) in FACES {
        let shade = light(rot * vec3(n[0], n[1], n[2]));
        let c = Color::new(base.r * shade, base.g * shade, base.b * shade, base.a);
        let first = vertices.len() as u16;
        for k in corners {
            let p = center + rot * (vec3(k[0], k[1], k[2]) * half);
            vertices.push(Vertex {
                position: p,
                uv: vec2(0.0, 0.0),
                color: c.into(),
                normal: vec4(0.0, 0.0, 0.0, 0.0),
            });
        }
        indices.extend_from_slice(&[first, first + 1, first + 2, first, first + 2, first + 3]);
    }
    mq::draw_mesh(&Mesh {
        vertices,
        indices,
        texture: None,
    });
    // Dark edges make the boxes crisp.
    let edge = Color::new(base.r * 0.3, base.g * 0.3, base.b * 0.3, 1.0);
    let corner = |x: f32, y: f32, z: f32| center + rot * (vec3(x, y, z) * half);
    for (a, b) in EDGES {
        mq::draw_line_3d(corner(a.0, a.1, a.2), corner(b.0, b.1, b.2), edge);
    }
}

pub(crate) fn draw_world(game: &mut Game, view: &mut Viewer) {
    let focus = game
        .my_player()
        .and_then(|id| game.group().get(id))
        .map(|e| e.body().translation());
    draw_scene(
        game.scene(),
        game.group(),
        game.me(),
        focus,
        game.presentation().blasts(),
        game.presentation().popups(),
        view,
    );
}

/// Turns the camera with Q and E and switches the overview with C, unless a line is being
/// typed (then those keys are letters of it).
pub(crate) fn camera_keys(view: &mut Viewer, typing: bool) {
    if typing {
        return;
    }
    if mq::is_key_down(KeyCode::Q) {
        view.yaw -= 2.0 * mq::get_frame_time();
    }
    if mq::is_key_down(KeyCode::E) {
        view.yaw += 2.0 * mq::get_frame_time();
    }
    if mq::is_key_pressed(KeyCode::C) {
        view.overview = !view.overview;
    }
}

/// Draws the yard, its entities and explosions, from the view's camera.
pub(crate) fn draw_scene(
    scene: &Scene,
    group: &EntityGroup,
    me: Option<Owner>,
    focus: Option<lanyard::Vec3>,
    blasts: &[Blast],
    popups: &[Popup],
    view: &mut Viewer,
) {
    mq::clear_background(Color::from_rgba(150, 192, 230, 255));
    place_camera(scene, focus, view);
    draw_yard(scene);
    // The entities: each where the smoother says, at the world's time plus the fraction of
    // a tick this frame is into the next.
    view.smoother.advance(group, view.alpha);
    let posed: Vec<_> = group
        .iter()
        .map(|e| {
            let (p, r) = view
                .smoother
                .pose(group, e.id(), me.unwrap_or(Owner::Server))
                .unwrap_or((e.body().translation(), *e.body().rotation()));
            (e, mq3(p), mq::Quat::from_xyzw(r.x, r.y, r.z, r.w))
        })
        .collect();
    // Their shadows and the blocks', on the yard (under everything drawn after).
    let shade = {
        let c = color(scene.floor.color);
        Color::new(c.r * 0.6, c.g * 0.6, c.b * 0.6, 1.0)
    };
    for b in &scene.blocks {
        let box_shape = Shape::Cuboid {
            half_extents: b.half_extents,
        };
        let center = vec3(b.center[0], b.center[1], b.center[2]);
        draw_shadow(&outline(center, mq::Quat::IDENTITY, &box_shape), shade);
    }
    for (e, pos, rot) in &posed {
        draw_shadow(&outline(*pos, *rot, &e.visual.shape), shade);
    }
    let labels: Vec<_> = posed
        .into_iter()
        .filter_map(|(e, pos, rot)| draw_entity(group, &e, (pos, rot), view.tint_holders))
        .collect();
    for b in blasts {
        draw_blast(b);
    }
    mq::set_default_camera();
    draw_labels(&view.camera, labels, popups);
}

/// Puts the camera behind `focus` (the player, if any), or over the whole yard in the
/// overview, turned by the view's yaw.
fn place_camera(scene: &Scene, focus: Option<lanyard::Vec3>, view: &mut Viewer) {
    let focus = focus.map(mq3).unwrap_or(vec3(0.0, 0.0, 0.0));
    let (s, c) = view.yaw.sin_cos();
    let back = vec3(s, 0.0, c);
    let (position, target) = if view.overview {
        let reach = scene.floor.half_extents[0].max(scene.floor.half_extents[2]);
        (
            back * reach * 1.55 + vec3(0.0, reach * 1.6, 0.0),
            vec3(0.0, -1.0, 0.0),
        )
    } else {
        (
            focus + back * 13.0 + vec3(0.0, 11.0, 0.0),
            focus + vec3(0.0, 0.5, 0.0),
        )
    };
    view.camera = mq::Camera3D {
        position,
        target,
        up: vec3(0.0, 1.0, 0.0),
        fovy: 0.9,
        ..Default::default()
    };
    mq::set_camera(&view.camera);
}

/// The yard: its floor and its blocks.
fn draw_yard(scene: &Scene) {
    let f = &scene.floor;
    draw_box(
        vec3(0.0, -f.half_extents[1], 0.0),
        mq::Quat::IDENTITY,
        vec3(f.half_extents[0], f.half_extents[1], f.half_extents[2]),
        color(f.color),
    );
    for b in &scene.blocks {
        draw_box(
            vec3(b.center[0], b.center[1], b.center[2]),
            mq::Quat::IDENTITY,
            vec3(b.half_extents[0], b.half_extents[1], b.half_extents[2]),
            color(b.color),
        );
    }
}

/// Draws entity `e` at `pos`, turned by `rot` (tinted by its holder if `tint_holders`);
/// a player's name label and where it goes.
fn draw_entity(
    group: &EntityGroup,
    e: &EntityRef<'_>,
    (pos, rot): (mq::Vec3, mq::Quat),
    tint_holders: bool,
) -> Option<(mq::Vec3, String)> {
    let holder = match e.owner() {
        Owner::Client(c) if tint_holders && holds(group, e) => kinds::player_color_of(group, c),
        _ => None,
    };
    let base = match holder {
        Some(h) => tint(color(e.visual.color), color(h)),
        None => color(e.visual.color),
    };
    match e.visual.shape {
        Shape::Cuboid { half_extents } => draw_box(
            pos,
            rot,
            vec3(half_extents[0], half_extents[1], half_extents[2]),
            base,
        ),
        Shape::Ball { radius } => mq::draw_sphere(pos, radius, None, base),
        Shape::Capsule {
            half_height,
            radius,
        } => {
            let shade = |k: f32| Color::new(base.r * k, base.g * k, base.b * k, 1.0);
            mq::draw_cylinder(
                pos - vec3(0.0, half_height, 0.0),
                radius,
                radius,
                half_height * 2.0,
                None,
                shade(0.85),
            );
            mq::draw_sphere(pos + vec3(0.0, half_height, 0.0), radius, None, shade(1.0));
            mq::draw_sphere(pos - vec3(0.0, half_height, 0.0), radius, None, shade(0.7));
            return group.controller::<Player>(e.id()).map(|p| {
                (
                    pos + vec3(0.0, half_height + radius + 0.4, 0.0),
                    p.name.clone(),
                )
            });
        }
    }
    None
}

/// The players' names over them, and the points rising from where they were scored,
/// fading, as seen by `camera`.
fn draw_labels(camera: &mq::Camera3D, labels: Vec<(mq::Vec3, String)>, popups: &[Popup]) {
    use mq::Camera;
    let m = camera.matrix();
    let on_screen = |p: mq::Vec3| {
        let ndc = m.project_point3(p);
        (ndc.z < 1.0).then(|| {
            vec2(
                (ndc.x + 1.0) / 2.0 * mq::screen_width(),
                (1.0 - ndc.y) / 2.0 * mq::screen_height(),
            )
        })
    };
    for (p, name) in labels {
        if let Some(at) = on_screen(p) {
            let w = mq::measure_text(&name, None, 22, 1.0).width;
            mq::draw_text(&name, at.x - w / 2.0, at.y, 22.0, mq::WHITE);
        }
    }
    for (p, row) in popups.iter().zip(popup_rows(popups)) {
        let k = (p.age / POPUP_SECONDS).clamp(0.0, 1.0);
        if let Some(mut at) = on_screen(mq3(p.at) + vec3(0.0, 0.5 + 2.0 * k, 0.0)) {
            at.y -= 36.0 * row as f32;
            let text = format!("+1 {}", p.name);
            let w = mq::measure_text(&text, None, 34, 1.0).width;
            let outline = Color::new(0.1, 0.05, 0.0, 1.0 - k);
            mq::draw_text(&text, at.x - w / 2.0 + 2.0, at.y + 2.0, 34.0, outline);
            let gold = Color::new(1.0, 0.85, 0.25, 1.0 - k);
            mq::draw_text(&text, at.x - w / 2.0, at.y, 34.0, gold);
        }
    }
}

/// A flash that grows and fades, and sparks flying out.
pub(crate) fn draw_blast(b: &Blast) {
    let at = mq3(b.at);
    let k = (b.age / 1.5).clamp(0.0, 1.0);
    if b.age < 0.35 {
        let r = 0.4 + b.age * 10.0;
        mq::draw_sphere(
            at,
            r,
            None,
            Color::new(1.0, 0.85, 0.4, 0.55 * (1.0 - b.age / 0.35)),
        );
    }
    // Sparks in directions fixed by the blast's position, so every frame agrees.
    let mut seed = (b.at.x.to_bits() ^ b.at.z.to_bits().rotate_left(13)) as u64 | 1;
    for _ in 0..28 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let a = (seed & 0xffff) as f32 / 65535.0 * std::f32::consts::TAU;
        let up = ((seed >> 16) & 0xffff) as f32 / 65535.0;
        let d = vec3(
            a.cos() * (1.0 - up * 0.5),
            0.3 + up,
            a.sin() * (1.0 - up * 0.5),
        )
        .normalize();
        // Each spark flies out and falls; it is drawn as a short streak along its path.
        let start = at + d * (b.age * 6.0) - vec3(0.0, 4.9 * b.age * b.age, 0.0);
        let end = start + (d - vec3(0.0, b.age * 1.6, 0.0)).normalize() * 0.35;
        mq::draw_line_3d(start, end, Color::new(1.0, 0.7 - 0.5 * k, 0.2, 1.0 - k));
    }
}

/// Whether `e` is one of the server's bodies a player holds now (a kind that allows
/// hand-off, owned by a client), not that player's own entity.
fn holds(group: &EntityGroup, e: &EntityRef<'_>) -> bool {
    group
        .registry()
        .options(e.kind())
        .is_some_and(|o| o.hand_off)
}

/// `base` halfway to `holder`'s colour: the colour of the player who holds the body.
fn tint(base: Color, holder: Color) -> Color {
    Color::new(
        (base.r + holder.r) / 2.0,
        (base.g + holder.g) / 2.0,
        (base.b + holder.b) / 2.0,
        1.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hull_of_a_square_with_a_point_inside_is_its_four_corners() {
        let mut points = [
            vec2(1.0, 1.0),
            vec2(0.0, 0.0),
            vec2(0.5, 0.4),
            vec2(1.0, 0.0),
            vec2(0.0, 1.0),
            vec2(0.5, 0.0),
        ];
        let hull = convex_hull(&mut points);
        assert_eq!(
            hull,
            [
                vec2(0.0, 0.0),
                vec2(1.0, 0.0),
                vec2(1.0, 1.0),
                vec2(0.0, 1.0)
            ]
        );
    }

    #[test]
    fn a_box_shadow_falls_away_from_the_sun() {
        let shape = Shape::Cuboid {
            half_extents: [0.5, 0.5, 0.5],
        };
        let corners = outline(vec3(0.0, 0.5, 0.0), mq::Quat::IDENTITY, &shape);
        assert_eq!(corners.len(), 8);
        // The top corners slide away from the sun (which is up, towards +x and +z).
        let l = sun();
        let slid: Vec<mq::Vec2> = corners
            .iter()
            .map(|p| vec2(p.x - l.x * p.y / l.y, p.z - l.z * p.y / l.y))
            .collect();
        let mean = slid.iter().copied().sum::<mq::Vec2>() / slid.len() as f32;
        assert!(mean.x < 0.0 && mean.y < 0.0, "{mean}");
    }
}
