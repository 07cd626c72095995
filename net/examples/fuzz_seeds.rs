//! Writes the seed corpus of the `cargo fuzz` targets (`net/fuzz/corpus/<target>/`):
//! real datagram bodies, opened, from a session of the demo kinds, a real handshake, a
//! discovery request and answer, a short recording, and messages cut into fragments.
//!
//! `cargo run -p lanyard-net --features fuzzing --example fuzz_seeds -- net/fuzz/corpus`

use lanyard_net::discovery;
use lanyard_net::fuzzing::{Fixture, fragment_input, server_info};
use std::path::Path;

fn write(dir: &Path, target: &str, seeds: &[Vec<u8>]) -> std::io::Result<()> {
    let d = dir.join(target);
    std::fs::create_dir_all(&d)?;
    for (i, s) in seeds.iter().enumerate() {
        std::fs::write(d.join(format!("seed-{i:03}")), s)?;
    }
    println!("{target}: {} seeds", seeds.len());
    Ok(())
}

/// Keeps at most `n` of `seeds`, spread evenly, without repeats.
fn spread(mut seeds: Vec<Vec<u8>>, n: usize) -> Vec<Vec<u8>> {
    seeds.sort();
    seeds.dedup();
    let step = seeds.len().div_ceil(n).max(1);
    seeds.into_iter().step_by(step).collect()
}

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "net/fuzz/corpus".into());
    let dir = Path::new(&dir);
    let fx = Fixture::new(&lanyard_demo::fuzz_world());
    let to_server = spread(fx.seeds_to_server.clone(), 24);
    let to_client = spread(fx.seeds_to_client.clone(), 24);
    write(dir, "from_client", &to_server)?;
    write(dir, "from_server", &to_client)?;
    // Sections: what follows a client's DATA header (its messages, then its sections) is
    // close to a packet; the fuzzer finds the rest.
    write(dir, "sections", &to_server)?;
    write(dir, "datagram", &to_server)?;
    write(dir, "handshake", &[b"fuzz".to_vec(), vec![0; 64]])?;
    let info = server_info();
    let answer = discovery::answer(&info).map_err(std::io::Error::other)?;
    write(dir, "discovery", &[discovery::request(), answer])?;
    // A rendezvous header: its magic and protocol version (`lanyard_rendezvous::VERSION`,
    // a crate that depends on this one).
    write(dir, "rendezvous", &[b"LYRV\x02".to_vec()])?;
    write(dir, "recording", &[lanyard_demo::mixed_recording(90)])?;
    write(dir, "fragments", &fragment_seeds())?;
    Ok(())
}

/// Messages cut into fragments (`(id, more, len)`): in order; out of order, one twice and one
/// too long; and one message over the cap, then a small one.
fn fragment_seeds() -> Vec<Vec<u8>> {
    let full = lanyard_net::MAX_FRAGMENT as u16;
    let in_order = [
        (0, false, 5),
        (1, true, full),
        (2, true, full),
        (3, false, 40),
        (4, false, 0),
    ];
    let shuffled = [
        (3, false, 40),
        (2, true, full),
        (0, false, 5),
        (2, true, full),
        (1, true, full),
        (5, false, full + 1),
        (4, false, 9),
    ];
    let pieces = (lanyard_net::MAX_MESSAGE / lanyard_net::MAX_FRAGMENT) as u16 + 1;
    let mut over: Vec<(u16, bool, u16)> = (0..pieces).map(|i| (i, i + 1 < pieces, full)).collect();
    over.push((pieces, false, 3));
    vec![
        fragment_input(&in_order),
        fragment_input(&shuffled),
        fragment_input(&over),
    ]
}
