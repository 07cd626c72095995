//! Input: the keyboard and mouse read once per drawn frame, held for exactly one tick
//! ([`Latch`]), scripted presses for tests ([`InputScript`]), and the chat line.

use super::{Viewer, mq3};
use lanyard::{EntityId, Shape};
use lanyard_game::game::Game;
use lanyard_game::kinds::PlayerInput;
use macroquad::prelude as mq;
use macroquad::prelude::{KeyCode, MouseButton, vec2, vec3};

/// Scripted key presses: lines of `FRAME KEY`, KEY one of `f` (throw), `space` (jump), `n`
/// (the net graph; on the start screen, the name), `a` (a typed address), `enter`, `esc`,
/// `tab`, `left`, `right`, `up`, `down`, `home`, a digit
/// `1` to `9`; or `FRAME text WORDS` to type WORDS.
#[derive(Debug, Clone, Default)]
pub struct InputScript {
    pub(crate) presses: std::collections::BTreeMap<u32, Vec<KeyCode>>,
    pub(crate) typed: std::collections::BTreeMap<u32, String>,
}

impl InputScript {
    /// Reads a script.
    pub fn parse(text: &str) -> Result<InputScript, String> {
        let mut presses: std::collections::BTreeMap<u32, Vec<KeyCode>> = Default::default();
        let mut typed = std::collections::BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = || format!("input script line {}: '{line}' is not FRAME KEY", n + 1);
            let (frame, key) = line.split_once(char::is_whitespace).ok_or_else(bad)?;
            let frame: u32 = frame.parse().map_err(|_| bad())?;
            if let Some(words) = key.trim().strip_prefix("text ") {
                typed.insert(frame, words.to_owned());
                continue;
            }
            let key = match key.trim() {
                "f" => KeyCode::F,
                "space" => KeyCode::Space,
                "n" => KeyCode::N,
                "a" => KeyCode::A,
                "enter" => KeyCode::Enter,
                "esc" => KeyCode::Escape,
                "tab" => KeyCode::Tab,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "home" => KeyCode::Home,
                "1" => KeyCode::Key1,
                "2" => KeyCode::Key2,
                "3" => KeyCode::Key3,
                _ => return Err(bad()),
            };
            presses.entry(frame).or_default().push(key);
        }
        Ok(InputScript { presses, typed })
    }

    pub(crate) fn pressed(&self, frame: u32, key: KeyCode) -> bool {
        self.presses.get(&frame).is_some_and(|k| k.contains(&key))
    }

    pub(crate) fn text(&self, frame: u32) -> String {
        self.typed.get(&frame).cloned().unwrap_or_default()
    }
}

/// The chat line: Enter opens it, typed characters go into it, Backspace takes one back,
/// Enter sends it, Esc drops it. Returns whether a line is open (the keys are typing).
pub(crate) fn chat_line(game: &mut Game, chat: &mut Option<String>) -> bool {
    let opening = chat.is_none();
    if opening && !mq::is_key_pressed(KeyCode::Enter) {
        // Letters pressed while playing (WASD, Q, E, C...) are keys, not text: macroquad
        // keeps every character until it is taken, and they would all open the next line.
        while mq::get_char_pressed().is_some() {}
        return false;
    }
    let line = chat.get_or_insert_with(String::new);
    // The letters of the frame that opened the line go into it: a slow frame holds both
    // the Enter and the first letters typed after it (dropping them lost the first
    // letter of a line when frames came slowly).
    while let Some(c) = mq::get_char_pressed() {
        if !c.is_control() && line.chars().count() < lanyard_game::game::CHAT_MAX {
            line.push(c);
        }
    }
    // The Enter that opened the line does not send it.
    if opening {
        return true;
    }
    if mq::is_key_pressed(KeyCode::Backspace) {
        line.pop();
    }
    if mq::is_key_pressed(KeyCode::Enter) {
        game.chat(line);
        *chat = None;
    } else if mq::is_key_pressed(KeyCode::Escape) {
        *chat = None;
    }
    true
}

