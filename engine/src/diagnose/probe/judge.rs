//! Judging the captured vmkping outputs: per pair results, the tally and the fleet check.
use super::*;

/// Every probe pair of a run, in host order then plan order; empty when no capture holds
/// probe data (the run was not asked to probe).
pub fn results(captures: &[crate::capture::HostCapture], hosts: &[HostDiagnosis]) -> Vec<Probe> {
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
                run_stage: None,
            };
            match (&from_end, &to_end, probe.outputs.get(peer)) {
                (_, _, Some(raw)) => judge(&mut result, raw, from_end.as_ref().ok().and_then(|e| e.mtu)),
                (Err(why), _, None) | (Ok(_), Err(why), None) => result.detail = why.clone(),
                (Ok(_), Ok(_), None) => {
                    result.status = ProbeStatus::Unknown;
                    result.run_stage = probe.missing.get(peer).and_then(|f| f.stopped_by_run_timeout());
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
    Failed(Failed),
    Unknown(String),
}

/// A ping that got no reply: why, as the report says it, and whether the sending host
/// itself refused the packet as too long (its own MTU) rather than the path dropping it.
struct Failed {
    why: String,
    by_the_sender: bool,
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
            Outcome::Failed(failed(ping))
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
        return Outcome::Failed(failed(ping));
    }
    match ping.errors.first() {
        Some(e) => Outcome::Unknown(format!("vmkping said {e:?}")),
        None => Outcome::Unknown("vmkping printed no statistics".to_string()),
    }
}

fn failed(ping: &p::Vmkping) -> Failed {
    let sent = ping.statistics.map_or(COUNT, |s| s.transmitted);
    let why = match ping.send_errors.first() {
        Some(reason) => format!("sendto() failed ({reason})"),
        None => format!("no reply to {sent} echo requests"),
    };
    Failed {
        why,
        by_the_sender: ping.refused_by_the_sender_as_too_long(),
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
pub fn judge(result: &mut Probe, raw: &RawOutput, mtu: Option<u32>) {
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
        (Outcome::Failed(f), _) => (ProbeStatus::Unreachable, f.why.clone()),
        (Outcome::Passed, Some(Outcome::Passed)) => (
            ProbeStatus::Ok,
            format!("{}; {size}-byte don't-fragment ping passes", plain_text()),
        ),
        (Outcome::Passed, Some(Outcome::Failed(f))) => (
            ProbeStatus::Mtu,
            format!(
                "plain ping passes ({}), {size}-byte don't-fragment ping fails: {}{}",
                plain_text(),
                f.why,
                if f.by_the_sender {
                    " (refused by the sending host itself)"
                } else {
                    " (dropped on the path: a switch port, uplink or the peer has a smaller MTU)"
                }
            ),
        ),
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
    let c = crate::diagnose::check(CheckId::VmknicReachability, status, summary, evidence);
    Some(match remedy {
        Some(advice) => crate::diagnose::with_advice(c, advice),
        None => c,
    })
}
