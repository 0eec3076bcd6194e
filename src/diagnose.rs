//! Pipeline stage: *diagnose*. Pure functions from typed facts to checks and verdicts.
//!
//! Host checks have stable ids (a public contract for runbooks). Each carries its evidence
//! (catalogue id + field) and, when it fails, the exact command that fixes it. A check
//! whose data is missing is `unknown` with the reason, never a silent pass. The adapter
//! verdict comes from vsish's `Physical HCA available`; the host checks and the adapter's
//! own VM port explain a TCP fallback.
use crate::catalogue as cat;
use crate::collect::{Failure, HostCapture};
use crate::facts::{self, HostFacts};
use pvrdma_parsers as p;
use serde::Serialize;
use std::collections::BTreeMap;

mod fleet;
mod lossless;
mod vm_config;

pub use fleet::{AdapterException, HostPairTransport, TransportCounts, TransportSummary};

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
    pub id: &'static str,
    pub status: Status,
    pub summary: String,
    pub evidence: Vec<Evidence>,
    /// How to fix it, when the check does not pass.
    pub remedy: Option<Remedy>,
}

/// How to fix a check, split so a script can run the command and a person reads the
/// advice. New checks build it with [`with_command`], [`with_advice`] or [`with_fix`];
/// [`with_remedy`] sorts an old-style single string into the right half.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Remedy {
    /// One complete command line to run in the host's shell, exactly as printed: no
    /// placeholders, every value taken from the host shell-quoted. `None` when the fix is
    /// not a host command (vCenter, hardware) or a value is unknown.
    pub command: Option<String>,
    /// What to do besides (or instead of) the command, in prose: vCenter steps,
    /// alternatives, templates with placeholders in capitals.
    pub advice: Option<String>,
}

impl Remedy {
    /// The single-string form of JSON field `remedy` (v1): the command, then the advice.
    pub fn text(&self) -> String {
        match (&self.command, &self.advice) {
            (Some(c), Some(a)) => format!("{c}; {a}"),
            (Some(c), None) => c.clone(),
            (None, Some(a)) => a.clone(),
            (None, None) => String::new(),
        }
    }
}

/// A check as JSON: v1's `remedy` string stays, the split `remediation` object is added.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Check")]
struct CheckJson<'a> {
    /// Stable check id (a public contract), e.g. `firewall-pvrdma`.
    id: &'static str,
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

/// The public check ids, in report order, with what each one verifies.
pub const CHECKS: &[(&str, &str)] = &[
    ("esxi-version", "ESXi is 6.5 or later (PVRDMA's minimum)"),
    ("rdma-device-present", "a physical RDMA device (vmrdmaN) is registered"),
    ("rdma-device-active", "the RDMA device's port is Active"),
    (
        "rdma-uplink-on-dvs",
        "the RDMA device's paired uplink is an uplink of a vSphere Distributed Switch",
    ),
    (
        "dvs-single-uplink",
        "the HCA is the only uplink of that vDS (PVRDMA does not support NIC teaming)",
    ),
    ("pvrdma-vmknic-tagged", "/Net/PVRDMAVmknic names a VMkernel adapter"),
    (
        "pvrdma-vmknic-valid",
        "the tagged vmknic exists, is enabled and has an IPv4 address",
    ),
    (
        "firewall-pvrdma",
        "the firewall is off, or its pvrdma ruleset is enabled",
    ),
    ("mtu-consistent", "vDS, vmknic and uplink NIC agree on the Ethernet MTU"),
    (
        "roce-supported",
        "the RDMA device supports RoCE v1 or v2, and every adapter uses a version it supports",
    ),
    (
        "lossless-network",
        "the HCA uplink has global pause or PFC on (RoCE needs a lossless network); warns at most",
    ),
    (
        "vm-hardware-version",
        "PVRDMA VMs (.vmx) have virtual hardware 13 or later",
    ),
    (
        "vm-memory-reserved",
        "PVRDMA VMs reserve all guest memory (sched.mem.pin, or sched.mem.min = memSize)",
    ),
    (
        "vm-pvrdma-adapter-count",
        "PVRDMA adapters per VM within the release's limit (10 from 7.0.2, 1 before)",
    ),
    (
        "vm-native-endpoints",
        "adapters requesting native endpoints have hardware 18+ on ESXi 7.0 U1+, and vsish agrees",
    ),
    (
        "vmknic-subnets",
        "across hosts: the tagged vmknics share one IPv4 subnet (else routing and RoCE v2 are needed)",
    ),
    (
        "vmknic-ipv4-unique",
        "across hosts: no two PVRDMA vmknics share an IPv4 address",
    ),
    (
        "pvrdma-same-vds",
        "across hosts: the PVRDMA ports of adapters on the HCA sit on one vDS (name and UUID)",
    ),
    (
        "roce-version-pair",
        "across hosts: both ends of a pair use the same RoCE version (warns otherwise)",
    ),
];

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
    /// Failing fleet checks that break this host's pairs or name it (the host is then not
    /// healthy even when its own checks pass).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fleet_failures: Vec<&'static str>,
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
}

/// One output the host's verdicts could not rest on, and what broke it off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct IncompleteOutput {
    /// Catalogue id.
    pub command: String,
    /// `timed-out`, `truncated`, `connection-lost`, `signalled`, `no-exit-status`, `never-ran`.
    pub event: &'static str,
    /// The event in words, e.g. "did not finish within --command-timeout 60s".
    pub reason: String,
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
    pub fleet_failures: Vec<&'static str>,
    /// Hosts stopped by Ctrl-C before anything was collected.
    pub interrupted: usize,
    /// Hosts that were reached and diagnosed: at least one check or verdict is known.
    /// 0 means nothing was diagnosed at all, whatever the other counts say.
    pub diagnosed: usize,
    /// Checks that warn, on hosts and across hosts.
    pub warnings: usize,
    /// The hosts of each status other than `ok`, folded as a node set (`esx[21-40]`).
    pub host_sets: BTreeMap<String, String>,
    /// The one-line summary the human report ends with.
    pub line: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Diagnosis {
    pub hosts: Vec<HostDiagnosis>,
    /// Checks across hosts (stable ids too): `vmknic-subnets`, `vmknic-ipv4-unique`,
    /// `pvrdma-same-vds`, `roce-version-pair`.
    pub fleet_checks: Vec<Check>,
    /// The transport between adapters of different VMs, counted (replaces the pair list).
    pub transport: TransportSummary,
    /// `--probe` only: one entry per probed (or skipped) host pair.
    pub probes: Vec<crate::probe::Probe>,
    /// `--baseline` only: what differs from the baseline report.
    pub changes: Option<crate::baseline::Changes>,
    pub summary: Summary,
}

/// Documented exit codes.
pub mod exit {
    /// All hosts reached, no failing check, every adapter on the HCA.
    pub const HEALTHY: u8 = 0;
    /// A failing check or a `tcp-fallback` adapter.
    pub const PROBLEMS: u8 = 1;
    /// Usage or internal error.
    pub const USAGE: u8 = 2;
    /// Nothing failed, but a host was unreachable or a check/verdict is unknown.
    pub const INCOMPLETE: u8 = 3;
    /// Ctrl-C stopped the run (128 + SIGINT, as shells report it); the report covers
    /// what was collected.
    pub const INTERRUPTED: u8 = 130;
}

impl Diagnosis {
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
            || self.hosts.iter().any(|h| {
                h.status != HostStatus::Ok
                    || h.checks.iter().any(|c| c.status == Status::Unknown)
                    || h.vms
                        .iter()
                        .flat_map(|v| &v.adapters)
                        .any(|a| a.verdict == Verdict::Unknown)
            });
        if incomplete {
            exit::INCOMPLETE
        } else {
            exit::HEALTHY
        }
    }
}

/// Diagnoses every host, then the fleet checks and the transport between adapters.
pub fn diagnose(captures: &[HostCapture]) -> Diagnosis {
    let hosts: Vec<HostDiagnosis> = captures.iter().map(diagnose_host).collect();
    let probes = crate::probe::results(captures, &hosts);
    // A pair of hosts whose vmknics the probe found unreachable cannot carry RDMA.
    let unreachable = probes
        .iter()
        .filter(|p| p.status == crate::probe::ProbeStatus::Unreachable)
        .map(|p| {
            let (a, b) = (p.from.clone(), p.to.clone());
            if a <= b {
                (a, b)
            } else {
                (b, a)
            }
        })
        .collect();
    let mut d = fleet_diagnosis_with(hosts, crate::probe::check(&probes).into_iter().collect(), &unreachable);
    if let Some(tally) = crate::probe::tally(&probes) {
        d.summary.line.push_str(&format!("; path probe: {tally}"));
    }
    d.probes = probes;
    d
}

/// The fleet checks and transport over diagnosed hosts (a failing fleet check changes the
/// status of the hosts it involves, so the summary comes last).
pub fn fleet_diagnosis(hosts: Vec<HostDiagnosis>) -> Diagnosis {
    fleet_diagnosis_with(hosts, Vec::new(), &std::collections::BTreeSet::new())
}

/// [`fleet_diagnosis`] with fleet checks judged elsewhere (the path probe's).
fn fleet_diagnosis_with(
    mut hosts: Vec<HostDiagnosis>,
    extra: Vec<Check>,
    unreachable: &std::collections::BTreeSet<(String, String)>,
) -> Diagnosis {
    let subnets = check_vmknic_subnets(&hosts);
    let (fleet_checks, transport) = fleet::judge(&mut hosts, subnets, extra, unreachable);
    let summary = summarize(&hosts, &fleet_checks, &transport);
    Diagnosis {
        hosts,
        fleet_checks,
        transport,
        probes: Vec::new(),
        changes: None,
        summary,
    }
}

