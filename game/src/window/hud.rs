//! What is drawn over the yard: the HUD line, the net graph, banners and the host's
//! player list.

use crate::window::SOUND_HELP;
use crate::window::input::DIGITS;
use lanyard_game::game::{GRAPH_SAMPLES, Game, GraphSample, count, link_text, wrap};
use macroquad::prelude as mq;
use macroquad::prelude::{Color, KeyCode};

/// The host's player list (Tab), with a kick.
#[derive(Default)]
pub(crate) struct Roster {
    pub(crate) open: bool,
    pub(crate) selected: Option<usize>,
}

/// The net graph (N): the last ten seconds of ping, kilobits per second in and out, and
/// loss, each scaled to its own peak.
pub(crate) fn draw_net_graph(game: &Game) {
    // At the right edge, under the event lines: the yard's middle, where the players are,
    // stays clear.
    let (w, h) = (340.0, 200.0);
    let (x, y) = (mq::screen_width() - w - 10.0, 30.0 + 8.0 * 22.0 + 10.0);
    mq::draw_rectangle(x, y, w, h, Color::new(0.0, 0.0, 0.0, 0.6));
    let samples: Vec<GraphSample> = game.presentation().graph().iter().copied().collect();
    let last = samples.last().copied().unwrap_or_default();
    let rows: [(String, Vec<Vec<f32>>, [Color; 2]); 3] = [
        (
            format!("ping {:.0} ms", last.ping_ms),
            vec![samples.iter().map(|s| s.ping_ms).collect()],
            [mq::YELLOW, mq::YELLOW],
        ),
        (
            format!("in {:.0} / out {:.0} kbit/s", last.kbps_in, last.kbps_out),
            vec![
                samples.iter().map(|s| s.kbps_in).collect(),
                samples.iter().map(|s| s.kbps_out).collect(),
            ],
            [mq::SKYBLUE, mq::ORANGE],
        ),
        (
            format!("loss {:.0}%", last.loss * 100.0),
            vec![samples.iter().map(|s| s.loss * 100.0).collect()],
            [mq::RED, mq::RED],
        ),
    ];
    let row_h = h / 3.0;
    for (i, (label, series, colors)) in rows.iter().enumerate() {
        let top = y + i as f32 * row_h;
        // The label is the legend: each line's words in its colour.
        legend(label, colors, x + 8.0, top + 16.0);
        let peak = series.iter().flatten().fold(1.0f32, |m, v| m.max(*v));
        let scale = format!("peak {peak:.0}");
        let sw = mq::measure_text(&scale, None, 14, 1.0).width;
        mq::draw_text(&scale, x + w - sw - 8.0, top + 16.0, 14.0, mq::GRAY);
        let (gx, gy, gw, gh) = (x + 8.0, top + 22.0, w - 16.0, row_h - 28.0);
        mq::draw_line(gx, gy + gh, gx + gw, gy + gh, 1.0, mq::GRAY);
        let step = gw / (GRAPH_SAMPLES - 1) as f32;
        for (line, c) in series.iter().zip(colors) {
            for (k, pair) in line.windows(2).enumerate() {
                let x0 = gx + k as f32 * step;
                let y0 = gy + gh - pair[0] / peak * gh;
                let y1 = gy + gh - pair[1] / peak * gh;
                mq::draw_line(x0, y0, x0 + step, y1, 2.0, *c);
            }
        }
    }
}

/// A line across the middle of the screen, over the (frozen) world.
pub(crate) fn draw_banner(text: &str) {
    let (w, h) = (mq::screen_width(), mq::screen_height());
    mq::draw_rectangle(0.0, h / 2.0 - 40.0, w, 64.0, Color::new(0.0, 0.0, 0.0, 0.6));
    let size = mq::measure_text(text, None, 40, 1.0);
    mq::draw_text(text, (w - size.width) / 2.0, h / 2.0, 40.0, mq::WHITE);
}

/// A graph row's label in its lines' colours: "in 12 / out 30 kbit/s" with "in 12" in the
/// first colour and "out 30" in the second; a one-line row all in its colour.
fn legend(label: &str, colors: &[Color; 2], x: f32, y: f32) {
    let parts: Vec<&str> = label.splitn(2, " / ").collect();
    let mut at = x;
    for (k, part) in parts.iter().enumerate() {
        let text = if k + 1 < parts.len() {
            format!("{part} / ")
        } else {
            (*part).to_owned()
        };
        mq::draw_text(&text, at, y, 18.0, colors[k.min(1)]);
        at += mq::measure_text(&text, None, 18, 1.0).width;
    }
}

