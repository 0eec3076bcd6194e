//! Every scenario in samples/ produces a reviewed report (human and JSON) and the
//! documented exit code, through the real binary: `pvrdma-doctor analyze samples/<scenario>`.
use crate::support::client::Doctor;
use std::collections::BTreeSet;
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
    ("probe-paths", 1),
    ("probe-outputs", 1),
    ("management-vmk0-tagged", 0),
    ("two-hcas-each-own-vds", 0),
    ("roce-v1-across-subnets", 1),
    ("vmknic-duplicate-ipv4", 1),
    ("pvrdma-different-vds", 1),
    ("roce-version-differs-in-pair", 0),
    ("option-record-of-another-option", 3),
    ("vm-record-wrapped", 3),
    ("no-rdma-device-empty-output", 1),
    ("esxi65-no-protocol-list", 0),
    ("esxi60-below-minimum", 1),
    ("lossless-network-off", 0),
    ("vm-support-vm-prerequisites", 1),
    ("two-hcas-adapter-on-vswitch0", 1),
    ("three-vms-one-host", 0),
    ("names-with-markup", 0),
];

/// The scenarios and their exit codes, for the suites that read every sample. (The list
/// stays a private `const` at the start of a line: scripts/sample-from-bundle.sh adds to it.)
pub(crate) fn scenarios() -> &'static [(&'static str, i32)] {
    SCENARIOS
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

fn analyze(scenario: &str, format: &str) -> (String, i32) {
    let output = Doctor::new()
        .args(["analyze", "--color", "never", "--format", format])
        .arg(samples().join(scenario))
        .env_remove("NO_COLOR")
        .output();
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
        let (page, html_code) = analyze(scenario, "html");
        assert_eq!(html_code, *expected, "{scenario}: exit code with --format html");
        insta::with_settings!({ filters => html_filters() }, {
            insta::assert_snapshot!(format!("{scenario}.html"), page);
        });
    }
}