/// Diagnoses one host.
pub fn diagnose_host(capture: &HostCapture) -> HostDiagnosis {
    let nothing_collected = capture.outputs.is_empty() && capture.vmx_files.is_empty();
    let not_esxi = capture
        .error
        .clone()
        .filter(|e| e.kind == crate::collect::ErrorKind::NotEsxi)
        .or_else(|| not_esxi(capture));
    if let Some(error) = not_esxi {
        // Every check would only repeat "esxcli: not found": one line says it all.
        return HostDiagnosis {
            host: capture.host.clone(),
            status: HostStatus::Error,
            error: Some(error),
            esxi_version: None,
            checks: Vec::new(),
            vms: Vec::new(),
            adapters_error: None,
            pvrdma_vmknic: None,
            fleet_failures: Vec::new(),
            record_errors: Vec::new(),
            vms_error: None,
            incomplete_outputs: Vec::new(),
        };
    }
    let facts = facts::build(capture);
    if let (Some(error), true) = (&capture.error, nothing_collected) {
        let status = match error.kind {
            crate::collect::ErrorKind::Interrupted => HostStatus::Interrupted,
            k if k.is_unreachable() => HostStatus::Unreachable,
            _ => HostStatus::Error,
        };
        return HostDiagnosis {
            host: capture.host.clone(),
            status,
            error: Some(error.clone()),
            esxi_version: None,
            checks: Vec::new(),
            vms: Vec::new(),
            adapters_error: None,
            pvrdma_vmknic: None,
            fleet_failures: Vec::new(),
            record_errors: Vec::new(),
            vms_error: None,
            incomplete_outputs: incomplete_outputs(capture),
        };
    }
    let ctx = Context::new(&facts);
    let mut checks = vec![
        check_version(&facts),
        check_device_present(&facts),
        check_device_active(&ctx),
        check_uplink_on_dvs(&ctx),
        check_single_uplink(&ctx),
        check_vmknic_tagged(&ctx),
        check_vmknic_valid(&ctx),
        check_firewall(&facts),
        check_mtu(&ctx),
        check_roce(&ctx),
        lossless::check_lossless(&ctx),
    ];
    checks.extend(vm_config::checks(&facts));
    settle_not_checked(&mut checks);
    let below_65 = matches!(&facts.version, Ok(v) if v.numbers().is_some_and(|n| n < (6, 5, 0)));
    if below_65 {
        // Nothing PVRDMA needs exists on such a host: say so instead of "unknown".
        for c in checks.iter_mut().skip(1) {
            *c = check(
                c.id,
                Status::NotApplicable,
                "not applicable below ESXi 6.5 (PVRDMA needs 6.5 or later, see esxi-version)",
                Vec::new(),
            );
        }
    }
    let (vms, adapters_error) = if below_65 {
        (Vec::new(), None)
    } else {
        adapters(&facts, &ctx, &checks)
    };
    let record_errors = facts.record_errors.clone();
    let esxi_version = facts.version.as_ref().ok().map(|v| match &v.build {
        Some(build) => format!("{} (build {build})", v.version),
        None => v.version.clone(),
    });
    let any_fail = checks.iter().any(|c| c.status == Status::Fail)
        || vms
            .iter()
            .flat_map(|v| &v.adapters)
            .any(|a| a.verdict == Verdict::TcpFallback);
    let incomplete_outputs = incomplete_outputs(capture);
    let vms_error = facts
        .vms
        .as_ref()
        .err()
        .map(|e| format!("running VMs could not be listed: {e}"));
    let any_unknown = !incomplete_outputs.is_empty()
        || vms_error.is_some()
        || checks.iter().any(|c| c.status == Status::Unknown)
        || vms
            .iter()
            .flat_map(|v| &v.adapters)
            .any(|a| a.verdict == Verdict::Unknown)
        || adapters_error.is_some()
        || !record_errors.is_empty()
        || capture.error.is_some();
    let status = if any_fail {
        HostStatus::Problems
    } else if any_unknown {
        HostStatus::Incomplete
    } else {
        HostStatus::Ok
    };
    HostDiagnosis {
        host: capture.host.clone(),
        status,
        error: capture.error.clone(),
        esxi_version,
        checks,
        vms,
        adapters_error,
        pvrdma_vmknic: pvrdma_vmknic(&ctx),
        fleet_failures: Vec::new(),
        record_errors,
        vms_error,
        incomplete_outputs,
    }
}

/// A capture (live or offline) where every esxcli command answered "not found": the
/// login worked on something that is not ESXi.
fn not_esxi(capture: &HostCapture) -> Option<Failure> {
    let all_missing = capture.esxcli_missing();
    all_missing.then(|| {
        Failure::new(
            crate::collect::ErrorKind::NotEsxi,
            format!(
                "{}: not an ESXi host: `esxcli` is not found there (or its shell PATH lacks it); check that the name points at an ESXi host",
                capture.host
            ),
        )
    })
}

fn pvrdma_vmknic(ctx: &Context) -> Option<PvrdmaVmknic> {
    let name = ctx.tagged_vmknic.clone()?;
    let row = ctx
        .facts
        .ipv4
        .as_ref()
        .ok()
        .and_then(|rows| rows.iter().find(|r| r.name == name));
    let mtu = ctx
        .facts
        .vmknics
        .as_ref()
        .ok()
        .and_then(|v| v.iter().find(|v| v.name == name))
        .and_then(|v| v.mtu);
    Some(PvrdmaVmknic {
        ipv4: row.and_then(|r| r.address.clone()),
        netmask: row.and_then(|r| r.netmask.clone()),
        mtu,
        name,
    })
}

/// `10.10.10.11` with `255.255.255.0` → `10.10.10.0/24`; `None` unless both parse and
/// the mask is contiguous.
pub(crate) fn ipv4_network(address: &str, netmask: &str) -> Option<String> {
    let address: std::net::Ipv4Addr = address.trim().parse().ok()?;
    let mask = u32::from(netmask.trim().parse::<std::net::Ipv4Addr>().ok()?);
    let prefix = mask.leading_ones();
    if mask.checked_shl(prefix).unwrap_or(0) != 0 {
        return None;
    }
    let network = std::net::Ipv4Addr::from(u32::from(address) & mask);
    Some(format!("{network}/{prefix}"))
}

