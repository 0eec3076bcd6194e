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

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Pass,
    Warn,
    Fail,
    Unknown,
}

/// Where a conclusion comes from: which command, which field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    pub command: &'static str,
    pub field: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub id: &'static str,
    pub status: Status,
    pub summary: String,
    pub evidence: Vec<Evidence>,
    pub remedy: Option<String>,
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
        "vmknic-subnets",
        "across hosts: the tagged vmknics share one IPv4 subnet (else routing and RoCE v2 are needed)",
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortView {
    pub vswitch: Option<String>,
    pub portgroup: Option<String>,
    pub uplink: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Adapter {
    pub index: u32,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    pub mac: Option<String>,
    pub roce_version: Option<u32>,
    pub active_mtu: Option<u32>,
    pub port: Option<PortView>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Vm {
    pub name: String,
    pub world_id: Option<u64>,
    pub config_file: Option<String>,
    pub adapters: Vec<Adapter>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostDiagnosis {
    pub host: String,
    pub status: HostStatus,
    pub error: Option<Failure>,
    pub esxi_version: Option<String>,
    pub checks: Vec<Check>,
    /// VMs with at least one PVRDMA adapter.
    pub vms: Vec<Vm>,
    /// Why the host's PVRDMA adapters could not be listed, when they could not.
    pub adapters_error: Option<String>,
    /// The vmknic tagged for PVRDMA and its IPv4 address, when known.
    pub pvrdma_vmknic: Option<PvrdmaVmknic>,
}

/// The VMkernel adapter a host uses for PVRDMA.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PvrdmaVmknic {
    pub name: String,
    pub ipv4: Option<String>,
    pub netmask: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    Memcpy,
    Rdma,
    Tcp,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdapterRef {
    pub host: String,
    pub vm: String,
    /// Tells apart two running VMs with the same display name.
    pub world_id: Option<u64>,
    pub adapter: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pair {
    pub a: AdapterRef,
    pub b: AdapterRef,
    pub transport: Transport,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub hosts: usize,
    pub healthy: usize,
    pub problems: usize,
    pub incomplete: usize,
    pub unreachable: usize,
    pub error: usize,
    pub adapters: usize,
    pub hca: usize,
    pub tcp_fallback: usize,
    pub unknown: usize,
    /// Hosts whose PVRDMA adapters could not be listed (not the same as having none).
    pub hosts_without_adapter_list: usize,
    /// The one-line summary the human report ends with.
    pub line: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnosis {
    pub hosts: Vec<HostDiagnosis>,
    /// Checks across hosts (stable ids too): `vmknic-subnets`.
    pub fleet_checks: Vec<Check>,
    pub pairs: Vec<Pair>,
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
        let incomplete = self.hosts.iter().any(|h| {
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

/// Diagnoses every host, then the transport between every pair of adapters.
pub fn diagnose(captures: &[HostCapture]) -> Diagnosis {
    let hosts: Vec<HostDiagnosis> = captures.iter().map(diagnose_host).collect();
    let fleet_checks = check_vmknic_subnets(&hosts).into_iter().collect();
    let pairs = pairs(&hosts);
    let summary = summarize(&hosts);
    Diagnosis {
        hosts,
        fleet_checks,
        pairs,
        summary,
    }
}

/// Diagnoses one host.
pub fn diagnose_host(capture: &HostCapture) -> HostDiagnosis {
    let facts = facts::build(capture);
    let nothing_collected = capture.outputs.is_empty() && capture.vmx_files.is_empty();
    if let (Some(error), true) = (&capture.error, nothing_collected) {
        let status = if error.kind.is_unreachable() {
            HostStatus::Unreachable
        } else {
            HostStatus::Error
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
        };
    }
    let ctx = Context::new(&facts);
    let checks = vec![
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
    ];
    let (vms, adapters_error) = adapters(&facts, &ctx, &checks);
    let esxi_version = facts.version.as_ref().ok().map(|v| match &v.build {
        Some(build) => format!("{} (build {build})", v.version),
        None => v.version.clone(),
    });
    let any_fail = checks.iter().any(|c| c.status == Status::Fail)
        || vms
            .iter()
            .flat_map(|v| &v.adapters)
            .any(|a| a.verdict == Verdict::TcpFallback);
    let any_unknown = checks.iter().any(|c| c.status == Status::Unknown)
        || vms
            .iter()
            .flat_map(|v| &v.adapters)
            .any(|a| a.verdict == Verdict::Unknown)
        || adapters_error.is_some()
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
    }
}

fn pvrdma_vmknic(ctx: &Context) -> Option<PvrdmaVmknic> {
    let name = ctx.tagged_vmknic.clone()?;
    let row = ctx
        .facts
        .ipv4
        .as_ref()
        .ok()
        .and_then(|rows| rows.iter().find(|r| r.name == name));
    Some(PvrdmaVmknic {
        ipv4: row.and_then(|r| r.address.clone()),
        netmask: row.and_then(|r| r.netmask.clone()),
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

/// `vmknic-subnets`: the tagged vmknics of all hosts must reach each other (DOMAIN §2.4).
/// Without sending traffic, the best read-only evidence is their IPv4 subnets: one subnet
/// is the set-up the guides describe; several need IP routing, which RoCE v1 cannot cross.
fn check_vmknic_subnets(hosts: &[HostDiagnosis]) -> Option<Check> {
    const ID: &str = "vmknic-subnets";
    let with_vmknic: Vec<&HostDiagnosis> = hosts.iter().filter(|h| h.pvrdma_vmknic.is_some()).collect();
    if with_vmknic.len() < 2 {
        return None;
    }
    let mut networks: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut unknown: Vec<String> = Vec::new();
    for h in &with_vmknic {
        let Some(v) = &h.pvrdma_vmknic else { continue };
        let network = v
            .ipv4
            .as_deref()
            .zip(v.netmask.as_deref())
            .and_then(|(a, m)| ipv4_network(a, m));
        match network {
            Some(n) => networks.entry(n).or_default().push(format!("{} {}", h.host, v.name)),
            None => unknown.push(format!("{} {}", h.host, v.name)),
        }
    }
    let evidence = vec![ev(cat::IPV4_GET, "IPv4 Address, IPv4 Netmask of the tagged vmknic")];
    let listing = networks
        .iter()
        .map(|(n, members)| format!("{n} ({})", members.join(", ")))
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
            Some(with_remedy(
                check(ID, status, format!("the PVRDMA vmknics are in {n} IPv4 subnets: {listing}: {tail}"), evidence),
                "put the PVRDMA vmknics in one subnet (esxcli network ip interface ipv4 set -i <vmk> -t static -I <address> -N <netmask>), or route between the subnets and use RoCE v2",
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

    /// The vmknic to suggest in a remedy: the one bound to the RDMA device, else one on
    /// the RDMA vDS.
    fn suggested_vmknic(&self) -> String {
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
        bound.or_else(on_dvs).unwrap_or_else(|| "<vmkN>".to_string())
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

fn with_remedy(mut c: Check, remedy: impl Into<String>) -> Check {
    c.remedy = Some(remedy.into());
    c
}

/// The check cannot run because a fact is missing.
fn unknown_from(id: &'static str, command: &'static str, error: &facts::FactError) -> Check {
    check(id, Status::Unknown, error.to_string(), vec![ev(command, "output")])
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
        Some(_) => with_remedy(
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
        return with_remedy(
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
            with_remedy(
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
    let detach = standard
        .map(|s| {
            format!(
                "esxcli network vswitch standard uplink remove -u {uplink} -v {}, then ",
                s.name
            )
        })
        .unwrap_or_default();
    let target = match switches.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().as_slice() {
        [one] => format!("vDS {one}"),
        _ => "the PVRDMA vDS".to_string(),
    };
    with_remedy(
        check(ID, Status::Fail, summary, evidence),
        format!("{detach}in vCenter add {uplink} as the only uplink of {target} (Distributed Switch > Add and Manage Hosts > Manage physical adapters)"),
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
    with_remedy(
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
        None => with_remedy(
            check(
                ID,
                Status::Fail,
                "no VMkernel adapter is tagged for PVRDMA (/Net/PVRDMAVmknic is empty)",
                evidence,
            ),
            format!(
                "esxcli system settings advanced set -o /Net/PVRDMAVmknic -s {}",
                ctx.suggested_vmknic()
            ),
        ),
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
        return with_remedy(
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
            format!(
                "esxcli system settings advanced set -o /Net/PVRDMAVmknic -s {}",
                ctx.suggested_vmknic()
            ),
        );
    };
    let enabled_ev = || ev(cat::IP_INTERFACE_LIST, format!("Enabled of {vmk}"));
    match interface.enabled {
        Some(true) => {}
        Some(false) => {
            return with_remedy(
                check(
                    ID,
                    Status::Fail,
                    format!("{vmk} exists but is disabled"),
                    vec![enabled_ev()],
                ),
                format!("esxcli network ip interface set -e true -i {vmk}"),
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
        return with_remedy(
            check(
                ID,
                Status::Fail,
                format!("{vmk} has no IPv4 address; PVRDMA endpoints cannot reach each other"),
                vec![ev(cat::IPV4_GET, format!("IPv4 Address of {vmk}"))],
            ),
            format!("esxcli network ip interface ipv4 set -i {vmk} -t static -I <IPv4 address> -N <netmask>"),
        );
    };
    let Some(dvs) = ctx.dvs else {
        return check(
            ID,
            Status::Pass,
            format!("{vmk} exists, is enabled and has IPv4 {address}"),
            vec![enabled_ev(), ev(cat::IPV4_GET, format!("IPv4 Address of {vmk}"))],
        );
    };
    if interface.vds_name.as_deref() == Some(dvs.name.as_str()) {
        return check(
            ID,
            Status::Pass,
            format!(
                "{vmk} exists, is enabled, has IPv4 {address} and sits on vDS {}",
                dvs.name
            ),
            vec![
                enabled_ev(),
                ev(cat::IPV4_GET, format!("IPv4 Address of {vmk}")),
                ev(cat::IP_INTERFACE_LIST, format!("VDS Name of {vmk}")),
            ],
        );
    }
    let on = match (interface.vds_name.as_deref(), interface.portset.as_deref()) {
        (Some(vds), _) => format!("vDS {vds}"),
        (None, Some(portset)) => format!("standard switch {portset}"),
        (None, None) => "another switch".to_string(),
    };
    let suggested = ctx.suggested_vmknic();
    let remedy = if &suggested != vmk && !suggested.starts_with('<') {
        format!(
            "tag the vmknic on vDS {}: esxcli system settings advanced set -o /Net/PVRDMAVmknic -s {suggested}",
            dvs.name
        )
    } else {
        format!(
            "in vCenter, migrate {vmk} to a port group of vDS {} (Host > Configure > VMkernel adapters)",
            dvs.name
        )
    };
    with_remedy(
        check(
            ID,
            Status::Warn,
            format!(
                "{vmk} has IPv4 {address} but sits on {on}, not on vDS {} whose uplink is the HCA",
                dvs.name
            ),
            vec![
                ev(cat::IP_INTERFACE_LIST, format!("VDS Name of {vmk}")),
                ev(cat::IP_INTERFACE_LIST, format!("Portset of {vmk}")),
            ],
        ),
        remedy,
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
    let evidence = vec![
        ev(cat::FIREWALL_GET, "Enabled"),
        ev(cat::FIREWALL_RULESET_LIST, "Enabled of pvrdma"),
    ];
    const ENABLE: &str = "esxcli network firewall ruleset set -e true -r pvrdma";
    let esxi8 = matches!(&f.version, Ok(v) if v.numbers().is_some_and(|n| n.0 >= 8));
    match rulesets.iter().find(|r| r.name.eq_ignore_ascii_case("pvrdma")) {
        Some(r) if r.enabled == Some(true) => check(ID, Status::Pass, "firewall ruleset pvrdma is enabled", evidence),
        Some(r) if r.enabled == Some(false) => match &f.firewall {
            Ok(fw) if fw.enabled == Some(true) => with_remedy(
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
            Ok(_) => with_remedy(
                check(ID, Status::Unknown, "ruleset pvrdma is disabled and whether the firewall is enabled is not stated", evidence),
                ENABLE,
            ),
            Err(e) => with_remedy(
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
    let (Some(device), Some(dvs)) = (ctx.device, ctx.dvs) else {
        return not_checked(ID, "needs rdma-uplink-on-dvs to pass");
    };
    let Some(vmk) = &ctx.tagged_vmknic else {
        return not_checked(ID, "needs pvrdma-vmknic-tagged to pass");
    };
    if let Ok(interfaces) = &f.vmknics {
        match interfaces.iter().find(|i| &i.name == vmk) {
            None => {
                return not_checked(
                    ID,
                    &format!("the tagged vmknic {vmk} does not exist (see pvrdma-vmknic-valid)"),
                )
            }
            // Its MTU only matters on the path through the HCA's vDS.
            Some(i) if i.vds_name.as_deref() != Some(dvs.name.as_str()) => {
                return not_checked(
                    ID,
                    &format!("{vmk} is not on vDS {} (see pvrdma-vmknic-valid)", dvs.name),
                )
            }
            Some(_) => {}
        }
    }
    let uplink = device.paired_uplink.clone().unwrap_or_default();
    let nic_mtu: Result<u32, String> = match &f.nics {
        Ok(nics) => match nics.iter().find(|n| n.name == uplink) {
            Some(n) => n.mtu.ok_or_else(|| "no MTU in its row".to_string()),
            None => Err("not in esxcli network nic list".to_string()),
        },
        Err(e) => Err(e.to_string()),
    };
    let vmk_mtu: Result<u32, String> = match &f.vmknics {
        Ok(v) => v
            .iter()
            .find(|v| &v.name == vmk)
            .and_then(|v| v.mtu)
            .ok_or_else(|| "no MTU printed".to_string()),
        Err(e) => Err(e.to_string()),
    };
    let evidence = vec![
        ev(cat::DVS_LIST, format!("MTU of {}", dvs.name)),
        ev(cat::IP_INTERFACE_LIST, format!("MTU of {vmk}")),
        ev(cat::NIC_LIST, format!("MTU of {uplink}")),
    ];
    let dvs_label = format!("vDS {}", dvs.name);
    let named = [
        (dvs_label.clone(), dvs.mtu.ok_or_else(|| "no MTU printed".to_string())),
        (vmk.clone(), vmk_mtu),
        (uplink.clone(), nic_mtu),
    ];
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
    // How to raise one element of the path to `target`.
    let raise = |name: &str, target: u32| {
        if name == dvs_label {
            format!("set the MTU of vDS {} to {target} in vCenter (Distributed Switch > Settings > Edit Settings > Advanced)", dvs.name)
        } else if name == vmk.as_str() {
            format!("esxcli network ip interface set -m {target} -i {vmk}")
        } else {
            format!("{name} did not take the vDS MTU: re-apply vDS {}'s MTU {target} in vCenter and check `esxcli network nic get -n {name}`", dvs.name)
        }
    };
    let vmk_value = known.iter().find(|(n, _)| n == vmk).map(|(_, m)| *m);
    let lowest = known.iter().filter(|(n, _)| n != vmk).min_by_key(|(_, m)| *m);
    if let (Some(v), Some((low_name, low))) = (vmk_value, lowest) {
        if v > *low {
            return with_remedy(
                check(
                    ID,
                    Status::Fail,
                    format!("{vmk} MTU {v} is larger than the path below it ({list}): large frames are dropped"),
                    evidence,
                ),
                format!(
                    "esxcli network ip interface set -m {low} -i {vmk}, or {}",
                    raise(low_name, v)
                ),
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
        check(
            ID,
            Status::Pass,
            format!("MTU {high} on vDS {}, {vmk} and {uplink}", dvs.name),
            evidence,
        )
    } else {
        with_remedy(
            check(ID, Status::Warn, format!("MTUs differ: {list}"), evidence),
            raise(low_name, high),
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
        return with_remedy(
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
    with_remedy(
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
    if !f.vmx.is_empty() && f.pvrdma_properties.is_err() && f.pvrdma_devices.is_err() {
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
    let mut vms: Vec<Vm> = vms.into_values().collect();
    vms.sort_by(|a, b| a.name.cmp(&b.name).then(a.world_id.cmp(&b.world_id)));
    (vms, adapters_error)
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
        let section_error = f.vm_ports.as_ref().ok().and_then(|v| {
            v.iter()
                .find(|s| s.world_id == id.world_id)
                .and_then(|s| s.error.clone())
        });
        return match (&f.vm_ports, section_error) {
            (Err(e), _) => vec![format!("its VM port is unknown: {e}")],
            // The VM's own section failed (cut off, mixed, query error): unknown, not absent.
            (Ok(_), Some(e)) => vec![format!("its VM port is unknown: {e}")],
            (Ok(_), None) => vec![format!(
                "no port with MAC {mac} in `esxcli network vm port list -w {}`",
                id.world_id
            )],
        };
    };
    let vswitch = port.vswitch.as_deref().unwrap_or("?");
    let portgroup = port.portgroup.as_deref().unwrap_or("?");
    let uplink = port.team_uplink.as_deref().unwrap_or("no uplink");
    let Some((device, _)) = ctx.rdma_switches.iter().find(|(_, s)| s.name == vswitch) else {
        let mut names: Vec<&str> = ctx.rdma_switches.iter().map(|(_, s)| s.name.as_str()).collect();
        names.dedup();
        return vec![match names.first() {
            None => format!("its port (MAC {mac}) is on {vswitch} / {portgroup} with uplink {uplink}; no vDS has an HCA as uplink"),
            Some(first) => format!(
                "its port (MAC {mac}) is on {vswitch} / {portgroup} with uplink {uplink}, not on vDS {} whose uplink is an HCA: connect the adapter to a port group of {first}",
                names.join(" or ")
            ),
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

/// The transport between every two adapters of different VMs.
fn pairs(hosts: &[HostDiagnosis]) -> Vec<Pair> {
    let all: Vec<(AdapterRef, Verdict)> = hosts
        .iter()
        .flat_map(|h| {
            h.vms.iter().flat_map(move |vm| {
                vm.adapters.iter().map(move |a| {
                    (
                        AdapterRef {
                            host: h.host.clone(),
                            vm: vm.name.clone(),
                            world_id: vm.world_id,
                            adapter: a.index,
                        },
                        a.verdict,
                    )
                })
            })
        })
        .collect();
    let mut pairs = Vec::new();
    for (i, (a, va)) in all.iter().enumerate() {
        for (b, vb) in all.iter().skip(i + 1) {
            if a.host == b.host && a.vm == b.vm && a.world_id == b.world_id {
                continue;
            }
            let transport = if a.host == b.host {
                Transport::Memcpy
            } else {
                match (va, vb) {
                    (Verdict::Hca, Verdict::Hca) => Transport::Rdma,
                    (Verdict::TcpFallback, _) | (_, Verdict::TcpFallback) => Transport::Tcp,
                    _ => Transport::Unknown,
                }
            };
            pairs.push(Pair {
                a: a.clone(),
                b: b.clone(),
                transport,
            });
        }
    }
    pairs
}

fn summarize(hosts: &[HostDiagnosis]) -> Summary {
    let mut s = Summary {
        hosts: hosts.len(),
        ..Summary::default()
    };
    for h in hosts {
        match h.status {
            HostStatus::Ok => s.healthy += 1,
            HostStatus::Problems => s.problems += 1,
            HostStatus::Incomplete => s.incomplete += 1,
            HostStatus::Unreachable => s.unreachable += 1,
            HostStatus::Error => s.error += 1,
        }
        if h.adapters_error.is_some() {
            s.hosts_without_adapter_list += 1;
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
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let parts = |items: &[(usize, &str)]| {
        items
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, label)| format!("{n} {label}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let host_parts = parts(&[
        (s.healthy, "healthy"),
        (s.problems, "with problems"),
        (s.incomplete, "incomplete"),
        (s.unreachable, "unreachable"),
        (s.error, "with errors"),
    ]);
    let adapter_parts = parts(&[(s.hca, "hca"), (s.tcp_fallback, "tcp-fallback"), (s.unknown, "unknown")]);
    let mut line = plural(s.hosts, "host", "hosts");
    if !host_parts.is_empty() {
        line.push_str(&format!(": {host_parts}"));
    }
    line.push_str(&format!(
        "; {}",
        plural(s.adapters, "PVRDMA adapter", "PVRDMA adapters")
    ));
    if !adapter_parts.is_empty() {
        line.push_str(&format!(": {adapter_parts}"));
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
        }
    }

    fn diagnosis(hosts: Vec<HostDiagnosis>) -> Diagnosis {
        let pairs = pairs(&hosts);
        let summary = summarize(&hosts);
        Diagnosis {
            hosts,
            fleet_checks: Vec::new(),
            pairs,
            summary,
        }
    }

    fn transport(d: &Diagnosis, a: (&str, &str), b: (&str, &str)) -> Transport {
        d.pairs
            .iter()
            .find(|p| (p.a.host.as_str(), p.a.vm.as_str()) == a && (p.b.host.as_str(), p.b.vm.as_str()) == b)
            .map(|p| p.transport)
            .unwrap_or_else(|| panic!("no pair {a:?} {b:?}"))
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
        assert_eq!(d.pairs.len(), 6);
    }

    #[test]
    fn adapters_of_the_same_vm_are_not_paired() {
        let d = diagnosis(vec![host(
            "esx01",
            HostStatus::Ok,
            vec![("a", vec![adapter(0, Verdict::Hca), adapter(1, Verdict::Hca)])],
        )]);
        assert!(d.pairs.is_empty());
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
            "3 hosts: 1 healthy, 1 with problems, 1 unreachable; 5 PVRDMA adapters: 3 hca, 1 tcp-fallback, 1 unknown"
        );
        assert_eq!(
            diagnosis(vec![host("esx01", HostStatus::Ok, vec![])]).summary.line,
            "1 host: 1 healthy; 0 PVRDMA adapters"
        );
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
            pvrdma_vmknic: Some(PvrdmaVmknic {
                name: "vmk1".to_string(),
                ipv4: Some(ip.to_string()),
                netmask: Some(mask.to_string()),
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
        let d = Diagnosis {
            hosts: v1.to_vec(),
            fleet_checks: check_vmknic_subnets(&v1).into_iter().collect(),
            pairs: Vec::new(),
            summary: Summary::default(),
        };
        assert_eq!(d.exit_code(), exit::PROBLEMS, "a failing fleet check fails the run");
    }

    #[test]
    fn a_single_host_has_no_fleet_check() {
        assert!(check_vmknic_subnets(&[with_vmknic("a", "10.1.1.1", "255.255.255.0", None)]).is_none());
    }
}
