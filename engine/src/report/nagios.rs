//! The monitoring-plugin report (`--format nagios`), as the Monitoring Plugins Development
//! Guidelines and Icinga's plugin output docs ask: a state (OK, WARNING, CRITICAL, UNKNOWN,
//! told by the exit code), one status line short enough for a pager that names the
//! culprit first, performance data after `|`, then one long-output line per problem.
//!
//! The state is the worst found, ranked CRITICAL > UNKNOWN > WARNING > OK: an adapter in
//! TCP fallback (unless `-w/--warning`, `-c/--critical` say otherwise), a failing host or
//! fleet check or a blocked adapter pair is CRITICAL; a host unreachable, incomplete, in
//! error, or a check or verdict unknown is UNKNOWN (`--unreachable-state` may raise
//! unreachable hosts); a warning alone is WARNING. UNKNOWN outranks WARNING because a host
//! nobody could read may well be falling back.
use crate::diagnose::{Check, Diagnosis, HostDiagnosis, HostStatus, Status, Verdict};
use std::fmt::Write as _;

mod culprit;
mod options;
mod perfdata;
mod vms;
use culprit::Culprit;
pub use options::{NagiosOptions, Range, State};
use perfdata::perfdata;

/// The status line's budget: a pager or an SMS shows about this much.
pub const STATUS_LINE_WIDTH: usize = 80;

/// The rendered plugin output and the state it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginOutput {
    pub state: State,
    /// Status line, ` | ` and performance data, then the long-output lines; ends in `\n`.
    pub text: String,
}

/// The status line alone, for a failure that left no report (bad arguments, timeout,
/// internal error): `PVRDMA UNKNOWN - <reason>`, made one line; a reason too long for it
/// follows whole as long output.
pub fn status_only(state: State, reason: &str) -> String {
    let whole = format!("PVRDMA {} - {}", state.word(), plain(reason));
    let mut line = whole.clone();
    shorten(&mut line, STATUS_LINE_WIDTH);
    line.push('\n');
    if line.trim_end() != whole {
        line.push_str(&plain(reason));
        line.push('\n');
    }
    line
}

/// One piece of the status line, culprit first: `esx02: firewall-pvrdma failing`,
/// `esx01 vm-a#0, esx01 vm-b#0 (+3 more): TCP fallback`; without a culprit (the run's own
/// timeout) its text alone.
struct Part {
    state: State,
    /// What is wrong with the culprits, or the whole text when there is none.
    head: String,
    /// Who: hosts or adapters (`esx02 hpc-node02#0`), in the order found.
    culprits: Vec<Culprit>,
    /// The culprits are host names: all of them together show as one node set.
    hosts: bool,
}

impl Part {
    fn new(state: State, head: String, culprits: Vec<Culprit>) -> Part {
        Part {
            state,
            head,
            culprits,
            hosts: false,
        }
    }

    /// A part whose culprits are hosts (`esx[01-04]: unreachable`).
    fn on_hosts(state: State, head: String, hosts: Vec<String>) -> Part {
        Part {
            hosts: true,
            ..Part::new(state, head, hosts.into_iter().map(Culprit::host).collect())
        }
    }

    /// The part naming at most `k` culprits, each whole; `short`: host names cut to their
    /// first DNS label (`esx02.example.com` → `esx02`), still whole names.
    fn text(&self, k: usize, short: bool) -> String {
        if self.culprits.is_empty() {
            return self.head.clone();
        }
        let n = self.culprits.len();
        let k = k.clamp(1, n);
        let name = |c: &Culprit| c.name(short);
        let who = if k == n && n > 1 && self.hosts {
            let names: Vec<String> = self.culprits.iter().map(name).collect();
            pvrdma_nodeset::fold(&names)
        } else {
            let mut who = self.culprits.iter().take(k).map(name).collect::<Vec<_>>().join(", ");
            if n > k {
                let _ = write!(who, " (+{} more)", n - k);
            }
            who
        };
        format!("{who}: {}", self.head)
    }
}

/// One long-output line: `[STATE] subject: what`.
struct Problem {
    state: State,
    line: String,
}

