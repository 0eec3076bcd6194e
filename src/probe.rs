//! The path probe (`--probe`): the only proof that the hosts' PVRDMA vmknics really reach
//! each other, jumbo frames included (DOMAIN §2 item 12). Off by default: vmkping changes
//! no configuration, but it sends packets.
//!
//! Pipeline: after collection, [`plan`] picks for every host the peers it pings (all of
//! them, or `--probe-sample K` of them on a ring of the sorted host names, so two runs
//! probe the same pairs). Each probe is one command line on the connection collection
//! used: a plain `vmkping -I <vmk> -c 3 -W 1 <ip>` and a don't-fragment
//! `vmkping -I <vmk> -d -s <MTU-28> -c 3 -W 1 <ip>`, framed with the house end markers
//! (see [`probe_command`]). The outputs are stored per host in [`ProbeCapture`] (and in a
//! bundle as `<host>/vmkping/<peer>.txt`), so `analyze` judges them exactly as the live
//! run did: [`results`] is a pure function of the captures and the host diagnoses.
//!
//! Values from a host (vmknic name, address, MTU) end up on another host's command line,
//! so they are validated here first: a vmknic is `vmkN`, an address is re-printed from a
//! parsed IPv4 address, the size is a number.
use crate::collect::{Failure, RawOutput};
use crate::diagnose::{Check, Evidence, HostDiagnosis, HostStatus, Status};
use pvrdma_parsers as p;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// Id of probe outputs (the evidence key and the bundle folder name).
pub const PROBE_ID: &str = "vmkping";
/// The fleet check's stable id.
pub const CHECK_ID: &str = "vmknic-reachability";
/// Echo requests per ping: enough to tell a lossy path from a dead one, few enough to
/// keep a probe to about three seconds.
pub const COUNT: u32 = 3;
/// Seconds vmkping waits for the last reply.
pub const WAIT_SECONDS: u32 = 1;
/// IPv4 (20) + ICMP (8) headers: the payload that fills an MTU exactly.
pub const HEADERS: u32 = 28;

/// What `--probe` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeOptions {
    /// `--probe-sample K`: each host probes K peers instead of all of them.
    pub sample: Option<usize>,
}

/// The probe outputs of one host (the pinging side).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeCapture {
    /// The peers this host was to probe, by host name, in plan order.
    pub peers: Vec<String>,
    /// The framed vmkping output per peer, for the peers actually probed.
    pub outputs: BTreeMap<String, RawOutput>,
    /// Why a planned probe produced no output (run stopped, connection lost), by peer.
    pub missing: BTreeMap<String, Failure>,
}

/// The PVRDMA end of one host, validated for use on a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub vmknic: String,
    pub ip: Ipv4Addr,
    /// The vmknic's MTU; `None` = unknown, then only the plain ping runs.
    pub mtu: Option<u32>,
}

/// `vmk` followed by digits: the only vmknic names ESXi creates, and safe in a shell line.
fn is_vmknic_name(name: &str) -> bool {
    name.strip_prefix("vmk")
        .is_some_and(|n| !n.is_empty() && n.len() <= 5 && n.chars().all(|c| c.is_ascii_digit()))
}

/// The host's usable PVRDMA vmknic, or why there is none (the `skipped` reason).
pub fn endpoint(h: &HostDiagnosis) -> Result<Endpoint, String> {
    if matches!(h.status, HostStatus::Unreachable | HostStatus::Error) {
        return Err(format!("{} was not reached", h.host));
    }
    let Some(v) = &h.pvrdma_vmknic else {
        return Err(format!("{} has no vmknic tagged for PVRDMA", h.host));
    };
    if !is_vmknic_name(&v.name) {
        return Err(format!("{}: {:?} is not a vmknic name", h.host, v.name));
    }
    let valid = h.checks.iter().find(|c| c.id == "pvrdma-vmknic-valid");
    if valid.is_some_and(|c| c.status == Status::Fail) {
        return Err(format!("{} {} is not usable (see pvrdma-vmknic-valid)", h.host, v.name));
    }
    let ip = v
        .ipv4
        .as_deref()
        .and_then(|a| a.trim().parse::<Ipv4Addr>().ok())
        .filter(|a| !a.is_unspecified() && !a.is_broadcast() && !a.is_multicast());
    let Some(ip) = ip else {
        return Err(format!("{} {} has no IPv4 address", h.host, v.name));
    };
    Ok(Endpoint {
        vmknic: v.name.clone(),
        ip,
        mtu: v.mtu.filter(|m| *m > HEADERS && *m <= 65535),
    })
}

