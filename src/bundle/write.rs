//! Writes a support bundle atomically (through [`crate::atomic_file`]): a crash, a full disk
//! or Ctrl-C never leaves a half-written bundle under the name the engineer will attach
//! to a ticket.
use super::manifest::{
    sha256_hex, HostOutcome, Manifest, ManifestCommand, ManifestFile, ManifestHost, ManifestProbe, ManifestVmx,
    MissingCommand, FORMAT_VERSION, MANIFEST_FILE, MANIFEST_SUM_FILE, REPORT_HTML_FILE, REPORT_JSON_FILE,
    REPORT_TXT_FILE,
};
use super::{host_dir, BundleError};
use crate::atomic_file::{self, AlreadyExists};
use anyhow::Context;
use pvrdma_engine::capture::folder;
use pvrdma_engine::capture::OUTPUT_CAP;
use pvrdma_engine::capture::{ErrorKind, Failure, HostCapture, RawOutput};
use pvrdma_engine::catalogue::{self, CATALOGUE};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Facts about the run that wrote the bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleMeta {
    pub tool_version: String,
    /// argv; pass it through [`scrub_command_line`] first.
    pub command_line: Vec<String>,
    pub started: SystemTime,
    pub finished: SystemTime,
    pub interrupted: bool,
    /// The captures were redacted before the report was computed.
    pub redacted: bool,
    /// A VM-first run (`--vm`): the VMs its report was narrowed to, so `analyze` of the
    /// bundle narrows the same way.
    pub vm_scope: Option<Vec<String>>,
    /// Those of them running on hosts the run left out, said not diagnosed again.
    pub vm_scope_left_out: Vec<pvrdma_engine::capture::VmLeftOut>,
}

/// The environment variables a password may come from (the hosts', vCenter's); their
/// values must never reach a bundle.
const PASSWORD_ENVS: [&str; 2] = ["PVRDMA_DOCTOR_PASSWORD", "PVRDMA_DOCTOR_VCENTER_PASSWORD"];

/// argv fit for a manifest: the values of the password variables (should someone have
/// pasted one on the command line anyway) and the value of any `--password` option are
/// replaced by `********`.
pub(crate) fn scrub_command_line(args: &[String]) -> Vec<String> {
    PASSWORD_ENVS
        .iter()
        .filter_map(|var| std::env::var(var).ok().filter(|s| !s.is_empty()))
        .fold(scrub_with(args, None), |args, secret| scrub_with(&args, Some(&secret)))
}

fn scrub_with(args: &[String], secret: Option<&str>) -> Vec<String> {
    const MASK: &str = "********";
    let mut out = Vec::with_capacity(args.len());
    let mut mask_next = false;
    for arg in args {
        if mask_next {
            out.push(MASK.to_string());
            mask_next = false;
            continue;
        }
        if arg == "--password" {
            mask_next = true;
            out.push(arg.clone());
            continue;
        }
        if arg.starts_with("--password=") {
            out.push(format!("--password={MASK}"));
            continue;
        }
        match secret {
            Some(s) if arg.contains(s) => out.push(arg.replace(s, MASK)),
            _ => out.push(arg.clone()),
        }
    }
    out
}

/// Refuses a target that exists (unless `force`) or whose folder does not. Call it before
/// collecting, so a long run does not end in a refusal.
pub(crate) fn check_target(path: &Path, force: bool) -> anyhow::Result<()> {
    if !force && path.symlink_metadata().is_ok() {
        return Err(BundleError::Exists(path.to_path_buf()).into());
    }
    let dir = atomic_file::parent_dir(path);
    anyhow::ensure!(
        dir.is_dir(),
        "cannot write the bundle {}: folder {} does not exist",
        path.display(),
        dir.display()
    );
    Ok(())
}

/// Writes captures + manifest.json (first entry) + report.json + report.txt + report.html
/// to `path` atomically; refuses an existing path unless `force`.
pub fn write_bundle(
    path: &Path,
    captures: &[HostCapture],
    meta: &BundleMeta,
    report_json: &str,
    report_txt: &str,
    report_html: &str,
    force: bool,
) -> anyhow::Result<()> {
    let mut spool = Spool::new(path, force)?;
    for capture in captures {
        spool.add(capture, meta.finished)?;
    }
    spool.finish(
        meta,
        |out| out.write_all(report_json.as_bytes()),
        |out| out.write_all(report_txt.as_bytes()),
        |out| out.write_all(report_html.as_bytes()),
        None,
    )
}

