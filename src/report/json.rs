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
    summary: &'a Summary,
}

pub fn render(d: &Diagnosis) -> String {
    let report = Report {
        schema: SCHEMA,
        tool_version: env!("CARGO_PKG_VERSION"),
        exit_code: d.exit_code(),
        hosts: &d.hosts,
        fleet_checks: &d.fleet_checks,
        transport: &d.transport,
        summary: &d.summary,
    };
    // Serializing plain data structs cannot fail; fall back to a valid document anyway.
    let mut text = serde_json::to_string_pretty(&report)
        .unwrap_or_else(|e| format!("{{\"schema\":\"{SCHEMA}\",\"error\":\"{e}\"}}"));
    text.push('\n');
    text
}
