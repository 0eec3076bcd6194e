//! The fleet checks that judge pairs of hosts.
use super::*;

/// `vmknic-ipv4-unique`: two hosts whose PVRDMA vmknics share an address cannot reach
/// each other (DOMAIN §2.4: the vmknics of all hosts must reach each other).
pub(super) fn ipv4_unique(hosts: &[HostDiagnosis], nets: &[Net]) -> Option<Check> {
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
        return Some(with_remedy(
            check(
                IPV4_UNIQUE,
                Status::Fail,
                format!(
                    "PVRDMA vmknics share an IPv4 address: {}: they cannot reach each other",
                    dups.join("; ")
                ),
                evidence,
            ),
            "give each host's PVRDMA vmknic its own address: esxcli network ip interface ipv4 set -i <vmk> -t static -I <address> -N <netmask>",
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

/// `pvrdma-same-vds`: "the virtual machines must be connected to the same vSphere
/// Distributed Switch" (docs page): the PVRDMA ports of adapters on the HCA, across hosts.
pub(super) fn same_vds(
    profiles: &[HostProfiles],
    blocked: Option<&(u64, BTreeSet<usize>)>,
    example: Option<&String>,
) -> Check {
    let evidence = vec![
        ev(cat::VM_PORT_LIST, "vSwitch of the adapter's MAC"),
        ev(cat::DVS_LIST, "Name, VDS ID"),
    ];
    let mut switches: BTreeMap<String, usize> = BTreeMap::new();
    let mut unknown = 0usize;
    for host in profiles {
        for (p, list) in host {
            if p.verdict != 0 {
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
        return with_remedy(
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

/// `roce-version-pair`: both ends of a pair should use one RoCE version. The seeds do not
/// describe what happens otherwise, so a mismatch is a warning with that said.
pub(super) fn roce_pair(profiles: &[HostProfiles], mismatched: u64, example: Option<&String>) -> Check {
    let evidence = vec![ev(cat::PVRDMA_PROPERTIES, "RoCE version")];
    let mut versions: BTreeMap<String, usize> = BTreeMap::new();
    for host in profiles {
        for (p, list) in host {
            if p.verdict == 0 {
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
        return with_remedy(
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
            "with the VMs powered off, set every PVRDMA adapter's Device Protocol to the same RoCE version (RoCE v2 in the VMware and Mellanox setup guides)",
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

/// `1 adapter pair`, `3 adapter pairs`.
fn pairs_text(n: u64) -> String {
    format!("{n} adapter pair{}", if n == 1 { "" } else { "s" })
}
