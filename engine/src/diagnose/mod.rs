//! Pipeline stage: *diagnose*. Pure functions from typed facts to checks and verdicts.
//!
//! Host checks have stable ids (a public contract for runbooks). Each carries its evidence
//! (catalogue id + field) and, when it fails, the exact command that fixes it. A check
//! whose data is missing is `unknown` with the reason, never a silent pass. The adapter
//! verdict comes from vsish's `Physical HCA available`; the host checks and the adapter's
//! own VM port explain a TCP fallback.
use crate::capture::{Failure, HostCapture, VmChoice, VmLeftOut};
use crate::catalogue as cat;
use crate::facts::{self, HostFacts};
use pvrdma_parsers as p;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

mod adapters;
#[cfg(test)]
mod api_tests;
mod changes;
mod checks;
mod fix;
#[cfg(test)]
pub mod fixtures;
mod fleet;
mod host_by_host;
mod model;
pub mod probe;
mod scope;
#[cfg(test)]
mod subnet_tests;
mod summary;
#[cfg(test)]
mod tests;
mod topology;
mod uplinks;

use adapters::*;
pub use changes::{Change, ChangeKind, Changes};
use checks::registry::Judge;
pub use checks::registry::{CheckId, Family, CHECKS};
use checks::{device::*, roce::*};
pub use fix::{powercli_vm, powershell_quote, ChangeTarget, ConfigChange, EsxcliOption, Remedy, RemedyForms, Setting};
pub use fleet::{TransportCounts, TransportSummary};
pub use host_by_host::HostByHost;
pub use model::*;
pub use scope::VmScope;
pub use summary::status_name;
use summary::*;
pub use topology::{HostTopology, RdmaPath, SwitchView, UplinkView, API_GIVES_NO_NIC_MTU};
pub use uplinks::UplinkCounters;

/// Diagnoses every host, then the fleet checks and the transport between adapters.
pub fn diagnose(captures: &[HostCapture]) -> Diagnosis {
    diagnose_selected(captures, &Selection::default())
}

/// [`diagnose`] judging only the checks across hosts `selection` keeps.
pub fn diagnose_selected(captures: &[HostCapture], selection: &Selection) -> Diagnosis {
    diagnose_selected_known(captures, &mut BTreeMap::new(), selection)
}

/// [`diagnose_selected`] for hosts of which some were diagnosed already, each the moment
/// it was read (`known`, by host name; taken out as used), by [`Selection::diagnose_host`]
/// with the same selection: an exporter does so, to answer a scrape whose deadline comes
/// before the end of the collection with the hosts read by then, and a host is not
/// diagnosed twice. A capture whose host is in `known` is not looked at, except for its
/// path probe's results.
pub fn diagnose_selected_known(
    captures: &[HostCapture],
    known: &mut BTreeMap<String, KnownHost>,
    selection: &Selection,
) -> Diagnosis {
    let mut hosts = HostByHost::new(selection.clone());
    for c in captures {
        match known.remove(&c.host) {
            Some(k) => hosts.add_known(k),
            None => hosts.add(c),
        }
    }
    let probes = probe::results(captures, hosts.hosts());
    hosts.finish_with(probes)
}

/// A host diagnosed as a selection narrows it ([`Selection::diagnose_host`]), with the
/// chosen VMs found running there: what [`diagnose_selected_known`] takes for a host
/// diagnosed the moment it was read.
#[derive(Debug, Clone)]
pub struct KnownHost {
    diagnosis: HostDiagnosis,
    /// The chosen VMs running there (`None`: its VM list could not be read, or the
    /// selection chose no VM).
    running: Option<Vec<String>>,
}

/// Which checks across hosts a diagnosis judges: every one (the default), or those named
/// (a `serve` module's `fleet_checks:`). A check left out is not judged at all, so it
/// makes no host a problem and counts nowhere: host status, the summary and every
/// rendering of the diagnosis agree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// `None`: every fleet check.
    fleet: Option<BTreeSet<CheckId>>,
    /// `None`: every VM; else only these VMs (by display name) and their adapters.
    vms: Option<BTreeSet<String>>,
    /// Chosen VMs running on hosts the run left out: said not diagnosed.
    vms_left_out: Vec<VmLeftOut>,
}

