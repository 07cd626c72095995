//! The page's edge, for the game built for a browser (wasm32): what the page's query asks
//! ([`PageQuery`], read on every build so that it is tested natively), and in the browser
//! the calls into the page's script (`game/web/lanyard.js`): its randomness, its console,
//! its query, and `PageChannel`, a [`Transport`](lanyard_net::Transport) over the data
//! channel to the host that served the page.

/// What the page's query string asks: `?bot=SEED&seconds=N&name=NAME&password=P`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageQuery {
    /// Play as `lanyard-game bot --seed SEED` does, and report as it does (to the console).
    pub bot: Option<u64>,
    /// Stop after this many seconds (with `bot`).
    pub seconds: Option<f32>,
    /// The player's name.
    pub name: Option<String>,
    /// The game's password.
    pub password: Option<String>,
    /// Write a screenshot to the console (base64 PNG) after this many seconds of play.
    pub shot: Option<f32>,
    /// Record the game, and write the recording to the console (base64) at the end.
    pub record: bool,
}

impl PageQuery {
    /// Reads `query` (with or without its leading `?`). Unknown keys and values that do
    /// not parse are ignored: the page starts anyway, with its start screen.
    pub fn parse(query: &str) -> PageQuery {
        let mut q = PageQuery::default();
        for pair in query.trim_start_matches('?').split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = decode(value);
            match key {
                "bot" => q.bot = value.parse().ok(),
                "seconds" => q.seconds = value.parse().ok().filter(|s: &f32| *s > 0.0),
                "name" if !value.is_empty() => q.name = Some(value),
                "password" => q.password = Some(value),
                "shot" => q.shot = value.parse().ok().filter(|s: &f32| *s >= 0.0),
                "record" => q.record = value == "1",
                _ => {}
            }
        }
        q
    }
}

/// `text` with `+` as a space and `%XX` escapes decoded (bad escapes kept as written).
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `bytes` in standard base64 (with padding), for what the page writes to its console.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            match i <= chunk.len() {
                true => out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char),
                false => out.push('='),
            }
        }
    }
    out
}

#[cfg(target_arch = "wasm32")]
mod js;
#[cfg(target_arch = "wasm32")]
pub use js::{PageChannel, console, host, now_ms, query, random, shot};

#[cfg(test)]
mod tests {
    use super::{PageQuery, base64, decode};

    #[test]
    fn a_bot_query_reads_as_the_bot_command_would() {
        let q = PageQuery::parse("?bot=7&seconds=20&name=web%20by&password=a+b&shot=12&record=1");
        assert!(q.record);
        assert_eq!(q.bot, Some(7));
        assert_eq!(q.seconds, Some(20.0));
        assert_eq!(q.name.as_deref(), Some("web by"));
        assert_eq!(q.password.as_deref(), Some("a b"));
        assert_eq!(q.shot, Some(12.0));
    }

    #[test]
    fn a_bad_query_starts_the_page_anyway() {
        assert_eq!(PageQuery::parse(""), PageQuery::default());
        let q = PageQuery::parse("bot=x&seconds=-3&name=&zzz&shot=nan%");
        assert_eq!(q, PageQuery::default());
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz%4"), "%zz%4");
        assert_eq!(decode("%C3%A9"), "é");
    }

    #[test]
    fn base64_is_the_standard_one() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[255, 254, 253]), "//79");
    }
}