/// Renders the plugin report. Host-supplied names are made safe for the plugin protocol
/// (no `|`, which would start performance data, and no line breaks).
pub fn render(d: &Diagnosis, opts: &NagiosOptions) -> PluginOutput {
    let mut parts: Vec<Part> = Vec::new();
    let mut problems: Vec<Problem> = Vec::new();
    // The failing checks first: they are what explains a fallback and what to fix.
    failing_checks(d, &mut parts, &mut problems);
    blocked_pairs(d, &mut parts, &mut problems);
    fallback(d, opts, &mut parts, &mut problems);
    let probe_cut = d.probes.iter().any(|p| p.run_stage.is_some());
    let cut = probe_cut || d.hosts.iter().any(|h| h.error.as_ref().is_some_and(is_run_timeout));
    if let (Some(limit), true) = (opts.timed_out, cut) {
        parts.push(Part::new(
            State::Unknown,
            format!(
                "timed out after {} ({})",
                crate::duration::text(limit),
                timeout_stage(d)
            ),
            Vec::new(),
        ));
    }
    unreached(d, opts, &mut parts, &mut problems);
    unknowns(d, &mut parts, &mut problems);
    vms::not_diagnosed(d, &mut parts, &mut problems);
    warnings(d, &mut parts, &mut problems);

    let state = parts.iter().fold(State::Ok, |s, p| s.worst(p.state));
    // Worst first, then in the order found (culprit first): a stable sort keeps it.
    parts.sort_by_key(|p| std::cmp::Reverse(p.state.rank()));
    problems.sort_by_key(|p| std::cmp::Reverse(p.state.rank()));
    let mut parts_text: Vec<&Part> = parts.iter().filter(|p| p.state != State::Ok).collect();
    let ok_parts: Vec<&Part> = parts.iter().filter(|p| p.state == State::Ok).collect();
    parts_text.extend(ok_parts);
    let mut text = status_line(state, &parts_text, d);
    text.push_str(" | ");
    text.push_str(&perfdata(d, opts));
    text.push('\n');
    for p in &problems {
        let _ = writeln!(text, "[{}] {}", p.state.word(), plain(&p.line));
    }
    PluginOutput { state, text }
}

/// `PVRDMA <STATE> - <parts>` within [`STATUS_LINE_WIDTH`]: the worst part first, culprit
/// first, naming as many culprits as fit, each whole (`+N more` counts the others); parts
/// that do not fit are counted (`+N more problems`). The first part always shows: when
/// even one culprit does not fit, its host names shrink to their first label, and only
/// a single name longer than the line itself is cut, at the end.
fn status_line(state: State, parts: &[&Part], d: &Diagnosis) -> String {
    let lead = format!("PVRDMA {} - ", state.word());
    if parts.is_empty() {
        return format!("{lead}{}", plain(&healthy_text(d)));
    }
    let more = |n: usize| format!("; +{n} more problem{}", if n == 1 { "" } else { "s" });
    let width = |t: &str| t.chars().count();
    let mut line = lead;
    for (i, part) in parts.iter().enumerate() {
        let sep = if i == 0 { "" } else { "; " };
        let left = parts.len() - i - 1;
        // Parts keep room for "; +N more problems" while parts remain after them.
        let reserve = if left > 0 { width(&more(left)) } else { 0 };
        // No room for the count is needed when every later part fits with one culprit.
        let rest: usize = parts[i + 1..]
            .iter()
            .map(|p| 2 + width(&plain(&p.text(1, false))))
            .sum();
        let reserve = reserve.min(rest);
        // Each form with the room it needs after it, best first: full names (the count
        // of later problems kept, then given up for the first part), then, for the
        // first part only, host names shrunk to their first label.
        let full: Vec<String> = (1..=part.culprits.len().max(1))
            .rev()
            .map(|k| plain(&part.text(k, false)))
            .collect();
        let mut forms: Vec<(&String, usize)> = full.iter().map(|t| (t, reserve)).collect();
        let short = plain(&part.text(1, true));
        if i == 0 {
            forms.extend(full.iter().map(|t| (t, 0)));
            forms.push((&short, reserve));
            forms.push((&short, 0));
        }
        let room = |t: &String, reserve: usize| width(&line) + sep.len() + width(t) + reserve <= STATUS_LINE_WIDTH;
        let fits = forms.iter().find(|(t, r)| room(t, *r)).map(|(t, _)| (*t).clone());
        match fits {
            Some(t) => {
                line.push_str(sep);
                line.push_str(&t);
            }
            None if i == 0 => {
                // One name longer than the line: cut at the end, the culprit still first.
                line.push_str(&plain(&part.text(1, true)));
                shorten(&mut line, STATUS_LINE_WIDTH);
                return line;
            }
            None => {
                let tail = more(parts.len() - i);
                if width(&line) + width(&tail) <= STATUS_LINE_WIDTH {
                    line.push_str(&tail);
                }
                break;
            }
        }
    }
    line
}