/// `vmknic-subnets`: the tagged vmknics of all hosts must reach each other (DOMAIN §2.4).
/// Without sending traffic, the best read-only evidence is their IPv4 subnets: one subnet
/// is the set-up the guides describe; several need IP routing, which RoCE v1 cannot cross.
fn check_vmknic_subnets(hosts: &[HostDiagnosis]) -> Option<Check> {
    const ID: &str = "vmknic-subnets";
    let with_vmknic: Vec<&HostDiagnosis> = hosts.iter().filter(|h| h.pvrdma_vmknic.is_some()).collect();
    if with_vmknic.len() < 2 {
        return None;
    }
    let mut networks: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut unknown: Vec<(String, String)> = Vec::new();
    for h in &with_vmknic {
        let Some(v) = &h.pvrdma_vmknic else { continue };
        let network = v
            .ipv4
            .as_deref()
            .zip(v.netmask.as_deref())
            .and_then(|(a, m)| ipv4_network(a, m));
        match network {
            Some(n) => networks.entry(n).or_default().push((h.host.clone(), v.name.clone())),
            None => unknown.push((h.host.clone(), v.name.clone())),
        }
    }
    // `esx[01-40] vmk1` rather than forty `esxNN vmk1`: hosts folded per vmknic name.
    let fold_members = |members: &[(String, String)]| -> String {
        let mut by_vmk: Vec<(&str, Vec<&str>)> = Vec::new();
        for (host, vmk) in members {
            match by_vmk.iter_mut().find(|(v, _)| v == vmk) {
                Some((_, hosts)) => hosts.push(host),
                None => by_vmk.push((vmk, vec![host])),
            }
        }
        by_vmk
            .iter()
            .map(|(vmk, hosts)| format!("{} {vmk}", crate::nodeset::fold(hosts)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let unknown = if unknown.is_empty() {
        Vec::new()
    } else {
        vec![fold_members(&unknown)]
    };
    let evidence = vec![ev(cat::IPV4_GET, "IPv4 Address, IPv4 Netmask of the tagged vmknic")];
    let listing = networks
        .iter()
        .map(|(n, members)| format!("{n} ({})", fold_members(members)))
        .collect::<Vec<_>>()
        .join("; ");
    match networks.len() {
        0 | 1 if !unknown.is_empty() => Some(check(
            ID,
            Status::Unknown,
            format!(
                "IPv4 subnet unknown for {}{}",
                unknown.join(", "),
                if listing.is_empty() {
                    String::new()
                } else {
                    format!("; known: {listing}")
                }
            ),
            evidence,
        )),
        0 => None,
        1 => Some(check(
            ID,
            Status::Pass,
            format!("the PVRDMA vmknics share one IPv4 subnet: {listing}"),
            evidence,
        )),
        n => {
            let roce_v1: Vec<String> = with_vmknic
                .iter()
                .flat_map(|h| {
                    h.vms.iter().flat_map(move |vm| {
                        vm.adapters
                            .iter()
                            .filter(|a| a.roce_version == Some(1))
                            .map(move |a| format!("{}/{}#{}", h.host, vm.name, a.index))
                    })
                })
                .collect();
            let (status, tail) = if roce_v1.is_empty() {
                (
                    Status::Warn,
                    "PVRDMA between them needs IP routing (RoCE v2 only)".to_string(),
                )
            } else {
                (
                    Status::Fail,
                    format!("RoCE v1 is not routable, and {} use it", roce_v1.join(", ")),
                )
            };
            Some(with_advice(
                check(ID, status, format!("the PVRDMA vmknics are in {n} IPv4 subnets: {listing}: {tail}"), evidence),
                "put the PVRDMA vmknics in one subnet (on each host: esxcli network ip interface ipv4 set -i VMK -t static -I ADDRESS -N NETMASK), or route between the subnets and use RoCE v2",
            ))
        }
    }
}

/// Facts the checks share: which RDMA device PVRDMA would use and where its uplink is.
struct Context<'a> {
    facts: &'a HostFacts,
    /// The device PVRDMA uses: one whose paired uplink is on a vDS, Active first.
    device: Option<&'a p::RdmaDevice>,
    /// The vDS holding that device's uplink.
    dvs: Option<&'a p::DvsSwitch>,
    /// Every RDMA device whose uplink is on a vDS, with that vDS: a host may have two HCAs
    /// on two switches, and an adapter is judged against the one its port is on.
    rdma_switches: Vec<(&'a p::RdmaDevice, &'a p::DvsSwitch)>,
    /// The vmknic named by /Net/PVRDMAVmknic, when set.
    tagged_vmknic: Option<String>,
}

impl<'a> Context<'a> {
    fn new(facts: &'a HostFacts) -> Self {
        let devices: &[p::RdmaDevice] = facts.rdma_devices.as_deref().unwrap_or(&[]);
        let switches: &[p::DvsSwitch] = facts.dvs.as_deref().unwrap_or(&[]);
        let dvs_of = |d: &p::RdmaDevice| {
            let uplink = d.paired_uplink.as_deref()?;
            switches.iter().find(|s| s.uplinks.iter().any(|u| u == uplink))
        };
        let is_active = |d: &p::RdmaDevice| matches!(d.state, p::PortState::Active | p::PortState::ActiveDefer);
        let device = devices
            .iter()
            .find(|d| dvs_of(d).is_some() && is_active(d))
            .or_else(|| devices.iter().find(|d| dvs_of(d).is_some()))
            .or_else(|| devices.iter().find(|d| is_active(d)))
            .or_else(|| devices.first());
        let dvs = device.and_then(dvs_of);
        let rdma_switches = devices.iter().filter_map(|d| Some((d, dvs_of(d)?))).collect();
        let tagged_vmknic = facts
            .pvrdma_vmknic
            .as_ref()
            .ok()
            .map(|o| o.string_value.trim().to_string())
            .filter(|v| !v.is_empty());
        Context {
            facts,
            device,
            dvs,
            rdma_switches,
            tagged_vmknic,
        }
    }

    /// Every vDS whose one and only uplink is an HCA's paired uplink, with that HCA, in
    /// the order esxcli lists the devices (each vDS once).
    fn single_uplink_hca_switches(&self) -> Vec<(&'a p::RdmaDevice, &'a p::DvsSwitch)> {
        let mut out: Vec<(&p::RdmaDevice, &p::DvsSwitch)> = Vec::new();
        for (d, s) in &self.rdma_switches {
            if s.uplinks.len() == 1 && !out.iter().any(|(_, o)| o.name == s.name) {
                out.push((d, s));
            }
        }
        out
    }

    /// The vmknic to suggest in a remedy: the one bound to the RDMA device, else one on
    /// the RDMA vDS; `None` when no such vmknic is known.
    fn suggested_vmknic(&self) -> Option<String> {
        let bound = self.device.and_then(|d| {
            self.facts
                .rdma_vmknics
                .as_ref()
                .ok()?
                .iter()
                .find(|v| v.device == d.name)?
                .vmknic
                .clone()
        });
        let on_dvs = || {
            let dvs = self.dvs?;
            self.facts
                .vmknics
                .as_ref()
                .ok()?
                .iter()
                .find(|v| v.vds_name.as_deref() == Some(dvs.name.as_str()))
                .map(|v| v.name.clone())
        };
        bound.or_else(on_dvs)
    }

    /// The remedy that tags the suggested vmknic for PVRDMA.
    fn tag_vmknic(&self) -> Remedy {
        match self.suggested_vmknic() {
            Some(vmk) => Remedy {
                command: Some(format!(
                    "esxcli system settings advanced set -o /Net/PVRDMAVmknic -s {}",
                    shell_quote(&vmk)
                )),
                advice: None,
            },
            None => Remedy {
                command: None,
                advice: Some(
                    "no vmknic is bound to the RDMA device or on its vDS: create one on the HCA's vDS, then esxcli system settings advanced set -o /Net/PVRDMAVmknic -s VMK"
                        .to_string(),
                ),
            },
        }
    }
}

fn ev(command: &'static str, field: impl Into<String>) -> Evidence {
    Evidence {
        command,
        field: field.into(),
    }
}

fn check(id: &'static str, status: Status, summary: impl Into<String>, evidence: Vec<Evidence>) -> Check {
    Check {
        id,
        status,
        summary: summary.into(),
        evidence,
        remedy: None,
    }
}

/// A fix that is one host command (values from the host already shell-quoted).
fn with_command(c: Check, command: impl Into<String>) -> Check {
    with_fix(c, Some(command.into()), None)
}

/// A fix that is not a host command: vCenter, hardware, alternatives.
fn with_advice(c: Check, advice: impl Into<String>) -> Check {
    with_fix(c, None, Some(advice.into()))
}

fn with_fix(mut c: Check, command: Option<String>, advice: Option<String>) -> Check {
    c.remedy = Some(Remedy { command, advice });
    c
}

/// Transitional: an old-style single remedy string. A complete esxcli line (no `<...>`
/// placeholder, no prose after it) becomes the command, anything else the advice.
#[allow(dead_code)]
fn with_remedy(c: Check, remedy: impl Into<String>) -> Check {
    let text = remedy.into();
    let runnable = text.starts_with("esxcli ") && !text.contains(['<', '>', ';', '(']) && !text.contains(", ");
    if runnable {
        with_command(c, text)
    } else {
        with_advice(c, text)
    }
}

/// The check cannot run because a fact is missing.
fn unknown_from(id: &'static str, command: &'static str, error: &facts::FactError) -> Check {
    check(id, Status::Unknown, error.to_string(), vec![ev(command, "output")])
}

/// The check a dependent check needs, for [`settle_not_checked`].
const PREREQUISITES: &[(&str, &str)] = &[
    ("rdma-device-active", "rdma-device-present"),
    ("rdma-uplink-on-dvs", "rdma-device-present"),
    ("dvs-single-uplink", "rdma-uplink-on-dvs"),
    ("pvrdma-vmknic-valid", "pvrdma-vmknic-tagged"),
    ("mtu-consistent", "rdma-uplink-on-dvs"),
    ("roce-supported", "rdma-device-present"),
    ("lossless-network", "rdma-device-present"),
];

/// `unknown` means missing data and nothing else: a check skipped because its prerequisite
/// *fails* (or is itself not applicable) has nothing to judge, so it is `not-applicable`
/// with that reason; it stays `unknown` only when the prerequisite is unknown.
fn settle_not_checked(checks: &mut [Check]) {
    for i in 0..checks.len() {
        let Some(c) = checks.get(i) else { continue };
        if c.status != Status::Unknown || !c.summary.starts_with("not checked:") {
            continue;
        }
        let Some((_, pre)) = PREREQUISITES.iter().find(|(id, _)| *id == c.id) else {
            continue;
        };
        let pre_status = checks.iter().find(|p| p.id == *pre).map(|p| p.status);
        if let Some(status @ (Status::Fail | Status::NotApplicable)) = pre_status {
            let why = if status == Status::Fail {
                "fails"
            } else {
                "is not applicable"
            };
            if let Some(c) = checks.get_mut(i) {
                c.status = Status::NotApplicable;
                c.summary = format!("not checked: {pre} {why}");
            }
        }
    }
}

/// The check depends on another one that did not pass.
fn not_checked(id: &'static str, because: &str) -> Check {
    check(id, Status::Unknown, format!("not checked: {because}"), Vec::new())
}

fn check_version(f: &HostFacts) -> Check {
    const ID: &str = "esxi-version";
    let v = match &f.version {
        Ok(v) => v,
        Err(e) => return unknown_from(ID, cat::SYSTEM_VERSION, e),
    };
    let evidence = vec![ev(cat::SYSTEM_VERSION, "Version")];
    match v.numbers() {
        Some(n) if n >= (6, 5, 0) => check(
            ID,
            Status::Pass,
            format!("{} {} supports PVRDMA", v.product, v.version),
            evidence,
        ),
        Some(_) => with_advice(
            check(
                ID,
                Status::Fail,
                format!("{} {} is older than 6.5, which PVRDMA needs", v.product, v.version),
                evidence,
            ),
            "upgrade the host to ESXi 6.5 or later (7.0 U1+ for native endpoints, 8.0+ for async mode)",
        ),
        None => check(
            ID,
            Status::Unknown,
            format!("version {:?} is not in a form this tool knows", v.version),
            evidence,
        ),
    }
}

fn check_device_present(f: &HostFacts) -> Check {
    const ID: &str = "rdma-device-present";
    let devices = match &f.rdma_devices {
        Ok(d) => d,
        Err(e) => return unknown_from(ID, cat::RDMA_DEVICE_LIST, e),
    };
    let evidence = vec![ev(cat::RDMA_DEVICE_LIST, "Name")];
    if devices.is_empty() {
        return with_advice(
            check(ID, Status::Fail, "no RDMA device is registered (esxcli rdma device list is empty): PVRDMA traffic to other hosts falls back to TCP", evidence),
            "install a RoCE-capable NIC and its RDMA driver, then check `esxcli system module list | grep -i rdma` and `esxcli rdma device list`",
        );
    }
    let names: Vec<String> = devices
        .iter()
        .map(|d| match &d.paired_uplink {
            Some(u) => format!("{} ({}, uplink {u})", d.name, d.driver),
            None => format!("{} ({})", d.name, d.driver),
        })
        .collect();
    check(
        ID,
        Status::Pass,
        format!("RDMA device registered: {}", names.join(", ")),
        evidence,
    )
}

fn state_name(s: &p::PortState) -> String {
    match s {
        p::PortState::Active => "Active".into(),
        p::PortState::ActiveDefer => "Active (deferred)".into(),
        p::PortState::Down => "Down".into(),
        p::PortState::Init => "Init".into(),
        p::PortState::Armed => "Armed".into(),
        p::PortState::Nop => "Nop".into(),
        p::PortState::Other(o) => o.clone(),
    }
}

fn check_device_active(ctx: &Context) -> Check {
    const ID: &str = "rdma-device-active";
    let devices = match &ctx.facts.rdma_devices {
        Ok(d) => d,
        Err(e) => return unknown_from(ID, cat::RDMA_DEVICE_LIST, e),
    };
    let Some(device) = ctx.device else {
        return not_checked(
            ID,
            &format!("no RDMA device among {} rows (see rdma-device-present)", devices.len()),
        );
    };
    let evidence = vec![ev(cat::RDMA_DEVICE_LIST, format!("State of {}", device.name))];
    match device.state {
        p::PortState::Active | p::PortState::ActiveDefer => check(
            ID,
            Status::Pass,
            format!("{} is {}", device.name, state_name(&device.state)),
            evidence,
        ),
        _ => {
            let uplink = device.paired_uplink.clone().unwrap_or_else(|| "its uplink".to_string());
            with_advice(
                check(
                    ID,
                    Status::Fail,
                    format!("{} is {}, not Active: the HCA cannot carry PVRDMA traffic", device.name, state_name(&device.state)),
                    evidence,
                ),
                format!("check the link of {uplink} (cable, switch port, `esxcli network nic get -n {uplink}`) until `esxcli rdma device list` shows {} Active", device.name),
            )
        }
    }
}

fn check_uplink_on_dvs(ctx: &Context) -> Check {
    const ID: &str = "rdma-uplink-on-dvs";
    let f = ctx.facts;
    match &f.rdma_devices {
        Ok(d) if d.is_empty() => return not_checked(ID, "no RDMA device (see rdma-device-present)"),
        Ok(_) => {}
        Err(e) => return unknown_from(ID, cat::RDMA_DEVICE_LIST, e),
    }
    let switches = match &f.dvs {
        Ok(s) => s,
        Err(e) => return unknown_from(ID, cat::DVS_LIST, e),
    };
    let mut evidence = vec![ev(cat::RDMA_DEVICE_LIST, "Paired Uplink"), ev(cat::DVS_LIST, "Uplinks")];
    if let (Some(device), Some(dvs)) = (ctx.device, ctx.dvs) {
        let uplink = device.paired_uplink.as_deref().unwrap_or("?");
        return check(
            ID,
            Status::Pass,
            format!("{} (uplink {uplink}) is an uplink of vDS {}", device.name, dvs.name),
            evidence,
        );
    }
    // The device the doctor would use (Active first) is the one to move onto a vDS.
    let Some((device, uplink)) = ctx.device.and_then(|d| Some((d, d.paired_uplink.as_deref()?))) else {
        return check(ID, Status::Fail, "no RDMA device has a paired uplink", evidence);
    };
    evidence.push(ev(cat::STANDARD_SWITCH_LIST, "Uplinks"));
    let standard = f
        .standard_switches
        .as_ref()
        .ok()
        .and_then(|ss| ss.iter().find(|s| s.uplinks.iter().any(|x| x == uplink)));
    let where_now = match standard {
        Some(s) => format!("{uplink} is an uplink of standard vSwitch {}", s.name),
        None => format!("{uplink} is on no vDS"),
    };
    let summary = if switches.is_empty() {
        format!(
            "this host has no vSphere Distributed Switch; PVRDMA needs one whose uplink is the HCA ({} → {where_now})",
            device.name
        )
    } else {
        format!("the HCA {} is not an uplink of any vDS: {where_now}", device.name)
    };
    let detach = standard.map(|s| {
        format!(
            "esxcli network vswitch standard uplink remove -u {} -v {}",
            shell_quote(uplink),
            shell_quote(&s.name)
        )
    });
    let target = match switches.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().as_slice() {
        [one] => format!("vDS {one}"),
        _ => "the PVRDMA vDS".to_string(),
    };
    let then = if detach.is_some() { "then " } else { "" };
    with_fix(
        check(ID, Status::Fail, summary, evidence),
        detach,
        Some(format!("{then}in vCenter add {uplink} as the only uplink of {target} (Distributed Switch > Add and Manage Hosts > Manage physical adapters)")),
    )
}

fn check_single_uplink(ctx: &Context) -> Check {
    const ID: &str = "dvs-single-uplink";
    if ctx.rdma_switches.is_empty() {
        return not_checked(ID, "needs rdma-uplink-on-dvs to pass");
    }
    // Every vDS carrying an HCA is checked: teaming on any of them breaks its adapters.
    let mut seen: Vec<&str> = Vec::new();
    let mut good = Vec::new();
    let mut teamed = Vec::new();
    for (device, dvs) in &ctx.rdma_switches {
        if seen.contains(&dvs.name.as_str()) {
            continue;
        }
        seen.push(&dvs.name);
        if dvs.uplinks.len() == 1 {
            good.push(format!(
                "{} is the only uplink of vDS {}",
                dvs.uplinks.join(""),
                dvs.name
            ));
        } else {
            teamed.push((*device, *dvs));
        }
    }
    let evidence = seen
        .iter()
        .map(|name| ev(cat::DVS_LIST, format!("Uplinks of {name}")))
        .collect();
    if teamed.is_empty() {
        return check(ID, Status::Pass, good.join("; "), evidence);
    }
    let summaries: Vec<String> = teamed
        .iter()
        .map(|(device, dvs)| {
            format!(
                "vDS {} has {} uplinks ({}): PVRDMA does not support NIC teaming, the HCA {} must be the only uplink",
                dvs.name,
                dvs.uplinks.len(),
                dvs.uplinks.join(", "),
                device.paired_uplink.as_deref().unwrap_or("?")
            )
        })
        .collect();
    let remedies: Vec<String> = teamed
        .iter()
        .map(|(device, dvs)| {
            let hca = device.paired_uplink.as_deref().unwrap_or("");
            let others: Vec<&str> = dvs.uplinks.iter().map(String::as_str).filter(|u| *u != hca).collect();
            format!(
                "in vCenter, remove {} from the uplinks of vDS {} (or move {} to another vDS)",
                others.join(", "),
                dvs.name,
                if others.len() == 1 { "it" } else { "them" }
            )
        })
        .collect();
    with_advice(
        check(ID, Status::Fail, summaries.join("; "), evidence),
        remedies.join("; "),
    )
}

fn check_vmknic_tagged(ctx: &Context) -> Check {
    const ID: &str = "pvrdma-vmknic-tagged";
    let option = match &ctx.facts.pvrdma_vmknic {
        Ok(o) => o,
        Err(e) => return unknown_from(ID, cat::PVRDMA_VMKNIC_OPTION, e),
    };
    let evidence = vec![ev(cat::PVRDMA_VMKNIC_OPTION, "String Value")];
    match &ctx.tagged_vmknic {
        Some(vmk) => check(ID, Status::Pass, format!("{} = {vmk}", option.path), evidence),
        None => {
            let fix = ctx.tag_vmknic();
            with_fix(
                check(
                    ID,
                    Status::Fail,
                    "no VMkernel adapter is tagged for PVRDMA (/Net/PVRDMAVmknic is empty)",
                    evidence,
                ),
                fix.command,
                fix.advice,
            )
        }
    }
}

fn check_vmknic_valid(ctx: &Context) -> Check {
    const ID: &str = "pvrdma-vmknic-valid";
    let f = ctx.facts;
    let Some(vmk) = &ctx.tagged_vmknic else {
        return not_checked(ID, "needs pvrdma-vmknic-tagged to pass");
    };
    let interfaces = match &f.vmknics {
        Ok(i) => i,
        Err(e) => return unknown_from(ID, cat::IP_INTERFACE_LIST, e),
    };
    let Some(interface) = interfaces.iter().find(|i| &i.name == vmk) else {
        let existing: Vec<&str> = interfaces.iter().map(|i| i.name.as_str()).collect();
        let fix = ctx.tag_vmknic();
        return with_fix(
            check(
                ID,
                Status::Fail,
                format!(
                    "{vmk} is tagged for PVRDMA but does not exist (vmknics: {})",
                    if existing.is_empty() {
                        "none".to_string()
                    } else {
                        existing.join(", ")
                    }
                ),
                vec![
                    ev(cat::PVRDMA_VMKNIC_OPTION, "String Value"),
                    ev(cat::IP_INTERFACE_LIST, "Name"),
                ],
            ),
            fix.command,
            fix.advice,
        );
    };
    let enabled_ev = || ev(cat::IP_INTERFACE_LIST, format!("Enabled of {vmk}"));
    match interface.enabled {
        Some(true) => {}
        Some(false) => {
            return with_command(
                check(
                    ID,
                    Status::Fail,
                    format!("{vmk} exists but is disabled"),
                    vec![enabled_ev()],
                ),
                format!("esxcli network ip interface set -e true -i {}", shell_quote(vmk)),
            )
        }
        None => {
            return check(
                ID,
                Status::Unknown,
                format!("{vmk} exists but its Enabled state is not printed"),
                vec![enabled_ev()],
            )
        }
    }
    let ipv4 = match &f.ipv4 {
        Ok(rows) => rows.iter().find(|r| &r.name == vmk),
        Err(e) => {
            return check(
                ID,
                Status::Unknown,
                format!("{vmk} exists and is enabled; its IPv4 address is unknown: {e}"),
                vec![ev(cat::IPV4_GET, "output")],
            )
        }
    };
    let netstack = interface.netstack.as_deref().filter(|n| *n != "defaultTcpipStack");
    let address = match (ipv4, netstack) {
        (Some(row), _) => row.address.clone(),
        // `ipv4 get` without --netstack may list only the default netstack's interfaces.
        (None, Some(netstack)) => {
            return check(
                ID,
                Status::Unknown,
                format!(
                    "{vmk} is on netstack {netstack}, which `esxcli network ip interface ipv4 get` did not list; check `esxcli network ip interface ipv4 get -N {netstack}`"
                ),
                vec![ev(cat::IP_INTERFACE_LIST, format!("Netstack Instance of {vmk}")), ev(cat::IPV4_GET, "Name")],
            )
        }
        (None, None) => None,
    };
    let Some(address) = address else {
        return with_advice(
            check(
                ID,
                Status::Fail,
                format!("{vmk} has no IPv4 address; PVRDMA endpoints cannot reach each other"),
                vec![ev(cat::IPV4_GET, format!("IPv4 Address of {vmk}"))],
            ),
            format!(
                "give {vmk} an address in the PVRDMA subnet: esxcli network ip interface ipv4 set -i {} -t static -I ADDRESS -N NETMASK",
                shell_quote(vmk)
            ),
        );
    };
    let evidence = vec![
        enabled_ev(),
        ev(cat::IPV4_GET, format!("IPv4 Address of {vmk}")),
        ev(cat::IP_INTERFACE_LIST, format!("VDS Name / Portset of {vmk}")),
    ];
    check(
        ID,
        Status::Pass,
        format!(
            "{vmk} exists, is enabled, has IPv4 {address}; {}",
            vmknic_location(ctx, interface)
        ),
        evidence,
    )
}

/// Where the tagged vmknic sits, judged against every vDS whose single uplink is an HCA.
/// PVRDMA uses the vmknic for its control data (and the TCP channel), not for the RDMA
/// data path: the VMware paper and the vCenter 7 write-up in the seeds tag the management
/// vmknic `vmk0` on a standard vSwitch, the Mellanox guide a vmknic on the vDS. Both are
/// set-ups the seeds call correct, so the location is reported, never failed.
fn vmknic_location(ctx: &Context, interface: &p::VmkInterface) -> String {
    let hca_switches = ctx.single_uplink_hca_switches();
    let on = match (interface.vds_name.as_deref(), interface.portset.as_deref()) {
        (Some(vds), _) => format!("vDS {vds}"),
        (None, Some(portset)) => format!("standard switch {portset}"),
        (None, None) => "a switch esxcli does not name".to_string(),
    };
    if let Some((device, dvs)) = hca_switches
        .iter()
        .find(|(_, s)| interface.vds_name.as_deref() == Some(s.name.as_str()))
    {
        return format!(
            "it sits on vDS {}, whose only uplink is the HCA {} ({})",
            dvs.name,
            device.paired_uplink.as_deref().unwrap_or("?"),
            device.name
        );
    }
    if let (Err(e), _) | (_, Err(e)) = (&ctx.facts.rdma_devices, &ctx.facts.dvs) {
        return format!(
            "it sits on {on}; which vDS carries an HCA is not known ({})",
            e.command()
        );
    }
    let names: Vec<String> = hca_switches.iter().map(|(_, s)| format!("vDS {}", s.name)).collect();
    let hca_text = if names.is_empty() {
        String::new()
    } else {
        format!(", not on {}", names.join(" or "))
    };
    format!(
        "it sits on {on}{hca_text}: PVRDMA uses it for control traffic only (the seeds' own set-up tags the management vmknic vmk0 on a standard vSwitch); RDMA data goes through the HCA"
    )
}

fn check_firewall(f: &HostFacts) -> Check {
    const ID: &str = "firewall-pvrdma";
    let firewall_off = matches!(&f.firewall, Ok(fw) if fw.enabled == Some(false));
    if firewall_off {
        return check(
            ID,
            Status::Pass,
            "the ESXi firewall is disabled, so it does not block PVRDMA",
            vec![ev(cat::FIREWALL_GET, "Enabled")],
        );
    }
    let rulesets = match &f.rulesets {
        Ok(r) => r,
        Err(e) => return unknown_from(ID, cat::FIREWALL_RULESET_LIST, e),
    };
    // `firewall get` is evidence only when it was read: an enabled pvrdma ruleset passes
    // whatever the firewall state, and must not cite a command that failed.
    let evidence: Vec<Evidence> = f
        .firewall
        .is_ok()
        .then(|| ev(cat::FIREWALL_GET, "Enabled"))
        .into_iter()
        .chain([ev(cat::FIREWALL_RULESET_LIST, "Enabled of pvrdma")])
        .collect();
    const ENABLE: &str = "esxcli network firewall ruleset set -e true -r pvrdma";
    let esxi8 = matches!(&f.version, Ok(v) if v.numbers().is_some_and(|n| n.0 >= 8));
    match rulesets.iter().find(|r| r.name.eq_ignore_ascii_case("pvrdma")) {
        Some(r) if r.enabled == Some(true) => check(ID, Status::Pass, "firewall ruleset pvrdma is enabled", evidence),
        Some(r) if r.enabled == Some(false) => match &f.firewall {
            Ok(fw) if fw.enabled == Some(true) => with_command(
                check(
                    ID,
                    Status::Fail,
                    format!(
                        "the firewall is enabled and its pvrdma ruleset is disabled{}: PVRDMA traffic is blocked",
                        if esxi8 { " (the ESXi 8.0 default)" } else { "" }
                    ),
                    evidence,
                ),
                ENABLE,
            ),
            Ok(_) => with_command(
                check(ID, Status::Unknown, "ruleset pvrdma is disabled and whether the firewall is enabled is not stated", evidence),
                ENABLE,
            ),
            Err(e) => with_command(
                check(ID, Status::Unknown, format!("ruleset pvrdma is disabled; firewall state unknown: {e}"), evidence),
                ENABLE,
            ),
        },
        Some(_) => check(ID, Status::Unknown, "ruleset pvrdma has no readable Enabled value", evidence),
        // ESXi has shipped a pvrdma ruleset since PVRDMA itself (6.5): its absence means
        // the list is not what it seems, so nothing can be concluded.
        None => check(
            ID,
            Status::Unknown,
            format!(
                "the firewall is on and its ruleset list has no pvrdma row among {} rulesets; check `esxcli network firewall ruleset list -r pvrdma`",
                rulesets.len()
            ),
            evidence,
        ),
    }
}

fn check_mtu(ctx: &Context) -> Check {
    const ID: &str = "mtu-consistent";
    let f = ctx.facts;
    // Every vDS that carries an HCA is an RDMA data path of its own.
    let mut paths: Vec<(&p::RdmaDevice, &p::DvsSwitch)> = Vec::new();
    for (d, s) in &ctx.rdma_switches {
        if !paths.iter().any(|(_, o)| o.name == s.name) {
            paths.push((d, s));
        }
    }
    if paths.is_empty() {
        return not_checked(ID, "needs rdma-uplink-on-dvs to pass");
    }
    let vmk_interface = ctx
        .tagged_vmknic
        .as_ref()
        .and_then(|vmk| f.vmknics.as_ref().ok().and_then(|i| i.iter().find(|i| &i.name == vmk)));
    // The tagged vmknic's MTU belongs to a path only when it sits on that vDS; elsewhere it
    // carries PVRDMA control traffic only (see pvrdma-vmknic-valid).
    let results: Vec<Check> = paths
        .iter()
        .map(|(device, dvs)| {
            let vmk = match (&ctx.tagged_vmknic, &f.vmknics) {
                (Some(vmk), Err(_)) => Some(vmk.clone()),
                (Some(vmk), Ok(_))
                    if vmk_interface.is_some_and(|i| i.vds_name.as_deref() == Some(dvs.name.as_str())) =>
                {
                    Some(vmk.clone())
                }
                _ => None,
            };
            mtu_path(f, device, dvs, vmk.as_deref())
        })
        .collect();
    let worst = results.iter().map(|c| c.status).max().unwrap_or(Status::Unknown);
    let mut summary = results.iter().map(|c| c.summary.clone()).collect::<Vec<_>>().join("; ");
    if let (Some(vmk), Some(i)) = (&ctx.tagged_vmknic, vmk_interface) {
        if !paths
            .iter()
            .any(|(_, d)| i.vds_name.as_deref() == Some(d.name.as_str()))
        {
            let mtu = i.mtu.map_or_else(|| "unknown".to_string(), |m| m.to_string());
            summary.push_str(&format!(
                "; {vmk} (MTU {mtu}) is not on an HCA's vDS and carries only PVRDMA control traffic, so its MTU is not on the RDMA path"
            ));
        }
    }
    // One remedy per HCA path: the commands run one after the other, the advice reads on.
    let remedies: Vec<Remedy> = results.iter().filter_map(|c| c.remedy.clone()).collect();
    let evidence = results.into_iter().flat_map(|c| c.evidence).collect();
    let c = check(ID, worst, summary, evidence);
    let joined = |part: fn(&Remedy) -> Option<&String>| {
        let parts: Vec<&str> = remedies.iter().filter_map(part).map(String::as_str).collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    };
    if remedies.is_empty() {
        c
    } else {
        with_fix(c, joined(|r| r.command.as_ref()), joined(|r| r.advice.as_ref()))
    }
}

/// MTU agreement along one RDMA path: the vDS, its HCA uplink and (when it sits on this
/// vDS) the tagged vmknic.
fn mtu_path(f: &HostFacts, device: &p::RdmaDevice, dvs: &p::DvsSwitch, vmk: Option<&str>) -> Check {
    const ID: &str = "mtu-consistent";
    let uplink = device.paired_uplink.clone().unwrap_or_default();
    let nic_mtu: Result<u32, String> = match &f.nics {
        Ok(nics) => match nics.iter().find(|n| n.name == uplink) {
            Some(n) => n.mtu.ok_or_else(|| "no MTU in its row".to_string()),
            None => Err("not in esxcli network nic list".to_string()),
        },
        Err(e) => Err(e.to_string()),
    };
    let mut evidence = vec![
        ev(cat::DVS_LIST, format!("MTU of {}", dvs.name)),
        ev(cat::NIC_LIST, format!("MTU of {uplink}")),
    ];
    let dvs_label = format!("vDS {}", dvs.name);
    let mut named = vec![
        (dvs_label.clone(), dvs.mtu.ok_or_else(|| "no MTU printed".to_string())),
        (uplink.clone(), nic_mtu),
    ];
    if let Some(vmk) = vmk {
        let vmk_mtu: Result<u32, String> = match &f.vmknics {
            Ok(v) => v
                .iter()
                .find(|v| v.name == vmk)
                .and_then(|v| v.mtu)
                .ok_or_else(|| "no MTU printed".to_string()),
            Err(e) => Err(e.to_string()),
        };
        evidence.insert(1, ev(cat::IP_INTERFACE_LIST, format!("MTU of {vmk}")));
        named.insert(1, (vmk.to_string(), vmk_mtu));
    }
    let vmk = vmk.unwrap_or("");
    let mut known: Vec<(String, u32)> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    for (name, mtu) in named {
        match mtu {
            Ok(m) => known.push((name, m)),
            Err(e) => missing.push(format!("{name}: {e}")),
        }
    }
    let list = known
        .iter()
        .map(|(n, m)| format!("{n} {m}"))
        .collect::<Vec<_>>()
        .join(", ");
    // How to raise one element of the path to `target`: (command, advice).
    let raise = |name: &str, target: u32| -> (Option<String>, Option<String>) {
        if name == dvs_label {
            (None, Some(format!("set the MTU of vDS {} to {target} in vCenter (Distributed Switch > Settings > Edit Settings > Advanced)", dvs.name)))
        } else if name == vmk {
            (
                Some(format!(
                    "esxcli network ip interface set -m {target} -i {}",
                    shell_quote(vmk)
                )),
                None,
            )
        } else {
            (None, Some(format!("{name} did not take the vDS MTU: re-apply vDS {}'s MTU {target} in vCenter and check `esxcli network nic get -n {name}`", dvs.name)))
        }
    };
    let vmk_value = known.iter().find(|(n, _)| n == vmk).map(|(_, m)| *m);
    let lowest = known.iter().filter(|(n, _)| n != vmk).min_by_key(|(_, m)| *m);
    if let (Some(v), Some((low_name, low))) = (vmk_value, lowest) {
        if v > *low {
            let alternative = match raise(low_name, v) {
                (Some(command), _) => format!("or run {command}"),
                (None, Some(advice)) => format!("or {advice}"),
                (None, None) => String::new(),
            };
            return with_fix(
                check(
                    ID,
                    Status::Fail,
                    format!("{vmk} MTU {v} is larger than the path below it ({list}): large frames are dropped"),
                    evidence,
                ),
                Some(format!(
                    "esxcli network ip interface set -m {low} -i {}",
                    shell_quote(vmk)
                )),
                Some(alternative).filter(|a| !a.is_empty()),
            );
        }
    }
    let all_equal = known.windows(2).all(|w| matches!(w, [a, b] if a.1 == b.1));
    if !missing.is_empty() {
        let status = if all_equal { Status::Unknown } else { Status::Warn };
        let known_text = if list.is_empty() { "none".to_string() } else { list };
        return check(
            ID,
            status,
            format!("known MTUs: {known_text}; unknown: {}", missing.join("; ")),
            evidence,
        );
    }
    let (Some((low_name, _)), Some(high)) = (known.iter().min_by_key(|(_, m)| *m), known.iter().map(|k| k.1).max())
    else {
        return check(ID, Status::Unknown, "no MTU known", evidence);
    };
    if all_equal {
        let on = if vmk.is_empty() {
            format!("vDS {} and {uplink}", dvs.name)
        } else {
            format!("vDS {}, {vmk} and {uplink}", dvs.name)
        };
        check(ID, Status::Pass, format!("MTU {high} on {on}"), evidence)
    } else {
        let (command, advice) = raise(low_name, high);
        with_fix(
            check(ID, Status::Warn, format!("MTUs differ: {list}"), evidence),
            command,
            advice,
        )
    }
}

fn check_roce(ctx: &Context) -> Check {
    const ID: &str = "roce-supported";
    let Some(device) = ctx.device else {
        return not_checked(ID, "needs rdma-device-present to pass");
    };
    let protocols = match &ctx.facts.rdma_protocols {
        Ok(p) => p,
        Err(e) if namespace_absent(e) => return roce_without_protocol_list(ctx, device),
        Err(e) => return unknown_from(ID, cat::RDMA_PROTOCOL_LIST, e),
    };
    let mut evidence = vec![ev(
        cat::RDMA_PROTOCOL_LIST,
        format!("RoCE v1, RoCE v2 of {}", device.name),
    )];
    let Some(row) = protocols.iter().find(|p| p.device == device.name) else {
        return check(
            ID,
            Status::Unknown,
            format!("{} is not in esxcli rdma device protocol list", device.name),
            evidence,
        );
    };
    let versions: Vec<&str> = [(row.roce_v1, "RoCE v1"), (row.roce_v2, "RoCE v2")]
        .iter()
        .filter(|(b, _)| *b == Some(true))
        .map(|(_, n)| *n)
        .collect();
    if versions.is_empty() {
        if row.roce_v1.is_none() || row.roce_v2.is_none() {
            return check(
                ID,
                Status::Unknown,
                format!("RoCE support of {} is not stated", device.name),
                evidence,
            );
        }
        return with_advice(
            check(
                ID,
                Status::Fail,
                format!(
                    "{} supports neither RoCE v1 nor RoCE v2; PVRDMA needs RoCE",
                    device.name
                ),
                evidence,
            ),
            "use a RoCE-capable NIC (or enable RoCE in its driver/firmware) as the PVRDMA uplink",
        );
    }
    // An adapter set to a RoCE version the HCA lacks cannot use it (DOMAIN §2.7).
    let mismatched: Vec<String> = ctx
        .facts
        .pvrdma_properties
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .filter_map(|s| {
            let version = s.properties.as_ref().ok()?.roce_version?;
            (supports_roce(row, version) == Some(false))
                .then(|| format!("{}_{} uses RoCE v{version}", s.device.world_id, s.device.index))
        })
        .collect();
    if mismatched.is_empty() {
        return check(
            ID,
            Status::Pass,
            format!("{} supports {}", device.name, versions.join(" and ")),
            evidence,
        );
    }
    evidence.push(ev(cat::PVRDMA_PROPERTIES, "RoCE version"));
    with_advice(
        check(
            ID,
            Status::Fail,
            format!(
                "{} supports only {}, but adapter {}",
                device.name,
                versions.join(" and "),
                mismatched.join(", ")
            ),
            evidence,
        ),
        format!(
            "with the VM powered off, set the PVRDMA adapter's RoCE version (device protocol) to {} in its settings",
            versions.join(" or ")
        ),
    )
}

/// The command does not exist on this release (`Error: Unknown command or namespace ...`,
/// what esxcli prints for a namespace it lacks, such as `rdma device protocol list` on
/// ESXi 6.5): nothing is missing, the release just cannot tell.
fn namespace_absent(e: &facts::FactError) -> bool {
    matches!(e, facts::FactError::CommandFailed { reason, .. } if reason.contains("Unknown command or namespace"))
}

/// `roce-supported` on a release without `esxcli rdma device protocol list` (ESXi 6.5):
/// an adapter that vsish shows on the HCA proves the device carries its RoCE version.
fn roce_without_protocol_list(ctx: &Context, device: &p::RdmaDevice) -> Check {
    const ID: &str = "roce-supported";
    let release = match &ctx.facts.version {
        Ok(v) => format!("{} {}", v.product, v.version),
        Err(_) => "this release".to_string(),
    };
    let mut evidence = vec![ev(cat::RDMA_PROTOCOL_LIST, "output")];
    let proven: Vec<u32> = {
        let mut v: Vec<u32> = ctx
            .facts
            .pvrdma_properties
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .filter_map(|s| s.properties.as_ref().ok())
            .filter(|p| p.physical_hca_available == Some(true))
            .filter_map(|p| p.roce_version)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    if proven.is_empty() {
        return check(
            ID,
            Status::Warn,
            format!(
                "{release} has no `esxcli rdma device protocol list`, and no adapter on the HCA shows which RoCE version {} carries: RoCE support cannot be listed on this release",
                device.name
            ),
            evidence,
        );
    }
    evidence.push(ev(cat::PVRDMA_PROPERTIES, "Physical HCA available, RoCE version"));
    let versions: Vec<String> = proven.iter().map(|v| format!("RoCE v{v}")).collect();
    check(
        ID,
        Status::Pass,
        format!(
            "{release} has no `esxcli rdma device protocol list`; adapters on the HCA use {} through {}, so the device supports it",
            versions.join(" and "),
            device.name
        ),
        evidence,
    )
}

/// Whether the device's `RoCE vN` column says it supports `version` (`None`: not stated).
fn supports_roce(row: &p::RdmaProtocols, version: u32) -> Option<bool> {
    match version {
        1 => row.roce_v1,
        2 => row.roce_v2,
        _ => None,
    }
}

/// Lists the host's PVRDMA adapters grouped by VM, each with its verdict and reasons.
fn adapters(f: &HostFacts, ctx: &Context, checks: &[Check]) -> (Vec<Vm>, Option<String>) {
    if !f.vmx.is_empty() && f.vmx_lines.is_err() && f.pvrdma_properties.is_err() && f.pvrdma_devices.is_err() {
        return (adapters_from_vmx(f), None);
    }
    let mut by_device: BTreeMap<p::PvrdmaDeviceId, Option<&p::PvrdmaPropertiesSection>> = BTreeMap::new();
    if let Ok(ids) = &f.pvrdma_devices {
        for id in ids {
            by_device.insert(*id, None);
        }
    }
    if let Ok(sections) = &f.pvrdma_properties {
        for s in sections {
            by_device.insert(s.device, Some(s));
        }
    }
    let adapters_error = match (&f.pvrdma_devices, &f.pvrdma_properties) {
        (Err(ls), Err(_)) => Some(format!("PVRDMA adapters could not be listed: {ls}")),
        // The batch runs its own `ls` quietly: when it printed nothing and the listing
        // itself failed, "no sections" means "not listed", not "no adapters".
        (Err(ls), Ok(sections)) if sections.is_empty() => Some(format!("PVRDMA adapters could not be listed: {ls}")),
        _ => None,
    };
    let processes: &[p::VmProcess] = f.vms.as_deref().unwrap_or(&[]);
    let failing: Vec<&Check> = checks.iter().filter(|c| c.status == Status::Fail).collect();
    let unresolved: Vec<&Check> = checks.iter().filter(|c| c.status == Status::Unknown).collect();
    let mut vms: BTreeMap<u64, Vm> = BTreeMap::new();
    for (id, section) in by_device {
        let vm = vms.entry(id.world_id).or_insert_with(|| {
            let process = processes.iter().find(|v| v.world_id == id.world_id);
            Vm {
                name: process.map_or_else(|| format!("World ID {}", id.world_id), |p| p.display_name.clone()),
                world_id: Some(id.world_id),
                config_file: process.and_then(|p| p.config_file.clone()),
                adapters: Vec::new(),
            }
        });
        vm.adapters
            .push(adapter_verdict(f, ctx, id, section, &failing, &unresolved));
    }
    let listed_from_vmx = add_vmx_adapters(f, processes, &mut vms, adapters_error.as_deref());
    // The .vmx inventory named the adapters vsish could not: they are listed (unknown,
    // with vsish's failure as their reason), so the host's list is not missing.
    let adapters_error = adapters_error.filter(|_| !listed_from_vmx);
    let mut vms: Vec<Vm> = vms.into_values().collect();
    vms.sort_by(|a, b| a.name.cmp(&b.name).then(a.world_id.cmp(&b.world_id)));
    (vms, adapters_error)
}

/// Adds the PVRDMA adapters the live `.vmx` inventory declares for running VMs and vsish did
/// not report, with verdict `unknown` and why vsish has nothing for them. Returns whether
/// any adapter was added.
fn add_vmx_adapters(
    f: &HostFacts,
    processes: &[p::VmProcess],
    vms: &mut BTreeMap<u64, Vm>,
    vsish_error: Option<&str>,
) -> bool {
    let Ok(sections) = &f.vmx_lines else {
        return false;
    };
    let mut added = false;
    for section in sections {
        let Ok(config) = &section.config else { continue };
        let Some(process) = processes
            .iter()
            .find(|p| p.config_file.as_deref() == Some(section.config_file.as_str()))
        else {
            continue;
        };
        let mut declared: Vec<&p::vmx::VmxAdapter> = config
            .pvrdma_adapters
            .iter()
            .filter(|a| a.present != Some(false))
            .collect();
        declared.sort_by_key(|a| a.ethernet_index);
        if declared.is_empty() {
            continue;
        }
        let vm = vms.entry(process.world_id).or_insert_with(|| Vm {
            name: process.display_name.clone(),
            world_id: Some(process.world_id),
            config_file: process.config_file.clone(),
            adapters: Vec::new(),
        });
        for (i, a) in declared.iter().enumerate() {
            let index = u32::try_from(i).unwrap_or(u32::MAX);
            let same_mac = |x: &Adapter| match (&x.mac, &a.mac_address) {
                (Some(m), Some(n)) => m.eq_ignore_ascii_case(n),
                _ => false,
            };
            if vm.adapters.iter().any(|x| x.index == index || same_mac(x)) {
                continue;
            }
            let why = match (vsish_error, &f.pvrdma_properties_cut_short) {
                (Some(e), _) => e.to_string(),
                (None, Some(cut)) => format!("the batched vsish query stopped before reaching it: {cut}"),
                (None, None) => match &f.pvrdma_properties {
                    Err(e) => e.to_string(),
                    Ok(_) => "vsish lists no PVRDMA device for it: the adapter may be disconnected, or its VM was starting or stopping".to_string(),
                },
            };
            vm.adapters.push(Adapter {
                index,
                verdict: Verdict::Unknown,
                reasons: vec![format!(
                    "declared in the VM's .vmx (ethernet{}), but vsish gave no verdict: {why}",
                    a.ethernet_index
                )],
                mac: a.mac_address.clone(),
                roce_version: None,
                active_mtu: None,
                port: None,
            });
            added = true;
        }
        vm.adapters.sort_by_key(|a| a.index);
    }
    added
}

fn adapter_verdict(
    f: &HostFacts,
    ctx: &Context,
    id: p::PvrdmaDeviceId,
    section: Option<&p::PvrdmaPropertiesSection>,
    failing: &[&Check],
    unresolved: &[&Check],
) -> Adapter {
    let mut adapter = Adapter {
        index: id.index,
        verdict: Verdict::Unknown,
        reasons: Vec::new(),
        mac: None,
        roce_version: None,
        active_mtu: None,
        port: None,
    };
    let properties = match (section, &f.pvrdma_properties) {
        (Some(s), _) => match &s.properties {
            Ok(props) => props,
            Err(text) if s.cut_off => {
                adapter.reasons.push(text.clone());
                return adapter;
            }
            Err(text) => {
                adapter
                    .reasons
                    .push(format!("vsish could not read its properties: {text}"));
                return adapter;
            }
        },
        (None, Err(e)) => {
            adapter.reasons.push(e.to_string());
            return adapter;
        }
        (None, Ok(_)) if f.pvrdma_properties_cut_short.is_some() => {
            let why = f.pvrdma_properties_cut_short.as_deref().unwrap_or_default();
            adapter.reasons.push(format!(
                "the batched vsish query stopped before reaching this adapter: {why}"
            ));
            return adapter;
        }
        (None, Ok(_)) => {
            adapter.reasons.push(format!(
                "no properties were printed for {}_{} (the VM may have stopped during collection)",
                id.world_id, id.index
            ));
            return adapter;
        }
    };
    adapter.mac = properties.mac_address.clone();
    adapter.roce_version = properties.roce_version;
    adapter.active_mtu = properties.active_mtu;
    let port = adapter.mac.as_deref().and_then(|mac| find_port(f, id.world_id, mac));
    adapter.port = port.map(|p| PortView {
        vds_id: p
            .vswitch
            .as_deref()
            .and_then(|name| f.dvs.as_ref().ok()?.iter().find(|s| s.name == name)?.vds_id.clone()),
        vswitch: p.vswitch.clone(),
        portgroup: p.portgroup.clone(),
        uplink: p.team_uplink.clone(),
    });
    adapter.verdict = match properties.physical_hca_available {
        Some(true) => Verdict::Hca,
        Some(false) => Verdict::TcpFallback,
        None => {
            adapter
                .reasons
                .push("vsish printed no readable `Physical HCA available` line".to_string());
            return adapter;
        }
    };
    if let (Some(version), Some(device)) = (adapter.roce_version, ctx.device) {
        let row = f
            .rdma_protocols
            .as_ref()
            .ok()
            .and_then(|ps| ps.iter().find(|p| p.device == device.name));
        if row.and_then(|row| supports_roce(row, version)) == Some(false) {
            adapter.reasons.push(format!(
                "the adapter uses RoCE v{version}, which {} does not support",
                device.name
            ));
        }
    }
    if adapter.verdict == Verdict::TcpFallback {
        for c in failing {
            adapter
                .reasons
                .push(format!("host check {} failed: {}", c.id, c.summary));
        }
        // Without an HCA on the host, where the adapter's port sits explains nothing more.
        if ctx.device.is_some() {
            adapter
                .reasons
                .extend(port_reasons(f, ctx, id, adapter.mac.as_deref(), port));
        }
        if adapter.reasons.is_empty() && !unresolved.is_empty() {
            let ids: Vec<&str> = unresolved.iter().map(|c| c.id).collect();
            adapter.reasons.push(format!(
                "no failing host check explains it, but {} could not be evaluated (missing data); the cause is likely among them",
                ids.join(", ")
            ));
        } else if adapter.reasons.is_empty() {
            adapter.reasons.push(
                "no host-side cause found: every host check passes and the adapter's port uses the HCA's vDS; the HCA was probably unusable when the adapter started (power-cycle the VM after fixing the host)"
                    .to_string(),
            );
        }
    }
    adapter
}

fn find_port<'a>(f: &'a HostFacts, world_id: u64, mac: &str) -> Option<&'a p::VmPort> {
    let sections = f.vm_ports.as_ref().ok()?;
    let section = sections.iter().find(|s| s.world_id == world_id)?;
    section
        .ports
        .iter()
        .find(|p| p.mac_address.as_deref().is_some_and(|m| m.eq_ignore_ascii_case(mac)))
}

/// What the adapter's own VM port says about why it has no HCA, judged against the vDS
/// that port is on (a host may carry HCAs on several switches).
fn port_reasons(
    f: &HostFacts,
    ctx: &Context,
    id: p::PvrdmaDeviceId,
    mac: Option<&str>,
    port: Option<&p::VmPort>,
) -> Vec<String> {
    let Some(mac) = mac else {
        return vec!["vsish printed no MAC address, so its VM port could not be found".to_string()];
    };
    let Some(port) = port else {
        return match &f.vm_ports {
            Err(e) => vec![format!("its VM port is unknown: {e}")],
            Ok(sections) => match sections.iter().find(|s| s.world_id == id.world_id) {
                None => vec![format!(
                    "its VM port is unknown: the batched port query printed no section for World ID {}",
                    id.world_id
                )],
                Some(s) => match &s.error {
                    Some(e) => vec![format!("its VM port is unknown: {e}")],
                    None => vec![format!(
                        "no port with MAC {mac} in `esxcli network vm port list -w {}`",
                        id.world_id
                    )],
                },
            },
        };
    };
    let vswitch = port.vswitch.as_deref().unwrap_or("?");
    let portgroup = port.portgroup.as_deref().unwrap_or("?");
    let uplink = port.team_uplink.as_deref().unwrap_or("no uplink");
    let Some((device, _)) = ctx.rdma_switches.iter().find(|(_, s)| s.name == vswitch) else {
        let mut names: Vec<&str> = ctx.rdma_switches.iter().map(|(_, s)| s.name.as_str()).collect();
        names.dedup();
        // Only a vDS whose one uplink is an HCA can carry PVRDMA: never advise another.
        let usable: Vec<String> = ctx
            .single_uplink_hca_switches()
            .iter()
            .map(|(_, s)| s.name.clone())
            .collect();
        let advice = match usable.as_slice() {
            [] => "no vDS has an HCA as its only uplink yet (see dvs-single-uplink)".to_string(),
            [one] => format!("connect the adapter to a port group of {one}"),
            many => format!("connect the adapter to a port group of one of {}", many.join(", ")),
        };
        return vec![if names.is_empty() {
            format!(
                "its port (MAC {mac}) is on {vswitch} / {portgroup} with uplink {uplink}; no vDS has an HCA as uplink"
            )
        } else {
            format!(
                "its port (MAC {mac}) is on {vswitch} / {portgroup} with uplink {uplink}, not on vDS {} whose uplink is an HCA: {advice}",
                names.join(" or ")
            )
        }];
    };
    let mut reasons = Vec::new();
    if !matches!(device.state, p::PortState::Active | p::PortState::ActiveDefer) {
        reasons.push(format!(
            "its port is on vDS {vswitch}, whose HCA {} is {}",
            device.name,
            state_name(&device.state)
        ));
    }
    if let (Some(team), Some(hca)) = (port.team_uplink.as_deref(), device.paired_uplink.as_deref()) {
        if team != hca {
            reasons.push(format!(
                "its port (MAC {mac}) uses uplink {team}, not the HCA's uplink {hca}"
            ));
        }
    }
    reasons
}

/// A vm-support bundle has `.vmx` files but no vsish data: list the PVRDMA adapters the
/// configuration declares, with verdict unknown and what the configuration does tell.
fn adapters_from_vmx(f: &HostFacts) -> Vec<Vm> {
    let mut vms = Vec::new();
    for vmx in &f.vmx {
        let config = match &vmx.config {
            Ok(c) => c,
            Err(_) => continue,
        };
        if config.pvrdma_adapters.is_empty() {
            continue;
        }
        let mut notes = vec![
            "vm-support bundles carry no vsish data: run pvrdma-doctor against the live host for the verdict"
                .to_string(),
        ];
        match config.hardware_version {
            Some(hw) if hw < 13 => notes.push(format!("virtual hardware version {hw} is below 13, which PVRDMA needs")),
            None => notes.push("the .vmx states no virtualHW.version".to_string()),
            _ => {}
        }
        let reserved = config.mem_pin == Some(true)
            || matches!((config.mem_min_mb, config.memsize_mb), (Some(min), Some(size)) if min >= size);
        if !reserved {
            notes.push(
                "guest memory is not fully reserved (sched.mem.min < memsize and no sched.mem.pin), which PVRDMA needs"
                    .to_string(),
            );
        }
        let mut adapters: Vec<&p::vmx::VmxAdapter> = config.pvrdma_adapters.iter().collect();
        adapters.sort_by_key(|a| a.ethernet_index);
        vms.push(Vm {
            name: config.display_name.clone().unwrap_or_else(|| vmx.path.clone()),
            world_id: None,
            config_file: Some(vmx.path.clone()),
            adapters: adapters
                .iter()
                .enumerate()
                .map(|(i, a)| Adapter {
                    index: u32::try_from(i).unwrap_or(u32::MAX),
                    verdict: Verdict::Unknown,
                    reasons: notes.clone(),
                    mac: a.mac_address.clone(),
                    roce_version: None,
                    active_mtu: None,
                    port: None,
                })
                .collect(),
        });
    }
    vms.sort_by(|a, b| a.name.cmp(&b.name));
    vms
}

/// Whether anything was learnt about the host: reached, and a check or verdict known.
pub fn is_diagnosed(h: &HostDiagnosis) -> bool {
    matches!(h.status, HostStatus::Ok | HostStatus::Problems | HostStatus::Incomplete)
        && (h.checks.iter().any(|c| c.status != Status::Unknown)
            || h.vms
                .iter()
                .flat_map(|v| &v.adapters)
                .any(|a| a.verdict != Verdict::Unknown))
}

/// The JSON/serde name of a host status (`problems`, `unreachable`, ...).
pub fn status_name(status: HostStatus) -> &'static str {
    match status {
        HostStatus::Ok => "ok",
        HostStatus::Problems => "problems",
        HostStatus::Incomplete => "incomplete",
        HostStatus::Unreachable => "unreachable",
        HostStatus::Error => "error",
        HostStatus::Interrupted => "interrupted",
    }
}

