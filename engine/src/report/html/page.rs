//! The document around the sections: the head with its policy, style and title; the
//! header (outcome, what was read, when, how, by which version); the contents; the
//! footer and the one script.
use super::{assets, count, escape, fold_names, Page, TimesFrom};
use crate::capture::CaptureSource;
use crate::diagnose::Diagnosis;
use std::fmt::Write;

/// The whole page.
pub(super) fn document(p: &Page) -> String {
    let mut out = String::with_capacity(64 * 1024);
    head(&mut out, p);
    out.push_str("<body>\n<header>\n");
    header(&mut out, p);
    out.push_str("</header>\n");
    nav(&mut out, p);
    out.push_str("<main>\n");
    changes(&mut out, p.d);
    super::picture::section(&mut out, p);
    super::findings::section(&mut out, p);
    super::adapters::section(&mut out, p);
    super::adapters::transport_section(&mut out, p);
    super::hosts::section(&mut out, p);
    super::hosts::across_section(&mut out, p);
    out.push_str("</main>\n");
    let _ = write!(
        out,
        "<footer><p>Written by pvrdma-doctor {version}. This page is the whole report: it loads nothing from \
         anywhere, and reads the same with scripts off. The same run as JSON: <code>--format json</code>.</p></footer>\n\
         <script>{script}</script>\n</body>\n</html>\n",
        version = env!("CARGO_PKG_VERSION"),
        script = assets::SCRIPT,
    );
    out
}

fn head(out: &mut String, p: &Page) {
    let hosts: Vec<&str> = p.d.hosts.iter().map(|h| h.host.as_str()).collect();
    let code = p.d.exit_code();
    let title = format!(
        "PVRDMA report: {} · {} (exit code {code})",
        escape::shorten(&fold_names(&hosts), 80),
        outcome(code).1
    );
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"pvrdma-doctor {version}\">\n\
         <title>{title}</title>\n<style>\n{style}</style>\n</head>\n",
        csp = assets::content_security_policy(),
        version = env!("CARGO_PKG_VERSION"),
        title = escape::text(&title),
        style = assets::STYLE,
    );
}

/// The outcome of exit code `code`: its mark, its word and the class that colours it.
pub(super) fn outcome(code: u8) -> (&'static str, &'static str, &'static str) {
    match code {
        crate::exit::HEALTHY => ("✓", "healthy", "ok"),
        crate::exit::PROBLEMS => ("✗", "problems", "fail"),
        crate::exit::CONFIGURATION_ONLY => ("◇", "configuration only", "configuration-only"),
        _ => ("?", "incomplete", "unknown"),
    }
}

fn header(out: &mut String, p: &Page) {
    let d = p.d;
    let code = d.exit_code();
    let (mark, word, class) = outcome(code);
    let _ = write!(
        out,
        "<h1>PVRDMA paths and checks: {}</h1>\n<p class=\"outcome {class}\" role=\"status\"><strong>\
         <span class=\"mark\" aria-hidden=\"true\">{mark}</span> {word}</strong> · exit code {code}: \
         <span class=\"meaning\">{}</span></p>\n<p class=\"summary-line\">{}</p>\n",
        escape::text(&count(d.hosts.len() as u64, "host", "hosts")),
        escape::text(crate::exit::meaning(code).unwrap_or("")),
        escape::text(&crate::report::summary::line(d)),
    );
    out.push_str("<dl class=\"run\">\n");
    let _ = writeln!(out, "<dt>Read</dt><dd>{}</dd>", escape::text(&how_read(p)));
    let hosts: Vec<&str> = d.hosts.iter().map(|h| h.host.as_str()).collect();
    if !hosts.is_empty() {
        let _ = writeln!(out, "<dt>Hosts</dt><dd>{}</dd>", escape::text(&fold_names(&hosts)));
    }
    let _ = writeln!(out, "<dt>When</dt><dd>{}</dd>", when(p));
    let prov = &p.options.provenance;
    let by = match &prov.collected_by {
        Some(v) => format!(
            "collected by pvrdma-doctor {v}; this page written by pvrdma-doctor {}",
            env!("CARGO_PKG_VERSION")
        ),
        None => format!("pvrdma-doctor {}", env!("CARGO_PKG_VERSION")),
    };
    let _ = writeln!(out, "<dt>By</dt><dd>{}</dd>", escape::text(&by));
    if let Some(scope) = &d.vm_scope {
        let _ = writeln!(
            out,
            "<dt>VMs</dt><dd>a VM-first run: {} (only their adapters, VM checks and the transports between them)</dd>",
            escape::text(&scope.vms.join(", "))
        );
    }
    if prov.redacted {
        out.push_str(
            "<dt>Redacted</dt><dd>host names, addresses, MACs, VM names, UUIDs and datastore names are tokens \
             (<code>host-001</code>); the map back to them stayed with whoever wrote the bundle</dd>\n",
        );
    }
    out.push_str("</dl>\n");
}

