//! Pipeline stage: *render*. Turns a [`Diagnosis`] into the text a person or a runbook
//! reads. Renderers return a `String`; only `app.rs` writes to stdout or into a bundle.
use crate::diagnose::Diagnosis;

pub mod exposition;
pub mod html;
mod human;
pub mod json;
pub mod nagios;
pub mod plan;
pub mod prometheus;
pub mod summary;
#[cfg(test)]
mod tests;

/// Host checks with `status`, grouped by id: (id, hosts where it has it), in first-seen
/// order.
fn hosts_by_check(d: &Diagnosis, status: crate::diagnose::Status) -> Vec<(crate::diagnose::CheckId, Vec<&str>)> {
    hosts_by_check_where(d, status, |_, _| true)
}

/// [`hosts_by_check`] of the checks `keep` takes.
fn hosts_by_check_where(
    d: &Diagnosis,
    status: crate::diagnose::Status,
    keep: impl Fn(&crate::diagnose::HostDiagnosis, &crate::diagnose::Check) -> bool,
) -> Vec<(crate::diagnose::CheckId, Vec<&str>)> {
    let mut by_id: Vec<(crate::diagnose::CheckId, Vec<&str>)> = Vec::new();
    for h in &d.hosts {
        for c in h.checks.iter().filter(|c| c.status == status && keep(h, c)) {
            match by_id.iter_mut().find(|(id, _)| *id == c.id) {
                Some((_, on)) => on.push(&h.host),
                None => by_id.push((c.id, vec![&h.host])),
            }
        }
    }
    by_id
}

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
    /// One self-contained HTML page to attach to a ticket: the path picture, the failing
    /// checks with every form of their fix, each adapter's verdict; no network loads.
    Html,
    /// The fixes of the failing checks as an Ansible playbook (community.vmware), for
    /// review and then `ansible-playbook`; nothing is changed by writing it.
    Ansible,
    /// The same plan as a PowerCLI script.
    Powercli,
}

pub use human::probe::human_lines as probe_lines;
pub use human::{
    list_checks, stderr_lines, stderr_message, timestamped, watch_lines, wrap_whole_words, HumanOptions, ProbeListing,
    DEFAULT_WIDTH,
};

/// How to render a report, for every format: each format reads its own part.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// Colour, width and folding of the human report (the caller knows the terminal).
    pub human: HumanOptions,
    /// The run's times and the series' scope.
    pub prometheus: prometheus::PrometheusOptions,
    /// The plugin's thresholds and the run's clock.
    pub nagios: nagios::NagiosOptions,
    /// Where the page's data comes from, and the outputs it carries.
    pub html: html::HtmlOptions,
    /// Where a plan comes from and which vSphere API it addresses.
    pub plan: plan::PlanOptions,
}

impl Default for RenderOptions {
    /// The default human layout, the Prometheus times of [`prometheus::PrometheusOptions::rendered_now`],
    /// the plugin's default thresholds.
    fn default() -> Self {
        RenderOptions {
            human: HumanOptions::default(),
            prometheus: prometheus::PrometheusOptions::rendered_now(),
            nagios: nagios::NagiosOptions::default(),
            html: html::HtmlOptions::default(),
            plan: plan::PlanOptions::default(),
        }
    }
}

/// A rendered report and the exit code it deserves: the documented codes
/// ([`crate::exit`]), or with [`Format::Nagios`] the plugin state's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    pub exit_code: u8,
}

/// Renders the report in the chosen format with the default options (colour only applies
/// to `human`; the Prometheus format states the time of rendering as the run's end).
pub fn render(diagnosis: &Diagnosis, format: Format, color: bool) -> String {
    let mut options = RenderOptions::default();
    options.human.color = color;
    render_with(diagnosis, format, &options).text
}

/// Renders the report: the one call every front end makes, whatever the format.
pub fn render_with(diagnosis: &Diagnosis, format: Format, options: &RenderOptions) -> Rendered {
    let text = match format {
        Format::Human => human::render_with(diagnosis, &options.human),
        Format::Json => json::render(diagnosis),
        Format::Prometheus => prometheus::render(diagnosis, &options.prometheus),
        Format::Html => html::render(diagnosis, &options.html, &options.human),
        Format::Ansible => plan::ansible::render(diagnosis, &options.plan),
        Format::Powercli => plan::powercli::render(diagnosis, &options.plan),
        Format::Nagios => {
            let plugin = nagios::render(diagnosis, &options.nagios);
            return Rendered {
                text: plugin.text,
                exit_code: plugin.state.code(),
            };
        }
    };
    Rendered {
        text,
        exit_code: diagnosis.exit_code(),
    }
}
