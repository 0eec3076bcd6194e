//! Every host's checklist, hosts with identical results as one node set (the text
//! report's grouping); then the checks across hosts and the path probe.
use super::{count, escape, findings::members, fold_names, Page};
use crate::diagnose::{self, Check, HostDiagnosis, HostStatus, Status};
use std::fmt::Write;

/// A host status's mark and class.
pub(super) fn host_mark(status: HostStatus) -> &'static str {
    match status {
        HostStatus::Ok => "✓",
        HostStatus::Problems | HostStatus::Unreachable | HostStatus::Error => "✗",
        HostStatus::Incomplete => "?",
        HostStatus::Interrupted => "!",
    }
}

/// A check status's mark and word.
fn check_mark(status: Status) -> (&'static str, &'static str) {
    match status {
        Status::Pass => ("✓", "pass"),
        Status::Warn => ("!", "warn"),
        Status::Fail => ("✗", "fail"),
        Status::Unknown => ("?", "unknown"),
        Status::NotApplicable => ("–", "not-applicable"),
    }
}

pub(super) fn section(out: &mut String, p: &Page) {
    out.push_str("<section id=\"hosts\" aria-labelledby=\"h-hosts\">\n<h2 id=\"h-hosts\">Hosts</h2>\n");
    let groups = p.groups.len();
    let hosts = p.d.hosts.len();
    if groups < hosts {
        let _ = writeln!(
            out,
            "<p>{} in {}: hosts with identical results are one node set, as the text report folds them \
             (<code>--no-fold</code> lists each host).</p>",
            count(hosts as u64, "host", "hosts"),
            count(groups as u64, "group", "groups")
        );
    }
    let configuration_only: Vec<&str> =
        p.d.hosts
            .iter()
            .filter(|h| h.configuration_only)
            .map(|h| h.host.as_str())
            .collect();
    if !configuration_only.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"configuration-only\">Configuration only: {} judged from vCenter's vSphere API, without SSH. \
             The transport each adapter uses is observed only over SSH: adapters are unknown, with what the \
             configuration predicts, and lossless-network needs SSH.</p>",
            escape::text(&fold_names(&configuration_only))
        );
    }
    let mut hidden: Vec<&str> = Vec::new();
    for (i, group) in p.groups.iter().enumerate() {
        let Some(first) = group.first() else { continue };
        if p.only_problems && !crate::report::human::has_problem(first) {
            hidden.extend(group.iter().map(|h| h.host.as_str()));
            continue;
        }
        group_block(out, p, group, i);
    }
    if !hidden.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"note\">--only-problems: {} without problems not shown: {}</p>",
            count(hidden.len() as u64, "host", "hosts"),
            escape::text(&fold_names(&hidden))
        );
    }
    out.push_str("</section>\n");
}

fn group_block(out: &mut String, p: &Page, group: &[&HostDiagnosis], i: usize) {
    let Some(host) = group.first() else { return };
    let names: Vec<&str> = group.iter().map(|h| h.host.as_str()).collect();
    let mut title = fold_names(&names);
    if group.len() > 1 {
        title.push_str(&format!(" ({} hosts)", group.len()));
    }
    let status = diagnose::status_name(host.status);
    let _ = write!(
        out,
        "<div class=\"host-group\" id=\"host-group-{i}\">\n<h3>{} <span class=\"sep\">·</span> <span class=\"{status}\">\
         <span class=\"mark\" aria-hidden=\"true\">{}</span> {status}</span>",
        escape::text(&title),
        host_mark(host.status)
    );
    if host.configuration_only {
        out.push_str(
            " <span class=\"sep\">·</span> <span class=\"configuration-only\">configuration only (no SSH)</span>",
        );
    }
    if let Some(v) = &host.esxi_version {
        let _ = write!(out, " <span class=\"sep\">· ESXi {}</span>", escape::text(v));
    }
    out.push_str("</h3>\n");
    if group.len() > 1 {
        members(out, &names);
    }
    notes(out, host);
    checks_table(out, p, group, i);
    if !host.fleet_failures.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"fail\"><span class=\"mark\" aria-hidden=\"true\">✗</span> failing checks across hosts involve {}: {} (see <a href=\"#across\">Across hosts</a>)</p>",
            if group.len() > 1 { "these hosts" } else { "this host" },
            escape::text(&diagnose::join_ids(&host.fleet_failures))
        );
    }
    out.push_str("</div>\n");
}

