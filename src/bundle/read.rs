//! Reads a support bundle (`.tar.gz` or unpacked), an ESXi vm-support bundle, or a plain
//! capture folder back into [`HostCapture`]s.
//!
//! A `.tar.gz` is streamed and its entries kept in memory, never unpacked to disk: a
//! bundle is kilobytes to a few megabytes, nothing has to be cleaned up afterwards, and a
//! hostile entry path (`../`, absolute, a link) can never write anything because nothing
//! is written at all; it is refused instead. Memory stays bounded by [`ReadLimits`]:
//! per entry, for all kept entries, and for the decompressed stream as a whole (the
//! defence against a gzip bomb, which costs time even when nothing is kept).
use super::manifest::{sha256_hex, Manifest, FORMAT_VERSION, MANIFEST_FILE, MANIFEST_SUM_FILE};
use super::{host_dir, BundleError};
use crate::collect::{replay, CaptureSource, HostCapture, RawOutput, VmxFile};
use crate::vmsupport;
use anyhow::Context;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Component, Path};
use std::rc::Rc;

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

/// Reads a .tar.gz bundle or a vm-support .tgz/folder, or a plain directory (delegating
/// to collect::replay), verifying sha256s against the manifest, refusing path escapes,
/// links and expansion beyond a cap. Missing ids get their reason from the manifest.
pub fn load_captures(path: &Path) -> anyhow::Result<Vec<HostCapture>> {
    load_captures_with(path, &ReadLimits::default())
}

/// [`load_captures`] with explicit limits.
pub fn load_captures_with(path: &Path, limits: &ReadLimits) -> anyhow::Result<Vec<HostCapture>> {
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if meta.is_dir() {
        if path.join(MANIFEST_FILE).is_file() {
            let entries = read_bundle_dir(path, limits)?;
            return from_bundle_entries(entries);
        }
        if vmsupport::is_vm_support_dir(path) {
            return vmsupport::read_dir(path, limits);
        }
        return replay::read_dir(path, CaptureSource::Directory);
    }
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut magic = [0u8; 2];
    let is_gzip = (&file).read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
    if !is_gzip {
        return Err(BundleError::NotABundle(path.to_path_buf()).into());
    }
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    match read_archive(file, limits)? {
        Archive::Bundle(entries) => from_bundle_entries(entries),
        Archive::VmSupport(entries) => vmsupport::from_entries(entries),
        Archive::Unknown => Err(BundleError::NotABundle(path.to_path_buf()).into()),
    }
}

/// A file from a bundle: path relative to the bundle root, `/`-separated, and its bytes.
pub(crate) type Entries = Vec<(String, Vec<u8>)>;

enum Archive {
    Bundle(Entries),
    VmSupport(Entries),
    Unknown,
}

/// Counts decompressed bytes and fails the read once the limit is passed. The limit is
/// shared so it can be raised once the first entry proves a vm-support bundle (gigabytes
/// of logs, skipped unread); the flag survives the tar crate wrapping the I/O error.
struct Capped<R> {
    inner: R,
    read: u64,
    limit: Rc<Cell<u64>>,
    tripped: Rc<Cell<bool>>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read = self.read.saturating_add(n as u64);
        if self.read > self.limit.get() {
            self.tripped.set(true);
            return Err(std::io::Error::other("decompressed size cap exceeded"));
        }
        Ok(n)
    }
}

