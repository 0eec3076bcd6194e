//! Pipeline stage: *collect*. The only stage that does I/O.
//!
//! A source (a live SSH host, a directory of captured outputs, a support bundle, an ESXi
//! vm-support bundle) turns into one [`HostCapture`] per host: the raw outputs keyed by
//! catalogue id, plus what went wrong. A failure is data here, never an early return, so
//! one host's trouble cannot hide another host's results.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub mod replay;
pub mod schedule;
pub mod ssh;

/// What a host (or a single command) failed with, typed so callers can act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// The name did not resolve.
    Dns,
    /// TCP connect refused or no route.
    Unreachable,
    /// A connect, command or run timeout fired.
    Timeout,
    /// No common key-exchange / cipher / host-key algorithm, or the handshake broke.
    KeyExchange,
    /// Every authentication method was refused.
    Auth,
    /// The host key is not in known_hosts (and `--accept-new` was not given).
    HostKeyUnknown,
    /// The host key differs from the one in known_hosts, or is revoked.
    HostKeyChanged,
    /// The host answers but is not ESXi (`esxcli: not found`).
    NotEsxi,
    /// A command exited non-zero or printed an error instead of output.
    CommandFailed,
    /// The output did not parse.
    Unparseable,
    /// Ctrl-C or the whole-run `--timeout` stopped collection.
    Interrupted,
    /// `~/.ssh/config`, a key file or a bundle could not be read.
    Config,
    /// A bug in pvrdma-doctor.
    Internal,
}

impl ErrorKind {
    /// Whether a host failing this way counts as `unreachable` (rather than `error`).
    pub fn is_unreachable(self) -> bool {
        matches!(
            self,
            ErrorKind::Dns
                | ErrorKind::Unreachable
                | ErrorKind::Timeout
                | ErrorKind::KeyExchange
                | ErrorKind::Auth
                | ErrorKind::HostKeyUnknown
                | ErrorKind::HostKeyChanged
                | ErrorKind::Interrupted
        )
    }
}

/// A failure with the message the user sees (which says what to do next).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub kind: ErrorKind,
    pub message: String,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The most output kept per command (live collection counts stdout and stderr together; a
/// bundle applies it again per stream); the rest is cut and marked `truncated`.
/// A healthy host prints a few hundred KiB even with hundreds of VMs, so this only bounds
/// memory (and bundle size) against a runaway or hostile host.
pub const OUTPUT_CAP: usize = 16 * 1024 * 1024;

/// What one catalogue command printed on one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawOutput {
    /// Catalogue id.
    pub id: String,
    /// The exact command line that was sent.
    pub command: String,
    pub stdout: String,
    pub stderr: String,
    /// `None` when the channel closed without an exit status (or the command never ran).
    pub exit_status: Option<u32>,
    pub duration_ms: u64,
    /// The output was cut at the per-command size cap.
    pub truncated: bool,
    /// `--command-timeout` fired; stdout/stderr hold what arrived before.
    pub timeout_hit: bool,
    /// Why the command produced no usable output (channel refused, timeout, ...).
    pub failure: Option<Failure>,
}

impl RawOutput {
    /// An output of `command` with nothing recorded yet: empty streams, no exit status.
    pub fn new(id: impl Into<String>, command: impl Into<String>) -> Self {
        RawOutput {
            id: id.into(),
            command: command.into(),
            stdout: String::new(),
            stderr: String::new(),
            exit_status: None,
            duration_ms: 0,
            truncated: false,
            timeout_hit: false,
            failure: None,
        }
    }
}

/// Where a capture came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaptureSource {
    Live,
    Directory,
    Bundle,
    VmSupport,
}

/// A `.vmx` file found in an ESXi vm-support bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmxFile {
    /// Path inside the bundle, e.g. `vmfs/volumes/ds1/hpc01/hpc01.vmx`.
    pub path: String,
    pub content: String,
}

/// Everything collected from one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCapture {
    /// The host as the user named it (`esx01`), not the resolved address.
    pub host: String,
    pub source: CaptureSource,
    /// Outputs by catalogue id. An id that is absent was not collected.
    pub outputs: BTreeMap<String, RawOutput>,
    /// Why ids are absent, by id (timeout, interrupted, ...), where known.
    pub missing: BTreeMap<String, Failure>,
    /// Only from vm-support bundles: which VMs have PVRDMA adapters.
    pub vmx_files: Vec<VmxFile>,
    /// The host could not be collected (or only partly): connection, auth, host key, ...
    pub error: Option<Failure>,
}

impl HostCapture {
    pub fn new(host: impl Into<String>, source: CaptureSource) -> Self {
        HostCapture {
            host: host.into(),
            source,
            outputs: BTreeMap::new(),
            missing: BTreeMap::new(),
            vmx_files: Vec::new(),
            error: None,
        }
    }

    pub fn failed(host: impl Into<String>, source: CaptureSource, failure: Failure) -> Self {
        HostCapture {
            error: Some(failure),
            ..HostCapture::new(host, source)
        }
    }
}
