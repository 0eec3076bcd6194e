//! Benchmark: wall time to diagnose 1 and 50 simulated ESXi hosts (start the simulated
//! hosts, `collect_live` over SSH, diagnose, render the report), each command answering
//! after a simulated 200 ms latency, measured side by side in one run.
//!
//! `cargo run --release --example fleet_bench [-- RUNS]` prints the median of RUNS runs
//! (default 5) per fleet size, with `--parallel 16` and with the default `--parallel`.
use pvrdma_doctor::demo::{run_demo, DemoOptions};
use pvrdma_doctor::live::{LiveOptions, DEFAULT_PARALLEL};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn once(hosts: usize, parallel: usize) -> anyhow::Result<Duration> {
    let demo = DemoOptions {
        scenario: None,
        hosts: Some(hosts),
        latency: Duration::from_millis(200),
    };
    let live = LiveOptions {
        parallel,
        connect_timeout: Duration::from_secs(30),
        command_timeout: Duration::from_secs(30),
        run_timeout: Some(Duration::from_secs(300)),
        ..LiveOptions::default()
    };
    let t0 = Instant::now();
    let run = run_demo(&demo, live)?;
    let diagnosis = pvrdma_doctor::diagnose::diagnose(&run.captures);
    let report = pvrdma_doctor::report::render(&diagnosis, pvrdma_doctor::report::Format::Human, false);
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
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    println!("simulated latency 200 ms per command, {runs} runs each, medians:");
    for parallel in [16, DEFAULT_PARALLEL] {
        let mut one = Vec::new();
        let mut fifty = Vec::new();
        // Interleaved so both sizes see the same machine load.
        for _ in 0..runs {
            one.push(once(1, parallel)?);
            fifty.push(once(50, parallel)?);
        }
        let (m1, m50) = (median(one), median(fifty));
        println!(
            "  --parallel {parallel:>2}:  1 host {:>6.0} ms   50 hosts {:>6.0} ms   ratio {:.2}",
            m1.as_secs_f64() * 1000.0,
            m50.as_secs_f64() * 1000.0,
            m50.as_secs_f64() / m1.as_secs_f64()
        );
    }
    Ok(())
}