/// The OK text: what was verified.
fn healthy_text(d: &Diagnosis) -> String {
    let s = &d.summary;
    let hosts = super::plural(s.hosts, "host", "hosts");
    let configuration_only = d.hosts.iter().filter(|h| h.configuration_only).count();
    if configuration_only > 0 {
        let predicted = d
            .hosts
            .iter()
            .flat_map(|h| h.vms.iter().flat_map(move |v| v.adapters.iter().map(move |a| (h, a))))
            .filter(|(h, a)| h.predicted_hca(a))
            .count();
        return format!(
            "configuration only (no SSH) on {configuration_only} of {hosts}: it predicts the HCA for {predicted} of {} PVRDMA adapters; their transport was not observed",
            s.adapters
        );
    }
    if s.adapters == 0 {
        format!("{hosts} checked, no PVRDMA adapter running")
    } else {
        format!("{} of {} PVRDMA adapters use the HCA on {hosts}", s.hca, s.adapters)
    }
}

/// Adapters in TCP fallback, judged by the thresholds.
fn fallback(d: &Diagnosis, opts: &NagiosOptions, parts: &mut Vec<Part>, problems: &mut Vec<Problem>) {
    let mut culprits = Vec::new();
    let mut lines = Vec::new();
    for h in &d.hosts {
        for vm in &h.vms {
            for a in vm.adapters.iter().filter(|a| a.verdict == Verdict::TcpFallback) {
                culprits.push(Culprit::adapter(&h.host, &vm.name, a.index));
                let why = if a.reasons.is_empty() {
                    String::new()
                } else {
                    format!(": {}", a.reasons.join("; "))
                };
                // vsish's line decides the verdict; the reasons say what explains it.
                lines.push(format!(
                    "{} {}#{}: tcp-fallback (vsish `Physical HCA available:0`){why}",
                    h.host, vm.name, a.index
                ));
            }
        }
    }
    if culprits.is_empty() {
        return;
    }
    let n = culprits.len() as f64;
    let state = fallback_state(n, opts);
    let head = format!(
        "TCP fallback{}",
        if state == State::Ok { " (within thresholds)" } else { "" }
    );
    parts.push(Part::new(state, head, culprits));
    problems.extend(lines.into_iter().map(|line| Problem { state, line }));
}

/// The state `n` adapters in TCP fallback deserve under `-w`/`-c` (any is CRITICAL when
/// neither is given).
fn fallback_state(n: f64, opts: &NagiosOptions) -> State {
    if opts.warning.is_none() && opts.critical.is_none() {
        return if n > 0.0 { State::Critical } else { State::Ok };
    }
    if opts.critical.as_ref().is_some_and(|r| r.alerts(n)) {
        State::Critical
    } else if opts.warning.as_ref().is_some_and(|r| r.alerts(n)) {
        State::Warning
    } else {
        State::Ok
    }
}

/// One long-output line per host check with `status`, then per fleet check.
fn check_lines(d: &Diagnosis, status: Status, state: State, problems: &mut Vec<Problem>) {
    let line = |host: Option<&str>, c: &Check| {
        let at = host.map_or_else(|| "across hosts".to_string(), str::to_string);
        format!("{at} {}: {}", c.id, c.summary)
    };
    for h in &d.hosts {
        for c in h
            .checks
            .iter()
            .filter(|c| c.status == status && !h.unknown_for_want_of_ssh(c))
        {
            problems.push(Problem {
                state,
                line: line(Some(&h.host), c),
            });
        }
    }
    for c in d.fleet_checks.iter().filter(|c| c.status == status) {
        problems.push(Problem {
            state,
            line: line(None, c),
        });
    }
}

