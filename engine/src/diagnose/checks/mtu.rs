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
        with_remedy(
            c,
            Remedy {
                command: joined(|r| r.command.as_ref()),
                advice: joined(|r| r.advice.as_ref()),
                changes: remedies.iter().flat_map(|r| r.changes.clone()).collect(),
                ..Remedy::default()
            },
        )
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
    let path = RdmaPath {
        dvs,
        vmk: vmk.unwrap_or(""),
        uplink: device.paired_uplink.clone().unwrap_or_default(),
    };
    let (named, evidence) = path.mtus(f, vmk);
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
    if let Some((summary, remedy)) = path.vmknic_above_the_rest(&known, &list) {
        return with_remedy(check(ID, Status::Fail, summary, evidence), remedy);
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
        let on = if path.vmk.is_empty() {
            format!("vDS {} and {}", dvs.name, path.uplink)
        } else {
            format!("vDS {}, {} and {}", dvs.name, path.vmk, path.uplink)
        };
        check(ID, Status::Pass, format!("MTU {high} on {on}"), evidence)
    } else {
        let c = check(ID, Status::Warn, format!("MTUs differ: {list}"), evidence);
        match path.raise(low_name, high) {
            (Some(_), _) => with_remedy(
                c,
                Remedy::of_changes(
                    vec![vmknic_mtu(
                        path.vmk,
                        high,
                        known.iter().find(|k| k.0 == path.vmk).map(|k| k.1),
                    )],
                    None,
                ),
            ),
            (None, advice) => with_fix(c, None, advice),
        }
    }
}

/// `esxcli network ip interface set -m MTU -i VMK`, replacing the vmknic's MTU `was`.
fn vmknic_mtu(vmk: &str, mtu: u32, was: Option<u32>) -> ConfigChange {
    ConfigChange::esxcli(
        "network ip interface set",
        vec![
            EsxcliOption::new("mtu", "-m", mtu.to_string()),
            EsxcliOption::new("interfacename", "-i", vmk),
        ],
        was.map(|w| w.to_string()),
    )
}

/// An element's MTU, or why it is not known.
type Mtu = Result<u32, String>;

/// One RDMA path of the host: a vDS, its HCA uplink, and the tagged vmknic when it sits
/// on that vDS (else empty).
struct RdmaPath<'a> {
    dvs: &'a p::DvsSwitch,
    vmk: &'a str,
    uplink: String,
}

impl RdmaPath<'_> {
    fn dvs_label(&self) -> String {
        format!("vDS {}", self.dvs.name)
    }

    /// Each element's MTU in path order (the vDS, the vmknic, the uplink), or why it is
    /// not known; and the evidence read for them.
    fn mtus(&self, f: &HostFacts, vmk: Option<&str>) -> (Vec<(String, Mtu)>, Vec<Evidence>) {
        let nic_mtu: Mtu = match &f.nics {
            Ok(nics) => match nics.iter().find(|n| n.name == self.uplink) {
                Some(n) => n.mtu.ok_or_else(|| "no MTU in its row".to_string()),
                None => Err("not in esxcli network nic list".to_string()),
            },
            Err(e) => Err(e.to_string()),
        };
        let mut evidence = vec![
            ev(cat::DVS_LIST, format!("MTU of {}", self.dvs.name)),
            ev(cat::NIC_LIST, format!("MTU of {}", self.uplink)),
        ];
        let mut named = vec![
            (
                self.dvs_label(),
                self.dvs.mtu.ok_or_else(|| "no MTU printed".to_string()),
            ),
            (self.uplink.clone(), nic_mtu),
        ];
        if let Some(vmk) = vmk {
            let vmk_mtu: Mtu = match &f.vmknics {
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
        (named, evidence)
    }

    /// A vmknic whose MTU is larger than the lowest of the path below it, whose large
    /// frames are dropped: (summary, remedy). The remedy lowers the vmknic; raising the
    /// lowest element is the alternative.
    fn vmknic_above_the_rest(&self, known: &[(String, u32)], list: &str) -> Option<(String, Remedy)> {
        let vmk = self.vmk;
        let v = known.iter().find(|(n, _)| n == vmk).map(|(_, m)| *m)?;
        let (low_name, low) = known.iter().filter(|(n, _)| n != vmk).min_by_key(|(_, m)| *m)?;
        if v <= *low {
            return None;
        }
        let alternative = match self.raise(low_name, v) {
            (Some(command), _) => format!("or run {command}"),
            (None, Some(advice)) => format!("or {advice}"),
            (None, None) => String::new(),
        };
        Some((
            format!("{vmk} MTU {v} is larger than the path below it ({list}): large frames are dropped"),
            Remedy::of_changes(
                vec![vmknic_mtu(vmk, *low, Some(v))],
                Some(alternative).filter(|a| !a.is_empty()),
            ),
        ))
    }

    /// How to raise one element of the path to `target`: (command, advice).
    fn raise(&self, name: &str, target: u32) -> (Option<String>, Option<String>) {
        let dvs = &self.dvs.name;
        if name == self.dvs_label() {
            (None, Some(format!("set the MTU of vDS {dvs} to {target} in vCenter (Distributed Switch > Settings > Edit Settings > Advanced)")))
        } else if name == self.vmk {
            (
                Some(format!(
                    "esxcli network ip interface set -m {target} -i {}",
                    shell_quote(self.vmk)
                )),
                None,
            )
        } else {
            (None, Some(format!("{name} did not take the vDS MTU: re-apply vDS {dvs}'s MTU {target} in vCenter and check `esxcli network nic get -n {name}`")))
        }
    }
}