/// A bundle written host by host, as each host's capture is read, so a run keeps none of
/// them: each host's files go, compressed, into an unnamed temporary file in the bundle's
/// folder (gone with the process, whatever happens), with their manifest entries kept.
/// [`Spool::finish`] then writes the bundle atomically, the manifest first as readers
/// expect, and the hosts' files copied over from the spool. Dropped unfinished, it leaves
/// nothing.
pub(crate) struct Spool {
    path: PathBuf,
    force: bool,
    tar: flate2::write::GzEncoder<std::io::BufWriter<std::fs::File>>,
    hosts: Vec<ManifestHost>,
    files: Vec<ManifestFile>,
    seen: std::collections::BTreeSet<String>,
}

impl Spool {
    /// Refuses an existing `path` (unless `force`) or one whose folder does not exist, and
    /// opens the spool there.
    pub(crate) fn new(path: &Path, force: bool) -> anyhow::Result<Spool> {
        check_target(path, force)?;
        let dir = atomic_file::parent_dir(path);
        let file = tempfile::tempfile_in(dir)
            .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
        Ok(Spool {
            path: path.to_path_buf(),
            force,
            // Fast compression: the spool is read once, to be compressed again.
            tar: flate2::write::GzEncoder::new(std::io::BufWriter::new(file), flate2::Compression::fast()),
            hosts: Vec::new(),
            files: Vec::new(),
            seen: std::collections::BTreeSet::new(),
        })
    }

    /// Adds one host's files (outputs, probe outputs, its error, its `.vmx` files), dated
    /// `read_at`.
    pub(crate) fn add(&mut self, capture: &HostCapture, read_at: SystemTime) -> anyhow::Result<()> {
        let dir = host_dir(&capture.host)?;
        anyhow::ensure!(
            self.seen.insert(dir.to_string()),
            "host {dir:?} appears twice; a bundle holds one folder per host"
        );
        let mut entries = Vec::new();
        self.hosts.push(host_layout(&mut entries, dir, capture)?);
        // The host's entries as a tar stream of their own, less its end-of-archive blocks:
        // whole 512-byte records that go into the bundle's stream as they are.
        let mtime = unix_secs(read_at);
        let mut tar = tar::Builder::new(Vec::new());
        let mut dirs_done = std::collections::BTreeSet::new();
        for entry in &entries {
            if let Some((folder, _)) = entry.path.rsplit_once('/') {
                // Folder entries let any `tar x` recreate the layout with sane modes.
                let mut prefix = String::new();
                for part in folder.split('/') {
                    if !prefix.is_empty() {
                        prefix.push('/');
                    }
                    prefix.push_str(part);
                    if dirs_done.insert(prefix.clone()) {
                        append_dir(&mut tar, &prefix, mtime)?;
                    }
                }
            }
            append_file(&mut tar, &entry.path, &entry.data, mtime)?;
            self.files.push(ManifestFile {
                path: entry.path.clone(),
                bytes: entry.data.len() as u64,
                sha256: sha256_hex(&entry.data),
            });
        }
        let mut records = tar.into_inner().context("finishing a host's entries")?;
        records.truncate(records.len().saturating_sub(END_OF_ARCHIVE));
        self.tar
            .write_all(&records)
            .context("writing to the bundle's temporary file")
    }

