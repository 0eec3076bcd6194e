//! VM-first runs: an admin who starts from a VM's name ("the MPI job on hpc-node07 is
//! slow") wants that VM's adapters and the transports between them, not every VM of the
//! hosts they happen to run on. The facts are narrowed to the chosen VMs before any check
//! reads them, so the VM checks, the adapter verdicts and the pairs across hosts all see
//! the same VMs; the host's own configuration checks are unchanged.
use crate::capture::VmLeftOut;
use crate::facts::HostFacts;
use serde::{Deserialize, Serialize};
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

/// The VMs a VM-first run reports on: only their adapters, their VM checks and the
/// transports between them are judged; the hosts' own checks stay whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VmScope {
    /// The VMs chosen, by name.
    pub vms: Vec<String>,
    /// Chosen VMs that no diagnosed host listed as running (`esxcli vm process list`),
    /// every host's list having been read: stopped, or moved to a host outside the run
    /// since the inventory was read.
    pub not_running: Vec<String>,
    /// Chosen VMs not seen running while some host's VM list could not be read: they may
    /// run there.
    pub not_seen: Vec<String>,
    /// The hosts whose VM list could not be read (unreachable, the list failed).
    pub unread_hosts: Vec<String>,
    /// Chosen VMs running, as the inventory placed them, on a host the run left out (in
    /// maintenance mode, disconnected, not responding): not diagnosed.
    #[serde(default)]
    pub on_hosts_left_out: Vec<VmLeftOut>,
    /// Every chosen VM the run did not diagnose (`not_running`, `not_seen` and
    /// `on_hosts_left_out` together), by name: any makes the run unknown (exit code 3).
    #[serde(default)]
    pub not_diagnosed: Vec<String>,
}

impl VmScope {
    /// Why the chosen VM `vm` was not diagnosed, in words; `None` when it was.
    pub fn why_not_diagnosed(&self, vm: &str) -> Option<String> {
        if let Some(v) = self.on_hosts_left_out.iter().find(|v| v.vm == vm) {
            return Some(format!("it runs on {}, which this run left out ({})", v.host, v.reason));
        }
        if self.not_running.iter().any(|n| n == vm) {
            return Some("no host diagnosed runs it (stopped, or moved since the inventory was read)".to_string());
        }
        self.not_seen.iter().any(|n| n == vm).then(|| {
            format!(
                "not seen running; the VM list of {} could not be read",
                pvrdma_nodeset::fold(&self.unread_hosts)
            )
        })
    }
}

/// What became of a VM-first run's chosen VMs (`names`): `found` running on a host
/// diagnosed; `left_out` on a host the run did not diagnose; the others on no host whose
/// VM list was read, or possibly on one of the `unread` hosts.
pub(super) fn vm_scope(
    names: &BTreeSet<String>,
    left_out: &[VmLeftOut],
    found: &BTreeSet<String>,
    unread: Vec<String>,
) -> VmScope {
    let elsewhere: BTreeSet<&str> = left_out.iter().map(|v| v.vm.as_str()).collect();
    let missing: Vec<String> = names
        .difference(found)
        .filter(|n| !elsewhere.contains(n.as_str()))
        .cloned()
        .collect();
    // A chosen VM not seen may well run on a host whose VM list was not read.
    let (not_running, not_seen) = if unread.is_empty() {
        (missing, Vec::new())
    } else {
        (Vec::new(), missing)
    };
    let not_diagnosed: BTreeSet<String> = not_running
        .iter()
        .chain(&not_seen)
        .cloned()
        .chain(left_out.iter().map(|v| v.vm.clone()))
        .collect();
    VmScope {
        vms: names.iter().cloned().collect(),
        not_running,
        not_seen,
        unread_hosts: unread,
        on_hosts_left_out: left_out.to_vec(),
        not_diagnosed: not_diagnosed.into_iter().collect(),
    }
}
