//! Across hosts: the fleet checks that judge pairs of hosts (`vmknic-ipv4-unique`,
//! `pvrdma-same-vds`, `roce-version-pair`, with `vmknic-subnets` in the parent module) and
//! the transport between adapters of different VMs.
//!
//! The transport is not a list of adapter pairs (that grows with the square of the adapter
//! count: 2000 adapters make 2 million pairs). Adapters that share a host, a verdict, a
//! vDS and a RoCE version behave the same towards any peer, so pairs are classified once
//! per such *profile* pair and counted: per host pair and class ([`HostPairTransport`]),
//! and, only where a pair is not `rdma` or draws a warning, per adapter and peer host with
//! the reasons ([`AdapterException`]). Both grow linearly with the adapters.
//!
//! A pair that a failing fleet check breaks (different vDSes, duplicate vmknic addresses,
//! RoCE v1 between subnets) is `blocked`, never `rdma`, and its hosts are not healthy.
use super::{
    check, ev, ipv4_network, with_remedy, AdapterRef, Check, HostDiagnosis, HostStatus, Status, Transport, Verdict,
};
use crate::catalogue as cat;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Adapter-pair counts by transport class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TransportCounts {
    /// Pairs on one host: the VMs talk by memory copy, the HCA is not used.
    pub memcpy: u64,
    /// Pairs on different hosts, both adapters on the HCA and nothing breaking the path.
    pub rdma: u64,
    /// Pairs on different hosts where at least one adapter falls back to TCP.
    pub tcp: u64,
    /// Both adapters on the HCA, but a failing fleet check breaks the path between them.
    pub blocked: u64,
    /// Pairs whose transport cannot be told (an adapter's verdict is unknown).
    pub unknown: u64,
}

impl TransportCounts {
    fn add(&mut self, t: Transport, n: u64) {
        match t {
            Transport::Memcpy => self.memcpy += n,
            Transport::Rdma => self.rdma += n,
            Transport::Tcp => self.tcp += n,
            Transport::Blocked => self.blocked += n,
            Transport::Unknown => self.unknown += n,
        }
    }

    fn merge(&mut self, o: &TransportCounts) {
        self.memcpy += o.memcpy;
        self.rdma += o.rdma;
        self.tcp += o.tcp;
        self.blocked += o.blocked;
        self.unknown += o.unknown;
    }

    pub fn total(&self) -> u64 {
        self.memcpy + self.rdma + self.tcp + self.blocked + self.unknown
    }
}

/// The adapter pairs (of different VMs) between two hosts, by class; `a == b` for the
/// pairs within one host (always `memcpy`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct HostPairTransport {
    /// One host.
    pub a: String,
    /// The other host (`a` again for the pairs within one host).
    pub b: String,
    /// The pair counts by class.
    #[serde(flatten)]
    pub pairs: TransportCounts,
}

/// One adapter's pairs with the adapters of one other host, listed only when some of them
/// are not `rdma` or draw a warning; `reasons` says why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct AdapterException {
    /// The adapter.
    pub adapter: AdapterRef,
    /// The other host whose adapters it pairs with.
    pub peer_host: String,
    /// Its pairs with that host's adapters, by class.
    pub pairs: TransportCounts,
    /// Why those pairs are not plain rdma (or what the warning is).
    pub reasons: Vec<String>,
}

/// What replaced the pair list in the report (`transport` in the JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TransportSummary {
    /// Every adapter pair of different VMs, by class.
    pub totals: TransportCounts,
    /// The counts per host pair (and within each host).
    pub host_pairs: Vec<HostPairTransport>,
    /// Per adapter and peer host, only where a pair is not plain rdma or draws a warning.
    pub exceptions: Vec<AdapterException>,
}

/// The switch an adapter's port is on: vDS name and, when known, its `VDS ID`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Switch {
    name: String,
    id: Option<String>,
}

impl Switch {
    /// Two ports are on one vDS when names agree and, where both are known, the UUIDs.
    fn same(&self, o: &Switch) -> bool {
        self.name == o.name && (self.id.is_none() || o.id.is_none() || self.id == o.id)
    }