fn summarize(hosts: &[HostDiagnosis], fleet_checks: &[Check], transport: &TransportSummary) -> Summary {
    let mut s = Summary {
        hosts: hosts.len(),
        adapter_pairs: transport.totals,
        fleet_failures: fleet_checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .map(|c| c.id)
            .collect(),
        ..Summary::default()
    };
    let mut by_status: BTreeMap<&'static str, Vec<&str>> = BTreeMap::new();
    // Warning check id → hosts where it warns, in first-seen order.
    let mut warned: Vec<(&'static str, Vec<&str>)> = Vec::new();
    for h in hosts {
        match h.status {
            HostStatus::Ok => s.healthy += 1,
            HostStatus::Problems => s.problems += 1,
            HostStatus::Incomplete => s.incomplete += 1,
            HostStatus::Unreachable => s.unreachable += 1,
            HostStatus::Error => s.error += 1,
            HostStatus::Interrupted => s.interrupted += 1,
        }
        if h.status != HostStatus::Ok {
            by_status.entry(status_name(h.status)).or_default().push(&h.host);
        }
        if is_diagnosed(h) {
            s.diagnosed += 1;
        }
        if h.adapters_error.is_some() {
            s.hosts_without_adapter_list += 1;
        }
        for c in h.checks.iter().filter(|c| c.status == Status::Warn) {
            s.warnings += 1;
            match warned.iter_mut().find(|(id, _)| *id == c.id) {
                Some((_, on)) => on.push(&h.host),
                None => warned.push((c.id, vec![&h.host])),
            }
        }
        for a in h.vms.iter().flat_map(|v| &v.adapters) {
            s.adapters += 1;
            match a.verdict {
                Verdict::Hca => s.hca += 1,
                Verdict::TcpFallback => s.tcp_fallback += 1,
                Verdict::Unknown => s.unknown += 1,
            }
        }
    }
    let fleet_warnings: Vec<&str> = fleet_checks
        .iter()
        .filter(|c| c.status == Status::Warn)
        .map(|c| c.id)
        .collect();
    s.warnings += fleet_warnings.len();
    s.host_sets = by_status
        .iter()
        .map(|(status, names)| (status.to_string(), crate::nodeset::fold(names)))
        .collect();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let set_of = |status: &str| s.host_sets.get(status).map(|n| format!(" ({n})")).unwrap_or_default();
    let host_parts: Vec<String> = [
        (s.healthy, "healthy", ""),
        (s.problems, "with problems", "problems"),
        (s.incomplete, "incomplete", "incomplete"),
        (s.unreachable, "unreachable", "unreachable"),
        (s.error, "with errors", "error"),
        (s.interrupted, "interrupted", "interrupted"),
    ]
    .iter()
    .filter(|(n, _, _)| *n > 0)
    .map(|(n, label, status)| {
        format!(
            "{n} {label}{}",
            if status.is_empty() {
                String::new()
            } else {
                set_of(status)
            }
        )
    })
    .collect();
    let adapter_parts: Vec<String> = [(s.hca, "hca"), (s.tcp_fallback, "tcp-fallback"), (s.unknown, "unknown")]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, label)| format!("{n} {label}"))
        .collect();
    let mut line = plural(s.hosts, "host", "hosts");
    if !host_parts.is_empty() {
        line.push_str(&format!(": {}", host_parts.join(", ")));
    }
    if s.diagnosed == 0 {
        line.push_str("; nothing was diagnosed");
        s.line = line;
        return s;
    }
    if s.warnings > 0 {
        let mut which: Vec<String> = warned
            .iter()
            .map(|(id, on)| format!("{id} on {}", crate::nodeset::fold(on)))
            .collect();
        which.extend(fleet_warnings.iter().map(|id| format!("{id} across hosts")));
        line.push_str(&format!(
            "; {}: {}",
            plural(s.warnings, "warning", "warnings"),
            which.join(", ")
        ));
    }
    line.push_str(&format!(
        "; {}",
        plural(s.adapters, "PVRDMA adapter", "PVRDMA adapters")
    ));
    if !adapter_parts.is_empty() {
        line.push_str(&format!(": {}", adapter_parts.join(", ")));
    }
    let t = &s.adapter_pairs;
    let across = [
        (t.rdma, "rdma"),
        (t.blocked, "blocked"),
        (t.tcp, "tcp"),
        (t.unknown, "unknown"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, label)| format!("{n} {label}"))
    .collect::<Vec<_>>();
    if !across.is_empty() {
        line.push_str(&format!("; adapter pairs across hosts: {}", across.join(", ")));
    }
    if !s.fleet_failures.is_empty() {
        line.push_str(&format!("; failing fleet checks: {}", s.fleet_failures.join(", ")));
    }
    if s.hosts_without_adapter_list > 0 {
        line.push_str(&format!(
            "; adapters not listed on {}",
            plural(s.hosts_without_adapter_list, "host", "hosts")
        ));
    }
    s.line = line;
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::ErrorKind;

    fn adapter(index: u32, verdict: Verdict) -> Adapter {
        Adapter {
            index,
            verdict,
            reasons: Vec::new(),
            mac: None,
            roce_version: None,
            active_mtu: None,
            port: None,
        }
    }

    fn host(name: &str, status: HostStatus, vms: Vec<(&str, Vec<Adapter>)>) -> HostDiagnosis {
        HostDiagnosis {
            host: name.to_string(),
            status,
            error: None,
            esxi_version: None,
            checks: Vec::new(),
            vms: vms
                .into_iter()
                .map(|(vm, adapters)| Vm {
                    name: vm.to_string(),
                    world_id: Some(1),
                    config_file: None,
                    adapters,
                })
                .collect(),
            adapters_error: None,
            pvrdma_vmknic: None,
            fleet_failures: Vec::new(),
            record_errors: Vec::new(),
            vms_error: None,
            incomplete_outputs: Vec::new(),
        }
    }

    fn diagnosis(hosts: Vec<HostDiagnosis>) -> Diagnosis {
        fleet_diagnosis(hosts)
    }

    /// The pairs of one adapter (first adapter of VM `a.1` on host `a.0`) with host `peer`.
    fn counts(d: &Diagnosis, a: (&str, &str), peer: &str) -> TransportCounts {
        if let Some(e) = d
            .transport
            .exceptions
            .iter()
            .find(|e| (e.adapter.host.as_str(), e.adapter.vm.as_str()) == a && e.peer_host == peer)
        {
            return e.pairs;
        }
        // Not an exception: every pair with that host is plain rdma.
        let n = d
            .hosts
            .iter()
            .find(|h| h.host == peer)
            .map_or(0, |h| h.vms.iter().map(|v| v.adapters.len() as u64).sum());
        TransportCounts {
            rdma: n,
            ..TransportCounts::default()
        }
    }

    fn transport(d: &Diagnosis, a: (&str, &str), b: (&str, &str)) -> Transport {
        if a.0 == b.0 {
            return Transport::Memcpy;
        }
        let c = counts(d, a, b.0);
        let peer = d.hosts.iter().find(|h| h.host == b.0).expect("peer");
        // Single-adapter VMs on a peer with one profile per verdict: look the class up by
        // the peer adapter's own pairs with a's host.
        let mirrored = counts(d, b, a.0);
        let only = |x: &TransportCounts| {
            [
                (x.rdma, Transport::Rdma),
                (x.tcp, Transport::Tcp),
                (x.blocked, Transport::Blocked),
                (x.unknown, Transport::Unknown),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(_, t)| *t)
            .collect::<Vec<_>>()
        };
        let (ca, cb) = (only(&c), only(&mirrored));
        let common: Vec<Transport> = ca.iter().copied().filter(|t| cb.contains(t)).collect();
        assert!(!peer.vms.is_empty());
        match common.as_slice() {
            [one] => *one,
            _ => panic!("ambiguous pair {a:?} {b:?}: {ca:?} / {cb:?}"),
        }
    }

    #[test]
    fn transport_follows_the_pvrdma_rules() {
        let d = diagnosis(vec![
            host(
                "esx01",
                HostStatus::Problems,
                vec![
                    ("a", vec![adapter(0, Verdict::Hca)]),
                    ("b", vec![adapter(0, Verdict::TcpFallback)]),
                ],
            ),
            host("esx02", HostStatus::Ok, vec![("c", vec![adapter(0, Verdict::Hca)])]),
            host(
                "esx03",
                HostStatus::Incomplete,
                vec![("d", vec![adapter(0, Verdict::Unknown)])],
            ),
        ]);
        // Same host: memcpy whatever the verdicts, the HCA is not involved.
        assert_eq!(transport(&d, ("esx01", "a"), ("esx01", "b")), Transport::Memcpy);
        assert_eq!(transport(&d, ("esx01", "a"), ("esx02", "c")), Transport::Rdma);
        assert_eq!(transport(&d, ("esx01", "b"), ("esx02", "c")), Transport::Tcp);
        assert_eq!(transport(&d, ("esx01", "a"), ("esx03", "d")), Transport::Unknown);
        // One side falling back decides it even when the other is unknown.
        assert_eq!(transport(&d, ("esx01", "b"), ("esx03", "d")), Transport::Tcp);
        let t = d.transport.totals;
        assert_eq!((t.memcpy, t.rdma, t.tcp, t.unknown, t.blocked), (1, 1, 2, 2, 0));
        assert_eq!(t.total(), 6);
    }

    #[test]
    fn adapters_of_the_same_vm_are_not_paired() {
        let d = diagnosis(vec![host(
            "esx01",
            HostStatus::Ok,
            vec![("a", vec![adapter(0, Verdict::Hca), adapter(1, Verdict::Hca)])],
        )]);
        assert_eq!(d.transport.totals.total(), 0);
        assert!(d.transport.host_pairs.is_empty());
    }

    #[test]
    fn summary_line_reads_like_the_issue_example() {
        let mut down = host("esx03", HostStatus::Unreachable, vec![]);
        down.error = Some(Failure::new(ErrorKind::Unreachable, "refused"));
        let d = diagnosis(vec![
            host(
                "esx01",
                HostStatus::Ok,
                vec![(
                    "a",
                    vec![
                        adapter(0, Verdict::Hca),
                        adapter(1, Verdict::Hca),
                        adapter(2, Verdict::Hca),
                    ],
                )],
            ),
            host(
                "esx02",
                HostStatus::Problems,
                vec![(
                    "b",
                    vec![adapter(0, Verdict::TcpFallback), adapter(1, Verdict::Unknown)],
                )],
            ),
            down,
        ]);
        assert_eq!(
            d.summary.line,
            "3 hosts: 1 healthy, 1 with problems (esx02), 1 unreachable (esx03); 5 PVRDMA adapters: 3 hca, 1 tcp-fallback, 1 unknown; adapter pairs across hosts: 3 tcp, 3 unknown"
        );
        let mut passing = host("esx01", HostStatus::Ok, vec![]);
        passing
            .checks
            .push(check("esxi-version", Status::Pass, "8.0", Vec::new()));
        assert_eq!(
            diagnosis(vec![passing]).summary.line,
            "1 host: 1 healthy; 0 PVRDMA adapters"
        );
    }

    #[test]
    fn summary_says_when_nothing_was_diagnosed_and_names_failing_sets() {
        let down = |n: u32| {
            let mut h = host(&format!("esx{n:02}"), HostStatus::Unreachable, vec![]);
            h.error = Some(Failure::new(ErrorKind::Timeout, "no login"));
            h
        };
        let d = diagnosis((1..=11).map(down).collect());
        assert_eq!(d.summary.diagnosed, 0);
        assert_eq!(
            d.summary.line,
            "11 hosts: 11 unreachable (esx[01-11]); nothing was diagnosed"
        );
        assert_eq!(
            d.summary.host_sets.get("unreachable").map(String::as_str),
            Some("esx[01-11]")
        );
    }

    #[test]
    fn summary_shows_warnings_on_hosts_and_across_hosts() {
        let warned = |name: &str| {
            let mut h = host(name, HostStatus::Ok, vec![("a", vec![adapter(0, Verdict::Hca)])]);
            h.checks
                .push(check("mtu-consistent", Status::Warn, "differ", Vec::new()));
            h
        };
        let hosts = vec![warned("esx01"), warned("esx02")];
        let fleet = vec![check("vmknic-subnets", Status::Warn, "two subnets", Vec::new())];
        let s = summarize(&hosts, &fleet, &TransportSummary::default());
        assert_eq!(s.warnings, 3);
        assert_eq!(
            s.line,
            "2 hosts: 2 healthy; 3 warnings: mtu-consistent on esx[01-02], vmknic-subnets across hosts; 2 PVRDMA adapters: 2 hca"
        );
    }

    #[test]
    fn remedies_quote_host_values_for_the_shell() {
        assert_eq!(shell_quote("vmk1"), "vmk1");
        assert_eq!(shell_quote("DSwitch RDMA"), "'DSwitch RDMA'");
        assert_eq!(shell_quote("a'b;rm -rf /"), "'a'\\''b;rm -rf /'");
        assert_eq!(shell_quote(""), "''");
        let c = with_remedy(
            check("x", Status::Fail, "s", Vec::new()),
            "esxcli network firewall ruleset set -e true -r pvrdma",
        );
        assert!(c
            .remedy
            .as_ref()
            .is_some_and(|r| r.command.is_some() && r.advice.is_none()));
        let c = with_remedy(check("x", Status::Fail, "s", Vec::new()), "in vCenter, remove vmnic3");
        assert!(c
            .remedy
            .as_ref()
            .is_some_and(|r| r.command.is_none() && r.advice.is_some()));
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["remedy"], "in vCenter, remove vmnic3");
        assert_eq!(json["remediation"]["advice"], "in vCenter, remove vmnic3");
        assert!(json["remediation"]["command"].is_null());
    }

    #[test]
    fn exit_code_precedence() {
        let ok = || host("esx01", HostStatus::Ok, vec![("a", vec![adapter(0, Verdict::Hca)])]);
        assert_eq!(diagnosis(vec![ok()]).exit_code(), exit::HEALTHY);
        let unreachable = host("esx02", HostStatus::Unreachable, vec![]);
        assert_eq!(diagnosis(vec![ok(), unreachable.clone()]).exit_code(), exit::INCOMPLETE);
        let unknown = host(
            "esx03",
            HostStatus::Incomplete,
            vec![("u", vec![adapter(0, Verdict::Unknown)])],
        );
        assert_eq!(diagnosis(vec![ok(), unknown]).exit_code(), exit::INCOMPLETE);
        let fallback = host(
            "esx04",
            HostStatus::Problems,
            vec![("t", vec![adapter(0, Verdict::TcpFallback)])],
        );
        // A problem outranks an unreachable host: the runbook must see the failure.
        assert_eq!(diagnosis(vec![ok(), unreachable, fallback]).exit_code(), exit::PROBLEMS);
        let mut failing = ok();
        failing
            .checks
            .push(check("firewall-pvrdma", Status::Fail, "blocked", Vec::new()));
        assert_eq!(diagnosis(vec![failing]).exit_code(), exit::PROBLEMS);
        let mut warned = ok();
        warned
            .checks
            .push(check("mtu-consistent", Status::Warn, "differ", Vec::new()));
        assert_eq!(diagnosis(vec![warned]).exit_code(), exit::HEALTHY);
    }
}