/// Status-line parts for the checks with `status`: `<hosts>: <id> <verb>`, and for a
/// check across hosts `<hosts it names>: <id> <verb> across hosts`.
fn check_parts(d: &Diagnosis, status: Status, state: State, verb: &str, parts: &mut Vec<Part>) {
    // A configuration-only run is not UNKNOWN for what only SSH shows: its status line
    // says it was configuration-only instead.
    let by_id = super::hosts_by_check_where(d, status, |h, c| !h.unknown_for_want_of_ssh(c));
    for (id, on) in by_id {
        parts.push(Part::on_hosts(
            state,
            format!("{id} {verb}"),
            on.into_iter().map(str::to_string).collect(),
        ));
    }
    for c in d.fleet_checks.iter().filter(|c| c.status == status) {
        let named: Vec<String> = d
            .hosts
            .iter()
            .filter(|h| h.fleet_failures.contains(&c.id))
            .map(|h| h.host.clone())
            .collect();
        parts.push(Part::on_hosts(state, format!("{} {verb} across hosts", c.id), named));
    }
}

fn failing_checks(d: &Diagnosis, parts: &mut Vec<Part>, problems: &mut Vec<Problem>) {
    check_parts(d, Status::Fail, State::Critical, "failing", parts);
    check_lines(d, Status::Fail, State::Critical, problems);
}

fn warnings(d: &Diagnosis, parts: &mut Vec<Part>, problems: &mut Vec<Problem>) {
    check_parts(d, Status::Warn, State::Warning, "warning", parts);
    check_lines(d, Status::Warn, State::Warning, problems);
}

fn blocked_pairs(d: &Diagnosis, parts: &mut Vec<Part>, problems: &mut Vec<Problem>) {
    let blocked = d.transport.totals.blocked;
    if blocked == 0 {
        return;
    }
    let why: Vec<&str> = d
        .fleet_checks
        .iter()
        .filter(|c| c.status == Status::Fail)
        .map(|c| c.id.id())
        .collect();
    let head = format!("{blocked} adapter pair{} blocked", if blocked == 1 { "" } else { "s" });
    let line = if why.is_empty() {
        format!("{head} across hosts")
    } else {
        format!("{head} across hosts by {}", why.join(", "))
    };
    let mut hosts: Vec<String> = Vec::new();
    for p in d.transport.host_pairs.iter().filter(|p| p.pairs.blocked > 0) {
        for h in [p.a(), p.b()] {
            if !hosts.iter().any(|x| x == h) {
                hosts.push(h.to_string());
            }
        }
    }
    parts.push(Part::on_hosts(State::Critical, head, hosts));
    problems.push(Problem {
        state: State::Critical,
        line,
    });
}

/// Whether the host stopped because the run hit `--timeout` (not its own failure).
fn stopped_by_run_timeout(h: &HostDiagnosis, opts: &NagiosOptions) -> bool {
    opts.timed_out.is_some() && h.error.as_ref().is_some_and(is_run_timeout)
}

/// A failure that is the run's own `--timeout`, not the host's.
fn is_run_timeout(e: &crate::capture::Failure) -> bool {
    e.stopped_by_run_timeout().is_some()
}

/// Hosts not reached, in error, or interrupted; and hosts incomplete.
fn unreached(d: &Diagnosis, opts: &NagiosOptions, parts: &mut Vec<Part>, problems: &mut Vec<Problem>) {
    let groups = [
        (HostStatus::Unreachable, "unreachable"),
        (HostStatus::Error, "in error"),
        (HostStatus::Interrupted, "interrupted"),
        (HostStatus::Incomplete, "incomplete"),
    ];
    for (status, word) in groups {
        // A configuration-only host is incomplete by nature: only what SSH would have
        // shown is unknown there, and the status line says the run was configuration-only.
        let hosts: Vec<&HostDiagnosis> = d
            .hosts
            .iter()
            .filter(|h| h.status == status && (!h.configuration_only || h.has_unknowns()))
            .collect();
        for by_timeout in [false, true] {
            let these: Vec<&&HostDiagnosis> = hosts
                .iter()
                .filter(|h| stopped_by_run_timeout(h, opts) == by_timeout)
                .collect();
            if these.is_empty() {
                continue;
            }
            let state = if status == HostStatus::Unreachable && !by_timeout {
                opts.unreachable
            } else {
                State::Unknown
            };
            let names: Vec<String> = these.iter().map(|h| h.host.clone()).collect();
            let head = format!("{word}{}", if by_timeout { " at the timeout" } else { "" });
            parts.push(Part::on_hosts(state, head, names));
            for h in these {
                // An incomplete host without a reason of its own is told by the lines of
                // its unknown checks and verdicts.
                if let Some(why) = timeout_reason(h, opts).or_else(|| host_reason(h)) {
                    problems.push(Problem {
                        state,
                        line: format!("{}: {word}: {why}", h.host),
                    });
                }
            }
        }
    }
}