    fn label(&self) -> String {
        match &self.id {
            Some(id) => format!("{} ({id})", self.name),
            None => self.name.clone(),
        }
    }
}

/// Adapters that behave alike towards any peer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Profile {
    verdict: u8,
    switch: Option<Switch>,
    roce: Option<u32>,
}

fn verdict_code(v: Verdict) -> u8 {
    match v {
        Verdict::Hca => 0,
        Verdict::TcpFallback => 1,
        Verdict::Unknown => 2,
    }
}

fn profile(a: &super::Adapter) -> Profile {
    Profile {
        verdict: verdict_code(a.verdict),
        switch: a.port.as_ref().and_then(|p| {
            Some(Switch {
                name: p.vswitch.clone()?,
                id: p.vds_id.clone(),
            })
        }),
        roce: a.roce_version,
    }
}

/// The PVRDMA vmknic facts of one host that decide reachability.
struct Net {
    address: Option<String>,
    network: Option<String>,
}

fn net(h: &HostDiagnosis) -> Net {
    let v = h.pvrdma_vmknic.as_ref();
    let address = v.and_then(|v| v.ipv4.clone()).filter(|a| !a.trim().is_empty());
    let network = v
        .and_then(|v| v.ipv4.as_deref().zip(v.netmask.as_deref()))
        .and_then(|(a, m)| ipv4_network(a, m));
    Net { address, network }
}

/// Why a pair is what it is: the class, the reasons, and the fleet check that blocks it.
struct Class {
    transport: Transport,
    reasons: Vec<String>,
    blocked_by: Vec<&'static str>,
}

/// `cut`: the path probe found the two hosts' PVRDMA vmknics unreachable from each other.
fn classify(ha: &str, a: &Profile, na: &Net, hb: &str, b: &Profile, nb: &Net, cut: bool) -> Class {
    let mut c = Class {
        transport: Transport::Rdma,
        reasons: Vec::new(),
        blocked_by: Vec::new(),
    };
    let fallback =
        |h: &str, p: &Profile| (p.verdict == 1).then(|| format!("the adapter on {h} has no HCA (tcp-fallback)"));
    let tcp: Vec<String> = [fallback(ha, a), fallback(hb, b)].into_iter().flatten().collect();
    if !tcp.is_empty() {
        c.transport = Transport::Tcp;
        c.reasons = tcp;
        return c;
    }
    if a.verdict == 2 || b.verdict == 2 {
        c.transport = Transport::Unknown;
        let who = if a.verdict == 2 { ha } else { hb };
        c.reasons.push(format!("the adapter's verdict on {who} is unknown"));
        return c;
    }
    if let (Some(sa), Some(sb)) = (&a.switch, &b.switch) {
        if !sa.same(sb) {
            c.reasons.push(format!(
                "the ports are on different switches ({} on {ha}, {} on {hb}); PVRDMA needs both VMs on the same vDS",
                sa.label(),
                sb.label()
            ));
            c.blocked_by.push(SAME_VDS);
        }
    }
    if let (Some(x), Some(y)) = (&na.address, &nb.address) {
        if x == y {
            c.reasons.push(format!(
                "the PVRDMA vmknics of {ha} and {hb} have the same IPv4 address {x}"
            ));
            c.blocked_by.push(IPV4_UNIQUE);
        }
    }
    if let (Some(x), Some(y)) = (&na.network, &nb.network) {
        if x != y && (a.roce == Some(1) || b.roce == Some(1)) {
            c.reasons.push(format!(
                "RoCE v1 is not routable and the PVRDMA vmknics are in different subnets ({x} on {ha}, {y} on {hb})"
            ));
            c.blocked_by.push(SUBNETS);
        }
    }
    if cut {
        c.reasons.push(format!(
            "the PVRDMA vmknics of {ha} and {hb} do not reach each other (--probe: no reply to vmkping)"
        ));
        c.blocked_by.push(REACHABILITY);
    }
    if !c.blocked_by.is_empty() {
        c.transport = Transport::Blocked;
        return c;
    }
    if let (Some(1), Some(2)) | (Some(2), Some(1)) = (a.roce, b.roce) {
        c.reasons.push(format!(
            "RoCE v{} on {ha} and v{} on {hb} (a version mismatch whose symptom the seeds do not describe)",
            a.roce.unwrap_or(0),
            b.roce.unwrap_or(0)
        ));
    }
    c
}

