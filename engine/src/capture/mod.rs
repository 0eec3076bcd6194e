//! The capture model: what the *collect* stage produces and every later stage reads.
//!
//! A source (a live SSH host, a directory of captured outputs, a support bundle, an ESXi
//! vm-support bundle) turns into one [`HostCapture`] per host: the raw outputs keyed by
//! catalogue id, plus what went wrong. A failure is data here, never an early return, so
//! one host's trouble cannot hide another host's results.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub mod folder;
pub mod frames;
mod kinds;
mod vms;
mod vsphere;
pub use vms::{VmChoice, VmLeftOut};
pub use vsphere::{add_vsphere, from_vsphere};

/// How every "stopped by the run's --timeout" message starts (the words; a report tells
/// the run's timeout from a host's own by [`Failure::run_stage`], never by this text).
pub const RUN_TIMEOUT: &str = "the whole run hit --timeout";

/// Where a host was when the run's own `--timeout` stopped it: what a report names
/// ("timed out after 2s while connecting to esx03").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RunStage {
    /// Waiting for a free slot among the hosts collected at once (`--parallel`).
    Queued,
    /// Connecting and logging in.
    Connecting,
    /// Its commands were running.
    Collecting,
    /// The path probe (`--probe`) after collection was running.
    Probing,
}

impl RunStage {
    /// The stage as a message ends it: "while this host waited for a free slot (--parallel)".
    pub fn while_host(self) -> &'static str {
        match self {
            RunStage::Queued => "while this host waited for a free slot (--parallel)",
            RunStage::Connecting => "while connecting and logging in to this host",
            RunStage::Collecting => "while this host's commands ran",
            RunStage::Probing => "during the path probe",
        }
    }

    /// The stage before a list of hosts: "connecting to esx[01-03]".
    pub fn doing(self) -> &'static str {
        match self {
            RunStage::Queued => "waiting for a slot",
            RunStage::Connecting => "connecting to",
            RunStage::Collecting => "running commands on",
            RunStage::Probing => "probing from",
        }
    }
}

/// What a host (or a single command) failed with, typed so callers can act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failure {
    /// What failed, typed so scripts can act on it.
    pub kind: ErrorKind,
    /// What happened and what to do about it.
    pub message: String,
    /// The message without the name of the host it is about, which reads
    /// `<host>: <detail>` (`<host>` as messages name it: `esx01`, `esx01:22`). The same
    /// text for every host that failed the same way, so a report can show them once.
    /// Absent when the message names no host (a jump host's failure, Ctrl-C), and in
    /// reports and bundles written before this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Set when the run's own `--timeout` stopped this (not the host's own failure): the
    /// stage the host was in; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_stage: Option<RunStage>,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
            detail: None,
            run_stage: None,
        }
    }

    /// A failure of the host that messages name `host` (`esx01:22`): the message is
    /// `<host>: <detail>`, and `detail` is kept apart for grouping hosts.
    pub fn of_host(kind: ErrorKind, host: &str, detail: impl Into<String>) -> Self {
        Failure::new(kind, detail).told_of(host)
    }

    /// This failure told of the host that messages name `host`: its message, which names
    /// no host, becomes the detail of `<host>: <message>`.
    pub fn told_of(mut self, host: &str) -> Self {
        let detail = std::mem::take(&mut self.message);
        self.message = format!("{host}: {detail}");
        self.detail = Some(detail);
        self
    }

    /// What a report shows under the host's own name: the detail, or the whole message
    /// when there is none (it names no host, or it comes from an older report or bundle).
    /// Two hosts with the same text here failed the same way.
    pub fn shown_under_host(&self) -> &str {
        self.detail.as_deref().unwrap_or(&self.message)
    }

    /// The same failure with `from` replaced by `to` in its text (message and detail).
    pub fn replaced(&self, from: &str, to: &str) -> Self {
        Failure {
            message: self.message.replace(from, to),
            detail: self.detail.as_ref().map(|d| d.replace(from, to)),
            ..self.clone()
        }
    }

    /// A stop by the run's own `--timeout` (`limit`, as the collection was given it) at
    /// `stage`; `tail` follows the stage in the message (what to do next).
    pub fn run_timeout(limit: &str, stage: RunStage, tail: &str) -> Self {
        Failure::deadline(&format!("{RUN_TIMEOUT} {limit}"), stage, tail)
    }

    /// A deadline other than `--timeout` stopped the run at `stage` (the exporter's scrape
    /// deadline): `what` names it ("the probe's deadline (...) passed"), typed like
    /// [`Failure::run_timeout`].
    pub fn deadline(what: &str, stage: RunStage, tail: &str) -> Self {
        Failure {
            kind: ErrorKind::Timeout,
            message: format!("{what} {}{tail}", stage.while_host()),
            detail: None,
            run_stage: Some(stage),
        }
    }

    /// The stage at which the run's own `--timeout` stopped this, if it did.
    pub fn stopped_by_run_timeout(&self) -> Option<RunStage> {
        self.run_stage.filter(|_| self.kind == ErrorKind::Timeout)
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

/// The default per-host output budget (`--host-output-budget`): all of one host's outputs
/// together, room for one output at the per-command cap and the rest. A healthy host with
/// hundreds of VMs prints well under 1 MiB in all.
pub const DEFAULT_HOST_BUDGET: usize = 32 * 1024 * 1024;

/// The default output budget of the whole run (`--total-output-budget`): all hosts'
/// outputs together. It bounds client memory whatever the fleet size (64 hosts flooding
/// every command stay under 1 GB); a healthy fleet of thousands of hosts fits in it.
pub const DEFAULT_TOTAL_BUDGET: usize = 640 * 1024 * 1024;

/// Which limit cut an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cap {
    /// [`OUTPUT_CAP`], per command: the cap of a channel that runs one command (or, in a
    /// bundle, of one stream), or the per-answer cap of the single-answer commands that
    /// share a channel.
    PerCommand,
    /// [`OUTPUT_CAP`] of a channel several single-answer commands share: the channel was
    /// cut, and with it every answer not yet whole, however little each had printed.
    SharedChannel,
    /// `--host-output-budget`, all of a host's outputs together.
    HostBudget,
    /// `--total-output-budget`, all hosts' outputs together.
    RunBudget,
    /// The exporter's `limits.output_budget`, shared by every probe in flight.
    ProcessBudget,
}

