//! The host sections: grouping hosts with identical results, and each section's check lines.
use super::text::*;
use super::*;

/// Unfinished answers of one batch named in the human report (JSON names them all).
const UNFINISHED_SHOWN: usize = 5;

/// Anything to show under `--only-problems`: not ok, or a check that does not pass.
pub(super) fn has_problem(h: &HostDiagnosis) -> bool {
    h.status != HostStatus::Ok
        || h.checks.iter().any(|c| c.status != Status::Pass)
        || h.vms
            .iter()
            .flat_map(|v| &v.adapters)
            .any(|a| a.verdict != Verdict::Hca || !a.reasons.is_empty())
}

/// What must be equal for two hosts to share one section: everything shown except the
/// host's name and the details of passing checks.
pub(super) fn group_key(h: &HostDiagnosis) -> String {
    let mut key = format!("{:?}|{:?}|", h.status, h.esxi_version);
    if let Some(e) = &h.error {
        // The text shown under the hosts' names, with no host's own name in it when the
        // failure was made with its detail.
        let _ = write!(key, "{:?}:{}|", e.kind, e.shown_under_host());
    }
    if let Some(e) = &h.adapters_error {
        let _ = write!(key, "{e}|");
    }
    for c in &h.checks {
        let _ = write!(key, "{}:{:?}", c.id, c.status);
        if c.status != Status::Pass {
            // The forms name the host; what they do is in the changes.
            let remedy = c
                .remedy
                .as_ref()
                .map(|r| (&r.command, &r.advice, &r.decision, &r.changes));
            let _ = write!(key, ":{}:{:?}:{:?}", c.summary, remedy, c.evidence);
        }
        key.push('|');
    }
    key
}

/// Hosts in report order, folded into groups with identical results (first-seen order).
pub(super) fn group_hosts(hosts: &[HostDiagnosis], fold: bool) -> Vec<Vec<&HostDiagnosis>> {
    if !fold {
        return hosts.iter().map(|h| vec![h]).collect();
    }
    let mut keys: Vec<String> = Vec::new();
    let mut groups: Vec<Vec<&HostDiagnosis>> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for h in hosts {
        let key = group_key(h);
        match index.get(&key) {
            Some(&i) => {
                if let Some(g) = groups.get_mut(i) {
                    g.push(h);
                }
            }
            None => {
                index.insert(key.clone(), groups.len());
                keys.push(key);
                groups.push(vec![h]);
            }
        }
    }
    groups
}

pub(super) fn status_label(status: HostStatus, paint: &Paint) -> String {
    let name = diagnose::status_name(status);
    match status {
        HostStatus::Ok => paint.green(name),
        HostStatus::Incomplete | HostStatus::Interrupted => paint.yellow(name),
        HostStatus::Problems | HostStatus::Unreachable | HostStatus::Error => paint.red(name),
    }
}

/// One host section: its title line, then what broke off, the checks, what could not be
/// read, and where to look next. A group of hosts with identical results shares one.
pub(super) fn host_section(
    out: &mut String,
    group: &[&HostDiagnosis],
    paint: &Paint,
    width: usize,
    only_problems: bool,
) {
    let Some(host) = group.first() else { return };
    let title = section_title(group);
    // A host that could not be diagnosed at all is one line: name, status, why.
    if host.checks.is_empty() && host.vms.is_empty() {
        if let Some(error) = &host.error {
            undiagnosed_line(out, host, error, &title, paint, width);
            return;
        }
    }
    heading_line(out, host, &title, paint, width);
    if let Some(error) = &host.error {
        let message = clean(error.shown_under_host());
        let prefix = format!("  {} ", paint.red("✗"));
        let text = format!("{}: {message}", kind_label(error.kind));
        emit(out, &prefix, "  ✗ ", 4, &text, width, |t| t.to_string());
    }
    // What broke off comes first: it is why the checks below may be unknown.
    for cut in &host.incomplete_outputs {
        incomplete_output_lines(out, cut, paint, width);
    }
    check_lines(out, group, paint, width, only_problems);
    let unread = [&host.vms_error, &host.adapters_error].into_iter().flatten();
    for e in unread.chain(&host.record_errors) {
        let prefix = format!("  {} ", paint.dim("?"));
        emit(out, &prefix, "  ? ", 4, &clean(e), width, |t| t.to_string());
    }
    send_evidence_lines(out, group, paint, width);
    if !host.fleet_failures.is_empty() {
        let prefix = format!("  {} ", paint.red("✗"));
        let text = format!(
            "failing fleet checks involve this host: {} (see across hosts)",
            crate::diagnose::join_ids(&host.fleet_failures)
        );
        emit(out, &prefix, "  ✗ ", 4, &text, width, |t| t.to_string());
    }
}

