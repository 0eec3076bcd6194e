//! The JSON report: one document, schema `pvrdma-doctor/report/v1` (documented in the
//! README). It carries no timestamps, so a live run and `analyze` of its bundle produce
//! byte-identical reports.
use crate::diagnose::{Check, Diagnosis, HostDiagnosis, Pair, Summary};
use serde::Serialize;

pub const SCHEMA: &str = "pvrdma-doctor/report/v1";

/// A pvrdma-doctor report (`--format json`), schema `pvrdma-doctor/report/v1`: fields are
/// only ever added within v1.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "PvrdmaDoctorReport")]
struct Report<'a> {
    /// Always `pvrdma-doctor/report/v1`.
    schema: &'static str,
    /// Version of pvrdma-doctor that wrote it.
    tool_version: &'static str,
    /// The process exit code: 0 healthy, 1 problems, 3 incomplete (130 is not in the report).
    exit_code: u8,
    /// One entry per host, in the order given (never folded).
    hosts: &'a [HostDiagnosis],
    /// Checks across hosts (same shape as host checks), e.g. `vmknic-subnets`.
    fleet_checks: &'a [Check],
    /// The transport between every two adapters of different VMs.
    pairs: &'a [Pair],
    /// Counts over the whole run and the summary line.
    summary: &'a Summary,
}

/// The JSON Schema of the report, generated from the types above; checked in at
/// `docs/report.schema.json` (a test keeps the two equal).
pub fn schema() -> String {
    let schema = schemars::schema_for!(Report<'static>);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

pub fn render(d: &Diagnosis) -> String {
    let report = Report {
        schema: SCHEMA,
        tool_version: env!("CARGO_PKG_VERSION"),
        exit_code: d.exit_code(),
        hosts: &d.hosts,
        fleet_checks: &d.fleet_checks,
        pairs: &d.pairs,
        summary: &d.summary,
    };
    // Serializing plain data structs cannot fail; fall back to a valid document anyway.
    let mut text = serde_json::to_string_pretty(&report)
        .unwrap_or_else(|e| format!("{{\"schema\":\"{SCHEMA}\",\"error\":\"{e}\"}}"));
    text.push('\n');
    text
}