/// How a command's output ended. Only [`Outcome::Exited`] is a clean, complete output: any
/// other outcome means the text is a prefix of what the host would have printed, so nothing
/// that depends on it may be concluded (see `facts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Outcome {
    /// The command ran to its end and exited with `code`.
    Exited { code: u32 },
    /// `--command-timeout` fired after `after_ms`; the output is what arrived before.
    TimedOut {
        /// The timeout in whole seconds (rounded down), as older captures recorded it.
        timeout_secs: u64,
        /// The timeout as given, in milliseconds; absent in older captures.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
        after_ms: u64,
    },
    /// The output reached `cap` (`limit_bytes`) and the rest was thrown away.
    Truncated { cap: Cap, limit_bytes: u64 },
    /// The SSH connection broke `after_ms` into the command.
    ConnectionLost { after_ms: u64, detail: String },
    /// The command was killed by a signal (SSH `exit-signal`).
    Signalled { signal: String },
    /// The channel closed without an exit status or signal.
    NoExitStatus,
    /// The command never started (the server refused to run it, ...).
    NeverRan { reason: String },
    /// A file an ESXi vm-support bundle holds: complete as ESXi wrote it, but vm-support
    /// records no exit status.
    Recorded,
}

impl Outcome {
    /// What broke the output off, as a report names it ("did not finish within
    /// --command-timeout 60s"); `None` for a clean exit.
    pub fn problem(&self) -> Option<String> {
        match self {
            Outcome::Exited { .. } | Outcome::Recorded => None,
            Outcome::TimedOut {
                timeout_secs,
                timeout_ms,
                ..
            } => {
                let limit = timeout_ms.map_or_else(
                    || format!("{timeout_secs}s"),
                    |ms| crate::duration::text(std::time::Duration::from_millis(ms)),
                );
                Some(format!("did not finish within --command-timeout {limit}"))
            }
            Outcome::Truncated {
                cap: Cap::PerCommand,
                limit_bytes,
            } => Some(format!(
                "output cut at the {} per-command cap",
                size_label(*limit_bytes)
            )),
            Outcome::Truncated {
                cap: Cap::SharedChannel,
                limit_bytes,
            } => Some(format!(
                "output cut with the channel it shared with the other single-answer commands, when they had printed {} together (the channel's cap)",
                size_label(*limit_bytes)
            )),
            Outcome::Truncated {
                cap: Cap::HostBudget,
                limit_bytes,
            } => Some(format!(
                "output cut at the {} per-host output budget (--host-output-budget)",
                size_label(*limit_bytes)
            )),
            Outcome::Truncated {
                cap: Cap::RunBudget,
                limit_bytes,
            } => Some(format!(
                "output cut at the {} output budget of the whole run (--total-output-budget)",
                size_label(*limit_bytes)
            )),
            Outcome::Truncated {
                cap: Cap::ProcessBudget,
                limit_bytes,
            } => Some(format!(
                "output cut at the exporter's {} output budget, shared by every probe in flight (limits.output_budget)",
                size_label(*limit_bytes)
            )),
            Outcome::ConnectionLost { after_ms, detail } => Some(format!(
                "SSH connection lost {:.1} s into the command{}",
                *after_ms as f64 / 1000.0,
                if detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({detail})")
                }
            )),
            Outcome::Signalled { signal } => Some(format!("killed by signal {signal} before it finished")),
            Outcome::NoExitStatus => {
                Some("the channel closed without an exit status (the command did not finish normally)".to_string())
            }
            Outcome::NeverRan { reason } => Some(format!("never ran: {reason}")),
        }
    }

    /// The event's kebab-case name, for JSON consumers and the manifest.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Exited { .. } => "exited",
            Outcome::TimedOut { .. } => "timed-out",
            Outcome::Truncated { .. } => "truncated",
            Outcome::ConnectionLost { .. } => "connection-lost",
            Outcome::Signalled { .. } => "signalled",
            Outcome::NoExitStatus => "no-exit-status",
            Outcome::NeverRan { .. } => "never-ran",
            Outcome::Recorded => "recorded",
        }
    }
}

