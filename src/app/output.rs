//! Writing what a job produced: the report (one render call for every format), the
//! `--list-checks` and `--generate` texts, to `--output` or stdout.
use super::setup::ReportSetup;
use crate::plugin::Session;
use pvrdma_engine::capture::HostCapture;
use pvrdma_engine::catalogue::CATALOGUE;
use pvrdma_engine::diagnose::{self, CHECKS};
use pvrdma_engine::report::{self, html, Format};
use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

/// When the diagnosed outputs were collected, for the formats that state it.
pub(super) struct RunTimes {
    finished: SystemTime,
    duration: std::time::Duration,
    /// Where the times come from, when that is not a live run (a comment line).
    note: Option<String>,
    /// What the HTML page says of when, what and how (the sources are counted from the
    /// captures when the report is written).
    provenance: html::Provenance,
}

impl RunTimes {
    pub(super) fn of_run(started: SystemTime, finished: SystemTime) -> Self {
        RunTimes {
            finished,
            duration: finished.duration_since(started).unwrap_or_default(),
            note: None,
            provenance: html::Provenance {
                times: Some(html::Times {
                    started,
                    finished,
                    from: html::TimesFrom::Run,
                }),
                ..html::Provenance::default()
            },
        }
    }

    /// `analyze`: the times a support bundle recorded; else (a capture folder, a
    /// vm-support bundle) now and how long reading took, and the note says which.
    pub(super) fn of_capture(path: &Path, started: std::time::Instant) -> Self {
        let recorded = crate::offline::recorded_run_times(path);
        let mut times = match recorded {
            Some((start, end)) => RunTimes {
                note: Some(format!(
                    "# pvrdma-doctor analyze: the run times are those the support bundle recorded (started {}, finished {}).",
                    humantime::format_rfc3339_millis(start),
                    humantime::format_rfc3339_millis(end)
                )),
                ..RunTimes::of_run(start, end)
            },
            None => {
                let now = SystemTime::now();
                let read_from = now.checked_sub(started.elapsed()).unwrap_or(now);
                RunTimes {
                    note: Some(
                    "# pvrdma-doctor analyze: the capture records no run time, so the run times are when analyze read it and how long that took."
                        .to_string(),
                    ),
                    ..RunTimes::of_run(read_from, now)
                }
            }
        };
        times.provenance = html::Provenance {
            read_from: path.file_name().map(|n| n.to_string_lossy().into_owned()),
            times: times.provenance.times.map(|t| html::Times {
                from: if recorded.is_some() {
                    html::TimesFrom::Bundle
                } else {
                    html::TimesFrom::Read
                },
                ..t
            }),
            ..recorded_provenance(path)
        };
        times
    }
}

/// What the page says of a bundle's run, as its manifest records it: which version
/// collected it, whether it is redacted. Empty for anything else.
fn recorded_provenance(path: &Path) -> html::Provenance {
    let (collected_by, redacted) = crate::offline::recorded_collection(path).unwrap_or_default();
    html::Provenance {
        collected_by,
        redacted,
        ..html::Provenance::default()
    }
}

/// Diagnoses the captures (with the changes since `baseline`), renders the report in its
/// format and writes it. Returns the diagnosis (for the bundle) and the exit code the
/// report deserves (the plugin state with `--format nagios`).
pub(super) fn finish(
    captures: &[HostCapture],
    setup: &ReportSetup,
    baseline: Option<&pvrdma_engine::baseline::Baseline>,
    times: &RunTimes,
    plugin: Option<&Session>,
    targets: &[crate::hosts::HostSpec],
) -> anyhow::Result<(diagnose::Diagnosis, u8)> {
    if let Some(p) = plugin {
        p.stage("diagnosing");
    }
    let selection = diagnose::Selection::of_vms(setup.vms.as_ref());
    let diagnosis = diagnose::diagnose_selected(captures, &selection);
    let html = html_options(Some(captures), &diagnosis, setup.format, times);
    report(diagnosis, html, setup, baseline, times, plugin, targets)
}

/// Renders the report of `diagnosis` (with the changes since `baseline`) in its format
/// and writes it (a page with `html`'s provenance). Returns the diagnosis and the exit
/// code, as [`finish`] does.
pub(super) fn report(
    mut diagnosis: diagnose::Diagnosis,
    html: html::HtmlOptions,
    setup: &ReportSetup,
    baseline: Option<&pvrdma_engine::baseline::Baseline>,
    times: &RunTimes,
    plugin: Option<&Session>,
    targets: &[crate::hosts::HostSpec],
) -> anyhow::Result<(diagnose::Diagnosis, u8)> {
    if let Some(evidence) = &setup.evidence {
        crate::evidence::attach_bundle_commands(&mut diagnosis, evidence, targets);
    }
    diagnosis.changes = baseline.map(|b| pvrdma_engine::baseline::compare(b, &diagnosis));
    let options = report::RenderOptions {
        human: setup.human.clone(),
        prometheus: report::prometheus::PrometheusOptions {
            scope: report::prometheus::Scope::Fleet,
            finished: times.finished,
            duration: times.duration,
        },
        nagios: report::nagios::NagiosOptions {
            warning: setup.plugin.warning.clone(),
            critical: setup.plugin.critical.clone(),
            unreachable: setup.plugin.unreachable,
            duration: plugin.map(Session::elapsed),
            timed_out: plugin.and_then(Session::timed_out),
        },
        html,
        plan: report::plan::PlanOptions {
            vcenter: setup.plan.vcenter.clone(),
            source: setup.plan.source.clone(),
            made: times.finished,
        },
    };
    if setup.format == Format::Json && plugin.is_none() {
        // A fleet's JSON report runs to megabytes: written as it is serialized.
        let code = diagnosis.exit_code();
        write_streamed(setup.output.as_deref(), |out| report::json::write(&diagnosis, out))?;
        return Ok((diagnosis, code));
    }
    let rendered = report::render_with(&diagnosis, setup.format, &options);
    let text = match (&times.note, setup.format) {
        (Some(note), Format::Prometheus) => format!("{note}\n{}", rendered.text),
        _ => rendered.text,
    };
    let code = emit(setup.output.as_deref(), &text, rendered.exit_code, plugin)?;
    Ok((diagnosis, code))
}

