//! Failing checks (and warnings) with their evidence and every form of their fix, hosts
//! with the same finding together as one node set; what this version could not read. For
//! a page that carries them, the outputs each finding rests on, folded.
use super::{count, escape, evidence, fix, fold_names, Page};
use crate::diagnose::{Check, Status};
use std::fmt::Write;

/// Outputs shown for a check across hosts: those of its first hosts.
const ACROSS_HOSTS_SHOWN: usize = 4;

/// A check that fails or warns, and where.
struct Finding<'a> {
    check: &'a Check,
    /// The hosts it is found on (a check across hosts: the hosts it involves).
    hosts: Vec<&'a str>,
    across: bool,
    /// The first host was read without SSH: its fix leads with the vCenter tools.
    vcenter_first: bool,
}

/// What two hosts' fixes must share to be one finding: what they do, not the host their
/// forms name.
fn same_fix(a: &Check, b: &Check) -> bool {
    match (&a.remedy, &b.remedy) {
        (Some(x), Some(y)) => {
            x.command == y.command && x.advice == y.advice && x.decision == y.decision && x.changes == y.changes
        }
        (x, y) => x.is_none() && y.is_none(),
    }
}

pub(super) fn section(out: &mut String, p: &Page) {
    out.push_str(
        "<section id=\"findings\" aria-labelledby=\"h-findings\">\n<h2 id=\"h-findings\">Failing checks</h2>\n",
    );
    let findings = findings(p);
    let fails = findings.iter().filter(|f| f.check.status == Status::Fail).count();
    let warns = findings.len() - fails;
    let text = match (fails, warns) {
        (0, 0) => "No check fails and none warns.".to_string(),
        (0, w) => format!("No check fails; {} warn.", count(w as u64, "finding", "findings")),
        (f, 0) => format!(
            "{}: each with what it found and how to fix it.",
            count(f as u64, "failing check", "failing checks")
        ),
        (f, w) => format!(
            "{} and {}: each with what it found and how to fix it.",
            count(f as u64, "failing check", "failing checks"),
            count(w as u64, "warning", "warnings")
        ),
    };
    let _ = writeln!(out, "<p>{}</p>", escape::text(&text));
    if p.options.outputs.is_some() && !findings.is_empty() {
        out.push_str(
            "<p class=\"tools\" hidden><button type=\"button\" data-open=\"true\">Open every output</button>\
             <button type=\"button\" data-open=\"false\">Close every output</button></p>\n",
        );
    }
    for (i, f) in findings.iter().enumerate() {
        finding(out, p, f, i);
    }
    unreadable(out, p);
    out.push_str("</section>\n");
}

/// Host findings (alike ones folded across hosts, unless `--no-fold`), fails first, then
/// the checks across hosts.
fn findings<'a>(p: &Page<'a>) -> Vec<Finding<'a>> {
    let mut host_findings: Vec<Finding> = Vec::new();
    for h in &p.d.hosts {
        for c in h
            .checks
            .iter()
            .filter(|c| matches!(c.status, Status::Fail | Status::Warn))
        {
            let alike = |f: &Finding| {
                f.check.id == c.id
                    && f.check.status == c.status
                    && f.check.summary == c.summary
                    && same_fix(f.check, c)
                    && f.check.evidence == c.evidence
                    && f.vcenter_first == h.configuration_only
            };
            match host_findings.iter_mut().find(|f| p.fold && alike(f)) {
                Some(f) => f.hosts.push(&h.host),
                None => host_findings.push(Finding {
                    check: c,
                    hosts: vec![&h.host],
                    across: false,
                    vcenter_first: h.configuration_only,
                }),
            }
        }
    }
    host_findings.sort_by_key(|f| f.check.status != Status::Fail);
    for c in
        p.d.fleet_checks
            .iter()
            .filter(|c| matches!(c.status, Status::Fail | Status::Warn))
    {
        let involved: Vec<_> = p.d.hosts.iter().filter(|h| h.fleet_failures.contains(&c.id)).collect();
        host_findings.push(Finding {
            check: c,
            hosts: involved.iter().map(|h| h.host.as_str()).collect(),
            across: true,
            vcenter_first: !involved.is_empty() && involved.iter().all(|h| h.configuration_only),
        });
    }
    host_findings
}