impl Selection {
    /// Only these checks across hosts (ids of host checks in it change nothing).
    pub fn only_fleet(ids: impl IntoIterator<Item = CheckId>) -> Selection {
        Selection {
            fleet: Some(ids.into_iter().collect()),
            ..Selection::default()
        }
    }

    /// Every check across hosts, and only the VMs `chosen` names when given (see
    /// [`Self::only_vms`], [`Self::chosen`]).
    pub fn of_vms(chosen: Option<&VmChoice>) -> Selection {
        match chosen {
            Some(chosen) => Selection::default().chosen(chosen),
            None => Selection::default(),
        }
    }

    /// Only the VMs a VM-first run chose, those running on hosts the run left out
    /// included: they are reported as not diagnosed, which makes the run unknown.
    pub fn chosen(self, chosen: &VmChoice) -> Selection {
        let names = chosen.vms.iter().chain(chosen.left_out.iter().map(|v| &v.vm)).cloned();
        Selection {
            vms_left_out: chosen.left_out.clone(),
            ..self.only_vms(names)
        }
    }

    /// Only these VMs (by the display name vCenter and `esxcli vm process list` show):
    /// their adapters, their VM checks and the transports between them; the hosts'
    /// configuration checks stay whole.
    pub fn only_vms(self, names: impl IntoIterator<Item = String>) -> Selection {
        Selection {
            vms: Some(names.into_iter().collect()),
            ..self
        }
    }

    /// Diagnoses one host, narrowed to the chosen VMs when the selection has some.
    pub fn diagnose_host(&self, capture: &HostCapture) -> KnownHost {
        let (diagnosis, running) = diagnose_host_in(capture, self.vms.as_ref());
        KnownHost { diagnosis, running }
    }

    /// Whether the diagnosis judges check `id`.
    pub fn judges(&self, id: CheckId) -> bool {
        !id.across_hosts() || self.fleet.as_ref().is_none_or(|keep| keep.contains(&id))
    }
}

/// The fleet checks and transport over diagnosed hosts (a failing fleet check changes the
/// status of the hosts it involves, so the summary comes last).
#[cfg(test)]
pub fn fleet_diagnosis(hosts: Vec<HostDiagnosis>) -> Diagnosis {
    fleet_diagnosis_with(hosts, Vec::new(), &Selection::default())
}

/// [`fleet_diagnosis`] with the path probe's results, when it ran.
fn fleet_diagnosis_with(mut hosts: Vec<HostDiagnosis>, probes: Vec<probe::Probe>, selection: &Selection) -> Diagnosis {
    let (mut fleet_checks, transport) = fleet::judge(&mut hosts, &probes, selection);
    // Compared from the configuration alone when every host with adapters was read
    // without SSH: the evidence names what the vSphere API gave.
    let with_adapters = || hosts.iter().filter(|h| !h.vms.is_empty());
    if with_adapters().next().is_some() && with_adapters().all(|h| h.configuration_only) {
        cite_api(&mut fleet_checks);
    }
    let summary = summarize(&hosts, &fleet_checks, &transport);
    Diagnosis {
        hosts,
        fleet_checks,
        transport,
        probes,
        changes: None,
        vm_scope: None,
        summary,
    }
}

/// Diagnoses one host.
pub fn diagnose_host(capture: &HostCapture) -> HostDiagnosis {
    diagnose_host_in(capture, None).0
}

