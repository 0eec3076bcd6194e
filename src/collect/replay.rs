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
    let mut hosts = Vec::new();
    for (name, dir) in host_dirs(root)? {
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
        if let Some(raw) = read_output(dir, spec.id, spec.id, spec.command)? {
            capture.outputs.insert(spec.id.to_string(), raw);
        }
    }
    let probe_dir = dir.join(crate::probe::PROBE_ID);
    if probe_dir.is_dir() {
        // `<host>/vmkping/<peer>.txt`: what the host's --probe printed for each peer.
        let mut probe = crate::probe::ProbeCapture::default();
        for entry in fs::read_dir(&probe_dir).with_context(|| format!("cannot list {}", probe_dir.display()))? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            let Some(peer) = name.strip_suffix(".txt").filter(|p| !p.ends_with(".stderr")) else {
                continue;
            };
            let id = crate::probe::PROBE_ID;
            if let Some(raw) = read_output(&probe_dir, peer, id, id)? {
                probe.peers.push(peer.to_string());
                probe.outputs.insert(peer.to_string(), raw);
            }
        }
        probe.peers.sort();
        capture.probe = Some(probe);
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

/// `<stem>.txt` with its `.stderr.txt` and `.exit` as one output of command `id`; `None`
/// when there is no `<stem>.txt`.
fn read_output(dir: &Path, stem: &str, id: &str, command: &str) -> anyhow::Result<Option<RawOutput>> {
    use anyhow::Context;
    let stdout_path = dir.join(format!("{stem}.txt"));
    if !stdout_path.is_file() {
        return Ok(None);
    }
    let stdout = read_text(&stdout_path)?;
    let stderr_path = dir.join(format!("{stem}.stderr.txt"));
    let stderr = if stderr_path.is_file() {
        read_text(&stderr_path)?
    } else {
        String::new()
    };
    let exit_path = dir.join(format!("{stem}.exit"));
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
    Ok(Some(RawOutput {
        stdout,
        stderr,
        exit_status,
        ..RawOutput::new(id, command)
    }))
}

/// Command output is text, but a capture may hold stray bytes; keep them visible rather
/// than refusing the whole file.
fn read_text(path: &Path) -> anyhow::Result<String> {
    use anyhow::Context;
    let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
