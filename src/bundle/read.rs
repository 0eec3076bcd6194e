//! Reads a pvrdma-doctor support bundle (entries of a `.tar.gz`, or an unpacked folder)
//! back into [`HostCapture`]s, verifying every file against the manifest. Telling a bundle
//! from a vm-support bundle or a capture folder is the dispatcher's job (`offline`); the
//! archive plumbing and limits are in `archive`.
use super::manifest::{
    sha256_hex, Manifest, ManifestCommand, ManifestHost, FORMAT_VERSION, MANIFEST_FILE, MANIFEST_SUM_FILE,
};
use super::{host_dir, BundleError};
use crate::archive::{walk_dir, Entries, ReadLimits, Walk};
use pvrdma_engine::capture::{folder, CaptureSource, HostCapture, RawOutput, VmxFile};
use std::collections::BTreeMap;
use std::path::Path;

/// Reads an unpacked bundle folder into entries, under the same rules as the archive.
pub(crate) fn read_bundle_dir(root: &Path, limits: &ReadLimits) -> anyhow::Result<Entries> {
    let mut out = Vec::new();
    let walk = Walk {
        limits,
        prefix: "",
        skip_links: false,
        descend: &|_| true,
        keep: &|_| true,
        noun: "entry",
    };
    walk_dir(root, &walk, &mut 0, &mut out)?;
    // The manifest leads, as in the archive.
    out.sort_by(|a, b| (a.0 != MANIFEST_FILE, &a.0).cmp(&(b.0 != MANIFEST_FILE, &b.0)));
    Ok(out)
}

/// Verifies a pvrdma-doctor bundle's entries against its manifest and rebuilds the captures.
pub(crate) fn from_bundle_entries(entries: Entries) -> anyhow::Result<Vec<HostCapture>> {
    let (manifest, files) = verified(entries)?;
    manifest.hosts.iter().map(|host| host_capture(host, &files)).collect()
}

/// The manifest and the files it vouches for: the manifest first and once, its own
/// checksum right, a format this version reads, and every file listed with its checksum
/// and present.
fn verified(entries: Entries) -> anyhow::Result<(Manifest, BTreeMap<String, Vec<u8>>)> {
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
    Ok((manifest, files))
}

/// One host's capture, rebuilt from its manifest entry and the bundle's files.
fn host_capture(host: &ManifestHost, files: &BTreeMap<String, Vec<u8>>) -> anyhow::Result<HostCapture> {
    let dir = host_dir(&host.host)?;
    let mut capture = HostCapture::new(host.host.clone(), CaptureSource::Bundle);
    capture.error = host.error.clone();
    for cmd in &host.commands {
        let raw = bundled_output(files, &format!("{dir}/{}", cmd.id), cmd, &cmd.id)?;
        capture.outputs.insert(cmd.id.clone(), raw);
    }
    if let Some(probe) = &host.probe {
        let mut p = pvrdma_engine::capture::ProbeCapture {
            peers: probe.peers.clone(),
            ..Default::default()
        };
        for cmd in &probe.commands {
            let stem = format!("{dir}/{}/{}", pvrdma_engine::capture::PROBE_ID, host_dir(&cmd.id)?);
            p.outputs.insert(
                cmd.id.clone(),
                bundled_output(files, &stem, cmd, pvrdma_engine::capture::PROBE_ID)?,
            );
        }
        for m in &probe.missing {
            p.missing.insert(m.id.clone(), m.reason.clone());
        }
        capture.probe = Some(p);
    }
    for missing in host.missing.iter().filter(|m| !m.inferred) {
        capture.missing.insert(missing.id.clone(), missing.reason.clone());
    }
    for vmx in &host.vmx_files {
        let content = text(files, &vmx.file).ok_or_else(|| BundleError::MissingEntry { path: vmx.file.clone() })?;
        capture.vmx_files.push(VmxFile {
            path: vmx.path.clone(),
            content,
        });
    }
    Ok(capture)
}

fn text(files: &BTreeMap<String, Vec<u8>>, path: &str) -> Option<String> {
    files.get(path).map(|b| String::from_utf8_lossy(b).into_owned())
}

/// One output from `<stem>.txt` / `<stem>.stderr.txt` (layout in `pvrdma_engine::capture::folder`),
/// checked against the manifest. The exit status is the manifest's; the `.exit` file
/// is for people and `analyze DIR`.
fn bundled_output(
    files: &BTreeMap<String, Vec<u8>>,
    stem: &str,
    cmd: &ManifestCommand,
    id: &str,
) -> anyhow::Result<RawOutput> {
    let stdout_path = folder::stdout_file(stem);
    let get = |name: &str| -> Result<Option<String>, BundleError> { Ok(text(files, name)) };
    let Some(folder::OutputFiles { stdout, stderr, .. }) = folder::read_output(stem, &get)? else {
        return Err(BundleError::MissingEntry { path: stdout_path }.into());
    };
    if sha256_hex(stdout.as_bytes()) != cmd.stdout_sha256 {
        return Err(BundleError::ChecksumMismatch { path: stdout_path }.into());
    }
    Ok(RawOutput {
        id: id.to_string(),
        command: cmd.command.clone(),
        stdout,
        stderr,
        exit_status: cmd.exit_status,
        duration_ms: cmd.duration_ms,
        truncated: cmd.truncated,
        timeout_hit: cmd.timeout_hit,
        failure: cmd.failure.clone(),
        outcome: cmd.outcome.clone(),
        unfinished: cmd.unfinished.clone(),
    })
}