/// The peers of every host, by host name: all others, or with `sample` the next K hosts
/// on a ring of the sorted names. Sorting makes the choice independent of argument order,
/// so two runs over the same fleet probe the same pairs and a baseline compares them.
pub fn plan(hosts: &[String], sample: Option<usize>) -> BTreeMap<String, Vec<String>> {
    let mut ring: Vec<&String> = hosts.iter().collect();
    ring.sort();
    ring.dedup();
    let n = ring.len();
    let k = sample.unwrap_or(n).min(n.saturating_sub(1));
    let mut out = BTreeMap::new();
    for (i, host) in ring.iter().enumerate() {
        let peers = (1..=k)
            .filter_map(|step| ring.get((i + step) % n).map(|p| (*p).clone()))
            .collect();
        out.insert((*host).clone(), peers);
    }
    out
}

/// The one command line that probes `to` from `from`: the plain ping, then (when the MTU
/// is known) the don't-fragment ping that fills the MTU, each framed with the end markers.
pub fn probe_command(from: &Endpoint, to: Ipv4Addr) -> String {
    let vmk = &from.vmknic;
    let mut line = format!(
        "echo '==> plain <=='; vmkping -I {vmk} -c {COUNT} -W {WAIT_SECONDS} {to} 2>&1; echo \"<== plain exit $? ==>\""
    );
    if let Some(mtu) = from.mtu {
        let size = mtu.saturating_sub(HEADERS);
        line.push_str(&format!(
            "; echo '==> jumbo <=='; vmkping -I {vmk} -d -s {size} -c {COUNT} -W {WAIT_SECONDS} {to} 2>&1; echo \"<== jumbo exit $? ==>\""
        ));
    }
    line
}

/// What a probe command line asks for: (vmknic, target, jumbo payload size). `None` for
/// anything that is not exactly a line [`probe_command`] builds, so the demo server and
/// the tests can tell a probe from any other command.
pub fn parse_probe_command(line: &str) -> Option<(String, Ipv4Addr, Option<u32>)> {
    let rest = line.split_once("vmkping -I ")?.1;
    let (vmk, rest) = rest.split_once(' ')?;
    let target = rest.split_once(" 2>&1")?.0.rsplit(' ').next()?;
    let ip: Ipv4Addr = target.parse().ok()?;
    let size = match line.split_once(" -d -s ") {
        Some((_, r)) => Some(r.split(' ').next()?.parse::<u32>().ok()?),
        None => None,
    };
    let mtu = match size {
        Some(s) => Some(s.checked_add(HEADERS)?),
        None => None,
    };
    let from = Endpoint {
        vmknic: vmk.to_string(),
        ip: Ipv4Addr::UNSPECIFIED,
        mtu,
    };
    (is_vmknic_name(vmk) && probe_command(&from, ip) == line).then(|| (vmk.to_string(), ip, size))
}

/// The `--list-checks` section of the probe: only sent with `--probe`.
pub fn list_checks_section() -> String {
    format!(
        "\nPath probe (only with --probe; sends {COUNT} ICMP echo requests per ping, changes nothing):\n\n\
         {PROBE_ID}\n    vmkping -I <vmk> -c {COUNT} -W {WAIT_SECONDS} <peer ip>\n    \
         vmkping -I <vmk> -d -s <MTU-{HEADERS}> -c {COUNT} -W {WAIT_SECONDS} <peer ip>\n    \
         from each host's PVRDMA vmknic to every other host's (or K of them with --probe-sample K), \
         plain and with don't-fragment at the vmknic MTU, in one framed command line per pair\n\n\
         Probe check (stable id):\n\n  {CHECK_ID}  the PVRDMA vmknics of all hosts reach each other, \
         jumbo frames included (fails on unreachable, warns on mtu or lost packets)\n"
    )
}

/// One host pair's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeStatus {
    /// Replies to the plain and the MTU-sized don't-fragment ping.
    Ok,
    /// The plain ping passes, the MTU-sized one does not: a smaller MTU on the path.
    Mtu,
    /// No reply to the plain ping.
    Unreachable,
    /// Not probed: a side has no usable vmknic or was not reached.
    Skipped,
    /// Probed, but the output broke off or did not say.
    Unknown,
}

impl ProbeStatus {
    pub fn label(self) -> &'static str {
        match self {
            ProbeStatus::Ok => "ok",
            ProbeStatus::Mtu => "mtu",
            ProbeStatus::Unreachable => "unreachable",
            ProbeStatus::Skipped => "skipped",
            ProbeStatus::Unknown => "unknown",
        }
    }
}

/// A float that compares by bits, so reports stay `Eq`; serialized as a plain number.
#[derive(Debug, Clone, Copy, Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Number(pub f64);

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}
impl Eq for Number {}