/// Diagnoses one host, narrowed to the VMs of `scope` when given; also returns the VMs of
/// the scope found running there (`None`: its VM list could not be read).
fn diagnose_host_in(capture: &HostCapture, scope: Option<&BTreeSet<String>>) -> (HostDiagnosis, Option<Vec<String>>) {
    let nothing_collected = capture.outputs.is_empty() && capture.vmx_files.is_empty();
    let not_esxi = capture
        .error
        .clone()
        .filter(|e| e.kind == crate::capture::ErrorKind::NotEsxi)
        .or_else(|| not_esxi(capture));
    if let Some(error) = not_esxi {
        // Every check would only repeat "esxcli: not found": one line says it all.
        let diagnosis = HostDiagnosis::not_diagnosed(&capture.host, HostStatus::Error, error, Vec::new());
        return (diagnosis, None);
    }
    let mut facts = facts::build(capture);
    let running = scope.and_then(|names| scope::keep_vms(&mut facts, names));
    if let (Some(error), true) = (&capture.error, nothing_collected) {
        let status = match error.kind {
            crate::capture::ErrorKind::Interrupted => HostStatus::Interrupted,
            k if k.is_unreachable() => HostStatus::Unreachable,
            _ => HostStatus::Error,
        };
        let diagnosis = HostDiagnosis::not_diagnosed(&capture.host, status, error.clone(), incomplete_outputs(capture));
        return (diagnosis, running);
    }
    let ctx = Context::new(&facts);
    let mut checks = host_checks(&ctx);
    settle_not_checked(&mut checks);
    if facts.configuration_only {
        cite_api(&mut checks);
    }
    fix::attach_forms(&capture.host, &mut checks);
    let below_65 = matches!(&facts.version, Ok(v) if v.numbers().is_some_and(|n| n < (6, 5, 0)));
    if below_65 {
        not_applicable_below_65(&mut checks);
    }
    let (vms, adapters_error) = if below_65 {
        (Vec::new(), None)
    } else {
        adapters(&facts, &ctx, &checks)
    };
    let record_errors = facts.record_errors();
    let esxi_version = facts.version.as_ref().ok().map(|v| match &v.build {
        Some(build) => format!("{} (build {build})", v.version),
        None => v.version.clone(),
    });
    let incomplete_outputs = incomplete_outputs(capture);
    // A configuration-only host's running VMs are the ones the vSphere API named.
    let vms_error = facts
        .vms
        .as_ref()
        .err()
        .filter(|_| !facts.configuration_only)
        .map(|e| format!("running VMs could not be listed: {e}"));
    let mut diagnosis = HostDiagnosis {
        host: capture.host.clone(),
        status: HostStatus::Ok,
        error: capture.error.clone(),
        esxi_version,
        checks,
        vms,
        adapters_error,
        pvrdma_vmknic: pvrdma_vmknic(&ctx),
        uplinks: uplinks::uplink_counters(&facts),
        fleet_failures: Vec::new(),
        record_errors,
        vms_error,
        incomplete_outputs,
        unparsed_outputs: facts.unparsed().into_iter().map(UnparsedOutput::from_error).collect(),
        send_evidence: None,
        configuration_only: facts.configuration_only,
        topology: topology::of(&ctx, capture),
    };
    diagnosis.status = judged_status(&diagnosis);
    (diagnosis, running)
}

/// Below ESXi 6.5 nothing PVRDMA needs exists: every check after the version check says
/// so instead of "unknown".
fn not_applicable_below_65(checks: &mut [Check]) {
    for c in checks.iter_mut().skip(1) {
        *c = check(
            c.id,
            Status::NotApplicable,
            "not applicable below ESXi 6.5 (PVRDMA needs 6.5 or later, see esxi-version)",
            Vec::new(),
        );
    }
}

/// A judged host's status: problems when a check fails or an adapter falls back to TCP,
/// else incomplete when anything could not be told (an output cut or unreadable, a check
/// or verdict unknown, a failure during collection), else ok.
fn judged_status(h: &HostDiagnosis) -> HostStatus {
    let adapters = || h.vms.iter().flat_map(|v| &v.adapters);
    let any_fail =
        h.checks.iter().any(|c| c.status == Status::Fail) || adapters().any(|a| a.verdict == Verdict::TcpFallback);
    let any_unknown = !h.incomplete_outputs.is_empty()
        || h.vms_error.is_some()
        || h.checks.iter().any(|c| c.status == Status::Unknown)
        || adapters().any(|a| a.verdict == Verdict::Unknown)
        || h.adapters_error.is_some()
        || !h.record_errors.is_empty()
        || h.error.is_some();
    if any_fail {
        HostStatus::Problems
    } else if any_unknown {
        HostStatus::Incomplete
    } else {
        HostStatus::Ok
    }
}

