//! Across hosts: the transport between adapters of different VMs, and the fleet checks
//! (`fleet/checks.rs`, each listed in the check registry) that judge it and the hosts'
//! PVRDMA vmknics.
//!
//! The transport is not a list of adapter pairs (that grows with the square of the adapter
//! count: 2000 adapters make 2 million pairs). Adapters that share a host, a verdict, a
//! vDS and a RoCE version behave the same towards any peer, so pairs are classified once
//! per such *profile* pair and counted: per host pair and class ([`HostPairTransport`]),
//! and, only where a pair is not `rdma` or draws a warning, per adapter and peer host with
//! the reasons ([`AdapterException`]). Both grow linearly with the adapters as long as
//! the exceptions are few; they are the fleet's problems, each listed where it is (a fleet
//! where every adapter falls back lists every adapter against every host). Pairs unknown
//! only because a host was read without SSH are not exceptions: the report says once that
//! such hosts' transport was not observed.
//!
//! A pair that a failing fleet check breaks (different vDSes, duplicate vmknic addresses,
//! RoCE v1 between subnets) is `blocked`, never `rdma`, and its hosts are not healthy.
use super::probe::{Probe, ProbeStatus};
use super::{ipv4_network, AdapterRef, Check, CheckId, HostDiagnosis, HostStatus, Judge, Status, Transport, Verdict};
use pairs::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

pub(super) mod checks;
mod pairs;
#[cfg(test)]
mod tests;

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
    a: String,
    /// The other host (`a` again for the pairs within one host).
    b: String,
    /// The pair counts by class.
    #[serde(flatten)]
    pub pairs: TransportCounts,
}

impl HostPairTransport {
    /// One host of the pair.
    pub fn a(&self) -> &str {
        &self.a
    }

    /// The other host (`a` again for the pairs within one host).
    pub fn b(&self) -> &str {
        &self.b
    }
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

/// An adapter of a configuration-only host whose configuration predicts the HCA: its
/// transport is unknown, but its configured switch and RoCE version are judged with the
/// adapters on the HCA.
const PREDICTED_HCA: u8 = 3;

impl Profile {
    /// On the HCA, or configured to be: what the configuration checks across hosts compare.
    fn on_hca_or_predicted(&self) -> bool {
        self.verdict == 0 || self.verdict == PREDICTED_HCA
    }

    /// Its transport is not known.
    fn unknown(&self) -> bool {
        self.verdict == 2 || self.verdict == PREDICTED_HCA
    }
}

fn profile(a: &super::Adapter) -> Profile {
    let predicted = a.verdict == Verdict::Unknown && a.predicted == Some(Verdict::Hca);
    Profile {
        verdict: if predicted {
            PREDICTED_HCA
        } else {
            verdict_code(a.verdict)
        },
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

/// One reason a pair is not plain rdma, and the fleet check that blocks the pair for it
/// (`None`: a TCP fallback, an unknown verdict, a warning).
struct Reason {
    text: String,
    blocks: Option<CheckId>,
}

impl Reason {
    /// The reason as the transport exceptions word it: the fleet check that decided it
    /// first (`pvrdma-same-vds fails: ...`, `roce-version-pair warns: ...`), so nobody has
    /// to guess which check to look at.
    fn shown(&self, warns: bool) -> String {
        match (self.blocks, warns) {
            (Some(id), _) => format!("{id} fails: {}", self.text),
            (None, true) => format!("{ROCE_PAIR} warns: {}", self.text),
            (None, false) => self.text.clone(),
        }
    }
}

/// Why a pair is what it is: the class and the reasons.
struct Class {
    transport: Transport,
    reasons: Vec<Reason>,
    /// The RoCE versions of the two ends differ (and nothing blocks the pair): what
    /// roce-version-pair warns about.
    roce_mismatch: Option<String>,
    /// Unknown only because an end was read without SSH while its configuration predicts
    /// the HCA: nothing found against the pair. The report says once that such hosts'
    /// transport was not observed; listing each of their pairs would say it for every
    /// pair of the fleet (a million rows for 1,000 hosts).
    unobserved: bool,
}

impl Class {
    /// The fleet checks that block the pair.
    fn blocked_by(&self) -> impl Iterator<Item = CheckId> + '_ {
        self.reasons.iter().filter_map(|r| r.blocks)
    }
}

/// One end of a pair: its host, adapter profile, PVRDMA vmknic, and, for an adapter that
/// is not on the HCA, what decided its verdict ([`Fleet::cause`]).
struct End<'a> {
    host: &'a str,
    profile: &'a Profile,
    net: &'a Net,
    cause: Option<&'a str>,
}

impl End<'_> {
    /// An adapter that falls back to TCP: what decided it is vsish's `Physical HCA
    /// available` of that adapter; the cause after it is the host check that fails there,
    /// or the adapter's own reason.
    fn fallback(&self) -> Option<Reason> {
        (self.profile.verdict == 1).then(|| Reason {
            text: format!(
                "the adapter on {} falls back to TCP (vsish `Physical HCA available:0`): {}",
                self.host,
                self.cause.unwrap_or("cause unknown")
            ),
            blocks: None,
        })
    }

