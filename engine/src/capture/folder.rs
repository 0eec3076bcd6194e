//! The capture-folder layout, read and written only here. Test samples, `analyze DIR`,
//! the demo's simulated hosts and support bundles all hold one folder per host:
//!
//! ```text
//! <host>/
//!   <catalogue-id>.txt          stdout, verbatim
//!   <catalogue-id>.stderr.txt   stderr (absent = empty)
//!   <catalogue-id>.exit         exit status in decimal (absent = 0)
//!   host-error.json             {"kind": "...", "message": "..."} when the host failed
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