/// Every host check the registry lists, judged in its order.
fn host_checks(ctx: &Context) -> Vec<Check> {
    CheckId::ALL
        .iter()
        .filter_map(|c| match c.judge() {
            Judge::Host(judge) => Some(judge(ctx)),
            Judge::HostWhenApplicable(judge) => judge(ctx),
            Judge::Fleet(_) => None,
        })
        .collect()
}

/// A capture (live or offline) where every esxcli command answered "not found": the
/// login worked on something that is not ESXi.
fn not_esxi(capture: &HostCapture) -> Option<Failure> {
    let all_missing = capture.esxcli_missing();
    all_missing.then(|| {
        Failure::of_host(
            crate::capture::ErrorKind::NotEsxi,
            &capture.host,
            "not an ESXi host: `esxcli` is not found there (or its shell PATH lacks it); check that the name points at an ESXi host",
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
fn ipv4_network(address: &str, netmask: &str) -> Option<String> {
    let address: std::net::Ipv4Addr = address.trim().parse().ok()?;
    let mask = u32::from(netmask.trim().parse::<std::net::Ipv4Addr>().ok()?);
    let prefix = mask.leading_ones();
    if mask.checked_shl(prefix).unwrap_or(0) != 0 {
        return None;
    }
    let network = std::net::Ipv4Addr::from(u32::from(address) & mask);
    Some(format!("{network}/{prefix}"))
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
    /// The PVRDMA VMs of the `.vmx` facts, read once for the four VM checks.
    vmx: std::cell::OnceCell<Option<checks::vm_config::VmxInputs<'a>>>,
}

impl<'a> Context<'a> {
    fn new(facts: &'a HostFacts) -> Self {
        let devices: &[p::RdmaDevice] = facts.rdma_devices.as_deref().unwrap_or(&[]);
        let switches: &[p::DvsSwitch] = facts.dvs.as_deref().unwrap_or(&[]);
        let dvs_of = |d: &p::RdmaDevice| {
            let uplink = d.paired_uplink.as_deref()?;
            switches.iter().find(|s| s.uplinks.iter().any(|u| u == uplink))
        };
        let is_active = |d: &p::RdmaDevice| d.state.is_active();
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
            vmx: std::cell::OnceCell::new(),
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

    /// The vmknics PVRDMA may be tagged with: the one bound to the RDMA device, else every
    /// one on the RDMA vDS (none when neither is known).
    fn vmknic_candidates(&self) -> Vec<String> {
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
        if let Some(bound) = bound {
            return vec![bound];
        }
        let (Some(dvs), Ok(vmknics)) = (self.dvs, &self.facts.vmknics) else {
            return Vec::new();
        };
        vmknics
            .iter()
            .filter(|v| v.vds_name.as_deref() == Some(dvs.name.as_str()))
            .map(|v| v.name.clone())
            .collect()
    }

    /// The remedy that tags a vmknic for PVRDMA: a change when exactly one vmknic fits,
    /// else the choice (or the vmknic to create) left to the admin.
    fn tag_vmknic(&self) -> Remedy {
        let was = self
            .facts
            .pvrdma_vmknic
            .as_ref()
            .ok()
            .map(|o| o.string_value.trim().to_string());
        let template = "set Net.PVRDMAVmknic to it (vSphere Client: the host > Configure > System > Advanced System Settings > Edit; govc host.option.set -host HOST Net.PVRDMAVmknic VMK; or esxcli system settings advanced set -o /Net/PVRDMAVmknic -s VMK)";
        match self.vmknic_candidates().as_slice() {
            [one] => Remedy::of_changes(
                vec![ConfigChange::host(
                    Setting::AdvancedOption {
                        key: "Net.PVRDMAVmknic".to_string(),
                        value: one.clone(),
                    },
                    was,
                )],
                None,
            ),
            [] => Remedy {
                advice: Some(format!(
                    "no vmknic is bound to the RDMA device or on its vDS: create one on the HCA's vDS (vSphere Client: the host > Configure > Networking > VMkernel adapters > Add Networking), then {template}"
                )),
                decision: Some(
                    "a vmknic for PVRDMA must first be created on the HCA's vDS, with an address in the PVRDMA subnet"
                        .to_string(),
                ),
                ..Remedy::default()
            },
            many => Remedy {
                advice: Some(format!(
                    "choose the vmknic PVRDMA is to use, one of {}, and {template}",
                    many.join(", ")
                )),
                decision: Some(format!(
                    "which vmknic carries PVRDMA: {} are {} on the HCA's vDS",
                    many.join(" and "),
                    if many.len() == 2 { "both" } else { "all" }
                )),
                ..Remedy::default()
            },
        }
    }
}

/// Evidence of checks judged from the vSphere API names the API answer and property
/// that stood in for each `esxcli` command.
fn cite_api(checks: &mut [Check]) {
    for e in checks.iter_mut().flat_map(|c| c.evidence.iter_mut()) {
        if let Some((api, property)) = cat::api_equivalent(e.command) {
            e.command = api;
            e.field = format!("{property}: {}", e.field);
        }
    }
}

fn ev(command: &'static str, field: impl Into<String>) -> Evidence {
    Evidence {
        command,
        field: field.into(),
    }
}

fn check(id: CheckId, status: Status, summary: impl Into<String>, evidence: Vec<Evidence>) -> Check {
    Check {
        evidence,
        ..Check::new(id, status, summary)
    }
}

/// A fix that is one host command (values from the host already shell-quoted).
#[cfg(test)]
fn with_command(c: Check, command: impl Into<String>) -> Check {
    with_fix(c, Some(command.into()), None)
}

/// A fix that is not a host command: vCenter, hardware, alternatives.
fn with_advice(c: Check, advice: impl Into<String>) -> Check {
    with_fix(c, None, Some(advice.into()))
}

/// What a fix that needs VMs powered off asks to decide first.
const POWERED_OFF: &str = "it needs the VMs concerned powered off: choose when they can be";

/// The check's fix needs a decision first (`decision`): a plan leaves it to a person.
fn with_decision(mut c: Check, decision: &str) -> Check {
    if let Some(r) = c.remedy.as_mut() {
        r.decision = Some(decision.to_string());
    }
    c
}

/// A fix built whole (changes, forms, a decision).
fn with_remedy(mut c: Check, remedy: Remedy) -> Check {
    c.remedy = Some(remedy);
    c
}

fn with_fix(mut c: Check, command: Option<String>, advice: Option<String>) -> Check {
    c.remedy = Some(Remedy {
        command,
        advice,
        ..Remedy::default()
    });
    c
}

/// The check cannot run because a fact is missing.
fn unknown_from(id: CheckId, command: &'static str, error: &facts::FactError) -> Check {
    check(id, Status::Unknown, error.to_string(), vec![ev(command, "output")])
}

/// `unknown` means missing data and nothing else: a check skipped because its prerequisite
/// *fails* (or is itself not applicable) has nothing to judge, so it is `not-applicable`
/// with that reason; it stays `unknown` only when the prerequisite is unknown.
fn settle_not_checked(checks: &mut [Check]) {
    for i in 0..checks.len() {
        let Some(c) = checks.get(i) else { continue };
        if c.status != Status::Unknown || !c.not_checked {
            continue;
        }
        let Some(pre) = c.id.prerequisite() else {
            continue;
        };
        let pre_status = checks.iter().find(|p| p.id == pre).map(|p| p.status);
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

/// The check depends on another one that did not pass, or on something absent.
fn not_checked(id: CheckId, because: &str) -> Check {
    Check {
        not_checked: true,
        ..check(id, Status::Unknown, format!("not checked: {because}"), Vec::new())
    }
}
