//! The Prometheus metrics (`--format prometheus`, the node_exporter textfile, `serve`).
//!
//! Text exposition format 0.0.4 ("Exposition formats", prometheus.io), the format
//! `promtool check metrics` lints and node_exporter's textfile collector reads. Every
//! metric has `# HELP` and `# TYPE`. The RDMA uplinks' traffic counters are counters
//! (`_total`, as the NIC counts them since its driver loaded); every other metric is a
//! gauge: the OpenMetrics `info` type is not part of 0.0.4, so the info metrics are gauges
//! at 1 (as `foo_build_info` in "Metric and label naming"). Names carry the `pvrdma_` prefix and base units; `host_name` and `vm_name`
//! are spelt as the widely used vSphere exporters spell them, so PromQL joins work.
//!
//! Enumerations (host status, check status, adapter verdict, probe status) are one series
//! per value at 1 or 0, as the Prometheus client libraries' Enum metric does, so an alert
//! is `== 1` on one label value and every value is always present. What was not learnt is
//! absent, never a made-up value: an unreachable host has no check or adapter series, and
//! an adapter whose verdict cannot be told is `verdict="unknown"` at 1, never a 0 on
//! `tcp-fallback`.
use super::exposition::Family;
use crate::diagnose::probe::{Probe, ProbeStatus};
use crate::diagnose::{Adapter, Check, Diagnosis, HostDiagnosis, HostStatus, Status, UplinkCounters, Verdict};
use pvrdma_parsers::NicCounters;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What the exposition covers. Every per-host series carries `host_name` in both, so an
/// alerting rule, an Alertmanager grouping or a dashboard reads the host from one label
/// on every path (textfile, group probe, per-host probe), whatever `instance` holds there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Many hosts in one exposition (one-shot runs, the textfile, a group of targets).
    Fleet,
    /// One host per exposition (`/probe?target=`): nothing is learnt there about pairs of
    /// adapters across hosts, so `pvrdma_adapter_pairs` is absent.
    SingleTarget,
}

/// What the exposition says about the run itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrometheusOptions {
    /// Whether per-host series carry `host_name`.
    pub scope: Scope,
    /// When the run finished (`pvrdma_last_run_timestamp_seconds`): a textfile carries no
    /// sample timestamps, so this is how a stale file is told from a fresh one.
    pub finished: SystemTime,
    /// The run's wall time (`pvrdma_run_duration_seconds`).
    pub duration: Duration,
}

impl PrometheusOptions {
    /// For a diagnosis rendered without a run's times: [`Scope::Fleet`], finished now,
    /// duration 0.
    pub fn rendered_now() -> Self {
        PrometheusOptions {
            scope: Scope::Fleet,
            finished: SystemTime::now(),
            duration: Duration::ZERO,
        }
    }
}

/// The every-value-of-an-enumeration lists, in the order the series are written.
const HOST_STATUSES: [HostStatus; 6] = [
    HostStatus::Ok,
    HostStatus::Problems,
    HostStatus::Incomplete,
    HostStatus::Unreachable,
    HostStatus::Error,
    HostStatus::Interrupted,
];
const STATUSES: [Status; 5] = [
    Status::NotApplicable,
    Status::Pass,
    Status::Warn,
    Status::Fail,
    Status::Unknown,
];
const VERDICTS: [Verdict; 3] = [Verdict::Hca, Verdict::TcpFallback, Verdict::Unknown];
const PROBE_STATUSES: [ProbeStatus; 5] = [
    ProbeStatus::Ok,
    ProbeStatus::Mtu,
    ProbeStatus::Unreachable,
    ProbeStatus::Skipped,
    ProbeStatus::Unknown,
];

/// The report's name of a check status (as in the JSON report).
fn status_label(s: Status) -> &'static str {
    match s {
        Status::NotApplicable => "not-applicable",
        Status::Pass => "pass",
        Status::Warn => "warn",
        Status::Fail => "fail",
        Status::Unknown => "unknown",
    }
}

/// The report's name of an adapter verdict (as in the JSON report).
fn verdict_label(v: Verdict) -> &'static str {
    match v {
        Verdict::Hca => "hca",
        Verdict::TcpFallback => "tcp-fallback",
        Verdict::Unknown => "unknown",
    }
}

/// The report's name of a failure kind (as in the JSON report): a small, fixed set, so a
/// label of it keeps the series count bounded.
fn error_class(kind: crate::capture::ErrorKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "error".to_string())
}