    /// An adapter without a verdict: its own reason, else `otherwise`.
    fn no_verdict(&self, otherwise: &str) -> Reason {
        Reason {
            text: format!(
                "the adapter on {} has no verdict: {}",
                self.host,
                self.cause.unwrap_or(otherwise)
            ),
            blocks: None,
        }
    }
}

/// `cut`: the path probe found the two hosts' PVRDMA vmknics unreachable from each other.
fn classify(x: End, y: End, cut: bool) -> Class {
    let mut c = Class {
        transport: Transport::Rdma,
        reasons: Vec::new(),
        roce_mismatch: None,
        unobserved: false,
    };
    let tcp: Vec<Reason> = [x.fallback(), y.fallback()].into_iter().flatten().collect();
    if !tcp.is_empty() {
        c.transport = Transport::Tcp;
        c.reasons = tcp;
        return c;
    }
    if x.profile.verdict == 2 || y.profile.verdict == 2 {
        c.transport = Transport::Unknown;
        let who = if x.profile.verdict == 2 { &x } else { &y };
        c.reasons
            .push(who.no_verdict("vsish gave no readable `Physical HCA available`"));
        return c;
    }
    c.reasons = blocking_reasons(&x, &y, cut);
    if c.blocked_by().next().is_some() {
        c.transport = Transport::Blocked;
        return c;
    }
    let (a, b) = (x.profile, y.profile);
    if let (Some(1), Some(2)) | (Some(2), Some(1)) = (a.roce, b.roce) {
        let text = format!(
            "RoCE v{} on {} and v{} on {} (a version mismatch whose effect the PVRDMA documentation does not describe)",
            a.roce.unwrap_or(0),
            x.host,
            b.roce.unwrap_or(0),
            y.host
        );
        c.roce_mismatch = Some(text.clone());
        c.reasons.push(Reason { text, blocks: None });
    }
    // Configured for the HCA on a host read without SSH: nothing in the configuration
    // blocks the pair, but which transport it uses was not observed.
    if a.unknown() || b.unknown() {
        c.transport = Transport::Unknown;
        c.unobserved = c.reasons.is_empty();
        let who = if a.unknown() { &x } else { &y };
        c.reasons.push(who.no_verdict(super::adapters::TRANSPORT_NEEDS_SSH));
    }
    c
}