/// What a reviewed page leaves out: the time `analyze` read the sample and how long it
/// took, the tool's version, and the style sheet and script, which are the same on every
/// page (`engine/src/report/html/style.css`, `script.js`; the policy line keeps the
/// script's hash, so a changed script still shows in every page's snapshot).
fn html_filters() -> Vec<(&'static str, &'static str)> {
    vec![
        (r#"<time datetime="[^"]*">[^<]*</time>"#, "<time>[time]</time>"),
        (
            r#"<span class="duration">[^<]*</span>"#,
            "<span class=\"duration\">[duration]</span>",
        ),
        (r"pvrdma-doctor \d+\.\d+\.\d+", "pvrdma-doctor [version]"),
        (r"(?s)<style>\n.*?</style>", "<style>[style.css]</style>"),
        (r"(?s)<script>.*?</script>", "<script>[script.js]</script>"),
    ]
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

/// The reviewed JSON report of a scenario, as its snapshot file holds it.
fn reviewed_json(scenario: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/suite/snapshots")
        .join(format!("suite__golden__{scenario}.json.snap"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // insta's header is a `---` block before the snapshot itself.
    let body = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map_or(text.as_str(), |(_, body)| body);
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{}: not a JSON report: {e}", path.display()))
}

#[test]
fn every_registered_check_is_judged_in_some_reviewed_report() {
    // A check the registry lists but no scenario shows passing, warning or failing is a
    // check nobody has seen judged: add the scenario that shows it.
    let mut judged = BTreeSet::new();
    for (scenario, _) in SCENARIOS {
        let report = reviewed_json(scenario);
        let host_checks = report["hosts"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|h| h["checks"].as_array().into_iter().flatten());
        let fleet_checks = report["fleet_checks"].as_array().into_iter().flatten();
        for c in host_checks.chain(fleet_checks) {
            if matches!(c["status"].as_str(), Some("pass" | "warn" | "fail")) {
                judged.insert(c["id"].as_str().unwrap_or("").to_string());
            }
        }
    }
    let never: Vec<&str> = pvrdma_engine::diagnose::CheckId::ALL
        .iter()
        .map(|c| c.id())
        .filter(|id| !judged.contains(*id))
        .collect();
    assert!(never.is_empty(), "registered checks no golden report judges: {never:?}");
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
    // The quadratic pair list was replaced by counted transport classes.
    assert!(report.get("pairs").is_none());
    assert!(report["transport"]["host_pairs"].is_array());
    assert!(report["transport"]["exceptions"].is_array());
    assert!(report["transport"]["totals"]["rdma"].is_u64());
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
    let t = &report["transport"];
    assert_eq!(t["totals"]["rdma"], 1);
    for class in ["tcp", "blocked", "unknown", "memcpy"] {
        assert_eq!(t["totals"][class], 0, "{class}: {t}");
    }
    assert_eq!(t["exceptions"].as_array().map(Vec::len), Some(0), "{t}");
    assert_eq!(report["summary"]["hca"], 2);
}

#[test]
fn three_vms_on_one_host_each_use_the_hca() {
    // The fleet the alerting test breaks one host of: it must start healthy, with every
    // VM of esx01 on the HCA and reaching the other VMs of its host by memcpy.
    let report = json("three-vms-one-host");
    let esx01 = host(&report, "esx01");
    assert_eq!(esx01["status"], "ok");
    let vms = esx01["vms"].as_array().expect("vms");
    let names: Vec<&str> = vms.iter().map(|v| v["name"].as_str().unwrap_or("")).collect();
    assert_eq!(names, ["hpc-node01", "hpc-node04", "hpc-node05"]);
    for vm in vms {
        assert_eq!(vm["adapters"][0]["verdict"], "hca", "{vm}");
    }
    let totals = &report["transport"]["totals"];
    assert_eq!(
        (totals["memcpy"].as_u64(), totals["rdma"].as_u64()),
        (Some(3), Some(7)),
        "{totals}"
    );
    assert_eq!(report["summary"]["hca"], 5);
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
    let list = |args: &[&str]| {
        let output = Doctor::new()
            .arg("--list-checks")
            .args(args)
            .env("COLUMNS", "80")
            .output();
        assert!(output.status.success());
        String::from_utf8(output.stdout).expect("utf-8")
    };
    let text = list(&[]);
    let exact = list(&["-v"]);
    // -v shows each exact command line, wrapped: nothing but whitespace is added or lost.
    let bare = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let joined = bare(&exact);
    for spec in pvrdma_engine::catalogue::CATALOGUE {
        assert!(text.contains(spec.id), "{} missing", spec.id);
        if spec.is_batch() {
            assert!(
                !text.contains(spec.command),
                "{}: the script is shown with -v only",
                spec.id
            );
            assert!(
                joined.contains(&bare(spec.command)),
                "{}: -v shows the exact line",
                spec.id
            );
        } else {
            assert!(text.contains(spec.command), "{} missing", spec.command);
        }
    }
    for (id, _) in pvrdma_engine::diagnose::CHECKS {
        assert!(text.contains(id), "{id} missing");
    }
    // The single-answer commands go as one line: listed, and shown whole with -v and in
    // the JSON list, so what is really sent can be checked.
    let grouped = pvrdma_engine::catalogue::grouped_command().expect("a group");
    assert!(text.contains(pvrdma_engine::catalogue::GROUPED_COMMANDS));
    assert!(joined.contains(&bare(&grouped)), "-v shows the group's exact line");
    let json: serde_json::Value = serde_json::from_str(&list(&["--format", "json"])).expect("JSON");
    assert_eq!(json["grouped_commands"]["command"], grouped.as_str());
    let flagged: Vec<&str> = json["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .filter(|c| c["grouped"] == true)
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(flagged, pvrdma_engine::catalogue::grouped_ids());
}

#[test]
fn analyze_of_a_missing_path_is_a_usage_error() {
    let output = Doctor::new().args(["analyze", "/nonexistent/capture"]).output();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent/capture"));
    assert!(output.stdout.is_empty());
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let run = |args: &[&str]| {
        let output = Doctor::new()
            .arg("analyze")
            .args(args)
            .arg(samples().join("esxi80-mixed-fleet"))
            .output();
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
    let output = Doctor::new()
        .args(["analyze", "--format", "json"])
        .arg(dir.path())
        .output();
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

#[test]
fn the_vmware_papers_layout_vmk0_on_the_management_vswitch_is_healthy() {
    let report = json("management-vmk0-tagged");
    for name in ["esx01", "esx02"] {
        let h = host(&report, name);
        assert_eq!(h["status"], "ok", "{name}");
        for id in ["pvrdma-vmknic-valid", "mtu-consistent"] {
            let c = check(h, id);
            assert_eq!(c["status"], "pass", "{name} {id}: {c}");
        }
        let valid = check(h, "pvrdma-vmknic-valid")["summary"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(
            valid.contains("vSwitch0") && valid.contains("control traffic"),
            "{valid}"
        );
    }
}

#[test]
fn two_hcas_each_alone_on_its_vds_judge_the_vmknic_against_both() {
    let report = json("two-hcas-each-own-vds");
    let h = host(&report, "esx01");
    let c = check(h, "pvrdma-vmknic-valid");
    assert_eq!(c["status"], "pass", "{c}");
    assert!(c["summary"].as_str().unwrap_or("").contains("DSwitch-RDMA-B"), "{c}");
    assert!(c["remedy"].is_null(), "no advice to migrate to the other vDS: {c}");
    let mtu = check(h, "mtu-consistent");
    assert_eq!(mtu["status"], "pass", "{mtu}");
}

#[test]
fn a_pair_a_failing_fleet_check_breaks_is_blocked_and_its_hosts_are_not_healthy() {
    for (scenario, id) in [
        ("roce-v1-across-subnets", "vmknic-subnets"),
        ("vmknic-duplicate-ipv4", "vmknic-ipv4-unique"),
        ("pvrdma-different-vds", "pvrdma-same-vds"),
    ] {
        let report = json(scenario);
        let fleet = report["fleet_checks"].as_array().expect("fleet checks");
        let c = fleet
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("{scenario}: no {id}"));
        assert_eq!(c["status"], "fail", "{scenario}: {c}");
        let t = &report["transport"]["totals"];
        assert_eq!(
            (t["rdma"].as_u64(), t["blocked"].as_u64()),
            (Some(0), Some(1)),
            "{scenario}: {t}"
        );
        for h in report["hosts"].as_array().expect("hosts") {
            assert_eq!(h["status"], "problems", "{scenario}: {}", h["host"]);
            assert_eq!(h["fleet_failures"][0], id, "{scenario}");
        }
        assert_eq!(report["summary"]["healthy"], 0, "{scenario}");
        let line = report["summary"]["line"].as_str().unwrap_or("");
        assert!(line.contains("1 blocked") && line.contains(id), "{scenario}: {line}");
    }
}

#[test]
fn a_roce_version_mismatch_in_a_pair_warns_and_says_the_documentation_is_silent() {
    let report = json("roce-version-differs-in-pair");
    let fleet = report["fleet_checks"].as_array().expect("fleet checks");
    let c = fleet
        .iter()
        .find(|c| c["id"] == "roce-version-pair")
        .expect("roce-version-pair");
    assert_eq!(c["status"], "warn", "{c}");
    assert!(
        c["summary"]
            .as_str()
            .unwrap_or("")
            .contains("documentation does not describe"),
        "{c}"
    );
}

#[test]
fn old_releases_say_what_the_release_cannot_do_instead_of_unknown() {
    let report = json("esxi65-no-protocol-list");
    let h = host(&report, "esx65");
    assert_eq!(h["status"], "ok");
    let roce = check(h, "roce-supported");
    assert_eq!(roce["status"], "pass", "{roce}");
    assert!(roce["summary"]
        .as_str()
        .unwrap_or("")
        .contains("no `esxcli rdma device protocol list`"));

    let report = json("esxi60-below-minimum");
    let h = host(&report, "esx60");
    assert_eq!(h["status"], "problems");
    assert_eq!(check(h, "esxi-version")["status"], "fail");
    for c in h["checks"].as_array().expect("checks").iter().skip(1) {
        assert_eq!(c["status"], "not-applicable", "{c}");
        assert!(c["summary"]
            .as_str()
            .unwrap_or("")
            .contains("not applicable below ESXi 6.5"));
    }
    assert!(h["adapters_error"].is_null());
}

#[test]
fn an_empty_rdma_device_list_means_no_device() {
    let report = json("no-rdma-device-empty-output");
    let h = host(&report, "esx01");
    let c = check(h, "rdma-device-present");
    assert_eq!(c["status"], "fail", "{c}");
    // What depends on a failing check has nothing to judge: not applicable, not unknown
    // (unknown means missing data).
    for id in [
        "rdma-device-active",
        "rdma-uplink-on-dvs",
        "dvs-single-uplink",
        "mtu-consistent",
        "roce-supported",
    ] {
        assert_eq!(check(h, id)["status"], "not-applicable", "{id}");
    }
    assert!(h["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .all(|c| c["status"] != "unknown"));
}

#[test]
fn a_broken_vm_record_costs_that_record_and_says_so() {
    let report = json("vm-record-wrapped");
    let h = host(&report, "esx01");
    assert_eq!(h["status"], "incomplete");
    let errors = h["record_errors"].as_array().expect("record_errors");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].as_str().unwrap_or("").contains("vm process list"));
    // The other VM kept its name.
    assert_eq!(h["vms"][0]["name"], "hpc-node01");
    let (human, _) = analyze("vm-record-wrapped", "human");
    assert!(human.contains("did not parse and was skipped"), "{human}");
}

#[test]
fn another_options_record_is_unknown_not_untagged() {
    let report = json("option-record-of-another-option");
    let c = check(host(&report, "esx01"), "pvrdma-vmknic-tagged");
    assert_eq!(c["status"], "unknown", "{c}");
}

#[test]
fn a_lossy_hca_uplink_warns_and_never_fails() {
    let report = json("lossless-network-off");
    let c = check(host(&report, "esx01"), "lossless-network");
    assert_eq!(c["status"], "warn", "{c}");
    assert!(c["summary"].as_str().unwrap_or("").contains("vmnic2"), "{c}");
    let healthy = json("healthy-cluster");
    let c = check(host(&healthy, "esx01"), "lossless-network");
    assert_eq!(c["status"], "pass", "{c}");
    assert!(c["summary"].as_str().unwrap_or("").contains("PFC on priority 3"), "{c}");
}

#[test]
fn vm_prerequisites_from_vmx_files_fail_with_the_vm_named() {
    let report = json("vm-support-vm-prerequisites");
    let h = host(&report, "esx02");
    for (id, vm) in [
        ("vm-hardware-version", "hpc-hw11"),
        ("vm-memory-reserved", "hpc-unreserved"),
        ("vm-pvrdma-adapter-count", "hpc-two-adapters"),
        ("vm-native-endpoints", "hpc-native-hw17"),
    ] {
        let c = check(h, id);
        assert_eq!(c["status"], "fail", "{c}");
        let summary = c["summary"].as_str().unwrap_or("");
        assert!(summary.contains(vm), "{id}: {summary}");
        assert!(c["remedy"].is_string(), "{c}");
    }
}

#[test]
fn an_adapter_off_the_hca_switches_is_pointed_at_every_usable_vds() {
    let report = json("two-hcas-adapter-on-vswitch0");
    let a = &host(&report, "esx01")["vms"][0]["adapters"][0];
    assert_eq!(a["verdict"], "tcp-fallback");
    let reasons: Vec<&str> = a["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .filter_map(|r| r.as_str())
        .collect();
    let r = reasons.iter().find(|r| r.contains("vSwitch0")).expect("port reason");
    assert!(r.contains("one of DSwitch-RDMA, DSwitch-RDMA-B"), "{r}");
}
