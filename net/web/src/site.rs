//! [`Site`]: the page's files, each compressed once, served by path.

use flate2::Compression;
use flate2::write::GzEncoder;
use std::collections::BTreeMap;
use std::io::Write;

/// One file of the page.
#[derive(Debug, Clone)]
pub struct File {
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its bytes as they are.
    pub plain: Vec<u8>,
    /// Its bytes gzip-compressed.
    pub gzip: Vec<u8>,
}

/// The page's files by path (`/` is `index.html`).
#[derive(Debug, Clone, Default)]
pub struct Site {
    files: BTreeMap<String, File>,
}

impl Site {
    /// An empty site.
    pub fn new() -> Site {
        Site::default()
    }

    /// Adds `bytes` at `path` (such as `/lanyard.js`), compressed now, with its type from
    /// the name's ending.
    pub fn add(&mut self, path: &str, bytes: Vec<u8>) -> &mut Site {
        let mut enc = GzEncoder::new(Vec::new(), Compression::best());
        // Writing to a Vec cannot fail.
        let gzip = enc
            .write_all(&bytes)
            .and_then(|()| enc.finish())
            .unwrap_or_default();
        self.files.insert(
            path.to_owned(),
            File {
                content_type: content_type(path),
                plain: bytes,
                gzip,
            },
        );
        self
    }

    /// The file at `path` (`/` gives `/index.html`).
    pub fn get(&self, path: &str) -> Option<&File> {
        let path = if path == "/" { "/index.html" } else { path };
        self.files.get(path)
    }

    /// Every file's path, with its size as served compressed.
    pub fn sizes(&self) -> Vec<(String, usize)> {
        self.files
            .iter()
            .map(|(p, f)| (p.clone(), f.gzip.len()))
            .collect()
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::Site;
    use flate2::read::GzDecoder;
    use std::io::Read;

    #[test]
    fn a_file_is_served_compressed_as_it_was_given() {
        let mut site = Site::new();
        let text = b"<html>".repeat(1000);
        site.add("/index.html", text.clone())
            .add("/x.wasm", vec![0, 97, 115, 109]);
        let f = site.get("/").unwrap();
        assert_eq!(f.content_type, "text/html; charset=utf-8");
        assert!(f.gzip.len() < text.len() / 10);
        let mut back = Vec::new();
        GzDecoder::new(&f.gzip[..]).read_to_end(&mut back).unwrap();
        assert_eq!(back, text);
        assert_eq!(
            site.get("/x.wasm").unwrap().content_type,
            "application/wasm"
        );
        assert!(site.get("/nothing").is_none());
    }
}
