//! Drawing the yard: lit, rotated boxes and balls for every entity, and the blasts.

use super::*;

pub(crate) fn light(n: mq::Vec3) -> f32 {
    let l = vec3(0.4, 1.0, 0.3).normalize();
    0.45 + 0.55 * n.dot(l).max(0.0)
}

/// A box as a mesh with one shade per face, so its rotation shows.
pub(crate) fn draw_box(center: mq::Vec3, rot: mq::Quat, half: mq::Vec3, base: Color) {
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
    for (a, b) in [
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
    ] {
        mq::draw_line_3d(corner(a.0, a.1, a.2), corner(b.0, b.1, b.2), edge);
    }
}

pub(crate) fn draw_world(game: &mut Game, view: &mut Viewer) {
    let focus = game
        .my_player()
        .and_then(|id| game.group.get(id))
        .map(|e| e.body().translation());
    draw_scene(
        &game.scene,
        &game.group,
        game.me(),
        focus,
        &game.blasts,
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
    view: &mut Viewer,
) {
    mq::clear_background(Color::from_rgba(150, 192, 230, 255));
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
    // The yard.
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
    // The entities: each where the smoother says, at the world's time plus the fraction of
    // a tick this frame is into the next.
    view.smoother.advance(group, view.alpha);
    let mut labels = Vec::new();
    for e in group.iter() {
        let (p, r) = view
            .smoother
            .pose(group, e.id(), me.unwrap_or(Owner::Server))
            .unwrap_or((e.body().translation(), *e.body().rotation()));
        let (pos, rot) = (mq3(p), mq::Quat::from_xyzw(r.x, r.y, r.z, r.w));
        let base = color(e.visual.color);
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
                if let Some(p) = group.controller::<Player>(e.id()) {
                    labels.push((
                        pos + vec3(0.0, half_height + radius + 0.4, 0.0),
                        p.name.clone(),
                    ));
                }
            }
        }
    }
    for b in blasts {
        draw_blast(b);
    }
    mq::set_default_camera();
    use mq::Camera;
    let m = view.camera.matrix();
    for (p, name) in labels {
        let ndc = m.project_point3(p);
        if ndc.z < 1.0 {
            let x = (ndc.x + 1.0) / 2.0 * mq::screen_width();
            let y = (1.0 - ndc.y) / 2.0 * mq::screen_height();
            let w = mq::measure_text(&name, None, 22, 1.0).width;
            mq::draw_text(&name, x - w / 2.0, y, 22.0, mq::WHITE);
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
