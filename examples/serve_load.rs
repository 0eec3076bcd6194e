//! Load test of `pvrdma-doctor serve` (a benchmark, not a test): 200 simulated ESXi hosts
//! (the demo's, over real SSH, each command answering after a simulated esxcli latency),
//! the exporter as its own process in front of them, and a client that scrapes as
//! Prometheus would:
//!
//! 1. one host alone, probed a few times: one host's collection time;
//! 2. steady: every target scraped every INTERVAL, spread over the interval, each scrape
//!    sent twice at once (two Prometheus replicas: single flight shares one collection);
//! 3. a burst of 1,000 requests at once over the 200 targets.
//!
//! For each phase: the exporter's CPU per probe, p50/p99 latency against one host's
//! collection time, SSH sessions open at peak (sampled from /metrics every
//! `--sample-ms`, 1000 by default: each sample is a request the exporter answers, and at
//! 100 ms they cost more CPU than 50 targets' probes), and the exporter's peak RSS.
//! The exporter runs with the shipped limits (`max_concurrent_hosts` 64,
//! `max_connections` 512) unless `--wide` sets 256 and 2048. `--idle SECONDS` first
//! measures the exporter's CPU while nothing but the sampler talks to it.
//!
//! ```text
//! cargo build --release
//! cargo run --release --example serve_load -- [--hosts 200] [--interval 15]
//!     [--rounds 3] [--latency 1] [--sample-ms 1000] [--wide] [--idle 0] [--no-burst]
//! ```
#[path = "../tests/support/measure.rs"]
#[allow(dead_code)]
mod measure;

use pvrdma_doctor::demo::{start_fleet, DemoOptions};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Args {
    hosts: usize,
    interval: f64,
    rounds: usize,
    latency: f64,
    sample_ms: u64,
    wide: bool,
    idle: f64,
    burst: bool,
}

fn args() -> Args {
    let mut a = Args {
        hosts: 200,
        interval: 15.0,
        rounds: 3,
        latency: 1.0,
        sample_ms: 1000,
        wide: false,
        idle: 0.0,
        burst: true,
    };
    let mut v: Vec<String> = std::env::args().skip(1).collect();
    v.retain(|f| match f.as_str() {
        "--wide" => {
            a.wide = true;
            false
        }
        "--no-burst" => {
            a.burst = false;
            false
        }
        _ => true,
    });
    for pair in v.chunks(2) {
        let value = pair.get(1).map(String::as_str).unwrap_or("");
        match pair[0].as_str() {
            "--sample-ms" => a.sample_ms = value.parse().unwrap_or(a.sample_ms),
            "--idle" => a.idle = value.parse().unwrap_or(a.idle),
            "--hosts" => a.hosts = value.parse().unwrap_or(a.hosts),
            "--interval" => a.interval = value.parse().unwrap_or(a.interval),
            "--rounds" => a.rounds = value.parse().unwrap_or(a.rounds),
            "--latency" => a.latency = value.parse().unwrap_or(a.latency),
            other => panic!("unknown option {other}"),
        }
    }
    a
}

/// GET `path` with the scrape timeout header; (status, body, latency).
async fn get(addr: &str, path: &str, timeout: f64) -> (u16, String, Duration) {
    let start = Instant::now();
    let Ok(mut s) = tokio::net::TcpStream::connect(addr).await else {
        return (0, String::new(), start.elapsed());
    };
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nX-Prometheus-Scrape-Timeout-Seconds: {timeout}\r\nConnection: close\r\n\r\n"
    );
    if s.write_all(req.as_bytes()).await.is_err() {
        return (0, String::new(), start.elapsed());
    }
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw).await;
    let (status, body) = measure::http_response(&raw);
    (status, body, start.elapsed())
}

fn metric(body: &str, name: &str) -> f64 {
    body.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

/// Samples `pvrdma_doctor_ssh_sessions_open` every `every` until `stop`; the peak.
fn sample_sessions(addr: String, stop: Arc<AtomicUsize>, every: Duration) -> std::thread::JoinHandle<f64> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("rt");
        let mut peak: f64 = 0.0;
        while stop.load(Ordering::Relaxed) == 0 {
            let (_, body, _) = rt.block_on(get(&addr, "/metrics", 5.0));
            peak = peak.max(metric(&body, "pvrdma_doctor_ssh_sessions_open"));
            let slept = Instant::now();
            while slept.elapsed() < every && stop.load(Ordering::Relaxed) == 0 {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        peak
    })
}

struct Phase {
    name: &'static str,
    latencies: Vec<Duration>,
    failed: usize,
    up0: usize,
    cpu: f64,
    collections: f64,
    sessions_peak: f64,
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64()
}