fn read_archive(file: std::fs::File, limits: &ReadLimits) -> anyhow::Result<Archive> {
    let tripped = Rc::new(Cell::new(false));
    // Until the first entry says this is a vm-support bundle, the bundle cap applies.
    let limit = Rc::new(Cell::new(limits.max_bundle_bytes));
    let capped = Capped {
        inner: flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file)),
        read: 0,
        limit: Rc::clone(&limit),
        tripped: Rc::clone(&tripped),
    };
    let mut archive = tar::Archive::new(capped);
    let too_large = || -> anyhow::Error {
        BundleError::TooLarge {
            what: "the archive".to_string(),
            cap: limit.get(),
        }
        .into()
    };

    // Some(true) = pvrdma-doctor bundle, Some(false) = vm-support; decided by the first entry.
    let mut kind: Option<bool> = None;
    let mut kept: Entries = Vec::new();
    let mut kept_bytes = 0u64;
    let mut seen = BTreeSet::new();
    let mut count = 0usize;
    let entries = archive.entries().context("not a readable tar archive")?;
    for entry in entries {
        let mut entry = match entry {
            Ok(e) => e,
            Err(_) if tripped.get() => return Err(too_large()),
            Err(e) => return Err(anyhow::Error::from(e).context("damaged archive")),
        };
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
            Some(bundle) => !bundle,
            None => {
                if path == MANIFEST_FILE {
                    kind = Some(true);
                    limit.set(limits.max_bundle_bytes);
                } else if vmsupport::top_dir_host(top_component(&path)).is_some() {
                    kind = Some(false);
                    limit.set(limits.max_vm_support_bytes);
                } else if entry_type.is_dir() {
                    // A leading folder entry says nothing yet about the kind.
                    continue;
                } else {
                    return Ok(Archive::Unknown);
                }
                kind == Some(false)
            }
        };
        match entry_type {
            tar::EntryType::Regular | tar::EntryType::Continuous => {}
            tar::EntryType::Directory | tar::EntryType::XGlobalHeader => continue,
            tar::EntryType::Symlink | tar::EntryType::Link => {
                if vm_support {
                    // vm-support mirrors the host file system, where /vmfs/volumes/<name>
                    // is a link to the volume: skipped, never followed.
                    continue;
                }
                let kind = if entry_type == tar::EntryType::Symlink {
                    "symbolic link"
                } else {
                    "hard link"
                };
                return Err(BundleError::Link { path, kind }.into());
            }
            other => {
                if vm_support {
                    continue;
                }
                return Err(BundleError::UnsupportedEntry {
                    path,
                    kind: format!("{other:?}"),
                }
                .into());
            }
        }
        if vm_support && !vmsupport::wanted(&path) {
            continue;
        }
        if !seen.insert(path.clone()) {
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
        if let Err(e) = (&mut entry).take(limits.max_entry_bytes + 1).read_to_end(&mut data) {
            if tripped.get() {
                return Err(too_large());
            }
            return Err(anyhow::Error::from(e).context(format!("damaged archive: cannot read entry {path:?}")));
        }
        if data.len() as u64 > limits.max_entry_bytes {
            return Err(entry_too_large(&path));
        }
        kept_bytes += data.len() as u64;
        if kept_bytes > limits.max_kept_bytes {
            return Err(BundleError::TooLarge {
                what: "the kept entries".to_string(),
                cap: limits.max_kept_bytes,
            }
            .into());
        }
        kept.push((path, data));
    }
    if tripped.get() {
        return Err(too_large());
    }
    Ok(match kind {
        Some(true) => Archive::Bundle(kept),
        Some(false) => Archive::VmSupport(kept),
        None => Archive::Unknown,
    })
}

fn top_component(path: &str) -> &str {
    path.split('/').next().unwrap_or_default()
}

/// The entry path as `a/b/c`, or a refusal when it is absolute or climbs out with `..`.
/// `.` components are dropped; an empty result means the archive root itself.
pub(crate) fn clean_path(path: &Path) -> Result<String, BundleError> {
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

/// Reads an unpacked bundle folder into entries, under the same rules as the archive.
fn read_bundle_dir(root: &Path, limits: &ReadLimits) -> anyhow::Result<Entries> {
    let mut out = Vec::new();
    let mut total = 0u64;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let listing = std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
        for item in listing {
            let item = item?;
            let full = item.path();
            let rel = full.strip_prefix(root).unwrap_or(&full);
            let rel_s = clean_path(rel)?;
            let ft = item.file_type()?;
            if ft.is_symlink() {
                return Err(BundleError::Link {
                    path: rel_s,
                    kind: "symbolic link",
                }
                .into());
            }
            if ft.is_dir() {
                stack.push(full);
                continue;
            }
            if !ft.is_file() {
                return Err(BundleError::UnsupportedEntry {
                    path: rel_s,
                    kind: "special file".to_string(),
                }
                .into());
            }
            let len = item.metadata()?.len();
            total = total.saturating_add(len);
            if len > limits.max_entry_bytes || total > limits.max_kept_bytes {
                return Err(BundleError::TooLarge {
                    what: format!("entry {rel_s:?}"),
                    cap: limits.max_entry_bytes.min(limits.max_kept_bytes),
                }
                .into());
            }
            let data = std::fs::read(&full).with_context(|| format!("cannot read {}", full.display()))?;
            out.push((rel_s, data));
        }
    }
    // The manifest leads, as in the archive.
    out.sort_by(|a, b| (a.0 != MANIFEST_FILE, &a.0).cmp(&(b.0 != MANIFEST_FILE, &b.0)));
    Ok(out)
}