/// Echo requests sent and answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Losses {
    /// Echo requests sent.
    pub sent: u32,
    /// Replies received.
    pub received: u32,
    /// Packet loss as vmkping prints it, in percent.
    pub loss_percent: Number,
}

/// Round-trip times of the answered requests, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Rtt {
    /// Fastest reply, in milliseconds.
    pub min_ms: Number,
    /// Mean, in milliseconds.
    pub avg_ms: Number,
    /// Slowest reply, in milliseconds.
    pub max_ms: Number,
}

/// The don't-fragment ping that fills the vmknic MTU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct JumboResult {
    /// `-s` payload (MTU − 28).
    pub payload_bytes: u32,
    /// Whether it got through; `null` when its output could not be read.
    pub passed: Option<bool>,
    /// Requests and replies; `null` without statistics.
    pub losses: Option<Losses>,
    /// Round-trip times; `null` without replies.
    pub rtt: Option<Rtt>,
}

/// One probed (or skipped) host pair, `from` pinging `to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Probe {
    /// The pinging host.
    pub from: String,
    /// The pinged host.
    pub to: String,
    /// The pinging host's PVRDMA vmknic (`-I`); `null` when it has none.
    pub from_vmknic: Option<String>,
    /// The pinged host's PVRDMA vmknic IPv4 address; `null` when unknown.
    pub to_ip: Option<String>,
    /// `ok`, `mtu`, `unreachable`, `skipped` or `unknown`.
    pub status: ProbeStatus,
    /// One line saying why (what failed, what was lost, why skipped).
    pub detail: String,
    /// Of the plain ping.
    pub losses: Option<Losses>,
    /// Of the plain ping.
    pub rtt: Option<Rtt>,
    /// The jumbo don't-fragment ping; `null` when not run (vmknic MTU unknown).
    pub jumbo: Option<JumboResult>,
}

/// Every probe pair of a run, in host order then plan order; empty when no capture holds
/// probe data (the run was not asked to probe).
pub fn results(captures: &[crate::collect::HostCapture], hosts: &[HostDiagnosis]) -> Vec<Probe> {
    let by_name: BTreeMap<&str, &HostDiagnosis> = hosts.iter().map(|h| (h.host.as_str(), h)).collect();
    let mut out = Vec::new();
    for capture in captures {
        let Some(probe) = &capture.probe else { continue };
        let Some(from) = by_name.get(capture.host.as_str()) else {
            continue;
        };
        let from_end = endpoint(from);
        for peer in &probe.peers {
            let to = by_name.get(peer.as_str());
            let to_end = match to {
                Some(t) => endpoint(t),
                None => Err(format!("{peer} is not part of this run")),
            };
            let mut result = Probe {
                from: capture.host.clone(),
                to: peer.clone(),
                from_vmknic: from_end.as_ref().ok().map(|e| e.vmknic.clone()),
                to_ip: to_end.as_ref().ok().map(|e| e.ip.to_string()),
                status: ProbeStatus::Skipped,
                detail: String::new(),
                losses: None,
                rtt: None,
                jumbo: None,
            };
            match (&from_end, &to_end, probe.outputs.get(peer)) {
                (_, _, Some(raw)) => judge(&mut result, raw, from_end.as_ref().ok().and_then(|e| e.mtu)),
                (Err(why), _, None) | (Ok(_), Err(why), None) => result.detail = why.clone(),
                (Ok(_), Ok(_), None) => {
                    result.status = ProbeStatus::Unknown;
                    result.detail = probe
                        .missing
                        .get(peer)
                        .map(|f| format!("not probed: {}", f.message))
                        .unwrap_or_else(|| "no vmkping output was captured for this pair".to_string());
                }
            }
            out.push(result);
        }
    }
    out
}

/// How one framed ping went.
enum Outcome {
    Passed,
    Failed(String),
    Unknown(String),
}

fn outcome(section: Option<&p::VmkpingSection>, cut_short: Option<&str>, broke_off: bool) -> Outcome {
    let Some(s) = section else {
        return Outcome::Unknown(match (cut_short, broke_off) {
            (Some(why), _) => format!("it did not run ({why})"),
            (None, true) => "the output broke off before it ran".to_string(),
            (None, false) => "it did not run".to_string(),
        });
    };
    let ping = &s.ping;
    if let Some(stats) = ping.statistics {
        return if stats.received > 0 {
            Outcome::Passed
        } else {
            Outcome::Failed(failure_text(ping))
        };
    }
    if ping.replies > 0 {
        return Outcome::Passed;
    }
    if s.exit.is_none() {
        return Outcome::Unknown(match cut_short {
            Some(why) => format!("its output broke off ({why})"),
            None => "its output broke off before vmkping finished".to_string(),
        });
    }
    if !ping.send_errors.is_empty() {
        return Outcome::Failed(failure_text(ping));
    }
    match ping.errors.first() {
        Some(e) => Outcome::Unknown(format!("vmkping said {e:?}")),
        None => Outcome::Unknown("vmkping printed no statistics".to_string()),
    }
}

