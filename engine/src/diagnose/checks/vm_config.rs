//! VM prerequisites read from the `.vmx` facts (vm-support bundles today; the live
//! `.vmx` inventory command fills the same facts): virtual hardware 13+, all guest memory
//! reserved, the number of PVRDMA adapters per VM the release allows, and native endpoints
//! (hardware 18+, ESXi 7.0 U1+) compared with what vsish says is in effect.
//!
//! These checks run where `.vmx` facts exist; a host without any is not judged on them.
use super::super::{
    check, ev, with_advice, with_decision, ChangeTarget, Check, CheckId, ConfigChange, Context, Setting, Status,
    POWERED_OFF,
};
use crate::catalogue as cat;
use crate::facts::{HostFacts, VmxFact};
use pvrdma_parsers as p;

/// Where `.vmx` facts come from, for evidence.
const VMX: &str = "vmx";

/// A VM check's summary when no VM has a PVRDMA adapter, said of `.vmx` files; read
/// through the vSphere API, [`VmxInputs::with_source`] says it of vCenter's answer.
const NO_PVRDMA_VM: &str = "no VM in the .vmx files has a PVRDMA adapter";

/// One VM with PVRDMA adapters, as its `.vmx` describes it.
struct PvrdmaVm<'a> {
    name: String,
    path: &'a str,
    config: &'a p::VmxConfig,
    /// Present PVRDMA adapters, in `ethernetN` order (the vsish adapter index order).
    adapters: Vec<&'a p::VmxAdapter>,
}

/// What the four VM checks read: the PVRDMA VMs, the `.vmx` files (or inventory
/// sections) that could not be read, and the command the facts came from.
pub(in crate::diagnose) struct VmxInputs<'a> {
    vms: Vec<PvrdmaVm<'a>>,
    unreadable: Vec<String>,
    source: &'static str,
}

impl VmxInputs<'_> {
    /// Evidence names the command the `.vmx` facts came from on a live host, or the
    /// `VirtualMachineConfigInfo` properties the vSphere API gave for those settings.
    fn with_source(&self, mut c: Check) -> Check {
        for e in c.evidence.iter_mut().filter(|e| e.command == VMX) {
            e.command = self.source;
            if self.source == cat::VSPHERE_VM_CONFIG {
                e.field = api_field(c.id).to_string();
            }
        }
        if self.source == cat::VSPHERE_VM_CONFIG && c.summary == NO_PVRDMA_VM {
            c.summary = "no running VM vCenter reports on this host has a PVRDMA adapter".to_string();
        }
        c
    }
}

/// The VM checks' inputs (read once per host), or `None` when the host has no `.vmx`
/// facts at all and was not asked for them (a bundle without `.vmx` files, an older
/// capture): the VM checks are then not judged.
fn inputs<'c>(ctx: &'c Context) -> Option<&'c VmxInputs<'c>> {
    ctx.vmx.get_or_init(|| read_inputs(ctx.facts)).as_ref()
}

/// `vm-hardware-version`.
pub(in crate::diagnose) fn check_hardware_version(ctx: &Context) -> Option<Check> {
    let v = inputs(ctx)?;
    Some(with_decision(
        v.with_source(hardware_version(&v.vms, &v.unreadable)),
        POWERED_OFF,
    ))
}

/// `vm-memory-reserved`.
pub(in crate::diagnose) fn check_memory_reserved(ctx: &Context) -> Option<Check> {
    let v = inputs(ctx)?;
    let mut c = v.with_source(memory_reserved(&v.vms, &v.unreadable));
    if let (Status::Fail, Some(remedy)) = (c.status, c.remedy.as_mut()) {
        remedy.changes = v.vms.iter().filter_map(|vm| lock_memory(ctx.facts, vm)).collect();
    }
    Some(c)
}

