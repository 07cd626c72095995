//! The window, for real: `host --screenshot` under Xvfb with a bot joined must draw a
//! picture (not a blank screen).
//!
//! Needs `xvfb-run` (Debian: xvfb, xauth, libgl1-mesa-dri). Where it is missing the test
//! says so and passes, unless `LANYARD_REQUIRE_XVFB` is set, as CI sets it: there the
//! test fails rather than skip.

mod common;

use common::*;
use std::collections::HashSet;
use std::time::Duration;

#[test]
fn a_hosted_game_with_a_bot_draws_a_real_picture() {
    if !xvfb_or_skip() {
        return;
    }
    let dir = scratch("shot");
    let shot = dir.join("host.png");
    let port = free_port().to_string();
    let disc = discovery(free_port());
    let host = Running::start(windowed(
        "1280x800",
        &format!(
            "host --port {port} --name host --discovery-addr {disc} --screenshot '{}' --frames 480",
            shot.display()
        ),
    ));
    let _bot = Running::start(game(&[
        "bot",
        &format!("127.0.0.1:{port}"),
        "--seed",
        "4",
        "--seconds",
        "30",
    ]));
    let out = host.finish(Duration::from_secs(120));
    succeeded(&out, "host");

    let decoder = png::Decoder::new(std::fs::File::open(&shot).expect("a screenshot was written"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bpp = info.line_size / info.width as usize;
    assert!(info.width >= 640 && info.height >= 400);
    let colours: HashSet<&[u8]> = buf[..info.buffer_size()]
        .chunks(bpp)
        .map(|p| &p[..3])
        .collect();
    // A blank window is one colour and the HUD's text adds a few dozen; the yard with its
    // shaded crates, players and labels has hundreds.
    assert!(
        colours.len() >= 100,
        "only {} distinct colours: the picture is nearly blank",
        colours.len()
    );
    let _ = std::fs::copy(
        &shot,
        std::env::temp_dir().join("lanyard-last-screenshot.png"),
    );
}