fn failure_text(ping: &p::Vmkping) -> String {
    let sent = ping.statistics.map_or(COUNT, |s| s.transmitted);
    match ping.send_errors.first() {
        Some(reason) => format!("sendto() failed ({reason})"),
        None => format!("no reply to {sent} echo requests"),
    }
}

fn losses(ping: &p::Vmkping) -> Option<Losses> {
    ping.statistics.map(|s| Losses {
        sent: s.transmitted,
        received: s.received,
        loss_percent: Number(s.loss_percent),
    })
}

fn rtt(ping: &p::Vmkping) -> Option<Rtt> {
    ping.round_trip.map(|r| Rtt {
        min_ms: Number(r.min_ms),
        avg_ms: Number(r.avg_ms),
        max_ms: Number(r.max_ms),
    })
}

/// Fills status, detail, losses and rtt from one framed probe output.
fn judge(result: &mut Probe, raw: &RawOutput, mtu: Option<u32>) {
    let cut_short = raw.failure.as_ref().map(|f| f.message.as_str());
    let sections = match p::parse_vmkping_probe(&raw.stdout) {
        Ok(s) => s,
        Err(e) => {
            result.status = ProbeStatus::Unknown;
            result.detail = format!("the vmkping output did not parse: {e}");
            return;
        }
    };
    if sections.is_empty() {
        result.status = ProbeStatus::Unknown;
        result.detail = match (cut_short, raw.stderr.lines().find(|l| !l.trim().is_empty())) {
            (Some(why), _) => format!("no vmkping output: {why}"),
            (None, Some(err)) => format!("no vmkping output; stderr: {}", err.trim()),
            (None, None) => "vmkping printed nothing".to_string(),
        };
        return;
    }
    let plain = sections.iter().find(|s| s.key == "plain");
    let jumbo = sections.iter().find(|s| s.key == "jumbo");
    if let Some(s) = plain {
        result.losses = losses(&s.ping);
        result.rtt = rtt(&s.ping);
        if result.to_ip.is_none() {
            // The peer's address was not known from its capture: the output names it.
            result.to_ip = s.ping.target.clone();
        }
    }
    let jumbo_size = jumbo
        .and_then(|s| s.ping.payload_bytes)
        .or_else(|| mtu.map(|m| m.saturating_sub(HEADERS)));
    // A section without its end marker: everything after it never arrived.
    let broke_off = sections.last().is_some_and(|s| s.exit.is_none());
    let plain_outcome = outcome(plain, cut_short, broke_off);
    let jumbo_outcome = (jumbo.is_some() || mtu.is_some()).then(|| outcome(jumbo, cut_short, broke_off));
    if let (Some(size), Some(o)) = (jumbo_size, &jumbo_outcome) {
        result.jumbo = Some(JumboResult {
            payload_bytes: size,
            passed: match o {
                Outcome::Passed => Some(true),
                Outcome::Failed(_) => Some(false),
                Outcome::Unknown(_) => None,
            },
            losses: jumbo.and_then(|s| losses(&s.ping)),
            rtt: jumbo.and_then(|s| rtt(&s.ping)),
        });
    }
    let size = jumbo_size.unwrap_or(0);
    let replies = plain.map_or(0, |s| s.ping.replies);
    let plain_text = || match result.losses {
        Some(l) => format!("{}/{} replies", l.received, l.sent),
        None => format!("{replies} repl{}", if replies == 1 { "y" } else { "ies" }),
    };
    let (status, detail) = match (&plain_outcome, &jumbo_outcome) {
        (Outcome::Failed(why), _) => (ProbeStatus::Unreachable, why.clone()),
        (Outcome::Passed, Some(Outcome::Passed)) => (
            ProbeStatus::Ok,
            format!("{}; {size}-byte don't-fragment ping passes", plain_text()),
        ),
        (Outcome::Passed, Some(Outcome::Failed(why))) => {
            let local = why.contains("Message too long");
            (
                ProbeStatus::Mtu,
                format!(
                    "plain ping passes ({}), {size}-byte don't-fragment ping fails: {why}{}",
                    plain_text(),
                    if local {
                        " (refused by the sending host itself)"
                    } else {
                        " (dropped on the path: a switch port, uplink or the peer has a smaller MTU)"
                    }
                ),
            )
        }
        (Outcome::Passed, Some(Outcome::Unknown(why))) => (
            ProbeStatus::Unknown,
            format!("plain ping passes ({}), jumbo ping unknown: {why}", plain_text()),
        ),
        (Outcome::Passed, None) => (
            ProbeStatus::Unknown,
            format!(
                "plain ping passes ({}); jumbo frames not tested: the vmknic MTU is unknown",
                plain_text()
            ),
        ),
        // A jumbo reply proves the path even when the plain ping's output was lost.
        (Outcome::Unknown(_), Some(Outcome::Passed)) => (
            ProbeStatus::Ok,
            format!("{size}-byte don't-fragment ping passes (plain ping output incomplete)"),
        ),
        (Outcome::Unknown(why), _) => (ProbeStatus::Unknown, format!("plain ping unknown: {why}")),
    };
    result.status = status;
    result.detail = detail;
}