/// The change that reserves all of a VM's guest memory, when it reserves less. The VM is
/// named by its managed object id when the vSphere API gave one only it has.
fn lock_memory(f: &HostFacts, vm: &PvrdmaVm) -> Option<ConfigChange> {
    let c = vm.config;
    let size = c.memsize_mb?;
    if c.mem_pin == Some(true) || c.mem_min_mb.is_some_and(|min| min >= size) {
        return None;
    }
    let mut same_name = f
        .api_vms
        .iter()
        .filter(|a| a.config.display_name.as_deref() == Some(vm.name.as_str()));
    let moid = match (same_name.next(), same_name.next()) {
        (Some(only), None) => Some(only.id.clone()).filter(|id| !id.is_empty()),
        _ => None,
    };
    Some(ConfigChange {
        target: ChangeTarget::Vm {
            name: vm.name.clone(),
            moid,
        },
        setting: Setting::MemoryReservationLocked { memory_mb: Some(size) },
        replaces: Some(format!(
            "{} MB of {size} MB reserved, not locked",
            c.mem_min_mb.unwrap_or(0)
        )),
    })
}

/// `vm-pvrdma-adapter-count`.
pub(in crate::diagnose) fn check_adapter_count(ctx: &Context) -> Option<Check> {
    let v = inputs(ctx)?;
    Some(with_decision(
        v.with_source(adapter_count(ctx.facts, &v.vms, &v.unreadable)),
        "remove adapters (the VMs named above powered off) or upgrade the host to vSphere 7.0.2 or later: choose, and when",
    ))
}

/// `vm-native-endpoints`.
pub(in crate::diagnose) fn check_native_endpoints(ctx: &Context) -> Option<Check> {
    let v = inputs(ctx)?;
    let c = v.with_source(native_endpoints(ctx.facts, &v.vms, &v.unreadable));
    let decision = if c.status == Status::Fail {
        "upgrade the VMs' compatibility (powered off) or the host, or give up native endpoints: choose, and when"
    } else {
        "the VMs named above must be power-cycled once the namespaces are enabled: choose when"
    };
    Some(with_decision(c, decision))
}

fn read_inputs(f: &HostFacts) -> Option<VmxInputs<'_>> {
    if f.vmx.is_empty() && f.vmx_inventory_problem.is_none() && f.vmx_lines.as_ref().map_or(true, Vec::is_empty) {
        return None;
    }
    let (vms, mut unreadable) = pvrdma_vms(&f.vmx);
    // A section of the live inventory that was cut or failed, and the VMs it never
    // reached: each is a VM whose PVRDMA adapters nobody knows.
    if let Ok(sections) = &f.vmx_lines {
        unreadable.extend(
            sections
                .iter()
                .filter_map(|s| s.config.as_ref().err().map(|why| format!("{}: {why}", s.config_file))),
        );
    }
    let described = match f.configuration_only {
        true => "running VMs' configuration from vCenter",
        false => "running VMs' .vmx",
    };
    unreadable.extend(f.vmx_inventory_problem.iter().map(|why| format!("{described}: {why}")));
    let source = if f.configuration_only {
        cat::VSPHERE_VM_CONFIG
    } else if f.vmx_lines.is_ok() || f.vmx_inventory_problem.is_some() {
        cat::VMX_PVRDMA_LINES
    } else {
        VMX
    };
    Some(VmxInputs {
        vms,
        unreadable,
        source,
    })
}

fn pvrdma_vms(files: &[VmxFact]) -> (Vec<PvrdmaVm<'_>>, Vec<String>) {
    let mut vms = Vec::new();
    let mut unreadable = Vec::new();
    for vmx in files {
        match &vmx.config {
            Ok(config) => {
                let mut adapters: Vec<&p::VmxAdapter> = config
                    .pvrdma_adapters
                    .iter()
                    .filter(|a| a.present != Some(false))
                    .collect();
                adapters.sort_by_key(|a| a.ethernet_index);
                if adapters.is_empty() {
                    continue;
                }
                vms.push(PvrdmaVm {
                    name: config.display_name.clone().unwrap_or_else(|| vmx.path.clone()),
                    path: &vmx.path,
                    config,
                    adapters,
                });
            }
            Err(e) => unreadable.push(format!("{}: {e}", vmx.path)),
        }
    }
    vms.sort_by(|a, b| a.name.cmp(&b.name));
    (vms, unreadable)
}

