//! Reads captured outputs back from a directory on disk: test samples, or a directory an
//! engineer filled by hand; one capture folder per host (layout in [`pvrdma_engine::capture::folder`]).
//!
//! A root that holds catalogue files itself is read as a single host named after it.
use pvrdma_engine::capture::folder::{self, HOST_ERROR_FILE};
use pvrdma_engine::capture::{CaptureSource, ErrorKind, Failure, HostCapture, RawOutput};
use pvrdma_engine::catalogue::CATALOGUE;
use std::fs;
use std::path::Path;

/// Reads every host below `root`, sorted by host name.
pub(crate) fn read_dir(root: &Path, source: CaptureSource) -> anyhow::Result<Vec<HostCapture>> {
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
pub(crate) fn host_dirs(root: &Path) -> anyhow::Result<Vec<(String, std::path::PathBuf)>> {
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

/// Every file of one host directory, by file name (the demo serves them as they are).
pub(crate) fn read_files(dir: &Path) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let mut files = std::collections::BTreeMap::new();
    for f in fs::read_dir(dir)? {
        let f = f?;
        if f.file_type()?.is_file() {
            files.insert(f.file_name().to_string_lossy().into_owned(), read_text(&f.path())?);
        }
    }
    Ok(files)
}

fn is_host_dir(dir: &Path) -> bool {
    folder::is_host_folder(&|name| dir.join(name).is_file())
}

/// Reads one host directory.
pub fn read_host(dir: &Path, host: &str, source: CaptureSource) -> anyhow::Result<HostCapture> {
    use anyhow::Context;
    let mut capture = HostCapture::new(host, source);
    let error_file = dir.join(HOST_ERROR_FILE);
    if error_file.is_file() {
        let text = fs::read_to_string(&error_file)?;
        let failure: Failure = folder::read_host_error(&text)
            .with_context(|| format!("{} is not {{\"kind\": ..., \"message\": ...}}", error_file.display()))?;
        capture.error = Some(failure);
    }
    for spec in CATALOGUE {
        if let Some(raw) = read_output(dir, spec.id, spec.id, spec.command)? {
            capture.outputs.insert(spec.id.to_string(), raw);
        }
    }
    let probe_dir = dir.join(pvrdma_engine::capture::PROBE_ID);
    if probe_dir.is_dir() {
        // `<host>/vmkping/<peer>.txt`: what the host's --probe printed for each peer.
        let mut probe = pvrdma_engine::capture::ProbeCapture::default();
        for entry in fs::read_dir(&probe_dir).with_context(|| format!("cannot list {}", probe_dir.display()))? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            let Some(peer) = folder::stdout_stem(&name) else {
                continue;
            };
            let id = pvrdma_engine::capture::PROBE_ID;
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

/// The files of `<stem>` in `dir` (layout in [`pvrdma_engine::capture::folder`]) as one output of command
/// `id`; `None` when there is no `<stem>.txt`.
fn read_output(dir: &Path, stem: &str, id: &str, command: &str) -> anyhow::Result<Option<RawOutput>> {
    use anyhow::Context;
    let get = |name: &str| -> anyhow::Result<Option<String>> {
        let path = dir.join(name);
        if path.is_file() {
            read_text(&path).map(Some)
        } else {
            Ok(None)
        }
    };
    let Some(files) = folder::read_output(stem, &get)? else {
        return Ok(None);
    };
    let exit_status = Some(files.exit_status().with_context(|| {
        format!(
            "{} must hold one exit status number, found {:?}",
            dir.join(folder::exit_file(stem)).display(),
            files.exit.as_deref().unwrap_or_default().trim()
        )
    })?);
    let folder::OutputFiles { stdout, stderr, .. } = files;
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
