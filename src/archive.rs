//! Reading archives and folders of captures safely: limits, entries, path cleaning and
//! walking a folder under the same limits. Knows nothing of what the files mean; the
//! offline readers (`bundle`, `vmsupport`) and their dispatcher
//! (`offline`) build on it.
//!
//! A `.tar.gz` is streamed and its entries kept in memory, never unpacked to disk: a
//! bundle is kilobytes to a few megabytes, nothing has to be cleaned up afterwards, and a
//! hostile entry path (`../`, absolute, a link) can never write anything because nothing
//! is written at all; it is refused instead. Memory stays bounded by [`ReadLimits`]:
//! per entry, for all kept entries, and for the decompressed stream as a whole (the
//! defence against a gzip bomb, which costs time even when nothing is kept).
use anyhow::Context;
use std::cell::Cell;
use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Component, Path};
use std::rc::Rc;

/// Why a bundle (pvrdma-doctor's or an ESXi vm-support bundle) or capture folder was
/// refused. Each variant names the entry at fault so the engineer can look.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("{0} already exists; pass --force to overwrite it")]
    Exists(std::path::PathBuf),
    #[error("entry {path:?} would land outside the bundle (absolute path or `..`); refusing the bundle")]
    PathEscape { path: String },
    #[error("entry {path:?} is a {kind}; bundles hold only plain files and folders, refusing the bundle")]
    Link { path: String, kind: &'static str },
    #[error("entry {path:?} has unsupported type {kind}; refusing the bundle")]
    UnsupportedEntry { path: String, kind: String },
    #[error("{what} expands beyond the cap of {cap} bytes; refusing it (a genuine bundle is far smaller, so this is damage or a decompression bomb)")]
    TooLarge { what: String, cap: u64 },
    #[error("entry {path:?} does not match the sha256 in manifest.json (changed or damaged after it was written)")]
    ChecksumMismatch { path: String },
    #[error("entry {path:?} is not listed in manifest.json (added after the bundle was written)")]
    NotInManifest { path: String },
    #[error("manifest.json lists {path:?} but the bundle does not hold it")]
    MissingEntry { path: String },
    #[error("entry {path:?} appears twice")]
    Duplicate { path: String },
    #[error("manifest.json is unreadable: {0}")]
    BadManifest(String),
    #[error("manifest.json must be the first entry of a pvrdma-doctor bundle, found {first:?} first")]
    ManifestNotFirst { first: String },
    #[error("{0} is neither a pvrdma-doctor bundle (manifest.json first), an ESXi vm-support bundle (esx-<host>-<date>--<time>-<pid>/commands/) nor a capture folder")]
    NotABundle(std::path::PathBuf),
    #[error("host name {0:?} cannot be a folder name in a bundle (empty, `.`/`..`, leading dot, `/`, `\\` or NUL)")]
    BadHostName(String),
}

/// Bounds on what reading a bundle may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// One kept entry.
    pub max_entry_bytes: u64,
    /// All kept entries together.
    pub max_kept_bytes: u64,
    /// The decompressed stream of a pvrdma-doctor bundle.
    pub max_bundle_bytes: u64,
    /// The decompressed stream of a vm-support bundle, most of which is skipped unread
    /// (logs, the VSI dump); it only bounds the time spent.
    pub max_vm_support_bytes: u64,
    pub max_entries: usize,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_entry_bytes: 64 * 1024 * 1024,
            max_kept_bytes: 1024 * 1024 * 1024,
            max_bundle_bytes: 1024 * 1024 * 1024,
            max_vm_support_bytes: 64 * 1024 * 1024 * 1024,
            max_entries: 200_000,
        }
    }
}

/// A file from a bundle: path relative to the bundle root, `/`-separated, and its bytes.
pub(crate) type Entries = Vec<(String, Vec<u8>)>;

/// What an archive is, decided by its first file entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArchiveKind {
    /// A pvrdma-doctor bundle: every entry is kept; links and special files are refused.
    Bundle,
    /// An ESXi vm-support bundle: a mirror of the host's file system, most of it skipped
    /// unread; links and special files are skipped, never followed.
    VmSupport,
}

/// How to tell the archive kinds apart and what to keep; supplied by the dispatcher.
pub(crate) struct ArchiveRules<'a> {
    /// The kind an archive whose first file entry has this path is, if any.
    pub(crate) classify: &'a dyn Fn(&str) -> Option<ArchiveKind>,
    /// Whether a vm-support entry is read (everything else is skipped unread).
    pub(crate) vm_support_wanted: &'a dyn Fn(&str) -> bool,
}

/// The kept entries of an archive, or `None` when its first entry fits no known kind.
type Archive = Option<(ArchiveKind, Entries)>;

