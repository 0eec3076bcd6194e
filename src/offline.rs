//! Offline sources of captures: picks the reader for what the engineer points at, a
//! pvrdma-doctor bundle (`.tar.gz` or unpacked), an ESXi vm-support bundle (`.tgz` or
//! unpacked) or a plain capture folder. The readers know nothing of each other.
use crate::archive::{read_archive, top_component, ArchiveKind, ArchiveRules, BundleError, ReadLimits};
use crate::bundle::manifest::MANIFEST_FILE;
use crate::bundle::read::{from_bundle_entries, read_bundle_dir};
use crate::collect::replay;
use crate::vmsupport;
use anyhow::Context;
use pvrdma_engine::capture::{CaptureSource, HostCapture};
use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

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
    let rules = ArchiveRules {
        classify: &classify,
        vm_support_wanted: &vmsupport::wanted,
    };
    let archive = read_archive(file, limits, &rules).map_err(|e| {
        // A cut-off download fails deep in the decoder ("incomplete deflate stream");
        // say which file and what that means.
        let truncated = e.chain().any(|c| {
            let text = c.to_string();
            text.contains("incomplete deflate")
                || text.contains("unexpected end of file")
                || c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof)
        });
        if truncated {
            e.context(format!(
                "{} is truncated: the compressed archive ends early (an interrupted download or copy?); copy it again",
                path.display()
            ))
        } else {
            e.context(format!("cannot read {}", path.display()))
        }
    })?;
    match archive {
        Some((ArchiveKind::Bundle, entries)) => from_bundle_entries(entries),
        Some((ArchiveKind::VmSupport, entries)) => vmsupport::from_entries(entries),
        None => Err(BundleError::NotABundle(path.to_path_buf()).into()),
    }
}

/// A pvrdma-doctor bundle starts with its manifest; a vm-support bundle with its
/// `esx-<host>-<date>--<time>-<pid>` folder.
fn classify(first: &str) -> Option<ArchiveKind> {
    if first == MANIFEST_FILE {
        Some(ArchiveKind::Bundle)
    } else if vmsupport::top_dir_host(top_component(first)).is_some() {
        Some(ArchiveKind::VmSupport)
    } else {
        None
    }
}

/// When the run that wrote a pvrdma-doctor bundle (`.tar.gz` or unpacked) started and
/// finished, as its manifest records them. `None` for what records no run: a capture
/// folder, a vm-support bundle, a manifest without readable times.
pub fn recorded_run_times(path: &Path) -> Option<(SystemTime, SystemTime)> {
    let manifest = recorded_manifest(path)?;
    let time = |key: &str| humantime::parse_rfc3339(manifest.get(key)?.as_str()?).ok();
    Some((time("started")?, time("finished")?))
}

/// The VMs a VM-first run's bundle was narrowed to (`--vm`), as its manifest records them,
/// those on hosts the run left out apart: `analyze` of the bundle narrows its report the
/// same way, and says the same VMs not diagnosed. `None` for anything else.
pub fn recorded_vm_scope(path: &Path) -> Option<pvrdma_engine::capture::VmChoice> {
    let manifest = recorded_manifest(path)?;
    let names: Vec<String> = serde_json::from_value(manifest.get("vm_scope")?.clone()).ok()?;
    let left_out: Vec<pvrdma_engine::capture::VmLeftOut> = manifest
        .get("vm_scope_left_out")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    Some(pvrdma_engine::capture::VmChoice {
        vms: names
            .into_iter()
            .filter(|n| !left_out.iter().any(|v| &v.vm == n))
            .collect(),
        left_out,
    })
}

/// Which version of pvrdma-doctor wrote a pvrdma-doctor bundle, and whether it is
/// redacted, as its manifest records them. `None` for anything else.
pub fn recorded_collection(path: &Path) -> Option<(Option<String>, bool)> {
    let manifest = recorded_manifest(path)?;
    let version = manifest
        .get("tool_version")
        .and_then(|v| v.as_str())
        .map(str::to_string);
    let redacted = manifest
        .get("redacted")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    Some((version, redacted))
}