/// Folds per-VM findings into one check: any failure fails it, else any unknown makes it
/// unknown (a `.vmx` that did not parse could hide a failure), else it passes.
fn fold(
    id: CheckId,
    vms: &[PvrdmaVm],
    unreadable: &[String],
    good: Vec<String>,
    bad: Vec<String>,
    unknown: Vec<String>,
    remedy: &str,
) -> Check {
    let evidence = vec![ev(VMX, id_field(id))];
    let mut unknown = unknown;
    unknown.extend(unreadable.iter().map(|u| format!("{u} (not read)")));
    if !bad.is_empty() {
        let mut summary = bad.join("; ");
        if !unknown.is_empty() {
            summary.push_str(&format!("; unknown: {}", unknown.join("; ")));
        }
        return with_advice(check(id, Status::Fail, summary, evidence), remedy);
    }
    if !unknown.is_empty() {
        return check(id, Status::Unknown, unknown.join("; "), evidence);
    }
    if vms.is_empty() {
        return check(id, Status::Pass, NO_PVRDMA_VM, evidence);
    }
    check(id, Status::Pass, good.join("; "), evidence)
}

/// The `VirtualMachineConfigInfo` properties that hold what [`id_field`] names.
fn api_field(id: CheckId) -> &'static str {
    match id {
        CheckId::VmHardwareVersion => "config.version",
        CheckId::VmMemoryReserved => {
            "config.hardware.memoryMB, config.memoryAllocation.reservation, config.memoryReservationLockedToMax"
        }
        CheckId::VmPvrdmaAdapterCount => "config.hardware.device[VirtualVmxnet3Vrdma]",
        _ => "config.hardware.device[VirtualVmxnet3Vrdma], config.version",
    }
}

fn id_field(id: CheckId) -> &'static str {
    match id {
        CheckId::VmHardwareVersion => "virtualHW.version",
        CheckId::VmMemoryReserved => "memSize, sched.mem.min, sched.mem.pin",
        CheckId::VmPvrdmaAdapterCount => "ethernetN.virtualDev = \"vrdma\"",
        _ => "vrdmaN.nativeEndpointSupport, virtualHW.version",
    }
}

fn hardware_version(vms: &[PvrdmaVm], unreadable: &[String]) -> Check {
    let (mut good, mut bad, mut unknown) = (Vec::new(), Vec::new(), Vec::new());
    for vm in vms {
        match vm.config.hardware_version {
            Some(hw) if hw >= 13 => good.push(format!("{} hardware {hw}", vm.name)),
            Some(hw) => bad.push(format!(
                "{} has virtual hardware {hw}; PVRDMA needs 13 or later",
                vm.name
            )),
            None => unknown.push(format!("{}: no virtualHW.version in {}", vm.name, vm.path)),
        }
    }
    fold(
        CheckId::VmHardwareVersion,
        vms,
        unreadable,
        good,
        bad,
        unknown,
        "power the VM off, then in vCenter: Compatibility > Upgrade VM Compatibility to hardware 13 or later (ESXi 6.5: 13, 6.7: 14)",
    )
}