/// Why a host was not read (`None` for a host read): the failure that stopped it, else
/// (reached, but every output it answered broke off) `incomplete` and the first output
/// that broke off.
fn read_failure(h: &HostDiagnosis) -> Option<(String, String)> {
    if h.is_diagnosed() {
        return None;
    }
    if let Some(e) = &h.error {
        return Some((error_class(e.kind), e.message.clone()));
    }
    let message = h.incomplete_outputs.first().map_or_else(
        || "no check or adapter verdict could be told".to_string(),
        |o| format!("{}: {}", o.command, o.reason),
    );
    Some(("incomplete".to_string(), message))
}

/// Longest message a label carries, in characters: a page reads it whole, and a label
/// value that grows with its input would multiply the series.
const MESSAGE_CHARS: usize = 200;

/// A failure's first line, cut to [`MESSAGE_CHARS`] characters (`...` marks the cut).
fn bounded_message(message: &str) -> String {
    let line = message.lines().next().unwrap_or("").trim();
    if line.chars().count() <= MESSAGE_CHARS {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(MESSAGE_CHARS - 3).collect();
    cut.push_str("...");
    cut
}

/// A series' labels, in the order they are written.
type Labels = Vec<(&'static str, String)>;

/// Seconds with millisecond precision, in C notation (`12.345`).
fn seconds(d: Duration) -> String {
    format!("{}.{:03}", d.as_secs(), d.subsec_millis())
}

/// Whether the host's PVRDMA adapters were listed, so their count per verdict is a fact
/// (a 0 there means "none", not "could not tell").
fn adapters_listed(h: &HostDiagnosis) -> bool {
    h.is_diagnosed() && h.adapters_error.is_none() && h.vms_error.is_none()
}

/// The metrics of one diagnosis in text exposition format 0.0.4.
pub fn render(diagnosis: &Diagnosis, options: &PrometheusOptions) -> String {
    let run = RunFamilies::of(options);
    let mut hosts = HostFamilies::new();
    for h in &diagnosis.hosts {
        hosts.add(h);
    }
    let fleet = FleetFamilies::of(diagnosis, options.scope);
    let probes = ProbeFamilies::of(&diagnosis.probes);
    let before_uplinks = [
        &run.build,
        &run.last_run,
        &run.duration,
        &hosts.up,
        &hosts.status,
        &hosts.failures,
        &hosts.info,
        &hosts.checks,
        &hosts.remedies,
        &fleet.checks,
        &fleet.remedies,
        &hosts.verdicts,
        &hosts.reasons,
        &hosts.counts,
        &fleet.chosen,
    ];
    let after_uplinks = [&fleet.pairs, &probes.status, &probes.rtt, &probes.loss];
    let mut out = String::new();
    for family in before_uplinks
        .into_iter()
        .chain(&hosts.uplinks.families)
        .chain(after_uplinks)
    {
        family.write(&mut out);
    }
    out
}

/// The metrics about the run and the tool that wrote them.
struct RunFamilies {
    build: Family,
    last_run: Family,
    duration: Family,
}

impl RunFamilies {
    fn of(options: &PrometheusOptions) -> Self {
        let mut build = Family::new(
            "pvrdma_doctor_build_info",
            "The pvrdma-doctor that wrote these metrics; always 1.",
        );
        build.add(vec![("version", env!("CARGO_PKG_VERSION").to_string())], "1");
        let mut last_run = Family::new(
            "pvrdma_last_run_timestamp_seconds",
            "Unix time the run that produced these metrics finished (a textfile carries no sample timestamps; alert when it grows old).",
        );
        let finished = options.finished.duration_since(UNIX_EPOCH).unwrap_or_default();
        last_run.add(Vec::new(), seconds(finished));
        let mut duration = Family::new(
            "pvrdma_run_duration_seconds",
            "Wall time of the run that produced these metrics, in seconds.",
        );
        duration.add(Vec::new(), float(options.duration.as_secs_f64()));
        RunFamilies {
            build,
            last_run,
            duration,
        }
    }
}

/// The per-host metrics: whether the host was read, its status, checks, adapters and
/// uplink counters, every series labelled with `host_name`.
struct HostFamilies {
    up: Family,
    status: Family,
    info: Family,
    checks: Family,
    verdicts: Family,
    reasons: Family,
    remedies: Family,
    uplinks: UplinkFamilies,
    failures: Family,
    counts: Family,
}

impl HostFamilies {
    fn new() -> Self {
        HostFamilies {
            up: Family::new(
                "pvrdma_host_up",
                "1 when the host was reached and its outputs read (a check or an adapter verdict is known), else 0.",
            ),
            status: Family::new(
                "pvrdma_host_status",
                "The host's overall status, one series per status: 1 for the host's, 0 for the others.",
            ),
            info: Family::new(
                "pvrdma_host_esxi_info",
                "The ESXi version and build the host reports; always 1 (absent when unknown).",
            ),
            checks: Family::new(
                "pvrdma_check_status",
                "Each host check's status (ids as in --list-checks), one series per status at 1 or 0; absent for a host not read.",
            ),
            verdicts: Family::new(
                "pvrdma_adapter_verdict",
                "Whether each PVRDMA adapter's traffic to other hosts uses the physical HCA (hca) or falls back to TCP (tcp-fallback), or cannot be told (unknown); one series per verdict at 1 or 0; absent for a host not read. world_id is only set when two running VMs of a host share a name.",
            ),
            reasons: Family::new(
                "pvrdma_adapter_reason_info",
                "Why an adapter falls back to TCP or has no verdict (the failing check or the vsish property that decided it), one series per reason; always 1, absent for an adapter on the HCA. Alert texts read it.",
            ),
            remedies: Family::new(
                "pvrdma_check_remedy_info",
                "What fixes a host check that fails or warns: the command the host's reading can use (esxcli over SSH; govc, else PowerCLI, for a host read through the vSphere API without SSH), then the advice; always 1, absent for a passing check. Alert texts read it.",
            ),
            uplinks: UplinkFamilies::new(),
            failures: Family::new(
                "pvrdma_host_read_failure_info",
                "Why a host was not read: the failure class (its kind in the JSON report: unreachable, timeout, key-exchange, auth, host-key-unknown, ...) and the first line of its message, at most 200 characters; always 1, absent for a host read. Alert texts read it.",
            ),
            counts: Family::new(
                "pvrdma_adapters",
                "PVRDMA adapters on the host per verdict; absent when the host's adapters could not be listed.",
            ),
        }
    }

    /// The series of one host.
    fn add(&mut self, h: &HostDiagnosis) {
        let base: Labels = vec![("host_name", h.host.clone())];
        self.up.add(base.clone(), if h.is_diagnosed() { "1" } else { "0" });
        self.status
            .one_hot(&base, "status", &HOST_STATUSES, h.status, crate::diagnose::status_name);
        if let Some((class, message)) = read_failure(h) {
            let mut l = base.clone();
            l.push(("class", class));
            l.push(("message", bounded_message(&message)));
            self.failures.add(l, "1");
        }
        if let Some(version) = &h.esxi_version {
            let mut l = base.clone();
            l.push(("version", version.clone()));
            self.info.add(l, "1");
        }
        for c in &h.checks {
            let mut l = base.clone();
            l.push(("check", c.id.to_string()));
            self.checks.one_hot(&l, "status", &STATUSES, c.status, status_label);
        }
        add_adapters(&mut self.verdicts, &mut self.reasons, &base, h);
        self.uplinks.add(&base, &h.uplinks);
        add_remedies(&mut self.remedies, &base, &h.checks, h.configuration_only);
        if adapters_listed(h) {
            for v in VERDICTS {
                let n = h
                    .vms
                    .iter()
                    .flat_map(|vm| &vm.adapters)
                    .filter(|a| a.verdict == v)
                    .count();
                let mut l = base.clone();
                l.push(("verdict", verdict_label(v).to_string()));
                self.counts.add(l, n.to_string());
            }
        }
    }
}

/// The metrics across hosts: the checks across hosts, their remedies, the pair tally, and
/// whether each VM a VM-first run chose was diagnosed.
struct FleetFamilies {
    checks: Family,
    remedies: Family,
    pairs: Family,
    chosen: Family,
}

impl FleetFamilies {
    fn of(diagnosis: &Diagnosis, scope: Scope) -> Self {
        let mut checks = Family::new(
            "pvrdma_fleet_check_status",
            "Each check across hosts (ids as in --list-checks), one series per status at 1 or 0.",
        );
        add_fleet_checks(&mut checks, &diagnosis.fleet_checks);
        let mut remedies = Family::new(
            "pvrdma_fleet_check_remedy_info",
            "What fixes a check across hosts that fails or warns; always 1, absent for a passing check.",
        );
        add_remedies(&mut remedies, &[], &diagnosis.fleet_checks, false);
        let mut pairs = Family::new(
            "pvrdma_adapter_pairs",
            "Pairs of PVRDMA adapters of different VMs by transport: memcpy (same host), rdma, tcp (an adapter falls back), blocked (a failing check across hosts breaks the path), unknown; absent for a single-host probe and when a host's adapters could not be listed (the tally would leave them out).",
        );
        if pairs_learnt(diagnosis, scope) {
            let t = &diagnosis.transport.totals;
            for (name, n) in [
                ("memcpy", t.memcpy),
                ("rdma", t.rdma),
                ("tcp", t.tcp),
                ("blocked", t.blocked),
                ("unknown", t.unknown),
            ] {
                pairs.add(vec![("transport", name.to_string())], n.to_string());
            }
        }
        let mut chosen = Family::new(
            "pvrdma_vm_diagnosed",
            "A VM-first run's (--vm, a vm: group's) chosen VMs: 1 when the VM was diagnosed, 0 when it was not (no host diagnosed runs it, its host's VM list could not be read, or it runs on a host the run left out); absent when the run was not VM-first.",
        );
        if let Some(vm_scope) = &diagnosis.vm_scope {
            for vm in &vm_scope.vms {
                let diagnosed = !vm_scope.not_diagnosed.contains(vm);
                chosen.add(vec![("vm_name", vm.clone())], if diagnosed { "1" } else { "0" });
            }
        }
        FleetFamilies {
            checks,
            remedies,
            pairs,
            chosen,
        }
    }
}

/// Whether the pair tally is a fact: a fleet exposition whose every host had its adapters
/// listed. A single-host probe learns nothing about pairs across hosts, and a host not
/// read would silently drop out of the tally.
fn pairs_learnt(diagnosis: &Diagnosis, scope: Scope) -> bool {
    scope == Scope::Fleet && !diagnosis.hosts.is_empty() && diagnosis.hosts.iter().all(adapters_listed)
}

/// Every adapter of the host with the labels that name it: two running VMs sharing a
/// display name are told apart by a `world_id` label (or their position when a World ID
/// is unknown), so no two series collide.
fn adapter_labels<'a>(base: &[(&'static str, String)], h: &'a HostDiagnosis) -> Vec<(&'a Adapter, Labels)> {
    let mut named: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for vm in &h.vms {
        *named.entry(vm.name.as_str()).or_default() += 1;
    }
    let mut out = Vec::new();
    for (i, vm) in h.vms.iter().enumerate() {
        let shared = named.get(vm.name.as_str()).is_some_and(|n| *n > 1);
        for a in &vm.adapters {
            let mut l = base.to_vec();
            l.push(("vm_name", vm.name.clone()));
            l.push(("adapter", a.index.to_string()));
            if shared {
                let id = match vm.world_id {
                    Some(w) => w.to_string(),
                    None => format!("not-running-{}", i + 1),
                };
                l.push(("world_id", id));
            }
            out.push((a, l));
        }
    }
    out
}