const SAME_VDS: &str = "pvrdma-same-vds";
const IPV4_UNIQUE: &str = "vmknic-ipv4-unique";
const SUBNETS: &str = "vmknic-subnets";
const ROCE_PAIR: &str = "roce-version-pair";
const REACHABILITY: &str = crate::probe::CHECK_ID;

/// Profiles of one host with their adapters.
type HostProfiles<'a> = BTreeMap<Profile, Vec<(AdapterRef, &'a super::Adapter)>>;

/// The transport summary, the pair-level fleet checks, and the host statuses a failing
/// fleet check changes.
/// `extra`: fleet checks judged elsewhere (the path probe's); `unreachable`: host pairs
/// (sorted names) whose PVRDMA vmknics the probe found unable to reach each other.
pub(super) fn judge(
    hosts: &mut [HostDiagnosis],
    subnets: Option<Check>,
    extra: Vec<Check>,
    unreachable: &BTreeSet<(String, String)>,
) -> (Vec<Check>, TransportSummary) {
    let cut = |a: &str, b: &str| {
        let key = if a <= b {
            (a.to_string(), b.to_string())
        } else {
            (b.to_string(), a.to_string())
        };
        unreachable.contains(&key)
    };
    let nets: Vec<Net> = hosts.iter().map(net).collect();
    let profiles: Vec<HostProfiles> = hosts
        .iter()
        .map(|h| {
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
        })
        .collect();
    let mut summary = TransportSummary::default();
    // Fleet-check id → pairs it blocks, and the hosts in them.
    let mut blocked: BTreeMap<&'static str, (u64, BTreeSet<usize>)> = BTreeMap::new();
    let mut roce_mismatch: u64 = 0;
    let mut examples: BTreeMap<&'static str, String> = BTreeMap::new();
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
            summary.host_pairs.push(HostPairTransport {
                a: h.host.clone(),
                b: h.host.clone(),
                pairs,
            });
        }
        for j in i + 1..hosts.len() {
            let mut pairs = TransportCounts::default();
            for (pa, la) in &profiles[i] {
                for (pb, lb) in &profiles[j] {
                    let c = classify(
                        &h.host,
                        pa,
                        &nets[i],
                        &hosts[j].host,
                        pb,
                        &nets[j],
                        cut(&h.host, &hosts[j].host),
                    );
                    let n = la.len() as u64 * lb.len() as u64;
                    pairs.add(c.transport, n);
                    for id in &c.blocked_by {
                        let e = blocked.entry(id).or_default();
                        e.0 += n;
                        e.1.insert(i);
                        e.1.insert(j);
                        if let Some(r) = c.reasons.iter().find(|r| reason_of(r) == *id) {
                            examples.entry(id).or_insert_with(|| r.clone());
                        }
                    }
                    if c.transport == Transport::Rdma && !c.reasons.is_empty() {
                        roce_mismatch += n;
                        examples.entry(ROCE_PAIR).or_insert_with(|| c.reasons.join("; "));
                    }
                }
            }
            if pairs.total() > 0 {
                summary.host_pairs.push(HostPairTransport {
                    a: h.host.clone(),
                    b: hosts[j].host.clone(),
                    pairs,
                });
            }
        }
    }
    // Exceptions: per adapter and peer host, where a pair is not clean rdma.
    for (i, h) in hosts.iter().enumerate() {
        for (pa, la) in &profiles[i] {
            for (j, other) in hosts.iter().enumerate() {
                if i == j {
                    continue;
                }
                let mut counts = TransportCounts::default();
                let mut reasons: Vec<String> = Vec::new();
                for (pb, lb) in &profiles[j] {
                    let c = classify(
                        &h.host,
                        pa,
                        &nets[i],
                        &other.host,
                        pb,
                        &nets[j],
                        cut(&h.host, &other.host),
                    );
                    if c.transport == Transport::Rdma && c.reasons.is_empty() {
                        counts.add(Transport::Rdma, lb.len() as u64);
                        continue;
                    }
                    counts.add(c.transport, lb.len() as u64);
                    for r in c.reasons {
                        if !reasons.contains(&r) {
                            reasons.push(r);
                        }
                    }
                }
                if reasons.is_empty() {
                    continue;
                }
                for (adapter, _) in la {
                    summary.exceptions.push(AdapterException {
                        adapter: adapter.clone(),
                        peer_host: other.host.clone(),
                        pairs: counts,
                        reasons: reasons.clone(),
                    });
                }
            }
        }
    }
    summary.exceptions.sort_by(|x, y| {
        (&x.adapter.host, &x.adapter.vm, x.adapter.adapter, &x.peer_host).cmp(&(
            &y.adapter.host,
            &y.adapter.vm,
            y.adapter.adapter,
            &y.peer_host,
        ))
    });
    for hp in &summary.host_pairs {
        let p = hp.pairs;
        summary.totals.merge(&p);
    }

    let mut checks: Vec<Check> = subnets.into_iter().collect();
    if let Some(c) = ipv4_unique(hosts, &nets) {
        checks.push(c);
    }
    let with_adapters = profiles.iter().filter(|p| !p.is_empty()).count();
    if with_adapters >= 2 {
        checks.push(same_vds(&profiles, blocked.get(SAME_VDS), examples.get(SAME_VDS)));
        checks.push(roce_pair(&profiles, roce_mismatch, examples.get(ROCE_PAIR)));
    }
    checks.extend(extra);
    // A failing fleet check makes the hosts it names (or whose pairs it blocks) problems.
    for c in checks.iter().filter(|c| c.status == Status::Fail) {
        let mut named: BTreeSet<usize> = blocked.get(c.id).map(|b| b.1.clone()).unwrap_or_default();
        if c.id == IPV4_UNIQUE {
            named.extend(duplicate_hosts(&nets));
        }
        for i in named {
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
    (checks, summary)
}

/// Which fleet check a blocking reason comes from (reasons are built in [`classify`]).
fn reason_of(r: &str) -> &'static str {
    if r.contains("different switches") {
        SAME_VDS
    } else if r.contains("same IPv4 address") {
        IPV4_UNIQUE
    } else {
        SUBNETS
    }
}

