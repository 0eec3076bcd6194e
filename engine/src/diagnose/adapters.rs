//! Adapter verdicts: the VM port, the reasons behind a TCP fallback, and the .vmx-based listing.
use super::*;

/// Lists the host's PVRDMA adapters grouped by VM, each with its verdict and reasons.
pub(super) fn adapters(f: &HostFacts, ctx: &Context, checks: &[Check]) -> (Vec<Vm>, Option<String>) {
    if f.configuration_only {
        let problem = f
            .vmx_inventory_problem
            .as_ref()
            .map(|why| format!("the VMs' configuration could not be read: {why}"));
        return (adapters_from_api(f, checks), problem);
    }
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
    let processes: &[p::VmProcess] = f.processes();
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
pub(super) fn add_vmx_adapters(
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
                predicted: None,
            });
            added = true;
        }
        vm.adapters.sort_by_key(|a| a.index);
    }
    added
}

/// One adapter's verdict from vsish's `Physical HCA available`, with what it says about
/// itself (MAC, RoCE version, MTU, port) and, when it falls back to TCP, why.
pub(super) fn adapter_verdict(
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
        predicted: None,
    };
    let properties = match vsish_properties(f, id, section) {
        Ok(properties) => properties,
        Err(why) => {
            adapter.reasons.push(why);
            return adapter;
        }
    };
    adapter.mac = properties.mac_address.clone();
    adapter.roce_version = properties.roce_version;
    adapter.active_mtu = properties.active_mtu;
    let port = adapter.mac.as_deref().and_then(|mac| find_port(f, id.world_id, mac));
    adapter.port = port.map(|p| port_view(f, p));
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
    if let Some(reason) = adapter.roce_version.and_then(|v| unsupported_roce(f, ctx, v)) {
        adapter.reasons.push(reason);
    }
    if adapter.verdict == Verdict::TcpFallback {
        explain_fallback(f, ctx, id, port, failing, unresolved, &mut adapter);
    }
    adapter
}

/// The adapter's vsish properties, or why there are none to judge from.
fn vsish_properties<'a>(
    f: &'a HostFacts,
    id: p::PvrdmaDeviceId,
    section: Option<&'a p::PvrdmaPropertiesSection>,
) -> Result<&'a p::PvrdmaProperties, String> {
    match (section, &f.pvrdma_properties) {
        (Some(s), _) => match &s.properties {
            Ok(props) => Ok(props),
            Err(text) if s.cut_off => Err(text.clone()),
            Err(text) => Err(format!("vsish could not read its properties: {text}")),
        },
        (None, Err(e)) => Err(e.to_string()),
        (None, Ok(_)) if f.pvrdma_properties_cut_short.is_some() => {
            let why = f.pvrdma_properties_cut_short.as_deref().unwrap_or_default();
            Err(format!(
                "the batched vsish query stopped before reaching this adapter: {why}"
            ))
        }
        (None, Ok(_)) => Err(format!(
            "no properties were printed for {}_{} (the VM may have stopped during collection)",
            id.world_id, id.index
        )),
    }
}

/// Where the adapter's VM port sits: switch (and its vDS ID), port group, uplink.
fn port_view(f: &HostFacts, port: &p::VmPort) -> PortView {
    PortView {
        vds_id: port
            .vswitch()
            .and_then(|name| f.dvs.as_ref().ok()?.iter().find(|s| s.name == name)?.vds_id.clone()),
        vswitch: port.vswitch().map(str::to_string),
        portgroup: port.portgroup().map(str::to_string),
        uplink: port.team_uplink().map(str::to_string),
    }
}

/// The reason an adapter's RoCE version is one the host's RDMA device does not support.
fn unsupported_roce(f: &HostFacts, ctx: &Context, version: u32) -> Option<String> {
    let device = ctx.device?;
    let row = f
        .rdma_protocols
        .as_ref()
        .ok()
        .and_then(|ps| ps.iter().find(|p| p.device == device.name))?;
    (supports_roce(row, version) == Some(false)).then(|| {
        format!(
            "the adapter uses RoCE v{version}, which {} does not support",
            device.name
        )
    })
}