/// Why the run's `--timeout` stopped a host, naming the limit the user gave (collection
/// itself stops a little earlier, to leave time for this report) and the stage.
fn timeout_reason(h: &HostDiagnosis, opts: &NagiosOptions) -> Option<String> {
    let stage = h.error.as_ref()?.stopped_by_run_timeout()?;
    let limit = opts.timed_out?;
    Some(format!(
        "the run hit --timeout {} {}",
        crate::duration::text(limit),
        stage.while_host()
    ))
}

/// Why a host is not fully diagnosed, in one line, when the host itself says.
fn host_reason(h: &HostDiagnosis) -> Option<String> {
    if let Some(e) = &h.error {
        return Some(e.message.clone());
    }
    if let Some(e) = h.vms_error.as_ref().or(h.adapters_error.as_ref()) {
        return Some(e.clone());
    }
    if let Some(o) = h.incomplete_outputs.first() {
        let more = h.incomplete_outputs.len() - 1;
        let tail = if more > 0 {
            format!(" (+{more} more outputs)")
        } else {
            String::new()
        };
        return Some(format!("{}: {}{tail}", o.command, o.reason));
    }
    h.record_errors.first().cloned()
}

/// Unknown checks and verdicts on hosts that were diagnosed.
fn unknowns(d: &Diagnosis, parts: &mut Vec<Part>, problems: &mut Vec<Problem>) {
    let unknown_adapters: Vec<Culprit> = d
        .hosts
        .iter()
        .flat_map(|h| {
            h.vms.iter().flat_map(move |vm| {
                vm.adapters
                    .iter()
                    .filter(|a| a.verdict == Verdict::Unknown && !h.predicted_hca(a))
                    .map(move |a| (h, vm, a))
            })
        })
        .map(|(h, vm, a)| {
            let why = a.reasons.first().map(|r| format!(": {r}")).unwrap_or_default();
            problems.push(Problem {
                state: State::Unknown,
                line: format!("{} {}#{}: verdict unknown{why}", h.host, vm.name, a.index),
            });
            Culprit::adapter(&h.host, &vm.name, a.index)
        })
        .collect();
    if !unknown_adapters.is_empty() {
        parts.push(Part::new(
            State::Unknown,
            "verdict unknown".to_string(),
            unknown_adapters,
        ));
    }
    check_parts(d, Status::Unknown, State::Unknown, "unknown", parts);
    check_lines(d, Status::Unknown, State::Unknown, problems);
}

/// The stage the run was in when `--timeout` stopped it, from the hosts (and probes) it
/// stopped.
fn timeout_stage(d: &Diagnosis) -> String {
    let mut stopped: std::collections::BTreeMap<crate::capture::RunStage, Vec<&str>> = Default::default();
    for h in &d.hosts {
        if let Some(stage) = h.error.as_ref().and_then(|e| e.stopped_by_run_timeout()) {
            stopped.entry(stage).or_default().push(h.host.as_str());
        }
    }
    for p in &d.probes {
        if let Some(stage) = p.run_stage {
            let hosts = stopped.entry(stage).or_default();
            if !hosts.contains(&p.from.as_str()) {
                hosts.push(p.from.as_str());
            }
        }
    }
    let stages: Vec<String> = stopped
        .iter()
        .map(|(stage, hosts)| format!("{} {}", stage.doing(), pvrdma_nodeset::fold(hosts)))
        .collect();
    if stages.is_empty() {
        "after collection".to_string()
    } else {
        format!("while {}", stages.join(", "))
    }
}

/// Text made safe for the plugin protocol: one line, no `|` (which starts performance
/// data), no control characters.
fn plain(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '|' => '¦',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// Cuts `line` to `width` characters, ending in `…`.
fn shorten(line: &mut String, width: usize) {
    if line.chars().count() > width {
        let keep: String = line.chars().take(width.saturating_sub(1)).collect();
        *line = format!("{keep}…");
    }
}

#[cfg(test)]
mod tests;
