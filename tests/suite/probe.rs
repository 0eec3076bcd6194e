//! `--probe` over real SSH against the simulated fleet (in-process russh servers whose
//! physical network is `samples/probe-paths`: a healthy path, a switch port at MTU 1500,
//! a switch port in the wrong VLAN), and `--baseline` end to end through the binary.
use crate::support::client::Doctor;
use pvrdma_doctor::demo::{load_probe_scenario, SimFleet};
use pvrdma_doctor::live::{collect_live, LiveOptions};
use pvrdma_doctor::probe::{parse_probe_command, ProbeOptions};
use pvrdma_engine::catalogue::CATALOGUE;
use pvrdma_engine::diagnose::diagnose;
use pvrdma_engine::diagnose::probe::ProbeStatus;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn live(probe: Option<ProbeOptions>) -> LiveOptions {
    LiveOptions {
        connect_timeout: Some(Duration::from_secs(20)),
        command_timeout: Duration::from_secs(20),
        run_timeout: Some(Duration::from_secs(120)),
        probe,
        ..LiveOptions::default()
    }
}

fn samples(scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(scenario)
}

fn status(d: &pvrdma_engine::diagnose::Diagnosis, from: &str, to: &str) -> ProbeStatus {
    d.probes
        .iter()
        .find(|p| p.from == from && p.to == to)
        .map(|p| p.status)
        .unwrap_or_else(|| panic!("no probe {from} -> {to}: {:?}", d.probes))
}

#[test]
fn probe_finds_the_healthy_the_mtu_and_the_cut_path_on_one_login_per_host() {
    let fleet = SimFleet::start(load_probe_scenario(None).expect("scenario"), Duration::ZERO).expect("fleet");
    let run = collect_live(&fleet.live_options(live(Some(ProbeOptions::default())))).expect("run");
    let d = diagnose(&run.captures);
    assert_eq!(d.probes.len(), 12, "4 hosts, N-1 peers each");
    assert_eq!(status(&d, "esx01", "esx02"), ProbeStatus::Ok);
    assert_eq!(status(&d, "esx02", "esx01"), ProbeStatus::Ok);
    assert_eq!(status(&d, "esx01", "esx03"), ProbeStatus::Mtu);
    assert_eq!(status(&d, "esx03", "esx02"), ProbeStatus::Mtu);
    assert_eq!(status(&d, "esx01", "esx04"), ProbeStatus::Unreachable);
    assert_eq!(status(&d, "esx04", "esx03"), ProbeStatus::Unreachable);
    let ok = d
        .probes
        .iter()
        .find(|p| p.from == "esx01" && p.to == "esx02")
        .expect("pair");
    assert_eq!(ok.from_vmknic.as_deref(), Some("vmk1"));
    assert_eq!(ok.to_ip.as_deref(), Some("10.10.10.12"));
    assert_eq!(ok.losses.map(|l| (l.sent, l.received)), Some((3, 3)));
    assert!(ok.rtt.is_some());
    assert_eq!(ok.jumbo.as_ref().map(|j| j.payload_bytes), Some(8972), "MTU 9000 - 28");
    let check = d
        .fleet_checks
        .iter()
        .find(|c| c.id == "vmknic-reachability")
        .expect("check");
    assert_eq!(check.status, pvrdma_engine::diagnose::Status::Fail);
    assert_eq!(d.exit_code(), 1);

    // Every command is a catalogue entry or exactly one of our probe lines, each host got
    // the catalogue once and one probe per peer, all on the login collection used.
    let seen = fleet.commands_seen();
    let probes: Vec<_> = seen.iter().filter_map(|c| parse_probe_command(c)).collect();
    for cmd in &seen {
        assert!(
            pvrdma_engine::catalogue::is_catalogue_line(cmd) || parse_probe_command(cmd).is_some(),
            "sent a command outside the catalogue and the probe: {cmd:?}"
        );
    }
    // The single-answer commands go as one line (see `catalogue::group_command`).
    let per_host = CATALOGUE
        .iter()
        .filter(|s| !pvrdma_engine::catalogue::is_grouped(s))
        .count()
        + 1;
    assert_eq!(seen.len(), 4 * per_host + 12);
    assert_eq!(probes.len(), 12);
    assert!(probes.iter().all(|(vmk, _, size)| vmk == "vmk1" && *size == Some(8972)));
    assert!(
        fleet.logins().values().all(|n| *n == 1),
        "one SSH login per host: {:?}",
        fleet.logins()
    );
}