/// Why an adapter falls back to TCP: the failing host checks, where its port sits, and
/// when neither explains it, the checks that could not be judged or an honest "unknown".
fn explain_fallback(
    f: &HostFacts,
    ctx: &Context,
    id: p::PvrdmaDeviceId,
    port: Option<&p::VmPort>,
    failing: &[&Check],
    unresolved: &[&Check],
    adapter: &mut Adapter,
) {
    for c in failing {
        adapter
            .reasons
            .push(format!("host check {} fails: {}", c.id, c.summary));
    }
    // Without an HCA on the host, where the adapter's port sits explains nothing more.
    if ctx.device.is_some() {
        adapter
            .reasons
            .extend(port_reasons(f, ctx, id, adapter.mac.as_deref(), port));
    }
    if adapter.reasons.is_empty() && !unresolved.is_empty() {
        let ids: Vec<&str> = unresolved.iter().map(|c| c.id.id()).collect();
        adapter.reasons.push(format!(
            "no failing host check explains it, but {} could not be evaluated (missing data); the cause is likely among them",
            ids.join(", ")
        ));
    } else if adapter.reasons.is_empty() {
        // Nothing the doctor reads explains it: say so rather than guess at the card.
        adapter.reasons.push(
            "cause unknown: vsish reads `Physical HCA available:0`, yet every host check passes and the adapter's port is on the HCA's vDS; an adapter that started while the host could not give it the HCA keeps TCP until its VM is power-cycled"
                .to_string(),
        );
    }
}

pub(super) fn find_port<'a>(f: &'a HostFacts, world_id: u64, mac: &str) -> Option<&'a p::VmPort> {
    let sections = f.vm_ports.as_ref().ok()?;
    let section = sections.iter().find(|s| s.world_id == world_id)?;
    section
        .ports
        .iter()
        .find(|p| p.mac_address().is_some_and(|m| m.eq_ignore_ascii_case(mac)))
}

/// What the adapter's own VM port says about why it has no HCA, judged against the vDS
/// that port is on (a host may carry HCAs on several switches).
pub(super) fn port_reasons(
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
    let vswitch = port.vswitch().unwrap_or("?");
    let portgroup = port.portgroup().unwrap_or("?");
    let uplink = port.team_uplink().unwrap_or("no uplink");
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
    if !device.state.is_active() {
        reasons.push(format!(
            "its port is on vDS {vswitch}, whose HCA {} is {}",
            device.name,
            state_name(&device.state)
        ));
    }
    if let (Some(team), Some(hca)) = (port.team_uplink(), device.paired_uplink.as_deref()) {
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
pub(super) fn adapters_from_vmx(f: &HostFacts) -> Vec<Vm> {
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
                    predicted: None,
                })
                .collect(),
        });
    }
    vms.sort_by(|a, b| a.name.cmp(&b.name));
    vms
}

/// The host checks whose failure leaves no usable HCA on the host, so that every adapter's
/// traffic to another host certainly goes over TCP (the transports table of the vSphere
/// documentation's PVRDMA pages: an HCA that exists, is active and is an uplink of the vDS).
const NO_USABLE_HCA: [CheckId; 3] = [
    CheckId::RdmaDevicePresent,
    CheckId::RdmaDeviceActive,
    CheckId::RdmaUplinkOnDvs,
];

/// Why a configuration-only adapter has no observed verdict.
pub(super) const TRANSPORT_NEEDS_SSH: &str =
    "the transport is observed only over SSH (vsish `Physical HCA available` on the host), which this run did not use";

