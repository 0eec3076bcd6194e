//! Runs one invocation: picks the source (live hosts, demo, offline capture), drives the
//! pipeline collect → facts → diagnose → render, writes the report, returns the exit code.
use crate::bundle::{self, BundleMeta};
use crate::catalogue::CATALOGUE;
use crate::cli::{BundleArgs, Cli, ColorChoice, Command, OutputArgs};
use crate::collect::HostCapture;
use crate::diagnose::{self, CHECKS};
use crate::report;
use std::io::{IsTerminal, Write};
use std::time::SystemTime;

/// How `main` prints an error that stops the run: prefixed, wrapped to the terminal
/// stderr is on (the tool's own text, never cut).
pub fn error_message(error: &anyhow::Error) -> String {
    report::stderr_message("pvrdma-doctor: error: ", &format!("{error:#}"))
}

pub fn run(cli: Cli) -> anyhow::Result<u8> {
    init_tracing(cli.verbose);
    if let Some(kind) = cli.generate {
        emit(&cli.output, &generate(kind)?)?;
        return Ok(crate::exit::HEALTHY);
    }
    if cli.list_checks {
        let text = match report::Format::from(cli.output.format) {
            report::Format::Json => list_checks_json(),
            _ => report::list_checks(report::terminal_width(), cli.verbose > 0, &crate::probe::listing()),
        };
        emit(&cli.output, &text)?;
        return Ok(crate::exit::HEALTHY);
    }
    anyhow::ensure!(
        cli.output.format() == report::Format::Nagios || !cli.output.plugin.any_given(),
        "-w/--warning, -c/--critical and --unreachable-state apply to --format nagios only"
    );
    match &cli.command {
        Some(Command::Watch(args)) => crate::watch::run(
            &cli,
            args,
            &|hosts, password| live_options(&cli.live, hosts, &cli.output, password),
            use_color(cli.output.color),
        ),
        Some(Command::Analyze { path }) => {
            anyhow::ensure!(
                cli.bundle.bundle.is_none(),
                "--bundle writes what a live run collected; `analyze` reads a capture that already exists (copy {} instead)",
                path.display()
            );
            anyhow::ensure!(
                cli.hosts.is_empty(),
                "`analyze` takes one PATH; {:?} would be read as hosts",
                cli.hosts
            );
            let started = std::time::Instant::now();
            let baseline = load_baseline(&cli.baseline)?;
            crate::plugin::stage("reading the capture");
            let captures = crate::offline::load_captures(path)?;
            let times = RunTimes::of_capture(path, started);
            finish(&captures, &cli.output, baseline.as_ref(), &times).map(|d| exit_code(&d, &cli.output))
        }
        Some(Command::Demo {
            scenario,
            latency,
            serve,
            listen,
            web_config,
        }) => {
            refuse_ssh_options_in_demo(&cli.live)?;
            let baseline = load_baseline(&cli.baseline)?;
            prepare_bundle(&cli.bundle)?;
            let demo = crate::demo::DemoOptions {
                scenario: scenario.clone(),
                hosts: None,
                latency: *latency,
            };
            let mut live = live_options(&cli.live, cli.hosts.clone(), &cli.output, None)?;
            live.probe = cli.probe.options();
            if *serve {
                live.progress = false;
                return crate::serve::run_demo(&demo, live, listen.clone(), web_config.as_deref());
            }
            crate::plugin::stage("collecting from the simulated hosts");
            let planted = crate::demo::planted(&demo, live.probe.is_some())?;
            eprint!("{}", planted.intro());
            let run = crate::demo::run_demo(&demo, live)?;
            let (code, diagnosis) = report_live(&run, &cli.output, &cli.bundle, baseline.as_ref())?;
            eprint!("{}", planted.outro(&diagnosis));
            // Ctrl-C keeps its code, and so does a monitoring plugin's; otherwise the demo
            // says whether it went as planted.
            Ok(if run.interrupted || cli.output.format() == report::Format::Nagios {
                code
            } else {
                planted.exit_code(&diagnosis)
            })
        }
        Some(Command::Serve {
            config,
            listen,
            web_config,
            check_config,
        }) => {
            anyhow::ensure!(
                cli.hosts.is_empty(),
                "`serve` takes its targets from --config; {:?} would be ignored",
                cli.hosts
            );
            crate::serve::run_serve(config, listen.clone(), web_config.as_deref(), *check_config)
        }
        Some(Command::Check { hosts }) => {
            let mut all = cli.hosts.clone();
            all.extend(hosts.iter().cloned());
            check_hosts(&cli, all)
        }
        None => check_hosts(&cli, cli.hosts.clone()),
    }
}