fn finding(out: &mut String, p: &Page, f: &Finding, i: usize) {
    let (mark, class) = match f.check.status {
        Status::Fail => ("✗", "fail"),
        _ => ("!", "warn"),
    };
    let verb = if f.check.status == Status::Fail {
        "fails"
    } else {
        "warns"
    };
    let set = fold_names(&f.hosts);
    // A long set stays out of the heading: the count says it there, the set follows.
    let long = set.chars().count() > 40;
    let place = match (f.across, f.hosts.len()) {
        (true, 0) => "across hosts".to_string(),
        (true, _) if !long => format!("across hosts ({set})"),
        (true, n) => format!("across hosts ({} hosts)", super::thousands(n as u64)),
        (false, 1) => format!("on {set}"),
        (false, n) if !long => format!("on {set} ({n} hosts)"),
        (false, n) => format!("on {} hosts", super::thousands(n as u64)),
    };
    let _ = write!(
        out,
        "<article class=\"finding {class}\" id=\"finding-{i}\">\n<h3><span class=\"mark\" aria-hidden=\"true\">{mark}</span> \
         {id} {verb} {}</h3>\n<p>{}</p>\n",
        escape::text(&place),
        escape::text(&f.check.summary),
        id = f.check.id,
    );
    if long && !f.hosts.is_empty() {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape::text(&set));
    }
    if f.hosts.len() > 1 {
        members(out, &f.hosts);
    }
    if let Some(remedy) = &f.check.remedy {
        let order = fix::FixOrder {
            vcenter_first: f.vcenter_first,
            also_for: (!f.across && f.hosts.len() > 1).then(|| set.clone()),
        };
        fix::fix_list(out, remedy, &order);
    }
    if !f.check.evidence.is_empty() {
        out.push_str("<p class=\"note\">From ");
        for (n, e) in f.check.evidence.iter().enumerate() {
            if n > 0 {
                out.push_str("; ");
            }
            let _ = write!(
                out,
                "<code>{}</code>: {}",
                escape::text(crate::catalogue::display_label(e.command)),
                escape::text(&e.field)
            );
        }
        out.push_str("</p>\n");
    }
    if let Some(outputs) = &p.options.outputs {
        let ids: Vec<&str> = f.check.evidence.iter().map(|e| e.command).collect();
        let shown = if f.across { ACROSS_HOSTS_SHOWN } else { 1 };
        for host in f.hosts.iter().take(shown) {
            let note = (!f.across && f.hosts.len() > 1).then(|| {
                format!(
                    "The outputs of {host}; the other {} gave the same finding.",
                    count(f.hosts.len() as u64 - 1, "host", "hosts")
                )
            });
            evidence::details(out, outputs, host, &ids, note.as_deref());
        }
    }
    out.push_str("</article>\n");
}

/// The hosts of a folded set, by name, folded away (Ctrl-F finds each one).
pub(super) fn members<S: AsRef<str>>(out: &mut String, hosts: &[S]) {
    let names: Vec<&str> = hosts.iter().map(AsRef::as_ref).collect();
    let _ = writeln!(
        out,
        "<details class=\"members\"><summary>the {} by name</summary><p>{}</p></details>",
        count(names.len() as u64, "host", "hosts"),
        escape::text(&names.join(", "))
    );
}

/// Outputs this version could not read: what, where reading stopped, what to send.
fn unreadable(out: &mut String, p: &Page) {
    let hosts: Vec<_> = p.d.hosts.iter().filter(|h| !h.unparsed_outputs.is_empty()).collect();
    if hosts.is_empty() {
        return;
    }
    out.push_str("<h3><span class=\"mark unknown\" aria-hidden=\"true\">?</span> Not readable by this version</h3>\n");
    out.push_str(
        "<p>What depends on these outputs is unknown. Their format is new to this version: send them (a \
         redacted bundle keeps every output's layout) so the next version reads them.</p>\n<ul>\n",
    );
    for h in &hosts {
        for u in &h.unparsed_outputs {
            let _ = writeln!(
                out,
                "<li>{}: <code>{}</code>, line {}, column {}: expected {}{}</li>",
                escape::text(&h.host),
                escape::text(&u.command_line),
                u.line,
                u.column,
                escape::text(&u.expected),
                if u.found.is_empty() {
                    String::from(" (the line is empty)")
                } else {
                    format!("; found <code>{}</code>", escape::text(&u.found))
                },
            );
        }
        if let Some(send) = &h.send_evidence {
            let _ = writeln!(
                out,
                "<li class=\"note\">To send it: <code>{}</code></li>",
                escape::text(send)
            );
        }
    }
    out.push_str("</ul>\n");
    if let Some(outputs) = &p.options.outputs {
        for h in hosts {
            let ids: Vec<&str> = h.unparsed_outputs.iter().map(|u| u.command.as_str()).collect();
            evidence::details(out, outputs, &h.host, &ids, None);
        }
    }
}
