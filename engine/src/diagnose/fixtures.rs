//! Builders the diagnosis tests (and the report's) share: a plain adapter and a host
//! holding VMs of adapters, every other field empty.
use super::*;

/// Adapter `index` with `verdict`, nothing else known.
pub fn adapter(index: u32, verdict: Verdict) -> Adapter {
    Adapter {
        index,
        verdict,
        reasons: Vec::new(),
        mac: None,
        roce_version: None,
        active_mtu: None,
        port: None,
        predicted: None,
    }
}

/// Host `name` with `status` and one VM (World ID 1) per `(name, adapters)`.
pub fn host(name: &str, status: HostStatus, vms: Vec<(&str, Vec<Adapter>)>) -> HostDiagnosis {
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
        uplinks: Vec::new(),
        fleet_failures: Vec::new(),
        record_errors: Vec::new(),
        vms_error: None,
        incomplete_outputs: Vec::new(),
        unparsed_outputs: Vec::new(),
        send_evidence: None,
        configuration_only: false,
        topology: HostTopology::default(),
    }
}