/// `pvrdma-doctor <subcommand> <rest>` when the first host word is one edit (a letter
/// added, dropped, changed, or two swapped) away from a subcommand's name.
fn meant_subcommand(hosts: &[String]) -> Option<String> {
    let (first, rest) = hosts.split_first()?;
    let name = ["analyze", "demo", "check"]
        .into_iter()
        .find(|name| *name != first && one_edit_apart(first, name))?;
    let mut line = format!("pvrdma-doctor {name}");
    for word in rest {
        line.push(' ');
        line.push_str(word);
    }
    Some(line)
}

/// Whether `a` becomes `b` by one insertion, deletion, substitution or transposition of
/// adjacent characters.
fn one_edit_apart(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (da, db) = (a.len() - prefix - suffix, b.len() - prefix - suffix);
    match (da, db) {
        (0, 1) | (1, 0) | (1, 1) => true,
        (2, 2) => a.get(prefix) == b.get(prefix + 1) && a.get(prefix + 1) == b.get(prefix),
        _ => false,
    }
}

/// The main job: diagnose `hosts` (and `--hosts-file`) over SSH.
fn check_hosts(cli: &Cli, hosts: Vec<String>) -> anyhow::Result<u8> {
    anyhow::ensure!(
        !hosts.is_empty() || cli.live.hosts_file.is_some(),
        "no hosts given. Try `pvrdma-doctor esx01 esx02`, `pvrdma-doctor analyze DIR`, or `pvrdma-doctor demo`"
    );
    if cli.live.insecure_skip_host_key_check {
        eprint!(
            "{}",
            report::stderr_message(
                "pvrdma-doctor: ",
                "WARNING: --insecure-skip-host-key-check: host keys are NOT verified; anyone on the network path can impersonate these hosts and receive your credentials"
            )
        );
    }
    let baseline = load_baseline(&cli.baseline)?;
    prepare_bundle(&cli.bundle)?;
    let password = crate::live::read_password(cli.live.ask_password)?;
    // A misspelt subcommand (`demoo`, `analyse DIR`) reads as a host name; it is pointed
    // out only when the line cannot be hosts or the name does not resolve, so a real host
    // called `demoo` still works.
    let meant = cli.command.is_none().then(|| meant_subcommand(&hosts)).flatten();
    let first = hosts.first().cloned().unwrap_or_default();
    let mut live = live_options(&cli.live, hosts, &cli.output, password)?;
    live.probe = cli.probe.options();
    crate::plugin::stage("collecting from the hosts over SSH");
    let run = crate::live::collect_live(&live).map_err(|e| match &meant {
        Some(m) => anyhow::anyhow!("{e:#}\ndid you mean `{m}`?"),
        None => e,
    })?;
    let (code, diagnosis) = report_live(&run, &cli.output, &cli.bundle, baseline.as_ref())?;
    let unresolved = diagnosis.hosts.iter().any(|h| {
        h.host == first
            && h.error
                .as_ref()
                .is_some_and(|e| e.kind == crate::collect::ErrorKind::Dns)
    });
    if let (Some(m), true) = (&meant, unresolved) {
        let hint = format!("`{first}` does not resolve as a host name; did you mean `{m}`?");
        eprint!("{}", report::stderr_message("pvrdma-doctor: ", &hint));
    }
    Ok(code)
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

/// Reports a live run, then writes the support bundle if asked; after Ctrl-C both cover
/// what was collected. Returns the exit code and the diagnosis.
fn report_live(
    run: &crate::live::LiveRun,
    output: &OutputArgs,
    bundle_args: &BundleArgs,
    baseline: Option<&crate::baseline::Baseline>,
) -> anyhow::Result<(u8, diagnose::Diagnosis)> {
    if run.interrupted {
        eprintln!("pvrdma-doctor: interrupted; reporting what was collected");
    }
    let diagnosis = finish(
        &run.captures,
        output,
        baseline,
        &RunTimes::of_run(run.started, run.finished),
    )?;
    // After Ctrl-C the shell convention (128 + SIGINT) wins: the report is partial (a
    // plugin only has UNKNOWN for it).
    let code = match (run.interrupted, output.format()) {
        (true, report::Format::Nagios) => report::nagios::State::Unknown.code(),
        (true, _) => crate::exit::INTERRUPTED,
        (false, _) => exit_code(&diagnosis, output),
    };
    if let Some(path) = write_support_bundle_hiding(
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

/// `demo` logs into its own simulated hosts with its own keys and ssh_config: an SSH
/// option given to it would be silently ignored, so it is refused, naming it.
fn refuse_ssh_options_in_demo(args: &crate::cli::LiveArgs) -> anyhow::Result<()> {
    let given: Vec<&str> = [
        (args.hosts_file.is_some(), "--hosts-file"),
        (args.ssh_config.is_some(), "-F/--ssh-config"),
        (args.user.is_some(), "-l/--user"),
        (!args.identity.is_empty(), "-i/--identity"),
        (args.port.is_some(), "-p/--port"),
        (args.jump.is_some(), "-J/--jump"),
        (!args.options.is_empty(), "-o/--ssh-option"),
        (args.accept_new, "--accept-new"),
        (args.insecure_skip_host_key_check, "--insecure-skip-host-key-check"),
        (args.ask_password, "--ask-password"),
    ]
    .iter()
    .filter(|(set, _)| *set)
    .map(|(_, name)| *name)
    .collect();
    anyhow::ensure!(
        given.is_empty(),
        "`demo` does not use {}: its hosts are simulated on 127.0.0.1 with their own keys, \
         ssh_config and known_hosts. Drop {} (timeouts, --parallel, --probe, --format and \
         --bundle do apply)",
        given.join(", "),
        if given.len() == 1 { "it" } else { "them" }
    );
    Ok(())
}

/// The live-collection settings from the command line.
fn live_options(
    args: &crate::cli::LiveArgs,
    targets: Vec<String>,
    output: &OutputArgs,
    password: Option<secrecy::SecretString>,
) -> anyhow::Result<crate::live::LiveOptions> {
    Ok(crate::live::LiveOptions {
        targets,
        target_positions: args.positions.hosts.clone(),
        hosts_file_position: args.positions.hosts_file.unwrap_or(usize::MAX),
        hosts_file: args.hosts_file.clone(),
        ssh_config: args.ssh_config.clone(),
        system_ssh_config: crate::live::system_ssh_config_path(),
        ssh_options: ssh_options(args)?,
        login_user: args.user.clone(),
        identity_files: args.identity.clone(),
        parallel: args.parallel,
        connect_timeout: args.connect_timeout,
        command_timeout: args.command_timeout,
        host_output_budget: args.host_output_budget,
        total_output_budget: args.total_output_budget,
        run_timeout: args.timeout,
        accept_new: args.accept_new,
        insecure_skip_host_key_check: args.insecure_skip_host_key_check,
        password,
        progress: !output.no_progress && std::io::stderr().is_terminal(),
        only_given_keys: false,
        probe: None,
        prepared: None,
        run_budget: None,
    })
}

/// `-l`, `-p`, `-J` and `-o` in the order given (ssh takes the first value given).
fn ssh_options(args: &crate::cli::LiveArgs) -> anyhow::Result<crate::ssh::config::CommandLineOptions> {
    use crate::ssh::config::CliOption;
    let pos = &args.positions;
    let at = |list: &[usize], i: usize| list.get(i).copied().unwrap_or(usize::MAX - 1);
    let mut items = Vec::new();
    if let Some(u) = &args.user {
        items.push((at(&pos.user, 0), CliOption::Login(u.clone())));
    }
    if let Some(p) = &args.port {
        items.push((at(&pos.port, 0), CliOption::Port(p.clone())));
    }
    if let Some(j) = &args.jump {
        items.push((at(&pos.jump, 0), CliOption::Jump(j.clone())));
    }
    for (i, o) in args.options.iter().enumerate() {
        items.push((at(&pos.options, i), CliOption::Option(o.clone())));
    }
    crate::ssh::config::CommandLineOptions::ordered(items).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Refuses an existing bundle (or redaction map) before collecting, so a long live run
/// does not end in a refusal. Call it before connecting to any host.
fn prepare_bundle(args: &BundleArgs) -> anyhow::Result<()> {
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
fn write_support_bundle_hiding(
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
    // args_os: a non-UTF-8 argument must not panic the run after collection.
    let argv: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut command_line = bundle::scrub_command_line(&argv);
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
    let rediagnosed;
    let diagnosis = if args.redact {
        rediagnosed = diagnose::diagnose(captures);
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
    };
    bundle::write_bundle(
        path,
        captures,
        &meta,
        &report::render(diagnosis, report::Format::Json, false),
        &report::render(diagnosis, report::Format::Human, false),
        args.force,
    )?;
    if args.redact {
        redactor.write_map(path, args.force)?;
    }
    Ok(Some(path.clone()))
}

/// Reads `--baseline` before any work, so a bad file fails fast and says why.
fn load_baseline(args: &crate::cli::BaselineArgs) -> anyhow::Result<Option<crate::baseline::Baseline>> {
    args.baseline.as_deref().map(crate::baseline::load).transpose()
}

/// When the diagnosed outputs were collected, for the formats that state it.
struct RunTimes {
    finished: SystemTime,
    duration: std::time::Duration,
    /// Where the times come from, when that is not a live run (a comment line).
    note: Option<String>,
}

impl RunTimes {
    fn of_run(started: SystemTime, finished: SystemTime) -> Self {
        RunTimes {
            finished,
            duration: finished.duration_since(started).unwrap_or_default(),
            note: None,
        }
    }

    /// `analyze`: the times a support bundle recorded; else (a capture folder, a
    /// vm-support bundle) now and how long reading took, and the note says which.
    fn of_capture(path: &std::path::Path, started: std::time::Instant) -> Self {
        match crate::offline::recorded_run_times(path) {
            Some((start, end)) => RunTimes {
                note: Some(format!(
                    "# pvrdma-doctor analyze: the run times are those the support bundle recorded (started {}, finished {}).",
                    humantime::format_rfc3339_millis(start),
                    humantime::format_rfc3339_millis(end)
                )),
                ..RunTimes::of_run(start, end)
            },
            None => RunTimes {
                finished: SystemTime::now(),
                duration: started.elapsed(),
                note: Some(
                    "# pvrdma-doctor analyze: the capture records no run time, so the run times are when analyze read it and how long that took."
                        .to_string(),
                ),
            },
        }
    }
}

/// The report in the chosen format; the Prometheus one states the run's times.
fn render_report(diagnosis: &diagnose::Diagnosis, output: &OutputArgs, times: &RunTimes) -> String {
    if report::Format::from(output.format) == report::Format::Prometheus {
        let options = report::prometheus::PrometheusOptions {
            scope: report::prometheus::Scope::Fleet,
            finished: times.finished,
            duration: times.duration,
        };
        let metrics = report::prometheus::render(diagnosis, &options);
        return match &times.note {
            Some(note) => format!("{note}\n{metrics}"),
            None => metrics,
        };
    }
    // `auto` looks at stdout, which a report written to --output does not go to.
    let to_file = output.output_file.is_some() && output.color == ColorChoice::Auto;
    let options = report::HumanOptions {
        color: !to_file && use_color(output.color),
        width: report::terminal_width(),
        only_problems: output.only_problems,
        fold: !output.no_fold,
    };
    report::render_with(diagnosis, output.format.into(), &options)
}

/// Writes the report to `--output` (atomically) or to stdout.
fn emit(output: &OutputArgs, text: &str) -> anyhow::Result<()> {
    match &output.output_file {
        Some(path) => crate::atomic_file::write_report(path, text),
        None => write_stdout(text),
    }
}

/// Diagnoses the captures and prints the report (with the changes since `baseline`); the
/// diagnosis goes on to the bundle.
fn finish(
    captures: &[HostCapture],
    output: &OutputArgs,
    baseline: Option<&crate::baseline::Baseline>,
    times: &RunTimes,
) -> anyhow::Result<diagnose::Diagnosis> {
    crate::plugin::stage("diagnosing");
    let mut diagnosis = diagnose::diagnose(captures);
    diagnosis.changes = baseline.map(|b| crate::baseline::compare(b, &diagnosis));
    if output.format() == report::Format::Nagios {
        let plugin = report::nagios::render(&diagnosis, &crate::plugin::options(&output.plugin));
        match &output.output_file {
            // The plugin's code stands whether its text went to stdout or to a file.
            Some(path) => crate::atomic_file::write_report(path, &plugin.text)?,
            None => {
                crate::plugin::write_report(&plugin);
            }
        }
        return Ok(diagnosis);
    }
    emit(output, &render_report(&diagnosis, output, times))?;
    Ok(diagnosis)
}

/// The exit code a report deserves: the documented codes ([`crate::exit`]), or the
/// plugin state of the report written with `--format nagios`.
fn exit_code(diagnosis: &diagnose::Diagnosis, output: &OutputArgs) -> u8 {
    match output.format() {
        report::Format::Nagios => crate::plugin::reported_code(),
        _ => diagnosis.exit_code(),
    }
}

/// Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
        }
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

/// `--list-checks --format json`: the same lists as one document for scripts.
fn list_checks_json() -> String {
    let commands: Vec<serde_json::Value> = CATALOGUE
        .iter()
        .map(|spec| serde_json::json!({"id": spec.id, "command": spec.command, "why": spec.why}))
        .collect();
    let checks: Vec<serde_json::Value> = CHECKS
        .iter()
        .map(|(id, what)| serde_json::json!({"id": id, "passes_when": what}))
        .collect();
    let doc = serde_json::json!({
        "schema": "pvrdma-doctor/checks/v1",
        "tool_version": env!("CARGO_PKG_VERSION"),
        "commands": commands,
        "checks": checks,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_one_edit_from_a_subcommand_is_pointed_out() {
        let hosts = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert_eq!(
            meant_subcommand(&hosts(&["demoo"])).as_deref(),
            Some("pvrdma-doctor demo")
        );
        assert_eq!(
            meant_subcommand(&hosts(&["analyse", "samples/x"])).as_deref(),
            Some("pvrdma-doctor analyze samples/x")
        );
        assert_eq!(
            meant_subcommand(&hosts(&["anaylze", "d"])).as_deref(),
            Some("pvrdma-doctor analyze d")
        );
        assert_eq!(
            meant_subcommand(&hosts(&["chek"])).as_deref(),
            Some("pvrdma-doctor check")
        );
        assert_eq!(
            meant_subcommand(&hosts(&["dem"])).as_deref(),
            Some("pvrdma-doctor demo")
        );
        // Two edits away, the subcommand itself, or an ordinary host name: nothing.
        for word in ["deemoo", "demo", "esx01", "memos", ""] {
            assert_eq!(meant_subcommand(&hosts(&[word])), None, "{word}");
        }
        assert_eq!(meant_subcommand(&[]), None);
    }
}
