//! Every scenario in samples/ produces a reviewed report (human and JSON) and the
//! documented exit code, through the real binary: `pvrdma-doctor analyze samples/<scenario>`.
use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// Each scenario and the exit code a runbook would see for it.
const SCENARIOS: &[(&str, i32)] = &[
    ("healthy-cluster", 0),
    ("esxi67-healthy", 0),
    ("vm-names-special", 0),
    ("no-running-vms", 0),
    ("no-rdma-device", 1),
    ("rdma-device-down", 1),
    ("vmknic-untagged", 1),
    ("vmknic-missing", 1),
    ("firewall-pvrdma-disabled", 1),
    ("dvs-two-uplinks", 1),
    ("vm-two-adapters", 1),
    ("esxi80-mixed-fleet", 1),
    ("broken-output", 3),
    ("vsish-listing-failed", 3),
    ("two-hcas-second-vds-teamed", 1),
    ("roce-version-mismatch", 1),
    ("vmknic-subnets-differ", 0),
];

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

fn analyze(scenario: &str, format: &str) -> (String, i32) {
    let output = Command::cargo_bin("pvrdma-doctor")
        .expect("binary builds")
        .args(["analyze", "--color", "never", "--format", format])
        .arg(samples().join(scenario))
        .env_remove("NO_COLOR")
        .output()
        .expect("binary runs");
    assert!(
        output.stderr.is_empty(),
        "{scenario}: unexpected stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        String::from_utf8(output.stdout).expect("utf-8 report"),
        output.status.code().unwrap_or(-1),
    )
}

fn json(scenario: &str) -> serde_json::Value {
    let (text, _) = analyze(scenario, "json");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{scenario}: stdout is not one JSON document: {e}\n{text}"))
}

#[test]
fn every_scenario_has_a_reviewed_report_and_exit_code() {
    for (scenario, expected) in SCENARIOS {
        let (human, code) = analyze(scenario, "human");
        assert_eq!(code, *expected, "{scenario}: exit code\n{human}");
        insta::assert_snapshot!(format!("{scenario}.human"), human);
        let (json_text, json_code) = analyze(scenario, "json");
        assert_eq!(json_code, *expected, "{scenario}: exit code with --format json");
        insta::assert_snapshot!(format!("{scenario}.json"), json_text);
    }
}

#[test]
fn every_scenario_directory_is_listed_here() {
    let mut on_disk: Vec<String> = std::fs::read_dir(samples())
        .expect("samples/ exists")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != "vm-support")
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = SCENARIOS.iter().map(|(s, _)| s.to_string()).collect();
    listed.sort();
    assert_eq!(
        on_disk, listed,
        "a scenario without an expected exit code is an untested scenario"
    );
}

fn host<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["hosts"]
        .as_array()
        .and_then(|h| h.iter().find(|h| h["host"] == name))
        .unwrap_or_else(|| panic!("no host {name}"))
}

fn check<'a>(host: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    host["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no check {id}"))
}

#[test]
fn json_report_has_the_documented_shape() {
    let report = json("esxi80-mixed-fleet");
    assert_eq!(report["schema"], "pvrdma-doctor/report/v1");
    for h in report["hosts"].as_array().expect("hosts[]") {
        for key in ["host", "status", "error", "checks", "vms"] {
            assert!(h.get(key).is_some(), "host entry lacks {key}: {h}");
        }
        for c in h["checks"].as_array().expect("checks[]") {
            for key in ["id", "status", "summary", "remedy", "evidence"] {
                assert!(c.get(key).is_some(), "check lacks {key}: {c}");
            }
        }
        for vm in h["vms"].as_array().expect("vms[]") {
            assert!(
                !vm["adapters"].as_array().expect("adapters[]").is_empty(),
                "VMs without PVRDMA adapters are not listed"
            );
        }
    }
    assert!(report["pairs"].is_array());
    assert!(report["summary"]["line"].is_string());
    let esx03 = host(&report, "esx03");
    assert_eq!(esx03["status"], "unreachable");
    assert_eq!(esx03["error"]["kind"], "unreachable");
}

#[test]
fn healthy_cluster_uses_rdma_between_hosts() {
    let report = json("healthy-cluster");
    for name in ["esx01", "esx02"] {
        let h = host(&report, name);
        assert_eq!(h["status"], "ok", "{name}");
        for c in h["checks"].as_array().expect("checks") {
            assert_eq!(c["status"], "pass", "{name}: {c}");
        }
    }
    let pairs = report["pairs"].as_array().expect("pairs");
    assert!(!pairs.is_empty());
    assert!(pairs.iter().all(|p| p["transport"] == "rdma"), "{pairs:?}");
    assert_eq!(report["summary"]["hca"], 2);
}

