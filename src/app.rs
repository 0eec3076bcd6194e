//! Runs one invocation: picks the source (live hosts, demo, offline capture), drives the
//! pipeline collect → facts → diagnose → render, writes the report, returns the exit code.
use crate::catalogue::CATALOGUE;
use crate::cli::{Cli, ColorChoice, Command, OutputArgs};
use crate::collect::{replay, CaptureSource, HostCapture};
use crate::diagnose::{self, CHECKS};
use crate::report;
use std::io::{IsTerminal, Write};
use std::path::Path;

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
        Some(Command::Demo { .. }) => {
            anyhow::bail!("the demo needs live SSH collection, which this build does not include yet")
        }
        None => {
            anyhow::ensure!(
                !cli.hosts.is_empty() || cli.live.hosts_file.is_some(),
                "no hosts given. Try `pvrdma-doctor esx01 esx02`, `pvrdma-doctor analyze DIR`, or `pvrdma-doctor demo`"
            );
            anyhow::bail!("live SSH collection is not built yet; use `pvrdma-doctor analyze DIR`")
        }
    }
}

/// Reads captured outputs from disk.
pub fn load_offline(path: &Path) -> anyhow::Result<Vec<HostCapture>> {
    replay::read_dir(path, CaptureSource::Directory)
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