/// What blocks a pair of adapters on the HCA, each with the check across hosts that
/// judges it: different switches, one address for both vmknics, RoCE v1 across subnets,
/// and (`cut`) a probe that found no path.
fn blocking_reasons(x: &End, y: &End, cut: bool) -> Vec<Reason> {
    let (ha, a, na) = (x.host, x.profile, x.net);
    let (hb, b, nb) = (y.host, y.profile, y.net);
    let reason = |text: String, blocks: CheckId| Reason {
        text,
        blocks: Some(blocks),
    };
    let mut reasons = Vec::new();
    if let (Some(sa), Some(sb)) = (&a.switch, &b.switch) {
        if !sa.same(sb) {
            reasons.push(reason(
                format!(
                    "the ports are on different switches ({} on {ha}, {} on {hb}); PVRDMA needs both VMs on the same vDS",
                    sa.label(),
                    sb.label()
                ),
                SAME_VDS,
            ));
        }
    }
    if let (Some(x), Some(y)) = (&na.address, &nb.address) {
        if x == y {
            reasons.push(reason(
                format!("the PVRDMA vmknics of {ha} and {hb} have the same IPv4 address {x}"),
                IPV4_UNIQUE,
            ));
        }
    }
    if let (Some(x), Some(y)) = (&na.network, &nb.network) {
        if x != y && (a.roce == Some(1) || b.roce == Some(1)) {
            reasons.push(reason(
                format!(
                    "RoCE v1 is not routable and the PVRDMA vmknics are in different subnets ({x} on {ha}, {y} on {hb})"
                ),
                SUBNETS,
            ));
        }
    }
    if cut {
        reasons.push(reason(
            format!("the PVRDMA vmknics of {ha} and {hb} do not reach each other (--probe: no reply to vmkping)"),
            REACHABILITY,
        ));
    }
    reasons
}

const SAME_VDS: CheckId = CheckId::PvrdmaSameVds;
const IPV4_UNIQUE: CheckId = CheckId::VmknicIpv4Unique;
const SUBNETS: CheckId = CheckId::VmknicSubnets;
const ROCE_PAIR: CheckId = CheckId::RoceVersionPair;
const REACHABILITY: CheckId = CheckId::VmknicReachability;

/// Profiles of one host with their adapters.
type HostProfiles<'a> = BTreeMap<Profile, Vec<(AdapterRef, &'a super::Adapter)>>;

/// Two host names as an unordered pair (the key of the probe's unreachable pairs).
fn host_pair(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// What the fleet checks judge (their [`Judge::Fleet`] functions take it): the diagnosed
/// hosts, their PVRDMA vmknics and adapter profiles, the tally of their adapter pairs,
/// and the path probe's results.
pub(in crate::diagnose) struct Fleet<'a> {
    hosts: &'a [HostDiagnosis],
    nets: Vec<Net>,
    profiles: Vec<HostProfiles<'a>>,
    /// Per host, what decided each profile whose adapters are not on the HCA.
    causes: Vec<BTreeMap<Profile, String>>,
    tally: PairTally,
    probes: &'a [Probe],
}

impl Fleet<'_> {
    /// [`classify`] of adapter profile `a` of host `i` against profile `b` of host `j`.
    fn classify(
        &self,
        (i, a): (usize, &Profile),
        (j, b): (usize, &Profile),
        cut: &dyn Fn(&str, &str) -> bool,
    ) -> Class {
        let (ha, hb) = (&self.hosts[i].host, &self.hosts[j].host);
        classify(
            End {
                host: ha,
                profile: a,
                net: &self.nets[i],
                cause: self.causes[i].get(a).map(String::as_str),
            },
            End {
                host: hb,
                profile: b,
                net: &self.nets[j],
                cause: self.causes[j].get(b).map(String::as_str),
            },
            cut(ha, hb),
        )
    }
}