#[test]
fn vmkping_is_never_sent_without_probe() {
    let fleet = SimFleet::start(load_probe_scenario(None).expect("scenario"), Duration::ZERO).expect("fleet");
    let run = collect_live(&fleet.live_options(live(None))).expect("run");
    assert!(run.captures.iter().all(|c| c.probe.is_none()));
    let d = diagnose(&run.captures);
    assert!(d.probes.is_empty());
    assert!(d.fleet_checks.iter().all(|c| c.id != "vmknic-reachability"));
    for cmd in fleet.commands_seen() {
        assert!(!cmd.contains("vmkping"), "vmkping sent without --probe: {cmd}");
        assert!(pvrdma_engine::catalogue::is_catalogue_line(&cmd), "{cmd}");
    }
}

#[test]
fn probe_sample_k_probes_the_same_k_peers_per_host() {
    let fleet = SimFleet::start(load_probe_scenario(None).expect("scenario"), Duration::ZERO).expect("fleet");
    let opts = Some(ProbeOptions { sample: Some(1) });
    let run = collect_live(&fleet.live_options(live(opts))).expect("run");
    let d = diagnose(&run.captures);
    let pairs: Vec<(&str, &str)> = d.probes.iter().map(|p| (p.from.as_str(), p.to.as_str())).collect();
    assert_eq!(
        pairs,
        [
            ("esx01", "esx02"),
            ("esx02", "esx03"),
            ("esx03", "esx04"),
            ("esx04", "esx01")
        ],
        "the next host on the ring of sorted names"
    );
    let probes = fleet
        .commands_seen()
        .iter()
        .filter(|c| parse_probe_command(c).is_some())
        .count();
    assert_eq!(probes, 4);
}

#[test]
fn a_host_that_is_down_skips_its_pairs_and_the_rest_is_probed() {
    // esxi80-mixed-fleet: esx01 healthy, esx02 reachable, esx03 down (closed port).
    let hosts = pvrdma_doctor::demo::load_scenario(Some(&samples("esxi80-mixed-fleet"))).expect("scenario");
    let fleet = SimFleet::start(hosts, Duration::ZERO).expect("fleet");
    let run = collect_live(&fleet.live_options(live(Some(ProbeOptions::default())))).expect("run");
    let d = diagnose(&run.captures);
    assert_eq!(status(&d, "esx01", "esx02"), ProbeStatus::Ok);
    assert_eq!(status(&d, "esx02", "esx01"), ProbeStatus::Ok);
    for (from, to) in [("esx01", "esx03"), ("esx03", "esx01"), ("esx03", "esx02")] {
        assert_eq!(status(&d, from, to), ProbeStatus::Skipped, "{from} -> {to}");
    }
    let skipped = d
        .probes
        .iter()
        .find(|p| p.from == "esx01" && p.to == "esx03")
        .expect("pair");
    assert!(skipped.detail.contains("esx03 was not reached"), "{}", skipped.detail);
    assert_eq!(skipped.to_ip, None);
}

fn bin() -> Doctor {
    Doctor::new().env_remove("NO_COLOR")
}

/// `pvrdma-doctor <args> [--baseline B] [PATH]`.
fn run(args: &[&str], baseline: Option<&Path>, path: Option<PathBuf>) -> std::process::Output {
    let mut c = bin().args(args);
    if let Some(b) = baseline {
        c = c.arg("--baseline").arg(b);
    }
    if let Some(p) = path {
        c = c.arg(p);
    }
    c.output()
}

/// Saves `analyze --format json` of a scenario as a baseline file.
fn save_report(scenario: &str, to: &Path) {
    let out = run(&["analyze", "--format", "json"], None, Some(samples(scenario)));
    std::fs::write(to, &out.stdout).expect("write baseline");
}

fn json_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

#[test]
fn analyze_of_a_probe_bundle_reproduces_the_live_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bundle = dir.path().join("probe.tar.gz");
    let live = bin()
        .args(["demo", "--probe", "--format", "json", "--bundle"])
        .arg(&bundle)
        .output();
    // The demo exits 0 when it comes out as planted; the report's own code is in the JSON.
    assert_eq!(live.status.code(), Some(0), "{}", String::from_utf8_lossy(&live.stderr));
    let analyzed = bin().args(["analyze", "--format", "json"]).arg(&bundle).output();
    assert_eq!(analyzed.status.code(), Some(1));
    assert_eq!(json_of(&live)["exit_code"], 1);
    assert_eq!(
        String::from_utf8_lossy(&live.stdout),
        String::from_utf8_lossy(&analyzed.stdout)
    );
    let report: serde_json::Value = serde_json::from_slice(&live.stdout).expect("json");
    assert_eq!(report["probes"].as_array().map(Vec::len), Some(12));
    // The layout is the per-host command files': <host>/vmkping/<peer>.txt.
    let listing = std::process::Command::new("tar")
        .arg("tzf")
        .arg(&bundle)
        .output()
        .expect("tar");
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert!(listing.lines().any(|l| l == "esx01/vmkping/esx03.txt"), "{listing}");
}

