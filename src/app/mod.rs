//! Runs one invocation: resolves the command line ([`setup`]), picks the source (live
//! hosts, demo, offline capture), drives the pipeline collect → facts → diagnose → render,
//! writes the report ([`output`]) and the bundle ([`bundle`]), returns the exit code.
mod bundle;
#[cfg(test)]
mod option_effects;
mod output;
mod setup;
mod streamed;
mod typo;
mod watch;

pub use bundle::write_support_bundle;
pub(crate) use output::generate;
use setup::ReportSetup;
pub(crate) use setup::WatchSetup;

use crate::live::LiveRun;
use crate::plugin::Session;
use crate::source::once::{Collect, Once, OnceHosts};
use crate::source::{LiveSetup, Reading, VcenterSource};
use crate::terminal::Terminal;
use output::RunTimes;
use pvrdma_engine::report::{self, Format};
use setup::{Job, OneShot, Setup};
use std::io::IsTerminal;
use std::path::Path;

/// How `main` prints an error that stops the run: prefixed, wrapped to the terminal
/// stderr is on (the tool's own text, never cut).
pub fn error_message(error: &anyhow::Error) -> String {
    crate::vcenter::certificate_refusal(error, crate::terminal::stderr_width())
        .unwrap_or_else(|| crate::terminal::stderr_message("pvrdma-doctor: error: ", &format!("{error:#}")))
}

/// Runs the command line; `plugin` is the monitoring-plugin session when `--format
/// nagios` was asked for (its clock, stage and the one output it writes).
pub fn run(cli: crate::cli::Cli, plugin: Option<&Session>) -> anyhow::Result<u8> {
    let setup = Setup::new(cli, &Terminal::detect())?;
    init_tracing(setup.verbose);
    match setup.job {
        Job::Generate { kind, output } => output::emit(
            output.as_deref(),
            &generate(kind)?,
            pvrdma_engine::exit::HEALTHY,
            plugin,
        ),
        Job::ListChecks { json, width, output } => {
            let text = output::list_checks(json, width, setup.verbose > 0);
            output::emit(output.as_deref(), &text, pvrdma_engine::exit::HEALTHY, plugin)
        }
        Job::OneShot(job) => one_shot(job, plugin),
        Job::Watch(watch) => watch::run(watch),
        Job::Demo {
            demo,
            live,
            serve,
            report,
            bundle,
            baseline,
        } => {
            if let Some((listen, web_config, ssh_dir)) = serve {
                if let Some(dir) = ssh_dir {
                    crate::demo::serve_hosts(&demo, live.probe.is_some(), &dir)?;
                    return Ok(pvrdma_engine::exit::HEALTHY);
                }
                return crate::serve::run_demo(&demo, live, listen, web_config.as_deref());
            }
            let baseline = load_baseline(baseline.as_deref())?;
            bundle::prepare_bundle(&bundle)?;
            if let Some(p) = plugin {
                p.stage("collecting from the simulated hosts");
            }
            let planted = crate::demo::planted(&demo, live.probe.is_some())?;
            eprint!("{}", planted.intro());
            let run = crate::demo::run_demo(&demo, live)?;
            let (code, diagnosis) = report_live(&run, &report, &bundle, baseline.as_ref(), plugin)?;
            eprint!("{}", planted.outro(&diagnosis));
            // Ctrl-C keeps its code, and so does a monitoring plugin's; otherwise the demo
            // says whether it went as planted.
            Ok(if run.interrupted || report.format == Format::Nagios {
                code
            } else {
                planted.exit_code(&diagnosis)
            })
        }
        Job::Serve {
            config,
            listen,
            web_config,
            check_only,
        } => crate::serve::run_serve(&config, listen, web_config.as_deref(), check_only),
        Job::Hosts { vcenter, json } => hosts(vcenter, json),
    }
}