/// The host's player list: Tab shows it, a digit selects a player, K kicks the selected.
pub(crate) fn roster(game: &mut Game, r: &mut Roster, typing: bool) {
    // While a chat line is typed, its keys are letters of it: no digit selects, no K kicks.
    let pressed = |k: KeyCode| !typing && mq::is_key_pressed(k);
    if pressed(KeyCode::Tab) {
        r.open = !r.open;
        r.selected = None;
    }
    if !r.open {
        return;
    }
    let sessions = game.net().sessions();
    for (i, k) in DIGITS.iter().enumerate() {
        if pressed(*k) && i < sessions.len() {
            r.selected = Some(i);
        }
    }
    if pressed(KeyCode::K)
        && let Some(s) = r.selected.and_then(|i| sessions.get(i))
    {
        let lines = game.kick(&s.name, "kicked by the host", false);
        for line in lines {
            game.say(line);
        }
        r.selected = None;
    }
    let (x, w) = (mq::screen_width() / 2.0 - 260.0, 520.0);
    let h = 70.0 + 26.0 * sessions.len().max(1) as f32;
    mq::draw_rectangle(x, 120.0, w, h, Color::new(0.0, 0.0, 0.0, 0.7));
    mq::draw_text(
        "PLAYERS  (digit: select, K: kick, Tab: close)",
        x + 14.0,
        146.0,
        22.0,
        mq::WHITE,
    );
    if sessions.is_empty() {
        mq::draw_text("nobody has joined", x + 14.0, 176.0, 22.0, mq::GRAY);
    }
    for (i, s) in sessions.iter().enumerate() {
        let what = match (s.spectator, s.suspended) {
            (_, true) => "reconnecting",
            (true, false) => "watching",
            (false, false) => "playing",
        };
        let relayed = if game.relayed_to(s.addr) {
            ", relayed"
        } else {
            ""
        };
        let line = format!(
            "[{}] {:<16} {:>16}  {what}{relayed}",
            i + 1,
            s.name,
            link_text(&s.stats)
        );
        let c = if r.selected == Some(i) {
            mq::YELLOW
        } else {
            mq::WHITE
        };
        mq::draw_text(&line, x + 14.0, 176.0 + 26.0 * i as f32, 22.0, c);
    }
}

/// The score table under the HUD's title; a player who left keeps the row and the
/// points, greyed.
/// The score table's rows: each with its colour (a player who left is greyed).
fn score_rows(game: &Game) -> Vec<(String, Color)> {
    if game.presentation().scores().is_empty() {
        return vec![("no scores yet".to_owned(), mq::WHITE)];
    }
    let here = game.players_here();
    let rows = game.presentation().scores().iter();
    rows.map(|(name, points)| match here.contains(name) {
        true => (format!("{points:>3}  {name}"), mq::WHITE),
        false => (format!("{points:>3}  {name}  (left)"), mq::GRAY),
    })
    .collect()
}

/// The title and the scores, top left, on a panel no larger than they are: it covers as
/// little of the yard (its far corner, from a player's view) as it can.
fn draw_score_panel(game: &Game) {
    let title = format!("TUMBLEYARD  {}", game.scene().name);
    let rows = score_rows(game);
    let widest = rows
        .iter()
        .map(|(r, _)| mq::measure_text(r, None, 22, 1.0).width)
        .fold(mq::measure_text(&title, None, 26, 1.0).width, f32::max);
    let height = 40.0 + rows.len() as f32 * 24.0;
    let panel = Color::new(0.0, 0.0, 0.0, 0.45);
    mq::draw_rectangle(10.0, 10.0, widest + 20.0, height, panel);
    mq::draw_text(
        &title,
        20.0,
        36.0,
        26.0,
        Color::from_rgba(240, 190, 80, 255),
    );
    for (i, (row, c)) in rows.iter().enumerate() {
        mq::draw_text(row, 20.0, 62.0 + i as f32 * 24.0, 22.0, *c);
    }
}