fn main() {
    let a = args();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin = std::env::var("PVRDMA_DOCTOR_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/release/pvrdma-doctor"));
    assert!(bin.is_file(), "{} missing: cargo build --release first", bin.display());
    let fleet = start_fleet(
        &DemoOptions {
            scenario: Some(root.join("samples/healthy-cluster")),
            hosts: Some(a.hosts),
            latency: Duration::from_secs_f64(a.latency),
        },
        false,
    )
    .expect("simulated hosts");
    let names = fleet.host_names();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("exporter.yml");
    std::fs::write(
        &config,
        format!(
            "limits:\n{}  max_timeout: 60s\nmodules:\n  default:\n    ssh_config: {}\n    ssh_agent: false\ntargets: [{}]\n",
            if a.wide {
                "  max_concurrent_hosts: 256\n  max_connections: 2048\n"
            } else {
                ""
            },
            fleet.ssh_config().display(),
            names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
        ),
    )
    .expect("config");
    let log = dir.path().join("exporter.log");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let addr = format!("127.0.0.1:{port}");
    let mut child = Command::new(&bin)
        .args(["serve", "--config", config.to_str().expect("utf-8"), "--listen", &addr])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("start the exporter");
    let pid = child.id();
    let start = Instant::now();
    while !std::fs::read_to_string(&log).unwrap_or_default().contains("serving on") {
        assert!(start.elapsed() < Duration::from_secs(20), "exporter did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    let usage = || pvrdma_doctor::serve::metrics::process_usage(pid).expect("/proc of the exporter");
    let collections = |rt: &tokio::runtime::Runtime| {
        let (_, m, _) = rt.block_on(get(&addr, "/metrics", 5.0));
        metric(&m, "pvrdma_doctor_probes_total") - metric(&m, "pvrdma_doctor_probes_shared_total")
    };
    let timeout = a.interval.min(30.0);
    let mut phases: Vec<Phase> = Vec::new();
    let mut run_phase = |name: &'static str, plan: Vec<(Duration, String)>| {
        let stop = Arc::new(AtomicUsize::new(0));
        let sampler = sample_sessions(addr.clone(), stop.clone(), Duration::from_millis(a.sample_ms));
        let (cpu0, _) = usage();
        let c0 = collections(&rt);
        let results = rt.block_on(async {
            let t0 = tokio::time::Instant::now();
            let tasks: Vec<_> = plan
                .into_iter()
                .map(|(at, target)| {
                    let addr = addr.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep_until(t0 + at).await;
                        get(&addr, &format!("/probe?target={target}"), timeout).await
                    })
                })
                .collect();
            let mut out = Vec::new();
            for t in tasks {
                if let Ok(r) = t.await {
                    out.push(r);
                }
            }
            out
        });
        stop.store(1, Ordering::Relaxed);
        let sessions_peak = sampler.join().unwrap_or(0.0);
        let (cpu1, _) = usage();
        let c1 = collections(&rt);
        let mut latencies: Vec<Duration> = results.iter().map(|r| r.2).collect();
        latencies.sort();
        phases.push(Phase {
            name,
            failed: results.iter().filter(|r| r.0 != 200).count(),
            up0: results.iter().filter(|r| !r.1.contains("\npvrdma_up 1\n")).count(),
            latencies,
            cpu: cpu1 - cpu0,
            collections: c1 - c0,
            sessions_peak,
        });
    };
    // 0. Idle: what the exporter spends with no probe (the sampler's requests only).
    let idle_ms_per_s = (a.idle > 0.0).then(|| {
        let stop = Arc::new(AtomicUsize::new(0));
        let sampler = sample_sessions(addr.clone(), stop.clone(), Duration::from_millis(a.sample_ms));
        let (cpu0, _) = usage();
        std::thread::sleep(Duration::from_secs_f64(a.idle));
        let (cpu1, _) = usage();
        stop.store(1, Ordering::Relaxed);
        let _ = sampler.join();
        (cpu1 - cpu0) * 1000.0 / a.idle
    });
    // 1. One host alone.
    let one: Vec<(Duration, String)> = (0..5).map(|i| (Duration::from_secs(i * 6), names[0].clone())).collect();
    run_phase("one host, alone", one);
    // 2. Steady scraping, two replicas.
    let mut steady = Vec::new();
    for round in 0..a.rounds {
        for (i, n) in names.iter().enumerate() {
            let at = a.interval * (round as f64 + i as f64 / names.len() as f64);
            for _replica in 0..2 {
                steady.push((Duration::from_secs_f64(at), n.clone()));
            }
        }
    }
    run_phase("steady, 2 replicas", steady);
    // 3. A burst of 1,000 requests at once.
    if a.burst {
        let burst: Vec<(Duration, String)> = (0..1000)
            .map(|i| (Duration::ZERO, names[i % names.len()].clone()))
            .collect();
        run_phase("burst of 1,000", burst);
    }
    let (_, hwm) = usage();
    let _ = Command::new("kill").arg(pid.to_string()).status();
    let _ = child.wait();

    let one_host = phases.first().map(|p| pct(&p.latencies, 0.5)).unwrap_or(0.0);
    println!(
        "{} simulated hosts, esxcli/vsish latency {} s, interval {} s x {} rounds",
        names.len(),
        a.latency,
        a.interval,
        a.rounds
    );
    println!(
        "limits: {}; /metrics sampled every {} ms",
        if a.wide {
            "max_concurrent_hosts 256, max_connections 2048"
        } else {
            "shipped (max_concurrent_hosts 64, max_connections 512)"
        },
        a.sample_ms
    );
    if let Some(ms) = idle_ms_per_s {
        println!("idle exporter CPU: {ms:.2} ms per second");
    }
    println!("one host's collection (median of 5 probes alone): {one_host:.3} s");
    println!(
        "{:<22} {:>8} {:>6} {:>6} {:>8} {:>8} {:>9} {:>11} {:>9}",
        "phase", "requests", "non200", "up0", "p50 s", "p99 s", "p99/one", "CPU ms/coll", "SSH peak"
    );
    for p in &phases {
        let p99 = pct(&p.latencies, 0.99);
        println!(
            "{:<22} {:>8} {:>6} {:>6} {:>8.3} {:>8.3} {:>9.2} {:>11.2} {:>9}",
            p.name,
            p.latencies.len(),
            p.failed,
            p.up0,
            pct(&p.latencies, 0.5),
            p99,
            if one_host > 0.0 { p99 / one_host } else { 0.0 },
            if p.collections > 0.0 {
                p.cpu * 1000.0 / p.collections
            } else {
                0.0
            },
            p.sessions_peak
        );
    }
    println!("exporter peak RSS: {:.1} MiB", hwm as f64 / 1024.0 / 1024.0);
    drop(fleet);
}
