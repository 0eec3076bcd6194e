//! The pieces of the fleet judgement: the probe's unreachable pairs, each host's adapter
//! profiles, the pair tally and its exceptions, and the fleet checks marking their hosts.
use super::*;

/// Host pairs (sorted names) whose PVRDMA vmknics the probe found unable to reach each
/// other: such a pair cannot carry RDMA.
pub(super) fn unreachable_pairs(probes: &[Probe]) -> BTreeSet<(String, String)> {
    probes
        .iter()
        .filter(|p| p.status == ProbeStatus::Unreachable)
        .map(|p| host_pair(&p.from, &p.to))
        .collect()
}

/// A host's adapters grouped by profile.
pub(super) fn host_profiles(h: &HostDiagnosis) -> HostProfiles<'_> {
    let mut m: HostProfiles = BTreeMap::new();
    for vm in &h.vms {
        for a in &vm.adapters {
            m.entry(profile(a)).or_default().push((
                AdapterRef {
                    host: h.host.clone(),
                    vm: vm.name.clone(),
                    world_id: vm.world_id,
                    adapter: a.index,
                },
                a,
            ));
        }
    }
    m
}

/// Counts every adapter pair of different VMs into `summary` (totals and host pairs), and
/// tallies what the fleet checks need: the pairs each check blocks, the RoCE mismatches.
pub(super) fn tally_pairs(
    fleet: &Fleet,
    cut: &dyn Fn(&str, &str) -> bool,
    summary: &mut TransportSummary,
) -> PairTally {
    let hosts = fleet.hosts;
    let mut tally = PairTally::default();
    for (i, h) in hosts.iter().enumerate() {
        // Within a host: every pair of adapters of different VMs is a memcpy.
        let n: u64 = h.vms.iter().map(|v| v.adapters.len() as u64).sum();
        let same_vm: u64 = h
            .vms
            .iter()
            .map(|v| {
                let k = v.adapters.len() as u64;
                k * k.saturating_sub(1) / 2
            })
            .sum();
        let memcpy = n * n.saturating_sub(1) / 2 - same_vm;
        if memcpy > 0 {
            let mut pairs = TransportCounts::default();
            pairs.add(Transport::Memcpy, memcpy);
            summary.totals.merge(&pairs);
            summary.host_pairs.push(HostPairTransport {
                a: h.host.clone(),
                b: h.host.clone(),
                pairs,
            });
        }
        for (j, other) in hosts.iter().enumerate().skip(i + 1) {
            let mut pairs = TransportCounts::default();
            let mut unobserved = 0;
            for (pa, la) in &fleet.profiles[i] {
                for (pb, lb) in &fleet.profiles[j] {
                    let c = fleet.classify((i, pa), (j, pb), cut);
                    let n = la.len() as u64 * lb.len() as u64;
                    pairs.add(c.transport, n);
                    if c.unobserved {
                        unobserved += n;
                    }
                    for r in &c.reasons {
                        let Some(id) = r.blocks else { continue };
                        let e = tally.blocked.entry(id).or_default();
                        e.0 += n;
                        e.1.insert(i);
                        e.1.insert(j);
                        tally.examples.entry(id).or_insert_with(|| r.text.clone());
                    }
                    if let Some(text) = &c.roce_mismatch {
                        tally.roce_mismatch += n;
                        tally.examples.entry(ROCE_PAIR).or_insert_with(|| text.clone());
                    }
                }
            }
            summary.totals.merge(&pairs);
            if pairs.total() > pairs.rdma + unobserved {
                summary.host_pairs.push(HostPairTransport {
                    a: h.host.clone(),
                    b: other.host.clone(),
                    pairs,
                });
            }
        }
    }
    tally
}

/// Per adapter and peer host, where a pair is not clean rdma: the counts and the reasons.
pub(super) fn exceptions(fleet: &Fleet, cut: &dyn Fn(&str, &str) -> bool) -> Vec<AdapterException> {
    let hosts = fleet.hosts;
    let mut out = Vec::new();
    for i in 0..hosts.len() {
        for (pa, la) in &fleet.profiles[i] {
            for (j, other) in hosts.iter().enumerate() {
                if i == j {
                    continue;
                }
                let mut counts = TransportCounts::default();
                let mut reasons: Vec<String> = Vec::new();
                for (pb, lb) in &fleet.profiles[j] {
                    let c = fleet.classify((i, pa), (j, pb), cut);
                    if (c.transport == Transport::Rdma && c.reasons.is_empty()) || c.unobserved {
                        counts.add(c.transport, lb.len() as u64);
                        continue;
                    }
                    counts.add(c.transport, lb.len() as u64);
                    let warns = c.transport == Transport::Rdma;
                    for r in &c.reasons {
                        let text = r.shown(warns);
                        if !reasons.contains(&text) {
                            reasons.push(text);
                        }
                    }
                }
                if reasons.is_empty() {
                    continue;
                }
                for (adapter, _) in la {
                    out.push(AdapterException {
                        adapter: adapter.clone(),
                        peer_host: other.host.clone(),
                        pairs: counts,
                        reasons: reasons.clone(),
                    });
                }
            }
        }
    }
    out.sort_by(|x, y| {
        (&x.adapter.host, &x.adapter.vm, x.adapter.adapter, &x.peer_host).cmp(&(
            &y.adapter.host,
            &y.adapter.vm,
            y.adapter.adapter,
            &y.peer_host,
        ))
    });
    out
}

/// Every fleet check the registry lists and `selection` keeps, judged in its order.
pub(super) fn fleet_checks(fleet: &Fleet, selection: &crate::diagnose::Selection) -> Vec<Check> {
    CheckId::ALL
        .iter()
        .filter(|c| selection.judges(**c))
        .filter_map(|c| match c.judge() {
            Judge::Fleet(judge) => judge(fleet),
            Judge::Host(_) | Judge::HostWhenApplicable(_) => None,
        })
        .collect()
}

/// A failing fleet check makes the hosts it names (`named`, one set per check) problems.
pub(super) fn mark_hosts(hosts: &mut [HostDiagnosis], checks: &[Check], named: &[BTreeSet<usize>]) {
    for (c, named) in checks.iter().zip(named) {
        for &i in named {
            if let Some(h) = hosts.get_mut(i) {
                if !h.fleet_failures.contains(&c.id) {
                    h.fleet_failures.push(c.id);
                }
                if matches!(h.status, HostStatus::Ok | HostStatus::Incomplete) {
                    h.status = HostStatus::Problems;
                }
            }
        }
    }
}

pub(super) fn duplicate_hosts(nets: &[Net]) -> BTreeSet<usize> {
    let mut by_address: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, n) in nets.iter().enumerate() {
        if let Some(a) = &n.address {
            by_address.entry(a.as_str()).or_default().push(i);
        }
    }
    by_address.into_values().filter(|v| v.len() > 1).flatten().collect()
}
