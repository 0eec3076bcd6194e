//! Figures for support bundles at fleet scale: how long writing, reading and redacting a
//! bundle of a 256-host fleet takes, and how fast redaction goes through one huge output.
//! Run with `cargo bench --bench bundle`; it prints figures, it asserts nothing. Under
//! `cargo test --all-targets` (no `--bench` argument) it runs a small smoke version, so
//! the shared test run stays fast.
use pvrdma_doctor::bundle::{write_bundle, BundleMeta};
use pvrdma_doctor::offline::load_captures;
use pvrdma_doctor::redact::Redactor;
use pvrdma_engine::capture::HostCapture;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

fn fleet(hosts: usize) -> Vec<HostCapture> {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/healthy-cluster");
    let base = load_captures(&sample).expect("sample loads");
    (0..hosts)
        .map(|n| {
            let mut c = base[n % base.len()].clone();
            let name = format!("esx{n:03}.hpc.example.org");
            // Distinct addresses per host so redaction has real work.
            for out in c.outputs.values_mut() {
                out.stdout = out
                    .stdout
                    .replace("10.10.10.", &format!("10.{}.{}.", n / 250, n % 250))
                    .replace(&c.host, &name);
            }
            c.host = name;
            c
        })
        .collect()
}

/// `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it,
/// as a check that every input parses: then it prints no figures (debug-build timings
/// beside the README's release ones would only mislead).
fn timing() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// `println!` only when timing.
macro_rules! say {
    ($($t:tt)*) => {
        if timing() {
            println!($($t)*);
        }
    };
}

fn time<T>(what: &str, runs: u32, mut f: impl FnMut() -> T) -> T {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        last = Some(f());
        best = best.min(start.elapsed());
    }
    say!("{what:<48} best of {runs}: {:>9.1} ms", best.as_secs_f64() * 1000.0);
    last.expect("runs > 0")
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (hosts, table_bytes, runs) = if full { (256, 16 << 20, 5) } else { (8, 64 << 10, 1) };
    let captures = fleet(hosts);
    let raw_bytes: usize = captures
        .iter()
        .flat_map(|c| c.outputs.values())
        .map(|o| o.stdout.len() + o.stderr.len())
        .sum();
    say!("fleet: {hosts} hosts, {raw_bytes} bytes of raw output");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("fleet.tar.gz");
    let meta = BundleMeta {
        tool_version: "bench".into(),
        command_line: vec!["pvrdma-doctor".into()],
        started: SystemTime::now(),
        finished: SystemTime::now(),
        interrupted: false,
        redacted: false,
        vm_scope: None,
        vm_scope_left_out: Vec::new(),
    };
    time(&format!("write_bundle ({hosts} hosts)"), runs, || {
        write_bundle(&path, &captures, &meta, "{}", "", "", true).expect("write")
    });
    say!("bundle size: {} bytes", std::fs::metadata(&path).expect("bundle").len());
    let read = time(&format!("load_captures ({hosts} hosts, sha256 verified)"), runs, || {
        load_captures(&path).expect("read")
    });
    assert_eq!(read.len(), hosts);
    let redacted = time(&format!("Redactor::redact_captures ({hosts} hosts)"), runs, || {
        Redactor::new().redact_captures(&captures).expect("redact")
    });
    assert_eq!(redacted.len(), hosts);

    // One big output (16 MiB in the full run): a table with a MAC and an address per row.
    let mut big =
        String::from("Name     MAC Address        IPv4 Address  MTU\n-------  -----------------  ------------  ----\n");
    let mut n = 0u32;
    while big.len() < table_bytes {
        // 50 000 distinct interfaces, repeated: MAC tokens have 16 bits of room.
        let b = (n % 50_000).to_be_bytes();
        big.push_str(&format!(
            "vmnic{:<2} 3c:ec:{:02x}:{:02x}:{:02x}:{:02x}  10.{}.{}.{:<5}  9000\n",
            n % 100,
            b[0],
            b[1],
            b[2],
            b[3],
            b[1],
            b[2],
            b[3]
        ));
        n += 1;
    }
    let mut r = Redactor::new();
    let mut one = captures[0].clone();
    if let Some(o) = one.outputs.values_mut().next() {
        o.stdout = big.clone();
    }
    let start = Instant::now();
    let out = r.redact_captures(&[one]).expect("redact");
    let secs = start.elapsed().as_secs_f64();
    say!(
        "redact one {} KiB table ({n} rows, {} values): {:.1} ms, {:.1} MB/s",
        table_bytes >> 10,
        r.originals().len(),
        secs * 1000.0,
        big.len() as f64 / secs / 1e6
    );
    assert_eq!(out.len(), 1);
}