/// How the hosts were read, in words.
fn how_read(p: &Page) -> String {
    let prov = &p.options.provenance;
    let name = |what: &str| match &prov.read_from {
        Some(n) => format!("{what} {n}"),
        None => what.to_string(),
    };
    let mut parts: Vec<String> = prov
        .sources
        .iter()
        .map(|(source, n)| {
            let hosts = count(*n as u64, "host", "hosts");
            match source {
                CaptureSource::Live => format!("over SSH, read-only esxcli and vsish ({hosts})"),
                CaptureSource::VsphereApi => {
                    format!("through vCenter's vSphere API, the configuration only, without SSH ({hosts})")
                }
                CaptureSource::Bundle => format!("{} ({hosts})", name("from the pvrdma-doctor support bundle")),
                CaptureSource::Directory => format!("{} ({hosts})", name("from the capture folder")),
                CaptureSource::VmSupport => format!("{} ({hosts})", name("from the ESXi vm-support bundle")),
            }
        })
        .collect();
    let offline = prov
        .sources
        .iter()
        .any(|(s, _)| !matches!(s, CaptureSource::Live | CaptureSource::VsphereApi));
    let api_hosts = p.d.hosts.iter().filter(|h| h.configuration_only).count();
    if offline && api_hosts > 0 {
        parts.push(format!(
            "{} of them read through vCenter's vSphere API (configuration only)",
            count(api_hosts as u64, "host", "hosts")
        ));
    }
    if parts.is_empty() {
        return "not stated by the program that wrote this page".to_string();
    }
    parts.join("; ")
}

/// When the outputs were collected (escaped), in UTC.
fn when(p: &Page) -> String {
    let Some(t) = p.options.provenance.times else {
        return "not stated".to_string();
    };
    let stamp = |time| {
        let iso = humantime::format_rfc3339_seconds(time).to_string();
        let shown = iso.replacen('T', " ", 1).replace('Z', " UTC");
        format!("<time datetime=\"{iso}\">{shown}</time>")
    };
    let took = t.finished.duration_since(t.started).unwrap_or_default();
    let took = format!("<span class=\"duration\">{:.1} s</span>", took.as_secs_f64());
    match t.from {
        TimesFrom::Run => format!("collected from {} to {} ({took})", stamp(t.started), stamp(t.finished)),
        TimesFrom::Bundle => format!(
            "collected from {} to {} ({took}), as the bundle recorded it",
            stamp(t.started),
            stamp(t.finished)
        ),
        TimesFrom::Read => format!(
            "the capture records no time of collection; read on {}",
            stamp(t.finished)
        ),
    }
}

fn nav(out: &mut String, p: &Page) {
    out.push_str("<nav aria-label=\"Sections\"><ol>");
    let mut links = vec![
        ("paths", "Paths"),
        ("findings", "Failing checks"),
        ("adapters", "Adapters"),
    ];
    if p.d.transport.totals.total() > 0 {
        links.push(("transport", "Transport"));
    }
    links.push(("hosts", "Hosts"));
    if !p.d.fleet_checks.is_empty() {
        links.push(("across", "Across hosts"));
    }
    for (id, name) in links {
        let _ = write!(out, "<li><a href=\"#{id}\">{name}</a></li>");
    }
    out.push_str("</ol></nav>\n");
}

/// `--baseline`: what changed, first.
fn changes(out: &mut String, d: &Diagnosis) {
    let Some(changes) = &d.changes else { return };
    out.push_str("<section id=\"changes\" aria-labelledby=\"h-changes\">\n");
    let mut lines = crate::report::human::change_lines(changes).into_iter();
    let head = lines.next().unwrap_or_default();
    let _ = writeln!(out, "<h2 id=\"h-changes\">{}</h2>", escape::text(&head));
    let items: Vec<String> = lines.collect();
    if !items.is_empty() {
        out.push_str("<ul>");
        for line in items {
            let _ = write!(out, "<li>{}</li>", escape::text(line.trim()));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}
