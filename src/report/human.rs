//! The human report: per host (or per node set of hosts with identical results, as
//! `clush -b` folds them) a ✓/!/✗/? checklist with the fix under each failure, then one
//! table of PVRDMA adapters (VM, host, adapter, verdict, reason), then one summary line.
//!
//! Every line fits the width it is given (the terminal's, `$COLUMNS`, else 100): long
//! texts wrap under their column, table cells wrap inside the table. Text that came from a
//! host is escaped (control and bidi characters) and shortened; JSON keeps it whole.
use crate::diagnose::{self, Check, Diagnosis, HostDiagnosis, HostStatus, Status, Verdict};
use std::fmt::Write;
use tabled::settings::{peaker::Priority, Style, Width};
use unicode_width::UnicodeWidthStr;

/// How to lay out the human report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HumanOptions {
    /// ANSI colours.
    pub color: bool,
    /// No line is wider than this many terminal columns.
    pub width: usize,
    /// Show only what is not healthy (hosts, checks, adapters); the summary stays whole.
    pub only_problems: bool,
    /// Fold hosts (and table rows) with identical results into node sets.
    pub fold: bool,
}

/// Width when stdout is not a terminal and `$COLUMNS` is unset: the report stays readable
/// in a file, a mail or a ticket.
pub const DEFAULT_WIDTH: usize = 100;

/// Narrower than this, nothing useful fits: the layout assumes at least this much.
const MIN_WIDTH: usize = 40;

impl Default for HumanOptions {
    fn default() -> Self {
        HumanOptions {
            color: false,
            width: DEFAULT_WIDTH,
            only_problems: false,
            fold: true,
        }
    }
}

/// `$COLUMNS` when set to a number, else the width of the terminal on stdout, else
/// [`DEFAULT_WIDTH`].
pub fn terminal_width() -> usize {
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok());
    from_env
        .filter(|w| *w > 0)
        .or_else(|| terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| usize::from(w.0)))
        .unwrap_or(DEFAULT_WIDTH)
}

/// Host-supplied text longer than this is shortened in the human report.
const MAX_HOST_TEXT: usize = 200;

struct Paint {
    on: bool,
}

impl Paint {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    fn green(&self, t: &str) -> String {
        self.paint("32", t)
    }
    fn yellow(&self, t: &str) -> String {
        self.paint("33", t)
    }
    fn red(&self, t: &str) -> String {
        self.paint("31", t)
    }
    fn dim(&self, t: &str) -> String {
        self.paint("2", t)
    }
    fn bold(&self, t: &str) -> String {
        self.paint("1", t)
    }
}

/// The report with the default layout (100 columns, folded).
pub fn render(d: &Diagnosis, color: bool) -> String {
    render_with(
        d,
        &HumanOptions {
            color,
            ..HumanOptions::default()
        },
    )
}