fn memory_reserved(vms: &[PvrdmaVm], unreadable: &[String]) -> Check {
    let (mut good, mut bad, mut unknown) = (Vec::new(), Vec::new(), Vec::new());
    for vm in vms {
        let c = vm.config;
        match (c.mem_pin, c.mem_min_mb, c.memsize_mb) {
            (Some(true), _, _) => good.push(format!("{}: all guest memory locked (sched.mem.pin)", vm.name)),
            (_, Some(min), Some(size)) if min >= size => {
                good.push(format!("{}: {min} MB of {size} MB reserved", vm.name))
            }
            (_, min, Some(size)) => bad.push(format!(
                "{}: {} of {size} MB reserved and memory not locked; PVRDMA needs all guest memory reserved",
                vm.name,
                min.map_or_else(|| "0 MB (no sched.mem.min)".to_string(), |m| format!("{m} MB"))
            )),
            (_, _, None) => unknown.push(format!("{}: no memSize in {}", vm.name, vm.path)),
        }
    }
    fold(
        CheckId::VmMemoryReserved,
        vms,
        unreadable,
        good,
        bad,
        unknown,
        "in vCenter: Edit Settings > Memory > Reserve all guest memory (All locked) (sets sched.mem.pin = \"TRUE\" and sched.mem.min = memSize)",
    )
}

/// PVRDMA adapters a VM may have on this release: ten from 7.0.2, one before (VMware
/// vSphere documentation, "Remote Direct Memory Access for Virtual Machines": "up to ten
/// PVRDMA network adapters to a virtual machine when using vSphere 7.0.2 and later"; its
/// earlier releases' "PVRDMA Support" pages allow one PVRDMA device per VM).
fn adapter_limit(f: &HostFacts) -> Option<(usize, String)> {
    let v = f.version.as_ref().ok()?;
    let n = v.numbers()?;
    let limit = if n >= (7, 0, 2) { 10 } else { 1 };
    Some((limit, format!("{} {}", v.product, v.version)))
}

fn adapter_count(f: &HostFacts, vms: &[PvrdmaVm], unreadable: &[String]) -> Check {
    let (mut good, mut bad, mut unknown) = (Vec::new(), Vec::new(), Vec::new());
    let limit = adapter_limit(f);
    for vm in vms {
        let n = vm.adapters.len();
        match &limit {
            Some((max, release)) if n > *max => bad.push(format!(
                "{} has {n} PVRDMA adapters; {release} allows {max} per VM{}",
                vm.name,
                if *max == 1 {
                    " (up to ten from vSphere 7.0.2)"
                } else {
                    ""
                }
            )),
            Some(_) => good.push(format!("{}: {n}", vm.name)),
            None if n == 1 => good.push(format!("{}: 1", vm.name)),
            None => unknown.push(format!(
                "{} has {n} PVRDMA adapters and the ESXi release is unknown (one allowed before 7.0.2, ten from it)",
                vm.name
            )),
        }
    }
    let mut c = fold(
        CheckId::VmPvrdmaAdapterCount,
        vms,
        unreadable,
        good,
        bad,
        unknown,
        "remove the extra PVRDMA adapters (VM powered off), or upgrade to vSphere 7.0.2 or later (up to ten per VM)",
    );
    if c.status == Status::Pass && !vms.is_empty() {
        let within = limit
            .as_ref()
            .map_or_else(String::new, |(max, release)| format!(" (at most {max} on {release})"));
        c.summary = format!("PVRDMA adapters per VM{within}: {}", c.summary);
    }
    // The release is evidence only when it was read: one adapter per VM needs no release.
    if limit.is_some() {
        c.evidence.push(ev(cat::SYSTEM_VERSION, "Version"));
    }
    c
}

/// What vsish says about native endpoints for the VM whose config file is `path`, per
/// PVRDMA adapter index.
fn vsish_native(f: &HostFacts, path: &str) -> Option<Vec<(u32, Option<bool>)>> {
    let process = f.processes().iter().find(|v| v.config_file.as_deref() == Some(path))?;
    let sections = f.pvrdma_properties.as_ref().ok()?;
    Some(
        sections
            .iter()
            .filter(|s| s.device.world_id == process.world_id)
            .map(|s| {
                (
                    s.device.index,
                    s.properties.as_ref().ok().and_then(|p| p.native_endpoints_supported),
                )
            })
            .collect(),
    )
}