/// The player's input between drawn frames and ticks. The keyboard is read once per drawn
/// frame; walking is a state (the newest counts), a jump or a throw is an event: it waits
/// here until a tick runs, and exactly one tick gets it. So at any frame rate no press is
/// lost (a frame with no tick) and none is doubled (a frame with several ticks).
#[derive(Debug, Default)]
pub(crate) struct Latch {
    pub(crate) held: PlayerInput,
}

impl Latch {
    /// What this frame read.
    pub(crate) fn frame(&mut self, fresh: PlayerInput) {
        self.held.walk = fresh.walk;
        self.held.jump |= fresh.jump;
        self.held.throw = self.held.throw.or(fresh.throw);
    }

    /// The input for the next tick: the walk, and the waiting presses (once).
    pub(crate) fn for_tick(&mut self) -> PlayerInput {
        let input = self.held;
        self.held.jump = false;
        self.held.throw = None;
        input
    }
}

/// The keyboard and mouse (and the input script), as a player's input: WASD walks
/// (relative to the camera), space jumps, the left mouse button (or F) throws towards the
/// point under the cursor, Q and E turn the camera.
pub(crate) fn read_input(
    game: &Game,
    view: &Viewer,
    script: &InputScript,
    frame: u32,
) -> PlayerInput {
    let pressed = |k: KeyCode| mq::is_key_pressed(k) || script.pressed(frame, k);
    let mut walk = mq::Vec2::ZERO;
    if mq::is_key_down(KeyCode::W) {
        walk.y -= 1.0;
    }
    if mq::is_key_down(KeyCode::S) {
        walk.y += 1.0;
    }
    if mq::is_key_down(KeyCode::A) {
        walk.x -= 1.0;
    }
    if mq::is_key_down(KeyCode::D) {
        walk.x += 1.0;
    }
    let (s, c) = view.yaw.sin_cos();
    let world = vec2(walk.x * c - walk.y * s, walk.x * s + walk.y * c).normalize_or_zero();
    let mut input = PlayerInput {
        walk: [world.x, world.y],
        jump: pressed(KeyCode::Space),
        ..PlayerInput::default()
    };
    if (mq::is_mouse_button_pressed(MouseButton::Left) || pressed(KeyCode::F))
        && let Some(me) = game.my_player().and_then(|id| game.group().get(id))
    {
        let p = me.body().translation();
        let target = cursor_target(&view.camera, game, me.id()).unwrap_or(vec3(
            p.x - s * 5.0,
            0.0,
            p.z - c * 5.0,
        ));
        input.throw = game.throw_at(lanyard::Vec3::new(target.x, target.y, target.z));
    }
    input
}

/// The point under the mouse cursor: the first entity (other than `me`) or block the ray
/// through it meets, else the ground plane.
pub(crate) fn cursor_target(camera: &mq::Camera3D, game: &Game, me: EntityId) -> Option<mq::Vec3> {
    use mq::Camera;
    let (mx, my) = mq::mouse_position();
    let ndc = vec2(
        mx / mq::screen_width() * 2.0 - 1.0,
        1.0 - my / mq::screen_height() * 2.0,
    );
    let inv = camera.matrix().inverse();
    let near = inv.project_point3(vec3(ndc.x, ndc.y, -1.0));
    let far = inv.project_point3(vec3(ndc.x, ndc.y, 1.0));
    let dir = far - near;
    let mut nearest = (dir.y.abs() > 1e-6)
        .then(|| -near.y / dir.y)
        .filter(|t| *t > 0.0);
    let mut closer = |t: Option<f32>| {
        if let Some(t) = t
            && nearest.is_none_or(|n| t < n)
        {
            nearest = Some(t);
        }
    };
    for e in game.group().iter().filter(|e| e.id() != me) {
        let half = match e.visual.shape {
            Shape::Cuboid { half_extents } => {
                vec3(half_extents[0], half_extents[1], half_extents[2])
            }
            Shape::Ball { radius } => mq::Vec3::splat(radius),
            Shape::Capsule {
                half_height,
                radius,
            } => vec3(radius, half_height + radius, radius),
        };
        let r = e.body().rotation();
        let rot = mq::Quat::from_xyzw(r.x, r.y, r.z, r.w);
        closer(ray_box(near, dir, mq3(e.body().translation()), rot, half));
    }
    for b in &game.scene().blocks {
        let center = vec3(b.center[0], b.center[1], b.center[2]);
        let half = vec3(b.half_extents[0], b.half_extents[1], b.half_extents[2]);
        closer(ray_box(near, dir, center, mq::Quat::IDENTITY, half));
    }
    nearest.map(|t| near + dir * t)
}