/// The group's hosts as one folded set, with their count when there are several.
fn section_title(group: &[&HostDiagnosis]) -> String {
    let names: Vec<&str> = group.iter().map(|h| h.host.as_str()).collect();
    let folded = clean_set(&pvrdma_nodeset::fold(&names));
    if group.len() > 1 {
        format!("{folded} ({} hosts)", group.len())
    } else {
        folded
    }
}

/// The whole section of a host that could not be diagnosed: name, status and why.
fn undiagnosed_line(
    out: &mut String,
    host: &HostDiagnosis,
    error: &crate::capture::Failure,
    title: &str,
    paint: &Paint,
    width: usize,
) {
    // The title already names the host: `esx01: not an ESXi host` shows its detail.
    let message = clean(error.shown_under_host());
    let status = diagnose::status_name(host.status);
    let plain = format!("{title} · {status} · ");
    if plain.width() + 20 > width {
        // A long host set gets lines of its own, broken only between its items.
        let head = format!("{title} · {status}");
        emit(out, "", "", 2, &head, width, |t| paint.bold(t));
        let text = format!("{}: {message}", kind_label(error.kind));
        emit(out, "    ", "    ", 4, &text, width, |t| t.to_string());
        return;
    }
    let prefix = format!("{} · {} · ", paint.bold(title), status_label(host.status, paint));
    // `unreachable · unreachable:` says nothing twice.
    let kind = kind_label(error.kind);
    let text = if kind == status {
        message
    } else {
        format!("{kind}: {message}")
    };
    emit(out, &prefix, &plain, 4, &text, width, |t| t.to_string());
}

/// The section's first line: hosts, status, how they were read, ESXi version.
fn heading_line(out: &mut String, host: &HostDiagnosis, title: &str, paint: &Paint, width: usize) {
    let version = host
        .esxi_version
        .as_deref()
        .map(|v| format!(" · ESXi {}", host_text(v)))
        .unwrap_or_default();
    // Judged from the vSphere API alone: said where the host's status is, and in its
    // place when that is all there is to say (`incomplete` would send the admin looking
    // for what else is missing).
    let how = if host.configuration_only {
        " · configuration only (no SSH)"
    } else {
        ""
    };
    let (plain_status, status) = if host.configuration_only_healthy() {
        (String::new(), String::new())
    } else {
        (
            format!(" · {}", diagnose::status_name(host.status)),
            format!(" · {}", status_label(host.status, paint)),
        )
    };
    let plain_title = format!("{title}{plain_status}{how}{version}");
    if plain_title.width() <= width {
        let _ = writeln!(out, "{}{status}{how}{version}", paint.bold(title));
    } else {
        emit(out, "", "", 2, &plain_title, width, |t| paint.bold(t));
    }
}

/// An output that broke off, and the batch answers in it that did not arrive whole, by
/// name: the others are evidence.
fn incomplete_output_lines(out: &mut String, cut: &crate::diagnose::IncompleteOutput, paint: &Paint, width: usize) {
    let label = crate::catalogue::spec(&cut.command).map_or(cut.command.as_str(), |s| s.label());
    let prefix = format!("  {} ", paint.yellow("!"));
    let text = format!("incomplete: `{}` {}", clean(label), clean(&cut.reason));
    emit(out, &prefix, "  ! ", 4, &text, width, |t| t.to_string());
    let shown = cut.unfinished.len().min(UNFINISHED_SHOWN);
    for u in cut.unfinished.iter().take(shown) {
        let item = crate::catalogue::batch_item_label(&cut.command, &u.key);
        let text = format!("{} {}", clean(&item), clean(&u.reason));
        emit(out, "      ", "      ", 6, &text, width, |t| t.to_string());
    }
    if cut.unfinished.len() > shown {
        let text = format!(
            "and {} more (--format json lists them all)",
            cut.unfinished.len() - shown
        );
        emit(out, "      ", "      ", 6, &text, width, |t| t.to_string());
    }
}

