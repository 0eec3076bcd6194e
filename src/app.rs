//! Runs one invocation: picks the source (live hosts, demo, offline capture), drives the
//! pipeline collect → facts → diagnose → render, writes the report, returns the exit code.
use crate::bundle::{self, BundleMeta};
use crate::catalogue::CATALOGUE;
use crate::cli::{BundleArgs, Cli, ColorChoice, Command, OutputArgs};
use crate::collect::HostCapture;
use crate::diagnose::{self, CHECKS};
use crate::report;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::SystemTime;

pub fn run(cli: Cli) -> anyhow::Result<u8> {
    if cli.list_checks {
        write_stdout(&list_checks())?;
        return Ok(diagnose::exit::HEALTHY);
    }
    match cli.command {
        Some(Command::Analyze { path, output }) => {
            let captures = load_offline(&path)?;
            finish(&captures, &output).map(|d| d.exit_code())
        }
        Some(Command::Demo {
            scenario,
            latency,
            bundle,
            output,
        }) => {
            prepare_bundle(&bundle)?;
            let demo = crate::demo::DemoOptions {
                scenario,
                hosts: None,
                latency,
            };
            let live = live_options(&cli.live, Vec::new(), &output, None)?;
            let run = crate::demo::run_demo(&demo, live)?;
            finish_live(&run, &output, &bundle)
        }
        None => {
            anyhow::ensure!(
                !cli.hosts.is_empty() || cli.live.hosts_file.is_some(),
                "no hosts given. Try `pvrdma-doctor esx01 esx02`, `pvrdma-doctor analyze DIR`, or `pvrdma-doctor demo`"
            );
            if cli.live.insecure_skip_host_key_check {
                eprintln!(
                    "pvrdma-doctor: WARNING: --insecure-skip-host-key-check: host keys are NOT verified; anyone on the network path can impersonate these hosts and receive your credentials"
                );
            }
            prepare_bundle(&cli.bundle)?;
            let password = crate::live::read_password(cli.live.ask_password)?;
            let live = live_options(&cli.live, cli.hosts.clone(), &cli.output, password)?;
            let run = crate::live::collect_live(&live)?;
            finish_live(&run, &cli.output, &cli.bundle)
        }
    }
}

/// Reports a live run, then writes the support bundle if asked; after Ctrl-C both cover
/// what was collected.
fn finish_live(run: &crate::live::LiveRun, output: &OutputArgs, bundle_args: &BundleArgs) -> anyhow::Result<u8> {
    if run.interrupted {
        eprintln!("pvrdma-doctor: interrupted; reporting what was collected");
    }
    let diagnosis = finish(&run.captures, output)?;
    let code = diagnosis.exit_code();
    if let Some(path) = write_support_bundle(
        bundle_args,
        &run.captures,
        &diagnosis,
        run.started,
        run.finished,
        run.interrupted,
    )? {
        eprintln!("pvrdma-doctor: support bundle written to {}", path.display());
    }
    Ok(code)
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
        hosts_file: args.hosts_file.clone(),
        ssh_config: args.ssh_config.clone(),
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
    })
}

/// Reads captured outputs from disk: a capture folder, a pvrdma-doctor bundle (`.tar.gz`
/// or unpacked) or an ESXi vm-support bundle (folder or `.tgz`).
pub fn load_offline(path: &Path) -> anyhow::Result<Vec<HostCapture>> {
    bundle::load_captures(path)
}

/// Refuses an existing bundle (or redaction map) before collecting, so a long live run
/// does not end in a refusal. Call it before connecting to any host.
pub fn prepare_bundle(args: &BundleArgs) -> anyhow::Result<()> {
    if let Some(path) = &args.bundle {
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
    let Some(path) = &args.bundle else {
        return Ok(None);
    };
    // args_os: a non-UTF-8 argument must not panic the run after collection.
    let argv: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut command_line = bundle::scrub_command_line(&argv);
    let mut redactor = crate::redact::Redactor::new();
    let redacted;
    let captures = if args.redact {
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

/// Diagnoses the captures and prints the report; the diagnosis goes on to the bundle.
fn finish(captures: &[HostCapture], output: &OutputArgs) -> anyhow::Result<diagnose::Diagnosis> {
    let diagnosis = diagnose::diagnose(captures);
    let text = report::render(&diagnosis, output.format, use_color(output.color));
    write_stdout(&text)?;
    Ok(diagnosis)
}

/// Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
pub fn use_color(choice: ColorChoice) -> bool {
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

/// The `--list-checks` text: every command the tool can send, then every check id.
pub fn list_checks() -> String {
    let mut out = String::from("Read-only commands sent to each host (id, command, why):\n\n");
    for spec in CATALOGUE {
        out.push_str(&format!("{}\n    {}\n    {}\n", spec.id, spec.command, spec.why));
    }
    out.push_str("\nChecks (stable ids):\n\n");
    let width = CHECKS.iter().map(|(id, _)| id.len()).max().unwrap_or(0);
    for (id, what) in CHECKS {
        out.push_str(&format!("  {id:<width$}  {what}\n"));
    }
    out
}
