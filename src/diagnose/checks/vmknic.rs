//! The PVRDMA vmknic: tagged, valid, and (across hosts) on reachable subnets.
use super::super::*;

pub(in crate::diagnose) fn check_vmknic_tagged(ctx: &Context) -> Check {
    const ID: &str = CheckId::PvrdmaVmknicTagged.id();
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

pub(in crate::diagnose) fn check_vmknic_valid(ctx: &Context) -> Check {
    const ID: &str = CheckId::PvrdmaVmknicValid.id();
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
pub(in crate::diagnose) fn vmknic_location(ctx: &Context, interface: &p::VmkInterface) -> String {
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
        "it sits on {on}{hca_text}: PVRDMA uses it for control traffic only (the VMware and Mellanox setup guides tag the management vmknic vmk0 on a standard vSwitch); RDMA data goes through the HCA"
    )
}

/// `vmknic-subnets`: the tagged vmknics of all hosts must reach each other (DOMAIN §2.4).
/// Without sending traffic, the best read-only evidence is their IPv4 subnets: one subnet
/// is the set-up the guides describe; several need IP routing, which RoCE v1 cannot cross.
pub(in crate::diagnose) fn check_vmknic_subnets(hosts: &[HostDiagnosis]) -> Option<Check> {
    const ID: &str = CheckId::VmknicSubnets.id();
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
                            .map(move |a| format!("VM {} adapter {} on {}", vm.name, a.index, h.host))
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
                    format!(
                        "RoCE v1 is not routable, and these adapters use it: {}",
                        roce_v1.join(", ")
                    ),
                )
            };
            Some(with_advice(
                check(ID, status, format!("the PVRDMA vmknics are in {n} IPv4 subnets: {listing}: {tail}"), evidence),
                "put the PVRDMA vmknics in one subnet (on each host: esxcli network ip interface ipv4 set -i VMK -t static -I ADDRESS -N NETMASK), or route between the subnets and use RoCE v2",
            ))
        }
    }
}