/// `2 ok, 1 mtu, 3 unreachable`: the pairs per status; `None` without probes.
pub fn tally(probes: &[Probe]) -> Option<String> {
    if probes.is_empty() {
        return None;
    }
    let count = |s: ProbeStatus| probes.iter().filter(|p| p.status == s).count();
    Some(
        [
            ProbeStatus::Ok,
            ProbeStatus::Mtu,
            ProbeStatus::Unreachable,
            ProbeStatus::Unknown,
            ProbeStatus::Skipped,
        ]
        .iter()
        .map(|s| (count(*s), s.label()))
        .filter(|(n, _)| *n > 0)
        .map(|(n, l)| format!("{n} {l}"))
        .collect::<Vec<_>>()
        .join(", "),
    )
}

/// `vmknic-reachability`: fails on an unreachable pair, warns on an MTU problem or packet
/// loss (RoCE needs a lossless network), unknown when nothing could be judged. `None`
/// when the run did not probe.
pub fn check(probes: &[Probe]) -> Option<Check> {
    if probes.is_empty() {
        return None;
    }
    let count = |s: ProbeStatus| probes.iter().filter(|p| p.status == s).count();
    let tally = tally(probes).unwrap_or_default();
    let lossy: Vec<&Probe> = probes
        .iter()
        .filter(|p| p.status == ProbeStatus::Ok && p.losses.is_some_and(|l| l.received < l.sent))
        .collect();
    let pairs = |n: usize| format!("{n} host pair{}", if n == 1 { "" } else { "s" });
    let evidence = vec![Evidence {
        command: PROBE_ID,
        field: "replies of the plain and the don't-fragment ping".to_string(),
    }];
    let (status, summary, remedy) = if count(ProbeStatus::Unreachable) > 0 {
        (
            Status::Fail,
            format!("{} probed, {tally}: some PVRDMA vmknics cannot reach each other", pairs(probes.len())),
            Some("check the failing pairs' vmknic addresses and netmasks, the VLAN of their port group and of the physical switch ports, and that the peer vmknic is enabled; re-test with vmkping -I <vmk> <peer ip>"),
        )
    } else if count(ProbeStatus::Mtu) > 0 || !lossy.is_empty() {
        let loss = if lossy.is_empty() {
            String::new()
        } else {
            format!("; {} lost packets (RoCE needs a lossless network)", pairs(lossy.len()))
        };
        (
            Status::Warn,
            format!("{} probed, {tally}{loss}", pairs(probes.len())),
            Some(if count(ProbeStatus::Mtu) > 0 {
                "give every element of the path the vmknic MTU (9000 for jumbo frames): vDS, vmknics (esxcli network ip interface set -m 9000 -i <vmk>), uplinks and every physical switch port; re-test with vmkping -I <vmk> -d -s 8972 <peer ip>"
            } else {
                "check the physical switch ports of the lossy pairs for drops and pause/PFC settings (esxcli network nic stats get -n <vmnic>)"
            }),
        )
    } else if count(ProbeStatus::Unknown) > 0 || count(ProbeStatus::Ok) == 0 {
        (
            Status::Unknown,
            format!(
                "{} probed, {tally}: not every pair could be judged",
                pairs(probes.len())
            ),
            None,
        )
    } else {
        (
            Status::Pass,
            format!("{} probed, {tally}: plain and jumbo pings pass", pairs(probes.len())),
            None,
        )
    };
    Some(Check {
        id: CHECK_ID,
        status,
        summary,
        evidence,
        remedy: remedy.map(|advice| crate::diagnose::Remedy {
            command: None,
            advice: Some(advice.to_string()),
        }),
    })
}