/// The vCenter a bundle's run read (`--vcenter`, as host or host:port) and whether it
/// read it without SSH, from its manifest's command line; `None` when it read none (or
/// the bundle is redacted, which keeps only option names).
pub fn recorded_vcenter(path: &Path) -> Option<(String, bool)> {
    let manifest = recorded_manifest(path)?;
    let argv: Vec<String> = serde_json::from_value(manifest.get("command_line")?.clone()).ok()?;
    let value = argv
        .iter()
        .enumerate()
        .find_map(|(i, a)| match a.strip_prefix("--vcenter=") {
            Some(v) => Some(v.to_string()),
            None => (a == "--vcenter").then(|| argv.get(i + 1).cloned()).flatten(),
        })?;
    let endpoint = pvrdma_vsphere::Endpoint::parse(&value).ok()?;
    Some((endpoint.label(), argv.iter().any(|a| a == "--no-ssh")))
}

/// `path` is a pvrdma-doctor support bundle (`.tar.gz` or unpacked).
pub fn is_support_bundle(path: &Path) -> bool {
    recorded_manifest(path).is_some()
}

/// The manifest of a pvrdma-doctor bundle (`.tar.gz` or unpacked), if `path` is one.
fn recorded_manifest(path: &Path) -> Option<serde_json::Value> {
    // The manifest lists every file; this bounds a damaged one.
    const MAX_MANIFEST: u64 = 64 * 1024 * 1024;
    let mut bytes = Vec::new();
    if path.is_dir() {
        let file = std::fs::File::open(path.join(MANIFEST_FILE)).ok()?;
        file.take(MAX_MANIFEST).read_to_end(&mut bytes).ok()?;
    } else {
        // A bundle's first entry is its manifest (checked by `load_captures`).
        let file = std::fs::File::open(path).ok()?;
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
        let mut entry = archive.entries().ok()?.next()?.ok()?;
        if entry.path().ok()?.to_str()? != MANIFEST_FILE {
            return None;
        }
        (&mut entry).take(MAX_MANIFEST).read_to_end(&mut bytes).ok()?;
    }
    serde_json::from_slice(&bytes).ok()
}

// A spooled bundle read back: the reader's test, since the bundle's writer does not reach
// the reader.
#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::SystemTime;

    fn api_host(host: &str) -> HostCapture {
        let xml = format!("<objects><obj type=\"HostSystem\">{host}</obj></objects>");
        pvrdma_engine::capture::from_vsphere(host, xml, &[], 7)
    }

    #[test]
    fn a_spool_leaves_nothing_until_finished_then_the_bundle_lists_hosts_in_the_order_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.tar.gz");
        let files = || std::fs::read_dir(dir.path()).unwrap().count();
        let mut spool = crate::bundle::Spool::new(&path, false).unwrap();
        spool.add(&api_host("esx02"), SystemTime::now()).unwrap();
        assert_eq!(files(), 0, "nothing shows before the bundle is whole");
        drop(spool);
        assert_eq!(files(), 0, "a spool dropped unfinished leaves nothing");

        let mut spool = crate::bundle::Spool::new(&path, false).unwrap();
        // As the pages brought them.
        for host in ["esx02", "esx03", "esx01"] {
            spool.add(&api_host(host), SystemTime::now()).unwrap();
        }
        let err = spool.add(&api_host("esx01"), SystemTime::now()).unwrap_err();
        assert!(err.to_string().contains("appears twice"), "{err}");
        let now = SystemTime::now();
        let meta = crate::bundle::BundleMeta {
            tool_version: "0.1.0".into(),
            command_line: vec!["pvrdma-doctor".to_string()],
            started: now,
            finished: now,
            interrupted: false,
            redacted: false,
            vm_scope: None,
            vm_scope_left_out: Vec::new(),
        };
        let order: Vec<String> = ["esx01", "esx02", "esx03"].map(String::from).to_vec();
        let (json, txt, html) = (
            |out: &mut dyn Write| out.write_all(b"{}\n"),
            |out: &mut dyn Write| out.write_all(b"report\n"),
            |out: &mut dyn Write| out.write_all(b"<!DOCTYPE html>\n"),
        );
        spool.finish(&meta, json, txt, html, Some(&order)).unwrap();
        assert_eq!(files(), 1);
        let read = load_captures(&path).unwrap();
        let hosts: Vec<&str> = read.iter().map(|c| c.host.as_str()).collect();
        assert_eq!(hosts, ["esx01", "esx02", "esx03"]);
        for c in &read {
            assert_eq!(c.outputs, api_host(&c.host).outputs, "{}", c.host);
        }
    }
}
