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
    check, ev, ipv4_network, with_remedy, AdapterRef, Check, CheckId, HostDiagnosis, HostStatus, Status, Transport,
    Verdict,
};
use crate::catalogue as cat;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

mod checks;
#[cfg(test)]
mod tests;
use checks::*;

/// Adapter-pair counts by transport class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TransportCounts {
    /// Pairs on one host: the VMs talk by memory copy, the HCA is not used.
    pub(crate) memcpy: u64,
    /// Pairs on different hosts, both adapters on the HCA and nothing breaking the path.
    pub(crate) rdma: u64,
    /// Pairs on different hosts where at least one adapter falls back to TCP.
    pub(crate) tcp: u64,
    /// Both adapters on the HCA, but a failing fleet check breaks the path between them.
    pub(crate) blocked: u64,
    /// Pairs whose transport cannot be told (an adapter's verdict is unknown).
    pub(crate) unknown: u64,
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

    pub(crate) fn total(&self) -> u64 {
        self.memcpy + self.rdma + self.tcp + self.blocked + self.unknown
    }
}

/// The adapter pairs (of different VMs) between two hosts, by class; `a == b` for the
/// pairs within one host (always `memcpy`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct HostPairTransport {
    /// One host.
    a: String,
    /// The other host (`a` again for the pairs within one host).
    b: String,
    /// The pair counts by class.
    #[serde(flatten)]
    pub pairs: TransportCounts,
}

/// One adapter's pairs with the adapters of one other host, listed only when some of them
/// are not `rdma` or draw a warning; `reasons` says why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct AdapterException {
    /// The adapter.
    pub(crate) adapter: AdapterRef,
    /// The other host whose adapters it pairs with.
    pub(crate) peer_host: String,
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
    /// The counts per host pair where some adapter pair is not `rdma` (a pair of hosts
    /// not listed has only `rdma` pairs, counted in `totals`: a fleet of N healthy hosts
    /// would otherwise list N(N-1)/2 rows), and within each host (`memcpy`).
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
            "RoCE v{} on {ha} and v{} on {hb} (a version mismatch whose symptom VMware's PVRDMA documentation does not describe)",
            a.roce.unwrap_or(0),
            b.roce.unwrap_or(0)
        ));
    }
    c
}

const SAME_VDS: &str = CheckId::PvrdmaSameVds.id();
const IPV4_UNIQUE: &str = CheckId::VmknicIpv4Unique.id();
const SUBNETS: &str = CheckId::VmknicSubnets.id();
const ROCE_PAIR: &str = CheckId::RoceVersionPair.id();
const REACHABILITY: &str = super::probe::CHECK_ID;

/// Profiles of one host with their adapters.
type HostProfiles<'a> = BTreeMap<Profile, Vec<(AdapterRef, &'a super::Adapter)>>;

/// The transport summary, the pair-level fleet checks, and the host statuses a failing
/// fleet check changes.
/// Two host names as an unordered pair (the key of `unreachable` in [`judge`]).
pub(super) fn host_pair(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// `extra`: fleet checks judged elsewhere (the path probe's); `unreachable`: host pairs
/// (sorted names) whose PVRDMA vmknics the probe found unable to reach each other.
pub(super) fn judge(
    hosts: &mut [HostDiagnosis],
    subnets: Option<Check>,
    extra: Vec<Check>,
    unreachable: &BTreeSet<(String, String)>,
) -> (Vec<Check>, TransportSummary) {
    let cut = |a: &str, b: &str| !unreachable.is_empty() && unreachable.contains(&host_pair(a, b));
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
            summary.totals.merge(&pairs);
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
            summary.totals.merge(&pairs);
            if pairs.total() > pairs.rdma {
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