/// The compact human view of the problem pairs: a pair probed both ways with the same
/// result is one `↔` line, skipped pairs are grouped by reason, at most `LIMIT` lines.
pub fn human_lines(probes: &[Probe]) -> Vec<String> {
    const LIMIT: usize = 12;
    let mut lines = Vec::new();
    let mut done = vec![false; probes.len()];
    for (i, p) in probes.iter().enumerate() {
        let lossy = p.status == ProbeStatus::Ok && p.losses.is_some_and(|l| l.received < l.sent);
        if lossy {
            lines.push(format!(
                "loss: {} → {}: {}",
                end(&p.from, &p.from_vmknic),
                end(&p.to, &p.to_ip),
                p.detail
            ));
            continue;
        }
        if done.get(i).copied().unwrap_or(true) || matches!(p.status, ProbeStatus::Ok | ProbeStatus::Skipped) {
            continue;
        }
        let back = probes
            .iter()
            .enumerate()
            .find(|(j, q)| *j != i && q.from == p.to && q.to == p.from && q.status == p.status);
        let line = match back {
            Some((j, _)) => {
                if let Some(d) = done.get_mut(j) {
                    *d = true;
                }
                format!(
                    "{}: {} ↔ {}: {}",
                    p.status.label(),
                    end(&p.from, &p.from_vmknic),
                    end(&p.to, &p.to_ip),
                    p.detail
                )
            }
            None => format!(
                "{}: {} → {}: {}",
                p.status.label(),
                end(&p.from, &p.from_vmknic),
                end(&p.to, &p.to_ip),
                p.detail
            ),
        };
        lines.push(line);
    }
    let mut skipped: BTreeMap<&str, usize> = BTreeMap::new();
    for p in probes.iter().filter(|p| p.status == ProbeStatus::Skipped) {
        *skipped.entry(p.detail.as_str()).or_default() += 1;
    }
    for (why, n) in skipped {
        lines.push(format!("skipped: {n} pair{}: {why}", if n == 1 { "" } else { "s" }));
    }
    if lines.len() > LIMIT {
        let more = lines.len() - LIMIT;
        lines.truncate(LIMIT);
        lines.push(format!("… and {more} more (see --format json)"));
    }
    lines
}

