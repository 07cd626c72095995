//! Writes the seed corpus of the `cargo fuzz` targets (`net/fuzz/corpus/<target>/`):
//! real datagram bodies, opened, from a session of the demo kinds, a real handshake, a
//! discovery request and answer, and a short recording.
//!
//! `cargo run -p lanyard-net --features fuzzing --example fuzz_seeds -- net/fuzz/corpus`

use lanyard_net::discovery;
use lanyard_net::fuzzing::{Fixture, demo_recording, server_info};
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
    let fx = Fixture::new();
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
    write(dir, "recording", &[demo_recording(90)])?;
    Ok(())
}
