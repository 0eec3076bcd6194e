//! The JSON report: one document, schema `pvrdma-doctor/report/v1` (documented in the
//! README). It carries no timestamps, so a live run and `analyze` of its bundle produce
//! byte-identical reports.
use crate::diagnose::{Check, Diagnosis, HostDiagnosis, Summary, TransportSummary};
use serde::Serialize;

pub const SCHEMA: &str = "pvrdma-doctor/report/v1";

#[derive(Serialize)]
struct Report<'a> {
    schema: &'static str,
    tool_version: &'static str,
    exit_code: u8,
    hosts: &'a [HostDiagnosis],
    fleet_checks: &'a [Check],
    transport: &'a TransportSummary,
    /// `--probe` only.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    probes: &'a [crate::probe::Probe],
    /// `--baseline` only: the baseline file's time, then the list (empty = no change).
    #[serde(skip_serializing_if = "Option::is_none")]
    changes_since: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    changes: Option<&'a [crate::baseline::Change]>,
    summary: &'a Summary,
}

fn report(d: &Diagnosis) -> Report<'_> {
    Report {
        schema: SCHEMA,
        tool_version: env!("CARGO_PKG_VERSION"),
        exit_code: d.exit_code(),
        hosts: &d.hosts,
        fleet_checks: &d.fleet_checks,
        transport: &d.transport,
        probes: &d.probes,
        changes_since: d.changes.as_ref().map(|c| c.since.as_str()),
        changes: d.changes.as_ref().map(|c| c.list.as_slice()),
        summary: &d.summary,
    }
}

/// The report as a JSON value (what `--baseline` compares).
pub fn to_value(d: &Diagnosis) -> serde_json::Value {
    serde_json::to_value(report(d)).unwrap_or(serde_json::Value::Null)
}

pub fn render(d: &Diagnosis) -> String {
    let report = report(d);
    // Serializing plain data structs cannot fail; fall back to a valid document anyway.
    let mut text = serde_json::to_string_pretty(&report)
        .unwrap_or_else(|e| format!("{{\"schema\":\"{SCHEMA}\",\"error\":\"{e}\"}}"));
    text.push('\n');
    text
}
