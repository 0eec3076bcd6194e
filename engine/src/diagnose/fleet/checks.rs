//! `vmknic-subnets`, `vmknic-ipv4-unique`, `pvrdma-same-vds`, `roce-version-pair`,
//! `vmknic-reachability`: the checks across hosts, judged from the diagnosed hosts, their
//! adapter pairs ([`Fleet`]) and the path probe.
use super::super::{check, ev, ipv4_network, with_advice, with_decision, Evidence, POWERED_OFF};
use super::*;
use crate::catalogue as cat;

/// `vmknic-subnets`.
pub(in crate::diagnose) fn vmknic_subnets(f: &Fleet) -> Option<Check> {
    check_vmknic_subnets(f.hosts)
}

/// `vmknic-subnets`: "The vmknics of hosts on which VMs with PVRDMA reside must be able to
/// reach each other" (VMware, "Paravirtual RDMA for High Performance Computing").
/// Without sending traffic, the best read-only evidence is their IPv4 subnets: one subnet
/// is the set-up the guides describe; several need IP routing, which RoCE v1 cannot cross.
pub(in crate::diagnose) fn check_vmknic_subnets(hosts: &[HostDiagnosis]) -> Option<Check> {
    const ID: CheckId = CheckId::VmknicSubnets;
    let with_vmknic: Vec<&HostDiagnosis> = hosts.iter().filter(|h| h.pvrdma_vmknic.is_some()).collect();
    if with_vmknic.len() < 2 {
        return None;
    }
    let (networks, unknown) = vmknic_networks(&with_vmknic);
    let unknown = if unknown.is_empty() {
        Vec::new()
    } else {
        vec![fold_vmknics(&unknown)]
    };
    let evidence = vec![ev(cat::IPV4_GET, "IPv4 Address, IPv4 Netmask of the tagged vmknic")];
    let listing = networks
        .iter()
        .map(|(n, members)| format!("{n} ({})", fold_vmknics(members)))
        .collect::<Vec<_>>()
        .join("; ");
    match networks.len() {
        0 | 1 if !unknown.is_empty() => Some(check(
            ID,
            Status::Unknown,
            format!(
                "IPv4 subnet unknown for {}{}",
                unknown.join(", "),
                if listing.is_empty() {
                    String::new()
                } else {
                    format!("; known: {listing}")
                }
            ),
            evidence,
        )),
        0 => None,
        1 => Some(check(
            ID,
            Status::Pass,
            format!("the PVRDMA vmknics share one IPv4 subnet: {listing}"),
            evidence,
        )),
        n => Some(several_subnets(&with_vmknic, n, &listing, evidence)),
    }
}

/// (host, vmknic) pairs by IPv4 network, and those whose network is unknown.
type VmknicNetworks = (BTreeMap<String, Vec<(String, String)>>, Vec<(String, String)>);

/// Each host's PVRDMA vmknic by its IPv4 network (address and netmask), and those whose
/// network is unknown.
fn vmknic_networks(with_vmknic: &[&HostDiagnosis]) -> VmknicNetworks {
    let mut networks: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut unknown: Vec<(String, String)> = Vec::new();
    for h in with_vmknic {
        let Some(v) = &h.pvrdma_vmknic else { continue };
        let network = v
            .ipv4
            .as_deref()
            .zip(v.netmask.as_deref())
            .and_then(|(a, m)| ipv4_network(a, m));
        match network {
            Some(n) => networks.entry(n).or_default().push((h.host.clone(), v.name.clone())),
            None => unknown.push((h.host.clone(), v.name.clone())),
        }
    }
    (networks, unknown)
}

