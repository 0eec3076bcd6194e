//! Reads captured outputs back from a directory: test samples, an unpacked support
//! bundle, or a directory an engineer filled by hand. Same layout everywhere:
//!
//! ```text
//! <root>/
//!   <host>/
//!     <catalogue-id>.txt          stdout, verbatim
//!     <catalogue-id>.stderr.txt   stderr (absent = empty)
//!     <catalogue-id>.exit         exit status in decimal (absent = 0)
//!     host-error.json             {"kind": "...", "message": "..."} when the host failed
//! ```
//!
//! A root that holds catalogue files itself is read as a single host named after it.
use super::{CaptureSource, ErrorKind, Failure, HostCapture, RawOutput};
use crate::catalogue::CATALOGUE;
use std::fs;
use std::path::Path;

/// File holding a host's connection failure.
pub const HOST_ERROR_FILE: &str = "host-error.json";

/// Reads every host below `root`, sorted by host name.
pub fn read_dir(root: &Path, source: CaptureSource) -> anyhow::Result<Vec<HostCapture>> {
    use anyhow::Context;
    let meta = fs::metadata(root).with_context(|| format!("cannot read {}", root.display()))?;
    anyhow::ensure!(meta.is_dir(), "{} is not a directory", root.display());
    if is_host_dir(root) {
        let name = root
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "host".to_string());
        return Ok(vec![read_host(root, &name, source)?]);
    }
    let dirs = host_dirs(root)?;
    if !dirs.is_empty() && !dirs.iter().any(|(_, d)| is_host_dir(d)) {
        // One level too high (`analyze samples/`): the folders below hold hosts
        // themselves; name them rather than report every folder as an empty host.
        let mut nested: Vec<String> = dirs
            .iter()
            .filter(|(_, d)| host_dirs(d).is_ok_and(|inner| inner.iter().any(|(_, h)| is_host_dir(h))))
            .map(|(_, d)| d.display().to_string())
            .collect();
        nested.sort();
        if let Some(first) = nested.first() {
            let more = match nested.len() {
                1 => String::new(),
                n => format!(
                    " ({n} such folders: {}{})",
                    nested.iter().take(6).cloned().collect::<Vec<_>>().join(", "),
                    if n > 6 { ", ..." } else { "" }
                ),
            };
            anyhow::bail!(
                "{} holds folders of hosts, not hosts: analyse one of them, e.g. `pvrdma-doctor analyze {first}`{more}",
                root.display()
            );
        }
    }
    let mut hosts = Vec::new();
    for (name, dir) in dirs {
        hosts.push(read_host(&dir, &name, source)?);
    }
    anyhow::ensure!(
        !hosts.is_empty(),
        "{} holds no host directories (expected <host>/<command-id>.txt files; see `pvrdma-doctor --list-checks` for the ids)",
        root.display()
    );
    hosts.sort_by(|a, b| a.host.cmp(&b.host));
    Ok(hosts)
}

/// The host directories directly below `root` (name, path): every subdirectory except
/// hidden ones. Files beside them (a bundle's manifest, reports) are not hosts.
pub fn host_dirs(root: &Path) -> anyhow::Result<Vec<(String, std::path::PathBuf)>> {
    use anyhow::Context;
    let mut dirs = Vec::new();
    for entry in fs::read_dir(root).with_context(|| format!("cannot list {}", root.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_dir() && !name.starts_with('.') {
            dirs.push((name, entry.path()));
        }
    }
    Ok(dirs)
}

fn is_host_dir(dir: &Path) -> bool {
    dir.join(HOST_ERROR_FILE).is_file() || CATALOGUE.iter().any(|s| dir.join(format!("{}.txt", s.id)).is_file())
}

/// Reads one host directory.
pub fn read_host(dir: &Path, host: &str, source: CaptureSource) -> anyhow::Result<HostCapture> {
    use anyhow::Context;
    let mut capture = HostCapture::new(host, source);
    let error_file = dir.join(HOST_ERROR_FILE);
    if error_file.is_file() {
        let text = fs::read_to_string(&error_file)?;
        let failure: Failure = serde_json::from_str(&text)
            .with_context(|| format!("{} is not {{\"kind\": ..., \"message\": ...}}", error_file.display()))?;
        capture.error = Some(failure);
    }
    for spec in CATALOGUE {
        let stdout_path = dir.join(format!("{}.txt", spec.id));
        if !stdout_path.is_file() {
            continue;
        }
        let stdout = read_text(&stdout_path)?;
        let stderr_path = dir.join(format!("{}.stderr.txt", spec.id));
        let stderr = if stderr_path.is_file() {
            read_text(&stderr_path)?
        } else {
            String::new()
        };
        let exit_path = dir.join(format!("{}.exit", spec.id));
        let exit_status = if exit_path.is_file() {
            let text = fs::read_to_string(&exit_path)?;
            Some(text.trim().parse::<u32>().with_context(|| {
                format!(
                    "{} must hold one exit status number, found {:?}",
                    exit_path.display(),
                    text.trim()
                )
            })?)
        } else {
            Some(0)
        };
        capture.outputs.insert(
            spec.id.to_string(),
            RawOutput {
                stdout,
                stderr,
                exit_status,
                ..RawOutput::new(spec.id, spec.command)
            },
        );
    }
    if capture.outputs.is_empty() && capture.error.is_none() {
        capture.error = Some(Failure::new(
            ErrorKind::Config,
            format!(
                "{} holds no captured outputs; nothing to analyse for this host",
                dir.display()
            ),
        ));
    }
    Ok(capture)
}

/// Command output is text, but a capture may hold stray bytes; keep them visible rather
/// than refusing the whole file.
fn read_text(path: &Path) -> anyhow::Result<String> {
    use anyhow::Context;
    let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
