//! The human report: per host (or per node set of hosts with identical results, as
//! `clush -b` folds them) a ✓/!/✗/? checklist with the fix under each failure, then one
//! table of PVRDMA adapters (VM, host, adapter, verdict, reason), then one summary line.
//!
//! Every line fits the width its caller gives (the front end's terminal, `$COLUMNS`, else 100): long
//! texts wrap under their column, table cells wrap inside the table, and a command to run
//! stays whole on its own line. The tool's own text is never cut; a field that holds only
//! what a host sent is escaped (control and bidi characters) and, beyond 200 characters,
//! shortened; JSON keeps it whole.
use super::plural;
use crate::diagnose::{self, Check, Diagnosis, HostDiagnosis, HostStatus, Status, Verdict};
use std::fmt::Write;
use tabled::settings::Style;
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

/// The report laid out as `options` say.
pub fn render_with(d: &Diagnosis, options: &HumanOptions) -> String {
    let paint = Paint { on: options.color };
    let width = options.width.max(MIN_WIDTH);
    let mut out = String::new();
    if let Some(changes) = &d.changes {
        for line in changes::human_lines(changes) {
            let text = line.trim_start();
            let lead = &line[..line.len() - text.len()];
            emit(&mut out, lead, lead, lead.len() + 2, &clean(text), width, |t| {
                t.to_string()
            });
        }
        out.push('\n');
    }
    if let Some(scope) = &d.vm_scope {
        for line in vm_scope_lines(scope) {
            emit(&mut out, "", "", 2, &clean(&line), width, |t| paint.bold(t));
        }
        out.push('\n');
    }
    let configuration_only: Vec<&str> = d
        .hosts
        .iter()
        .filter(|h| h.configuration_only)
        .map(|h| h.host.as_str())
        .collect();
    if !configuration_only.is_empty() {
        let line = format!(
            "configuration only: {} judged from vCenter's vSphere API, without SSH. The transport each adapter uses is observed only over SSH: adapters are unknown, with what the configuration predicts, and lossless-network needs SSH",
            pvrdma_nodeset::fold(&configuration_only)
        );
        emit(&mut out, "", "", 2, &clean(&line), width, |t| paint.bold(t));
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
        let id_width = fleet.iter().map(|c| c.id.id().len()).max().unwrap_or(0);
        for check in fleet {
            check_line(
                &mut out,
                check,
                None,
                id_width,
                &paint,
                width,
                &hosts::FixLines::default(),
            );
        }
        for line in probe::human_lines(&d.probes) {
            emit(&mut out, "      ", "      ", 8, &clean(&line), width, |t| t.to_string());
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
                pvrdma_nodeset::fold(&hidden)
            ),
            width,
            |t| paint.dim(t),
        );
    }
    let line = super::summary::line(d);
    let code = d.exit_code();
    emit(&mut out, "", "", 0, &line, width, |t| match code {
        0 => paint.green(t),
        1 => paint.red(t),
        _ => paint.yellow(t),
    });
    out
}

mod changes;
pub use changes::{timestamped, watch_lines};

/// What a VM-first run says before the hosts: which VMs it is about, and which of them it
/// did not find running.
fn vm_scope_lines(scope: &crate::diagnose::VmScope) -> Vec<String> {
    let mut lines = vec![format!(
        "VMs: {}: only their adapters, VM checks and the transports between them are reported",
        name_list(&scope.vms)
    )];
    if !scope.not_running.is_empty() {
        lines.push(format!(
            "not running on the hosts diagnosed: {} (stopped, or moved since the inventory was read)",
            name_list(&scope.not_running)
        ));
    }
    if !scope.not_seen.is_empty() {
        lines.push(format!(
            "not seen running: {}; the VM list of {} could not be read, so they may run there",
            name_list(&scope.not_seen),
            pvrdma_nodeset::fold(&scope.unread_hosts)
        ));
    }
    if !scope.on_hosts_left_out.is_empty() {
        let each: Vec<String> = scope
            .on_hosts_left_out
            .iter()
            .map(|v| format!("{} (on {}, {})", quote_name(&v.vm), v.host, v.reason))
            .collect();
        lines.push(format!(
            "not diagnosed, on hosts this run left out: {}",
            each.join(", ")
        ));
    }
    lines
}

/// VM names joined with `, ` for the lines above, where `, `, `: ` and `; ` end a name:
/// a name that holds one of them, a quote, or spaces at either end (or is empty) is
/// written in double quotes (`"` and `\` escaped with a backslash), so that it reads as
/// one name; a plain name (`db:primary`, `hpc node 08`) stays bare.
fn name_list(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| quote_name(n)).collect();
    quoted.join(", ")
}

fn quote_name(name: &str) -> String {
    let ambiguous = name.is_empty()
        || name.trim() != name
        || [", ", ": ", "; "].iter().any(|sep| name.contains(sep))
        || name.ends_with([',', ':', ';'])
        || name.contains(['"', '\\']);
    if ambiguous {
        format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        name.to_string()
    }
}
mod hosts;
pub mod list;
pub mod probe;
mod table;
#[cfg(test)]
mod tests;
mod text;

use hosts::*;
// What the HTML report shares with this one: the same folding, the same escaping rule.
pub(in crate::report) use changes::human_lines as change_lines;
pub(in crate::report) use hosts::{group_hosts, has_problem, kind_label};
pub use list::{list_checks, ProbeListing};
pub(in crate::report) use table::fold_rows;
use table::*;
pub(in crate::report) use text::is_bidi_control;
use text::*;
pub use text::{stderr_lines, stderr_message, wrap_whole_words};
