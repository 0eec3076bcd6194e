//! VM-first runs: an admin who starts from a VM's name ("the MPI job on hpc-node07 is
//! slow") wants that VM's adapters and the transports between them, not every VM of the
//! hosts they happen to run on. The facts are narrowed to the chosen VMs before any check
//! reads them, so the VM checks, the adapter verdicts and the pairs across hosts all see
//! the same VMs; the host's own configuration checks are unchanged.
use crate::facts::HostFacts;
use std::collections::{BTreeSet, HashSet};

/// Keeps only the running VMs named in `names` (by `Display Name`, the name vCenter shows)
/// and what belongs to them: their PVRDMA devices, properties, ports and `.vmx` lines.
/// Returns the names of `names` found running on this host, `None` when its VM list could
/// not be read: nobody can tell then whether a chosen VM runs there, and its adapters are
/// `unknown` through that error, as without a scope.
pub(super) fn keep_vms(facts: &mut HostFacts, names: &BTreeSet<String>) -> Option<Vec<String>> {
    if facts.configuration_only {
        // The vSphere API named the running VMs; their configuration is keyed by name.
        facts
            .api_vms
            .retain(|vm| vm.config.display_name.as_ref().is_some_and(|n| names.contains(n)));
        facts.vmx.retain(|v| names.contains(&v.path));
        return facts.vmx_inventory_problem.is_none().then(|| {
            facts
                .api_vms
                .iter()
                .filter_map(|vm| vm.config.display_name.clone())
                .collect()
        });
    }
    let Ok(list) = &mut facts.vms else {
        return None;
    };
    let vms = &mut list.vms;
    vms.retain(|vm| names.contains(&vm.display_name));
    let found: Vec<String> = vms.iter().map(|vm| vm.display_name.clone()).collect();
    let worlds: HashSet<u64> = vms.iter().map(|vm| vm.world_id).collect();
    let configs: HashSet<&str> = vms.iter().filter_map(|vm| vm.config_file.as_deref()).collect();
    if let Ok(devices) = &mut facts.pvrdma_devices {
        devices.retain(|d| worlds.contains(&d.world_id));
    }
    if let Ok(sections) = &mut facts.pvrdma_properties {
        sections.retain(|s| worlds.contains(&s.device.world_id));
    }
    if let Ok(ports) = &mut facts.vm_ports {
        ports.retain(|p| worlds.contains(&p.world_id));
    }
    if let Ok(sections) = &mut facts.vmx_lines {
        sections.retain(|s| configs.contains(s.config_file.as_str()));
    }
    facts.vmx.retain(|v| configs.contains(v.path.as_str()));
    Some(found)
}
