//! The redaction map file: written next to the bundle, never inside it.
use super::Redactor;
use anyhow::Context;
use std::path::{Path, PathBuf};

impl Redactor {
    /// Writes the mapping as JSON to `<bundle>.redaction-map.json`, readable by the owner
    /// only, atomically; refuses an existing file unless `force`.
    pub fn write_map(&self, bundle: &Path, force: bool) -> anyhow::Result<PathBuf> {
        let path = map_path(bundle);
        crate::atomic_file::write_atomically(&path, force, |file| {
            let mut out = std::io::BufWriter::new(file);
            serde_json::to_writer_pretty(&mut out, &self.map).context("writing the redaction map")?;
            std::io::Write::write_all(&mut out, b"\n")?;
            std::io::Write::flush(&mut out).context("writing the redaction map")?;
            Ok(())
        })?;
        Ok(path)
    }
}

/// Where the redaction map of `bundle` goes: `FILE.tar.gz.redaction-map.json`.
pub(crate) fn map_path(bundle: &Path) -> PathBuf {
    let mut name = bundle.as_os_str().to_owned();
    name.push(".redaction-map.json");
    PathBuf::from(name)
}
