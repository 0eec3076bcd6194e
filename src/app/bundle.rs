//! The support bundle of a live or demo run: refused early when it cannot be written,
//! written after the report.
use crate::bundle::{self, BundleMeta};
use crate::cli::BundleArgs;
use pvrdma_engine::capture::HostCapture;
use pvrdma_engine::diagnose;
use pvrdma_engine::report;
use std::time::SystemTime;

/// Refuses an existing bundle (or redaction map) before collecting, so a long live run
/// does not end in a refusal. Call it before connecting to any host.
pub(super) fn prepare_bundle(args: &BundleArgs) -> anyhow::Result<()> {
    if let Some(path) = &args.bundle {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        anyhow::ensure!(
            name.ends_with(".tar.gz") || name.ends_with(".tgz"),
            "--bundle {}: a support bundle is a gzip-compressed tar archive; name it with .tar.gz (e.g. {})",
            path.display(),
            path.with_extension("tar.gz").display()
        );
        bundle::check_target(path, args.force)?;
        if args.redact {
            bundle::check_target(&crate::redact::map_path(path), args.force)?;
        }
    }
    Ok(())
}

/// After a live or demo run (the report already printed): writes the support bundle when
/// `--bundle` was given. With `--redact` the captures are redacted first and the bundled
/// reports are computed from them, so the bundle holds no original value; the mapping goes
/// next to it. Returns where the bundle went.
pub fn write_support_bundle(
    args: &BundleArgs,
    captures: &[HostCapture],
    diagnosis: &diagnose::Diagnosis,
    started: SystemTime,
    finished: SystemTime,
    interrupted: bool,
) -> anyhow::Result<Option<std::path::PathBuf>> {
    let local = crate::redact::LocalValues::default();
    write_support_bundle_hiding(args, captures, diagnosis, started, finished, interrupted, &local)
}

/// [`write_support_bundle`] that, with `--redact`, also hides the local paths and login
/// users of the run (see [`crate::redact::LocalValues`]).
pub(super) fn write_support_bundle_hiding(
    args: &BundleArgs,
    captures: &[HostCapture],
    diagnosis: &diagnose::Diagnosis,
    started: SystemTime,
    finished: SystemTime,
    interrupted: bool,
    local: &crate::redact::LocalValues,
) -> anyhow::Result<Option<std::path::PathBuf>> {
    let Some(path) = &args.bundle else {
        return Ok(None);
    };
    let mut command_line = command_line();
    let mut redactor = crate::redact::Redactor::new();
    let redacted;
    let captures = if args.redact {
        redactor.hide_local(local);
        redacted = redactor.redact_captures(captures)?;
        command_line = crate::redact::redact_command_line(&command_line);
        &redacted
    } else {
        captures
    };
    // The printed report's diagnosis is reused; only redacted captures need their own, so
    // the bundled report holds no original value.
    // A VM-first run's scope names VMs and hosts, which redaction replaces like every
    // other.
    let hide = |name: &str| match args.redact {
        true => redactor.redact_text(name),
        false => name.to_string(),
    };
    let (vm_scope, vm_scope_left_out) = scope_of(diagnosis, hide);
    let rediagnosed;
    let diagnosis = if args.redact {
        let chosen = vm_scope.clone().map(|vms| pvrdma_engine::capture::VmChoice {
            vms,
            left_out: vm_scope_left_out.clone(),
        });
        let selection = diagnose::Selection::of_vms(chosen.as_ref());
        rediagnosed = diagnose::diagnose_selected(captures, &selection);
        &rediagnosed
    } else {
        diagnosis
    };
    let meta = BundleMeta {
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line,
        started,
        finished,
        interrupted,
        redacted: args.redact,
        vm_scope,
        vm_scope_left_out,
    };
    bundle::write_bundle(
        path,
        captures,
        &meta,
        &report::render(diagnosis, report::Format::Json, false),
        &report::render(diagnosis, report::Format::Human, false),
        &page(
            diagnosis,
            report::html::Provenance::count_sources(captures),
            Some(report::html::Outputs::behind(diagnosis, captures)),
            &meta,
        ),
        args.force,
    )?;
    if args.redact {
        redactor.write_map(path, args.force)?;
    }
    Ok(Some(path.clone()))
}

/// The bundle's HTML page: from the bundle's own diagnosis (the redacted one with
/// `--redact`), read from `sources`, carrying `outputs` (the outputs behind its findings,
/// as `analyze` of the bundle would show them) when the run still holds its captures.
fn page(
    diagnosis: &diagnose::Diagnosis,
    sources: Vec<(pvrdma_engine::capture::CaptureSource, usize)>,
    outputs: Option<report::html::Outputs>,
    meta: &BundleMeta,
) -> String {
    use report::html;
    let options = report::RenderOptions {
        html: html::HtmlOptions {
            provenance: html::Provenance {
                sources,
                times: Some(html::Times {
                    started: meta.started,
                    finished: meta.finished,
                    from: html::TimesFrom::Run,
                }),
                redacted: meta.redacted,
                ..html::Provenance::default()
            },
            outputs: outputs.map(std::sync::Arc::new),
        },
        ..report::RenderOptions::default()
    };
    report::render_with(diagnosis, report::Format::Html, &options).text
}

