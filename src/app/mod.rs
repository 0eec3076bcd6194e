//! Runs one invocation: resolves the command line ([`setup`]), picks the source (live
//! hosts, demo, offline capture), drives the pipeline collect → facts → diagnose → render,
//! writes the report ([`output`]) and the bundle ([`bundle`]), returns the exit code.
mod bundle;
#[cfg(test)]
mod option_effects;
mod output;
mod setup;
mod typo;
mod watch;

pub use bundle::write_support_bundle;
pub(crate) use output::generate;
use setup::ReportSetup;
pub(crate) use setup::{LiveSetup, WatchSetup};

use crate::live::LiveRun;
use crate::plugin::Session;
use crate::terminal::Terminal;
use output::RunTimes;
use pvrdma_engine::report::{self, Format};
use setup::{Job, Setup};
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
        Job::Check {
            live,
            report,
            bundle,
            baseline,
            may_be_typo,
        } => check_hosts(live, &report, &bundle, baseline.as_deref(), may_be_typo, plugin),
        Job::Analyze { path, report, baseline } => {
            let started = std::time::Instant::now();
            let baseline = load_baseline(baseline.as_deref())?;
            if let Some(p) = plugin {
                p.stage("reading the capture");
            }
            let captures = crate::offline::load_captures(&path)?;
            let times = RunTimes::of_capture(&path, started);
            let plan = analyzed_plan_source(&path);
            let report = ReportSetup {
                vms: crate::offline::recorded_vm_scope(&path),
                plan,
                ..report
            };
            output::finish(&captures, &report, baseline.as_ref(), &times, plugin, &[]).map(|(_, code)| code)
        }
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
        Job::Hosts { vcenter, json } => hosts(&vcenter, json),
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
fn hosts(vcenter: &crate::vcenter::VcenterSetup, json: bool) -> anyhow::Result<u8> {
    let found = match discover(vcenter, None)? {
        Ok(found) => found,
        Err(code) => return Ok(code),
    };
    let names: Vec<&str> = found.selected.hosts.iter().map(|h| h.name.as_str()).collect();
    let text = if json {
        let doc = crate::vcenter::hosts_json(&vcenter.endpoint, &found);
        format!("{}\n", serde_json::to_string_pretty(&doc)?)
    } else {
        format!("{}\n", pvrdma_nodeset::fold(&names))
    };
    let code = nothing_selected(vcenter, &found, None).unwrap_or(pvrdma_engine::exit::HEALTHY);
    output::emit(None, &text, code, None)
}

/// Reads vCenter's inventory and says on stderr what the selection skipped. `Ok(Err(code))`
/// when the run ends here: Ctrl-C (130), or vCenter unreachable (3: nothing is known;
/// a wrong password or an untrusted certificate stays an error, 2, for the admin to fix).
fn discover(
    vcenter: &crate::vcenter::VcenterSetup,
    plugin: Option<&Session>,
) -> anyhow::Result<Result<crate::vcenter::Discovery, u8>> {
    let read = vcenter.config().and_then(|c| crate::vcenter::discover(vcenter, c));
    let found = match vcenter_read(read, plugin)? {
        Ok(found) => found,
        Err(code) => return Ok(Err(code)),
    };
    say_skipped(&found);
    Ok(Ok(found))
}

/// A vCenter read's outcome for the run: `Ok(Err(code))` when the run ends here, Ctrl-C
/// (130) or vCenter unreachable (3, said on stderr).
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

/// Names on stderr each host the selection skipped, with why; says when none is left
/// to diagnose and returns the exit code for it (3).
fn say_skipped(found: &crate::vcenter::Discovery) {
    for line in found.lines() {
        eprint!("{}", crate::terminal::stderr_message("pvrdma-doctor: ", &line));
    }
}

/// Exit code 3 and a line saying so when the selection left no host to diagnose.
fn nothing_selected(
    vcenter: &crate::vcenter::VcenterSetup,
    found: &crate::vcenter::Discovery,
    plugin: Option<&Session>,
) -> Option<u8> {
    found
        .selected
        .hosts
        .is_empty()
        .then(|| no_host_to_diagnose(vcenter, &found.lines(), plugin))
}

