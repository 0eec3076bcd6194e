//! The fleet summary and its wording.
use super::*;

/// Whether anything was learnt about the host: reached, and a check or verdict known.
pub fn is_diagnosed(h: &HostDiagnosis) -> bool {
    matches!(h.status, HostStatus::Ok | HostStatus::Problems | HostStatus::Incomplete)
        && (h.checks.iter().any(|c| c.status != Status::Unknown)
            || h.vms
                .iter()
                .flat_map(|v| &v.adapters)
                .any(|a| a.verdict != Verdict::Unknown))
}

/// The JSON/serde name of a host status (`problems`, `unreachable`, ...).
pub fn status_name(status: HostStatus) -> &'static str {
    match status {
        HostStatus::Ok => "ok",
        HostStatus::Problems => "problems",
        HostStatus::Incomplete => "incomplete",
        HostStatus::Unreachable => "unreachable",
        HostStatus::Error => "error",
        HostStatus::Interrupted => "interrupted",
    }
}

pub(super) fn summarize(hosts: &[HostDiagnosis], fleet_checks: &[Check], transport: &TransportSummary) -> Summary {
    let mut s = Summary {
        hosts: hosts.len(),
        adapter_pairs: transport.totals,
        fleet_failures: fleet_checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .map(|c| c.id)
            .collect(),
        ..Summary::default()
    };
    let mut by_status: BTreeMap<&'static str, Vec<&str>> = BTreeMap::new();
    // Warning check id → hosts where it warns, in first-seen order.
    let mut warned: Vec<(&'static str, Vec<&str>)> = Vec::new();
    for h in hosts {
        match h.status {
            HostStatus::Ok => s.healthy += 1,
            HostStatus::Problems => s.problems += 1,
            HostStatus::Incomplete => s.incomplete += 1,
            HostStatus::Unreachable => s.unreachable += 1,
            HostStatus::Error => s.error += 1,
            HostStatus::Interrupted => s.interrupted += 1,
        }
        if h.status != HostStatus::Ok {
            by_status.entry(status_name(h.status)).or_default().push(&h.host);
        }
        if is_diagnosed(h) {
            s.diagnosed += 1;
        }
        if h.adapters_error.is_some() {
            s.hosts_without_adapter_list += 1;
        }
        for c in h.checks.iter().filter(|c| c.status == Status::Warn) {
            s.warnings += 1;
            match warned.iter_mut().find(|(id, _)| *id == c.id) {
                Some((_, on)) => on.push(&h.host),
                None => warned.push((c.id, vec![&h.host])),
            }
        }
        for a in h.vms.iter().flat_map(|v| &v.adapters) {
            s.adapters += 1;
            match a.verdict {
                Verdict::Hca => s.hca += 1,
                Verdict::TcpFallback => s.tcp_fallback += 1,
                Verdict::Unknown => s.unknown += 1,
            }
        }
    }
    let fleet_warnings: Vec<&str> = fleet_checks
        .iter()
        .filter(|c| c.status == Status::Warn)
        .map(|c| c.id)
        .collect();
    s.warnings += fleet_warnings.len();
    s.host_sets = by_status
        .iter()
        .map(|(status, names)| (status.to_string(), crate::nodeset::fold(names)))
        .collect();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let set_of = |status: &str| s.host_sets.get(status).map(|n| format!(" ({n})")).unwrap_or_default();
    let host_parts: Vec<String> = [
        (s.healthy, "healthy", ""),
        (s.problems, "with problems", "problems"),
        (s.incomplete, "incomplete", "incomplete"),
        (s.unreachable, "unreachable", "unreachable"),
        (s.error, "with errors", "error"),
        (s.interrupted, "interrupted", "interrupted"),
    ]
    .iter()
    .filter(|(n, _, _)| *n > 0)
    .map(|(n, label, status)| {
        format!(
            "{n} {label}{}",
            if status.is_empty() {
                String::new()
            } else {
                set_of(status)
            }
        )
    })
    .collect();
    let adapter_parts: Vec<String> = [(s.hca, "hca"), (s.tcp_fallback, "tcp-fallback"), (s.unknown, "unknown")]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, label)| format!("{n} {label}"))
        .collect();
    let mut line = plural(s.hosts, "host", "hosts");
    if !host_parts.is_empty() {
        line.push_str(&format!(": {}", host_parts.join(", ")));
    }
    if s.diagnosed == 0 {
        line.push_str("; nothing was diagnosed");
        s.line = line;
        return s;
    }
    if s.warnings > 0 {
        let mut which: Vec<String> = warned
            .iter()
            .map(|(id, on)| format!("{id} on {}", crate::nodeset::fold(on)))
            .collect();
        which.extend(fleet_warnings.iter().map(|id| format!("{id} across hosts")));
        line.push_str(&format!(
            "; {}: {}",
            plural(s.warnings, "warning", "warnings"),
            which.join(", ")
        ));
    }
    line.push_str(&format!(
        "; {}",
        plural(s.adapters, "PVRDMA adapter", "PVRDMA adapters")
    ));
    if !adapter_parts.is_empty() {
        line.push_str(&format!(": {}", adapter_parts.join(", ")));
    }
    let t = &s.adapter_pairs;
    let across = [
        (t.rdma, "rdma"),
        (t.blocked, "blocked"),
        (t.tcp, "tcp"),
        (t.unknown, "unknown"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, label)| format!("{n} {label}"))
    .collect::<Vec<_>>();
    if !across.is_empty() {
        line.push_str(&format!("; adapter pairs across hosts: {}", across.join(", ")));
    }
    if !s.fleet_failures.is_empty() {
        line.push_str(&format!("; failing fleet checks: {}", s.fleet_failures.join(", ")));
    }
    if s.hosts_without_adapter_list > 0 {
        line.push_str(&format!(
            "; adapters not listed on {}",
            plural(s.hosts_without_adapter_list, "host", "hosts")
        ));
    }
    s.line = line;
    s
}
