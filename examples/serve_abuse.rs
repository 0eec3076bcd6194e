//! Can unauthenticated clients starve `serve`? (a benchmark, not a test). The exporter as
//! its own process (`demo --serve --latency 1s`: three simulated hosts, a probe of one
//! takes about 3 s), then, in turn:
//!
//! 1. no attack;
//! 2. 2,000 idle connections (opened, never a byte sent; each reopened 100 ms after the
//!    exporter closes it, as a persistent attacker would);
//! 3. 600 slowloris connections (a request begun, then one header byte a second; reopened
//!    likewise).
//!
//! In each: the latency of `/-/healthy` (7 requests, one after the other, each on a new
//! connection) and of a probe of esx01 (3, with a 10 s scrape timeout as Prometheus
//! sends by default), medians. Loopback only; every wait is bounded (30 s per request).
//!
//! ```text
//! cargo build && PVRDMA_DOCTOR_BIN=target/debug/pvrdma-doctor \
//!     cargo run --example serve_abuse -- [--idle 2000] [--slowloris 600]
//! ```
#[path = "../tests/support/measure.rs"]
#[allow(dead_code)]
mod measure;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One request on a new connection; its latency, or `None` past 30 s or on an error.
fn timed(addr: &str, path: &str) -> Option<(Duration, String)> {
    let start = Instant::now();
    let mut s = TcpStream::connect_timeout(&addr.parse().ok()?, Duration::from_secs(30)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    text.starts_with("HTTP/1.1 200").then(|| (start.elapsed(), text))
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Holds `n` connections open until `stop`; slowloris ones send a byte a second.
fn attack(addr: String, n: usize, slowloris: bool, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let tasks: Vec<_> = (0..n)
                .map(|_| {
                    let addr = addr.clone();
                    let stop = stop.clone();
                    tokio::spawn(async move {
                        while !stop.load(Ordering::Relaxed) {
                            if let Ok(mut s) = tokio::net::TcpStream::connect(&addr).await {
                                if slowloris {
                                    let _ = s.write_all(b"GET /-/healthy HTTP/1.1\r\nX-Slow: ").await;
                                    while !stop.load(Ordering::Relaxed) {
                                        tokio::time::sleep(Duration::from_secs(1)).await;
                                        if s.write_all(b"a").await.is_err() {
                                            break;
                                        }
                                    }
                                } else {
                                    let mut buf = [0u8; 64];
                                    loop {
                                        tokio::select! {
                                            r = s.read(&mut buf) => if matches!(r, Ok(0) | Err(_)) { break },
                                            () = tokio::time::sleep(Duration::from_millis(200)) => {
                                                if stop.load(Ordering::Relaxed) { break }
                                            }
                                        }
                                    }
                                }
                            }
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    })
                })
                .collect();
            for t in tasks {
                let _ = t.await;
            }
        });
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut idle, mut slow) = (2000usize, 600usize);
    for pair in args.chunks(2) {
        let value = pair.get(1).map(String::as_str).unwrap_or("");
        match pair[0].as_str() {
            "--idle" => idle = value.parse().expect("--idle N"),
            "--slowloris" => slow = value.parse().expect("--slowloris N"),
            other => panic!("unknown option {other}"),
        }
    }
    measure::raise_nofile(16384);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin = std::env::var("PVRDMA_DOCTOR_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/release/pvrdma-doctor"));
    assert!(bin.is_file(), "{} missing: build it first", bin.display());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = Command::new(&bin)
        .args(["demo", "--serve", "--latency", "1s", "--listen", &addr])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the exporter");
    let start = Instant::now();
    while timed(&addr, "/-/healthy").is_none() {
        assert!(start.elapsed() < Duration::from_secs(30), "the exporter did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("exporter: {}", bin.display());
    println!("| attack | /-/healthy median | /-/healthy failed | probe median | probe failed | probes up 1 |");
    println!("|---|---|---|---|---|---|");
    for (name, n, slowloris) in [
        ("none", 0, false),
        ("idle connections", idle, false),
        ("slowloris connections", slow, true),
    ] {
        let stop = Arc::new(AtomicBool::new(false));
        let attacker = (n > 0).then(|| attack(addr.clone(), n, slowloris, stop.clone()));
        if n > 0 {
            // Let the attack connect in full.
            std::thread::sleep(Duration::from_secs(3));
        }
        let healthy: Vec<Option<f64>> = (0..7)
            .map(|_| timed(&addr, "/-/healthy").map(|(d, _)| d.as_secs_f64()))
            .collect();
        let probes: Vec<Option<(f64, bool)>> = (0..3)
            .map(|_| timed(&addr, "/probe?target=esx01").map(|(d, t)| (d.as_secs_f64(), t.contains("\npvrdma_up 1\n"))))
            .collect();
        stop.store(true, Ordering::Relaxed);
        if let Some(a) = attacker {
            let _ = a.join();
        }
        let label = if n > 0 { format!("{n} {name}") } else { name.to_string() };
        println!(
            "| {label} | {:.1} ms | {} | {:.2} s | {} | {} |",
            median(healthy.iter().flatten().copied().collect()) * 1000.0,
            healthy.iter().filter(|h| h.is_none()).count(),
            median(probes.iter().flatten().map(|p| p.0).collect()),
            probes.iter().filter(|p| p.is_none()).count(),
            probes.iter().flatten().filter(|p| p.1).count(),
        );
        std::thread::sleep(Duration::from_secs(2));
    }
    let _ = child.kill();
    let _ = child.wait();
}
