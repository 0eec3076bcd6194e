//! Half an answer is no answer: against real OpenSSH servers whose fake ESXi shell hangs
//! after printing, floods, kills its own session or freezes, the affected checks and
//! adapters come out `unknown` with a reason naming the command and the event, the host
//! `incomplete`, exit code 3, while a healthy host in the same run stays complete; a
//! support bundle of the run, analysed again, gives the very same report.

use crate::support::client::{alias, Client, Doctor};
use crate::support::*;
use pvrdma_engine::catalogue;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Long enough that a loaded 2-core machine finishes every healthy command in time; the
/// stalled and frozen ones cost one timeout each.
const COMMAND_TIMEOUT: &str = "10s";
const TIMEOUT_WORDS: &str = "did not finish within --command-timeout 10s";

/// Runs the binary on both hosts with a bundle; returns (exit code, JSON report, stdout).
fn run(client: &Client, extra: &[&str]) -> (Option<i32>, Value, String, PathBuf) {
    let bundle = client
        .dir
        .path()
        .join(format!("run-{}.tar.gz", extra.join("_").replace(['/', ' '], "")));
    let out = client
        .doctor()
        .args([
            "--format",
            "json",
            "--color",
            "never",
            "--connect-timeout",
            "20s",
            "--command-timeout",
            COMMAND_TIMEOUT,
            "--timeout",
            "90s",
        ])
        .args(extra)
        .arg("--bundle")
        .arg(&bundle)
        .args(["broken", "healthy"])
        .run();
    (out.code, out.json(), out.stdout, bundle)
}

fn start(client: &Client, scenario_host: &str, tweak: impl FnOnce(&mut SshdOptions)) -> Sshd {
    let mut o = SshdOptions::new(samples_host("healthy-cluster", scenario_host));
    client.authorize(&mut o);
    tweak(&mut o);
    Sshd::start(o)
}

/// A broken host (esx01 samples, misbehaving as `tweak` says) and a healthy one (esx02),
/// known to the client as `broken` and `healthy`.
fn fleet(tweak: impl FnOnce(&mut SshdOptions)) -> (Sshd, Sshd, Client) {
    let client = Client::new();
    let broken = start(&client, "esx01", tweak);
    let healthy = start(&client, "esx02", |_| {});
    client.trust(&broken);
    client.trust(&healthy);
    client.write_config(&format!("{}{}", alias("broken", &broken), alias("healthy", &healthy)));
    (broken, healthy, client)
}

fn host<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .find(|h| h["host"] == name)
        .unwrap_or_else(|| panic!("no host {name} in {report}"))
}

fn check<'a>(host: &'a Value, id: &str) -> &'a Value {
    host["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {host}"))
}

/// The only adapter of esx01's samples: hpc-node01, adapter 0.
fn hpc_node01(host: &Value) -> &Value {
    let vm = host["vms"]
        .as_array()
        .expect("vms")
        .iter()
        .find(|v| v["name"] == "hpc-node01")
        .unwrap_or_else(|| panic!("hpc-node01 not listed: {host}"));
    &vm["adapters"][0]
}

fn incomplete<'a>(host: &'a Value, id: &str) -> &'a Value {
    host["incomplete_outputs"]
        .as_array()
        .expect("incomplete_outputs")
        .iter()
        .find(|o| o["command"] == id)
        .unwrap_or_else(|| panic!("{id} is not among the incomplete outputs: {host}"))
}