fn end(host: &str, what: &Option<String>) -> String {
    match what {
        Some(w) => format!("{host} {w}"),
        None => host.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_is_a_ring_of_sorted_names_independent_of_order() {
        let hosts: Vec<String> = ["esx03", "esx01", "esx04", "esx02"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let all = plan(&hosts, None);
        assert_eq!(all["esx01"], ["esx02", "esx03", "esx04"]);
        assert_eq!(all["esx04"], ["esx01", "esx02", "esx03"]);
        let two = plan(&hosts, Some(2));
        assert_eq!(two["esx01"], ["esx02", "esx03"]);
        assert_eq!(two["esx04"], ["esx01", "esx02"]);
        let mut shuffled = hosts.clone();
        shuffled.reverse();
        assert_eq!(plan(&shuffled, Some(2)), two);
        assert!(plan(&hosts[..1], None)["esx03"].is_empty());
        assert_eq!(plan(&hosts, Some(99)), all, "K above N-1 is N-1");
        assert!(plan(&hosts, Some(0)).values().all(Vec::is_empty));
    }

    #[test]
    fn command_round_trips_and_nothing_else_parses() {
        let from = Endpoint {
            vmknic: "vmk1".into(),
            ip: Ipv4Addr::new(10, 0, 0, 1),
            mtu: Some(9000),
        };
        let to = Ipv4Addr::new(10, 0, 0, 2);
        let line = probe_command(&from, to);
        assert!(line.contains("vmkping -I vmk1 -c 3 -W 1 10.0.0.2 2>&1"));
        assert!(line.contains("vmkping -I vmk1 -d -s 8972 -c 3 -W 1 10.0.0.2 2>&1"));
        assert_eq!(parse_probe_command(&line), Some(("vmk1".into(), to, Some(8972))));
        let plain_only = probe_command(
            &Endpoint {
                mtu: None,
                ..from.clone()
            },
            to,
        );
        assert_eq!(parse_probe_command(&plain_only), Some(("vmk1".into(), to, None)));
        for bad in [
            "vmkping -I vmk1 10.0.0.2",
            &line.replace("vmk1", "vmk1;reboot"),
            &format!("{line}; reboot"),
            &line.replace("10.0.0.2", "10.0.0.2 -s 1"),
            &line.replace("8972", "4294967295"),
            "esxcli network ip interface list",
        ] {
            assert_eq!(parse_probe_command(bad), None, "{bad}");
        }
    }

    fn raw(stdout: &str) -> RawOutput {
        RawOutput {
            stdout: stdout.to_string(),
            exit_status: Some(0),
            ..RawOutput::new(PROBE_ID, "")
        }
    }

    fn judged(stdout: &str, mtu: Option<u32>) -> Probe {
        let mut p = Probe {
            from: "a".into(),
            to: "b".into(),
            from_vmknic: None,
            to_ip: None,
            status: ProbeStatus::Skipped,
            detail: String::new(),
            losses: None,
            rtt: None,
            jumbo: None,
        };
        judge(&mut p, &raw(stdout), mtu);
        p
    }

    const OK3: &str = "PING 10.0.0.2 (10.0.0.2): 56 data bytes\n64 bytes from 10.0.0.2: icmp_seq=0 ttl=64 time=0.243 ms\n64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.260 ms\n64 bytes from 10.0.0.2: icmp_seq=2 ttl=64 time=0.262 ms\n\n--- 10.0.0.2 ping statistics ---\n3 packets transmitted, 3 packets received, 0% packet loss\nround-trip min/avg/max = 0.243/0.255/0.262 ms\n";
    const LOST: &str = "PING 10.0.0.2 (10.0.0.2): 8972 data bytes\n\n--- 10.0.0.2 ping statistics ---\n3 packets transmitted, 0 packets received, 100% packet loss\n";

    #[test]
    fn statuses_from_the_two_pings() {
        let jumbo_ok = OK3.replace(": 56 data", ": 8972 data");
        let ok = judged(
            &format!("==> plain <==\n{OK3}<== plain exit 0 ==>\n==> jumbo <==\n{jumbo_ok}<== jumbo exit 0 ==>\n"),
            Some(9000),
        );
        assert_eq!(ok.status, ProbeStatus::Ok, "{}", ok.detail);
        assert_eq!(ok.losses.map(|l| l.received), Some(3));
        assert_eq!(ok.rtt.map(|r| r.avg_ms), Some(Number(0.255)));
        assert_eq!(
            ok.jumbo.as_ref().map(|j| (j.payload_bytes, j.passed)),
            Some((8972, Some(true)))
        );

        let mtu = judged(
            &format!("==> plain <==\n{OK3}<== plain exit 0 ==>\n==> jumbo <==\n{LOST}<== jumbo exit 2 ==>\n"),
            Some(9000),
        );
        assert_eq!(mtu.status, ProbeStatus::Mtu, "{}", mtu.detail);
        assert!(mtu.detail.contains("dropped on the path"), "{}", mtu.detail);

        let too_long = "PING 10.0.0.2 (10.0.0.2): 8972 data bytes\nsendto() failed (Message too long)\n";
        let local = judged(
            &format!("==> plain <==\n{OK3}<== plain exit 0 ==>\n==> jumbo <==\n{too_long}<== jumbo exit 2 ==>\n"),
            Some(9000),
        );
        assert_eq!(
            local.status,
            ProbeStatus::Mtu,
            "statistics missing but the run ended: {}",
            local.detail
        );
        assert!(local.detail.contains("Message too long"));

        let dead = judged(
            &format!(
                "==> plain <==\n{}<== plain exit 2 ==>\n==> jumbo <==\n{LOST}<== jumbo exit 2 ==>\n",
                LOST.replace("8972", "56")
            ),
            Some(9000),
        );
        assert_eq!(dead.status, ProbeStatus::Unreachable);
        assert_eq!(dead.losses.map(|l| l.loss_percent), Some(Number(100.0)));

        let cut = judged("==> plain <==\nPING 10.0.0.2 (10.0.0.2): 56 data bytes\n", Some(9000));
        assert_eq!(
            cut.status,
            ProbeStatus::Unknown,
            "no end marker, no reply: {}",
            cut.detail
        );

        let no_jumbo = judged(&format!("==> plain <==\n{OK3}<== plain exit 0 ==>\n"), Some(9000));
        assert_eq!(no_jumbo.status, ProbeStatus::Unknown, "jumbo cut off is never a pass");

        let no_mtu = judged(&format!("==> plain <==\n{OK3}<== plain exit 0 ==>\n"), None);
        assert_eq!(no_mtu.status, ProbeStatus::Unknown);
        assert!(no_mtu.detail.contains("MTU is unknown"));

        let bad_vmk = judged(
            "==> plain <==\nUnknown interface 'vmk9': Invalid argument\n<== plain exit 1 ==>\n",
            Some(9000),
        );
        assert_eq!(bad_vmk.status, ProbeStatus::Unknown);
        assert!(bad_vmk.detail.contains("Unknown interface"), "{}", bad_vmk.detail);

        let not_found = judged(
            "==> plain <==\nsh: vmkping: not found\n<== plain exit 127 ==>\n",
            Some(9000),
        );
        assert_eq!(not_found.status, ProbeStatus::Unknown);

        let garbage = judged("Error: something\n", Some(9000));
        assert_eq!(garbage.status, ProbeStatus::Unknown);
    }

    fn probe(from: &str, to: &str, status: ProbeStatus) -> Probe {
        Probe {
            from: from.into(),
            to: to.into(),
            from_vmknic: Some("vmk1".into()),
            to_ip: Some("10.0.0.9".into()),
            status,
            detail: "d".into(),
            losses: None,
            rtt: None,
            jumbo: None,
        }
    }

    #[test]
    fn check_fails_on_unreachable_warns_on_mtu_and_folds_pairs() {
        use ProbeStatus::*;
        assert_eq!(check(&[]), None);
        let ok = check(&[probe("a", "b", Ok), probe("b", "a", Ok)]).unwrap();
        assert_eq!(ok.status, Status::Pass);
        let warn = check(&[probe("a", "b", Ok), probe("a", "c", Mtu), probe("c", "a", Mtu)]).unwrap();
        assert_eq!(warn.status, Status::Warn);
        let fail = check(&[probe("a", "b", Mtu), probe("a", "c", Unreachable)]).unwrap();
        assert_eq!(fail.status, Status::Fail);
        assert!(fail.remedy.is_some());
        let unknown = check(&[probe("a", "b", Skipped)]).unwrap();
        assert_eq!(unknown.status, Status::Unknown);
        let lines = human_lines(&[
            probe("a", "c", Mtu),
            probe("c", "a", Mtu),
            probe("a", "b", Unreachable),
            probe("a", "b", Ok),
        ]);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].contains("a vmk1 ↔ c 10.0.0.9"), "{lines:?}");
        assert!(lines[1].contains("→"), "{lines:?}");
    }

    #[test]
    fn results_skip_pairs_whose_side_has_no_usable_vmknic() {
        use crate::collect::{replay, CaptureSource};
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/probe-outputs");
        let mut captures = replay::read_dir(&root, CaptureSource::Directory).unwrap();
        // esx03 loses its PVRDMA tag: the pairs from or to it that were not probed are
        // skipped; a captured output still counts (evidence beats inference).
        let untagged = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("samples/vmknic-untagged/esx01/esxcli_system_settings_advanced_list_pvrdmavmknic.txt"),
        )
        .unwrap();
        let esx03 = captures.iter_mut().find(|c| c.host == "esx03").unwrap();
        esx03
            .outputs
            .get_mut(crate::catalogue::PVRDMA_VMKNIC_OPTION)
            .unwrap()
            .stdout = untagged;
        esx03.probe = Some(ProbeCapture {
            peers: vec!["esx01".into(), "esx02".into()],
            ..ProbeCapture::default()
        });
        let esx01 = captures.iter_mut().find(|c| c.host == "esx01").unwrap();
        esx01.probe.as_mut().unwrap().outputs.remove("esx03");
        let hosts: Vec<HostDiagnosis> = captures.iter().map(crate::diagnose::diagnose_host).collect();
        let probes = results(&captures, &hosts);
        let of = |from: &str, to: &str| probes.iter().find(|p| p.from == from && p.to == to).unwrap();
        for (from, to) in [("esx01", "esx03"), ("esx03", "esx01"), ("esx03", "esx02")] {
            let p = of(from, to);
            assert_eq!(p.status, ProbeStatus::Skipped, "{from} -> {to}: {p:?}");
            assert_eq!(p.detail, "esx03 has no vmknic tagged for PVRDMA");
        }
        assert_eq!(of("esx01", "esx02").to_ip.as_deref(), Some("10.10.10.12"));
        assert_eq!(of("esx01", "esx03").to_ip, None);
        assert_eq!(
            of("esx01", "esx02").status,
            ProbeStatus::Mtu,
            "the others are still judged"
        );
        let captured = of("esx02", "esx03");
        assert_eq!(
            captured.status,
            ProbeStatus::Unknown,
            "judged from its output: {captured:?}"
        );
        // A probe planned but never answered is unknown, never skipped or passed.
        let esx01 = captures.iter_mut().find(|c| c.host == "esx01").unwrap();
        if let Some(p) = &mut esx01.probe {
            p.outputs.remove("esx02");
        }
        let probes = results(&captures, &hosts);
        let lost = probes.iter().find(|p| p.from == "esx01" && p.to == "esx02").unwrap();
        assert_eq!(lost.status, ProbeStatus::Unknown, "{lost:?}");
    }
}
