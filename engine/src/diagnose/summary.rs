//! The fleet summary: counts over the whole run (the report words them, `report::summary`).
use super::*;

impl HostDiagnosis {
    /// Whether anything was learnt about the host: reached, and a check or verdict known.
    /// A host that answered nothing useful (every output timed out) was not diagnosed.
    pub fn is_diagnosed(&self) -> bool {
        matches!(
            self.status,
            HostStatus::Ok | HostStatus::Problems | HostStatus::Incomplete
        ) && (self.checks.iter().any(|c| c.status != Status::Unknown)
            || self
                .vms
                .iter()
                .flat_map(|v| &v.adapters)
                .any(|a| a.verdict != Verdict::Unknown))
    }
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
        if h.is_diagnosed() {
            s.diagnosed += 1;
        }
        if h.adapters_error.is_some() {
            s.hosts_without_adapter_list += 1;
        }
        s.warnings += h.checks.iter().filter(|c| c.status == Status::Warn).count();
        for a in h.vms.iter().flat_map(|v| &v.adapters) {
            s.adapters += 1;
            match a.verdict {
                Verdict::Hca => s.hca += 1,
                Verdict::TcpFallback => s.tcp_fallback += 1,
                Verdict::Unknown => s.unknown += 1,
            }
        }
    }
    s.warnings += fleet_checks.iter().filter(|c| c.status == Status::Warn).count();
    s.host_sets = by_status
        .iter()
        .map(|(status, names)| (status.to_string(), pvrdma_nodeset::fold(names)))
        .collect();
    s
}

impl HostDiagnosis {
    /// Whether something about the host is unknown or unreached: for a configuration-only
    /// host, beyond what only SSH shows (the transport its configuration predicts is the
    /// HCA, lossless-network).
    pub fn has_unknowns(&self) -> bool {
        if !self.configuration_only {
            return self.status != HostStatus::Ok
                || self.checks.iter().any(|c| c.status == Status::Unknown)
                || self
                    .vms
                    .iter()
                    .flat_map(|v| &v.adapters)
                    .any(|a| a.verdict == Verdict::Unknown);
        }
        self.error.is_some()
            || !self.incomplete_outputs.is_empty()
            || !self.unparsed_outputs.is_empty()
            || self.adapters_error.is_some()
            || self.vms_error.is_some()
            || !self.record_errors.is_empty()
            || self
                .checks
                .iter()
                .any(|c| c.status == Status::Unknown && !self.unknown_for_want_of_ssh(c))
            || self
                .vms
                .iter()
                .flat_map(|v| &v.adapters)
                .any(|a| a.verdict == Verdict::Unknown && !self.predicted_hca(a))
    }

    /// A configuration-only host with nothing against it: no check fails, nothing is
    /// unknown beyond what only SSH shows, its configuration predicts the HCA. Its status
    /// is `incomplete` (the transport was not observed); the report calls it
    /// "configuration only", which says why.
    pub fn configuration_only_healthy(&self) -> bool {
        self.configuration_only && self.status == HostStatus::Incomplete && !self.has_unknowns()
    }

    /// An `unknown` check of a configuration-only host that only SSH could judge
    /// (lossless-network): it says nothing about the configuration.
    pub fn unknown_for_want_of_ssh(&self, c: &Check) -> bool {
        self.configuration_only && c.status == Status::Unknown && c.id.needs_ssh()
    }

    /// An adapter of a configuration-only host whose configuration predicts the HCA: its
    /// transport is not observed, and nothing read says it falls back.
    pub fn predicted_hca(&self, a: &Adapter) -> bool {
        self.configuration_only && a.verdict == Verdict::Unknown && a.predicted == Some(Verdict::Hca)
    }
}