/// What every outcome test asserts beyond its own event: exit 3, the healthy host whole,
/// and the bundle's analysis printing the very same report.
fn common(code: Option<i32>, report: &Value, stdout: &str, bundle: &Path, sshds: &[&Sshd]) {
    let logs = || sshds.iter().map(|s| s.log()).collect::<String>();
    assert_eq!(code, Some(3), "{report}\n{}", logs());
    assert_eq!(host(report, "broken")["status"], "incomplete", "{report}");
    let healthy = host(report, "healthy");
    assert_eq!(healthy["status"], "ok", "{healthy}\n{}", logs());
    assert_eq!(healthy["incomplete_outputs"], serde_json::json!([]));
    assert_eq!(healthy["vms"][0]["adapters"][0]["verdict"], "hca");

    let analyzed = Doctor::new()
        .args(["analyze", "--format", "json", "--color", "never"])
        .arg(bundle)
        .run();
    assert_eq!(analyzed.stdout, stdout, "the bundle reads differently");
    assert_eq!(analyzed.code, Some(3));
    let manifest: Value = {
        let file = std::fs::File::open(bundle).expect("bundle");
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
        let mut entry = archive
            .entries()
            .expect("entries")
            .next()
            .expect("first")
            .expect("entry");
        serde_json::from_reader(&mut entry).expect("manifest.json")
    };
    let outcome = |name: &str| {
        manifest["hosts"]
            .as_array()
            .expect("hosts")
            .iter()
            .find(|h| h["host"] == name)
            .map(|h| h["outcome"].clone())
    };
    assert_eq!(outcome("broken"), Some(Value::from("partial")));
    assert_eq!(outcome("healthy"), Some(Value::from("complete")));
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn hang_after_complete_output_is_a_timeout_not_a_pass() {
    let (broken, healthy, client) = fleet(|o| {
        // Each prints its whole sample, then never exits.
        o.stall = vec![
            catalogue::PVRDMA_PROPERTIES.to_string(),
            catalogue::RDMA_DEVICE_LIST.to_string(),
        ];
    });
    let (code, report, stdout, bundle) = run(&client, &[]);
    let h = host(&report, "broken");
    let adapter = hpc_node01(h);
    assert_eq!(adapter["verdict"], "unknown", "{adapter}");
    let reason = adapter["reasons"][0].as_str().expect("reason");
    assert!(reason.contains(TIMEOUT_WORDS), "{reason}");
    assert!(reason.contains("vsish"), "{reason}");
    let present = check(h, "rdma-device-present");
    assert_eq!(present["status"], "unknown", "{present}");
    let summary = present["summary"].as_str().expect("summary");
    assert!(
        summary.contains("esxcli rdma device list") && summary.contains(TIMEOUT_WORDS),
        "{summary}"
    );
    assert_eq!(incomplete(h, catalogue::PVRDMA_PROPERTIES)["event"], "timed-out");
    common(code, &report, &stdout, &bundle, &[&broken, &healthy]);
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn output_past_the_cap_is_cut_and_marked_unknown() {
    let (broken, healthy, client) = fleet(|o| {
        o.flood = vec![catalogue::RDMA_DEVICE_LIST.to_string()];
    });
    let (code, report, stdout, bundle) = run(&client, &[]);
    let h = host(&report, "broken");
    let present = check(h, "rdma-device-present");
    assert_eq!(present["status"], "unknown", "{present}");
    let summary = present["summary"].as_str().expect("summary");
    assert!(
        summary.contains("output cut at the 16 MiB per-command cap"),
        "{summary}"
    );
    assert_eq!(incomplete(h, catalogue::RDMA_DEVICE_LIST)["event"], "truncated");
    common(code, &report, &stdout, &bundle, &[&broken, &healthy]);

    // The per-host budget cuts earlier, and says so.
    let (code, report, stdout, bundle) = run(&client, &["--host-output-budget", "1MiB"]);
    let h = host(&report, "broken");
    let summary = check(h, "rdma-device-present")["summary"]
        .as_str()
        .expect("summary")
        .to_string();
    assert!(
        summary.contains("output cut at the 1 MiB per-host output budget"),
        "{summary}"
    );
    common(code, &report, &stdout, &bundle, &[&broken, &healthy]);
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn the_session_killed_mid_command_is_a_lost_connection() {
    let (broken, healthy, client) = fleet(|o| {
        o.kill_session = vec![catalogue::PVRDMA_PROPERTIES.to_string()];
    });
    let (code, report, stdout, bundle) = run(&client, &[]);
    let h = host(&report, "broken");
    let adapter = hpc_node01(h);
    assert_eq!(adapter["verdict"], "unknown", "{adapter}");
    let reason = adapter["reasons"][0].as_str().expect("reason");
    assert!(
        reason.contains("SSH connection lost") && reason.contains("s into the command"),
        "{reason}"
    );
    assert_eq!(incomplete(h, catalogue::PVRDMA_PROPERTIES)["event"], "connection-lost");
    common(code, &report, &stdout, &bundle, &[&broken, &healthy]);
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn a_frozen_server_is_a_timeout_with_its_reason() {
    let (broken, healthy, client) = fleet(|o| {
        o.freeze = vec![catalogue::PVRDMA_PROPERTIES.to_string()];
    });
    let (code, report, stdout, bundle) = run(&client, &[]);
    let h = host(&report, "broken");
    let adapter = hpc_node01(h);
    assert_eq!(adapter["verdict"], "unknown", "{adapter}");
    let reason = adapter["reasons"][0].as_str().expect("reason");
    assert!(reason.contains(TIMEOUT_WORDS), "{reason}");
    assert!(!reason.contains("printed nothing"), "{reason}");
    assert_eq!(incomplete(h, catalogue::PVRDMA_PROPERTIES)["event"], "timed-out");
    common(code, &report, &stdout, &bundle, &[&broken, &healthy]);
}
