//! Writing a file so that it is either all there or not there at all.
//!
//! The content goes into a temporary file in the target's own folder (so the final rename
//! stays on one file system and is atomic), created readable by the owner only, synced,
//! and only then renamed into place. A crash, a full disk or Ctrl-C therefore never leaves
//! a half-written file under the name the engineer will attach to a ticket.
use anyhow::Context;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The target exists and overwriting was not asked for.
#[derive(Debug, thiserror::Error)]
#[error("{0} already exists; pass --force to overwrite it")]
pub(crate) struct AlreadyExists(PathBuf);

/// The folder a file at `path` lands in (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Writes `path` atomically with what `fill` writes into the (mode 0600) temporary file;
/// refuses an existing `path` with [`AlreadyExists`] unless `force`.
pub(crate) fn write_atomically(
    path: &Path,
    force: bool,
    fill: impl FnOnce(&mut File) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let dir = parent_dir(path);
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_string());
    // tempfile creates the file with mode 0600 before anything is written into it.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{file_name}."))
        .suffix(".partial")
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    fill(tmp.as_file_mut())?;
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("syncing {} to disk", path.display()))?;
    let placed = if force {
        tmp.persist(path).map_err(|e| e.error)
    } else {
        tmp.persist_noclobber(path).map_err(|e| e.error)
    };
    match placed {
        Ok(_) => sync_dir(dir).with_context(|| format!("syncing the folder {} to disk", dir.display())),
        Err(e) if !force && e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(AlreadyExists(path.to_path_buf()).into())
        }
        Err(e) => Err(anyhow::Error::from(e).context(format!("cannot move {} into place", path.display()))),
    }
}

/// Makes a rename in `dir` durable: without it a crash right after the rename may bring
/// back the old file, or none.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    match File::open(dir).and_then(|d| d.sync_all()) {
        // Some file systems cannot sync a folder; the rename itself stays atomic there.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(()),
        other => other,
    }
}

/// Writes a report to `path` atomically, replacing an older one, readable by all (mode
/// 0644: node_exporter reads its textfile directory as its own user).
pub(crate) fn write_report(path: &Path, text: &str) -> anyhow::Result<()> {
    write_report_with(path, |out| out.write_all(text.as_bytes()))
}

/// [`write_report`] of what `write` writes, as it writes it (a report too large to
/// build whole first).
pub(crate) fn write_report_with(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    write_atomically(path, true, |file| {
        file.set_permissions(std::fs::Permissions::from_mode(0o644))?;
        let mut out = std::io::BufWriter::new(&*file);
        write(&mut out)?;
        out.flush()?;
        Ok(())
    })
    .with_context(|| format!("cannot write the report to {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_report_replaces_the_older_one_readable_by_all_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pvrdma.prom");
        std::fs::write(&path, "old\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_report(&path, "new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o644);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // A folder in the way: an error naming the file, nothing left behind.
        let taken = dir.path().join("taken");
        std::fs::create_dir(&taken).unwrap();
        let err = format!("{:#}", write_report(&taken, "x").unwrap_err());
        assert!(
            err.starts_with(&format!("cannot write the report to {}", taken.display())),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