    /// Writes the bundle: the manifest (its hosts in the order of `order` when given, the
    /// order the run was given them in, else in the order they were added), the reports
    /// `report_json` and `report_txt` write, every host's files, the manifest's checksum.
    /// The reports and the manifest are staged in temporary files as they are written, so
    /// none of them is held whole either.
    pub(crate) fn finish(
        mut self,
        meta: &BundleMeta,
        report_json: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
        report_txt: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
        report_html: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
        order: Option<&[String]>,
    ) -> anyhow::Result<()> {
        if let Some(names) = order {
            let place: std::collections::BTreeMap<&str, usize> =
                names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
            self.hosts
                .sort_by_key(|h| place.get(h.host.as_str()).copied().unwrap_or(usize::MAX));
        }
        let dir = atomic_file::parent_dir(&self.path);
        let reports = [
            (REPORT_JSON_FILE, Staged::write(dir, report_json)?),
            (REPORT_TXT_FILE, Staged::write(dir, report_txt)?),
            (REPORT_HTML_FILE, Staged::write(dir, report_html)?),
        ];
        let mut files: Vec<ManifestFile> = reports
            .iter()
            .map(|(path, staged)| ManifestFile {
                path: path.to_string(),
                bytes: staged.bytes,
                sha256: staged.sha256.clone(),
            })
            .collect();
        files.append(&mut self.files);
        let manifest = manifest(meta, std::mem::take(&mut self.hosts), files);
        let manifest = Staged::write(dir, |out| Ok(serde_json::to_writer_pretty(out, &manifest)?))?;
        let mut spooled = self
            .tar
            .finish()
            .context("writing to the bundle's temporary file")?
            .into_inner()
            .map_err(|e| e.into_error())
            .context("writing to the bundle's temporary file")?;
        spooled
            .seek(SeekFrom::Start(0))
            .context("reading the bundle's temporary file")?;

        let mtime = unix_secs(meta.finished);
        let written = atomic_file::write_atomically(&self.path, self.force, |file| {
            let buffered = std::io::BufWriter::new(&*file);
            let gz = flate2::write::GzEncoder::new(buffered, flate2::Compression::default());
            let mut tar = tar::Builder::new(gz);
            manifest.append(&mut tar, MANIFEST_FILE, mtime)?;
            for (path, staged) in &reports {
                staged.append(&mut tar, path, mtime)?;
            }
            let mut hosts = flate2::read::GzDecoder::new(std::io::BufReader::new(&spooled));
            std::io::copy(&mut hosts, tar.get_mut()).context("copying the hosts' files into the bundle")?;
            let sum = format!("{}  {MANIFEST_FILE}\n", manifest.sha256);
            append_file(&mut tar, MANIFEST_SUM_FILE, sum.as_bytes(), mtime)?;
            let gz = tar.into_inner().context("finishing the tar stream")?;
            let mut buffered = gz.finish().context("finishing the gzip stream")?;
            buffered.flush().context("writing the bundle")?;
            Ok(())
        });
        match written {
            Err(e) if e.is::<AlreadyExists>() => Err(BundleError::Exists(self.path.clone()).into()),
            other => other,
        }
    }
}

/// A file of the bundle staged in an unnamed temporary file as it is written, with its
/// size and checksum, to be copied into the bundle after the manifest that lists them.
struct Staged {
    file: std::fs::File,
    bytes: u64,
    sha256: String,
}

