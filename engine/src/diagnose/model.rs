//! The report model: the public types that make up the JSON report and the check list.
use super::*;
use crate::exit;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
/// A check's outcome.
pub enum Status {
    /// The check does not apply to this host (PVRDMA itself needs ESXi 6.5+).
    NotApplicable,
    /// Verified from the host's own output.
    Pass,
    /// Works, but not as PVRDMA is meant to be set up.
    Warn,
    /// Broken: PVRDMA traffic cannot use the HCA.
    Fail,
    /// The data to decide is missing or unreadable; never a silent pass.
    Unknown,
}

/// Where a conclusion comes from: which command, which field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Evidence {
    /// Catalogue id of the command (`--list-checks`), e.g. `esxcli_rdma_device_list`.
    pub command: &'static str,
    /// The field (column or key) of its output the conclusion rests on.
    pub field: String,
}

/// One check on a host or across hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Stable check id (`--list-checks`), e.g. `firewall-pvrdma`.
    pub id: CheckId,
    /// Its outcome.
    pub status: Status,
    /// One line saying what was found, with the host's own values.
    pub summary: String,
    /// The outputs and fields the conclusion rests on.
    pub evidence: Vec<Evidence>,
    /// How to fix it, when the check does not pass.
    pub remedy: Option<Remedy>,
    /// The check was not judged: the check it depends on did not pass, or the thing it
    /// judges is absent (no RDMA device, no tagged vmknic). Its status is then `unknown`,
    /// or `not-applicable` when that other check fails; the summary says why ("not
    /// checked: ..."). Not in the JSON report, whose consumers read the summary.
    pub not_checked: bool,
}

impl Check {
    /// A check with no evidence and no remedy yet.
    pub fn new(id: CheckId, status: Status, summary: impl Into<String>) -> Check {
        Check {
            id,
            status,
            summary: summary.into(),
            evidence: Vec::new(),
            remedy: None,
            not_checked: false,
        }
    }
}

/// Check ids as a comma-separated list (`pvrdma-same-vds, vmknic-subnets`).
pub fn join_ids(ids: &[CheckId]) -> String {
    ids.iter().map(|c| c.id()).collect::<Vec<_>>().join(", ")
}

/// A check as JSON: v1's `remedy` string stays, the split `remediation` object is added.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Check")]
struct CheckJson<'a> {
    /// Stable check id (a public contract), e.g. `firewall-pvrdma`.
    id: CheckId,
    /// Its outcome.
    status: Status,
    /// One line saying what was found.
    summary: &'a str,
    /// Where the conclusion comes from.
    evidence: &'a [Evidence],
    /// The remedy in one string (command, then advice); `null` when there is none.
    remedy: Option<String>,
    /// The remedy split for scripts; `null` when there is none.
    remediation: Option<&'a Remedy>,
}

impl schemars::JsonSchema for Check {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Check".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        CheckJson::json_schema(generator)
    }
}

/// JSON keeps v1's `remedy` string and adds the split `remediation` object.
impl Serialize for Check {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        CheckJson {
            id: self.id,
            status: self.status,
            summary: &self.summary,
            evidence: &self.evidence,
            remedy: self.remedy.as_ref().map(Remedy::text),
            remediation: self.remedy.as_ref(),
        }
        .serialize(serializer)
    }
}

/// Quotes a value for a POSIX shell (the ESXi shell is busybox ash): bare when it only
/// holds characters no shell treats specially, else in single quotes.
pub fn shell_quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '=' | '@' | '%' | '+' | ',')
        });
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', "'\\''"))
    }
}

/// Whether a PVRDMA adapter's traffic to other hosts uses the physical HCA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// `Physical HCA available:1`: traffic to other hosts uses the HCA.
    Hca,
    /// `Physical HCA available:0`: traffic to other hosts goes over TCP.
    TcpFallback,
    /// No data to decide.
    Unknown,
}

/// The VM port an adapter's MAC sits on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PortView {
    /// The switch the port is on (vDS or standard vSwitch).
    pub vswitch: Option<String>,
    /// The `VDS ID` (UUID) of that switch when it is a vDS esxcli lists.
    pub vds_id: Option<String>,
    /// Its port group.
    pub portgroup: Option<String>,
    /// The uplink its traffic leaves through (`Team Uplink`).
    pub uplink: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