/// A configuration-only host's PVRDMA adapters (from its running VMs' configuration as
/// the vSphere API gave it): `tcp-fallback` where a failing check leaves the host no usable
/// HCA, else `unknown` with what the configuration predicts.
pub(super) fn adapters_from_api(f: &HostFacts, checks: &[Check]) -> Vec<Vm> {
    let failing: Vec<&Check> = checks.iter().filter(|c| c.status == Status::Fail).collect();
    let certain: Vec<&&Check> = failing.iter().filter(|c| NO_USABLE_HCA.contains(&c.id)).collect();
    let unresolved: Vec<&str> = checks
        .iter()
        .filter(|c| c.status == Status::Unknown && !c.id.needs_ssh())
        .map(|c| c.id.id())
        .collect();
    let fails = |list: &mut dyn Iterator<Item = &Check>| -> Vec<String> {
        list.map(|c| format!("host check {} fails: {}", c.id, c.summary))
            .collect()
    };
    let (verdict, predicted, reasons) = if !certain.is_empty() {
        let mut reasons = fails(&mut certain.iter().map(|c| **c));
        reasons.push("so the host has no usable HCA (judged from its configuration through the vSphere API)".into());
        (Verdict::TcpFallback, None, reasons)
    } else if !failing.is_empty() {
        let mut reasons = vec![TRANSPORT_NEEDS_SSH.to_string()];
        reasons.push("the configuration predicts a TCP fallback:".into());
        reasons.extend(fails(&mut failing.iter().copied()));
        (Verdict::Unknown, Some(Verdict::TcpFallback), reasons)
    } else if !unresolved.is_empty() {
        let why = format!(
            "the configuration cannot predict it: {} could not be evaluated",
            unresolved.join(", ")
        );
        (Verdict::Unknown, None, vec![TRANSPORT_NEEDS_SSH.to_string(), why])
    } else {
        let why = "the configuration predicts the HCA: every check the vSphere API can judge passes";
        (
            Verdict::Unknown,
            Some(Verdict::Hca),
            vec![TRANSPORT_NEEDS_SSH.to_string(), why.to_string()],
        )
    };
    let mut vms: Vec<Vm> = f
        .api_vms
        .iter()
        .filter_map(|vm| {
            let config = &vm.config;
            // The API lists a VM's PVRDMA adapters in device order, each with its protocol
            // and port; only present ones count, as over SSH.
            let mut adapters: Vec<(&p::vmx::VmxAdapter, Option<&String>, Option<&String>)> = config
                .pvrdma_adapters
                .iter()
                .enumerate()
                .filter(|(_, a)| a.present != Some(false))
                .map(|(i, a)| {
                    let protocol = vm.device_protocols.get(i).and_then(Option::as_ref);
                    let switch = vm.switch_uuids.get(i).and_then(Option::as_ref);
                    (a, protocol, switch)
                })
                .collect();
            adapters.sort_by_key(|(a, ..)| a.ethernet_index);
            (!adapters.is_empty()).then(|| Vm {
                name: config.display_name.clone().unwrap_or_else(|| vm.id.clone()),
                world_id: None,
                config_file: None,
                adapters: adapters
                    .iter()
                    .enumerate()
                    .map(|(i, (a, protocol, switch))| Adapter {
                        index: u32::try_from(i).unwrap_or(u32::MAX),
                        verdict,
                        reasons: reasons.clone(),
                        mac: a.mac_address.clone(),
                        roce_version: protocol.and_then(|p| configured_roce(p)),
                        active_mtu: None,
                        port: switch.map(|uuid| configured_port(f, uuid)),
                        predicted,
                    })
                    .collect(),
            })
        })
        .collect();
    vms.sort_by(|a, b| a.name.cmp(&b.name));
    vms
}

/// The RoCE version a `deviceProtocol` asks for (`rocev1`, `rocev2`).
pub(super) fn configured_roce(protocol: &str) -> Option<u32> {
    match protocol.to_ascii_lowercase().as_str() {
        "rocev1" => Some(1),
        "rocev2" => Some(2),
        _ => None,
    }
}

/// The vDS port an adapter is configured on, named as the host names the switch (by its
/// uuid when the host is not a member of it).
fn configured_port(f: &HostFacts, switch_uuid: &str) -> PortView {
    let name = f
        .dvs
        .as_ref()
        .ok()
        .and_then(|switches| switches.iter().find(|s| s.vds_id.as_deref() == Some(switch_uuid)))
        .map_or_else(|| switch_uuid.to_string(), |s| s.name.clone());
    PortView {
        vswitch: Some(name),
        vds_id: Some(switch_uuid.to_string()),
        portgroup: None,
        uplink: None,
    }
}