fn native_endpoints(f: &HostFacts, vms: &[PvrdmaVm], unreadable: &[String]) -> Check {
    const ID: CheckId = CheckId::VmNativeEndpoints;
    let release = f
        .version
        .as_ref()
        .ok()
        .and_then(|v| Some((v.numbers()?, format!("{} {}", v.product, v.version))));
    let (mut good, mut bad, mut unknown, mut warn) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // Which other outputs the verdict read, for its evidence.
    let (mut read_release, mut read_vsish) = (false, false);
    for vm in vms {
        let requested: Vec<(usize, &&p::VmxAdapter)> = vm
            .adapters
            .iter()
            .enumerate()
            .filter(|(_, a)| a.native_endpoint_support == Some(true))
            .collect();
        if requested.is_empty() {
            continue;
        }
        let names: Vec<String> = requested
            .iter()
            .map(|(_, a)| format!("vrdma{}", a.ethernet_index))
            .collect();
        let mut missing = Vec::new();
        match vm.config.hardware_version {
            Some(hw) if hw >= 18 => {}
            Some(hw) => missing.push(format!("virtual hardware {hw} (needs 18)")),
            None => unknown.push(format!("{}: no virtualHW.version", vm.name)),
        }
        read_release = true;
        match &release {
            Some((n, _)) if *n >= (7, 0, 1) => {}
            Some((_, text)) => missing.push(format!("{text} (needs 7.0 Update 1)")),
            None => unknown.push(format!("{}: ESXi release unknown", vm.name)),
        }
        if !missing.is_empty() {
            bad.push(format!(
                "{} requests native endpoints ({}) but has {}",
                vm.name,
                names.join(", "),
                missing.join(" and ")
            ));
            continue;
        }
        // The adapter index vsish uses counts the VM's PVRDMA adapters in order.
        if let Some(live) = vsish_native(f, vm.path) {
            read_vsish = true;
            for (ordinal, a) in &requested {
                let idx = u32::try_from(*ordinal).unwrap_or(u32::MAX);
                match live.iter().find(|(i, _)| *i == idx).map(|(_, v)| *v) {
                    Some(Some(false)) => warn.push(format!(
                        "{} requests native endpoints for vrdma{} but vsish reports `Native endpoints supported:0` for adapter {idx} (PVRDMA namespaces not enabled on the HCA, or the VM not power-cycled)",
                        vm.name, a.ethernet_index
                    )),
                    Some(Some(true)) => good.push(format!("{}: vrdma{} native endpoints in effect", vm.name, a.ethernet_index)),
                    _ => good.push(format!("{}: vrdma{} native endpoints requested", vm.name, a.ethernet_index)),
                }
            }
        } else {
            good.push(format!(
                "{}: native endpoints requested ({})",
                vm.name,
                names.join(", ")
            ));
        }
    }
    let remedy = "native endpoints need virtual hardware 18+ and ESXi 7.0 Update 1+: upgrade the VM compatibility / host, or remove vrdmaN.nativeEndpointSupport";
    let mut c = fold(ID, vms, unreadable, good.clone(), bad, unknown, remedy);
    if read_release {
        c.evidence.push(ev(cat::SYSTEM_VERSION, "Version"));
    }
    if read_vsish {
        c.evidence
            .push(ev(cat::PVRDMA_PROPERTIES, "Native endpoints supported"));
    }
    if c.status == Status::Pass {
        if !warn.is_empty() {
            c.status = Status::Warn;
            c.summary = warn.join("; ");
            c.remedy = Some(super::super::Remedy {
                command: None,
                advice: Some(
                    "enable PVRDMA namespaces on the HCA (vendor documentation), then power-cycle the VM".to_string(),
                ),
                ..super::super::Remedy::default()
            });
        } else if good.is_empty() && !vms.is_empty() {
            c.summary = "no PVRDMA adapter requests native endpoints (optional)".to_string();
        }
    }
    c
}

#[cfg(test)]
mod tests;