/// One PVRDMA adapter of a VM.
pub struct Adapter {
    /// Its index among the VM's PVRDMA adapters (`<World ID>_<index>` in vsish).
    pub index: u32,
    /// Whether its traffic to other hosts uses the HCA.
    pub verdict: Verdict,
    /// Why (for `tcp-fallback` and `unknown`), or a problem found with an `hca` adapter.
    pub reasons: Vec<String>,
    /// Its MAC address, from vsish.
    pub mac: Option<String>,
    /// The RoCE version it uses (1 or 2).
    pub roce_version: Option<u32>,
    /// Its active MTU, from vsish.
    pub active_mtu: Option<u32>,
    /// The VM port its MAC sits on.
    pub port: Option<PortView>,
    /// On a configuration-only host (read through the vSphere API), where the verdict is
    /// `unknown`: what the configuration predicts (`hca` when every check the API can
    /// judge passes, `tcp-fallback` when one fails); absent when it cannot tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted: Option<Verdict>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
/// A VM with at least one PVRDMA adapter.
pub struct Vm {
    /// Display name (`World ID N` when the process list did not name it).
    pub name: String,
    /// Its World ID while running; `null` for a VM known only from its `.vmx`.
    pub world_id: Option<u64>,
    /// Path of its `.vmx` file.
    pub config_file: Option<String>,
    /// Its PVRDMA adapters.
    pub adapters: Vec<Adapter>,
}

/// A host's overall state in the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HostStatus {
    /// Every check passes (warnings allowed) and every adapter uses the HCA.
    Ok,
    /// A check fails or an adapter falls back to TCP.
    Problems,
    /// Nothing fails, but some check or verdict is unknown.
    Incomplete,
    /// The host could not be reached or logged into.
    Unreachable,
    /// The host was reached but could not be diagnosed (not ESXi, unreadable capture).
    Error,
    /// Ctrl-C stopped the run before anything was collected from this host.
    Interrupted,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
/// Everything found on one host.
pub struct HostDiagnosis {
    /// The host as given on the command line (or the capture's folder name).
    pub host: String,
    /// Its overall outcome.
    pub status: HostStatus,
    /// Why it could not be collected, or only partly.
    pub error: Option<Failure>,
    /// ESXi version and build, e.g. `8.0.2 (build 22380479)`.
    pub esxi_version: Option<String>,
    /// Its host checks, in `--list-checks` order.
    pub checks: Vec<Check>,
    /// VMs with at least one PVRDMA adapter.
    pub vms: Vec<Vm>,
    /// Why the host's PVRDMA adapters could not be listed, when they could not.
    pub adapters_error: Option<String>,
    /// The vmknic tagged for PVRDMA and its IPv4 address, when known.
    pub pvrdma_vmknic: Option<PvrdmaVmknic>,
    /// The packet, drop and error counters of each RDMA uplink (`esxcli network nic stats
    /// get`), as the NIC counts them since its driver loaded: compare two runs.
    pub uplinks: Vec<UplinkCounters>,
    /// Failing fleet checks that break this host's pairs or name it (the host is then not
    /// healthy even when its own checks pass).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fleet_failures: Vec<CheckId>,
    /// Records of a record list (`esxcli vm process list`) that did not parse: each costs
    /// only its own record, and the host is `incomplete`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub record_errors: Vec<String>,
    /// Why the running VMs could not be listed (`esxcli vm process list` failed or broke
    /// off): VM names are then unknown and the per-VM queries did not run.
    pub vms_error: Option<String>,
    /// Every output that did not end cleanly (timed out, cut at a cap, connection lost,
    /// ...) or never ran: what depends on it is `unknown`, and the host `incomplete`.
    pub incomplete_outputs: Vec<IncompleteOutput>,
    /// Outputs (or records, or `.vmx` files) this version could not read: a format it does
    /// not know yet. What depends on them is `unknown`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unparsed_outputs: Vec<UnparsedOutput>,
    /// When something did not parse on a live run, or in a capture folder or vm-support
    /// bundle that `analyze` read: the command that writes a redacted support bundle of
    /// this host alone, to send with a report of the problem (`analyze` of that bundle
    /// shows the same failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_evidence: Option<String>,
    /// Judged from its configuration as vCenter's vSphere API gave it, without the host's
    /// own observation (`--no-ssh`, or SSH refused): the adapters' transport is not seen,
    /// and the checks only SSH can judge are `unknown`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub configuration_only: bool,
    /// Its RDMA devices, their uplinks and vDSes as values, for the HTML report's picture
    /// (the checks above report the same facts with their evidence).
    #[serde(skip)]
    pub topology: super::HostTopology,
}

/// An output the tool could not read, and where it stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct UnparsedOutput {
    /// Catalogue id (`vmx` for a `.vmx` file).
    pub command: String,
    /// The command as a user types it on the host (`esxcli rdma device list`).
    pub command_line: String,
    /// 1-based line of the output where reading stopped.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What the parser expected there.
    pub expected: String,
    /// The line it found (at most 80 characters).
    pub found: String,
}

