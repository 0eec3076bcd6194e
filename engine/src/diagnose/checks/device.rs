//! `esxi-version`, `rdma-device-present`, `rdma-device-active`: the ESXi version and the RDMA device.
use super::super::*;

pub(in crate::diagnose) fn check_version(ctx: &Context) -> Check {
    const ID: CheckId = CheckId::EsxiVersion;
    let f = ctx.facts;
    let v = match &f.version {
        Ok(v) => v,
        Err(e) => return unknown_from(ID, cat::SYSTEM_VERSION, e),
    };
    let evidence = vec![ev(cat::SYSTEM_VERSION, "Version")];
    match v.numbers() {
        Some(n) if n >= (6, 5, 0) => check(
            ID,
            Status::Pass,
            format!("{} {} supports PVRDMA", v.product, v.version),
            evidence,
        ),
        Some(_) => with_advice(
            check(
                ID,
                Status::Fail,
                format!("{} {} is older than 6.5, which PVRDMA needs", v.product, v.version),
                evidence,
            ),
            "upgrade the host to ESXi 6.5 or later (7.0 U1+ for native endpoints, 8.0+ for async mode)",
        ),
        None => check(
            ID,
            Status::Unknown,
            format!("version {:?} is not in a form this tool knows", v.version),
            evidence,
        ),
    }
}

pub(in crate::diagnose) fn check_device_present(ctx: &Context) -> Check {
    const ID: CheckId = CheckId::RdmaDevicePresent;
    let f = ctx.facts;
    let devices = match &f.rdma_devices {
        Ok(d) => d,
        Err(e) => return unknown_from(ID, cat::RDMA_DEVICE_LIST, e),
    };
    let evidence = vec![ev(cat::RDMA_DEVICE_LIST, "Name")];
    if devices.is_empty() {
        return with_advice(
            check(ID, Status::Fail, "no RDMA device is registered (esxcli rdma device list is empty): PVRDMA traffic to other hosts falls back to TCP", evidence),
            "install a RoCE-capable NIC and its RDMA driver, then check that the host lists it (vSphere Client: the host > Configure > Networking > RDMA adapters; `esxcli rdma device list` in its shell)",
        );
    }
    let names: Vec<String> = devices
        .iter()
        .map(|d| match &d.paired_uplink {
            Some(u) => format!("{} ({}, uplink {u})", d.name, d.driver),
            None => format!("{} ({})", d.name, d.driver),
        })
        .collect();
    check(
        ID,
        Status::Pass,
        format!("RDMA device registered: {}", names.join(", ")),
        evidence,
    )
}

pub(in crate::diagnose) fn state_name(s: &p::PortState) -> String {
    match s {
        p::PortState::Active => "Active".into(),
        p::PortState::ActiveDefer => "Active (deferred)".into(),
        p::PortState::Down => "Down".into(),
        p::PortState::Init => "Init".into(),
        p::PortState::Armed => "Armed".into(),
        p::PortState::Nop => "Nop".into(),
        p::PortState::Other(o) => o.clone(),
    }
}

pub(in crate::diagnose) fn check_device_active(ctx: &Context) -> Check {
    const ID: CheckId = CheckId::RdmaDeviceActive;
    let devices = match &ctx.facts.rdma_devices {
        Ok(d) => d,
        Err(e) => return unknown_from(ID, cat::RDMA_DEVICE_LIST, e),
    };
    let Some(device) = ctx.device else {
        return not_checked(
            ID,
            &format!("no RDMA device among {} rows (see rdma-device-present)", devices.len()),
        );
    };
    let evidence = vec![ev(cat::RDMA_DEVICE_LIST, format!("State of {}", device.name))];
    if device.state.is_active() {
        return check(
            ID,
            Status::Pass,
            format!("{} is {}", device.name, state_name(&device.state)),
            evidence,
        );
    }
    let uplink = device.paired_uplink.clone().unwrap_or_else(|| "its uplink".to_string());
    with_advice(
        check(
            ID,
            Status::Fail,
            format!("{} is {}, not Active: the HCA cannot carry PVRDMA traffic", device.name, state_name(&device.state)),
            evidence,
        ),
        format!("check the link of {uplink} (cable, switch port; vSphere Client: the host > Configure > Networking > Physical adapters, or `esxcli network nic get -n {uplink}`) until the host shows {} Active (Configure > Networking > RDMA adapters, or `esxcli rdma device list`)", device.name),
    )
}
