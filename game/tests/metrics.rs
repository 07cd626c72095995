//! `server --metrics`: scraped over HTTP on 127.0.0.1 while a bot plays, the server's
//! figures come in the Prometheus text format.

mod common;

use common::*;
use std::io::{Read, Write};
use std::time::Duration;

fn scrape(addr: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("the metrics answer");
    // As a scraper does: the request in pieces (a format writes each part on its own).
    write!(s, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\n").unwrap();
    s.flush().unwrap();
    write!(s, "Accept: text/plain\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text
}

#[test]
fn the_servers_figures_are_scraped_in_the_prometheus_text_format() {
    let metrics = format!("127.0.0.1:{}", free_port_tcp());
    let (server, addr) = server(&format!("--seconds 12 --metrics {metrics}"));
    let bot = Running::start(game(&["bot", &addr, "--seconds", "9"]));
    // The status line comes every 5 s, just after the figures are set.
    server.wait_for("players 1/8", Duration::from_secs(30));
    let text = scrape(&metrics);
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    for (name, kind) in [
        ("players", "gauge"),
        ("spectators", "gauge"),
        ("frame_milliseconds", "gauge"),
        ("in_kilobits_per_second", "gauge"),
        ("out_kilobits_per_second", "gauge"),
        ("state_age_milliseconds", "gauge"),
        ("sessions_lost", "gauge"),
        ("hellos_refused", "gauge"),
    ] {
        assert!(
            body.contains(&format!("# TYPE tumbleyard_{name} {kind}\n")),
            "no {name}:\n{body}"
        );
    }
    assert!(body.contains("\ntumbleyard_players 1\n"), "{body}");
    let frame: f64 = body
        .lines()
        .find_map(|l| l.strip_prefix("tumbleyard_frame_milliseconds "))
        .expect("a frame time")
        .parse()
        .unwrap();
    assert!(frame > 0.0);
    assert!(body.trim_end().ends_with("# EOF"));
    bot.finish(Duration::from_secs(60));
    let out = server.finish(Duration::from_secs(60));
    succeeded(&out, "the server");
}