/// `esx[01-40] vmk1` rather than forty `esxNN vmk1`: (host, vmknic) pairs, the hosts
/// folded per vmknic name.
fn fold_vmknics(members: &[(String, String)]) -> String {
    let mut by_vmk: Vec<(&str, Vec<&str>)> = Vec::new();
    for (host, vmk) in members {
        match by_vmk.iter_mut().find(|(v, _)| v == vmk) {
            Some((_, hosts)) => hosts.push(host),
            None => by_vmk.push((vmk, vec![host])),
        }
    }
    by_vmk
        .iter()
        .map(|(vmk, hosts)| format!("{} {vmk}", pvrdma_nodeset::fold(hosts)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The vmknics are in `n` subnets: traffic between them needs IP routing, which the
/// adapters on RoCE v1 cannot cross (a failure), while RoCE v2 can (a warning).
fn several_subnets(with_vmknic: &[&HostDiagnosis], n: usize, listing: &str, evidence: Vec<Evidence>) -> Check {
    const ID: CheckId = CheckId::VmknicSubnets;
    let roce_v1: Vec<String> = with_vmknic
        .iter()
        .flat_map(|h| {
            h.vms.iter().flat_map(move |vm| {
                vm.adapters
                    .iter()
                    .filter(|a| a.roce_version == Some(1))
                    .map(move |a| format!("VM {} adapter {} on {}", vm.name, a.index, h.host))
            })
        })
        .collect();
    let (status, tail) = if roce_v1.is_empty() {
        (
            Status::Warn,
            "PVRDMA between them needs IP routing (RoCE v2 only)".to_string(),
        )
    } else {
        (
            Status::Fail,
            format!(
                "RoCE v1 is not routable, and these adapters use it: {}",
                roce_v1.join(", ")
            ),
        )
    };
    with_advice(
        check(ID, status, format!("the PVRDMA vmknics are in {n} IPv4 subnets: {listing}: {tail}"), evidence),
        "put the PVRDMA vmknics in one subnet (on each host, vSphere Client: Configure > Networking > VMkernel adapters > VMK > Edit > IPv4 settings; or esxcli network ip interface ipv4 set -i VMK -t static -I ADDRESS -N NETMASK), or route between the subnets and use RoCE v2",
    )
}

/// `vmknic-ipv4-unique`: two hosts whose PVRDMA vmknics share an address cannot reach
/// each other ("The vmknics of hosts on which VMs with PVRDMA reside must be able to
/// reach each other", VMware, "Paravirtual RDMA for High Performance Computing").
pub(in crate::diagnose) fn ipv4_unique(f: &Fleet) -> Option<Check> {
    let (hosts, nets) = (f.hosts, &f.nets);
    let with_vmknic: Vec<usize> = (0..hosts.len()).filter(|i| hosts[*i].pvrdma_vmknic.is_some()).collect();
    if with_vmknic.len() < 2 {
        return None;
    }
    let evidence = vec![ev(cat::IPV4_GET, "IPv4 Address of the tagged vmknic")];
    let mut by_address: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut unknown = Vec::new();
    for &i in &with_vmknic {
        let h = &hosts[i];
        let vmk = h.pvrdma_vmknic.as_ref().map_or("", |v| v.name.as_str());
        match &nets[i].address {
            Some(a) => by_address
                .entry(a.as_str())
                .or_default()
                .push(format!("{} {vmk}", h.host)),
            None => unknown.push(format!("{} {vmk}", h.host)),
        }
    }
    let dups: Vec<String> = by_address
        .iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(a, v)| format!("{a} on {}", v.join(" and ")))
        .collect();
    if !dups.is_empty() {
        return Some(with_advice(
            check(
                IPV4_UNIQUE,
                Status::Fail,
                format!(
                    "PVRDMA vmknics share an IPv4 address: {}: they cannot reach each other",
                    dups.join("; ")
                ),
                evidence,
            ),
            "give each host's PVRDMA vmknic its own address (vSphere Client: the host > Configure > Networking > VMkernel adapters > VMK > Edit > IPv4 settings; or esxcli network ip interface ipv4 set -i VMK -t static -I ADDRESS -N NETMASK)",
        ));
    }
    if !unknown.is_empty() {
        return Some(check(
            IPV4_UNIQUE,
            Status::Unknown,
            format!("IPv4 address unknown for {}", unknown.join(", ")),
            evidence,
        ));
    }
    Some(check(
        IPV4_UNIQUE,
        Status::Pass,
        format!("the {} PVRDMA vmknics have distinct IPv4 addresses", by_address.len()),
        evidence,
    ))
}

/// `pvrdma-same-vds`: "The virtual machines must be connected to the same vSphere
/// Distributed Switch" (VMware vSphere documentation, "Remote Direct Memory Access for
/// Virtual Machines"): the PVRDMA ports of adapters on the HCA, across hosts.
pub(in crate::diagnose) fn same_vds(f: &Fleet) -> Option<Check> {
    if !f.adapters_on_two_hosts() {
        return None;
    }
    Some(same_vds_of(
        &f.profiles,
        f.tally.blocked.get(&SAME_VDS),
        f.tally.examples.get(&SAME_VDS),
    ))
}

fn same_vds_of(profiles: &[HostProfiles], blocked: Option<&(u64, BTreeSet<usize>)>, example: Option<&String>) -> Check {
    let evidence = vec![
        ev(cat::VM_PORT_LIST, "vSwitch of the adapter's MAC"),
        ev(cat::DVS_LIST, "Name, VDS ID"),
    ];
    let mut switches: BTreeMap<String, usize> = BTreeMap::new();
    let mut unknown = 0usize;
    for host in profiles {
        for (p, list) in host {
            if !p.on_hca_or_predicted() {
                continue;
            }
            match &p.switch {
                Some(s) => *switches.entry(s.label()).or_default() += list.len(),
                None => unknown += list.len(),
            }
        }
    }
    let listing = switches
        .iter()
        .map(|(s, n)| format!("{s}: {n} adapter{}", if *n == 1 { "" } else { "s" }))
        .collect::<Vec<_>>()
        .join("; ");
    if let Some((pairs, _)) = blocked.filter(|b| b.0 > 0) {
        return with_decision(
            with_advice(
                check(
                    SAME_VDS,
                    Status::Fail,
                    format!(
                        "{} across hosts {} on different switches ({listing}); e.g. {}",
                        pairs_text(*pairs),
                        if *pairs == 1 { "is" } else { "are" },
                        example.map_or("", String::as_str)
                    ),
                    evidence,
                ),
                "connect the PVRDMA adapters of all VMs that talk to each other to port groups of one vDS (VM powered off: Edit Settings > Network adapter)",
            ),
            POWERED_OFF,
        );
    }
    if unknown > 0 {
        return check(
            SAME_VDS,
            Status::Unknown,
            format!("the switch of {unknown} adapters on the HCA is unknown (their VM port was not found); known: {listing}"),
            evidence,
        );
    }
    if switches.is_empty() {
        return check(SAME_VDS, Status::Pass, "no adapter on the HCA to compare", evidence);
    }
    check(
        SAME_VDS,
        Status::Pass,
        format!("the PVRDMA ports of adapters on the HCA share one vDS: {listing}"),
        evidence,
    )
}

/// `roce-version-pair`: both ends of a pair should use one RoCE version. Neither the
/// vSphere documentation nor the set-up guides describe what happens otherwise, so a
/// mismatch is a warning with that said.
pub(in crate::diagnose) fn roce_pair(f: &Fleet) -> Option<Check> {
    if !f.adapters_on_two_hosts() {
        return None;
    }
    Some(roce_pair_of(
        &f.profiles,
        f.tally.roce_mismatch,
        f.tally.examples.get(&ROCE_PAIR),
    ))
}

fn roce_pair_of(profiles: &[HostProfiles], mismatched: u64, example: Option<&String>) -> Check {
    let evidence = vec![ev(cat::PVRDMA_PROPERTIES, "RoCE version")];
    let mut versions: BTreeMap<String, usize> = BTreeMap::new();
    for host in profiles {
        for (p, list) in host {
            if p.on_hca_or_predicted() {
                let key = p.roce.map_or_else(|| "unknown".to_string(), |v| format!("RoCE v{v}"));
                *versions.entry(key).or_default() += list.len();
            }
        }
    }
    let listing = versions
        .iter()
        .map(|(v, n)| format!("{v}: {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    if mismatched > 0 {
        return with_decision(
            with_advice(
                check(
                    ROCE_PAIR,
                    Status::Warn,
                    format!(
                        "{} across hosts {} RoCE v1 at one end and v2 at the other ({listing}); e.g. {}",
                        pairs_text(mismatched),
                        if mismatched == 1 { "uses" } else { "use" },
                        example.map_or("", String::as_str)
                    ),
                    evidence,
                ),
                "with the VMs powered off, set every PVRDMA adapter's Device Protocol to the same RoCE version (VMware's paper \"Paravirtual RDMA for High Performance Computing\" uses RoCE v2)",
            ),
            POWERED_OFF,
        );
    }
    if versions.contains_key("unknown") {
        return check(
            ROCE_PAIR,
            Status::Unknown,
            format!("the RoCE version of some adapters on the HCA is unknown ({listing})"),
            evidence,
        );
    }
    check(
        ROCE_PAIR,
        Status::Pass,
        if listing.is_empty() {
            "no adapter on the HCA to compare".to_string()
        } else {
            format!("adapters on the HCA agree on the RoCE version ({listing})")
        },
        evidence,
    )
}

/// `vmknic-reachability`: judged from the path probe's pings, when it ran.
pub(in crate::diagnose) fn reachability(f: &Fleet) -> Option<Check> {
    crate::diagnose::probe::check(f.probes)
}

/// `1 adapter pair`, `3 adapter pairs`.
fn pairs_text(n: u64) -> String {
    format!("{n} adapter pair{}", if n == 1 { "" } else { "s" })
}