#[cfg(test)]
mod subnet_tests {
    use super::*;

    fn with_vmknic(name: &str, ip: &str, mask: &str, roce: Option<u32>) -> HostDiagnosis {
        let adapter = Adapter {
            index: 0,
            verdict: Verdict::Hca,
            reasons: Vec::new(),
            mac: None,
            roce_version: roce,
            active_mtu: None,
            port: None,
        };
        HostDiagnosis {
            host: name.to_string(),
            status: HostStatus::Ok,
            error: None,
            esxi_version: None,
            checks: Vec::new(),
            vms: vec![Vm {
                name: format!("{name}-vm"),
                world_id: Some(1),
                config_file: None,
                adapters: vec![adapter],
            }],
            adapters_error: None,
            fleet_failures: Vec::new(),
            record_errors: Vec::new(),
            vms_error: None,
            incomplete_outputs: Vec::new(),
            pvrdma_vmknic: Some(PvrdmaVmknic {
                name: "vmk1".to_string(),
                ipv4: Some(ip.to_string()),
                netmask: Some(mask.to_string()),
                mtu: None,
            }),
        }
    }

    #[test]
    fn networks_from_address_and_mask() {
        assert_eq!(
            ipv4_network("10.10.10.11", "255.255.255.0").as_deref(),
            Some("10.10.10.0/24")
        );
        assert_eq!(
            ipv4_network("172.16.5.9", "255.255.240.0").as_deref(),
            Some("172.16.0.0/20")
        );
        assert_eq!(
            ipv4_network("10.0.0.1", "255.0.255.0"),
            None,
            "a non-contiguous mask is not a subnet"
        );
        assert_eq!(ipv4_network("not-an-ip", "255.255.255.0"), None);
    }

