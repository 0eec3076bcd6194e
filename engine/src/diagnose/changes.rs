//! The comparison with a baseline report (`--baseline`), as the diagnosis carries it.
//! Computed by the `baseline` module; here so the diagnosis model needs nothing above it.
use serde::Serialize;

/// What a change is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// `id` = `status`: the host's status (a host that appeared or vanished has a `null`).
    Host,
    /// `id` = check id; `host` is `null` for a check across hosts.
    Check,
    /// `id` = `<VM name>#<adapter index>`: the adapter's verdict.
    Adapter,
    /// `host` = the pinging host, `id` = the pinged host: the probe status.
    Probe,
    /// `id` = a VM-first run's chosen VM, `host` is `null`: `diagnosed` or
    /// `not-diagnosed` (compared only when both runs were VM-first).
    Vm,
}

impl ChangeKind {
    /// The kind's word in the human report.
    pub fn label(self) -> &'static str {
        match self {
            ChangeKind::Host => "host",
            ChangeKind::Check => "check",
            ChangeKind::Adapter => "adapter",
            ChangeKind::Probe => "probe",
            ChangeKind::Vm => "VM",
        }
    }
}

/// One difference from the baseline. `from`/`to` are `null` where one side lacks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Change {
    /// The host (the pinging host for a probe); `null` for a check across hosts.
    pub host: Option<String>,
    /// What changed: a host status, a check, an adapter verdict or a probe.
    pub kind: ChangeKind,
    /// Which one (see `kind`).
    pub id: String,
    /// The baseline's value; `null` when the baseline lacks it.
    pub from: Option<String>,
    /// This run's value; `null` when this run lacks it.
    pub to: Option<String>,
    /// Why it is what it is now, as this run says it: the check's `summary`, the
    /// adapter's `reasons`, the host's `error`, the probe's `detail`. Absent when this run
    /// lacks it or says nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What fixes it now, split as a check's `remediation`: the check's own; for an
    /// adapter in `tcp-fallback`, those of the host checks failing on its host (commands
    /// joined by `&&`). Absent when nothing is to be fixed or no fix is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<crate::diagnose::Remedy>,
}

/// The comparison with a baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Changes {
    /// The baseline file's modification time, RFC 3339 UTC.
    pub since: String,
    /// Every difference, in host order.
    pub list: Vec<Change>,
}
