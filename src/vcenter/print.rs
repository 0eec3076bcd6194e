//! What a discovery says: the hosts it skipped and the VMs it found stopped (stderr lines),
//! and `hosts --format json`.
use pvrdma_vsphere::{Endpoint, Selected, SkipReason};
use serde_json::{json, Value};

/// Where a host sits, as the vSphere Client shows it: `DATACENTER/CLUSTER`, or the
/// datacenter alone for a standalone host.
fn place(datacenter: &str, cluster: Option<&str>) -> String {
    match cluster {
        Some(c) => format!("{datacenter}/{c}"),
        None => format!("{datacenter}, standalone"),
    }
}

/// One line per host left out (with the option that takes it) and per chosen VM that is
/// not running (it has no adapter to diagnose).
pub(crate) fn skipped_lines(selected: &Selected) -> Vec<String> {
    let mut lines: Vec<String> = selected
        .skipped
        .iter()
        .map(|h| {
            let option = match h.reason {
                SkipReason::Maintenance => "--include-maintenance",
                SkipReason::Disconnected | SkipReason::NotResponding => "--include-disconnected",
            };
            format!(
                "skipped {} ({}): {} ({option} takes it)",
                h.name,
                place(&h.datacenter, h.cluster.as_deref()),
                h.reason
            )
        })
        .collect();
    lines.extend(selected.vms.iter().filter_map(|vm| {
        let host = vm.host.as_deref()?;
        let skipped = selected.skipped.iter().find(|h| h.name == host)?;
        Some(format!(
            "VM {} runs on {host}, which is skipped ({}): its adapters are not diagnosed",
            vm.name, skipped.reason
        ))
    }));
    lines.extend(selected.vms_not_running.iter().map(|vm| {
        format!(
            "VM {} is {}: it has no adapter to diagnose",
            vm.name,
            match vm.power_state {
                pvrdma_vsphere::PowerState::PoweredOff => "powered off".to_string(),
                pvrdma_vsphere::PowerState::Suspended => "suspended".to_string(),
                ref other => format!("not running ({other:?})"),
            }
        )
    }));
    lines
}

/// `hosts --format json`: the selected hosts, the skipped ones with why, and the VMs.
pub(crate) fn hosts_json(endpoint: &Endpoint, selected: &Selected) -> Value {
    let host = |name: &str,
                datacenter: &str,
                cluster: Option<&str>,
                state: &pvrdma_vsphere::ConnectionState,
                maintenance: bool| {
        json!({
            "name": name,
            "datacenter": datacenter,
            "cluster": cluster,
            "connection_state": state,
            "in_maintenance": maintenance,
        })
    };
    let vm = |v: &pvrdma_vsphere::SelectedVm| json!({"name": v.name, "host": v.host, "power_state": v.power_state});
    json!({
        "schema": "pvrdma-doctor/hosts/v1",
        "vcenter": endpoint.to_string(),
        "nodeset": pvrdma_nodeset::fold(&selected.hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>()),
        "selected": selected.hosts.iter().map(|h| {
            let mut v = host(&h.name, &h.datacenter, h.cluster.as_deref(), &h.connection_state, h.in_maintenance);
            v["cluster_path"] = json!(h.cluster_path);
            v["vms"] = json!(h.vms);
            v
        }).collect::<Vec<_>>(),
        "skipped": selected.skipped.iter().map(|h| {
            let mut v = host(&h.name, &h.datacenter, h.cluster.as_deref(), &h.connection_state, h.in_maintenance);
            v["cluster_path"] = json!(h.cluster_path);
            v["reason"] = json!(h.reason.to_string());
            v
        }).collect::<Vec<_>>(),
        "vms": selected.vms.iter().map(vm).collect::<Vec<_>>(),
        "vms_not_running": selected.vms_not_running.iter().map(vm).collect::<Vec<_>>(),
    })
}
