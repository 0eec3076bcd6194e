//! Each PVRDMA adapter's verdict and reason (a VM-first run lists them by VM), folded as
//! the text report's table folds them; and the transport between adapters, counted, with
//! every host pair and adapter whose pairs are not plain rdma.
use super::{count, escape, fold_names, thousands, Page};
use crate::diagnose::{Adapter, TransportCounts, Verdict};
use std::fmt::Write;

/// Rows of the host-pair and exception tables beyond which the JSON report has the rest.
const TABLE_ROWS: usize = 500;

/// One adapter, before folding.
struct Row<'a> {
    vm: &'a str,
    host: &'a str,
    adapter: &'a Adapter,
    port: String,
}

/// The verdict's mark, word and class: never told by colour alone.
pub(super) fn verdict_words(v: Verdict) -> (&'static str, &'static str) {
    match v {
        Verdict::Hca => ("✓", "hca"),
        Verdict::TcpFallback => ("✗", "tcp-fallback"),
        Verdict::Unknown => ("?", "unknown"),
    }
}

pub(super) fn section(out: &mut String, p: &Page) {
    let vm_first = p.d.vm_scope.is_some();
    let title = if vm_first {
        "VMs and their PVRDMA adapters"
    } else {
        "PVRDMA adapters"
    };
    let _ = write!(
        out,
        "<section id=\"adapters\" aria-labelledby=\"h-adapters\">\n<h2 id=\"h-adapters\">{title}</h2>\n"
    );
    scope_notes(out, p);
    let rows = rows(p, vm_first);
    if rows.is_empty() {
        let _ = write!(out, "<p>{}</p>\n</section>\n", escape::text(&no_adapters(p)));
        return;
    }
    let folded = crate::report::human::fold_rows(
        &rows,
        p.fold,
        |r| (r.vm, r.host),
        |a, b| {
            a.adapter.index == b.adapter.index
                && a.adapter.verdict == b.adapter.verdict
                && a.adapter.predicted == b.adapter.predicted
                && a.adapter.reasons == b.adapter.reasons
                && a.port == b.port
        },
    );
    filter_box(out, "adapter-table", true);
    out.push_str("<table id=\"adapter-table\">\n<thead><tr>");
    let heads = if vm_first {
        [
            "VM",
            "Host",
            "Adapter",
            "Verdict",
            "Reason",
            "Port: switch / port group / uplink",
        ]
    } else {
        [
            "Host",
            "VM",
            "Adapter",
            "Verdict",
            "Reason",
            "Port: switch / port group / uplink",
        ]
    };
    for h in heads {
        let _ = write!(out, "<th scope=\"col\">{h}</th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for f in folded {
        let a = f.row.adapter;
        let (mark, word) = verdict_words(a.verdict);
        let vms = names_cell(&f.vms, "VM", "VMs");
        let hosts = names_cell(&f.hosts, "host", "hosts");
        let (first, second) = if vm_first { (vms, hosts) } else { (hosts, vms) };
        let predicted = match (a.verdict, a.predicted) {
            (Verdict::Unknown, Some(v)) => format!(" <span class=\"note\">(predicted {})</span>", verdict_words(v).1),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "<tr data-class=\"{word}\"><td>{first}</td><td>{second}</td><td>{}</td>\
             <td class=\"verdict {word}\"><span class=\"mark\" aria-hidden=\"true\">{mark}</span> {word}{predicted}</td><td>{}</td><td>{}</td></tr>",
            a.index,
            reason_cell(a),
            escape::text(&f.row.port),
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

/// Every adapter (`--only-problems`: those with a problem), by VM in a VM-first run.
fn rows<'a>(p: &Page<'a>, vm_first: bool) -> Vec<Row<'a>> {
    let mut rows: Vec<Row> = Vec::new();
    for h in &p.d.hosts {
        for vm in &h.vms {
            for a in &vm.adapters {
                if p.only_problems && a.verdict == Verdict::Hca && a.reasons.is_empty() {
                    continue;
                }
                rows.push(Row {
                    vm: &vm.name,
                    host: &h.host,
                    adapter: a,
                    port: port_text(a),
                });
            }
        }
    }
    if vm_first {
        rows.sort_by(|a, b| a.vm.cmp(b.vm));
    }
    rows
}

/// A VM-first run: which VMs, and those it did not find running.
fn scope_notes(out: &mut String, p: &Page) {
    let Some(scope) = &p.d.vm_scope else { return };
    let _ = writeln!(
        out,
        "<p>The run was about these VMs: {}. Only their adapters, their VM checks and the transports between them are reported.</p>",
        escape::text(&scope.vms.join(", "))
    );
    if !scope.not_running.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"warn\">Not running on the hosts diagnosed: {} (stopped, or moved since the inventory was read).</p>",
            escape::text(&scope.not_running.join(", "))
        );
    }
    if !scope.not_seen.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"warn\">Not seen running: {}; the VM list of {} could not be read, so they may run there.</p>",
            escape::text(&scope.not_seen.join(", ")),
            escape::text(&fold_names(&scope.unread_hosts))
        );
    }
}

