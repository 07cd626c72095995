//! A game's recording to a file ([`Recorder`]): the world's recording (see
//! `lanyard::record`) written out once a second, and started again on a new arena.

use lanyard::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the recording goes, and the file it goes to while it runs.
#[derive(Debug, Default)]
pub(super) struct Recorder {
    /// Where the recording goes, to start it again when the arena changes.
    path: Option<PathBuf>,
    out: Option<std::io::BufWriter<std::fs::File>>,
}

impl Recorder {
    /// Records `group` from now on into `path`; `scene` (the arena as TOML) goes in the
    /// header with `who` recorded, so the file replays on its own.
    pub(super) fn start(
        &mut self,
        group: &mut EntityGroup,
        scene: &str,
        who: &str,
        path: &Path,
    ) -> Result<(), String> {
        group
            .start_recording(scene, who)
            .map_err(|e| e.to_string())?;
        let file = std::fs::File::create(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        self.out = Some(std::io::BufWriter::new(file));
        self.path = Some(path.to_owned());
        self.flush(group)
    }

    /// Where the recording goes, if one was started.
    pub(super) fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// Writes what `group` recorded since the last flush. On an error the recording
    /// stops, and the error says why.
    pub(super) fn flush(&mut self, group: &mut EntityGroup) -> Result<(), String> {
        let Some(w) = &mut self.out else {
            return Ok(());
        };
        let written = group
            .take_recording()
            .map_err(|e| e.to_string())
            .and_then(|bytes| w.write_all(&bytes).map_err(|e| e.to_string()));
        if written.is_err() {
            self.out = None;
        }
        written
    }

    /// Stops: the file ends with a body frame of the world as it is.
    pub(super) fn stop(&mut self, group: &mut EntityGroup) {
        if let Some(mut w) = self.out.take() {
            if let Ok(bytes) = group.stop_recording() {
                let _ = w.write_all(&bytes);
            }
            let _ = w.flush();
        }
    }
}
