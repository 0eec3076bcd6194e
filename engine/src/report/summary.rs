//! The summary line the human report ends with (and the JSON report's `summary.line`):
//! the diagnosis counts ([`Summary`]) put into words.
use super::plural;
use crate::diagnose::{probe, CheckId, Diagnosis, HostStatus, Status, Summary};

/// `3 hosts: 1 healthy, 1 with problems (esx02); 5 PVRDMA adapters: 3 hca, ...`.
pub fn line(d: &Diagnosis) -> String {
    let mut line = counts_line(d, &d.summary);
    if let Some(tally) = probe::tally(&d.probes) {
        line.push_str(&format!("; path probe: {tally}"));
    }
    let configuration_only = d.hosts.iter().filter(|h| h.configuration_only).count();
    if configuration_only > 0 {
        line.push_str(&format!(
            "; configuration only (no SSH): {configuration_only} of {} hosts",
            d.hosts.len()
        ));
    }
    if let Some(scope) = d.vm_scope.as_ref().filter(|s| !s.not_diagnosed.is_empty()) {
        line.push_str(&format!(
            "; {} of {} chosen VMs not diagnosed",
            scope.not_diagnosed.len(),
            scope.vms.len()
        ));
    }
    line
}

/// The parts that are not zero, as `N label`, comma separated.
fn nonzero<N: Copy + PartialOrd + Default + std::fmt::Display>(parts: &[(N, &str)]) -> String {
    parts
        .iter()
        .filter(|(n, _)| *n > N::default())
        .map(|(n, label)| format!("{n} {label}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Host checks with `status`, the ids sharing the same hosts together, in first-seen
/// order (`firewall-pvrdma, mtu-consistent on esx[01-02]`).
fn host_checks_with(d: &Diagnosis, status: Status) -> Vec<String> {
    let mut by_hosts: Vec<(String, Vec<CheckId>)> = Vec::new();
    for (id, on) in super::hosts_by_check(d, status) {
        let hosts = pvrdma_nodeset::fold(&on);
        match by_hosts.iter_mut().find(|(h, _)| *h == hosts) {
            Some((_, ids)) => ids.push(id),
            None => by_hosts.push((hosts, vec![id])),
        }
    }
    by_hosts
        .iter()
        .map(|(hosts, ids)| format!("{} on {hosts}", crate::diagnose::join_ids(ids)))
        .collect()
}

/// Warning check id → hosts where it warns, in first-seen order; then the fleet checks
/// that warn, across hosts.
fn warnings(d: &Diagnosis) -> Vec<String> {
    let warned = super::hosts_by_check(d, Status::Warn);
    let mut which: Vec<String> = warned
        .iter()
        .map(|(id, on)| format!("{id} on {}", pvrdma_nodeset::fold(on)))
        .collect();
    which.extend(
        d.fleet_checks
            .iter()
            .filter(|c| c.status == Status::Warn)
            .map(|c| format!("{} across hosts", c.id)),
    );
    which
}

/// The hosts per status that has any, with the set of those not healthy
/// (`1 healthy, 2 with problems (esx[02-03])`). A host judged from its configuration
/// alone with nothing against it counts as `configuration only`, not as incomplete: what
/// it lacks is the transport, which only SSH shows.
fn host_counts(d: &Diagnosis, s: &Summary) -> Vec<String> {
    let mut host_sets = s.host_sets.clone();
    let configuration_only: Vec<&str> = d
        .hosts
        .iter()
        .filter(|h| h.configuration_only_healthy())
        .map(|h| h.host.as_str())
        .collect();
    if !configuration_only.is_empty() {
        let incomplete: Vec<&str> = d
            .hosts
            .iter()
            .filter(|h| h.status == HostStatus::Incomplete && !h.configuration_only_healthy())
            .map(|h| h.host.as_str())
            .collect();
        host_sets.remove("incomplete");
        if !incomplete.is_empty() {
            host_sets.insert("incomplete".to_string(), pvrdma_nodeset::fold(&incomplete));
        }
        host_sets.insert(
            "configuration only".to_string(),
            pvrdma_nodeset::fold(&configuration_only),
        );
    }
    let set_of = |status: &str| host_sets.get(status).map(|n| format!(" ({n})")).unwrap_or_default();
    [
        (s.healthy, "healthy", ""),
        (configuration_only.len(), "configuration only", "configuration only"),
        (s.problems, "with problems", "problems"),
        (
            s.incomplete.saturating_sub(configuration_only.len()),
            "incomplete",
            "incomplete",
        ),
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
    .collect()
}

fn counts_line(d: &Diagnosis, s: &Summary) -> String {
    let host_parts = host_counts(d, s);
    let mut line = plural(s.hosts, "host", "hosts");
    if !host_parts.is_empty() {
        line.push_str(&format!(": {}", host_parts.join(", ")));
    }
    if s.diagnosed == 0 {
        line.push_str("; nothing was diagnosed");
        return line;
    }
    // The cause of "with problems" and of the fallbacks below, by check id.
    let failing = host_checks_with(d, Status::Fail);
    if !failing.is_empty() {
        line.push_str(&format!("; failing host checks: {}", failing.join(", ")));
    }
    if s.warnings > 0 {
        line.push_str(&format!(
            "; {}: {}",
            plural(s.warnings, "warning", "warnings"),
            warnings(d).join(", ")
        ));
    }
    line.push_str(&format!(
        "; {}",
        plural(s.adapters, "PVRDMA adapter", "PVRDMA adapters")
    ));
    let adapters = nonzero(&[(s.hca, "hca"), (s.tcp_fallback, "tcp-fallback"), (s.unknown, "unknown")]);
    if !adapters.is_empty() {
        line.push_str(&format!(": {adapters}"));
    }
    let t = &s.adapter_pairs;
    let across = nonzero(&[
        (t.rdma, "rdma"),
        (t.blocked, "blocked"),
        (t.tcp, "tcp"),
        (t.unknown, "unknown"),
    ]);
    if !across.is_empty() {
        line.push_str(&format!("; adapter pairs across hosts: {across}"));
    }
    if !s.fleet_failures.is_empty() {
        line.push_str(&format!(
            "; failing fleet checks: {}",
            crate::diagnose::join_ids(&s.fleet_failures)
        ));
    }
    if s.hosts_without_adapter_list > 0 {
        line.push_str(&format!(
            "; adapters not listed on {}",
            plural(s.hosts_without_adapter_list, "host", "hosts")
        ));
    }
    line
}

#[cfg(test)]
mod tests;