fn duplicate_hosts(nets: &[Net]) -> BTreeSet<usize> {
    let mut by_address: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, n) in nets.iter().enumerate() {
        if let Some(a) = &n.address {
            by_address.entry(a.as_str()).or_default().push(i);
        }
    }
    by_address.into_values().filter(|v| v.len() > 1).flatten().collect()
}

/// `vmknic-ipv4-unique`: two hosts whose PVRDMA vmknics share an address cannot reach
/// each other (DOMAIN §2.4: the vmknics of all hosts must reach each other).
fn ipv4_unique(hosts: &[HostDiagnosis], nets: &[Net]) -> Option<Check> {
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
fn same_vds(profiles: &[HostProfiles], blocked: Option<&(u64, BTreeSet<usize>)>, example: Option<&String>) -> Check {
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
                    "{pairs} adapter pairs across hosts are on different switches ({listing}); e.g. {}",
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
fn roce_pair(profiles: &[HostProfiles], mismatched: u64, example: Option<&String>) -> Check {
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
                    "{mismatched} adapter pairs across hosts use RoCE v1 at one end and v2 at the other ({listing}); e.g. {}",
                    example.map_or("", String::as_str)
                ),
                evidence,
            ),
            "with the VMs powered off, set every PVRDMA adapter's Device Protocol to the same RoCE version (RoCE v2 in the seed guides)",
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

#[cfg(test)]
mod tests {
    use super::super::{fleet_diagnosis, Adapter, HostDiagnosis, PortView, PvrdmaVmknic, Vm};
    use super::*;

    fn adapter(verdict: Verdict, switch: &str, roce: u32) -> Adapter {
        Adapter {
            index: 0,
            verdict,
            reasons: Vec::new(),
            mac: None,
            roce_version: Some(roce),
            active_mtu: None,
            port: Some(PortView {
                vswitch: Some(switch.to_string()),
                vds_id: None,
                portgroup: None,
                uplink: None,
            }),
        }
    }

    fn host(name: &str, ip: &str, vms: Vec<Adapter>) -> HostDiagnosis {
        HostDiagnosis {
            host: name.to_string(),
            status: HostStatus::Ok,
            error: None,
            esxi_version: None,
            checks: Vec::new(),
            vms: vms
                .into_iter()
                .enumerate()
                .map(|(i, a)| Vm {
                    name: format!("{name}-vm{i:03}"),
                    world_id: Some(i as u64),
                    config_file: None,
                    adapters: vec![a],
                })
                .collect(),
            adapters_error: None,
            pvrdma_vmknic: Some(PvrdmaVmknic {
                name: "vmk1".into(),
                ipv4: Some(ip.into()),
                netmask: Some("255.255.255.0".into()),
                mtu: None,
            }),
            fleet_failures: Vec::new(),
            record_errors: Vec::new(),
            vms_error: None,
            incomplete_outputs: Vec::new(),
        }
    }

    #[test]
    fn counts_are_exact_and_exceptions_grow_linearly() {
        let n = 300;
        let healthy = |h: &str, ip: &str| host(h, ip, (0..n).map(|_| adapter(Verdict::Hca, "DS", 2)).collect());
        let mut third: Vec<Adapter> = (0..n - 1).map(|_| adapter(Verdict::Hca, "DS", 2)).collect();
        third.push(adapter(Verdict::TcpFallback, "DS", 2));
        let d = fleet_diagnosis(vec![
            healthy("a", "10.0.0.1"),
            healthy("b", "10.0.0.2"),
            host("c", "10.0.0.3", third),
        ]);
        let t = d.transport.totals;
        let n = n as u64;
        assert_eq!(t.memcpy, 3 * n * (n - 1) / 2);
        assert_eq!(t.tcp, 2 * n, "the fallback adapter's pairs with a and b");
        assert_eq!(t.rdma, n * n + 2 * n * (n - 1));
        // One exception per (adapter, peer host) touched by the fallback adapter: every
        // adapter of a and b towards c, and the fallback adapter towards a and b.
        assert_eq!(d.transport.exceptions.len() as u64, 2 * n + 2);
        assert_eq!(d.transport.host_pairs.len(), 6);
    }

    #[test]
    fn a_mismatch_warns_but_stays_rdma_and_different_switches_block() {
        let d = fleet_diagnosis(vec![
            host("a", "10.0.0.1", vec![adapter(Verdict::Hca, "DS", 2)]),
            host("b", "10.0.0.2", vec![adapter(Verdict::Hca, "DS", 1)]),
        ]);
        assert_eq!(d.transport.totals.rdma, 1);
        let c = d.fleet_checks.iter().find(|c| c.id == ROCE_PAIR).expect("roce pair");
        assert_eq!(c.status, Status::Warn);
        assert!(d.hosts.iter().all(|h| h.status == HostStatus::Ok));

        let d = fleet_diagnosis(vec![
            host("a", "10.0.0.1", vec![adapter(Verdict::Hca, "DS", 2)]),
            host("b", "10.0.0.2", vec![adapter(Verdict::Hca, "Other", 2)]),
        ]);
        assert_eq!(d.transport.totals.blocked, 1);
        let c = d.fleet_checks.iter().find(|c| c.id == SAME_VDS).expect("same vds");
        assert_eq!(c.status, Status::Fail);
        assert!(d.hosts.iter().all(|h| h.fleet_failures == [SAME_VDS]));
    }

    #[test]
    fn same_name_with_different_uuids_is_two_switches() {
        let a = Switch {
            name: "DS".into(),
            id: Some("50 aa".into()),
        };
        let b = Switch {
            name: "DS".into(),
            id: Some("50 bb".into()),
        };
        let unknown = Switch {
            name: "DS".into(),
            id: None,
        };
        assert!(!a.same(&b));
        assert!(a.same(&unknown) && unknown.same(&b));
    }
}