impl Staged {
    fn write(dir: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> anyhow::Result<Staged> {
        use sha2::Digest;
        let file = tempfile::tempfile_in(dir)
            .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
        let (bytes, digest) = {
            let mut out = Hashing {
                inner: std::io::BufWriter::new(&file),
                digest: sha2::Sha256::new(),
                bytes: 0,
            };
            write(&mut out)
                .and_then(|()| out.inner.flush())
                .context("writing to the bundle's temporary file")?;
            (out.bytes, out.digest.finalize())
        };
        Ok(Staged {
            file,
            bytes,
            sha256: digest.iter().map(|b| format!("{b:02x}")).collect(),
        })
    }

    fn append<W: Write>(&self, tar: &mut tar::Builder<W>, path: &str, mtime: u64) -> anyhow::Result<()> {
        let mut file = &self.file;
        file.seek(SeekFrom::Start(0))
            .context("reading the bundle's temporary file")?;
        let mut header = file_header(self.bytes, mtime);
        tar.append_data(&mut header, path, std::io::Read::take(file, self.bytes))
            .with_context(|| format!("writing {path} into the bundle"))
    }
}

/// A writer that counts and hashes what goes through it.
struct Hashing<W> {
    inner: W,
    digest: sha2::Sha256,
    bytes: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use sha2::Digest;
        let n = self.inner.write(buf)?;
        self.digest.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The two zero records that end a tar archive.
const END_OF_ARCHIVE: usize = 1024;

struct Entry {
    path: String,
    data: Vec<u8>,
}

/// The manifest of a bundle holding `hosts`, whose files are `files`.
fn manifest(meta: &BundleMeta, hosts: Vec<ManifestHost>, files: Vec<ManifestFile>) -> Manifest {
    Manifest {
        format_version: FORMAT_VERSION,
        tool: "pvrdma-doctor".to_string(),
        tool_version: meta.tool_version.clone(),
        command_line: meta.command_line.clone(),
        started: rfc3339(meta.started),
        finished: rfc3339(meta.finished),
        interrupted: meta.interrupted,
        redacted: meta.redacted,
        vm_scope: meta.vm_scope.clone(),
        vm_scope_left_out: meta.vm_scope_left_out.clone(),
        hosts,
        files,
    }
}

/// One host's files in its folder `dir` (outputs, probe outputs, its error, its `.vmx`
/// files), added to `entries`, and its manifest entry.
fn host_layout(entries: &mut Vec<Entry>, dir: &str, capture: &HostCapture) -> anyhow::Result<ManifestHost> {
    let mut commands = Vec::with_capacity(capture.outputs.len());
    for (id, raw) in &capture.outputs {
        commands.push(output_entries(entries, &format!("{dir}/{}", file_id(id)?), id, raw));
    }
    let probe = match &capture.probe {
        None => None,
        Some(p) => Some(probe_layout(entries, dir, p)?),
    };
    if let Some(error) = &capture.error {
        let (name, data) = folder::host_error_file(error)?;
        entries.push(Entry {
            path: format!("{dir}/{name}"),
            data,
        });
    }
    let mut vmx_files = Vec::with_capacity(capture.vmx_files.len());
    for (n, vmx) in capture.vmx_files.iter().enumerate() {
        // The original path may be long and hold any character; a numbered name keeps
        // the archive portable, the manifest keeps the original path.
        let file = format!("{dir}/vmx/{:03}.vmx", n + 1);
        entries.push(Entry {
            path: file.clone(),
            data: vmx.content.as_bytes().to_vec(),
        });
        vmx_files.push(ManifestVmx {
            path: vmx.path.clone(),
            file,
        });
    }
    Ok(ManifestHost {
        host: capture.host.clone(),
        source: capture.source,
        outcome: outcome(capture),
        error: capture.error.clone(),
        commands,
        missing: missing(capture),
        vmx_files,
        probe,
    })
}

/// The probe's outputs of one host, one per peer under `<dir>/vmkping/`, and what was
/// not probed.
fn probe_layout(
    entries: &mut Vec<Entry>,
    dir: &str,
    probe: &pvrdma_engine::capture::ProbeCapture,
) -> anyhow::Result<ManifestProbe> {
    let mut probed = Vec::with_capacity(probe.outputs.len());
    for (peer, raw) in &probe.outputs {
        // A peer is a host of this bundle: its name passed the same test.
        let stem = format!("{dir}/{}/{}", pvrdma_engine::capture::PROBE_ID, host_dir(peer)?);
        probed.push(output_entries(entries, &stem, peer, raw));
    }
    let missing = probe
        .missing
        .iter()
        .map(|(peer, reason)| MissingCommand {
            id: peer.clone(),
            command: pvrdma_engine::capture::PROBE_ID.to_string(),
            reason: reason.clone(),
            inferred: false,
        })
        .collect();
    Ok(ManifestProbe {
        peers: probe.peers.clone(),
        commands: probed,
        missing,
    })
}

/// Adds `<stem>.txt` (stdout), `<stem>.stderr.txt` (when not empty) and `<stem>.exit`
/// (when known) for one output, capped, and returns its manifest line.
fn output_entries(entries: &mut Vec<Entry>, stem: &str, id: &str, raw: &RawOutput) -> ManifestCommand {
    let raw = capped(raw, OUTPUT_CAP);
    // `stem` is `<host>/<id>` (or `<host>/vmkping/<peer>`): the folder layout's names
    // with the path in front.
    for (path, data) in folder::output_files(stem, &raw) {
        entries.push(Entry { path, data });
    }
    ManifestCommand {
        id: id.to_string(),
        command: raw.command.clone(),
        exit_status: raw.exit_status,
        duration_ms: raw.duration_ms,
        stdout_bytes: raw.stdout.len() as u64,
        stderr_bytes: raw.stderr.len() as u64,
        stdout_sha256: sha256_hex(raw.stdout.as_bytes()),
        stderr_sha256: sha256_hex(raw.stderr.as_bytes()),
        truncated: raw.truncated,
        timeout_hit: raw.timeout_hit,
        failure: raw.failure.clone(),
        outcome: Some(raw.outcome()),
        unfinished: raw.unfinished.clone(),
    }
}

/// Catalogue ids are file names; an id from elsewhere must still not escape the host folder.
fn file_id(id: &str) -> anyhow::Result<&str> {
    let ok = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    anyhow::ensure!(ok, "command id {id:?} cannot be a file name in a bundle");
    Ok(id)
}

fn outcome(capture: &HostCapture) -> HostOutcome {
    let all_there = CATALOGUE.iter().all(|s| capture.outputs.contains_key(s.id));
    let all_clean = capture
        .outputs
        .values()
        .all(|o| o.cut_short().is_none() && o.unfinished.is_empty());
    if capture.outputs.is_empty() && capture.vmx_files.is_empty() {
        HostOutcome::Failed
    } else if all_there && all_clean && capture.error.is_none() {
        HostOutcome::Complete
    } else {
        HostOutcome::Partial
    }
}

/// Every catalogue id without output, with the recorded reason, or else the host's error
/// (the connection broke before the command ran), so the manifest never just says "absent".
fn missing(capture: &HostCapture) -> Vec<MissingCommand> {
    let mut out: Vec<MissingCommand> = capture
        .missing
        .iter()
        .map(|(id, reason)| MissingCommand {
            id: id.clone(),
            command: catalogue::spec(id).map(|s| s.command.to_string()).unwrap_or_default(),
            reason: reason.clone(),
            inferred: false,
        })
        .collect();
    for spec in CATALOGUE {
        if capture.outputs.contains_key(spec.id) || capture.missing.contains_key(spec.id) {
            continue;
        }
        let reason = match &capture.error {
            Some(error) => error.clone(),
            None => Failure::new(ErrorKind::Config, "no output was captured for it"),
        };
        out.push(MissingCommand {
            id: spec.id.to_string(),
            command: spec.command.to_string(),
            reason,
            inferred: true,
        });
    }
    out
}

/// The output cut at `cap` bytes (on a character boundary) and marked truncated.
fn capped(raw: &RawOutput, cap: usize) -> RawOutput {
    let mut raw = raw.clone();
    let was_clean = !raw.truncated && raw.cut_short().is_none();
    let mut cut = false;
    for text in [&mut raw.stdout, &mut raw.stderr] {
        if text.len() > cap {
            let mut end = cap;
            while end > 0 && !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            cut = true;
        }
    }
    if cut {
        raw.truncated = true;
        if was_clean {
            raw.outcome = Some(pvrdma_engine::capture::Outcome::Truncated {
                cap: pvrdma_engine::capture::Cap::PerCommand,
                limit_bytes: cap as u64,
            });
        }
    }
    raw
}

fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

fn append_file<W: Write>(tar: &mut tar::Builder<W>, path: &str, data: &[u8], mtime: u64) -> anyhow::Result<()> {
    let mut header = file_header(data.len() as u64, mtime);
    tar.append_data(&mut header, path, data)
        .with_context(|| format!("writing {path} into the bundle"))
}

/// The header of a regular file of `size` bytes in a bundle.
fn file_header(size: u64, mtime: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(size);
    header.set_mode(0o644);
    header.set_mtime(mtime);
    header.set_uid(0);
    header.set_gid(0);
    header
}

fn append_dir<W: Write>(tar: &mut tar::Builder<W>, path: &str, mtime: u64) -> anyhow::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Directory);
    header.set_size(0);
    header.set_mode(0o755);
    header.set_mtime(mtime);
    header.set_uid(0);
    header.set_gid(0);
    tar.append_data(&mut header, format!("{path}/"), std::io::empty())
        .with_context(|| format!("writing folder {path} into the bundle"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn scrub_masks_password_values() {
        let out = scrub_with(
            &args(&[
                "pvrdma-doctor",
                "--password",
                "hunter2",
                "--password=s3cret",
                "esx01",
                "--note=pw-is-Tr0ub4dor",
            ]),
            Some("Tr0ub4dor"),
        );
        assert_eq!(
            out,
            args(&[
                "pvrdma-doctor",
                "--password",
                "********",
                "--password=********",
                "esx01",
                "--note=pw-is-********",
            ])
        );
    }

    #[test]
    fn cap_cuts_on_char_boundary_and_marks_truncated() {
        let raw = RawOutput {
            id: "x".into(),
            command: "x".into(),
            stdout: "aé".repeat(4),
            stderr: String::new(),
            exit_status: Some(0),
            duration_ms: 0,
            truncated: false,
            timeout_hit: false,
            failure: None,
            outcome: None,
            unfinished: Vec::new(),
        };
        let cut = capped(&raw, 5);
        assert_eq!(cut.stdout, "aéa");
        assert!(cut.truncated);
        let whole = capped(&raw, 1000);
        assert_eq!(whole, raw);
    }
}