/// The page's provenance; a page of outputs read offline (`analyze`) carries the outputs
/// behind its findings. `captures`: `None` when the run judged each host as vCenter's pages
/// brought it and holds none now (every host read through the vSphere API).
pub(super) fn html_options(
    captures: Option<&[HostCapture]>,
    diagnosis: &diagnose::Diagnosis,
    format: Format,
    times: &RunTimes,
) -> html::HtmlOptions {
    if format != Format::Html {
        return html::HtmlOptions::default();
    }
    let offline = times.provenance.read_from.is_some();
    html::HtmlOptions {
        provenance: html::Provenance {
            sources: match captures {
                Some(captures) => html::Provenance::count_sources(captures),
                None => vec![(pvrdma_engine::capture::CaptureSource::VsphereApi, diagnosis.hosts.len())],
            },
            ..times.provenance.clone()
        },
        outputs: captures
            .filter(|_| offline)
            .map(|captures| std::sync::Arc::new(html::Outputs::behind(diagnosis, captures))),
    }
}

/// Writes `text` to `--output` (atomically) or to stdout; returns the exit code that
/// stands: `code`, unless the plugin's watchdog already wrote its own.
pub(super) fn emit(output: Option<&Path>, text: &str, code: u8, plugin: Option<&Session>) -> anyhow::Result<u8> {
    match (output, plugin) {
        (Some(path), _) => crate::atomic_file::write_report(path, text).map(|()| code),
        (None, Some(p)) => Ok(p.write_once(text, code)),
        (None, None) => write_stdout(text).map(|()| code),
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error worth a message.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// What `write` writes, to `--output` (atomically, as [`emit`] does) or to stdout (a
/// closed pipe is not an error), as it is written.
fn write_streamed(
    output: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    if let Some(path) = output {
        return crate::atomic_file::write_report_with(path, write);
    }
    // Stdout flushes at every line on its own; a report is written in large blocks.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// What `--generate` prints: a completion script or the man page, from the clap
/// definition itself so they never drift from `--help`.
pub(crate) fn generate(kind: crate::cli::Generate) -> anyhow::Result<String> {
    use crate::cli::Generate;
    use clap_complete::Shell;
    let mut cmd = crate::cli::command();
    let mut buf: Vec<u8> = Vec::new();
    let shell = match kind {
        Generate::CompleteBash => Shell::Bash,
        Generate::CompleteZsh => Shell::Zsh,
        Generate::CompleteFish => Shell::Fish,
        Generate::CompletePowershell => Shell::PowerShell,
        Generate::CompleteElvish => Shell::Elvish,
        Generate::ReportSchema => return Ok(report::json::schema()),
        Generate::Man => {
            clap_mangen::Man::new(cmd).render(&mut buf)?;
            return Ok(String::from_utf8_lossy(&buf).into_owned());
        }
    };
    clap_complete::generate(shell, &mut cmd, "pvrdma-doctor", &mut buf);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// `--list-checks`: the human list, or with `--format json` the same lists as one
/// document for scripts.
pub(super) fn list_checks(json: bool, width: usize, verbose: bool) -> String {
    if !json {
        return report::list_checks(width, verbose, &crate::probe::listing());
    }
    let commands: Vec<serde_json::Value> = CATALOGUE
        .iter()
        .map(|spec| {
            serde_json::json!({
                "id": spec.id,
                "command": spec.command,
                "why": spec.why,
                "grouped": pvrdma_engine::catalogue::is_grouped(spec),
            })
        })
        .collect();
    // The line the grouped commands are really sent as.
    let grouped = pvrdma_engine::catalogue::grouped_command().map(|line| {
        serde_json::json!({
            "id": pvrdma_engine::catalogue::GROUPED_COMMANDS,
            "ids": pvrdma_engine::catalogue::grouped_ids(),
            "command": line,
            "why": pvrdma_engine::catalogue::GROUPED_WHY,
        })
    });
    let checks: Vec<serde_json::Value> = CHECKS
        .iter()
        .map(|(id, what)| serde_json::json!({"id": id, "passes_when": what}))
        .collect();
    let doc = serde_json::json!({
        "schema": "pvrdma-doctor/checks/v1",
        "tool_version": env!("CARGO_PKG_VERSION"),
        "commands": commands,
        "grouped_commands": grouped,
        "checks": checks,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}