#[test]
fn the_human_report_names_the_problem_pairs_compactly() {
    let out = bin().args(["demo", "--probe", "--color", "never"]).output();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("✗ vmknic-reachability"), "{text}");
    assert!(text.contains("mtu: esx01 vmk1 ↔ esx03 10.10.10.13"), "{text}");
    assert!(text.contains("unreachable: esx01 vmk1 ↔ esx04 10.10.10.14"), "{text}");
    assert!(
        !text.contains("esx01 vmk1 ↔ esx02"),
        "healthy pairs are not listed: {text}"
    );
    assert!(text.contains("path probe: 2 ok, 4 mtu, 6 unreachable"), "{text}");
}

#[test]
fn baseline_round_trip_lists_what_changed_and_nothing_else() {
    let dir = tempfile::tempdir().expect("tempdir");
    let old = dir.path().join("old.json");
    save_report("healthy-cluster", &old);
    let json = ["analyze", "--format", "json"];
    let human = ["analyze", "--color", "never"];

    // Same capture: an empty list, and the human report says so first.
    let same = run(&json, Some(&old), Some(samples("healthy-cluster")));
    assert_eq!(same.status.code(), Some(0));
    let same = json_of(&same);
    assert_eq!(same["changes"], serde_json::json!([]));
    assert!(same["changes_since"].as_str().is_some_and(|s| s.ends_with('Z')));
    let text = run(&human, Some(&old), Some(samples("healthy-cluster")));
    assert!(String::from_utf8_lossy(&text.stdout).starts_with("No change since "));

    // The mixed fleet: esx02 lost its firewall rule and its HCA, esx03 is new.
    let changed = run(&json, Some(&old), Some(samples("esxi80-mixed-fleet")));
    assert_eq!(changed.status.code(), Some(1), "changes do not alter the exit code");
    let list: Vec<String> = json_of(&changed)["changes"]
        .as_array()
        .expect("changes list")
        .iter()
        .map(|c| format!("{} {} {} {} {}", c["host"], c["kind"], c["id"], c["from"], c["to"]))
        .collect();
    assert_eq!(
        list,
        [
            r#""esx02" "host" "status" "ok" "problems""#,
            r#""esx02" "check" "firewall-pvrdma" "pass" "fail""#,
            r#""esx02" "adapter" "hpc-node02#0" "hca" "tcp-fallback""#,
            r#""esx03" "host" "status" null "unreachable""#,
        ]
    );
    let text = run(&human, Some(&old), Some(samples("esxi80-mixed-fleet")));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.starts_with("Changed since "), "{text}");
    assert!(text.contains("  esx02: check firewall-pvrdma: pass → fail"), "{text}");
}

#[test]
fn a_live_probe_run_compares_with_a_baseline_from_analyze() {
    let dir = tempfile::tempdir().expect("tempdir");
    let old = dir.path().join("old.json");
    let demo = ["demo", "--probe", "--format", "json"];
    save_report("probe-paths", &old);
    let report = json_of(&run(&demo, Some(&old), None));
    assert_eq!(report["changes"], serde_json::json!([]), "same network, same statuses");

    // Against a probe-less baseline the probes are not reported as 12 new pairs.
    save_report("healthy-cluster", &old);
    let report = json_of(&run(&demo, Some(&old), None));
    let kinds: Vec<&str> = report["changes"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|c| c["kind"].as_str())
        .collect();
    assert!(!kinds.contains(&"probe"), "{kinds:?}");
    // esx03 and esx04 appeared; esx01 and esx02 went from ok to problems, because the
    // probe found esx04's vmknic unreachable and that breaks their RDMA path to it.
    assert_eq!(
        kinds.iter().filter(|k| **k == "host").count(),
        4,
        "{:?}",
        report["changes"]
    );
}

#[test]
fn a_baseline_of_another_schema_major_or_not_a_report_is_refused_before_any_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let v2 = dir.path().join("v2.json");
    std::fs::write(&v2, r#"{"schema": "pvrdma-doctor/report/v2", "hosts": []}"#).expect("write");
    let out = bin()
        .args(["analyze", "--baseline"])
        .arg(&v2)
        .arg(samples("healthy-cluster"))
        .output();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pvrdma-doctor/report/v2") && err.contains("same schema major"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{").expect("write");
    let out = bin()
        .args(["analyze", "--baseline"])
        .arg(&bad)
        .arg(samples("healthy-cluster"))
        .output();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not JSON"));
    // A live run refuses it before connecting to anything.
    let out = bin()
        .args(["--baseline"])
        .arg(dir.path().join("missing.json"))
        .arg("esx-never-contacted.invalid")
        .output();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the baseline"));
}

#[test]
fn probe_sample_needs_probe() {
    let out = bin().args(["--probe-sample", "2", "esx01"]).output();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--probe"));
}