/// One series per verdict for every adapter of the host, and one per reason of every
/// adapter not on the HCA (labelled as its verdict).
fn add_adapters(verdicts: &mut Family, reasons: &mut Family, base: &[(&'static str, String)], h: &HostDiagnosis) {
    for (a, labels) in adapter_labels(base, h) {
        verdicts.one_hot(&labels, "verdict", &VERDICTS, a.verdict, verdict_label);
        if a.verdict == Verdict::Hca {
            continue;
        }
        let mut seen: Vec<&String> = Vec::new();
        for reason in &a.reasons {
            if seen.contains(&reason) {
                continue;
            }
            seen.push(reason);
            let mut l = labels.clone();
            l.push(("reason", reason.clone()));
            reasons.add(l, "1");
        }
    }
}

/// One series per check that fails or warns and has a remedy. The remedy is the one line
/// the host's reading can use: esxcli over SSH; read without SSH, govc's (esxcli through
/// the vSphere API) or PowerCLI's.
fn add_remedies(family: &mut Family, base: &[(&'static str, String)], checks: &[Check], without_ssh: bool) {
    for c in checks {
        if !matches!(c.status, Status::Fail | Status::Warn) {
            continue;
        }
        if let Some(remedy) = c
            .remedy
            .as_ref()
            .map(|r| r.text_for(without_ssh))
            .filter(|t| !t.is_empty())
        {
            let mut l = base.to_vec();
            l.push(("check", c.id.to_string()));
            l.push(("remedy", remedy));
            family.add(l, "1");
        }
    }
}

fn add_fleet_checks(fleet: &mut Family, fleet_checks: &[Check]) {
    for c in fleet_checks {
        fleet.one_hot(
            &[("check", c.id.to_string())],
            "status",
            &STATUSES,
            c.status,
            status_label,
        );
    }
}

/// One uplink counter metric: its name, its help, and how it is read from the report.
type UplinkCounter = (&'static str, &'static str, fn(&NicCounters) -> Option<u64>);

/// The counters of the RDMA uplinks, one family per counter.
const UPLINK_COUNTERS: [UplinkCounter; 6] = [
    (
        "pvrdma_uplink_receive_packets_total",
        "Packets the RDMA uplink received since its driver loaded (esxcli network nic stats get: Packets received).",
        |c| c.packets_received,
    ),
    (
        "pvrdma_uplink_transmit_packets_total",
        "Packets the RDMA uplink sent since its driver loaded (Packets sent).",
        |c| c.packets_sent,
    ),
    (
        "pvrdma_uplink_receive_dropped_total",
        "Received packets the RDMA uplink dropped since its driver loaded (Receive packets dropped); on a RoCE network each costs a retransmission.",
        |c| c.receive_dropped,
    ),
    (
        "pvrdma_uplink_transmit_dropped_total",
        "Packets to send the RDMA uplink dropped since its driver loaded (Transmit packets dropped).",
        |c| c.transmit_dropped,
    ),
    (
        "pvrdma_uplink_receive_errors_total",
        "Receive errors of the RDMA uplink since its driver loaded (Total receive errors: length, overrun, CRC, frame, FIFO, missed).",
        |c| c.receive_errors,
    ),
    (
        "pvrdma_uplink_transmit_errors_total",
        "Transmit errors of the RDMA uplink since its driver loaded (Total transmit errors: aborted, carrier, FIFO, heartbeat, window).",
        |c| c.transmit_errors,
    ),
];

/// The uplink counter metrics: one series per RDMA uplink and counter the host answered
/// (absent when unknown, never a made-up 0).
struct UplinkFamilies {
    families: [Family; 6],
}

impl UplinkFamilies {
    fn new() -> Self {
        UplinkFamilies {
            families: UPLINK_COUNTERS.map(|(name, help, _)| Family::counter(name, help)),
        }
    }

    fn add(&mut self, base: &[(&'static str, String)], uplinks: &[UplinkCounters]) {
        for u in uplinks {
            let mut labels = base.to_vec();
            labels.push(("uplink", u.uplink.clone()));
            for (family, (_, _, read)) in self.families.iter_mut().zip(UPLINK_COUNTERS) {
                if let Some(value) = read(&u.counters) {
                    family.add(labels.clone(), value.to_string());
                }
            }
        }
    }
}

/// The `--probe` metrics (absent without it).
struct ProbeFamilies {
    status: Family,
    rtt: Family,
    loss: Family,
}

impl ProbeFamilies {
    fn of(probes: &[Probe]) -> Self {
        let mut f = ProbeFamilies {
            status: Family::new(
                "pvrdma_probe_pair_status",
                "--probe: the vmkping path probe from the host's PVRDMA vmknic to the peer's, one series per status at 1 or 0 (ok: plain and MTU-sized don't-fragment pings answered; mtu: only the plain one; unreachable; skipped; unknown).",
            ),
            rtt: Family::new(
                "pvrdma_probe_rtt_seconds",
                "--probe: mean round-trip time of the plain ping from the host's PVRDMA vmknic to the peer's, in seconds.",
            ),
            loss: Family::new(
                "pvrdma_probe_loss_ratio",
                "--probe: share of the plain ping's echo requests to the peer that got no reply (0 to 1).",
            ),
        };
        for p in probes {
            let l = vec![("host_name", p.from.clone()), ("peer", p.to.clone())];
            f.status
                .one_hot(&l, "status", &PROBE_STATUSES, p.status, ProbeStatus::label);
            if let Some(rtt) = &p.rtt {
                f.rtt.add(l.clone(), float(rtt.avg_ms.0 / 1000.0));
            }
            if let Some(losses) = &p.losses {
                if losses.sent > 0 {
                    let lost = losses.sent.saturating_sub(losses.received);
                    f.loss.add(l.clone(), float(f64::from(lost) / f64::from(losses.sent)));
                }
            }
        }
        f
    }
}

/// A finite float in plain C notation (Rust's `Display` never uses a locale or an
/// exponent); a non-finite one as the format spells it.
fn float(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests;
