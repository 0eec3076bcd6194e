//! `mtu-consistent`: MTU along the path: vmknic, vDS and uplink.
use super::super::*;

pub(in crate::diagnose) fn check_mtu(ctx: &Context) -> Check {
    const ID: CheckId = CheckId::MtuConsistent;
    let f = ctx.facts;
    // Every vDS that carries an HCA is an RDMA data path of its own.
    let mut paths: Vec<(&p::RdmaDevice, &p::DvsSwitch)> = Vec::new();
    for (d, s) in &ctx.rdma_switches {
        if !paths.iter().any(|(_, o)| o.name == s.name) {
            paths.push((d, s));
        }
    }
    if paths.is_empty() {
        return not_checked(ID, "needs rdma-uplink-on-dvs to pass");
    }
    let vmk_interface = ctx
        .tagged_vmknic
        .as_ref()
        .and_then(|vmk| f.vmknics.as_ref().ok().and_then(|i| i.iter().find(|i| &i.name == vmk)));
    // The tagged vmknic's MTU belongs to a path only when it sits on that vDS; elsewhere it
    // carries PVRDMA control traffic only (see pvrdma-vmknic-valid).
    let results: Vec<Check> = paths
        .iter()
        .map(|(device, dvs)| {
            let vmk = match (&ctx.tagged_vmknic, &f.vmknics) {
                (Some(vmk), Err(_)) => Some(vmk.clone()),
                (Some(vmk), Ok(_))
                    if vmk_interface.is_some_and(|i| i.vds_name.as_deref() == Some(dvs.name.as_str())) =>
                {
                    Some(vmk.clone())
                }
                _ => None,
            };
            mtu_path(f, device, dvs, vmk.as_deref())
        })
        .collect();
    let worst = results.iter().map(|c| c.status).max().unwrap_or(Status::Unknown);
    let mut summary = results.iter().map(|c| c.summary.clone()).collect::<Vec<_>>().join("; ");
    if let (Some(vmk), Some(i)) = (&ctx.tagged_vmknic, vmk_interface) {
        if !paths
            .iter()
            .any(|(_, d)| i.vds_name.as_deref() == Some(d.name.as_str()))
        {
            let mtu = i.mtu.map_or_else(|| "unknown".to_string(), |m| m.to_string());
            summary.push_str(&format!(
                "; {vmk} (MTU {mtu}) is not on an HCA's vDS and carries only PVRDMA control traffic, so its MTU is not on the RDMA path"
            ));
        }
    }
    // One remedy per HCA path: the commands run one after the other, the advice reads on.
    let remedies: Vec<Remedy> = results.iter().filter_map(|c| c.remedy.clone()).collect();
    let evidence = results.into_iter().flat_map(|c| c.evidence).collect();
    let c = check(ID, worst, summary, evidence);
    let joined = |part: fn(&Remedy) -> Option<&String>| {
        let parts: Vec<&str> = remedies.iter().filter_map(part).map(String::as_str).collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    };
    if remedies.is_empty() {
        c
    } else {
        with_fix(c, joined(|r| r.command.as_ref()), joined(|r| r.advice.as_ref()))
    }
}