/// The first host's checks, one line each (with `--only-problems`, the passing ones as a
/// count). In a folded group a passing check's details may differ per host (addresses):
/// such a check says so instead of showing one host's.
fn check_lines(out: &mut String, group: &[&HostDiagnosis], paint: &Paint, width: usize, only_problems: bool) {
    let Some(host) = group.first() else { return };
    let id_width = host.checks.iter().map(|c| c.id.id().len()).max().unwrap_or(0);
    let mut passing_hidden = 0;
    for (i, check) in host.checks.iter().enumerate() {
        if only_problems && check.status == Status::Pass {
            passing_hidden += 1;
            continue;
        }
        let differs = check.status == Status::Pass
            && group
                .iter()
                .any(|h| h.checks.get(i).is_some_and(|c| c.summary != check.summary));
        let shown = differs.then(|| {
            format!(
                "passes on all {} hosts (per-host details: --no-fold or --format json)",
                group.len()
            )
        });
        let fixes = FixLines {
            vcenter_first: host.configuration_only,
            also_for: (group.len() > 1).then(|| {
                let names: Vec<&str> = group.iter().map(|h| h.host.as_str()).collect();
                pvrdma_nodeset::fold(&names)
            }),
        };
        check_line(out, check, shown.as_deref(), id_width, paint, width, &fixes);
    }
    if passing_hidden > 0 {
        let _ = writeln!(
            out,
            "  {} {}",
            paint.green("✓"),
            plural(passing_hidden, "other check passes", "other checks pass")
        );
    }
}

/// Under a host whose output did not parse on a live run: what did not parse (the
/// command as a user types it, line, what was expected) and the command that writes a
/// redacted bundle of it to send. In a folded group the first host's bundle stands for
/// all: they printed the same.
fn send_evidence_lines(out: &mut String, group: &[&HostDiagnosis], paint: &Paint, width: usize) {
    let Some((host, command)) = group.iter().find_map(|h| Some((*h, h.send_evidence.as_ref()?))) else {
        return;
    };
    let what: Vec<String> = host
        .unparsed_outputs
        .iter()
        .map(|u| format!("`{}` (line {}: expected {})", u.command_line, u.line, u.expected))
        .collect();
    let others = if group.len() > 1 {
        format!(" (the bundle of {} is enough: the others printed the same)", host.host)
    } else {
        String::new()
    };
    let text = format!(
        "not readable by this version: {}. To send it for a fix{others}, write a redacted bundle: \
         it replaces host names, addresses, MACs, VM names, UUIDs and datastore names by tokens, \
         and keeps every output's layout, the ESXi version and build, and the NIC models and drivers",
        clean(&what.join(", "))
    );
    let prefix = format!("  {} ", paint.dim("?"));
    emit(out, &prefix, "  ? ", 4, &text, width, |t| t.to_string());
    emit_command(out, "      send: ", "      send: ", 12, command, width, |t| {
        paint.bold(t)
    });
}

