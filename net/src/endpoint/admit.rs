//! What admitting a client decides beside the limits: whether a new session may start, the
//! name it plays under when the one it asked for is taken, and the kind that differs when
//! its world's kinds are not the server's.

use crate::core::Core;
use crate::crypto;
use crate::error::RejectReason;
use crate::wire::Request;
use std::collections::BTreeSet;

/// Whether a new session may start for `request` (under session key `key`), on a server
/// that bans the names in `banned` and has `counts` sessions (playing, watching): the
/// password, the kinds, the name, a free place, in that order.
pub(crate) fn admissible(
    core: &Core,
    request: &Request,
    key: &crypto::Key,
    (banned, (playing, watching)): (&BTreeSet<String>, (usize, usize)),
) -> Result<(), RejectReason> {
    if let Some(pw) = &core.config.password {
        let want = crypto::password_proof(pw, key);
        if !request.proof.is_some_and(|p| crypto::same(&p, &want)) {
            return Err(RejectReason::BadPassword);
        }
    }
    if request.kinds != core.kinds {
        return Err(kind_mismatch(&core.kinds, &request.kinds));
    }
    let name = request.name.trim();
    if name.is_empty() || name.chars().count() > 32 {
        return Err(RejectReason::BadName);
    }
    if banned.contains(&name.to_lowercase()) {
        return Err(RejectReason::Banned);
    }
    if request.spectator && watching >= usize::from(core.config.max_spectators) {
        let max = core.config.max_spectators;
        return Err(RejectReason::SpectatorsFull { max });
    }
    if !request.spectator && playing >= usize::from(core.config.max_clients) {
        let max = core.config.max_clients;
        return Err(RejectReason::ServerFull { max });
    }
    Ok(())
}

/// `name` if no name in `taken` is it (ignoring ASCII case), else the first free
/// "name (N)" from N = 2, the name shortened to keep it within the 32 characters a name
/// may have.
pub(crate) fn free_name(name: &str, taken: &[&str]) -> String {
    let free = |n: &str| !taken.iter().any(|t| t.eq_ignore_ascii_case(n));
    if free(name) {
        return name.to_owned();
    }
    (2u32..)
        .map(|n| {
            let tail = format!(" ({n})");
            let keep = 32usize.saturating_sub(tail.chars().count());
            let base: String = name.chars().take(keep).collect();
            format!("{}{tail}", base.trim_end())
        })
        .find(|n| free(n))
        .unwrap_or_else(|| name.to_owned())
}

/// The first kind that differs between the server's sorted names and the client's.
pub(crate) fn kind_mismatch(server: &[String], client: &[String]) -> RejectReason {
    let first_missing = server.iter().find(|k| !client.contains(k));
    let first_extra = client.iter().find(|k| !server.contains(k));
    match (first_missing, first_extra) {
        (Some(k), _) => RejectReason::KindMismatch {
            kind: k.clone(),
            server_has_it: true,
        },
        (None, Some(k)) => RejectReason::KindMismatch {
            kind: k.clone(),
            server_has_it: false,
        },
        // The same names in another order (a client that did not sort them).
        (None, None) => RejectReason::KindMismatch {
            kind: client.first().cloned().unwrap_or_default(),
            server_has_it: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::free_name;

    #[test]
    fn a_taken_name_becomes_the_first_free_numbered_one_within_32_characters() {
        assert_eq!(free_name("ada", &["bob"]), "ada");
        assert_eq!(free_name("ada", &["ADA"]), "ada (2)");
        assert_eq!(free_name("ada", &["ada", "Ada (2)", "ada (3)"]), "ada (4)");
        let long = "a name of exactly thirty-two ch.";
        assert_eq!(long.chars().count(), 32);
        let other = free_name(long, &[long]);
        assert_eq!(other, "a name of exactly thirty-two (2)");
        assert!(other.chars().count() <= 32);
        // A cut that ends in spaces does not leave them before the number.
        let spaced = format!("abc{}wxyz", " ".repeat(25));
        assert_eq!(free_name(&spaced, &[&spaced]), "abc (2)");
    }
}
