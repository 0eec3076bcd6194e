//! End to end, as a support engineer meets it: a live run against real OpenSSH servers
//! (ESXi 8 algorithm lists, fake esxcli/vsish answering from samples, see tests/support)
//! writes a bundle; `pvrdma-doctor analyze` of that bundle, elsewhere and later, prints
//! the very JSON report the live run printed, and a host that could not be reached stays
//! visible in the manifest with its typed error.

use crate::support::client::Doctor;
use crate::support::client::{target, Client};
use crate::support::*;
use pvrdma_doctor::app::write_support_bundle;
use pvrdma_doctor::cli::BundleArgs;
use pvrdma_doctor::live::collect_live;
use pvrdma_engine::diagnose;
use pvrdma_engine::report::{self, Format};
use std::io::Read;
use std::path::Path;

fn entry(bundle: &Path, name: &str) -> Vec<u8> {
    let file = std::fs::File::open(bundle).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    for e in archive.entries().unwrap() {
        let mut e = e.unwrap();
        if e.path().unwrap().to_string_lossy() == name {
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            return data;
        }
    }
    panic!("no {name} in {}", bundle.display());
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn analyze_of_a_live_bundle_prints_the_live_report() {
    let client = Client::new();
    let hosts: Vec<Sshd> = ["esx01", "esx02"]
        .iter()
        .map(|h| client.keyed_sshd(samples_host("healthy-cluster", h)))
        .collect();
    for h in &hosts {
        client.trust(h);
    }
    // A third target nobody listens on: unreachable, and the bundle must say so.
    let dead_port = free_port();
    let mut targets: Vec<String> = hosts.iter().map(target).collect();
    targets.push(format!("127.0.0.1:{dead_port}"));
    let opts = client.options(&targets);
    let run = collect_live(&opts).expect("live run");
    let live_json = report::render(&diagnose::diagnose(&run.captures), Format::Json, false);
    let healthy = run.captures.iter().filter(|c| c.error.is_none()).count();
    assert_eq!(
        healthy,
        2,
        "sshd logs: {}",
        hosts.iter().map(Sshd::log).collect::<String>()
    );

    let out = tempfile::tempdir().unwrap();
    let bundle = out.path().join("ticket-4711.tar.gz");
    let args = BundleArgs {
        bundle: Some(bundle.clone()),
        redact: false,
        force: false,
    };
    write_support_bundle(
        &args,
        &run.captures,
        &pvrdma_engine::diagnose::diagnose(&run.captures),
        run.started,
        run.finished,
        run.interrupted,
    )
    .unwrap();
    drop(hosts);

    // The hosts are gone; the bundle alone reproduces the report, byte for byte.
    let analyzed = Doctor::new()
        .args(["analyze", "--format", "json", "--color", "never"])
        .arg(&bundle)
        .output();
    let stdout = String::from_utf8(analyzed.stdout).unwrap();
    assert_eq!(stdout, live_json);
    assert_eq!(entry(&bundle, "report.json"), live_json.as_bytes());
    // Exit 3: a host was unreachable, nothing failed.
    assert_eq!(analyzed.status.code(), Some(3));

    let manifest: serde_json::Value = serde_json::from_slice(&entry(&bundle, "manifest.json")).unwrap();
    let dead = manifest["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["host"] == format!("127.0.0.1:{dead_port}"))
        .unwrap();
    assert_eq!(dead["outcome"], "failed");
    assert_eq!(dead["error"]["kind"], "unreachable", "{dead}");
    let live_host = &manifest["hosts"][0];
    assert_eq!(live_host["outcome"], "complete");
    let cmd = &live_host["commands"][0];
    assert!(cmd["duration_ms"].as_u64().is_some());
    assert_eq!(cmd["exit_status"], 0);
    assert!(manifest["started"].as_str().unwrap() <= manifest["finished"].as_str().unwrap());
}
