//! `rdma-uplink-on-dvs`, `dvs-single-uplink`: the HCA uplink and its vDS.
use super::super::*;

pub(in crate::diagnose) fn check_uplink_on_dvs(ctx: &Context) -> Check {
    const ID: CheckId = CheckId::RdmaUplinkOnDvs;
    let f = ctx.facts;
    match &f.rdma_devices {
        Ok(d) if d.is_empty() => return not_checked(ID, "no RDMA device (see rdma-device-present)"),
        Ok(_) => {}
        Err(e) => return unknown_from(ID, cat::RDMA_DEVICE_LIST, e),
    }
    let switches = match &f.dvs {
        Ok(s) => s,
        Err(e) => return unknown_from(ID, cat::DVS_LIST, e),
    };
    let mut evidence = vec![ev(cat::RDMA_DEVICE_LIST, "Paired Uplink"), ev(cat::DVS_LIST, "Uplinks")];
    if let (Some(device), Some(dvs)) = (ctx.device, ctx.dvs) {
        let uplink = device.paired_uplink.as_deref().unwrap_or("?");
        return check(
            ID,
            Status::Pass,
            format!("{} (uplink {uplink}) is an uplink of vDS {}", device.name, dvs.name),
            evidence,
        );
    }
    // The device the doctor would use (Active first) is the one to move onto a vDS.
    let Some((device, uplink)) = ctx.device.and_then(|d| Some((d, d.paired_uplink.as_deref()?))) else {
        return check(ID, Status::Fail, "no RDMA device has a paired uplink", evidence);
    };
    evidence.push(ev(cat::STANDARD_SWITCH_LIST, "Uplinks"));
    let standard = f
        .standard_switches
        .as_ref()
        .ok()
        .and_then(|ss| ss.iter().find(|s| s.uplinks.iter().any(|x| x == uplink)));
    let where_now = match standard {
        Some(s) => format!("{uplink} is an uplink of standard vSwitch {}", s.name),
        None => format!("{uplink} is on no vDS"),
    };
    let summary = if switches.is_empty() {
        format!(
            "this host has no vSphere Distributed Switch; PVRDMA needs one whose uplink is the HCA ({} → {where_now})",
            device.name
        )
    } else {
        format!("the HCA {} is not an uplink of any vDS: {where_now}", device.name)
    };
    let detach = standard.map(|s| {
        ConfigChange::esxcli(
            "network vswitch standard uplink remove",
            vec![
                EsxcliOption::new("uplinkname", "-u", uplink),
                EsxcliOption::new("vswitchname", "-v", s.name.as_str()),
            ],
            Some(format!("{uplink} an uplink of standard vSwitch {}", s.name)),
        )
    });
    let target = match switches.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().as_slice() {
        [one] => format!("vDS {one}"),
        _ => "the PVRDMA vDS".to_string(),
    };
    let then = if detach.is_some() { "then " } else { "" };
    let advice = format!("{then}in vCenter add {uplink} as the only uplink of {target} (Distributed Switch > Add and Manage Hosts > Manage physical adapters)");
    with_remedy(
        check(ID, Status::Fail, summary, evidence),
        Remedy {
            decision: Some(format!(
                "moving {uplink} onto {target} changes the host's network: check first that nothing else (a port group, a VMkernel adapter) relies on it where it is"
            )),
            ..Remedy::of_changes(detach.into_iter().collect(), Some(advice))
        },
    )
}

pub(in crate::diagnose) fn check_single_uplink(ctx: &Context) -> Check {
    const ID: CheckId = CheckId::DvsSingleUplink;
    if ctx.rdma_switches.is_empty() {
        return not_checked(ID, "needs rdma-uplink-on-dvs to pass");
    }
    // Every vDS carrying an HCA is checked: teaming on any of them breaks its adapters.
    let mut seen: Vec<&str> = Vec::new();
    let mut good = Vec::new();
    let mut teamed = Vec::new();
    for (device, dvs) in &ctx.rdma_switches {
        if seen.contains(&dvs.name.as_str()) {
            continue;
        }
        seen.push(&dvs.name);
        if dvs.uplinks.len() == 1 {
            good.push(format!(
                "{} is the only uplink of vDS {}",
                dvs.uplinks.join(""),
                dvs.name
            ));
        } else {
            teamed.push((*device, *dvs));
        }
    }
    let evidence = seen
        .iter()
        .map(|name| ev(cat::DVS_LIST, format!("Uplinks of {name}")))
        .collect();
    if teamed.is_empty() {
        return check(ID, Status::Pass, good.join("; "), evidence);
    }
    let summaries: Vec<String> = teamed
        .iter()
        .map(|(device, dvs)| {
            format!(
                "vDS {} has {} uplinks ({}): PVRDMA does not support NIC teaming, the HCA {} must be the only uplink",
                dvs.name,
                dvs.uplinks.len(),
                dvs.uplinks.join(", "),
                device.paired_uplink.as_deref().unwrap_or("?")
            )
        })
        .collect();
    let remedies: Vec<String> = teamed
        .iter()
        .map(|(device, dvs)| {
            let hca = device.paired_uplink.as_deref().unwrap_or("");
            let others: Vec<&str> = dvs.uplinks.iter().map(String::as_str).filter(|u| *u != hca).collect();
            format!(
                "in vCenter, remove {} from the uplinks of vDS {} (or move {} to another vDS): the vDS > Add and Manage Hosts > Manage host networking > Manage physical adapters",
                others.join(", "),
                dvs.name,
                if others.len() == 1 { "it" } else { "them" }
            )
        })
        .collect();
    with_decision(
        with_advice(
            check(ID, Status::Fail, summaries.join("; "), evidence),
            remedies.join("; "),
        ),
        "removing uplinks from a vDS changes the network of every host on it: check first that no port group relies on them (Teaming and failover)",
    )
}