/// What a plan (`--format ansible`, `powercli`) says it came from, and the vCenter it
/// addresses: the one the run read, else each host's own API.
fn plan_source(once: &Once) -> setup::PlanSource {
    match (&once.hosts, &once.reading) {
        (OnceHosts::Capture(capture), _) => analyzed_plan_source(&capture.path),
        (OnceHosts::Api { .. }, Some(r)) => setup::PlanSource {
            vcenter: Some(r.vcenter.clone()),
            source: format!("vCenter {}, read without SSH (--no-ssh)", r.vcenter),
        },
        (_, Some(r)) => setup::PlanSource {
            vcenter: Some(r.vcenter.clone()),
            source: format!("the hosts vCenter {} selected, read over SSH", r.vcenter),
        },
        (_, None) => setup::PlanSource::default(),
    }
}

/// What a plan made by `analyze` says it came from, and the vCenter it addresses: the one
/// the bundle's run read (its manifest's command line), else each host's own API.
fn analyzed_plan_source(path: &std::path::Path) -> setup::PlanSource {
    match crate::offline::recorded_vcenter(path) {
        Some((vcenter, no_ssh)) => setup::PlanSource {
            source: format!(
                "pvrdma-doctor analyze {}, a run that read vCenter {vcenter}{}",
                path.display(),
                if no_ssh {
                    " without SSH"
                } else {
                    " and the hosts over SSH"
                }
            ),
            vcenter: Some(vcenter),
        },
        None => setup::PlanSource {
            vcenter: None,
            source: format!("pvrdma-doctor analyze {}", path.display()),
        },
    }
}

/// `hosts`: the selected hosts as one folded node set on stdout's first line (or the JSON
/// document), the skipped ones on stderr. Exits 0 when a host was selected, 3 when none
/// was (all skipped), 130 on Ctrl-C.
fn hosts(vcenter: VcenterSource, json: bool) -> anyhow::Result<u8> {
    let reading = match vcenter_read(crate::source::once::discover(&vcenter), None)? {
        Ok(reading) => reading,
        Err(code) => return Ok(code),
    };
    say_skipped(&reading);
    let found = &reading.found;
    let names: Vec<&str> = found.selected.hosts.iter().map(|h| h.name.as_str()).collect();
    let text = if json {
        let doc = crate::vcenter::hosts_json(&vcenter.setup.endpoint, found);
        format!("{}\n", serde_json::to_string_pretty(&doc)?)
    } else {
        format!("{}\n", pvrdma_nodeset::fold(&names))
    };
    let code = nothing_selected(&reading, None).unwrap_or(pvrdma_engine::exit::HEALTHY);
    output::emit(None, &text, code, None)
}

/// A source's read for the run: `Ok(Err(code))` when the run ends here, Ctrl-C during a
/// vCenter read (130) or vCenter unreachable (3, said on stderr; a wrong password or an
/// untrusted certificate stays an error, 2, for the admin to fix).
fn vcenter_read<T>(read: anyhow::Result<Option<T>>, plugin: Option<&Session>) -> anyhow::Result<Result<T, u8>> {
    match read {
        Ok(Some(found)) => Ok(Ok(found)),
        Ok(None) => {
            let said = "interrupted while reading from vCenter (its session was logged out)";
            eprint!("{}", crate::terminal::stderr_message("pvrdma-doctor: ", said));
            plugin.map(|p| p.finish_unknown(said));
            Ok(Err(pvrdma_engine::exit::INTERRUPTED))
        }
        Err(e) => vcenter_failure(e, plugin).map(Err),
    }
}

/// A failed vCenter read as the run's outcome: vCenter unreadable is said (on stderr, and
/// as a monitoring plugin's UNKNOWN status line, since a plugin's stderr is silenced) and
/// exits 3 (nothing is known); anything else (login, certificate, selection) is the
/// error, 2.
pub(super) fn vcenter_failure(e: anyhow::Error, plugin: Option<&Session>) -> anyhow::Result<u8> {
    if crate::vcenter::is_unreachable(&e) {
        eprint!("{}", error_message(&e));
        Ok(plugin.map_or(pvrdma_engine::exit::INCOMPLETE, |p| p.finish_unknown(&format!("{e:#}"))))
    } else {
        Err(e)
    }
}

