//! `manifest.json`, the first entry of a support bundle.
//!
//! The manifest is what makes a bundle trustworthy on a ticket weeks later: it says which
//! tool version collected what, with which exact command line, how long each command took,
//! whether it was cut or timed out, and what is missing and why. The sha256 of every other
//! entry lets `analyze` refuse a bundle that was edited or damaged after it was written.
use pvrdma_engine::capture::{CaptureSource, Failure, Outcome};
use serde::{Deserialize, Serialize};

/// Bumped when a reader of the previous format would misread a new bundle.
pub(crate) const FORMAT_VERSION: u32 = 1;

/// Name of the manifest entry (at the archive root, first entry).
pub(crate) const MANIFEST_FILE: &str = "manifest.json";
/// `sha256sum`-style checksum of manifest.json, the last entry: the manifest vouches for
/// every other entry, this vouches for the manifest.
pub(crate) const MANIFEST_SUM_FILE: &str = "manifest.json.sha256";
/// The JSON report, as `--json` printed it.
pub(crate) const REPORT_JSON_FILE: &str = "report.json";
/// The human report, without colour.
pub(crate) const REPORT_TXT_FILE: &str = "report.txt";
/// The HTML page, from the same (redacted, with `--redact`) captures.
pub(crate) const REPORT_HTML_FILE: &str = "report.html";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub(crate) format_version: u32,
    /// Always `pvrdma-doctor`; lets a reader tell this bundle from other tarballs.
    pub(crate) tool: String,
    pub(crate) tool_version: String,
    /// argv of the run that wrote the bundle, without any password.
    pub(crate) command_line: Vec<String>,
    /// RFC 3339, UTC.
    pub(crate) started: String,
    pub(crate) finished: String,
    /// Ctrl-C or the run deadline stopped collection before every host was done.
    pub(crate) interrupted: bool,
    /// Host names, addresses, MACs, VM names, UUIDs and datastores were replaced by tokens.
    pub(crate) redacted: bool,
    /// A VM-first run (`--vm`): the VMs the report was narrowed to (`analyze` narrows the
    /// same way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) vm_scope: Option<Vec<String>>,
    /// Those of the VMs of `vm_scope` that ran on hosts the run left out (in maintenance
    /// mode, disconnected), with where and why: `analyze` says them not diagnosed too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) vm_scope_left_out: Vec<pvrdma_engine::capture::VmLeftOut>,
    pub(crate) hosts: Vec<ManifestHost>,
    /// Every entry except the manifest itself, with its sha256.
    pub(crate) files: Vec<ManifestFile>,
}

/// How far collection got on one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum HostOutcome {
    /// Every catalogue command produced output, and every output ended cleanly.
    Complete,
    /// Connected (or partly read), but some commands are missing (see `missing`) or an
    /// output broke off (see the commands' `outcome`).
    Partial,
    /// Nothing was collected; see `error`.
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ManifestHost {
    /// The host as the user named it; also the folder holding its outputs.
    pub(crate) host: String,
    pub(crate) source: CaptureSource,
    pub(crate) outcome: HostOutcome,
    /// The typed connection (or host-level) failure, if any.
    pub(crate) error: Option<Failure>,
    pub(crate) commands: Vec<ManifestCommand>,
    /// Catalogue ids with no output, and why.
    pub(crate) missing: Vec<MissingCommand>,
    /// `.vmx` files carried over from a vm-support capture.
    pub(crate) vmx_files: Vec<ManifestVmx>,
    /// `--probe` runs only: this host's vmkping probes, one `<host>/vmkping/<peer>.txt`
    /// (`.stderr.txt`, `.exit`) per probed peer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) probe: Option<ManifestProbe>,
}

/// The path probes one host ran (see [`crate::probe`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ManifestProbe {
    /// The peers it was to probe, in plan order.
    pub(crate) peers: Vec<String>,
    /// One per probed peer; `id` is the peer's host name.
    pub(crate) commands: Vec<ManifestCommand>,
    /// Planned probes without output (run stopped, connection lost); `id` is the peer.
    pub(crate) missing: Vec<MissingCommand>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ManifestCommand {
    /// Catalogue id (the stem of the output's file names).
    pub(crate) id: String,
    /// The exact command line sent to the host.
    pub(crate) command: String,
    /// The command's exit status; `None` when the channel closed without one.
    pub(crate) exit_status: Option<u32>,
    /// Wall time of the command, in milliseconds.
    pub(crate) duration_ms: u64,
    /// Size of the stdout file, in bytes.
    pub(crate) stdout_bytes: u64,
    /// Size of the stderr file, in bytes.
    pub(crate) stderr_bytes: u64,
    /// SHA-256 of the stdout file, lowercase hex.
    pub(crate) stdout_sha256: String,
    /// SHA-256 of the stderr file, lowercase hex.
    pub(crate) stderr_sha256: String,
    /// Output was cut by a size limit (which one: `outcome`).
    pub(crate) truncated: bool,
    /// `--command-timeout` fired before the command ended.
    pub(crate) timeout_hit: bool,
    /// Why the command did not run to its end, when the collector knows.
    pub(crate) failure: Option<Failure>,
    /// How the command ended: `exited` (with its code) is the only clean outcome;
    /// `timed-out`, `truncated` (which cap), `connection-lost`, `signalled`,
    /// `no-exit-status` and `never-ran` mean the output is incomplete. Absent in bundles
    /// written before it existed: readers derive it from the fields above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) outcome: Option<Outcome>,
    /// A concurrent batch's queries whose answer did not arrive whole (their sections
    /// have no end marker): key and why. Absent when every answer did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) unfinished: Vec<pvrdma_engine::capture::UnfinishedSection>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MissingCommand {
    pub(crate) id: String,
    pub(crate) command: String,
    pub(crate) reason: Failure,
    /// The collector recorded no reason; `reason` is inferred (the host's error, or plain
    /// absence). Reading the bundle leaves such ids absent, as they were in the capture.
    pub(crate) inferred: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ManifestVmx {
    /// Path in the original vm-support bundle.
    pub(crate) path: String,
    /// Entry in this bundle.
    pub(crate) file: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ManifestFile {
    pub(crate) path: String,
    pub(crate) bytes: u64,
    pub(crate) sha256: String,
}

/// Lower-case hex sha256, the form `sha256sum` prints, so a support engineer can check a
/// single file by hand.
pub fn sha256_hex(data: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    use std::fmt::Write;
    let digest = Sha256::digest(data);
    let mut out = String::with_capacity(64);
    for byte in digest.iter() {
        // Writing to a String cannot fail.
        let _ = write!(out, "{byte:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_sha256sum() {
        // printf 'abc' | sha256sum
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
