//! Text the game shows: plurals, how a link reads, lines cut to fit and cleaned.

/// `n` things, with the right plural.
pub fn count(n: usize, thing: &str) -> String {
    match n {
        1 => format!("1 {thing}"),
        _ => format!("{n} {thing}s"),
    }
}

/// A peer silent this long (seconds) shows as silent, not by its ping and loss: a live
/// one is heard at least every heartbeat (half a second when idle).
pub const SILENT_AFTER: f32 = 1.0;

/// How a link reads in lists and status lines: "17 ms 0% loss", or "silent 4 s" for a
/// peer not heard for [`SILENT_AFTER`] or more (frozen, or gone and not yet timed out):
/// its old ping and loss would say it is fine.
pub fn link_text(stats: &lanyard_net::PeerStats) -> String {
    match silent_for(stats) {
        Some(secs) => format!("silent {secs:.0} s"),
        None => format!("{:.0} ms {:.0}% loss", stats.ping_ms, stats.loss * 100.0),
    }
}

/// Seconds since the peer was last heard, once that is [`SILENT_AFTER`] or more.
pub fn silent_for(stats: &lanyard_net::PeerStats) -> Option<f32> {
    let secs = stats.silence_ms / 1000.0;
    (secs >= SILENT_AFTER).then_some(secs)
}

/// `text` cut into lines of at most `width` characters, at spaces where it can (a word
/// longer than a line is cut inside).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let room = if line.is_empty() {
                width
            } else {
                width.saturating_sub(line.chars().count() + 1)
            };
            if word.len() <= room {
                if !line.is_empty() {
                    line.push(' ');
                }
                line.extend(word);
                break;
            }
            if line.is_empty() {
                // Longer than a whole line: the first part fills it.
                line.extend(word.drain(..width));
            }
            lines.push(std::mem::take(&mut line));
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// A line fit to show: control characters removed, at most 200 characters.
pub fn clean_line(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn long_lines_are_cut_at_spaces_and_long_words_inside() {
        assert_eq!(wrap("ada: hello there", 40), ["ada: hello there"]);
        assert_eq!(
            wrap("bob blew ada off the yard with a grenade", 16),
            ["bob blew ada off", "the yard with a", "grenade"]
        );
        assert_eq!(wrap("abcdefghij kl", 4), ["abcd", "efgh", "ij", "kl"]);
        assert_eq!(wrap("", 10), [""]);
        for line in wrap("x".repeat(100).as_str(), 7) {
            assert!(line.chars().count() <= 7);
        }
    }
}
