//! Memory of a long `watch`: runs `pvrdma-doctor watch --demo` for hundreds of rounds at a
//! short interval and prints the process's resident memory (VmRSS) as the rounds go by,
//! read from /proc at each round's JSON heartbeat. A watch keeps only the previous round's
//! report, so the figure must stay flat.
//!
//! Build the binary first, in the same profile, then run:
//!
//! ```text
//! cargo build && cargo run --example watch_rss -- 500 100ms
//! ```
//!
//! Arguments: rounds (default 500), interval (default 100ms).
#[path = "../tests/support/measure.rs"]
#[allow(dead_code)]
mod measure;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let rounds: u64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(500);
    let interval = args.next().unwrap_or_else(|| "100ms".to_string());
    // target/<profile>/examples/watch_rss -> target/<profile>/pvrdma-doctor
    let exe = std::env::current_exe()?;
    let bin = exe
        .parent()
        .and_then(|p| p.parent())
        .map(|p| p.join("pvrdma-doctor"))
        .ok_or("cannot locate the target directory")?;
    if !bin.is_file() {
        return Err(format!("{} is missing: run `cargo build` (same profile) first", bin.display()).into());
    }
    let mut child = Command::new(&bin)
        .args(["watch", "--demo", "--format", "json", "--interval", &interval])
        .args(["--count", &rounds.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let pid = child.id();
    let out = child.stdout.take().ok_or("no stdout")?;
    println!("watch --demo (3 simulated hosts over SSH), {rounds} rounds, --interval {interval}");
    println!("{:>6}  {:>10}  {:>9}", "round", "VmRSS KiB", "overruns");
    let mut samples: Vec<(u64, u64)> = Vec::new();
    let mut overruns = 0;
    let report_at = |r: u64| r <= 2 || r.is_multiple_of((rounds / 10).max(1)) || r == rounds;
    for line in BufReader::new(out).lines() {
        let line = line?;
        if line.starts_with(r#"{"event":"overrun""#) {
            overruns += 1;
        }
        let round_line = line.starts_with(r#"{"event":"round""#) || line.starts_with(r#"{"event":"report""#);
        if !round_line {
            continue;
        }
        let round = samples.len() as u64 + 1;
        if let Some(kib) = measure::status_kib(pid, "VmRSS:") {
            samples.push((round, kib));
            if report_at(round) {
                println!("{round:>6}  {kib:>10}  {overruns:>9}");
            }
        }
    }
    let status = child.wait()?;
    let (Some(first), Some(last)) = (samples.get(9).or(samples.first()), samples.last()) else {
        return Err("no round was measured".into());
    };
    let max = samples.iter().map(|s| s.1).max().unwrap_or(0);
    println!(
        "exit {}; VmRSS at round {}: {} KiB, at round {}: {} KiB ({:+} KiB), highest {} KiB",
        status.code().unwrap_or(-1),
        first.0,
        first.1,
        last.0,
        last.1,
        last.1 as i64 - first.1 as i64,
        max
    );
    Ok(())
}