#[test]
fn disabled_pvrdma_ruleset_fails_with_the_exact_fix() {
    let report = json("firewall-pvrdma-disabled");
    let h = host(&report, "esx01");
    let c = check(h, "firewall-pvrdma");
    assert_eq!(c["status"], "fail");
    assert_eq!(c["remedy"], "esxcli network firewall ruleset set -e true -r pvrdma");
    let adapter = &h["vms"][0]["adapters"][0];
    assert_eq!(adapter["verdict"], "tcp-fallback");
    let reasons = adapter["reasons"].to_string();
    assert!(
        reasons.contains("firewall-pvrdma"),
        "the failing check explains the fallback: {reasons}"
    );
}

#[test]
fn untagged_vmknic_fix_names_the_vmknic_bound_to_the_hca() {
    let report = json("vmknic-untagged");
    let c = check(host(&report, "esx01"), "pvrdma-vmknic-tagged");
    assert_eq!(c["status"], "fail");
    let remedy = c["remedy"].as_str().expect("remedy");
    assert!(
        remedy.starts_with("esxcli system settings advanced set -o /Net/PVRDMAVmknic -s vmk"),
        "{remedy}"
    );
}

#[test]
fn adapter_on_the_wrong_switch_is_explained_by_its_own_port() {
    let report = json("vm-two-adapters");
    let h = host(&report, "esx01");
    assert!(h["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .all(|c| c["status"] != "fail"));
    let adapters = h["vms"][0]["adapters"].as_array().expect("adapters");
    assert_eq!(adapters.len(), 2);
    assert_eq!(adapters[0]["verdict"], "hca");
    assert_eq!(adapters[1]["verdict"], "tcp-fallback");
    let reasons = adapters[1]["reasons"].to_string();
    assert!(reasons.contains("vSwitch0"), "{reasons}");
}

#[test]
fn two_uplinks_on_the_vds_is_teaming() {
    let report = json("dvs-two-uplinks");
    let c = check(host(&report, "esx01"), "dvs-single-uplink");
    assert_eq!(c["status"], "fail");
    assert!(c["summary"].as_str().expect("summary").contains("vmnic3"));
}

#[test]
fn broken_output_is_unknown_never_a_pass() {
    let report = json("broken-output");
    let h = host(&report, "esx01");
    assert_eq!(check(h, "rdma-device-present")["status"], "unknown");
    assert_eq!(check(h, "firewall-pvrdma")["status"], "unknown");
    let verdicts: Vec<&serde_json::Value> = h["vms"]
        .as_array()
        .expect("vms")
        .iter()
        .flat_map(|v| v["adapters"].as_array().expect("adapters"))
        .map(|a| &a["verdict"])
        .collect();
    assert!(verdicts.iter().any(|v| *v == "unknown"), "{verdicts:?}");
}

#[test]
fn list_checks_names_every_command_and_check() {
    let output = Command::cargo_bin("pvrdma-doctor")
        .expect("binary")
        .arg("--list-checks")
        .output()
        .expect("runs");
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).expect("utf-8");
    for spec in pvrdma_doctor::catalogue::CATALOGUE {
        assert!(
            text.contains(spec.id) && text.contains(spec.command),
            "{} missing",
            spec.id
        );
    }
    for (id, _) in pvrdma_doctor::diagnose::CHECKS {
        assert!(text.contains(id), "{id} missing");
    }
}

#[test]
fn analyze_of_a_missing_path_is_a_usage_error() {
    let output = Command::cargo_bin("pvrdma-doctor")
        .expect("binary")
        .args(["analyze", "/nonexistent/capture"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent/capture"));
    assert!(output.stdout.is_empty());
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let run = |args: &[&str]| {
        let output = Command::cargo_bin("pvrdma-doctor")
            .expect("binary")
            .arg("analyze")
            .args(args)
            .arg(samples().join("esxi80-mixed-fleet"))
            .output()
            .expect("runs");
        String::from_utf8(output.stdout).expect("utf-8")
    };
    // The test's stdout is a pipe, not a terminal: `auto` means no colour.
    assert!(!run(&[]).contains('\x1b'));
    assert!(run(&["--color", "always"]).contains("\x1b[31m"));
    assert!(
        !run(&["--color", "always", "--format", "json"]).contains('\x1b'),
        "JSON is never coloured"
    );
}

#[test]
fn a_failed_adapter_listing_is_never_read_as_no_adapters() {
    let report = json("vsish-listing-failed");
    let h = host(&report, "esx01");
    assert_eq!(h["status"], "incomplete");
    // The .vmx inventory still names the PVRDMA VM and adapter vsish could not list:
    // unknown, with vsish's failure as the reason, never "no adapters".
    let vms = h["vms"].as_array().expect("vms");
    assert_eq!(vms.len(), 1, "{h}");
    assert_eq!(vms[0]["name"], "hpc-node01");
    let adapter = &vms[0]["adapters"][0];
    assert_eq!(adapter["verdict"], "unknown");
    assert!(
        adapter["reasons"][0]
            .as_str()
            .expect("reason")
            .contains("VSISHPath_Form"),
        "{adapter}"
    );
    assert_eq!(report["summary"]["unknown"], 1);
}

#[test]
fn one_failed_iteration_of_a_batch_keeps_the_other_sections() {
    // broken-output's properties batch exits 1 because its last vsish call failed.
    let report = json("broken-output");
    let vms = host(&report, "esx01")["vms"].as_array().expect("vms").clone();
    let verdict = |name: &str| {
        vms.iter()
            .find(|v| v["name"] == name)
            .map(|v| v["adapters"][0]["verdict"].clone())
    };
    assert_eq!(verdict("hpc-node01"), Some(serde_json::json!("hca")));
    assert_eq!(verdict("hpc-node03"), Some(serde_json::json!("unknown")));
}

#[test]
fn teaming_on_any_hca_vds_is_found_and_the_adapter_is_judged_on_its_own_vds() {
    let report = json("two-hcas-second-vds-teamed");
    let h = host(&report, "esx01");
    let c = check(h, "dvs-single-uplink");
    assert_eq!(c["status"], "fail");
    assert!(c["summary"].as_str().expect("summary").contains("DSwitch-B"), "{c}");
    let reasons = h["vms"][0]["adapters"][0]["reasons"].to_string();
    assert!(
        reasons.contains("vmnic4") && !reasons.contains("port group of DSwitch-RDMA"),
        "{reasons}"
    );
}

#[test]
fn an_adapter_on_a_roce_version_the_hca_lacks_fails_the_host() {
    let report = json("roce-version-mismatch");
    let c = check(host(&report, "esx01"), "roce-supported");
    assert_eq!(c["status"], "fail");
    assert!(c["summary"].as_str().expect("summary").contains("RoCE v1"));
}

#[test]
fn unknown_checks_are_named_when_nothing_else_explains_a_fallback() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host_dir = dir.path().join("esx01");
    std::fs::create_dir(&host_dir).expect("mkdir");
    for entry in std::fs::read_dir(samples().join("healthy-cluster/esx01")).expect("sample") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), host_dir.join(entry.file_name())).expect("copy");
    }
    // The RDMA device list is cut after its header and the adapter has no HCA.
    std::fs::write(
        host_dir.join("esxcli_rdma_device_list.txt"),
        "Name     Driver      State\n",
    )
    .expect("write");
    let props = std::fs::read_to_string(host_dir.join("vsish_pvrdma_properties.txt")).expect("read");
    std::fs::write(
        host_dir.join("vsish_pvrdma_properties.txt"),
        props.replace("Physical HCA available:1", "Physical HCA available:0"),
    )
    .expect("write");
    let output = Command::cargo_bin("pvrdma-doctor")
        .expect("binary")
        .args(["analyze", "--format", "json"])
        .arg(dir.path())
        .output()
        .expect("runs");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    let reasons = report["hosts"][0]["vms"][0]["adapters"][0]["reasons"].to_string();
    assert!(
        reasons.contains("rdma-device-present") && !reasons.contains("every host check passes"),
        "{reasons}"
    );
}

#[test]
fn vmknics_in_different_subnets_are_flagged_across_hosts() {
    let report = json("vmknic-subnets-differ");
    let c = report["fleet_checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == "vmknic-subnets"))
        .expect("vmknic-subnets");
    assert_eq!(c["status"], "warn");
    assert!(c["summary"].as_str().expect("summary").contains("10.20.10.0/24"), "{c}");
    assert_eq!(host(&report, "esx02")["pvrdma_vmknic"]["ipv4"], "10.20.10.12");
    let healthy = json("healthy-cluster");
    assert_eq!(healthy["fleet_checks"][0]["status"], "pass");
}
