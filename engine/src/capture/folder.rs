//! The capture-folder layout, read and written only here. Test samples, `analyze DIR`,
//! the demo's simulated hosts and support bundles all hold one folder per host:
//!
//! ```text
//! <host>/
//!   <catalogue-id>.txt          stdout, verbatim
//!   <catalogue-id>.stderr.txt   stderr (absent = empty)
//!   <catalogue-id>.exit         exit status in decimal (absent = 0)
//!   host-error.json             {"kind": "...", "message": "...", "detail": "..."} when the host failed
//! ```
//!
//! Where the files come from (a disk folder, archive entries, the demo's embedded
//! scenario) is the caller's business: readers here take a `get` that returns the text of a
//! file of the host folder by name, or `None` when there is no such file.
use super::{Failure, RawOutput};
use crate::catalogue::CATALOGUE;
use anyhow::Context;

/// File holding a host's connection failure.
pub const HOST_ERROR_FILE: &str = "host-error.json";

/// File name of a command's stdout.
pub fn stdout_file(id: &str) -> String {
    format!("{id}.txt")
}

/// The id (or probe peer) whose stdout file is `name`; `None` for any other file.
pub fn stdout_stem(name: &str) -> Option<&str> {
    name.strip_suffix(".txt").filter(|stem| !stem.ends_with(".stderr"))
}

fn stderr_file(id: &str) -> String {
    format!("{id}.stderr.txt")
}

/// File name of a command's exit status.
pub fn exit_file(id: &str) -> String {
    format!("{id}.exit")
}

/// What a host folder holds for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFiles {
    pub stdout: String,
    pub stderr: String,
    /// Text of the `.exit` file; absent means the command exited 0.
    pub exit: Option<String>,
}

impl OutputFiles {
    /// The exit status; an error when the `.exit` file is not one number.
    pub fn exit_status(&self) -> Result<u32, std::num::ParseIntError> {
        match &self.exit {
            None => Ok(0),
            Some(text) => text.trim().parse::<u32>(),
        }
    }
}

/// The files of command `id`, or `None` when its stdout file is absent (not captured).
pub fn read_output<E>(id: &str, get: &dyn Fn(&str) -> Result<Option<String>, E>) -> Result<Option<OutputFiles>, E> {
    let Some(stdout) = get(&stdout_file(id))? else {
        return Ok(None);
    };
    Ok(Some(OutputFiles {
        stdout,
        stderr: get(&stderr_file(id))?.unwrap_or_default(),
        exit: get(&exit_file(id))?,
    }))
}

/// The host's recorded connection failure, from the text of its [`HOST_ERROR_FILE`].
pub fn read_host_error(text: &str) -> serde_json::Result<Failure> {
    serde_json::from_str(text)
}

/// Whether a folder whose file names pass `has` holds a host's capture: a host error or
/// the stdout of some catalogue command.
pub fn is_host_folder(has: &dyn Fn(&str) -> bool) -> bool {
    has(HOST_ERROR_FILE) || CATALOGUE.iter().any(|s| has(&stdout_file(s.id)))
}

/// A host whose folder holds only its connection failure: it was never reached.
pub fn is_down(has: &dyn Fn(&str) -> bool) -> bool {
    has(HOST_ERROR_FILE) && !CATALOGUE.iter().any(|s| has(&stdout_file(s.id)))
}

/// The files one raw output becomes in a host folder (name, bytes): stdout always,
/// stderr when non-empty, the exit status when known.
pub fn output_files(id: &str, raw: &RawOutput) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![(stdout_file(id), raw.stdout.as_bytes().to_vec())];
    if !raw.stderr.is_empty() {
        files.push((stderr_file(id), raw.stderr.as_bytes().to_vec()));
    }
    if let Some(code) = raw.exit_status {
        files.push((exit_file(id), format!("{code}\n").into_bytes()));
    }
    files
}

/// The file a host's failure becomes (name, bytes).
pub fn host_error_file(error: &Failure) -> anyhow::Result<(String, Vec<u8>)> {
    let data = serde_json::to_vec_pretty(error).context("serialising a host error")?;
    Ok((HOST_ERROR_FILE.to_string(), data))
}

