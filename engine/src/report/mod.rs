//! Pipeline stage: *render*. Turns a [`Diagnosis`] into the text a person or a runbook
//! reads. Renderers return a `String`; only `app.rs` writes to stdout or into a bundle.
use crate::diagnose::Diagnosis;

mod human;
pub mod json;
pub mod nagios;
pub mod prometheus;
pub mod summary;

/// `1 host`, `2 hosts`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// An output format (`--format` on the command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Per-host checklist, per-VM table and a summary line.
    Human,
    /// One JSON document (schema `pvrdma-doctor/report/v1`).
    Json,
    /// Prometheus text exposition format 0.0.4 (for node_exporter's textfile collector;
    /// see the README's metric list).
    Prometheus,
    /// A monitoring plugin's output for Nagios, Icinga, Naemon: one status line with
    /// performance data, one line per problem; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
    Nagios,
}

pub use human::probe::human_lines as probe_lines;
pub use human::{
    list_checks, stderr_lines, stderr_message, terminal_width, timestamped, watch_lines, HumanOptions, ProbeListing,
};

/// Renders the report in the chosen format with the default human layout; colour only
/// applies to `human`. The Prometheus format states the time of rendering as the run's
/// end and no duration: call [`prometheus::render`] with the run's times instead.
pub fn render(diagnosis: &Diagnosis, format: Format, color: bool) -> String {
    match format {
        Format::Human => human::render(diagnosis, color),
        Format::Json => json::render(diagnosis),
        Format::Prometheus => prometheus::render(diagnosis, &prometheus::PrometheusOptions::rendered_now()),
        Format::Nagios => nagios::render(diagnosis, &nagios::NagiosOptions::default()).text,
    }
}

/// Renders the report; the options only shape the human format (the plugin format takes
/// its own options: [`nagios::render`]).
pub fn render_with(diagnosis: &Diagnosis, format: Format, options: &HumanOptions) -> String {
    match format {
        Format::Human => human::render_with(diagnosis, options),
        other => render(diagnosis, other, false),
    }
}
