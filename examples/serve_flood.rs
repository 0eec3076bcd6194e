//! Benchmark: the exporter's peak memory when every host it probes floods every command.
//!
//! One real OpenSSH sshd on 127.0.0.1 (the test harness of `tests/support`, so this needs
//! what the sshd tests need: root, sshd, busybox, the PAM test user) whose fake esxcli and
//! vsish print FLOOD_MIB MiB (default 20) for every catalogue command; HOSTS ssh_config
//! aliases (default 64, the shipped `limits.max_concurrent_hosts`) point at it. The
//! exporter runs as its own process (`target/release/pvrdma-doctor serve`, or
//! `PVRDMA_DOCTOR_BIN`) with the shipped limits, unless OUTPUT_BUDGET_MIB sets
//! `limits.output_budget`. Every host is probed at once, ROUNDS times (default 2), one
//! round after the other; then the exporter's peak RSS (VmHWM from /proc) is printed,
//! with how many probes answered, how many outputs the exporter's budget cut
//! (`pvrdma_doctor_outputs_cut_total`), and how many checks came out `unknown`.
//!
//! `cargo build --release && sudo target/release/examples/serve_flood [HOSTS [FLOOD_MIB [ROUNDS [OUTPUT_BUDGET_MIB]]]]`
#[path = "../tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::measure;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// GET `path`; (status, body).
async fn get(addr: &str, path: &str) -> (u16, String) {
    let Ok(mut s) = tokio::net::TcpStream::connect(addr).await else {
        return (0, String::new());
    };
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nX-Prometheus-Scrape-Timeout-Seconds: 290\r\nConnection: close\r\n\r\n"
    );
    if s.write_all(req.as_bytes()).await.is_err() {
        return (0, String::new());
    }
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw).await;
    measure::http_response(&raw)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let hosts = args.first().copied().unwrap_or(64);
    let flood_mib = args.get(1).copied().unwrap_or(20);
    let rounds = args.get(2).copied().unwrap_or(2);
    let budget_mib = args.get(3).copied();
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin = std::env::var("PVRDMA_DOCTOR_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| root.join("target/release/pvrdma-doctor"));
    anyhow::ensure!(bin.is_file(), "{} missing: cargo build --release first", bin.display());
    let dir = tempfile::tempdir()?;
    let (sshd, ssh_config, targets) = flooding_aliases(dir.path(), hosts, flood_mib);
    let limits = match budget_mib {
        Some(m) => format!("limits:\n  output_budget: {m}MiB\n  max_timeout: 300s\n"),
        None => "limits:\n  max_timeout: 300s\n".to_string(),
    };
    let exporter_config = dir.path().join("exporter.yml");
    std::fs::write(
        &exporter_config,
        format!(
            "{limits}modules:\n  default:\n    ssh_config: {}\n    ssh_agent: false\n    connect_timeout: 120s\n    command_timeout: 120s\ntargets: [{}]\n",
            ssh_config.display(),
            targets.join(", ")
        ),
    )?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let addr = format!("127.0.0.1:{port}");
    let log = dir.path().join("exporter.log");
    let mut child = Command::new(&bin)
        .args([
            "serve",
            "--config",
            &exporter_config.display().to_string(),
            "--listen",
            &addr,
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log)?)
        .spawn()?;
    let pid = child.id();
    let start = Instant::now();
    while !std::fs::read_to_string(&log).unwrap_or_default().contains("serving on") {
        anyhow::ensure!(
            start.elapsed() < Duration::from_secs(20),
            "the exporter did not start: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let idle = measure::status_kib(pid, "VmRSS:").unwrap_or(0);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let t0 = Instant::now();
    let mut bodies = Vec::new();
    for _ in 0..rounds {
        let round = rt.block_on(async {
            let tasks: Vec<_> = targets
                .iter()
                .map(|t| {
                    let (addr, path) = (addr.clone(), format!("/probe?target={t}"));
                    tokio::spawn(async move { get(&addr, &path).await })
                })
                .collect();
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.unwrap_or_default());
            }
            out
        });
        bodies.extend(round);
    }
    let took = t0.elapsed();
    let hwm = measure::status_kib(pid, "VmHWM:").unwrap_or(0);
    let (_, metrics) = rt.block_on(get(&addr, "/metrics"));
    let cut_total = metrics
        .lines()
        .find_map(|l| l.strip_prefix("pvrdma_doctor_outputs_cut_total "))
        .unwrap_or("absent (a build without the process budget)")
        .to_string();
    let _ = Command::new("kill").arg(pid.to_string()).status();
    let _ = child.wait();
    let answered = bodies.iter().filter(|(s, _)| *s == 200).count();
    let unknown: usize = bodies
        .iter()
        .map(|(_, b)| b.lines().filter(|l| l.contains("status=\"unknown\"} 1")).count())
        .sum();
    let passed: usize = bodies
        .iter()
        .map(|(_, b)| b.lines().filter(|l| l.contains("status=\"pass\"} 1")).count())
        .sum();
    println!(
        "{hosts} hosts x {} commands flooding {flood_mib} MiB each, probed at once, {rounds} round(s) in {:.1} s; \
         limits.output_budget {}",
        pvrdma_engine::catalogue::CATALOGUE.len(),
        took.as_secs_f64(),
        budget_mib.map_or("as shipped".to_string(), |m| format!("{m} MiB"))
    );
    println!(
        "{answered} of {} probes answered 200; {unknown} check series unknown, {passed} pass; \
         outputs cut by the exporter's budget (pvrdma_doctor_outputs_cut_total): {cut_total}",
        bodies.len()
    );
    println!(
        "exporter peak RSS (VmHWM): {:.0} MiB; idle before the probes {:.0} MiB",
        hwm as f64 / 1024.0,
        idle as f64 / 1024.0
    );
    drop(sshd);
    Ok(())
}