/// Names on stderr each host the selection skipped, with why.
fn say_skipped(reading: &Reading) {
    for line in reading.lines() {
        eprint!("{}", crate::terminal::stderr_message("pvrdma-doctor: ", &line));
    }
}

/// Exit code 3 and a line saying so when the selection left no host to diagnose.
fn nothing_selected(reading: &Reading, plugin: Option<&Session>) -> Option<u8> {
    reading
        .found
        .selected
        .hosts
        .is_empty()
        .then(|| no_host_to_diagnose(&reading.vcenter, &reading.lines(), plugin))
}

/// Says that vCenter `vcenter` has no host to diagnose for the selection (after
/// `left_out`, the lines already said of what it left out); the exit code for it, 3. A
/// monitoring plugin gets it as its UNKNOWN status line, what was left out as its long
/// output.
pub(super) fn no_host_to_diagnose(vcenter: &str, left_out: &[String], plugin: Option<&Session>) -> u8 {
    let said = format!("vCenter {vcenter} has no host to diagnose for this selection");
    let above = if left_out.is_empty() {
        ""
    } else {
        " (what it left out is said above)"
    };
    eprint!(
        "{}",
        crate::terminal::stderr_message("pvrdma-doctor: ", &format!("{said}{above}"))
    );
    let mut reason = said;
    for line in left_out {
        reason.push_str("; ");
        reason.push_str(line);
    }
    plugin.map_or(pvrdma_engine::exit::INCOMPLETE, |p| p.finish_unknown(&reason))
}

/// The one-shot run (`check`, the default job, and `analyze`): the source's one round,
/// its hosts collected when they are not read already, reported.
fn one_shot(job: OneShot, plugin: Option<&Session>) -> anyhow::Result<u8> {
    let baseline = load_baseline(job.baseline.as_deref())?;
    bundle::prepare_bundle(&job.bundle)?;
    if let (Some(p), Some(stage)) = (plugin, job.source.stage()) {
        p.stage(stage);
    }
    let mut streamed = streamed::Streamed::new(&job.bundle);
    let once = match vcenter_read(job.source.read_once(&mut streamed), plugin)? {
        Ok(once) => once,
        Err(code) => return Ok(code),
    };
    if let Some(reading) = &once.reading {
        say_skipped(reading);
        if let Some(code) = nothing_selected(reading, plugin) {
            return Ok(code);
        }
    }
    let report = ReportSetup {
        vms: once.vms(),
        plan: plan_source(&once),
        ..job.report
    };
    let bundle = &job.bundle;
    match once.hosts {
        OnceHosts::Capture(capture) => {
            let times = RunTimes::of_capture(&capture.path, capture.started);
            output::finish(&capture.captures, &report, baseline.as_ref(), &times, plugin, &[]).map(|(_, code)| code)
        }
        OnceHosts::Api { started, finished } => {
            streamed.report((started, finished), &report, baseline.as_ref(), plugin)
        }
        OnceHosts::Ssh(hosts) => {
            let baseline = baseline.as_ref();
            collect_and_report(*hosts, job.live, &report, bundle, baseline, job.may_be_typo, plugin)
        }
    }
}

