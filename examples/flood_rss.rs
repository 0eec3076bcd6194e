//! Benchmark: peak client memory when every host floods every command.
//!
//! One real OpenSSH sshd on 127.0.0.1 (the test harness of `tests/support`, so this needs
//! what the sshd tests need: root, sshd, busybox, the PAM test user) whose fake esxcli and
//! vsish print FLOOD_MIB MiB (default 20) for every catalogue command; HOSTS ssh_config
//! aliases (default 64) all point at it, so the client runs HOSTS full collections at once
//! (`--parallel HOSTS`) with the default output budgets. Prints the client's peak RSS
//! (VmHWM) after collection, diagnosis and rendering the report.
//!
//! `cargo run --release --example flood_rss [-- HOSTS [FLOOD_MIB [HOST_BUDGET_MIB]]]`
#[path = "../tests/support/mod.rs"]
mod support;

use pvrdma_doctor::live::{collect_live, LiveOptions};
use std::time::{Duration, Instant};
use support::measure;
use support::*;

fn main() -> anyhow::Result<()> {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let hosts = args.first().copied().unwrap_or(64);
    let flood_mib = args.get(1).copied().unwrap_or(20);
    let dir = tempfile::tempdir()?;
    let (sshd, config_path, targets) = flooding_aliases(dir.path(), hosts, flood_mib);
    let mut opts = LiveOptions {
        targets,
        ssh_config: Some(config_path),
        parallel: hosts,
        connect_timeout: Some(Duration::from_secs(120)),
        command_timeout: Duration::from_secs(120),
        run_timeout: Some(Duration::from_secs(600)),
        only_given_keys: true,
        ..LiveOptions::default()
    };
    if let Some(mib) = args.get(2) {
        opts.host_output_budget = mib * 1024 * 1024;
    }
    let before = measure::status_kib(std::process::id(), "VmHWM:").unwrap_or(0);
    let t0 = Instant::now();
    let run = collect_live(&opts)?;
    let collected = t0.elapsed();
    let diagnosis = pvrdma_engine::diagnose::diagnose(&run.captures);
    let report = pvrdma_engine::report::render(&diagnosis, pvrdma_engine::report::Format::Json, false);
    let kept: usize = run
        .captures
        .iter()
        .flat_map(|c| c.outputs.values())
        .map(|o| o.stdout.len() + o.stderr.len())
        .sum();
    let cut = run
        .captures
        .iter()
        .flat_map(|c| c.outputs.values())
        .filter(|o| o.cut_short().is_some())
        .count();
    let logged_in = run.captures.iter().filter(|c| !c.outputs.is_empty()).count();
    println!(
        "{hosts} hosts x {} commands flooding {flood_mib} MiB each: {logged_in} hosts collected in {:.1} s, \
         {:.0} MiB of output kept, {cut} outputs cut, report {} KiB, exit code {}",
        pvrdma_engine::catalogue::CATALOGUE.len(),
        collected.as_secs_f64(),
        kept as f64 / 1048576.0,
        report.len() / 1024,
        diagnosis.exit_code()
    );
    println!(
        "peak client RSS (VmHWM): {:.0} MiB ({:.2} GB); before the run {:.0} MiB",
        measure::status_kib(std::process::id(), "VmHWM:").unwrap_or(0) as f64 / 1024.0,
        measure::status_kib(std::process::id(), "VmHWM:").unwrap_or(0) as f64 * 1024.0 / 1e9,
        before as f64 / 1024.0
    );
    drop(sshd);
    Ok(())
}