impl UnparsedOutput {
    pub fn from_error(e: &pvrdma_parsers::ParseError) -> Self {
        UnparsedOutput {
            command: e.command.to_string(),
            command_line: typed_command(e.command),
            line: e.line,
            column: e.column,
            expected: e.expected.to_string(),
            found: e.snippet.clone(),
        }
    }
}

/// A catalogue command as a user types it on the host: its label without the note on how
/// it is batched (`esxcli network nic dcb status get -n <RDMA uplink>`).
pub fn typed_command(id: &str) -> String {
    if id == "vmx" {
        return "the VM's .vmx file".to_string();
    }
    cat::display_label(id).to_string()
}

impl HostDiagnosis {
    /// A host that could not be diagnosed at all (unreachable, interrupted, not ESXi):
    /// its error and the outputs that broke off, nothing else.
    pub fn not_diagnosed(
        host: &str,
        status: HostStatus,
        error: crate::capture::Failure,
        incomplete_outputs: Vec<IncompleteOutput>,
    ) -> Self {
        HostDiagnosis {
            host: host.to_string(),
            status,
            error: Some(error),
            esxi_version: None,
            checks: Vec::new(),
            vms: Vec::new(),
            adapters_error: None,
            pvrdma_vmknic: None,
            uplinks: Vec::new(),
            fleet_failures: Vec::new(),
            record_errors: Vec::new(),
            vms_error: None,
            incomplete_outputs,
            unparsed_outputs: Vec::new(),
            send_evidence: None,
            configuration_only: false,
            topology: super::HostTopology::default(),
        }
    }
}

/// One output the host's verdicts could not rest on, and what broke it off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct IncompleteOutput {
    /// Catalogue id.
    pub command: String,
    /// `timed-out`, `truncated`, `connection-lost`, `signalled`, `no-exit-status`,
    /// `never-ran`, or `unfinished-answers` (a batch that ended while some of its queries'
    /// answers did not arrive whole).
    event: &'static str,
    /// The event in words, e.g. "did not finish within --command-timeout 60s".
    pub reason: String,
    /// A concurrent batch only: its queries whose answer did not arrive whole, by key
    /// (the others' answers are evidence). Absent when every answer arrived whole.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unfinished: Vec<crate::capture::UnfinishedSection>,
}

/// The outputs of a capture that broke off or never ran, in catalogue order.
pub fn incomplete_outputs(capture: &HostCapture) -> Vec<IncompleteOutput> {
    let mut out = Vec::new();
    for spec in cat::CATALOGUE {
        if let Some(o) = capture.outputs.get(spec.id) {
            let outcome = o.outcome();
            if let Some(reason) = outcome.problem() {
                out.push(IncompleteOutput {
                    command: spec.id.to_string(),
                    event: outcome.kind(),
                    reason,
                    unfinished: o.unfinished.clone(),
                });
            } else if !o.unfinished.is_empty() {
                // The batch ended, but some of its queries did not (killed, cut on the
                // host, damaged in transit).
                let n = o.unfinished.len();
                out.push(IncompleteOutput {
                    command: spec.id.to_string(),
                    event: "unfinished-answers",
                    reason: format!("ran to its end, but {n} of its answers did not arrive whole",),
                    unfinished: o.unfinished.clone(),
                });
            }
        } else if let Some(f) = capture.missing.get(spec.id) {
            // A vm-support bundle's own .vmx files stand in for the live .vmx inventory.
            if spec.id == cat::VMX_PVRDMA_LINES && !capture.vmx_files.is_empty() {
                continue;
            }
            out.push(IncompleteOutput {
                command: spec.id.to_string(),
                event: "never-ran",
                reason: format!("never ran: {}", f.message),
                unfinished: Vec::new(),
            });
        }
    }
    out
}

/// The VMkernel adapter a host uses for PVRDMA.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PvrdmaVmknic {
    /// Its name, e.g. `vmk1`.
    pub name: String,
    /// Its IPv4 address.
    pub ipv4: Option<String>,
    /// Its IPv4 netmask.
    pub netmask: Option<String>,
    /// Its MTU (sizes the path probe's jumbo ping); the `mtu-consistent` check reports it.
    #[serde(skip)]
    pub mtu: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