/// Says that vCenter has no host to diagnose for the selection (after `left_out`, the
/// lines already said of what it left out); the exit code for it, 3. A monitoring plugin
/// gets it as its UNKNOWN status line, what was left out as its long output.
pub(super) fn no_host_to_diagnose(
    vcenter: &crate::vcenter::VcenterSetup,
    left_out: &[String],
    plugin: Option<&Session>,
) -> u8 {
    let said = format!(
        "vCenter {} has no host to diagnose for this selection",
        vcenter.endpoint.label()
    );
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

/// `--vcenter`: reads the inventory, says what it skipped, and points the run at the
/// selected hosts (and, VM-first, the report at the chosen VMs). `Ok(Some(code))` when
/// there is nothing to collect: Ctrl-C, or no host selected.
fn hosts_from_vcenter(
    live: &mut LiveSetup,
    report: &mut ReportSetup,
    plugin: Option<&Session>,
) -> anyhow::Result<Option<u8>> {
    let Some(vcenter) = live.vcenter.take() else {
        return Ok(None);
    };
    let found = match discover(&vcenter, plugin)? {
        Ok(found) => found,
        Err(code) => return Ok(Some(code)),
    };
    if let Some(code) = nothing_selected(&vcenter, &found, plugin) {
        return Ok(Some(code));
    }
    live.options.targets = found.host_names();
    live.options.target_positions.clear();
    if vcenter.vm_first() {
        report.vms = Some(crate::vcenter::scope_vms(&found.selected));
    }
    Ok(None)
}

/// `--no-ssh`: the selected hosts judged from their configuration as vCenter's vSphere
/// API gives it, read in the session that read the inventory. No SSH connection is made.
fn check_from_api(
    vcenter: &crate::vcenter::VcenterSetup,
    report: &ReportSetup,
    bundle_args: &crate::cli::BundleArgs,
    baseline: Option<&pvrdma_engine::baseline::Baseline>,
    plugin: Option<&Session>,
) -> anyhow::Result<u8> {
    if let Some(p) = plugin {
        p.stage("reading the hosts' configuration from vCenter");
    }
    let read = match vcenter_read(
        vcenter
            .config()
            .and_then(|c| crate::vcenter::read_configuration(vcenter, c)),
        plugin,
    )? {
        Ok(read) => read,
        Err(code) => return Ok(code),
    };
    say_skipped(&read.discovery);
    if let Some(code) = nothing_selected(vcenter, &read.discovery, plugin) {
        return Ok(code);
    }
    let mut report = report.clone();
    if vcenter.vm_first() {
        report.vms = Some(crate::vcenter::scope_vms(&read.discovery.selected));
    }
    report.plan = setup::PlanSource {
        vcenter: Some(vcenter.endpoint.label()),
        source: format!("vCenter {}, read without SSH (--no-ssh)", vcenter.endpoint.label()),
    };
    let run = LiveRun::from_api(read.captures, read.started, read.finished);
    report_live(&run, &report, bundle_args, baseline, plugin).map(|(code, _)| code)
}

/// The main job: diagnose the hosts over SSH.
fn check_hosts(
    mut live: LiveSetup,
    report: &ReportSetup,
    bundle_args: &crate::cli::BundleArgs,
    baseline: Option<&Path>,
    may_be_typo: bool,
    plugin: Option<&Session>,
) -> anyhow::Result<u8> {
    let baseline = load_baseline(baseline)?;
    bundle::prepare_bundle(bundle_args)?;
    if let Some(vcenter) = live.vcenter.take_if(|v| v.no_ssh) {
        return check_from_api(&vcenter, report, bundle_args, baseline.as_ref(), plugin);
    }
    let mut report = report.clone();
    if let Some(p) = plugin {
        p.stage("reading the hosts from vCenter");
    }
    let vcenter = live.vcenter.clone();
    if let Some(code) = hosts_from_vcenter(&mut live, &mut report, plugin)? {
        return Ok(code);
    }
    if let Some(v) = &vcenter {
        report.plan = setup::PlanSource {
            vcenter: Some(v.endpoint.label()),
            source: format!("the hosts vCenter {} selected, read over SSH", v.endpoint.label()),
        };
    }
    let report = &report;
    let options = start_live(live)?;
    let meant = may_be_typo.then(|| typo::meant_subcommand(&options.targets)).flatten();
    let first = options.targets.first().cloned().unwrap_or_default();
    if let Some(p) = plugin {
        p.stage("collecting from the hosts over SSH");
    }
    let mut run = crate::live::collect_live(&options).map_err(|e| match &meant {
        Some(m) => anyhow::anyhow!("{e:#}\ndid you mean `{m}`?"),
        None => e,
    })?;
    if let (Some(vcenter), false) = (&vcenter, run.interrupted) {
        crate::vcenter::complete_refused(vcenter, &mut run.captures);
    }
    let (code, diagnosis) = report_live(&run, report, bundle_args, baseline.as_ref(), plugin)?;
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

/// What every front end that logs in to real hosts does first: warns when host keys are
/// not verified, reads the password (the environment, or a prompt with
/// `--ask-password`). Returns the collection settings with the password in.
pub(crate) fn start_live(live: LiveSetup) -> anyhow::Result<crate::live::LiveOptions> {
    if live.options.insecure_skip_host_key_check {
        eprint!(
            "{}",
            crate::terminal::stderr_message(
                "pvrdma-doctor: ",
                "WARNING: --insecure-skip-host-key-check: host keys are NOT verified; anyone on the network path can impersonate these hosts and receive your credentials"
            )
        );
    }
    let mut options = live.options;
    options.password = crate::live::read_password(live.ask_password)?;
    Ok(options)
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
