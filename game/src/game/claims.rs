//! Come back as yourself: a joined game keeps its session's claim
//! ([`SessionClaim`]) in a file of the player's configuration folder, so that a game
//! that crashed or was killed, started again within the server's grace window, takes the
//! same player up again, with its score, instead of joining as "name (2)" beside a ghost.
//!
//! The files are slots, `sessions/0` to `sessions/15`. A running game holds its slot's
//! lock (the operating system lets go of it when the process dies, however it dies), so
//! two games of one user on one machine take two slots and stay two players. A game that
//! starts takes the free slot whose claim names the server it joins, or else an empty
//! one, or else the one written longest ago. A game that ends on purpose (quit, kicked, its
//! session over) empties its slot.

use lanyard_net::SessionClaim;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// How many games of one user may keep a claim at once.
pub const SLOTS: usize = 16;

/// The player's configuration folder: `$XDG_CONFIG_HOME/tumbleyard`, or
/// `$HOME/.config/tumbleyard`.
pub fn config_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("tumbleyard"))
}

/// Where the games keep their claims: `sessions` in the configuration folder.
pub fn sessions_dir() -> Option<PathBuf> {
    config_dir().map(|d| d.join("sessions"))
}

/// A slot this game holds (locked while it runs), and what it last wrote there.
#[derive(Debug)]
pub struct ClaimSlot {
    file: File,
    path: PathBuf,
    kept: Option<SessionClaim>,
}

/// A free slot while a game looks for its own: its file (locked), what it holds, and
/// when it was written.
struct Free {
    slot: ClaimSlot,
    claim: Option<SessionClaim>,
    written: SystemTime,
}

impl ClaimSlot {
    /// Takes a slot in `dir` for a game that joins `server`, with the claim it holds for
    /// that server, if any. `None` if every slot is held by a running game, or the folder
    /// cannot be used (the game then keeps no claim).
    pub fn take(dir: &Path, server: SocketAddr) -> Option<(ClaimSlot, Option<SessionClaim>)> {
        if let Err(e) = std::fs::create_dir_all(dir) {
            tracing::warn!(
                "cannot keep the session for a restart in {}: {e}",
                dir.display()
            );
            return None;
        }
        let free: Vec<Free> = (0..SLOTS).filter_map(|i| Self::try_slot(dir, i)).collect();
        let pick = free
            .iter()
            .position(|f| f.claim.as_ref().is_some_and(|c| c.server() == server))
            .or_else(|| free.iter().position(|f| f.claim.is_none()))
            .or_else(|| {
                let oldest = free.iter().enumerate().min_by_key(|(_, f)| f.written);
                oldest.map(|(i, _)| i)
            })?;
        // The other free slots' locks go with them here.
        let mut chosen = free.into_iter().nth(pick)?;
        let claim = chosen.claim.take().filter(|c| c.server() == server);
        chosen.slot.kept.clone_from(&claim);
        Some((chosen.slot, claim))
    }

    /// Slot `i` of `dir` if no running game holds it: locked, with what it holds.
    fn try_slot(dir: &Path, i: usize) -> Option<Free> {
        let path = dir.join(i.to_string());
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .ok()?;
        file.try_lock().ok()?;
        let mut slot = ClaimSlot {
            file,
            path,
            kept: None,
        };
        let mut text = String::new();
        let claim = match slot.file.read_to_string(&mut text) {
            Ok(_) => SessionClaim::parse(&text),
            Err(_) => None,
        };
        let written = slot
            .file
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        if claim.is_none() && !text.is_empty() {
            // Not a claim (cut short by a crash mid-write): an empty slot.
            slot.write("");
        }
        Some(Free {
            slot,
            claim,
            written,
        })
    }

    /// Keeps `claim` (the session's newest: it changes when the game follows a new host),
    /// writing it only when it changed.
    pub fn keep(&mut self, claim: SessionClaim) {
        if self.kept.as_ref() != Some(&claim) {
            self.write(&claim.to_text());
            self.kept = Some(claim);
        }
    }

    /// The session ended on purpose: nothing to take up again.
    pub fn forget(&mut self) {
        if self.kept.take().is_some() {
            self.write("");
        }
    }

    /// Where this slot is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write(&mut self, text: &str) {
        let done = self
            .file
            .set_len(0)
            .and_then(|()| self.file.rewind())
            .and_then(|()| self.file.write_all(text.as_bytes()))
            .and_then(|()| self.file.sync_data());
        if let Err(e) = done {
            tracing::warn!("cannot write {}: {e}", self.path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ClaimSlot, SLOTS};
    use lanyard_net::SessionClaim;
    use std::net::SocketAddr;

    fn claim(server: SocketAddr, client: u16) -> SessionClaim {
        let text = format!(
            "lanyard session claim 1\nserver {server}\nclient {client}\ngrace_ms 30000\ntoken {}\n",
            "ab".repeat(32)
        );
        SessionClaim::parse(&text).expect("a claim")
    }

    fn dir(name: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("tumbleyard-claims-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_game_started_again_finds_the_claim_its_last_run_kept_for_that_server() {
        let d = dir("again");
        let here: SocketAddr = "127.0.0.1:47810".parse().expect("an address");
        let there: SocketAddr = "127.0.0.1:47820".parse().expect("an address");
        let (mut first, none) = ClaimSlot::take(&d, here).expect("a slot");
        assert_eq!(none, None);
        first.keep(claim(here, 3));
        // The process dies: its lock goes with it.
        drop(first);
        let (_, other) = ClaimSlot::take(&d, there).expect("a slot");
        assert_eq!(other, None, "a claim for another server is not taken up");
        let (_, again) = ClaimSlot::take(&d, here).expect("a slot");
        assert_eq!(again, Some(claim(here, 3)));
    }

    #[test]
    fn two_running_games_hold_two_slots_and_never_each_other_s_claim() {
        let d = dir("two");
        let here: SocketAddr = "127.0.0.1:47810".parse().expect("an address");
        let (mut one, _) = ClaimSlot::take(&d, here).expect("a slot");
        one.keep(claim(here, 1));
        let (two, taken) = ClaimSlot::take(&d, here).expect("a second slot");
        assert_eq!(taken, None, "the running game's claim was taken");
        assert_ne!(one.path(), two.path());
        let held: Vec<ClaimSlot> = (2..SLOTS)
            .map(|_| ClaimSlot::take(&d, here).expect("a free slot").0)
            .collect();
        assert_eq!(held.len(), SLOTS - 2);
        assert!(ClaimSlot::take(&d, here).is_none(), "every slot is held");
    }

    #[test]
    fn a_game_that_ended_on_purpose_leaves_nothing_to_take_up() {
        let d = dir("forget");
        let here: SocketAddr = "127.0.0.1:47810".parse().expect("an address");
        let (mut one, _) = ClaimSlot::take(&d, here).expect("a slot");
        one.keep(claim(here, 1));
        one.forget();
        drop(one);
        let (_, again) = ClaimSlot::take(&d, here).expect("a slot");
        assert_eq!(again, None);
    }
}