pub fn render_with(d: &Diagnosis, options: &HumanOptions) -> String {
    let paint = Paint { on: options.color };
    let width = options.width.max(MIN_WIDTH);
    let mut out = String::new();
    if let Some(changes) = &d.changes {
        for line in crate::baseline::human_lines(changes) {
            let text = line.trim_start();
            let lead = &line[..line.len() - text.len()];
            emit(&mut out, lead, lead, lead.len() + 2, &clean(text), width, |t| {
                t.to_string()
            });
        }
        out.push('\n');
    }
    let mut hidden: Vec<&str> = Vec::new();
    for group in group_hosts(&d.hosts, options.fold) {
        let Some(first) = group.first() else { continue };
        if options.only_problems && !has_problem(first) {
            hidden.extend(group.iter().map(|h| h.host.as_str()));
            continue;
        }
        host_section(&mut out, &group, &paint, width, options.only_problems);
        out.push('\n');
    }
    let fleet: Vec<&Check> = d
        .fleet_checks
        .iter()
        .filter(|c| !options.only_problems || c.status != Status::Pass)
        .collect();
    if !fleet.is_empty() {
        let _ = writeln!(out, "{}", paint.bold("across hosts"));
        let id_width = fleet.iter().map(|c| c.id.len()).max().unwrap_or(0);
        for check in fleet {
            check_line(&mut out, check, None, id_width, &paint, width);
        }
        for line in crate::probe::human_lines(&d.probes) {
            let _ = writeln!(out, "      {}", clean(&line));
        }
        out.push('\n');
    }
    adapter_table(&mut out, d, &paint, options, width);
    transport_lines(&mut out, d, width);
    if !hidden.is_empty() {
        emit(
            &mut out,
            "",
            "",
            0,
            &format!(
                "--only-problems: {} without problems not shown: {}",
                plural(hidden.len(), "host", "hosts"),
                crate::nodeset::fold(&hidden)
            ),
            width,
            |t| paint.dim(t),
        );
    }
    let line = d.summary.line.clone();
    let code = d.exit_code();
    emit(&mut out, "", "", 0, &line, width, |t| match code {
        0 => paint.green(t),
        1 => paint.red(t),
        _ => paint.yellow(t),
    });
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Anything to show under `--only-problems`: not ok, or a check that does not pass.
fn has_problem(h: &HostDiagnosis) -> bool {
    h.status != HostStatus::Ok
        || h.checks.iter().any(|c| c.status != Status::Pass)
        || h.vms
            .iter()
            .flat_map(|v| &v.adapters)
            .any(|a| a.verdict != Verdict::Hca || !a.reasons.is_empty())
}

/// Replaces the host's own name at the start of a message (connection errors begin with
/// it), so identical failures of different hosts compare equal.
fn without_host(message: &str, host: &str) -> String {
    match message.strip_prefix(host) {
        Some(rest) if !host.is_empty() => format!("\u{0}{rest}"),
        _ => message.to_string(),
    }
}

/// What must be equal for two hosts to share one section: everything shown except the
/// host's name and the details of passing checks.
fn group_key(h: &HostDiagnosis) -> String {
    let mut key = format!("{:?}|{:?}|", h.status, h.esxi_version);
    if let Some(e) = &h.error {
        let _ = write!(key, "{:?}:{}|", e.kind, without_host(&e.message, &h.host));
    }
    if let Some(e) = &h.adapters_error {
        let _ = write!(key, "{}|", without_host(e, &h.host));
    }
    for c in &h.checks {
        let _ = write!(key, "{}:{:?}", c.id, c.status);
        if c.status != Status::Pass {
            let _ = write!(key, ":{}:{:?}:{:?}", c.summary, c.remedy, c.evidence);
        }
        key.push('|');
    }
    key
}

/// Hosts in report order, folded into groups with identical results (first-seen order).
fn group_hosts(hosts: &[HostDiagnosis], fold: bool) -> Vec<Vec<&HostDiagnosis>> {
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

fn status_label(status: HostStatus, paint: &Paint) -> String {
    let name = diagnose::status_name(status);
    match status {
        HostStatus::Ok => paint.green(name),
        HostStatus::Incomplete | HostStatus::Interrupted => paint.yellow(name),
        HostStatus::Problems | HostStatus::Unreachable | HostStatus::Error => paint.red(name),
    }
}

/// Bidirectional-text controls: they reorder what the admin reads (`U+202E` makes
/// `exe.txt` look like `txt.exe`), so they are shown escaped like control characters.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Text that came from a host (names, error messages, vsish output) with its control and
/// bidi characters made visible: a hostile or broken host must not be able to send escape
/// sequences to the admin's terminal or reorder what is read. Newlines stay, table cells
/// use them. Text longer than [`MAX_HOST_TEXT`] characters is shortened, saying so.
fn clean(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    let mut cut = false;
    for (count, c) in chars.by_ref().enumerate() {
        if count == MAX_HOST_TEXT {
            cut = true;
            break;
        }
        if (c.is_control() && c != '\n') || is_bidi_control(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if cut {
        let rest = chars.count();
        // Counting from the text actually cut: this character is the first one left out.
        let _ = write!(out, "… ({} more characters, whole in --format json)", rest + 1);
    }
    out
}

/// Writes `text` wrapped to `width`: the first line after `prefix` (whose display width
/// is `prefix_width`; it may hold colour codes), the others indented by `indent`. Each
/// wrapped piece is painted with `style`.
fn emit(
    out: &mut String,
    prefix: &str,
    prefix_plain: &str,
    indent: usize,
    text: &str,
    width: usize,
    style: impl Fn(&str) -> String,
) {
    let first_room = width.saturating_sub(prefix_plain.width()).max(1);
    let room = width.saturating_sub(indent).max(1);
    let mut first = true;
    for paragraph in text.split('\n') {
        for piece in wrap(paragraph, if first { first_room } else { room }, room) {
            if first {
                let _ = writeln!(out, "{prefix}{}", style(&piece));
                first = false;
            } else {
                let _ = writeln!(out, "{}{}", " ".repeat(indent), style(&piece));
            }
        }
    }
    if first {
        let _ = writeln!(out, "{prefix}");
    }
}

/// Greedy word wrap by display width; a word longer than a line is cut.
fn wrap(text: &str, first: usize, rest: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut room = first;
    for word in text.split(' ') {
        let sep = usize::from(!line.is_empty());
        if line.width() + sep + word.width() <= room {
            if sep == 1 {
                line.push(' ');
            }
            line.push_str(word);
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
            room = rest;
        }
        let mut word = word;
        while word.width() > room {
            let mut cut = 0;
            let mut w = 0;
            for (i, c) in word.char_indices() {
                let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                if w + cw > room {
                    break;
                }
                w += cw;
                cut = i + c.len_utf8();
            }
            if cut == 0 {
                break;
            }
            lines.push(word.get(..cut).unwrap_or("").to_string());
            word = word.get(cut..).unwrap_or("");
            room = rest;
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

fn host_section(out: &mut String, group: &[&HostDiagnosis], paint: &Paint, width: usize, only_problems: bool) {
    let Some(host) = group.first() else { return };
    let names: Vec<&str> = group.iter().map(|h| h.host.as_str()).collect();
    let folded = clean(&crate::nodeset::fold(&names));
    let title = if group.len() > 1 {
        format!("{folded} ({} hosts)", group.len())
    } else {
        folded.clone()
    };
    let version = host
        .esxi_version
        .as_deref()
        .map(|v| format!(" · ESXi {}", clean(v)))
        .unwrap_or_default();
    let status = status_label(host.status, paint);
    // A host that could not be diagnosed at all is one line: name, status, why.
    if host.checks.is_empty() && host.vms.is_empty() {
        if let Some(error) = &host.error {
            // The title already names the host: `esx01: not an ESXi host` loses `esx01: `.
            let message = without_host(&error.message, &host.host);
            let message = clean(
                &message
                    .strip_prefix("\u{0}: ")
                    .map_or_else(|| message.replace('\u{0}', &folded), str::to_string),
            );
            let plain = format!("{title} · {} · ", diagnose::status_name(host.status));
            let prefix = format!("{} · {status} · ", paint.bold(&title));
            // `unreachable · unreachable:` says nothing twice.
            let kind = kind_label(error.kind);
            let text = if kind == diagnose::status_name(host.status) {
                message
            } else {
                format!("{kind}: {message}")
            };
            emit(out, &prefix, &plain, 4, &text, width, |t| t.to_string());
            return;
        }
    }
    let plain_title = format!("{title} · {}{version}", diagnose::status_name(host.status));
    if plain_title.width() <= width {
        let _ = writeln!(out, "{} · {status}{version}", paint.bold(&title));
    } else {
        emit(out, "", "", 2, &plain_title, width, |t| paint.bold(t));
    }
    if let Some(error) = &host.error {
        let message = clean(&without_host(&error.message, &host.host).replace('\u{0}', &folded));
        let prefix = format!("  {} ", paint.red("✗"));
        emit(
            out,
            &prefix,
            "  ✗ ",
            4,
            &format!("{}: {message}", kind_label(error.kind)),
            width,
            |t| t.to_string(),
        );
    }
    // What broke off comes first: it is why the checks below may be unknown.
    for cut in &host.incomplete_outputs {
        let label = crate::catalogue::spec(&cut.command).map_or(cut.command.as_str(), |s| s.label());
        let prefix = format!("  {} ", paint.yellow("!"));
        let text = format!("incomplete: `{}` {}", clean(label), clean(&cut.reason));
        emit(out, &prefix, "  ! ", 4, &text, width, |t| t.to_string());
    }
    let id_width = host.checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
    let mut passing_hidden = 0;
    for (i, check) in host.checks.iter().enumerate() {
        if only_problems && check.status == Status::Pass {
            passing_hidden += 1;
            continue;
        }
        // In a folded group a passing check's details may differ per host (addresses).
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
        check_line(out, check, shown.as_deref(), id_width, paint, width);
    }
    if passing_hidden > 0 {
        let _ = writeln!(
            out,
            "  {} {}",
            paint.green("✓"),
            plural(passing_hidden, "other check passes", "other checks pass")
        );
    }
    if let Some(e) = &host.vms_error {
        let _ = writeln!(out, "  {} {}", paint.dim("?"), clean(e));
    }
    if let Some(e) = &host.adapters_error {
        let prefix = format!("  {} ", paint.dim("?"));
        emit(out, &prefix, "  ? ", 4, &clean(e), width, |t| t.to_string());
    }
    for e in &host.record_errors {
        let prefix = format!("  {} ", paint.dim("?"));
        emit(out, &prefix, "  ? ", 4, &clean(e), width, |t| t.to_string());
    }
    if !host.fleet_failures.is_empty() {
        let prefix = format!("  {} ", paint.red("✗"));
        let text = format!(
            "failing fleet checks involve this host: {} (see across hosts)",
            host.fleet_failures.join(", ")
        );
        emit(out, &prefix, "  ✗ ", 4, &text, width, |t| t.to_string());
    }
}

fn kind_label(kind: crate::collect::ErrorKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn check_line(out: &mut String, c: &Check, summary: Option<&str>, id_width: usize, paint: &Paint, width: usize) {
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
    let pad = " ".repeat(indent);
    if let Some(remedy) = &c.remedy {
        if c.status != Status::Pass {
            if let Some(command) = &remedy.command {
                // One line, never wrapped mid-word by us: it is meant to be copied.
                emit(
                    out,
                    &format!("{pad}run: "),
                    &format!("{pad}run: "),
                    indent + 5,
                    &clean(command),
                    width,
                    |t| paint.bold(t),
                );
            }
            if let Some(advice) = &remedy.advice {
                emit(
                    out,
                    &format!("{pad}advice: "),
                    &format!("{pad}advice: "),
                    indent + 8,
                    &clean(advice),
                    width,
                    |t| t.to_string(),
                );
            }
        }
    }
    // An unknown check's summary already names the command that is missing.
    if matches!(c.status, Status::Fail | Status::Warn) && !c.evidence.is_empty() {
        let from: Vec<String> = c
            .evidence
            .iter()
            .map(|e| format!("{} ({})", e.command, clean(&e.field)))
            .collect();
        emit(
            out,
            &pad,
            &pad,
            indent + 6,
            &format!("from: {}", from.join(", ")),
            width,
            |t| paint.dim(t),
        );
    }
}

/// One table row before folding: what makes rows equal, and the names to fold.
struct Row {
    vm: String,
    host: String,
    adapter: u32,
    verdict: Verdict,
    reason: String,
}

fn adapter_table(out: &mut String, d: &Diagnosis, paint: &Paint, options: &HumanOptions, width: usize) {
    let mut rows: Vec<Row> = Vec::new();
    for host in &d.hosts {
        for vm in &host.vms {
            for a in &vm.adapters {
                if options.only_problems && a.verdict == Verdict::Hca && a.reasons.is_empty() {
                    continue;
                }
                let reason = match a.verdict {
                    Verdict::Hca if a.reasons.is_empty() => {
                        let via = a.port.as_ref().and_then(|p| match (&p.vswitch, &p.uplink) {
                            (Some(s), Some(u)) => Some(format!(" via {} / {}", clean(s), clean(u))),
                            _ => None,
                        });
                        format!("physical HCA in use{}", via.unwrap_or_default())
                    }
                    _ => a
                        .reasons
                        .iter()
                        .map(|r| format!("• {}", clean(r)))
                        .collect::<Vec<_>>()
                        .join("\n"),
                };
                rows.push(Row {
                    vm: vm.name.clone(),
                    host: host.host.clone(),
                    adapter: a.index,
                    verdict: a.verdict,
                    reason,
                });
            }
        }
    }
    if rows.is_empty() {
        no_adapters_line(out, d, options, width);
        return;
    }
    // Rows that differ only in VM and host fold into one, both columns as node sets.
    let mut folded: Vec<(Vec<String>, Vec<String>, &Row)> = Vec::new();
    for row in &rows {
        let same = |r: &Row| r.adapter == row.adapter && r.verdict == row.verdict && r.reason == row.reason;
        match folded.iter_mut().find(|(_, _, r)| options.fold && same(r)) {
            Some((vms, hosts, _)) => {
                vms.push(row.vm.clone());
                if !hosts.contains(&row.host) {
                    hosts.push(row.host.clone());
                }
            }
            None => folded.push((vec![row.vm.clone()], vec![row.host.clone()], row)),
        }
    }
    let mut builder = tabled::builder::Builder::default();
    builder.push_record(["VM", "Host", "Adapter", "Verdict", "Reason"]);
    for (vms, hosts, row) in &folded {
        let verdict = match row.verdict {
            Verdict::Hca => paint.green("hca"),
            Verdict::TcpFallback => paint.red("tcp-fallback"),
            Verdict::Unknown => paint.yellow("unknown"),
        };
        let vm_cell = if vms.len() > 1 {
            format!("{} ({} VMs)", clean(&crate::nodeset::fold(vms)), vms.len())
        } else {
            clean(&crate::nodeset::fold(vms))
        };
        builder.push_record([
            vm_cell,
            clean(&crate::nodeset::fold(hosts)),
            row.adapter.to_string(),
            verdict,
            row.reason.clone(),
        ]);
    }
    let mut table = builder.build();
    table
        .with(Style::rounded())
        .with(Width::wrap(width).priority(Priority::max(true)).keep_words(true));
    let _ = writeln!(out, "{table}\n");
}

/// No adapter rows: say why, and never reassure when nothing was diagnosed.
fn no_adapters_line(out: &mut String, d: &Diagnosis, options: &HumanOptions, width: usize) {
    let s = &d.summary;
    let text = if s.diagnosed == 0 {
        let not_reached = s.hosts.saturating_sub(s.diagnosed);
        format!(
            "Nothing was diagnosed: none of the {} could be reached and read (see above).",
            plural(not_reached.max(s.hosts), "host", "hosts")
        )
    } else if options.only_problems && s.adapters > 0 {
        "No PVRDMA adapter with a problem.".to_string()
    } else if s.hosts_without_adapter_list > 0 {
        format!(
            "No PVRDMA adapters could be listed: the listing failed on {} host(s), see above.",
            s.hosts_without_adapter_list
        )
    } else if s.diagnosed < s.hosts {
        format!(
            "No PVRDMA adapters found on running VMs of the {} diagnosed; {} not diagnosed (see above).",
            plural(s.diagnosed, "host", "hosts"),
            plural(s.hosts - s.diagnosed, "host was", "hosts were")
        )
    } else {
        "No PVRDMA adapters found on running VMs.".to_string()
    };
    emit(out, "", "", 0, &text, width, |t| t.to_string());
    out.push('\n');
}

fn transport_lines(out: &mut String, d: &Diagnosis, width: usize) {
    let t = &d.transport.totals;
    if t.total() == 0 {
        return;
    }
    let parts: Vec<String> = [
        (t.rdma, "rdma"),
        (t.blocked, "blocked"),
        (t.tcp, "tcp"),
        (t.memcpy, "memcpy (same host)"),
        (t.unknown, "unknown"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, label)| format!("{n} {label}"))
    .collect();
    emit(
        out,
        "",
        "",
        2,
        &format!("Transport between adapters of different VMs: {}", parts.join(", ")),
        width,
        |t| t.to_string(),
    );
    let exceptions = &d.transport.exceptions;
    for e in exceptions.iter().take(10) {
        let p = &e.pairs;
        let counts: Vec<String> = [
            (p.blocked, "blocked"),
            (p.tcp, "tcp"),
            (p.unknown, "unknown"),
            (p.rdma, "rdma"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, label)| format!("{n} {label}"))
        .collect();
        let text = format!(
            "{}/{}#{} → {}: {}: {}",
            clean(&e.adapter.host),
            clean(&e.adapter.vm),
            e.adapter.adapter,
            clean(&e.peer_host),
            counts.join(", "),
            clean(&e.reasons.join("; "))
        );
        emit(out, "  ", "  ", 4, &text, width, |t| t.to_string());
    }
    if exceptions.len() > 10 {
        let text = format!(
            "… and {} more adapters with pairs that are not plain rdma (see --format json)",
            exceptions.len() - 10
        );
        emit(out, "  ", "  ", 4, &text, width, |t| t.to_string());
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::{ErrorKind, Failure};
    use crate::diagnose::{Summary, Vm};

    #[test]
    fn text_from_a_host_cannot_reach_the_terminal_as_escape_sequences() {
        let hostile = "evil\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J";
        let host = HostDiagnosis {
            host: "esx01".to_string(),
            status: HostStatus::Error,
            error: Some(Failure::new(
                ErrorKind::KeyExchange,
                format!("no common algorithm; server offers {hostile}"),
            )),
            esxi_version: None,
            checks: Vec::new(),
            vms: vec![Vm {
                name: hostile.to_string(),
                world_id: Some(1),
                config_file: None,
                adapters: Vec::new(),
            }],
            adapters_error: Some(hostile.to_string()),
            vms_error: None,
            incomplete_outputs: Vec::new(),
            pvrdma_vmknic: None,
            fleet_failures: Vec::new(),
            record_errors: Vec::new(),
        };
        let d = Diagnosis {
            hosts: vec![host],
            fleet_checks: Vec::new(),
            transport: Default::default(),
            probes: Vec::new(),
            changes: None,
            summary: Summary::default(),
        };
        let text = render(&d, false);
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
        assert!(text.contains("evil\\u{1b}]52"), "the bytes stay visible: {text}");
        // Our own colours still work.
        assert!(render(&d, true).contains("\x1b[31m"));
    }

    #[test]
    fn bidi_controls_are_escaped_and_long_host_text_is_shortened() {
        assert_eq!(clean("a\u{202E}txt.exe"), "a\\u{202e}txt.exe");
        let long = "x".repeat(8 * 1024 * 1024);
        let shown = clean(&long);
        assert!(shown.len() < 400, "{}", shown.len());
        assert!(
            shown.ends_with(&format!(
                "… ({} more characters, whole in --format json)",
                long.len() - MAX_HOST_TEXT
            )),
            "{shown}"
        );
        assert_eq!(clean(&"y".repeat(MAX_HOST_TEXT)), "y".repeat(MAX_HOST_TEXT));
    }

    #[test]
    fn wrapping_never_exceeds_the_width() {
        let text = "a fairly long sentence with words and averyveryveryveryveryverylongwordthatmustbecut in it";
        for width in [10usize, 17, 40] {
            for line in wrap(text, width, width) {
                assert!(line.width() <= width, "{width}: {line:?}");
            }
        }
        assert_eq!(wrap("one two", 3, 3), ["one", "two"]);
    }
}