/// Counts decompressed bytes and fails the read once the limit is passed. The limit is
/// shared so it can be raised once the first entry proves a vm-support bundle (gigabytes
/// of logs, skipped unread); the flag survives the tar crate wrapping the I/O error.
struct Capped<R> {
    inner: R,
    read: u64,
    cap: StreamCap,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read = self.read.saturating_add(n as u64);
        if self.read > self.cap.limit.get() {
            self.cap.tripped.set(true);
            return Err(std::io::Error::other("decompressed size cap exceeded"));
        }
        Ok(n)
    }
}

/// The cap on the decompressed stream, shared between the reader that counts and the
/// loop that raises it and tells a tripped cap from damage.
#[derive(Clone)]
struct StreamCap {
    limit: Rc<Cell<u64>>,
    tripped: Rc<Cell<bool>>,
}

impl StreamCap {
    fn too_large(&self) -> anyhow::Error {
        BundleError::TooLarge {
            what: "the archive".to_string(),
            cap: self.limit.get(),
        }
        .into()
    }

    /// A failed read as the user is told it: the cap when it tripped, else `damage`.
    fn read_error(&self, e: std::io::Error, damage: impl FnOnce() -> String) -> anyhow::Error {
        if self.tripped.get() {
            return self.too_large();
        }
        anyhow::Error::from(e).context(damage())
    }
}

/// Reads a gzip'd tar archive under `limits`, keeping the entries `rules` ask for.
pub(crate) fn read_archive(
    file: std::fs::File,
    limits: &ReadLimits,
    rules: &ArchiveRules<'_>,
) -> anyhow::Result<Archive> {
    // Until the first entry says this is a vm-support bundle, the bundle cap applies.
    let cap = StreamCap {
        limit: Rc::new(Cell::new(limits.max_bundle_bytes)),
        tripped: Rc::new(Cell::new(false)),
    };
    let mut archive = tar::Archive::new(Capped {
        inner: flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file)),
        read: 0,
        cap: cap.clone(),
    });
    // Decided by the first file entry.
    let mut kind: Option<ArchiveKind> = None;
    let mut kept = Kept {
        limits,
        entries: Vec::new(),
        bytes: 0,
        seen: BTreeSet::new(),
    };
    let mut count = 0usize;
    let entries = archive.entries().context("not a readable tar archive")?;
    for entry in entries {
        let mut entry = entry.map_err(|e| cap.read_error(e, || "damaged archive".to_string()))?;
        count += 1;
        if count > limits.max_entries {
            return Err(BundleError::TooLarge {
                what: "the archive's entry count".to_string(),
                cap: limits.max_entries as u64,
            }
            .into());
        }
        let raw_path = entry
            .path()
            .map(|p| p.into_owned())
            .context("an entry has an unreadable path")?;
        let path = clean_path(&raw_path)?;
        let entry_type = entry.header().entry_type();
        if path.is_empty() {
            continue;
        }
        let vm_support = match kind {
            Some(k) => k == ArchiveKind::VmSupport,
            None => {
                let found = (rules.classify)(&path);
                match found {
                    Some(ArchiveKind::Bundle) => cap.limit.set(limits.max_bundle_bytes),
                    Some(ArchiveKind::VmSupport) => cap.limit.set(limits.max_vm_support_bytes),
                    // A leading folder entry says nothing yet about the kind.
                    None if entry_type.is_dir() => continue,
                    None => return Ok(None),
                }
                kind = found;
                kind == Some(ArchiveKind::VmSupport)
            }
        };
        if !holds_a_file(entry_type, &path, vm_support)? {
            continue;
        }
        if vm_support && !(rules.vm_support_wanted)(&path) {
            continue;
        }
        kept.add(path, &mut entry, &cap)?;
    }
    if cap.tripped.get() {
        return Err(cap.too_large());
    }
    Ok(kind.map(|k| (k, kept.entries)))
}

/// Whether an entry of this type is a file to read. Folders are skipped; a link or a
/// special file refuses a pvrdma-doctor bundle, and is skipped in a vm-support bundle.
fn holds_a_file(entry_type: tar::EntryType, path: &str, vm_support: bool) -> Result<bool, BundleError> {
    match entry_type {
        tar::EntryType::Regular | tar::EntryType::Continuous => Ok(true),
        tar::EntryType::Directory | tar::EntryType::XGlobalHeader => Ok(false),
        // vm-support mirrors the host file system, where /vmfs/volumes/<name> is a link
        // to the volume: skipped, never followed.
        _ if vm_support => Ok(false),
        tar::EntryType::Symlink => Err(BundleError::Link {
            path: path.to_string(),
            kind: "symbolic link",
        }),
        tar::EntryType::Link => Err(BundleError::Link {
            path: path.to_string(),
            kind: "hard link",
        }),
        other => Err(BundleError::UnsupportedEntry {
            path: path.to_string(),
            kind: format!("{other:?}"),
        }),
    }
}