/// The page of a bundle whose hosts were read through the vSphere API as its pages came,
/// and spooled: the run holds no capture at the end, so the page carries no outputs
/// (`analyze` of the bundle shows them).
fn spooled_page(diagnosis: &diagnose::Diagnosis, meta: &BundleMeta) -> String {
    let sources = vec![(pvrdma_engine::capture::CaptureSource::VsphereApi, diagnosis.hosts.len())];
    page(diagnosis, sources, None, meta)
}

/// A VM-first run's scope as a manifest records it: the chosen VMs, and those on hosts
/// the run left out, each name through `hide` (redaction replaces them like every other).
fn scope_of(
    diagnosis: &diagnose::Diagnosis,
    hide: impl Fn(&str) -> String,
) -> (Option<Vec<String>>, Vec<pvrdma_engine::capture::VmLeftOut>) {
    let vm_scope = diagnosis
        .vm_scope
        .as_ref()
        .map(|s| s.vms.iter().map(|vm| hide(vm)).collect());
    let left_out = diagnosis
        .vm_scope
        .iter()
        .flat_map(|s| &s.on_hosts_left_out)
        .map(|v| pvrdma_engine::capture::VmLeftOut {
            vm: hide(&v.vm),
            host: hide(&v.host),
            reason: v.reason.clone(),
        })
        .collect();
    (vm_scope, left_out)
}

/// This run's command line as a manifest records it, password values masked.
fn command_line() -> Vec<String> {
    // args_os: a non-UTF-8 argument must not panic the run after collection.
    let argv: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    bundle::scrub_command_line(&argv)
}

/// Finishes the bundle whose hosts were spooled as they were read (a `--no-ssh` run
/// without `--redact`): the reports of `diagnosis`, the manifest's hosts in the order of
/// `order`. Returns where the bundle went.
pub(super) fn finish_spooled(
    args: &BundleArgs,
    spool: bundle::Spool,
    diagnosis: &diagnose::Diagnosis,
    started: SystemTime,
    finished: SystemTime,
    order: &[String],
) -> anyhow::Result<Option<std::path::PathBuf>> {
    let Some(path) = &args.bundle else {
        return Ok(None);
    };
    let (vm_scope, vm_scope_left_out) = scope_of(diagnosis, str::to_string);
    let meta = BundleMeta {
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: command_line(),
        started,
        finished,
        interrupted: false,
        redacted: false,
        vm_scope,
        vm_scope_left_out,
    };
    spool.finish(
        &meta,
        |out| report::json::write(diagnosis, out),
        |out| out.write_all(report::render(diagnosis, report::Format::Human, false).as_bytes()),
        |out| out.write_all(spooled_page(diagnosis, &meta).as_bytes()),
        Some(order),
    )?;
    Ok(Some(path.clone()))
}

/// Finishes a `--redact` bundle of hosts read as vCenter's pages came: `redactor` has
/// learnt from every host of the run, and each host, read back from `held` one at a time,
/// is now redacted, judged again and spooled, so the bundle holds no original value and
/// the run never holds every capture at once. The mapping goes next to the bundle.
pub(super) fn finish_redacted(
    args: &BundleArgs,
    redactor: &crate::redact::Redactor,
    held: impl Iterator<Item = anyhow::Result<HostCapture>>,
    diagnosis: &diagnose::Diagnosis,
    (started, finished): (SystemTime, SystemTime),
    order: &[String],
) -> anyhow::Result<Option<std::path::PathBuf>> {
    let Some(path) = &args.bundle else {
        return Ok(None);
    };
    let (vm_scope, vm_scope_left_out) = scope_of(diagnosis, |name| redactor.redact_text(name));
    let chosen = vm_scope.clone().map(|vms| pvrdma_engine::capture::VmChoice {
        vms,
        left_out: vm_scope_left_out.clone(),
    });
    let mut judged = diagnose::HostByHost::new(diagnose::Selection::of_vms(chosen.as_ref()));
    let mut spool = bundle::Spool::new(path, args.force)?;
    for capture in held {
        let capture = redactor.apply_capture(&capture?);
        judged.add(&capture);
        spool.add(&capture, SystemTime::now())?;
    }
    let order: Vec<String> = order.iter().map(|host| redactor.redact_text(host)).collect();
    judged.order_by(&order);
    let rediagnosed = judged.finish();
    let meta = BundleMeta {
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: crate::redact::redact_command_line(&command_line()),
        started,
        finished,
        interrupted: false,
        redacted: true,
        vm_scope,
        vm_scope_left_out,
    };
    spool.finish(
        &meta,
        |out| report::json::write(&rediagnosed, out),
        |out| out.write_all(report::render(&rediagnosed, report::Format::Human, false).as_bytes()),
        |out| out.write_all(spooled_page(&rediagnosed, &meta).as_bytes()),
        Some(&order),
    )?;
    redactor.write_map(path, args.force)?;
    Ok(Some(path.clone()))
}
