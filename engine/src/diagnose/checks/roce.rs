//! `roce-supported`: the RoCE versions the RDMA device offers, and those its adapters use.
use super::super::*;

pub(in crate::diagnose) fn check_roce(ctx: &Context) -> Check {
    const ID: CheckId = CheckId::RoceSupported;
    let Some(device) = ctx.device else {
        return not_checked(ID, "needs rdma-device-present to pass");
    };
    let protocols = match &ctx.facts.rdma_protocols {
        Ok(p) => p,
        Err(e) if namespace_absent(e) => return roce_without_protocol_list(ctx, device),
        Err(e) => return unknown_from(ID, cat::RDMA_PROTOCOL_LIST, e),
    };
    let mut evidence = vec![ev(
        cat::RDMA_PROTOCOL_LIST,
        format!("RoCE v1, RoCE v2 of {}", device.name),
    )];
    let Some(row) = protocols.iter().find(|p| p.device == device.name) else {
        return check(
            ID,
            Status::Unknown,
            format!("{} is not in esxcli rdma device protocol list", device.name),
            evidence,
        );
    };
    let versions: Vec<&str> = [(row.roce_v1, "RoCE v1"), (row.roce_v2, "RoCE v2")]
        .iter()
        .filter(|(b, _)| *b == Some(true))
        .map(|(_, n)| *n)
        .collect();
    if versions.is_empty() {
        return without_roce(device, row, evidence);
    }
    let mismatched = adapters_on_missing_roce(ctx, row);
    if mismatched.is_empty() {
        return check(
            ID,
            Status::Pass,
            format!("{} supports {}", device.name, versions.join(" and ")),
            evidence,
        );
    }
    evidence.push(ev(cat::PVRDMA_PROPERTIES, "RoCE version"));
    with_decision(
        with_advice(
            check(
                ID,
                Status::Fail,
                format!(
                    "{} supports only {}, but adapter {}",
                    device.name,
                    versions.join(" and "),
                    mismatched.join(", ")
                ),
                evidence,
            ),
            format!(
                "with the VM powered off, set the PVRDMA adapter's RoCE version to {} (vSphere Client: the VM > Edit Settings > its PVRDMA network adapter > Device Protocol)",
                versions.join(" or ")
            ),
        ),
        POWERED_OFF,
    )
}

/// A device whose protocol row names no RoCE version: unknown when a column is empty,
/// else a failure (PVRDMA needs RoCE).
fn without_roce(device: &p::RdmaDevice, row: &p::RdmaProtocols, evidence: Vec<Evidence>) -> Check {
    const ID: CheckId = CheckId::RoceSupported;
    if row.roce_v1.is_none() || row.roce_v2.is_none() {
        return check(
            ID,
            Status::Unknown,
            format!("RoCE support of {} is not stated", device.name),
            evidence,
        );
    }
    with_advice(
        check(
            ID,
            Status::Fail,
            format!(
                "{} supports neither RoCE v1 nor RoCE v2; PVRDMA needs RoCE",
                device.name
            ),
            evidence,
        ),
        "use a RoCE-capable NIC (or enable RoCE in its driver/firmware) as the PVRDMA uplink",
    )
}

/// The adapters set to a RoCE version the device lacks, which cannot use it ("The vmnic
/// needs to support either the RoCE v1 or RoCE v2 protocols", VMware, "Paravirtual RDMA
/// for High Performance Computing"): those vsish shows, then those the vSphere API
/// configures (`deviceProtocol`, read without SSH).
fn adapters_on_missing_roce(ctx: &Context, row: &p::RdmaProtocols) -> Vec<String> {
    let mut mismatched: Vec<String> = ctx
        .facts
        .pvrdma_properties
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .filter_map(|s| {
            let version = s.properties.as_ref().ok()?.roce_version?;
            (supports_roce(row, version) == Some(false))
                .then(|| format!("{}_{} uses RoCE v{version}", s.device.world_id, s.device.index))
        })
        .collect();
    for vm in &ctx.facts.api_vms {
        let name = vm.config.display_name.as_deref().unwrap_or(&vm.id);
        for (i, protocol) in vm.device_protocols.iter().enumerate() {
            let Some(version) = protocol.as_deref().and_then(configured_roce) else {
                continue;
            };
            if supports_roce(row, version) == Some(false) {
                mismatched.push(format!("{i} of {name} is set to RoCE v{version}"));
            }
        }
    }
    mismatched
}

/// The command does not exist on this release (such as `rdma device protocol list` on
/// ESXi 6.5): nothing is missing, the release just cannot tell.
pub(in crate::diagnose) fn namespace_absent(e: &facts::FactError) -> bool {
    matches!(e, facts::FactError::Unsupported { .. })
}

/// `roce-supported` on a release without `esxcli rdma device protocol list` (ESXi 6.5):
/// an adapter that vsish shows on the HCA proves the device carries its RoCE version.
pub(in crate::diagnose) fn roce_without_protocol_list(ctx: &Context, device: &p::RdmaDevice) -> Check {
    const ID: CheckId = CheckId::RoceSupported;
    let release = match &ctx.facts.version {
        Ok(v) => format!("{} {}", v.product, v.version),
        Err(_) => "this release".to_string(),
    };
    let mut evidence = vec![ev(cat::RDMA_PROTOCOL_LIST, "output")];
    let proven: Vec<u32> = {
        let mut v: Vec<u32> = ctx
            .facts
            .pvrdma_properties
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .filter_map(|s| s.properties.as_ref().ok())
            .filter(|p| p.physical_hca_available == Some(true))
            .filter_map(|p| p.roce_version)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    if proven.is_empty() {
        return check(
            ID,
            Status::Warn,
            format!(
                "{release} has no `esxcli rdma device protocol list`, and no adapter on the HCA shows which RoCE version {} carries: RoCE support cannot be listed on this release",
                device.name
            ),
            evidence,
        );
    }
    evidence.push(ev(cat::PVRDMA_PROPERTIES, "Physical HCA available, RoCE version"));
    let versions: Vec<String> = proven.iter().map(|v| format!("RoCE v{v}")).collect();
    check(
        ID,
        Status::Pass,
        format!(
            "{release} has no `esxcli rdma device protocol list`; adapters on the HCA use {} through {}, so the device supports it",
            versions.join(" and "),
            device.name
        ),
        evidence,
    )
}

/// Whether the device's `RoCE vN` column says it supports `version` (`None`: not stated).
pub(in crate::diagnose) fn supports_roce(row: &p::RdmaProtocols, version: u32) -> Option<bool> {
    match version {
        1 => row.roce_v1,
        2 => row.roce_v2,
        _ => None,
    }
}