/// The link's line, bottom right above the keys' line, on a dark backing.
fn draw_net_line(game: &Game) {
    let net = net_line(game);
    let w = mq::measure_text(&net, None, 18, 1.0).width;
    let (x, y) = (mq::screen_width() - w - 14.0, mq::screen_height() - 40.0);
    mq::draw_rectangle(
        x - 6.0,
        y - 15.0,
        w + 12.0,
        21.0,
        Color::new(0.0, 0.0, 0.0, 0.45),
    );
    mq::draw_text(&net, x, y, 18.0, mq::LIGHTGRAY);
}

pub(crate) fn draw_hud(game: &Game) {
    draw_score_panel(game);
    draw_net_line(game);
    let help = if game.is_spectator() {
        "watching  Q/E turn  C overview  N net graph  Enter chat  Esc quit"
    } else if game.is_server() {
        "WASD walk  Space jump  click/F throw  Q/E turn  C overview  Tab players  N net graph  Enter chat  Esc quit"
    } else {
        "WASD walk  Space jump  click/F throw  Q/E turn  C overview  N net graph  Enter chat  Esc quit"
    };
    let help = format!("{help}{SOUND_HELP}");
    mq::draw_text(&help, 14.0, mq::screen_height() - 14.0, 20.0, mq::WHITE);
    if !game.is_joined() {
        mq::draw_text(
            "joining ...",
            mq::screen_width() / 2.0 - 60.0,
            40.0,
            30.0,
            mq::WHITE,
        );
    }
    // The newest four events, each cut into lines that fit their column.
    let x = mq::screen_width() - 360.0;
    let width = ((mq::screen_width() - x - 10.0) / mq::measure_text("m", None, 20, 1.0).width)
        .max(8.0) as usize;
    // A notice stays NOTICE_SECONDS, fading out at the end (see `Presentation::notices`).
    let lines = game
        .presentation()
        .notices()
        .rev()
        .take(4)
        .flat_map(|(m, alpha)| wrap(m, width).into_iter().map(move |l| (l, alpha)));
    for (i, (line, alpha)) in lines.take(8).enumerate() {
        let c = Color::new(1.0, 1.0, 1.0, alpha);
        mq::draw_text(&line, x, 30.0 + i as f32 * 22.0, 20.0, c);
    }
    // Throwing waits for its cooldown: say so, or a press in it looks lost.
    if let Some(wait) = game.throw_cooldown() {
        let (text, colour) = if wait > 0.0 {
            (format!("next grenade in {wait:.1} s"), mq::LIGHTGRAY)
        } else {
            ("grenade ready".to_owned(), mq::WHITE)
        };
        // On a dark backing: over crates, grey text alone was hard to read.
        let y = mq::screen_height() - 40.0;
        let w = mq::measure_text(&text, None, 20, 1.0).width;
        mq::draw_rectangle(
            8.0,
            y - 17.0,
            w + 12.0,
            23.0,
            Color::new(0.0, 0.0, 0.0, 0.55),
        );
        mq::draw_text(&text, 14.0, y, 20.0, colour);
    }
}

/// The HUD's line about the link: the ping, the rates and the loss; or that the server is
/// silent, or that this peer hosts.
fn net_line(game: &Game) -> String {
    // (An `if let` guard would read better; it needs Rust 1.94, and the MSRV is 1.89.)
    match (game.ping_ms(), game.silence()) {
        (None, _) if game.net().is_reconnecting() => "reconnecting to the server...".to_owned(),
        (None, _) if !game.is_server() => "connecting...".to_owned(),
        (Some(_), Some(secs)) => format!(
            "no data for {secs:.0} s  in {:.0} kbit/s  out {:.0} kbit/s",
            game.presentation().traffic().kbps_in,
            game.presentation().traffic().kbps_out
        ),
        (Some(p), None) => format!(
            "ping {:.0} ms{}  in {:.0} kbit/s  out {:.0} kbit/s  loss {:.0}%",
            p,
            if game.relayed() { " (relayed)" } else { "" },
            game.presentation().traffic().kbps_in,
            game.presentation().traffic().kbps_out,
            game.loss() * 100.0
        ),
        (None, _) => format!(
            "hosting on UDP port {}{}{}: {}  in {:.0} kbit/s  out {:.0} kbit/s",
            game.local_addr().port(),
            if game.is_locked() { ", locked" } else { "" },
            game.web_port()
                .map(|p| format!(", browsers join at http://THIS-MACHINE:{p}"))
                .unwrap_or_default(),
            count(game.player_names().len(), "player"),
            game.presentation().traffic().kbps_in,
            game.presentation().traffic().kbps_out
        ),
    }
}