pub(super) fn kind_label(kind: crate::capture::ErrorKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// How a check's fix is shown: which tool first, and the folded hosts it also stands for.
#[derive(Default)]
pub(super) struct FixLines {
    /// The host was read without SSH: the vCenter forms lead, esxcli comes last.
    pub(super) vcenter_first: bool,
    /// A folded section: the node set of its hosts (the forms shown name the first).
    pub(super) also_for: Option<String>,
}

pub(super) fn check_line(
    out: &mut String,
    c: &Check,
    summary: Option<&str>,
    id_width: usize,
    paint: &Paint,
    width: usize,
    fixes: &FixLines,
) {
    let mark = match c.status {
        Status::Pass => paint.green("✓"),
        Status::Warn => paint.yellow("!"),
        Status::Fail => paint.red("✗"),
        Status::Unknown => paint.dim("?"),
        Status::NotApplicable => paint.dim("-"),
    };
    // Narrow terminals put the summary under the id rather than in a sliver beside it.
    let indent = if id_width + 6 + 30 <= width { id_width + 6 } else { 6 };
    let summary = summary.map_or_else(|| clean(&c.summary), str::to_string);
    let prefix = format!("  {mark} {:<id_width$}  ", c.id);
    let plain = format!("  ✓ {:<id_width$}  ", c.id);
    emit(out, &prefix, &plain, indent, &summary, width, |t| t.to_string());
    if let (Some(remedy), false) = (&c.remedy, c.status == Status::Pass) {
        remedy_lines(out, remedy, indent, paint, width, fixes);
    }
    // An unknown check's summary already names the command that is missing.
    let pad = " ".repeat(indent);
    if matches!(c.status, Status::Fail | Status::Warn) && !c.evidence.is_empty() {
        let from: Vec<String> = c.evidence.iter().map(evidence_text).collect();
        emit(
            out,
            &pad,
            &pad,
            indent + 6,
            &format!("from: {}", from.join("; ")),
            width,
            |t| paint.dim(t),
        );
    }
}

/// A fix's lines: a decision to take first, then each tool's form, the one the run can
/// use first (esxcli over SSH, the vCenter tools without it), every command whole on one
/// line; then the advice.
fn remedy_lines(
    out: &mut String,
    remedy: &crate::diagnose::Remedy,
    indent: usize,
    paint: &Paint,
    width: usize,
    fixes: &FixLines,
) {
    let pad = " ".repeat(indent);
    let prose = |out: &mut String, label: &str, text: &str| {
        let label = format!("{pad}{label}: ");
        emit(out, &label, &label, indent + 8, &clean(text), width, |t| t.to_string());
    };
    // Meant to be copied: continued, where wider than the terminal, only between words
    // and as its shell continues a line.
    let command = |out: &mut String, label: &str, text: &str| {
        let label = format!("{pad}{label}: ");
        let continuation = if label.contains("PowerCLI") { " `" } else { " \\" };
        emit_continued_command(out, &label, indent, text, width, continuation, |t| paint.bold(t));
    };
    if let Some(decision) = &remedy.decision {
        prose(out, "decide first", decision);
    }
    let forms = remedy.forms.clone().unwrap_or_default();
    let esxcli = remedy.command.as_deref();
    if !fixes.vcenter_first {
        if let Some(line) = esxcli {
            command(out, "run", line);
        }
    }
    if fixes.vcenter_first {
        if let Some(path) = &forms.vsphere_client {
            prose(out, "vSphere Client", path);
        }
    }
    if let Some(line) = &forms.powercli {
        command(out, "PowerCLI", line);
    }
    if let Some(line) = &forms.govc {
        command(out, "govc", line);
    }
    if !fixes.vcenter_first {
        if let Some(path) = &forms.vsphere_client {
            prose(out, "vSphere Client", path);
        }
    }
    if fixes.vcenter_first {
        if let Some(line) = esxcli {
            command(out, "ESXi shell", line);
        }
    }
    if let (Some(hosts), true) = (&fixes.also_for, remedy.forms.is_some()) {
        prose(
            out,
            "for each host",
            &format!(
                "the lines above name the first of {hosts}; --format powercli or ansible writes them for every host"
            ),
        );
    }
    if let Some(advice) = &remedy.advice {
        prose(out, "advice", advice);
    }
}

/// One piece of evidence as a person reads it: the command that was run, in backticks,
/// and the field read from its output (`` `esxcli network firewall get`: Enabled ``). The
/// JSON report keeps the catalogue id.
pub(super) fn evidence_text(e: &crate::diagnose::Evidence) -> String {
    let command = crate::catalogue::display_label(e.command);
    format!("`{}`: {}", clean(command), clean(&e.field))
}