/// `16 MiB`, `512 KiB`, `100 bytes`.
fn size_label(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= MIB {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// What one catalogue command printed on one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawOutput {
    /// Catalogue id.
    pub id: String,
    /// The exact command line that was sent.
    pub command: String,
    /// What the command printed on standard output (invalid UTF-8 replaced).
    pub stdout: String,
    /// What it printed on standard error (invalid UTF-8 replaced).
    pub stderr: String,
    /// `None` when the channel closed without an exit status (or the command never ran).
    pub exit_status: Option<u32>,
    /// Wall time from sending the command to its end, in milliseconds.
    pub duration_ms: u64,
    /// The output was cut by a size limit (which one: [`RawOutput::outcome`]).
    pub truncated: bool,
    /// `--command-timeout` fired; stdout/stderr hold what arrived before.
    pub timeout_hit: bool,
    /// Why the command produced no usable output (channel refused, timeout, ...).
    pub failure: Option<Failure>,
    /// How the output ended. `None` in captures that predate it (sample directories,
    /// older bundles): [`RawOutput::outcome`] then derives it from the fields above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// A live concurrent batch only: the keys whose answer did not arrive whole (their
    /// sections have no end marker), with why. Empty when every answer did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unfinished: Vec<UnfinishedSection>,
}

/// One query of a concurrent batch whose answer did not arrive whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UnfinishedSection {
    /// The query's key: a World ID, an adapter node `<World ID>_<index>`, an uplink, or a
    /// `.vmx` path.
    pub key: String,
    /// What happened to it, following its name ("did not finish within
    /// --command-timeout 60s").
    pub reason: String,
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
            outcome: None,
            unfinished: Vec::new(),
        }
    }

    /// How the output ended: the recorded outcome, or for older captures the one their
    /// flags imply (an exit status and no flag: a clean exit).
    pub fn outcome(&self) -> Outcome {
        if let Some(o) = &self.outcome {
            return o.clone();
        }
        if self.timeout_hit {
            // Older captures did not record the timeout's length; the message did.
            let timeout_secs = self
                .failure
                .as_ref()
                .and_then(|f| timeout_secs_in(&f.message))
                .unwrap_or(0);
            return Outcome::TimedOut {
                timeout_secs,
                timeout_ms: None,
                after_ms: self.duration_ms,
            };
        }
        if self.truncated {
            return Outcome::Truncated {
                cap: Cap::PerCommand,
                limit_bytes: OUTPUT_CAP as u64,
            };
        }
        match (self.exit_status, &self.failure) {
            (Some(code), _) => Outcome::Exited { code },
            (None, Some(f)) => Outcome::NeverRan {
                reason: f.message.clone(),
            },
            (None, None) => Outcome::NoExitStatus,
        }
    }

    /// Why this output is not the whole of what the command printed, or `None` when it
    /// ran to a clean end. The one question every consumer of evidence asks first.
    pub fn cut_short(&self) -> Option<String> {
        self.outcome().problem()
    }
}

