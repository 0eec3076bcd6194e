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
            finish(&captures, &output)
        }
        Some(Command::Demo { bundle, .. }) => {
            prepare_bundle(&bundle)?;
            anyhow::bail!(
                "the demo needs live SSH collection, which this build does not include yet"
            )
        }
        None => {
            anyhow::ensure!(
                !cli.hosts.is_empty() || cli.live.hosts_file.is_some(),
                "no hosts given. Try `pvrdma-doctor esx01 esx02`, `pvrdma-doctor analyze DIR`, or `pvrdma-doctor demo`"
            );
            prepare_bundle(&cli.bundle)?;
            anyhow::bail!("live SSH collection is not built yet; use `pvrdma-doctor analyze DIR`")
        }
    }
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
    started: SystemTime,
    finished: SystemTime,
    interrupted: bool,
) -> anyhow::Result<Option<std::path::PathBuf>> {
    let Some(path) = &args.bundle else {
        return Ok(None);
    };
    let argv: Vec<String> = std::env::args().collect();
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
    let diagnosis = diagnose::diagnose(captures);
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
        &report::render(&diagnosis, report::Format::Json, false),
        &report::render(&diagnosis, report::Format::Human, false),
        args.force,
    )?;
    if args.redact {
        redactor.write_map(path, args.force)?;
    }
    Ok(Some(path.clone()))
}

/// Diagnoses the captures, prints the report, returns the exit code.
fn finish(captures: &[HostCapture], output: &OutputArgs) -> anyhow::Result<u8> {
    let diagnosis = diagnose::diagnose(captures);
    let text = report::render(&diagnosis, output.format, use_color(output.color));
    write_stdout(&text)?;
    Ok(diagnosis.exit_code())
}

/// Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
pub fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
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
        out.push_str(&format!(
            "{}\n    {}\n    {}\n",
            spec.id, spec.command, spec.why
        ));
    }
    out.push_str("\nChecks (stable ids):\n\n");
    let width = CHECKS.iter().map(|(id, _)| id.len()).max().unwrap_or(0);
    for (id, what) in CHECKS {
        out.push_str(&format!("  {id:<width$}  {what}\n"));
    }
    out
}
