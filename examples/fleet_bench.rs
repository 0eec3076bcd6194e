//! Benchmark: wall time to diagnose 1 and N simulated ESXi hosts (start the simulated
//! hosts, `collect_live` over SSH, diagnose, render the report), each command answering
//! after a simulated latency, measured side by side in one run.
//!
//! The simulated hosts are the demo's in-process russh servers: a command costs them a
//! timer, not a process, so unlike `host_bench` (real sshd, shells and fake commands on
//! the same cores as the client) the ratio measures the client's fan-out and scheduling.
//!
//! `cargo run --release --example fleet_bench [-- RUNS [LATENCY_MS [N...]]]` prints the
//! median of RUNS runs (default 5) of 1 host and of each N hosts (default 50), with
//! `--parallel 16` and with the default `--parallel`; latency defaults to 200 ms.
use pvrdma_doctor::demo::{run_demo, DemoOptions};
use pvrdma_doctor::live::{LiveOptions, DEFAULT_PARALLEL};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn once(hosts: usize, parallel: usize, latency: Duration) -> anyhow::Result<Duration> {
    let demo = DemoOptions {
        scenario: None,
        hosts: Some(hosts),
        latency,
    };
    let live = LiveOptions {
        parallel,
        connect_timeout: Some(Duration::from_secs(30)),
        command_timeout: Duration::from_secs(30),
        run_timeout: Some(Duration::from_secs(300)),
        ..LiveOptions::default()
    };
    let t0 = Instant::now();
    let run = run_demo(&demo, live)?;
    let diagnosis = pvrdma_engine::diagnose::diagnose(&run.captures);
    let report = pvrdma_engine::report::render(&diagnosis, pvrdma_engine::report::Format::Human, false);
    let took = t0.elapsed();
    anyhow::ensure!(report.contains("sim01"), "report lacks the hosts");
    anyhow::ensure!(run.captures.len() == hosts, "lost hosts");
    let failed: Vec<_> = run
        .captures
        .iter()
        .filter_map(|c| c.error.as_ref().map(|e| format!("{}: {}", c.host, e.message)))
        .filter(|m| !m.contains("powered off") && !m.contains("cannot connect"))
        .collect();
    anyhow::ensure!(failed.is_empty(), "hosts failed: {failed:?}");
    Ok(took)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let runs = args.first().copied().unwrap_or(5);
    let latency = Duration::from_millis(args.get(1).copied().unwrap_or(200) as u64);
    let sizes: Vec<usize> = match args.get(2..) {
        Some(n) if !n.is_empty() => n.to_vec(),
        _ => vec![50],
    };
    println!(
        "simulated latency {} ms per command, {runs} runs each, medians:",
        latency.as_millis()
    );
    for parallel in [16, DEFAULT_PARALLEL] {
        let mut one = Vec::new();
        let mut fleets: Vec<Vec<Duration>> = vec![Vec::new(); sizes.len()];
        // Interleaved so every size sees the same machine load.
        for _ in 0..runs {
            one.push(once(1, parallel, latency)?);
            for (n, times) in sizes.iter().zip(&mut fleets) {
                times.push(once(*n, parallel, latency)?);
            }
        }
        let m1 = median(one);
        let mut line = format!(
            "  --parallel {parallel:>3}:  1 host {:>6.0} ms",
            m1.as_secs_f64() * 1000.0
        );
        for (n, times) in sizes.iter().zip(fleets) {
            let m = median(times);
            line += &format!(
                "   {n} hosts {:>6.0} ms (ratio {:.2})",
                m.as_secs_f64() * 1000.0,
                m.as_secs_f64() / m1.as_secs_f64()
            );
        }
        println!("{line}");
    }
    Ok(())
}
