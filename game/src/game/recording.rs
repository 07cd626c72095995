//! A game's recording ([`Recorder`]): the world's recording (see `lanyard::record`)
//! written out once a second to a file, or kept in memory ([`RecordingBuffer`], for a
//! page, which has no files), and started again on a new arena.

use lanyard::prelude::*;
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// A recording kept in memory: a page's, which it writes to its console at the end.
#[derive(Debug, Clone, Default)]
pub struct RecordingBuffer(Rc<RefCell<Vec<u8>>>);

impl RecordingBuffer {
    /// An empty buffer.
    pub fn new() -> RecordingBuffer {
        RecordingBuffer::default()
    }

    /// The recording's bytes so far (all of it, once the game shut down).
    pub fn bytes(&self) -> Vec<u8> {
        self.0.borrow().clone()
    }
}

impl Write for RecordingBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Where a recording goes.
#[derive(Debug, Clone)]
pub(super) enum Sink {
    /// A file at this path.
    File(PathBuf),
    /// Memory.
    Memory(RecordingBuffer),
}

/// Where the recording goes, and the writer it goes to while it runs.
#[derive(Default)]
pub(super) struct Recorder {
    /// Where the recording goes, to start it again when the arena changes.
    sink: Option<Sink>,
    out: Option<Box<dyn Write>>,
}

impl Recorder {
    /// Records `group` from now on into `sink` (a file made anew, or a buffer emptied);
    /// `scene` (the arena as TOML) goes in the header with `who` recorded, so the
    /// recording replays on its own.
    pub(super) fn start(
        &mut self,
        group: &mut EntityGroup,
        scene: &str,
        who: &str,
        sink: Sink,
    ) -> Result<(), String> {
        group
            .start_recording(scene, who)
            .map_err(|e| e.to_string())?;
        let out: Box<dyn Write> = match &sink {
            Sink::File(path) => Box::new(std::io::BufWriter::new(create(path)?)),
            Sink::Memory(buf) => {
                buf.0.borrow_mut().clear();
                Box::new(buf.clone())
            }
        };
        self.out = Some(out);
        self.sink = Some(sink);
        self.flush(group)
    }

    /// Where the recording goes, if one was started.
    pub(super) fn sink(&self) -> Option<Sink> {
        self.sink.clone()
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

    /// Stops: the recording ends with a body frame of the world as it is.
    pub(super) fn stop(&mut self, group: &mut EntityGroup) {
        if let Some(mut w) = self.out.take() {
            if let Ok(bytes) = group.stop_recording() {
                let _ = w.write_all(&bytes);
            }
            let _ = w.flush();
        }
    }
}

fn create(path: &Path) -> Result<std::fs::File, String> {
    std::fs::File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
