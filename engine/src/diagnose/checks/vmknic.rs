//! `pvrdma-vmknic-tagged`, `pvrdma-vmknic-valid`: the vmknic tagged for PVRDMA.
use super::super::*;

pub(in crate::diagnose) fn check_vmknic_tagged(ctx: &Context) -> Check {
    const ID: CheckId = CheckId::PvrdmaVmknicTagged;
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
            ctx.tag_vmknic(),
        ),
    }
}

pub(in crate::diagnose) fn check_vmknic_valid(ctx: &Context) -> Check {
    const ID: CheckId = CheckId::PvrdmaVmknicValid;
    let Some(vmk) = &ctx.tagged_vmknic else {
        return not_checked(ID, "needs pvrdma-vmknic-tagged to pass");
    };
    let interfaces = match &ctx.facts.vmknics {
        Ok(i) => i,
        Err(e) => return unknown_from(ID, cat::IP_INTERFACE_LIST, e),
    };
    let interface = match existing_vmknic(ctx, vmk, interfaces) {
        Ok(interface) => interface,
        Err(failed) => return *failed,
    };
    if let Err(failed) = enabled_vmknic(vmk, interface) {
        return *failed;
    }
    let address = match vmknic_ipv4(ctx.facts, vmk, interface) {
        Ok(address) => address,
        Err(failed) => return *failed,
    };
    let evidence = vec![
        ev(cat::IP_INTERFACE_LIST, format!("Enabled of {vmk}")),
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

/// The tagged vmknic's row, or the failure that it does not exist.
fn existing_vmknic<'a>(
    ctx: &Context,
    vmk: &str,
    interfaces: &'a [p::VmkInterface],
) -> Result<&'a p::VmkInterface, Box<Check>> {
    const ID: CheckId = CheckId::PvrdmaVmknicValid;
    if let Some(interface) = interfaces.iter().find(|i| i.name == vmk) {
        return Ok(interface);
    }
    let existing: Vec<&str> = interfaces.iter().map(|i| i.name.as_str()).collect();
    Err(Box::new(with_remedy(
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
        ctx.tag_vmknic(),
    )))
}

/// Nothing, or the failure that the vmknic is disabled (or the unknown that its state is
/// not printed).
fn enabled_vmknic(vmk: &str, interface: &p::VmkInterface) -> Result<(), Box<Check>> {
    const ID: CheckId = CheckId::PvrdmaVmknicValid;
    let enabled_ev = || ev(cat::IP_INTERFACE_LIST, format!("Enabled of {vmk}"));
    match interface.enabled {
        Some(true) => Ok(()),
        Some(false) => Err(Box::new(with_remedy(
            check(
                ID,
                Status::Fail,
                format!("{vmk} exists but is disabled"),
                vec![enabled_ev()],
            ),
            Remedy::of_changes(
                vec![ConfigChange::esxcli(
                    "network ip interface set",
                    vec![
                        EsxcliOption::new("enabled", "-e", "true"),
                        EsxcliOption::new("interfacename", "-i", vmk),
                    ],
                    Some("false".to_string()),
                )],
                None,
            ),
        ))),
        None => Err(Box::new(check(
            ID,
            Status::Unknown,
            format!("{vmk} exists but its Enabled state is not printed"),
            vec![enabled_ev()],
        ))),
    }
}

/// The vmknic's IPv4 address, or the failure that it has none (or the unknown that it
/// could not be read).
fn vmknic_ipv4(f: &HostFacts, vmk: &str, interface: &p::VmkInterface) -> Result<String, Box<Check>> {
    const ID: CheckId = CheckId::PvrdmaVmknicValid;
    let ipv4 = match &f.ipv4 {
        Ok(rows) => rows.iter().find(|r| r.name == vmk),
        Err(e) => {
            return Err(Box::new(check(
                ID,
                Status::Unknown,
                format!("{vmk} exists and is enabled; its IPv4 address is unknown: {e}"),
                vec![ev(cat::IPV4_GET, "output")],
            )))
        }
    };
    let netstack = interface.netstack.as_deref().filter(|n| *n != "defaultTcpipStack");
    let address = match (ipv4, netstack) {
        (Some(row), _) => row.address.clone(),
        // `ipv4 get` without --netstack may list only the default netstack's interfaces.
        (None, Some(netstack)) => {
            return Err(Box::new(check(
                ID,
                Status::Unknown,
                format!(
                    "{vmk} is on netstack {netstack}, which `esxcli network ip interface ipv4 get` did not list; check `esxcli network ip interface ipv4 get -N {netstack}`"
                ),
                vec![ev(cat::IP_INTERFACE_LIST, format!("Netstack Instance of {vmk}")), ev(cat::IPV4_GET, "Name")],
            )))
        }
        (None, None) => None,
    };
    address.ok_or_else(|| {
        Box::new(with_remedy(
            check(
                ID,
                Status::Fail,
                format!("{vmk} has no IPv4 address; PVRDMA endpoints cannot reach each other"),
                vec![ev(cat::IPV4_GET, format!("IPv4 Address of {vmk}"))],
            ),
            Remedy {
                advice: Some(format!(
                    "give {vmk} an address in the PVRDMA subnet: esxcli network ip interface ipv4 set -i {} -t static -I ADDRESS -N NETMASK (in the vSphere Client: the host > Configure > Networking > VMkernel adapters > {vmk} > Edit > IPv4 settings)",
                    shell_quote(vmk)
                )),
                decision: Some(format!("the address and netmask {vmk} takes in the PVRDMA subnet")),
                ..Remedy::default()
            },
        ))
    })
}

/// Where the tagged vmknic sits, judged against every vDS whose single uplink is an HCA.
/// PVRDMA uses the vmknic "to send and receive control data" (and for the TCP channel),
/// not for the RDMA data path. VMware's paper "Paravirtual RDMA for High Performance
/// Computing" and the lab write-up "Setting up a 100GbE PVRDMA Network on vCenter 7" tag
/// the management vmknic `vmk0` on a standard vSwitch; the Mellanox (NVIDIA) guide
/// "How-To Configure PVRDMA in VMware vSphere 6.5/6.7" tags a vmknic on the vDS. Both
/// set-ups are published as working, so the location is reported, never failed.
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
        "it sits on {on}{hca_text}: PVRDMA uses it for control traffic only, and RDMA data goes through the HCA (VMware's paper \"Paravirtual RDMA for High Performance Computing\" tags the management vmknic vmk0 on a standard vSwitch)"
    )
}