/// MTU agreement along one RDMA path: the vDS, its HCA uplink and (when it sits on this
/// vDS) the tagged vmknic.
pub(in crate::diagnose) fn mtu_path(
    f: &HostFacts,
    device: &p::RdmaDevice,
    dvs: &p::DvsSwitch,
    vmk: Option<&str>,
) -> Check {
    const ID: CheckId = CheckId::MtuConsistent;
    let uplink = device.paired_uplink.clone().unwrap_or_default();
    let nic_mtu: Result<u32, String> = match &f.nics {
        Ok(nics) => match nics.iter().find(|n| n.name == uplink) {
            Some(n) => n.mtu.ok_or_else(|| "no MTU in its row".to_string()),
            None => Err("not in esxcli network nic list".to_string()),
        },
        Err(e) => Err(e.to_string()),
    };
    let mut evidence = vec![
        ev(cat::DVS_LIST, format!("MTU of {}", dvs.name)),
        ev(cat::NIC_LIST, format!("MTU of {uplink}")),
    ];
    let dvs_label = format!("vDS {}", dvs.name);
    let mut named = vec![
        (dvs_label.clone(), dvs.mtu.ok_or_else(|| "no MTU printed".to_string())),
        (uplink.clone(), nic_mtu),
    ];
    if let Some(vmk) = vmk {
        let vmk_mtu: Result<u32, String> = match &f.vmknics {
            Ok(v) => v
                .iter()
                .find(|v| v.name == vmk)
                .and_then(|v| v.mtu)
                .ok_or_else(|| "no MTU printed".to_string()),
            Err(e) => Err(e.to_string()),
        };
        evidence.insert(1, ev(cat::IP_INTERFACE_LIST, format!("MTU of {vmk}")));
        named.insert(1, (vmk.to_string(), vmk_mtu));
    }
    let vmk = vmk.unwrap_or("");
    let mut known: Vec<(String, u32)> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    for (name, mtu) in named {
        match mtu {
            Ok(m) => known.push((name, m)),
            Err(e) => missing.push(format!("{name}: {e}")),
        }
    }
    let list = known
        .iter()
        .map(|(n, m)| format!("{n} {m}"))
        .collect::<Vec<_>>()
        .join(", ");
    // How to raise one element of the path to `target`: (command, advice).
    let raise = |name: &str, target: u32| -> (Option<String>, Option<String>) {
        if name == dvs_label {
            (None, Some(format!("set the MTU of vDS {} to {target} in vCenter (Distributed Switch > Settings > Edit Settings > Advanced)", dvs.name)))
        } else if name == vmk {
            (
                Some(format!(
                    "esxcli network ip interface set -m {target} -i {}",
                    shell_quote(vmk)
                )),
                None,
            )
        } else {
            (None, Some(format!("{name} did not take the vDS MTU: re-apply vDS {}'s MTU {target} in vCenter and check `esxcli network nic get -n {name}`", dvs.name)))
        }
    };
    let vmk_value = known.iter().find(|(n, _)| n == vmk).map(|(_, m)| *m);
    let lowest = known.iter().filter(|(n, _)| n != vmk).min_by_key(|(_, m)| *m);
    if let (Some(v), Some((low_name, low))) = (vmk_value, lowest) {
        if v > *low {
            let alternative = match raise(low_name, v) {
                (Some(command), _) => format!("or run {command}"),
                (None, Some(advice)) => format!("or {advice}"),
                (None, None) => String::new(),
            };
            return with_fix(
                check(
                    ID,
                    Status::Fail,
                    format!("{vmk} MTU {v} is larger than the path below it ({list}): large frames are dropped"),
                    evidence,
                ),
                Some(format!(
                    "esxcli network ip interface set -m {low} -i {}",
                    shell_quote(vmk)
                )),
                Some(alternative).filter(|a| !a.is_empty()),
            );
        }
    }
    let all_equal = known.windows(2).all(|w| matches!(w, [a, b] if a.1 == b.1));
    if !missing.is_empty() {
        let status = if all_equal { Status::Unknown } else { Status::Warn };
        let known_text = if list.is_empty() { "none".to_string() } else { list };
        return check(
            ID,
            status,
            format!("known MTUs: {known_text}; unknown: {}", missing.join("; ")),
            evidence,
        );
    }
    let (Some((low_name, _)), Some(high)) = (known.iter().min_by_key(|(_, m)| *m), known.iter().map(|k| k.1).max())
    else {
        return check(ID, Status::Unknown, "no MTU known", evidence);
    };
    if all_equal {
        let on = if vmk.is_empty() {
            format!("vDS {} and {uplink}", dvs.name)
        } else {
            format!("vDS {}, {vmk} and {uplink}", dvs.name)
        };
        check(ID, Status::Pass, format!("MTU {high} on {on}"), evidence)
    } else {
        let (command, advice) = raise(low_name, high);
        with_fix(
            check(ID, Status::Warn, format!("MTUs differ: {list}"), evidence),
            command,
            advice,
        )
    }
}
