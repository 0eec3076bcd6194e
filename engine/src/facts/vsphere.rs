//! Facts from the vSphere API: where a host was read through vCenter instead of over SSH
//! (or SSH refused it), its `HostConfigInfo` fills the facts whose `esxcli` command has the
//! same meaning, and its VMs' `VirtualMachineConfigInfo` stands in for their `.vmx`. The
//! checks read the facts and never ask where they came from; only the evidence says so.
//! The facts the API does not carry (vsish's verdict, flow control, the VMs' ports) stay
//! absent, with the reason that only SSH shows them.
use super::{fact, Fact, FactError, HostFacts, VmxFact};
use crate::capture::HostCapture;
use crate::catalogue as cat;
use pvrdma_parsers::{self as p, by_id, HostConfigRows};

/// Why a fact the API does not carry is absent.
pub(super) const SSH_ONLY: &str = "the vSphere API does not carry it, only SSH shows it";

/// Fills from the API every fact SSH did not give.
pub(super) fn fill(facts: &mut HostFacts, capture: &HostCapture) {
    if !capture.has_api_config() {
        return;
    }
    let host = fact(
        capture,
        by_id::Parser {
            id: cat::VSPHERE_HOST_CONFIG,
            parse: p::parse_vsphere_host_config,
        },
    );
    take(&mut facts.version, &host, "config.product", |h| h.version.clone());
    // `HostNetworkInfo.rdmaDevice` is from vSphere API 7.0: an older host lists none
    // through the API whatever it has, so an empty list would say nothing.
    match host.as_ref().ok().and_then(rdma_not_listed) {
        Some(why) => {
            absent(&mut facts.rdma_devices, &why);
            absent(&mut facts.rdma_protocols, &why);
        }
        None => {
            take(&mut facts.rdma_devices, &host, "config.network", |h| {
                Some(h.rdma.clone())
            });
            take(&mut facts.rdma_protocols, &host, "config.network", |h| {
                Some(h.protocols.clone())
            });
        }
    }
    take(&mut facts.vmknics, &host, "config.network", |h| Some(h.vmknics.clone()));
    take(&mut facts.ipv4, &host, "config.network", |h| Some(h.ipv4.clone()));
    take(&mut facts.dvs, &host, "config.network", |h| Some(h.dvs.clone()));
    take(&mut facts.standard_switches, &host, "config.network", |h| {
        Some(h.standard_switches.clone())
    });
    // A vDS sets its uplinks' MTU; the API shows no MTU of the NIC itself.
    take(&mut facts.nics, &host, "config.network", |h| Some(uplinks_of(h)));
    take(&mut facts.firewall, &host, "config.firewall", |h| h.firewall.clone());
    take(&mut facts.rulesets, &host, "config.firewall", |h| {
        Some(h.rulesets.clone())
    });
    take(&mut facts.pvrdma_vmknic, &host, "config.option", |h| {
        h.options.iter().find(|o| o.path == "/Net/PVRDMAVmknic").cloned()
    });
    if !matches!(facts.pvrdma_properties, Err(FactError::NotCollected { .. })) {
        return;
    }
    facts.configuration_only = true;
    let vms = fact(
        capture,
        by_id::Parser {
            id: cat::VSPHERE_VM_CONFIG,
            parse: p::parse_vsphere_vm_config,
        },
    );
    match vms {
        Ok(vms) => {
            // Like the live `.vmx` inventory, only running VMs: a powered-off VM uses no
            // transport, and esxcli does not list it either.
            for mut vm in vms
                .into_iter()
                .filter(|v| v.power_state.as_deref() == Some("poweredOn"))
            {
                let name = vm.config.display_name.clone().unwrap_or_else(|| vm.id.clone());
                vm.config.display_name = Some(name.clone());
                facts.vmx.push(VmxFact {
                    path: name,
                    config: Ok(vm.config.clone()),
                });
                facts.api_vms.push(vm);
            }
        }
        Err(e) => facts.vmx_inventory_problem = Some(e.to_string()),
    }
}

/// Why the API does not list this host's RDMA devices, if it does not: a host older
/// than ESXi 7.0.
fn rdma_not_listed(h: &HostConfigRows) -> Option<String> {
    let v = h.version.as_ref()?;
    (v.numbers()? < (7, 0, 0)).then(|| {
        format!(
            "the vSphere API lists RDMA devices (config.network.rdmaDevice) for ESXi 7.0 and later; on ESXi {} only SSH shows them",
            v.version
        )
    })
}

/// Marks a fact SSH did not give as absent for `why`.
fn absent<T>(slot: &mut Fact<T>, why: &str) {
    if let Err(FactError::NotCollected { reason, .. }) = slot {
        *reason = why.to_string();
    }
}

/// Sets `slot` from the API answer when SSH did not give it: the rows `get` reads, or
/// absent with why when the host's answer lacks `property` (a host that never connected
/// reports no configuration).
fn take<T>(
    slot: &mut Fact<T>,
    host: &Fact<HostConfigRows>,
    property: &str,
    get: impl FnOnce(&HostConfigRows) -> Option<T>,
) {
    if !matches!(slot, Err(FactError::NotCollected { .. })) {
        return;
    }
    let command = format!("{} {property}", cat::display_label(cat::VSPHERE_HOST_CONFIG));
    *slot = match host {
        Err(e) => Err(e.clone()),
        Ok(h) if !h.reported.iter().any(|r| r == property) => Err(FactError::NotCollected {
            command,
            reason: "vCenter did not report it (a host that is not connected has no configuration to show)".into(),
        }),
        Ok(h) => get(h).ok_or_else(|| FactError::NotCollected {
            command,
            reason: format!(
                "{property} as vCenter reported it has no such entry (the host's ESXi release may not have it)"
            ),
        }),
    };
}

/// The physical uplinks of the host's vDSes, each with its switch's MTU.
fn uplinks_of(h: &HostConfigRows) -> Vec<p::Nic> {
    h.dvs
        .iter()
        .flat_map(|s| {
            s.uplinks.iter().map(|u| p::Nic {
                name: u.clone(),
                pci_device: String::new(),
                driver: String::new(),
                admin_status: None,
                link_status: None,
                speed: None,
                duplex: None,
                mac_address: None,
                mtu: s.mtu,
                description: String::new(),
            })
        })
        .collect()
}