/// Where (as a multiple of `dir`, at least 0) the ray from `from` along `dir` enters the
/// box at `center` turned by `rot` with half extents `half`, if it does.
pub(crate) fn ray_box(
    from: mq::Vec3,
    dir: mq::Vec3,
    center: mq::Vec3,
    rot: mq::Quat,
    half: mq::Vec3,
) -> Option<f32> {
    // In the box's own frame the box is axis-aligned: the slab test.
    let back = rot.inverse();
    let o = back * (from - center);
    let d = back * dir;
    let (mut enter, mut leave) = (0.0f32, f32::INFINITY);
    for k in 0..3 {
        if d[k].abs() < 1e-9 {
            if o[k].abs() > half[k] {
                return None;
            }
            continue;
        }
        let a = (-half[k] - o[k]) / d[k];
        let b = (half[k] - o[k]) / d[k];
        enter = enter.max(a.min(b));
        leave = leave.min(a.max(b));
    }
    (enter <= leave).then_some(enter)
}

/// Types into `line`: the characters pressed this frame (and the script's), at most 64 in
/// all; Backspace takes one back.
pub(crate) fn type_into(line: &mut String, script: &InputScript, frame: u32) {
    while let Some(c) = mq::get_char_pressed() {
        if !c.is_control() && line.chars().count() < 64 {
            line.push(c);
        }
    }
    line.push_str(&script.text(frame));
    if mq::is_key_pressed(KeyCode::Backspace) {
        line.pop();
    }
}

/// The keys 1 to 9, which pick the n-th game on the start screen and the n-th player in
/// the host's list.
pub(crate) const DIGITS: [KeyCode; 9] = [
    KeyCode::Key1,
    KeyCode::Key2,
    KeyCode::Key3,
    KeyCode::Key4,
    KeyCode::Key5,
    KeyCode::Key6,
    KeyCode::Key7,
    KeyCode::Key8,
    KeyCode::Key9,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ray_enters_a_turned_box_on_its_near_face_and_misses_beside_it() {
        let turned = mq::Quat::from_rotation_y(std::f32::consts::FRAC_PI_4);
        let half = vec3(1.0, 1.0, 1.0);
        let down = vec3(0.0, -1.0, 0.0);
        // Straight down onto the top face, 4 m below.
        let t = ray_box(vec3(0.0, 5.0, 0.0), down, vec3(0.0, 0.0, 0.0), turned, half);
        assert!((t.unwrap() - 4.0).abs() < 1e-5);
        // Just inside a corner of the turned box (the diagonal reaches 1.41 m)...
        let corner = ray_box(vec3(1.3, 5.0, 0.0), down, mq::Vec3::ZERO, turned, half);
        assert!(corner.is_some());
        // ...and the same point beside the unturned one misses.
        let beside = ray_box(
            vec3(1.3, 5.0, 0.0),
            down,
            mq::Vec3::ZERO,
            mq::Quat::IDENTITY,
            half,
        );
        assert_eq!(beside, None);
        // A box behind the ray's start is not hit.
        let up = ray_box(vec3(0.0, 5.0, 0.0), -down, mq::Vec3::ZERO, turned, half);
        assert_eq!(up, None);
    }
}