/// The capture folders below `root` as `analyze DIR` reads them (hosts sorted by name,
/// probe outputs under `<host>/vmkping/`), for the engine's own tests over `samples/`;
/// `None` when `root` holds no host folder. The front end's reader (with its errors and
/// size limits) is the front end's `collect::replay`.
#[cfg(test)]
pub fn read_dir_for_tests(root: &std::path::Path) -> Option<Vec<super::HostCapture>> {
    use super::{CaptureSource, HostCapture, ProbeCapture, PROBE_ID};
    let get_in = |dir: &std::path::Path| {
        let dir = dir.to_path_buf();
        move |name: &str| -> Result<Option<String>, std::io::Error> {
            match std::fs::read(dir.join(name)) {
                Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            }
        }
    };
    let raw_of = |files: OutputFiles, id: &str, command: &str| RawOutput {
        exit_status: files.exit_status().ok(),
        stdout: files.stdout,
        stderr: files.stderr,
        ..RawOutput::new(id, command)
    };
    let mut hosts = Vec::new();
    for entry in std::fs::read_dir(root).ok()?.flatten() {
        let dir = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !dir.is_dir() || name.starts_with('.') || !is_host_folder(&|f| dir.join(f).is_file()) {
            continue;
        }
        let get = get_in(&dir);
        let mut capture = HostCapture::new(name, CaptureSource::Directory);
        if let Ok(Some(text)) = get(HOST_ERROR_FILE) {
            capture.error = read_host_error(&text).ok();
        }
        for spec in CATALOGUE {
            if let Ok(Some(files)) = read_output(spec.id, &get) {
                capture
                    .outputs
                    .insert(spec.id.to_string(), raw_of(files, spec.id, spec.command));
            }
        }
        let probe_dir = dir.join(PROBE_ID);
        if let Ok(entries) = std::fs::read_dir(&probe_dir) {
            let get = get_in(&probe_dir);
            let mut probe = ProbeCapture::default();
            for e in entries.flatten() {
                let file = e.file_name().to_string_lossy().into_owned();
                if let Some(peer) = stdout_stem(&file) {
                    if let Ok(Some(files)) = read_output(peer, &get) {
                        probe.peers.push(peer.to_string());
                        probe
                            .outputs
                            .insert(peer.to_string(), raw_of(files, PROBE_ID, PROBE_ID));
                    }
                }
            }
            probe.peers.sort();
            capture.probe = Some(probe);
        }
        hosts.push(capture);
    }
    hosts.sort_by(|a, b| a.host.cmp(&b.host));
    (!hosts.is_empty()).then_some(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn what_is_written_reads_back() {
        let raw = RawOutput {
            stdout: "Name  MTU\n".to_string(),
            stderr: "warning\n".to_string(),
            exit_status: Some(3),
            ..RawOutput::new("esxcli_x", "esxcli x")
        };
        let files: BTreeMap<String, String> = output_files("esxcli_x", &raw)
            .into_iter()
            .map(|(name, data)| (name, String::from_utf8(data).unwrap()))
            .collect();
        let get = |name: &str| -> Result<Option<String>, ()> { Ok(files.get(name).cloned()) };
        let back = read_output("esxcli_x", &get).unwrap().unwrap();
        assert_eq!(
            (back.stdout.as_str(), back.stderr.as_str()),
            ("Name  MTU\n", "warning\n")
        );
        assert_eq!(back.exit_status(), Ok(3));
        assert_eq!(read_output("esxcli_y", &get).unwrap(), None);
        // No stderr and no exit file: empty stderr, exited 0.
        let quiet = RawOutput {
            exit_status: None,
            stderr: String::new(),
            ..raw
        };
        assert_eq!(output_files("q", &quiet).len(), 1);
        let bad = OutputFiles {
            stdout: String::new(),
            stderr: String::new(),
            exit: Some("x\n".to_string()),
        };
        assert!(bad.exit_status().is_err());
    }
}