/// The entries kept so far, under the per-entry and total limits.
struct Kept<'a> {
    limits: &'a ReadLimits,
    entries: Entries,
    bytes: u64,
    seen: BTreeSet<String>,
}

impl Kept<'_> {
    /// Reads and keeps one entry: each path once, none over the entry limit, all of them
    /// under the total.
    fn add<R: Read>(&mut self, path: String, entry: &mut tar::Entry<'_, R>, cap: &StreamCap) -> anyhow::Result<()> {
        let limits = self.limits;
        if !self.seen.insert(path.clone()) {
            return Err(BundleError::Duplicate { path }.into());
        }
        let entry_too_large = |path: &str| -> anyhow::Error {
            BundleError::TooLarge {
                what: format!("entry {path:?}"),
                cap: limits.max_entry_bytes,
            }
            .into()
        };
        if entry.header().size().unwrap_or(u64::MAX) > limits.max_entry_bytes {
            return Err(entry_too_large(&path));
        }
        let mut data = Vec::new();
        if let Err(e) = entry.take(limits.max_entry_bytes + 1).read_to_end(&mut data) {
            return Err(cap.read_error(e, || format!("damaged archive: cannot read entry {path:?}")));
        }
        if data.len() as u64 > limits.max_entry_bytes {
            return Err(entry_too_large(&path));
        }
        self.bytes += data.len() as u64;
        if self.bytes > limits.max_kept_bytes {
            return Err(BundleError::TooLarge {
                what: "the kept entries".to_string(),
                cap: limits.max_kept_bytes,
            }
            .into());
        }
        self.entries.push((path, data));
        Ok(())
    }
}

/// The first component of an entry path (`<top>` of `<top>/...`).
pub(crate) fn top_component(path: &str) -> &str {
    path.split('/').next().unwrap_or_default()
}

/// The entry path as `a/b/c`, or a refusal when it is absolute or climbs out with `..`.
/// `.` components are dropped; an empty result means the archive root itself.
fn clean_path(path: &Path) -> Result<String, BundleError> {
    let shown = || path.to_string_lossy().into_owned();
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => match part.to_str() {
                Some(p) if !p.contains('\\') => parts.push(p),
                _ => return Err(BundleError::PathEscape { path: shown() }),
            },
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(BundleError::PathEscape { path: shown() })
            }
        }
    }
    Ok(parts.join("/"))
}

/// How [`walk_dir`] reads a folder.
pub(crate) struct Walk<'a> {
    pub(crate) limits: &'a ReadLimits,
    /// Put before every path relative to the root (`<top>/` for vm-support), so the
    /// entries look like the archive's.
    pub(crate) prefix: &'a str,
    /// Links and special files are skipped (a vm-support folder mirrors a host's file
    /// system, where `/vmfs/volumes/<name>` links to the volume) instead of refused.
    pub(crate) skip_links: bool,
    /// Whether to go into a folder (path relative to the root).
    pub(crate) descend: &'a dyn Fn(&str) -> bool,
    /// Whether to read a file (path with the prefix).
    pub(crate) keep: &'a dyn Fn(&str) -> bool,
    /// What a file is called in the "too large" refusal: `file` or `entry`.
    pub(crate) noun: &'static str,
}

/// Reads the files below `root` that `walk` keeps into `out`, never following a link,
/// under the same limits as an archive; `kept` counts bytes across several walks.
pub(crate) fn walk_dir(root: &Path, walk: &Walk<'_>, kept: &mut u64, out: &mut Entries) -> anyhow::Result<()> {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let listing = std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
        for item in listing {
            let item = item?;
            let ft = item.file_type()?;
            let full = item.path();
            if ft.is_symlink() && walk.skip_links {
                continue;
            }
            let rel = clean_path(full.strip_prefix(root).unwrap_or(&full))?;
            let path = format!("{}{rel}", walk.prefix);
            if ft.is_symlink() {
                return Err(BundleError::Link {
                    path,
                    kind: "symbolic link",
                }
                .into());
            }
            if ft.is_dir() {
                if (walk.descend)(&rel) {
                    stack.push(full);
                }
                continue;
            }
            if !ft.is_file() {
                if walk.skip_links {
                    continue;
                }
                return Err(BundleError::UnsupportedEntry {
                    path,
                    kind: "special file".to_string(),
                }
                .into());
            }
            if !(walk.keep)(&path) {
                continue;
            }
            let len = item.metadata()?.len();
            *kept = kept.saturating_add(len);
            if len > walk.limits.max_entry_bytes || *kept > walk.limits.max_kept_bytes {
                return Err(BundleError::TooLarge {
                    what: format!("{} {path:?}", walk.noun),
                    cap: walk.limits.max_entry_bytes.min(walk.limits.max_kept_bytes),
                }
                .into());
            }
            let data = std::fs::read(&full).with_context(|| format!("cannot read {}", full.display()))?;
            out.push((path, data));
        }
    }
    Ok(())
}
