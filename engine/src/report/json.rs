//! The JSON report: one document, schema `pvrdma-doctor/report/v1` (documented in the
//! README). It carries no timestamps, so a live run and `analyze` of its bundle produce
//! byte-identical reports.
use crate::diagnose::{Check, Diagnosis, HostDiagnosis, Summary, TransportSummary};
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
    /// The transport between adapters of different VMs, counted per class and host pair,
    /// with the adapters whose pairs are not plain rdma listed (replaces the pair list).
    transport: &'a TransportSummary,
    /// `--probe` only: one entry per probed (or skipped) host pair.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    probes: &'a [crate::diagnose::probe::Probe],
    /// `--baseline` only: the baseline file's modification time (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    changes_since: Option<&'a str>,
    /// `--baseline` only: every host status, check status, adapter verdict and probe status
    /// that differs from the baseline (empty = no change).
    #[serde(skip_serializing_if = "Option::is_none")]
    changes: Option<&'a [crate::diagnose::Change]>,
    /// `--vm` only: the VMs the run was narrowed to, and those found running nowhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    vm_scope: Option<&'a crate::diagnose::VmScope>,
    /// Counts over the whole run and the summary line.
    summary: SummaryOut<'a>,
}

/// Counts over the whole run.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Summary")]
struct SummaryOut<'a> {
    #[serde(flatten)]
    counts: &'a Summary,
    /// The one-line summary the human report ends with.
    line: String,
}

/// The JSON Schema of the report, generated from the types above; checked in at
/// `docs/report.schema.json` (a test keeps the two equal).
pub fn schema() -> String {
    // The report is only ever written: fields skipped when empty are optional.
    let schema = schemars::generate::SchemaSettings::default()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<Report<'static>>();
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
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
        vm_scope: d.vm_scope.as_ref(),
        summary: SummaryOut {
            counts: &d.summary,
            line: super::summary::line(d),
        },
    }
}

/// The report as a JSON value (what `--baseline` compares).
pub fn to_value(d: &Diagnosis) -> serde_json::Value {
    serde_json::to_value(report(d)).unwrap_or(serde_json::Value::Null)
}

pub fn render(d: &Diagnosis) -> String {
    let mut text = Vec::new();
    // Writing into memory cannot fail but for a serializer's error, which plain data
    // structs never raise; fall back to a valid document anyway.
    match write(d, &mut text) {
        Ok(()) => String::from_utf8(text).unwrap_or_default(),
        Err(e) => format!("{{\"schema\":\"{SCHEMA}\",\"error\":\"{e}\"}}\n"),
    }
}

/// Writes the report to `out` as it is serialized, never whole in memory: a fleet's
/// report runs to megabytes. The same bytes as [`render`].
pub fn write(d: &Diagnosis, mut out: impl std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut out, &report(d))?;
    out.write_all(b"\n")
}
