//! What a discovery says: the hosts it skipped and the VMs it found stopped (stderr lines),
//! and `hosts --format json`.
use pvrdma_vsphere::{Endpoint, Inventory, Selected, Selection, SkipReason};
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

/// A chosen VM that `--cluster` left out: with both `--vm` and `--cluster` only the VMs
/// running in those clusters count, and one elsewhere must not vanish in silence (a run
/// that then selects nothing would not say why).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct OutsideVm {
    pub(crate) name: String,
    /// The host it runs on, and where that host sits; `None`: no host vCenter lists.
    pub(crate) host: Option<String>,
    pub(crate) datacenter: Option<String>,
    pub(crate) cluster: Option<String>,
}

/// The chosen VMs outside the chosen clusters, in inventory order.
pub(crate) fn outside_clusters(inventory: &Inventory, selection: &Selection, selected: &Selected) -> Vec<OutsideVm> {
    if selection.clusters.is_empty() || selection.vms.is_empty() {
        return Vec::new();
    }
    let kept = |name: &str| {
        selected
            .vms
            .iter()
            .chain(&selected.vms_not_running)
            .any(|v| v.name == name)
    };
    inventory
        .vms
        .iter()
        .filter(|vm| selection.vms.iter().any(|p| p.matches(&vm.name)) && !kept(&vm.name))
        .map(|vm| {
            let host = vm
                .host
                .as_deref()
                .and_then(|id| inventory.hosts.iter().find(|h| h.id == id));
            OutsideVm {
                name: vm.name.clone(),
                host: host.map(|h| h.name.clone()),
                datacenter: host.map(|h| h.datacenter.clone()),
                cluster: host.and_then(|h| h.cluster.clone()),
            }
        })
        .collect()
}

/// The stderr line for a VM `--cluster` left out.
pub(crate) fn outside_line(vm: &OutsideVm, selection: &Selection) -> String {
    let clusters: Vec<String> = selection.clusters.iter().map(ToString::to_string).collect();
    let at = match (&vm.host, &vm.datacenter) {
        (Some(h), Some(dc)) => format!("runs on {h} ({})", place(dc, vm.cluster.as_deref())),
        _ => "runs on no host vCenter lists".to_string(),
    };
    format!(
        "VM {} {at}, outside --cluster {}: left out",
        vm.name,
        clusters.join(", ")
    )
}

/// A refused vCenter certificate on a terminal: the message wrapped, then the option that
/// pins the certificate on a line of its own, never broken. A SHA-256 thumbprint in the
/// colon form is 95 columns: wrapped like prose it would be cut into pieces that paste
/// back with the indent inside; a line the terminal folds copies whole. `None` for every
/// other error, and when stderr is not a terminal (the message then stays one line).
pub(crate) fn certificate_refusal(error: &anyhow::Error, width: Option<usize>) -> Option<String> {
    const PREFIX: &str = "pvrdma-doctor: error: ";
    let width = width?;
    let pin = error
        .chain()
        .find_map(|e| e.downcast_ref::<pvrdma_vsphere::Error>())?
        .pin()?;
    let text = format!("{error:#}");
    let prose = text.strip_suffix(&pin)?.trim_end();
    let mut out = pvrdma_engine::report::stderr_message(PREFIX, prose, Some(width));
    out.push_str(&format!("    {pin}\n"));
    Some(out)
}

/// `hosts --format json`: the selected hosts, the skipped ones with why, and the VMs
/// (`vms_outside_clusters`: the chosen VMs `--cluster` left out).
pub(crate) fn hosts_json(endpoint: &Endpoint, found: &super::Discovery) -> Value {
    let selected = &found.selected;
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
        "vms_outside_clusters": found.outside,
    })
}