/// A folded set of names: the node set, how many, and (folded away) each name.
fn names_cell(names: &[String], one: &str, many: &str) -> String {
    if let [one] = names {
        return escape::text(one);
    }
    format!(
        "{} ({})<details class=\"members\"><summary>by name</summary><p>{}</p></details>",
        escape::text(&fold_names(names)),
        count(names.len() as u64, one, many),
        escape::text(&names.join(", "))
    )
}

fn reason_cell(a: &Adapter) -> String {
    if a.verdict == Verdict::Hca && a.reasons.is_empty() {
        return "physical HCA in use".to_string();
    }
    let mut cell = String::from("<ul class=\"reasons\">");
    for r in &a.reasons {
        let _ = write!(cell, "<li>{}</li>", escape::text(r));
    }
    cell.push_str("</ul>");
    cell
}

/// `DSwitch-RDMA / DPG-PVRDMA / vmnic2`, `?` where a part is not known.
fn port_text(a: &Adapter) -> String {
    let Some(port) = &a.port else {
        return "not known".to_string();
    };
    let part = |p: &Option<String>| p.clone().unwrap_or_else(|| "?".to_string());
    format!(
        "{} / {} / {}",
        part(&port.vswitch),
        part(&port.portgroup),
        part(&port.uplink)
    )
}

/// Why there is no row: never reassuring when nothing was diagnosed.
fn no_adapters(p: &Page) -> String {
    let s = &p.d.summary;
    if s.diagnosed == 0 {
        "Nothing was diagnosed: no host could be reached and read (see Hosts).".to_string()
    } else if p.only_problems && s.adapters > 0 {
        "No PVRDMA adapter with a problem.".to_string()
    } else if s.hosts_without_adapter_list > 0 {
        format!(
            "No PVRDMA adapters could be listed: the listing failed on {} (see Hosts).",
            count(s.hosts_without_adapter_list as u64, "host", "hosts")
        )
    } else {
        "No PVRDMA adapters found on running VMs.".to_string()
    }
}

/// The filter controls of a table: hidden until the script shows them (without scripts
/// they would do nothing).
pub(super) fn filter_box(out: &mut String, table: &str, verdicts: bool) {
    let _ = write!(
        out,
        "<div class=\"filter\" data-filter-for=\"{table}\" hidden><label>Show rows with <input type=\"search\" \
         placeholder=\"words: a host, a VM, a reason\"></label>"
    );
    if verdicts {
        out.push_str(
            "<label>verdict <select><option value=\"\">any</option><option value=\"hca\">hca</option>\
             <option value=\"tcp-fallback\">tcp-fallback</option><option value=\"unknown\">unknown</option></select></label>",
        );
    }
    out.push_str("<output aria-live=\"polite\"></output></div>\n");
}