/// `--command-timeout 60s` in an older capture's timeout message.
fn timeout_secs_in(message: &str) -> Option<u64> {
    let rest = message.split("--command-timeout ").nth(1)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Where a capture came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaptureSource {
    /// Collected over SSH in this run.
    Live,
    /// Read back from a capture folder (`<host>/<id>.txt`, the samples' layout).
    Directory,
    /// Read from a pvrdma-doctor support bundle.
    Bundle,
    /// Read from an ESXi vm-support bundle.
    VmSupport,
    /// Read in this run through vCenter's vSphere API (the configuration only).
    VsphereApi,
}

/// A `.vmx` file found in an ESXi vm-support bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmxFile {
    /// Path inside the bundle, e.g. `vmfs/volumes/ds1/hpc01/hpc01.vmx`.
    pub path: String,
    /// The file's text.
    pub content: String,
}

/// Id of probe outputs (the evidence key and the bundle folder name).
pub const PROBE_ID: &str = "vmkping";

/// The probe outputs of one host (the pinging side).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeCapture {
    /// The peers this host was to probe, by host name, in plan order.
    pub peers: Vec<String>,
    /// The framed vmkping output per peer, for the peers actually probed.
    pub outputs: BTreeMap<String, RawOutput>,
    /// Why a planned probe produced no output (run stopped, connection lost), by peer.
    pub missing: BTreeMap<String, Failure>,
}

/// Everything collected from one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCapture {
    /// The host as the user named it (`esx01`), not the resolved address.
    pub host: String,
    /// Where the outputs come from.
    pub source: CaptureSource,
    /// Outputs by catalogue id. An id that is absent was not collected.
    pub outputs: BTreeMap<String, RawOutput>,
    /// Why ids are absent, by id (timeout, interrupted, ...), where known.
    pub missing: BTreeMap<String, Failure>,
    /// Only from vm-support bundles: which VMs have PVRDMA adapters.
    pub vmx_files: Vec<VmxFile>,
    /// The host could not be collected (or only partly): connection, auth, host key, ...
    pub error: Option<Failure>,
    /// `--probe` only: the vmkping path probes this host ran to its peers.
    #[serde(default)]
    pub probe: Option<ProbeCapture>,
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
            probe: None,
        }
    }

    /// Every esxcli command answered "not found" (or exit 127): the login worked on
    /// something that is not ESXi. Live collection and offline analysis both ask this.
    pub fn esxcli_missing(&self) -> bool {
        esxcli_missing(&self.outputs)
    }

    pub fn failed(host: impl Into<String>, source: CaptureSource, failure: Failure) -> Self {
        HostCapture {
            error: Some(failure),
            ..HostCapture::new(host, source)
        }
    }

    /// A host that stopped for `failure` after answering `answered`: the answers are kept
    /// (a partial capture is still evidence), and every other catalogue command is missing
    /// for the same reason.
    pub fn stopped(
        host: impl Into<String>,
        source: CaptureSource,
        failure: Failure,
        answered: BTreeMap<String, RawOutput>,
    ) -> Self {
        let mut capture = HostCapture::failed(host, source, failure.clone());
        capture.outputs = answered;
        for spec in crate::catalogue::CATALOGUE {
            if !capture.outputs.contains_key(spec.id) {
                capture.missing.insert(spec.id.to_string(), failure.clone());
            }
        }
        capture
    }
}

/// Every esxcli command of `outputs` answered `esxcli: not found` (or exit 127): the login
/// worked on something that is not an ESXi host.
pub fn esxcli_missing(outputs: &BTreeMap<String, RawOutput>) -> bool {
    let mut esxcli = outputs.values().filter(|o| o.command.starts_with("esxcli ")).peekable();
    esxcli.peek().is_some()
        && esxcli.all(|o| {
            let text = format!("{}{}", o.stdout, o.stderr);
            o.exit_status == Some(127)
                || text.contains("esxcli: not found")
                || text.contains("esxcli: command not found")
        })
}