/// Why the adapters of each profile of host `h` that are not on the HCA are so, for the
/// transport lines: the host checks failing on `h` when any (a fallback's cause), else the
/// adapters' own reason (their port, checks that could not be evaluated, or that no cause
/// is known), with how many other reasons its adapters give.
fn causes(h: &HostDiagnosis, profiles: &HostProfiles) -> BTreeMap<Profile, String> {
    let failing: Vec<CheckId> = h
        .checks
        .iter()
        .filter(|c| c.status == Status::Fail)
        .map(|c| c.id)
        .collect();
    let mut out = BTreeMap::new();
    for (p, adapters) in profiles {
        if p.verdict == verdict_code(Verdict::Hca) {
            continue;
        }
        let cause = if p.verdict == verdict_code(Verdict::TcpFallback) && !failing.is_empty() {
            let (s, verb) = if failing.len() == 1 {
                ("", "fails")
            } else {
                ("s", "fail")
            };
            format!("host check{s} {} {verb} on {}", super::join_ids(&failing), h.host)
        } else {
            let mut reasons: Vec<&str> = Vec::new();
            for r in adapters.iter().flat_map(|(_, a)| &a.reasons) {
                if !reasons.contains(&r.as_str()) {
                    reasons.push(r);
                }
            }
            match reasons.as_slice() {
                [] => continue,
                [one] => (*one).to_string(),
                [first, rest @ ..] => format!(
                    "{first} (other adapters of {} like it give {} more reason{})",
                    h.host,
                    rest.len(),
                    if rest.len() == 1 { "" } else { "s" }
                ),
            }
        };
        out.insert(p.clone(), cause);
    }
    out
}

/// What the adapter pairs across hosts add up to, for the fleet checks.
#[derive(Default)]
struct PairTally {
    /// Fleet check → the pairs it blocks, and the hosts in them.
    blocked: BTreeMap<CheckId, (u64, BTreeSet<usize>)>,
    /// Pairs with RoCE v1 at one end and v2 at the other.
    roce_mismatch: u64,
    /// Fleet check → one pair's reason, quoted in its summary.
    examples: BTreeMap<CheckId, String>,
}

impl Fleet<'_> {
    /// Whether at least two hosts have PVRDMA adapters (else no pair crosses hosts).
    fn adapters_on_two_hosts(&self) -> bool {
        self.profiles.iter().filter(|p| !p.is_empty()).count() >= 2
    }

    /// The hosts a failing fleet check names or whose pairs it blocks.
    fn hosts_named_by(&self, c: &Check) -> BTreeSet<usize> {
        let mut named: BTreeSet<usize> = self.tally.blocked.get(&c.id).map(|b| b.1.clone()).unwrap_or_default();
        if c.id == IPV4_UNIQUE {
            named.extend(duplicate_hosts(&self.nets));
        }
        named
    }
}

/// The transport summary and the fleet checks; a failing fleet check makes the hosts it
/// names (or whose pairs it blocks) `problems`. `probes`: the path probe's results (empty
/// when it did not run).
pub(super) fn judge(
    hosts: &mut [HostDiagnosis],
    probes: &[Probe],
    selection: &super::Selection,
) -> (Vec<Check>, TransportSummary) {
    let (checks, summary, named) = {
        let profiles: Vec<HostProfiles> = hosts.iter().map(host_profiles).collect();
        let fleet = Fleet {
            hosts: &*hosts,
            nets: hosts.iter().map(net).collect(),
            causes: hosts.iter().zip(&profiles).map(|(h, p)| causes(h, p)).collect(),
            profiles,
            tally: PairTally::default(),
            probes,
        };
        let unreachable = unreachable_pairs(probes);
        let cut = |a: &str, b: &str| !unreachable.is_empty() && unreachable.contains(&host_pair(a, b));
        let mut summary = TransportSummary::default();
        let tally = tally_pairs(&fleet, &cut, &mut summary);
        summary.exceptions = exceptions(&fleet, &cut);
        let fleet = Fleet { tally, ..fleet };
        let checks = fleet_checks(&fleet, selection);
        let named: Vec<BTreeSet<usize>> = checks
            .iter()
            .map(|c| {
                if c.status == Status::Fail {
                    fleet.hosts_named_by(c)
                } else {
                    BTreeSet::new()
                }
            })
            .collect();
        (checks, summary, named)
    };
    mark_hosts(hosts, &checks, &named);
    (checks, summary)
}