/// Verifies a pvrdma-doctor bundle's entries against its manifest and rebuilds the captures.
fn from_bundle_entries(entries: Entries) -> anyhow::Result<Vec<HostCapture>> {
    let mut iter = entries.into_iter();
    let Some((first, manifest_bytes)) = iter.next() else {
        return Err(BundleError::BadManifest("the bundle is empty".to_string()).into());
    };
    if first != MANIFEST_FILE {
        return Err(BundleError::ManifestNotFirst { first }.into());
    }
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for (path, data) in iter {
        if path == MANIFEST_FILE {
            return Err(BundleError::Duplicate { path }.into());
        }
        files.insert(path, data);
    }
    // Damage to the manifest would otherwise go unnoticed: it is what vouches for the rest.
    let sum = files
        .remove(MANIFEST_SUM_FILE)
        .ok_or_else(|| BundleError::MissingEntry {
            path: MANIFEST_SUM_FILE.to_string(),
        })?;
    let expected = String::from_utf8_lossy(&sum);
    if expected.split_whitespace().next() != Some(sha256_hex(&manifest_bytes).as_str()) {
        return Err(BundleError::ChecksumMismatch {
            path: MANIFEST_FILE.to_string(),
        }
        .into());
    }
    let manifest: Manifest =
        serde_json::from_slice(&manifest_bytes).map_err(|e| BundleError::BadManifest(e.to_string()))?;
    if manifest.format_version > FORMAT_VERSION {
        return Err(BundleError::BadManifest(format!(
            "format version {} is newer than this pvrdma-doctor reads ({FORMAT_VERSION}); use a newer pvrdma-doctor",
            manifest.format_version
        ))
        .into());
    }
    let listed: BTreeMap<&str, &str> = manifest
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.sha256.as_str()))
        .collect();
    for (path, data) in &files {
        match listed.get(path.as_str()) {
            None => return Err(BundleError::NotInManifest { path: path.clone() }.into()),
            Some(sum) if *sum != sha256_hex(data) => {
                return Err(BundleError::ChecksumMismatch { path: path.clone() }.into())
            }
            Some(_) => {}
        }
    }
    for path in listed.keys() {
        if !files.contains_key(*path) {
            return Err(BundleError::MissingEntry { path: path.to_string() }.into());
        }
    }
    let text = |path: &str| -> Option<String> { files.get(path).map(|b| String::from_utf8_lossy(b).into_owned()) };

    let mut captures = Vec::with_capacity(manifest.hosts.len());
    for host in &manifest.hosts {
        let dir = host_dir(&host.host)?;
        let mut capture = HostCapture::new(host.host.clone(), CaptureSource::Bundle);
        capture.error = host.error.clone();
        for cmd in &host.commands {
            let stdout_path = format!("{dir}/{}.txt", cmd.id);
            let stdout = text(&stdout_path).ok_or_else(|| BundleError::MissingEntry {
                path: stdout_path.clone(),
            })?;
            let stderr = text(&format!("{dir}/{}.stderr.txt", cmd.id)).unwrap_or_default();
            if sha256_hex(stdout.as_bytes()) != cmd.stdout_sha256 {
                return Err(BundleError::ChecksumMismatch { path: stdout_path }.into());
            }
            capture.outputs.insert(
                cmd.id.clone(),
                RawOutput {
                    id: cmd.id.clone(),
                    command: cmd.command.clone(),
                    stdout,
                    stderr,
                    exit_status: cmd.exit_status,
                    duration_ms: cmd.duration_ms,
                    truncated: cmd.truncated,
                    timeout_hit: cmd.timeout_hit,
                    failure: cmd.failure.clone(),
                },
            );
        }
        for missing in host.missing.iter().filter(|m| !m.inferred) {
            capture.missing.insert(missing.id.clone(), missing.reason.clone());
        }
        for vmx in &host.vmx_files {
            let content = text(&vmx.file).ok_or_else(|| BundleError::MissingEntry { path: vmx.file.clone() })?;
            capture.vmx_files.push(VmxFile {
                path: vmx.path.clone(),
                content,
            });
        }
        captures.push(capture);
    }
    Ok(captures)
}