/// The main job: diagnose the hosts over SSH. `may_be_typo`: the hosts came without
/// `check`, so a misspelt subcommand may be among them.
fn collect_and_report(
    hosts: Collect,
    live: LiveSetup,
    report: &ReportSetup,
    bundle_args: &crate::cli::BundleArgs,
    baseline: Option<&pvrdma_engine::baseline::Baseline>,
    may_be_typo: bool,
    plugin: Option<&Session>,
) -> anyhow::Result<u8> {
    if let (Some(p), true) = (plugin, live.ask_password) {
        p.stage("waiting at the --ask-password prompt");
    }
    let options = hosts.start(live)?;
    let meant = may_be_typo.then(|| typo::meant_subcommand(&options.targets)).flatten();
    let first = options.targets.first().cloned().unwrap_or_default();
    if let Some(p) = plugin {
        p.stage("collecting from the hosts over SSH");
    }
    let run = hosts.collect(&options).map_err(|e| match &meant {
        Some(m) => anyhow::anyhow!("{e:#}\ndid you mean `{m}`?"),
        None => e,
    })?;
    let (code, diagnosis) = report_live(&run, report, bundle_args, baseline, plugin)?;
    let unresolved = diagnosis.hosts.iter().any(|h| {
        h.host == first
            && h.error
                .as_ref()
                .is_some_and(|e| e.kind == pvrdma_engine::capture::ErrorKind::Dns)
    });
    if let (Some(m), true) = (&meant, unresolved) {
        let hint = format!("`{first}` does not resolve as a host name; did you mean `{m}`?");
        eprint!("{}", crate::terminal::stderr_message("pvrdma-doctor: ", &hint));
    }
    Ok(code)
}

/// Reports a live run, then writes the support bundle if asked; after Ctrl-C both cover
/// what was collected. Returns the exit code and the diagnosis.
fn report_live(
    run: &LiveRun,
    report: &ReportSetup,
    bundle_args: &crate::cli::BundleArgs,
    baseline: Option<&pvrdma_engine::baseline::Baseline>,
    plugin: Option<&Session>,
) -> anyhow::Result<(u8, pvrdma_engine::diagnose::Diagnosis)> {
    if run.interrupted {
        eprintln!("pvrdma-doctor: interrupted; reporting what was collected");
    }
    let times = RunTimes::of_run(run.started, run.finished);
    let (diagnosis, code) = output::finish(&run.captures, report, baseline, &times, plugin, &run.targets)?;
    // After Ctrl-C the shell convention (128 + SIGINT) wins: the report is partial (a
    // plugin only has UNKNOWN for it).
    let code = match (run.interrupted, report.format) {
        (true, Format::Nagios) => report::nagios::State::Unknown.code(),
        (true, _) => pvrdma_engine::exit::INTERRUPTED,
        (false, _) => code,
    };
    if let Some(path) = bundle::write_support_bundle_hiding(
        bundle_args,
        &run.captures,
        &diagnosis,
        run.started,
        run.finished,
        run.interrupted,
        &run.local_values,
    )? {
        eprintln!("pvrdma-doctor: support bundle written to {}", path.display());
    }
    Ok((code, diagnosis))
}

/// Reads `--baseline` before any work, so a bad file fails fast and says why.
pub(crate) fn load_baseline(path: Option<&Path>) -> anyhow::Result<Option<pvrdma_engine::baseline::Baseline>> {
    path.map(pvrdma_engine::baseline::load).transpose()
}

/// `-v` shows each command (host, duration, exit), `-vv` the SSH negotiation too; a
/// `RUST_LOG` filter replaces both. Everything goes to stderr: stdout is the report.
fn init_tracing(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let from_env = std::env::var("RUST_LOG").ok().filter(|v| !v.trim().is_empty());
    let directives = match (from_env, verbose) {
        (Some(env), _) => env,
        (None, 0) => return,
        (None, 1) => "pvrdma_doctor=info".to_string(),
        (None, _) => "pvrdma_doctor=debug,russh=debug".to_string(),
    };
    let filter = EnvFilter::try_new(&directives).unwrap_or_else(|_| EnvFilter::new("pvrdma_doctor=info"));
    // `try_init` also routes russh's `log` records into tracing; a second init (tests
    // calling `run` twice) is not an error worth reporting.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