/// What stopped the host or broke off, before its checks: it is why some may be unknown.
fn notes(out: &mut String, host: &HostDiagnosis) {
    let mut lines: Vec<(&str, &str, String)> = Vec::new();
    if let Some(e) = &host.error {
        let kind = crate::report::human::kind_label(e.kind);
        lines.push(("✗", "fail", format!("{kind}: {}", e.shown_under_host())));
    }
    for cut in &host.incomplete_outputs {
        let label = crate::catalogue::spec(&cut.command).map_or(cut.command.as_str(), |s| s.label());
        let mut text = format!("incomplete: `{label}` {}", cut.reason);
        if !cut.unfinished.is_empty() {
            let keys: Vec<&str> = cut.unfinished.iter().map(|u| u.key.as_str()).collect();
            text.push_str(&format!("; answers not whole: {}", keys.join(", ")));
        }
        lines.push(("!", "warn", text));
    }
    for text in host
        .vms_error
        .iter()
        .chain(host.adapters_error.iter())
        .chain(host.record_errors.iter())
    {
        lines.push(("?", "unknown", text.clone()));
    }
    if lines.is_empty() {
        return;
    }
    out.push_str("<ul class=\"reasons\">");
    for (mark, class, text) in lines {
        let _ = write!(
            out,
            "<li class=\"{class}\"><span class=\"mark\" aria-hidden=\"true\">{mark}</span> {}</li>",
            escape::text(&text)
        );
    }
    out.push_str("</ul>\n");
}

fn checks_table(out: &mut String, p: &Page, group: &[&HostDiagnosis], i: usize) {
    let Some(host) = group.first() else { return };
    let shown: Vec<(usize, &Check)> = host
        .checks
        .iter()
        .enumerate()
        .filter(|(_, c)| !p.only_problems || c.status != Status::Pass)
        .collect();
    if shown.is_empty() {
        if p.only_problems && !host.checks.is_empty() {
            out.push_str("<p><span class=\"mark ok\" aria-hidden=\"true\">✓</span> every check passes</p>\n");
        }
        return;
    }
    let _ = write!(
        out,
        "<table id=\"checks-{i}\"><thead><tr><th scope=\"col\">Status</th><th scope=\"col\">Check</th>\
         <th scope=\"col\">What was found</th></tr></thead>\n<tbody>\n"
    );
    for (n, c) in shown {
        let (mark, word) = check_mark(c.status);
        // In a folded group a passing check's details may differ per host (addresses).
        let differs = c.status == Status::Pass
            && group
                .iter()
                .any(|h| h.checks.get(n).is_some_and(|o| o.summary != c.summary));
        let summary = if differs {
            format!(
                "passes on all {} hosts (per-host details: --no-fold or --format json)",
                group.len()
            )
        } else {
            c.summary.clone()
        };
        let _ = writeln!(
            out,
            "<tr><td class=\"status {word}\"><span class=\"mark\" aria-hidden=\"true\">{mark}</span> {word}</td>\
             <td><code>{}</code></td><td>{}</td></tr>",
            c.id,
            escape::text(&summary)
        );
    }
    out.push_str("</tbody></table>\n");
}

pub(super) fn across_section(out: &mut String, p: &Page) {
    if p.d.fleet_checks.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"across\" aria-labelledby=\"h-across\">\n<h2 id=\"h-across\">Checks across hosts</h2>\n\
         <table><thead><tr><th scope=\"col\">Status</th><th scope=\"col\">Check</th><th scope=\"col\">What was found</th>\
         </tr></thead>\n<tbody>\n",
    );
    for c in &p.d.fleet_checks {
        let (mark, word) = check_mark(c.status);
        let _ = writeln!(
            out,
            "<tr><td class=\"status {word}\"><span class=\"mark\" aria-hidden=\"true\">{mark}</span> {word}</td>\
             <td><code>{}</code></td><td>{}</td></tr>",
            c.id,
            escape::text(&c.summary)
        );
    }
    out.push_str("</tbody></table>\n");
    let probe = crate::report::probe_lines(&p.d.probes);
    if !probe.is_empty() {
        out.push_str("<h3>Path probe</h3>\n<ul>");
        for line in probe {
            let _ = write!(out, "<li>{}</li>", escape::text(line.trim()));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}