/// How two adapters of different VMs exchange traffic.
pub enum Transport {
    /// Same host: memory copy, the HCA is not involved.
    Memcpy,
    /// Different hosts, both adapters on the HCA.
    Rdma,
    /// Different hosts, at least one adapter falls back to TCP.
    Tcp,
    /// Both adapters use the HCA, but a failing fleet check (different vDSes, duplicate
    /// vmknic addresses, RoCE v1 between subnets) breaks the path between them.
    Blocked,
    /// Not enough data to tell.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
/// Names one adapter in a pair.
pub struct AdapterRef {
    /// Its host.
    pub host: String,
    /// Its VM's name.
    pub vm: String,
    /// Tells apart two running VMs with the same display name.
    pub world_id: Option<u64>,
    /// The adapter's index in that VM.
    pub adapter: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
/// Counts over the whole run.
pub struct Summary {
    /// Hosts in the run.
    pub hosts: usize,
    /// Hosts with status `ok`.
    pub healthy: usize,
    /// Hosts with status `problems`.
    pub problems: usize,
    /// Hosts with status `incomplete`.
    pub incomplete: usize,
    /// Hosts with status `unreachable`.
    pub unreachable: usize,
    /// Hosts with status `error`.
    pub error: usize,
    /// PVRDMA adapters found.
    pub adapters: usize,
    /// Adapters with verdict `hca`.
    pub hca: usize,
    /// Adapters with verdict `tcp-fallback`.
    pub tcp_fallback: usize,
    /// Adapters with verdict `unknown`.
    pub unknown: usize,
    /// Hosts whose PVRDMA adapters could not be listed (not the same as having none).
    pub hosts_without_adapter_list: usize,
    /// Adapter pairs of different VMs by transport class (`transport.totals`).
    pub adapter_pairs: TransportCounts,
    /// Ids of the failing fleet checks.
    pub fleet_failures: Vec<CheckId>,
    /// Hosts stopped by Ctrl-C before anything was collected.
    pub interrupted: usize,
    /// Hosts that were reached and diagnosed: at least one check or verdict is known.
    /// 0 means nothing was diagnosed at all, whatever the other counts say.
    pub diagnosed: usize,
    /// Checks that warn, on hosts and across hosts.
    pub warnings: usize,
    /// The hosts of each status other than `ok`, folded as a node set (`esx[21-40]`).
    pub host_sets: BTreeMap<String, String>,
}

/// The whole run's diagnosis: what the report renders. The default is a run of no host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Diagnosis {
    /// One entry per host, in the order given.
    pub hosts: Vec<HostDiagnosis>,
    /// Checks across hosts (stable ids too): `vmknic-subnets`, `vmknic-ipv4-unique`,
    /// `pvrdma-same-vds`, `roce-version-pair`.
    pub fleet_checks: Vec<Check>,
    /// The transport between adapters of different VMs, counted (replaces the pair list).
    pub transport: TransportSummary,
    /// `--probe` only: one entry per probed (or skipped) host pair.
    pub probes: Vec<super::probe::Probe>,
    /// `--baseline` only: what differs from the baseline report.
    pub changes: Option<super::Changes>,
    /// A VM-first run (`--vm`): the VMs it was narrowed to.
    pub vm_scope: Option<VmScope>,
    /// Counts over the whole run.
    pub summary: Summary,
}

impl Diagnosis {
    /// The process exit code ([`crate::exit`]): 1 on any problem, else 3 when something
    /// is unknown or unreached (a VM-first run's chosen VM not diagnosed included), else 4 when a host was judged from its configuration only
    /// (and it predicts the HCA), else 0.
    pub fn exit_code(&self) -> u8 {
        let problems = self.fleet_checks.iter().any(|c| c.status == Status::Fail)
            || self.hosts.iter().any(|h| {
                h.checks.iter().any(|c| c.status == Status::Fail)
                    || h.vms
                        .iter()
                        .flat_map(|v| &v.adapters)
                        .any(|a| a.verdict == Verdict::TcpFallback)
            });
        if problems {
            return exit::PROBLEMS;
        }
        let incomplete = self.fleet_checks.iter().any(|c| c.status == Status::Unknown)
            || self.hosts.iter().any(HostDiagnosis::has_unknowns)
            || self.vm_scope.as_ref().is_some_and(|s| !s.not_diagnosed.is_empty());
        if incomplete {
            exit::INCOMPLETE
        } else if self.hosts.iter().any(|h| h.configuration_only) {
            exit::CONFIGURATION_ONLY
        } else {
            exit::HEALTHY
        }
    }
}