/// The transport classes in words, the first time each appears (the text report's).
const CLASSES: [(&str, &str); 5] = [
    ("rdma", "through the HCA"),
    (
        "blocked",
        "HCA at both ends, but a failing check across hosts breaks the path",
    ),
    ("tcp", "an end falls back to TCP"),
    ("memcpy", "same host"),
    ("unknown", "an adapter's verdict is unknown"),
];

fn class_counts(t: &TransportCounts) -> [u64; 5] {
    [t.rdma, t.blocked, t.tcp, t.memcpy, t.unknown]
}

pub(super) fn transport_section(out: &mut String, p: &Page) {
    let t = &p.d.transport;
    if t.totals.total() == 0 {
        return;
    }
    out.push_str("<section id=\"transport\" aria-labelledby=\"h-transport\">\n<h2 id=\"h-transport\">Transport between adapters</h2>\n");
    let _ = write!(
        out,
        "<p>{} of different VMs:</p>\n<ul>",
        escape::text(&count(t.totals.total(), "adapter pair", "adapter pairs"))
    );
    for ((class, meaning), n) in CLASSES.iter().zip(class_counts(&t.totals)) {
        if n > 0 {
            let _ = write!(out, "<li><strong>{} {class}</strong>: {meaning}</li>", thousands(n));
        }
    }
    out.push_str("</ul>\n");
    let pairs: Vec<_> = t.host_pairs.iter().filter(|h| h.a() != h.b()).collect();
    if !pairs.is_empty() {
        out.push_str("<h3>Host pairs with a pair that is not plain rdma</h3>\n");
        filter_box(out, "host-pair-table", false);
        out.push_str("<table id=\"host-pair-table\"><thead><tr><th scope=\"col\">Host</th><th scope=\"col\">Host</th>");
        for (class, _) in CLASSES {
            let _ = write!(out, "<th scope=\"col\">{class}</th>");
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for pair in pairs.iter().take(TABLE_ROWS) {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td>",
                escape::text(pair.a()),
                escape::text(pair.b())
            );
            for n in class_counts(&pair.pairs) {
                let _ = write!(out, "<td>{}</td>", thousands(n));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table>\n");
        cut_note(out, pairs.len(), "host pairs");
    }
    exceptions(out, p);
    out.push_str("</section>\n");
}

fn exceptions(out: &mut String, p: &Page) {
    let list = &p.d.transport.exceptions;
    if list.is_empty() {
        return;
    }
    out.push_str("<h3>Adapters whose pairs are not plain rdma, and why</h3>\n");
    filter_box(out, "exception-table", false);
    out.push_str(
        "<table id=\"exception-table\"><thead><tr><th scope=\"col\">Host</th><th scope=\"col\">VM</th>\
         <th scope=\"col\">Adapter</th><th scope=\"col\">Peer host</th><th scope=\"col\">Pairs</th>\
         <th scope=\"col\">Why</th></tr></thead>\n<tbody>\n",
    );
    for e in list.iter().take(TABLE_ROWS) {
        let counts: Vec<String> = CLASSES
            .iter()
            .zip(class_counts(&e.pairs))
            .filter(|(_, n)| *n > 0)
            .map(|((class, _), n)| format!("{} {class}", thousands(n)))
            .collect();
        let mut why = String::from("<ul class=\"reasons\">");
        for r in &e.reasons {
            let _ = write!(why, "<li>{}</li>", escape::text(r));
        }
        why.push_str("</ul>");
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{why}</td></tr>",
            escape::text(&e.adapter.host),
            escape::text(&e.adapter.vm),
            e.adapter.adapter,
            escape::text(&e.peer_host),
            escape::text(&counts.join(", ")),
        );
    }
    out.push_str("</tbody></table>\n");
    cut_note(out, list.len(), "adapters");
}

fn cut_note(out: &mut String, total: usize, what: &str) {
    if total > TABLE_ROWS {
        let _ = writeln!(
            out,
            "<p class=\"note\">The first {} of {} {what}; <code>--format json</code> lists them all.</p>",
            thousands(TABLE_ROWS as u64),
            thousands(total as u64)
        );
    }
}