    #[test]
    fn one_subnet_passes_two_warn_and_roce_v1_across_them_fails() {
        let same = [
            with_vmknic("a", "10.1.1.1", "255.255.255.0", Some(2)),
            with_vmknic("b", "10.1.1.2", "255.255.255.0", Some(2)),
        ];
        assert_eq!(check_vmknic_subnets(&same).map(|c| c.status), Some(Status::Pass));
        let split = [
            with_vmknic("a", "10.1.1.1", "255.255.255.0", Some(2)),
            with_vmknic("b", "10.2.1.2", "255.255.255.0", Some(2)),
        ];
        let c = check_vmknic_subnets(&split).expect("check");
        assert_eq!(c.status, Status::Warn);
        assert!(
            c.summary.contains("10.1.1.0/24 (a vmk1)") && c.summary.contains("10.2.1.0/24 (b vmk1)"),
            "{}",
            c.summary
        );
        let v1 = [
            with_vmknic("a", "10.1.1.1", "255.255.255.0", Some(1)),
            with_vmknic("b", "10.2.1.2", "255.255.255.0", Some(2)),
        ];
        assert_eq!(check_vmknic_subnets(&v1).map(|c| c.status), Some(Status::Fail));
        let d = fleet_diagnosis(v1.to_vec());
        assert_eq!(d.exit_code(), exit::PROBLEMS, "a failing fleet check fails the run");
        // The report does not contradict itself: the pair is blocked, the hosts are not healthy.
        assert_eq!(d.transport.totals.blocked, 1);
        assert_eq!(d.transport.totals.rdma, 0);
        assert!(d
            .hosts
            .iter()
            .all(|h| h.status == HostStatus::Problems && h.fleet_failures == ["vmknic-subnets"]));
        assert!(d.summary.line.contains("2 with problems"), "{}", d.summary.line);
        assert!(d.summary.line.contains("1 blocked"), "{}", d.summary.line);
    }

    #[test]
    fn a_single_host_has_no_fleet_check() {
        assert!(check_vmknic_subnets(&[with_vmknic("a", "10.1.1.1", "255.255.255.0", None)]).is_none());
    }
}
