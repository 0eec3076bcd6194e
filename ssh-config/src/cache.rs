//! The files of one [`SshConfig`](super::SshConfig) as read the first time a host needed
//! them: each file's lines already cut into keyword and rest, its ownership check, and
//! each `Include` pattern's matches. A run (or an exporter's configuration load) reads a
//! file once, however many hosts it resolves: a 1,600-line file read and cut for every
//! host was a twentieth of an exporter probe's CPU. As with ssh, a file changed while the
//! run goes on is not seen until the next run (the exporter's next load: SIGHUP).
use super::lexer;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One line of a file that holds a keyword: its number (1-based), then the lowercased
/// keyword and where its rest is in the text, or the keyword that has no argument.
pub(super) type Line = (usize, Result<(String, Range<usize>), String>);

/// A file's text and its lines with a keyword.
#[derive(Debug)]
pub(super) struct Lexed {
    text: String,
    lines: Vec<Line>,
}

impl Lexed {
    fn new(text: String) -> Self {
        let base = text.as_ptr() as usize;
        let mut lines = Vec::new();
        for (i, raw) in text.split('\n').enumerate() {
            // ssh reads a line as a C string: it ends at a NUL byte (a line starting with
            // one is empty).
            let raw = raw.split('\0').next().unwrap_or_default();
            let cut = match lexer::keyword_and_rest(raw) {
                Ok(None) => continue,
                Ok(Some((keyword, rest))) => {
                    // `rest` is a slice of `text`; keep where it is.
                    let start = (rest.as_ptr() as usize).wrapping_sub(base);
                    let range = if start <= text.len() && start + rest.len() <= text.len() {
                        start..start + rest.len()
                    } else {
                        0..0
                    };
                    Ok((keyword, range))
                }
                Err(keyword) => Err(keyword),
            };
            lines.push((i + 1, cut));
        }
        Lexed { text, lines }
    }

    /// The lines with a keyword, in file order.
    pub(super) fn lines(&self) -> &[Line] {
        &self.lines
    }

    /// The rest of a line, from its range.
    pub(super) fn rest(&self, range: &Range<usize>) -> &str {
        self.text.get(range.clone()).unwrap_or("")
    }
}

/// One file as read once.
#[derive(Debug)]
pub(super) struct CachedFile {
    /// Its lines, or the kind and text of the error reading it.
    pub(super) read: Result<Lexed, (std::io::ErrorKind, String)>,
    /// ssh's refusal of a user file another user could write, when it applies.
    pub(super) perm: Option<String>,
}

impl CachedFile {
    /// The read error as an `io::Error` (the same text as the original).
    pub(super) fn error(kind: std::io::ErrorKind, text: &str) -> std::io::Error {
        std::io::Error::new(kind, text.to_string())
    }
}

/// What one config has read so far; shared by its clones.
#[derive(Debug, Default)]
pub(super) struct FileCache {
    files: Mutex<HashMap<PathBuf, Arc<CachedFile>>>,
    globs: Mutex<HashMap<String, Result<Vec<PathBuf>, String>>>,
}

impl FileCache {
    /// `path`, read and cut the first time.
    pub(super) fn file(&self, path: &Path) -> Arc<CachedFile> {
        if let Some(f) = self.files.lock().ok().and_then(|m| m.get(path).cloned()) {
            return f;
        }
        let read = super::read_text(path)
            .map(Lexed::new)
            .map_err(|e| (e.kind(), e.to_string()));
        let perm = super::check_perm(path).err().map(|e| e.to_string());
        let file = Arc::new(CachedFile { read, perm });
        if let Ok(mut m) = self.files.lock() {
            m.insert(path.to_path_buf(), file.clone());
        }
        file
    }

    /// The files an `Include` pattern names, globbed the first time.
    pub(super) fn glob(&self, pattern: &str) -> Result<Vec<PathBuf>, String> {
        if let Some(g) = self.globs.lock().ok().and_then(|m| m.get(pattern).cloned()) {
            return g;
        }
        let found = super::sys::glob(pattern);
        if let Ok(mut m) = self.globs.lock() {
            m.insert(pattern.to_string(), found.clone());
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_once_and_its_lines_keep_their_numbers_and_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, "# comment\n\nHost a\n  Port 2201\nUser\n").unwrap();
        let cache = FileCache::default();
        let first = cache.file(&path);
        let lexed = first.read.as_ref().unwrap();
        type Seen<'a> = (usize, Result<(String, &'a str), String>);
        let lines: Vec<Seen> = lexed
            .lines()
            .iter()
            .map(|(n, l)| {
                (
                    *n,
                    l.as_ref()
                        .map(|(k, r)| (k.clone(), lexed.rest(r)))
                        .map_err(Clone::clone),
                )
            })
            .collect();
        assert_eq!(
            lines,
            vec![
                (3, Ok(("host".to_string(), "a"))),
                (4, Ok(("port".to_string(), "2201"))),
                (5, Err("user".to_string())),
            ]
        );
        // Changed on disk: the run keeps what it read, as ssh does for its own run.
        std::fs::write(&path, "Host b\n").unwrap();
        assert!(Arc::ptr_eq(&first, &cache.file(&path)));
        let missing = cache.file(&dir.path().join("missing"));
        assert_eq!(
            missing.read.as_ref().err().map(|e| e.0),
            Some(std::io::ErrorKind::NotFound)
        );
    }
}
