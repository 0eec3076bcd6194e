//! The shipped alerting rules under `promtool test rules`: every alert rendered (labels
//! and whole texts, so no template can glue two values together), fed with the series the
//! exporter and the textfile really expose (captured here, on each path), and with
//! timelines a person would page on: an exporter killed and restarted while a host is
//! broken, a host that stops answering, a verdict that turns unknown, paths that
//! disagree. Every `runbook_url` points at a section of the monitoring guide that exists.
use crate::prometheus::{doctor, parse, require, root, PROMTOOL};
use crate::serve::{exporter, get};

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

pub(crate) fn shipped(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A series in promtool's notation.
pub(crate) fn series_name(name: &str, labels: &[(String, String)]) -> String {
    let inner: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}={}", serde_json::to_string(v).expect("a string")))
        .collect();
    format!("{name}{{{}}}", inner.join(","))
}

/// The input series of one scraped exposition, with the labels the scrape adds; the
/// run's timestamp becomes fresh at every step (the staleness rule has its own test).
pub(crate) fn input_series(text: &str, job: &str, instance: &str) -> Vec<Value> {
    parse(text)
        .into_iter()
        .map(|(name, labels, value)| {
            let mut l: Vec<(String, String)> = labels.into_iter().collect();
            l.push(("job".into(), job.into()));
            l.push(("instance".into(), instance.into()));
            let values = if name == "pvrdma_last_run_timestamp_seconds" {
                "0+15x40".to_string()
            } else {
                format!("{value}x40")
            };
            json!({"series": series_name(&name, &l), "values": values})
        })
        .collect()
}

/// What the JSON report says about the demo's esx02: its adapter's reasons and the
/// remedy of its failing check (the oracle of the alert texts).
fn esx02_from_the_report() -> (String, String) {
    let (out, _, stderr) = doctor(&["demo", "--no-progress", "--format", "json"]);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let host = report["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .find(|h| h["host"] == "esx02")
        .expect("esx02")
        .clone();
    let reasons: Vec<String> = host["vms"][0]["adapters"][0]["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .map(|r| r.as_str().expect("text").to_string())
        .collect();
    let check = host["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["status"] == "fail")
        .expect("a failing check");
    assert_eq!(check["id"], "firewall-pvrdma");
    (
        reasons.join("; "),
        check["remedy"].as_str().expect("remedy").to_string(),
    )
}

pub(crate) fn promtool_test(dir: &Path, tests: Value) -> String {
    std::fs::write(
        dir.join("rules.yml"),
        shipped("contrib/prometheus/pvrdma-doctor.rules.yml"),
    )
    .unwrap();
    std::fs::write(dir.join("test.yml"), serde_json::to_string_pretty(&tests).unwrap()).unwrap();
    let out = Command::new(PROMTOOL)
        .args(["test", "rules", "test.yml"])
        .current_dir(dir)
        .output()
        .expect("promtool runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success() && said.contains("SUCCESS"), "{said}");
    said
}

#[test]
#[ignore = "needs promtool: scripts/test.sh runs it"]
fn the_rules_name_host_vm_adapter_cause_and_fix_on_every_path_from_captured_series() {
    require(PROMTOOL);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(PROMTOOL)
        .args(["check", "rules"])
        .arg(root().join("contrib/prometheus/pvrdma-doctor.rules.yml"))
        .output()
        .expect("promtool runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));

    // What each path really serves: the exporter's per-host and group probes, and the
    // textfile a one-shot run writes.
    let (_exp, addr) = exporter(dir.path(), &["demo", "--serve"]);
    let mut per_host = Vec::new();
    for host in ["esx01", "esx02", "esx03"] {
        let (status, body) = get(&addr, &format!("/probe?target={host}"));
        assert_eq!(status, 200, "{host}: {body}");
        per_host.extend(input_series(&body, "pvrdma", host));
    }
    let (status, body) = get(&addr, "/probe?target=demo");
    assert_eq!(status, 200, "{body}");
    let group = input_series(&body, "pvrdma-groups", "demo");
    let (textfile_text, _, stderr) = doctor(&["demo", "--no-progress", "--format", "prometheus"]);
    assert!(textfile_text.contains("pvrdma_host_up"), "{stderr}");
    let textfile = input_series(&textfile_text, "node", "textfile:9100");

    let (why, fix) = esx02_from_the_report();
    // Why esx03 was not read, as each run says it (the port is the demo's own, so it is
    // read from the series; the template must render it once, whichever paths carry it).
    let why_esx03 = |text: &str| -> String {
        let failure = parse(text)
            .into_iter()
            .find(|(name, _, _)| name == "pvrdma_host_read_failure_info")
            .expect("esx03 says why it was not read")
            .1;
        assert_eq!(failure["class"], "unreachable");
        assert!(failure["message"].contains("cannot connect"), "{failure:?}");
        failure["message"].clone()
    };
    let exporter_why = why_esx03(&get(&addr, "/probe?target=esx03").1);
    let textfile_why = why_esx03(&textfile_text);
    let fallback = json!({
        "exp_labels": {"severity": "critical", "host_name": "esx02", "vm_name": "hpc-node02", "adapter": "0"},
        "exp_annotations": {
            "summary": "PVRDMA adapter 0 of VM hpc-node02 on ESXi host esx02 falls back to TCP",
            "description": format!("PVRDMA adapter 0 of VM hpc-node02 on ESXi host esx02 sends its traffic to other hosts over TCP, not through the physical HCA (vsish `Physical HCA available:0`). Why: {why}. Fix: `{fix}` (firewall-pvrdma). The whole diagnosis: `pvrdma-doctor esx02`."),
            "runbook_url": "docs/monitoring-prometheus.md#pvrdmaadaptertcpfallback",
        }
    });
    let check = json!({
        "exp_labels": {"severity": "critical", "host_name": "esx02", "check": "firewall-pvrdma"},
        "exp_annotations": {
            "summary": "PVRDMA host check firewall-pvrdma fails on ESXi host esx02",
            "description": format!("The pvrdma-doctor host check firewall-pvrdma fails on ESXi host esx02: PVRDMA traffic of its VMs cannot use the HCA as the host is set up. Fix: `{fix}`. The whole diagnosis: `pvrdma-doctor esx02`."),
            "runbook_url": "docs/monitoring-prometheus.md#pvrdmacheckfailing",
        }
    });
    let not_read = |message: &str| {
        json!({
            "exp_labels": {"severity": "warning", "host_name": "esx03"},
            "exp_annotations": {
                "summary": "pvrdma-doctor cannot read ESXi host esx03: its PVRDMA adapters are not watched",
                "description": format!("pvrdma-doctor has not read ESXi host esx03 for 2 minutes, so a fallback there would go unseen. Why: unreachable: {message}. Again by hand: `pvrdma-doctor esx03`."),
                "runbook_url": "docs/monitoring-prometheus.md#pvrdmahostnotread",
            }
        })
    };
    // Each path on its own, then a host scraped both alone and in its group: it alerts
    // once, from its per-host series.
    let both: Vec<Value> = per_host.iter().chain(&group).cloned().collect();
    let mut cases = Vec::new();
    for (series, why) in [
        (per_host, &exporter_why),
        (group, &exporter_why),
        (textfile, &textfile_why),
        (both, &exporter_why),
    ] {
        cases.push(json!({
            "interval": "15s",
            "input_series": series,
            "alert_rule_test": [
                // Not yet: 45 s of `for` have not passed.
                {"eval_time": "30s", "alertname": "PvrdmaAdapterTcpFallback", "exp_alerts": []},
                {"eval_time": "1m", "alertname": "PvrdmaAdapterTcpFallback", "exp_alerts": [fallback.clone()]},
                {"eval_time": "1m", "alertname": "PvrdmaCheckFailing", "exp_alerts": [check.clone()]},
                {"eval_time": "1m45s", "alertname": "PvrdmaHostNotRead", "exp_alerts": []},
                {"eval_time": "2m15s", "alertname": "PvrdmaHostNotRead", "exp_alerts": [not_read(why)]},
                {"eval_time": "5m", "alertname": "PvrdmaFleetCheckFailing", "exp_alerts": []},
                {"eval_time": "5m", "alertname": "PvrdmaMetricsStale", "exp_alerts": []},
                {"eval_time": "5m", "alertname": "PvrdmaHostVanished", "exp_alerts": []},
                {"eval_time": "5m", "alertname": "PvrdmaHostUnwatched", "exp_alerts": []},
                {"eval_time": "9m", "alertname": "PvrdmaMetricsAbsent", "exp_alerts": []},
                {"eval_time": "9m", "alertname": "PvrdmaExporterDown", "exp_alerts": []},
            ],
        }));
    }
    let tests = json!({"rule_files": ["rules.yml"], "evaluation_interval": "15s", "tests": cases});
    promtool_test(dir.path(), tests);
}

/// One input series: `name{labels}` with promtool's `values` notation.
fn s(name: &str, labels: &[(&str, &str)], values: &str) -> Value {
    let l: Vec<(String, String)> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    json!({"series": series_name(name, &l), "values": values})
}

const EXPORTER: &str = "127.0.0.1:39155";

/// The series of esx02's per-host probe through [`KILLED_UP`]: its firewall check fails
/// and its adapter falls back until mended.
fn esx02_series() -> Vec<Value> {
    let base = [
        ("job", "pvrdma"),
        ("instance", "esx02"),
        ("exporter", EXPORTER),
        ("host_name", "esx02"),
    ];
    let with = |extra: &[(&'static str, &'static str)]| -> Vec<(&str, &str)> {
        base.iter().copied().chain(extra.iter().copied()).collect()
    };
    let adapter = |verdict| with(&[("vm_name", "hpc-node02"), ("adapter", "0"), ("verdict", verdict)]);
    vec![
        s("pvrdma_host_up", &base, KILLED_SERIES),
        s(
            "pvrdma_check_status",
            &with(&[("check", "firewall-pvrdma"), ("status", "fail")]),
            KILLED_FAULT,
        ),
        s(
            "pvrdma_check_status",
            &with(&[("check", "firewall-pvrdma"), ("status", "pass")]),
            KILLED_MENDED,
        ),
        s("pvrdma_adapter_verdict", &adapter("tcp-fallback"), KILLED_FAULT),
        s("pvrdma_adapter_verdict", &adapter("hca"), KILLED_MENDED),
        s("pvrdma_adapters", &with(&[("verdict", "tcp-fallback")]), KILLED_SERIES),
    ]
}

// Steps of 15 s: up to 3m (13 samples), the exporter killed at 3m15s (its series go stale,
// `up` is 0) until 9m, back at 9m15s; the fault is mended at 11m15s.
const KILLED_UP: &str = "1x12 0x23 1x23";
const KILLED_SERIES: &str = "1x12 stale _x23 1x23";
const KILLED_FAULT: &str = "1x12 stale _x23 1x7 0x15";
const KILLED_MENDED: &str = "0x12 stale _x23 0x7 1x15";
const UNREAD: &str = "0x12 stale _x23 0x23";

fn firing(alert: &str, labels: Value, annotations: Value) -> Value {
    let mut l = labels;
    l["alertname"] = json!(alert);
    json!({"exp_labels": l, "exp_annotations": annotations})
}

#[test]
#[ignore = "needs promtool: scripts/test.sh runs it"]
fn an_exporter_killed_and_restarted_pages_once_and_a_fault_resolves_only_when_mended() {
    require(PROMTOOL);
    let dir = tempfile::tempdir().expect("tempdir");
    let up = |job: &str, instance: &str| {
        s(
            "up",
            &[("job", job), ("instance", instance), ("exporter", EXPORTER)],
            KILLED_UP,
        )
    };
    let mut series = vec![
        up("pvrdma", "esx02"),
        up("pvrdma", "esx03"),
        up("pvrdma-exporter", EXPORTER),
        s(
            "pvrdma_doctor_build_info",
            &[
                ("job", "pvrdma-exporter"),
                ("instance", EXPORTER),
                ("exporter", EXPORTER),
                ("version", "0.1.0"),
            ],
            KILLED_SERIES,
        ),
    ];
    series.extend(esx02_series());
    let esx03 = [
        ("job", "pvrdma"),
        ("instance", "esx03"),
        ("exporter", EXPORTER),
        ("host_name", "esx03"),
    ];
    series.push(s("pvrdma_host_up", &esx03, UNREAD));
    let mut why = esx03.to_vec();
    why.extend([
        ("class", "unreachable"),
        ("message", "esx03:22: cannot connect (Connection refused)"),
    ]);
    series.push(s("pvrdma_host_read_failure_info", &why, KILLED_SERIES));

    let fallback = firing(
        "PvrdmaAdapterTcpFallback",
        json!({"severity": "critical", "host_name": "esx02", "vm_name": "hpc-node02", "adapter": "0"}),
        json!({
            "summary": "PVRDMA adapter 0 of VM hpc-node02 on ESXi host esx02 falls back to TCP",
            "description": "PVRDMA adapter 0 of VM hpc-node02 on ESXi host esx02 sends its traffic to other hosts over TCP, not through the physical HCA (vsish `Physical HCA available:0`). The whole diagnosis: `pvrdma-doctor esx02`.",
            "runbook_url": "docs/monitoring-prometheus.md#pvrdmaadaptertcpfallback",
        }),
    );
    let check = firing(
        "PvrdmaCheckFailing",
        json!({"severity": "critical", "host_name": "esx02", "check": "firewall-pvrdma"}),
        json!({
            "summary": "PVRDMA host check firewall-pvrdma fails on ESXi host esx02",
            "description": "The pvrdma-doctor host check firewall-pvrdma fails on ESXi host esx02: PVRDMA traffic of its VMs cannot use the HCA as the host is set up. The whole diagnosis: `pvrdma-doctor esx02`.",
            "runbook_url": "docs/monitoring-prometheus.md#pvrdmacheckfailing",
        }),
    );
    let not_read = |why: &str| {
        firing(
            "PvrdmaHostNotRead",
            json!({"severity": "warning", "host_name": "esx03"}),
            json!({
                "summary": "pvrdma-doctor cannot read ESXi host esx03: its PVRDMA adapters are not watched",
                "description": format!("pvrdma-doctor has not read ESXi host esx03 for 2 minutes, so a fallback there would go unseen{why}. Again by hand: `pvrdma-doctor esx03`."),
                "runbook_url": "docs/monitoring-prometheus.md#pvrdmahostnotread",
            }),
        )
    };
    let read_why = not_read(". Why: unreachable: esx03:22: cannot connect (Connection refused)");
    // While the exporter is down the reason is not in Prometheus any more: the text
    // says nothing rather than something old.
    let down_why = not_read("");
    let exporter_down = firing(
        "PvrdmaExporterDown",
        json!({"severity": "critical", "exporter": EXPORTER}),
        json!({
            "summary": format!("Prometheus cannot scrape the pvrdma-doctor exporter {EXPORTER}"),
            "description": format!("Prometheus has not scraped the exporter {EXPORTER} for a minute; targets down: {EXPORTER} (job pvrdma-exporter), esx02 (job pvrdma), esx03 (job pvrdma). No PVRDMA alert can fire or resolve for the hosts behind it meanwhile; their alerts are held as last seen and silenced. Check the exporter (`systemctl status pvrdma-doctor-exporter`), or node_exporter for the textfile (`systemctl status prometheus-node-exporter`), and the Targets page of Prometheus."),
            "runbook_url": "docs/monitoring-prometheus.md#pvrdmaexporterdown",
        }),
    );
    let unwatched = |host: &str| {
        firing(
            "PvrdmaHostUnwatched",
            json!({"severity": "none", "host_name": host}),
            json!({
                "summary": format!("No target serving ESXi host {host} can be scraped"),
                "description": "Its alerts are held as last seen and silenced until a target serving it is scraped again; PvrdmaExporterDown is the page.",
                "runbook_url": "docs/monitoring-prometheus.md#pvrdmahostunwatched",
            }),
        )
    };
    let at = |t: &str, alert: &str, exp: Vec<Value>| json!({"eval_time": t, "alertname": alert, "exp_alerts": exp});
    // Up: the faults page.
    let mut checks = vec![
        at("2m30s", "PvrdmaAdapterTcpFallback", vec![fallback.clone()]),
        at("2m30s", "PvrdmaCheckFailing", vec![check.clone()]),
        at("2m30s", "PvrdmaHostNotRead", vec![read_why.clone()]),
        at("2m30s", "PvrdmaHostUnwatched", vec![]),
    ];
    // Killed: one alert for the exporter naming its targets; the hosts' alerts go on,
    // past keep_firing_for (2m) and past MetricsAbsent's 5m, which stays quiet.
    for t in ["4m", "6m", "9m"] {
        checks.push(at(t, "PvrdmaAdapterTcpFallback", vec![fallback.clone()]));
        checks.push(at(t, "PvrdmaCheckFailing", vec![check.clone()]));
        checks.push(at(t, "PvrdmaHostNotRead", vec![down_why.clone()]));
        checks.push(at(
            t,
            "PvrdmaHostUnwatched",
            vec![unwatched("esx02"), unwatched("esx03")],
        ));
        checks.push(at(t, "PvrdmaHostVanished", vec![]));
        checks.push(at(t, "PvrdmaMetricsAbsent", vec![]));
    }
    checks.push(at("4m", "PvrdmaExporterDown", vec![]));
    checks.push(at("4m30s", "PvrdmaExporterDown", vec![exporter_down.clone()]));
    checks.push(at("9m", "PvrdmaExporterDown", vec![exporter_down]));
    // Back: the same alerts, never resolved in between; nothing silenced any more.
    checks.push(at("10m", "PvrdmaExporterDown", vec![]));
    checks.push(at("10m", "PvrdmaHostUnwatched", vec![]));
    checks.push(at("10m", "PvrdmaAdapterTcpFallback", vec![fallback.clone()]));
    checks.push(at("10m", "PvrdmaHostNotRead", vec![read_why]));
    // Mended at 11m15s: resolved once keep_firing_for has passed, not before.
    checks.push(at("12m", "PvrdmaAdapterTcpFallback", vec![fallback]));
    checks.push(at("12m", "PvrdmaCheckFailing", vec![check]));
    checks.push(at("13m30s", "PvrdmaAdapterTcpFallback", vec![]));
    checks.push(at("13m30s", "PvrdmaCheckFailing", vec![]));
    let tests = json!({"rule_files": ["rules.yml"], "evaluation_interval": "15s", "tests": [
        {"interval": "15s", "input_series": series, "alert_rule_test": checks},
    ]});
    promtool_test(dir.path(), tests);
}

// A host that stops answering at 3m15s (no check or adapter series, `pvrdma_host_up` 0)
// and answers again at 9m15s, the fault still there.
const SILENT_UP: &str = "1x12 0x23 1x23";
const SILENT_SERIES: &str = "1x12 stale _x23 1x23";
const SILENT_WHY: &str = "_x13 1x23 stale";

#[test]
#[ignore = "needs promtool: scripts/test.sh runs it"]
fn a_host_that_stops_answering_or_turns_unknown_keeps_its_fault_and_says_why_it_is_not_read() {
    require(PROMTOOL);
    let dir = tempfile::tempdir().expect("tempdir");
    let per_host = |host: &'static str| -> Vec<(&'static str, &'static str)> {
        vec![
            ("job", "pvrdma"),
            ("instance", host),
            ("exporter", EXPORTER),
            ("host_name", host),
        ]
    };
    let group = |host: &'static str| -> Vec<(&'static str, &'static str)> {
        vec![
            ("job", "pvrdma-groups"),
            ("instance", "rack1"),
            ("exporter", EXPORTER),
            ("host_name", host),
        ]
    };
    let with = |base: Vec<(&'static str, &'static str)>, extra: &[(&'static str, &'static str)]| {
        base.into_iter().chain(extra.iter().copied()).collect::<Vec<_>>()
    };
    let mut series = Vec::new();
    for (job, instance) in [
        ("pvrdma", "esx01"),
        ("pvrdma", "esx04"),
        ("pvrdma", "esx05"),
        ("pvrdma", "esx06"),
        ("pvrdma-groups", "rack1"),
    ] {
        series.push(s(
            "up",
            &[("job", job), ("instance", instance), ("exporter", EXPORTER)],
            "1x40",
        ));
    }
    // esx01: broken, then silent, then back with the same fault.
    series.push(s("pvrdma_host_up", &per_host("esx01"), SILENT_UP));
    series.push(s(
        "pvrdma_adapters",
        &with(per_host("esx01"), &[("verdict", "tcp-fallback")]),
        SILENT_SERIES,
    ));
    series.push(s(
        "pvrdma_adapter_verdict",
        &with(
            per_host("esx01"),
            &[("vm_name", "vm1"), ("adapter", "0"), ("verdict", "tcp-fallback")],
        ),
        SILENT_SERIES,
    ));
    series.push(s(
        "pvrdma_check_status",
        &with(per_host("esx01"), &[("check", "firewall-pvrdma"), ("status", "fail")]),
        SILENT_SERIES,
    ));
    series.push(s(
        "pvrdma_host_read_failure_info",
        &with(
            per_host("esx01"),
            &[("class", "timeout"), ("message", "esx01: no answer within 10s")],
        ),
        SILENT_WHY,
    ));
    // esx04: read, its adapter's verdict turns unknown at 3m15s (a command timed out),
    // then hca at 9m15s: mended, resolved after keep_firing_for.
    series.push(s("pvrdma_host_up", &per_host("esx04"), "1x40"));
    series.push(s(
        "pvrdma_adapters",
        &with(per_host("esx04"), &[("verdict", "tcp-fallback")]),
        "1x40",
    ));
    let adapter = |verdict| {
        with(
            per_host("esx04"),
            &[("vm_name", "vm4"), ("adapter", "1"), ("verdict", verdict)],
        )
    };
    series.push(s("pvrdma_adapter_verdict", &adapter("tcp-fallback"), "1x12 stale"));
    series.push(s("pvrdma_adapter_verdict", &adapter("unknown"), "0x12 1x23 0x4"));
    series.push(s("pvrdma_adapter_verdict", &adapter("hca"), "0x12 _x24 1x4"));
    // esx05: not read by either path, each saying why differently (and the per-host
    // and group statuses disagreeing): one text, each reason once, never glued.
    for (base, class, message, status) in [
        (
            per_host("esx05"),
            "unreachable",
            "esx05:22: cannot connect",
            "unreachable",
        ),
        (
            group("esx05"),
            "timeout",
            "esx05: the probe's deadline passed",
            "problems",
        ),
    ] {
        series.push(s("pvrdma_host_up", &base, "0x40"));
        series.push(s(
            "pvrdma_host_status",
            &with(base.clone(), &[("status", status)]),
            "1x40",
        ));
        series.push(s(
            "pvrdma_host_read_failure_info",
            &with(base, &[("class", class), ("message", message)]),
            "1x40",
        ));
    }
    // esx06: read alone, not in its group's probe: it is read.
    series.push(s("pvrdma_host_up", &per_host("esx06"), "1x40"));
    series.push(s("pvrdma_host_up", &group("esx06"), "0x40"));

    let summary = |h: &str| format!("pvrdma-doctor cannot read ESXi host {h}: its PVRDMA adapters are not watched");
    let not_read = |h: &str, why: &str| {
        firing(
            "PvrdmaHostNotRead",
            json!({"severity": "warning", "host_name": h}),
            json!({
                "summary": summary(h),
                "description": format!("pvrdma-doctor has not read ESXi host {h} for 2 minutes, so a fallback there would go unseen. Why: {why}. Again by hand: `pvrdma-doctor {h}`."),
                "runbook_url": "docs/monitoring-prometheus.md#pvrdmahostnotread",
            }),
        )
    };
    let esx05 = not_read(
        "esx05",
        "timeout: esx05: the probe's deadline passed; unreachable: esx05:22: cannot connect",
    );
    let esx01 = not_read("esx01", "timeout: esx01: no answer within 10s");
    let fallback = |h: &str, vm: &str, a: &str| {
        firing(
            "PvrdmaAdapterTcpFallback",
            json!({"severity": "critical", "host_name": h, "vm_name": vm, "adapter": a}),
            json!({
                "summary": format!("PVRDMA adapter {a} of VM {vm} on ESXi host {h} falls back to TCP"),
                "description": format!("PVRDMA adapter {a} of VM {vm} on ESXi host {h} sends its traffic to other hosts over TCP, not through the physical HCA (vsish `Physical HCA available:0`). The whole diagnosis: `pvrdma-doctor {h}`."),
                "runbook_url": "docs/monitoring-prometheus.md#pvrdmaadaptertcpfallback",
            }),
        )
    };
    let at = |t: &str, alert: &str, exp: Vec<Value>| json!({"eval_time": t, "alertname": alert, "exp_alerts": exp});
    let both = || vec![fallback("esx01", "vm1", "0"), fallback("esx04", "vm4", "1")];
    let checks = vec![
        at("2m30s", "PvrdmaAdapterTcpFallback", both()),
        at("2m30s", "PvrdmaHostNotRead", vec![esx05.clone()]),
        // Silent and unknown: the faults are held, esx01 pages as not read, with why.
        at("6m", "PvrdmaAdapterTcpFallback", both()),
        at(
            "6m",
            "PvrdmaCheckFailing",
            vec![firing(
                "PvrdmaCheckFailing",
                json!({"severity": "critical", "host_name": "esx01", "check": "firewall-pvrdma"}),
                json!({
                    "summary": "PVRDMA host check firewall-pvrdma fails on ESXi host esx01",
                    "description": "The pvrdma-doctor host check firewall-pvrdma fails on ESXi host esx01: PVRDMA traffic of its VMs cannot use the HCA as the host is set up. The whole diagnosis: `pvrdma-doctor esx01`.",
                    "runbook_url": "docs/monitoring-prometheus.md#pvrdmacheckfailing",
                }),
            )],
        ),
        at("6m", "PvrdmaHostNotRead", vec![esx01, esx05.clone()]),
        at("6m", "PvrdmaHostUnwatched", vec![]),
        at("6m", "PvrdmaHostVanished", vec![]),
        // Back, the fault unchanged: still the same alert. esx04 mended: resolved.
        at("9m45s", "PvrdmaAdapterTcpFallback", both()),
        at("11m45s", "PvrdmaHostNotRead", vec![esx05]),
        at(
            "11m45s",
            "PvrdmaAdapterTcpFallback",
            vec![fallback("esx01", "vm1", "0")],
        ),
    ];
    let tests = json!({"rule_files": ["rules.yml"], "evaluation_interval": "15s", "tests": [
        {"interval": "15s", "input_series": series, "alert_rule_test": checks},
    ]});
    promtool_test(dir.path(), tests);
}

#[test]
#[ignore = "needs promtool: scripts/test.sh runs it"]
fn the_other_alerts_render_whole_texts_a_fleet_check_a_vanished_host_a_textfile_down_stale_or_unreadable_and_no_metrics(
) {
    require(PROMTOOL);
    let dir = tempfile::tempdir().expect("tempdir");
    let rack = [("job", "pvrdma-groups"), ("instance", "rack1"), ("exporter", EXPORTER)];
    let with = |base: &[(&'static str, &'static str)], extra: &[(&'static str, &'static str)]| {
        base.iter().chain(extra).copied().collect::<Vec<_>>()
    };
    let node = [("job", "node"), ("instance", "textfile:9100")];
    let node2 = [("job", "node"), ("instance", "textfile2:9100")];
    let series = vec![
        s("up", &rack, "1x40"),
        s(
            "pvrdma_fleet_check_status",
            &with(&rack, &[("check", "vmknic-subnets"), ("status", "fail")]),
            "1x40",
        ),
        s(
            "pvrdma_fleet_check_remedy_info",
            &with(
                &rack,
                &[
                    ("check", "vmknic-subnets"),
                    ("remedy", "put the PVRDMA vmknics in one subnet"),
                ],
            ),
            "1x40",
        ),
        // esx07 leaves the group at 2m15s; esx08 stays.
        s("pvrdma_host_up", &with(&rack, &[("host_name", "esx07")]), "1x8 stale"),
        s("pvrdma_host_up", &with(&rack, &[("host_name", "esx08")]), "1x40"),
        // A node_exporter with the textfile, down from 5m15s.
        s("up", &node, "1x20 0x20"),
        s(
            "pvrdma_doctor_build_info",
            &with(&node, &[("version", "0.1.0")]),
            "1x20 stale",
        ),
        s("pvrdma_host_up", &with(&node, &[("host_name", "esx09")]), "1x20 stale"),
        s("pvrdma_last_run_timestamp_seconds", &node, "0+15x20 stale"),
        // Another whose timer stopped at 0 s and which cannot read a file.
        s("up", &node2, "1x40"),
        s("pvrdma_host_up", &with(&node2, &[("host_name", "esx10")]), "1x40"),
        s("pvrdma_last_run_timestamp_seconds", &node2, "0x40"),
        s("node_textfile_scrape_error", &node2, "1x40"),
    ];
    let alert = |name: &str, labels: Value, summary: &str, description: &str| {
        firing(
            name,
            labels,
            json!({"summary": summary, "description": description,
                   "runbook_url": format!("docs/monitoring-prometheus.md#{}", name.to_lowercase())}),
        )
    };
    let at = |t: &str, name: &str, exp: Vec<Value>| json!({"eval_time": t, "alertname": name, "exp_alerts": exp});
    let checks = vec![
        at("1m", "PvrdmaFleetCheckFailing", vec![alert(
            "PvrdmaFleetCheckFailing",
            json!({"severity": "critical", "instance": "rack1", "check": "vmknic-subnets"}),
            "PVRDMA check vmknic-subnets across the hosts of rack1 fails",
            "The pvrdma-doctor check vmknic-subnets, which compares the hosts of rack1 with each other, fails: PVRDMA traffic between some of their VMs cannot use the HCA. Fix: `put the PVRDMA vmknics in one subnet`. The whole diagnosis: run pvrdma-doctor on the same hosts.",
        )]),
        at("2m", "PvrdmaTextfileUnreadable", vec![alert(
            "PvrdmaTextfileUnreadable",
            json!({"severity": "warning", "job": "node", "instance": "textfile2:9100"}),
            "node_exporter on textfile2:9100 cannot read a textfile",
            "node_exporter on textfile2:9100 reports an error reading its textfile directory for 2 minutes; the series of the file it could not read (pvrdma.prom among them, possibly) are dropped, so the PVRDMA alerts cannot fire there (`journalctl -u prometheus-node-exporter`).",
        )]),
        at("3m", "PvrdmaHostVanished", vec![]),
        at("3m30s", "PvrdmaHostVanished", vec![alert(
            "PvrdmaHostVanished",
            json!({"severity": "warning", "job": "pvrdma-groups", "instance": "rack1", "exporter": EXPORTER, "host_name": "esx07"}),
            "ESXi host esx07 vanished from the PVRDMA metrics of rack1",
            "The series of ESXi host esx07 (job pvrdma-groups, rack1) were scraped within the last hour and are gone while the target is scraped: the host left the host list or the group, or the textfile was rewritten without it. If on purpose, this ends an hour after; else restore it.",
        )]),
        at("6m", "PvrdmaMetricsStale", vec![alert(
            "PvrdmaMetricsStale",
            json!({"severity": "warning", "job": "node", "instance": "textfile2:9100"}),
            "pvrdma-doctor metrics on textfile2:9100 are stale",
            "The last pvrdma-doctor run behind textfile2:9100 (job node) finished 6m 0s ago, more than twice the textfile timer's 2 minutes: the timer stopped or every run fails (`systemctl status pvrdma-doctor-textfile.timer pvrdma-doctor-textfile.service`). Fallbacks since then go unseen.",
        )]),
        // The node_exporter down: one alert for it; its host did not vanish.
        at("6m30s", "PvrdmaExporterDown", vec![alert(
            "PvrdmaExporterDown",
            json!({"severity": "critical", "job": "node", "instance": "textfile:9100"}),
            "Prometheus cannot scrape the PVRDMA metrics of textfile:9100 (job node)",
            "Prometheus has not scraped textfile:9100 of job node for a minute. No PVRDMA alert can fire or resolve for the hosts behind it meanwhile; their alerts are held as last seen and silenced. Check the exporter (`systemctl status pvrdma-doctor-exporter`), or node_exporter for the textfile (`systemctl status prometheus-node-exporter`), and the Targets page of Prometheus.",
        )]),
        at("7m", "PvrdmaHostVanished", vec![alert(
            "PvrdmaHostVanished",
            json!({"severity": "warning", "job": "pvrdma-groups", "instance": "rack1", "exporter": EXPORTER, "host_name": "esx07"}),
            "ESXi host esx07 vanished from the PVRDMA metrics of rack1",
            "The series of ESXi host esx07 (job pvrdma-groups, rack1) were scraped within the last hour and are gone while the target is scraped: the host left the host list or the group, or the textfile was rewritten without it. If on purpose, this ends an hour after; else restore it.",
        )]),
        at("7m", "PvrdmaMetricsAbsent", vec![]),
    ];
    // Nothing scraped has any pvrdma series.
    let empty = vec![s("up", &[("job", "node"), ("instance", "other:9100")], "1x40")];
    let absent = vec![
        at("4m45s", "PvrdmaMetricsAbsent", vec![]),
        at("5m15s", "PvrdmaMetricsAbsent", vec![alert(
            "PvrdmaMetricsAbsent",
            json!({"severity": "warning"}),
            "No pvrdma-doctor metrics in Prometheus",
            "These rules are loaded but Prometheus holds no pvrdma_host_up series while every target it scrapes answers: no job scrapes the exporter or a node_exporter with the textfile, so no PVRDMA alert can fire. Check the scrape configuration.",
        )]),
    ];
    let tests = json!({"rule_files": ["rules.yml"], "evaluation_interval": "15s", "tests": [
        {"interval": "15s", "input_series": series, "alert_rule_test": checks},
        {"interval": "15s", "input_series": empty, "alert_rule_test": absent},
    ]});
    promtool_test(dir.path(), tests);
}

/// GitHub's anchor of a Markdown heading: lower case, spaces to `-`, punctuation gone.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn every_alert_has_a_runbook_url_that_points_at_a_section_of_the_guide() {
    let rules = shipped("contrib/prometheus/pvrdma-doctor.rules.yml");
    let alerts: Vec<&str> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- alert: "))
        .collect();
    assert!(alerts.len() >= 10, "{alerts:?}");
    let urls: Vec<&str> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("runbook_url: "))
        .collect();
    assert_eq!(urls.len(), alerts.len(), "one runbook_url per alert: {urls:?}");
    for (alert, url) in alerts.iter().zip(&urls) {
        let (file, section) = url
            .split_once('#')
            .unwrap_or_else(|| panic!("{alert}: {url} has no anchor"));
        let doc = shipped(file);
        let anchors: Vec<String> = doc
            .lines()
            .filter(|l| l.starts_with('#'))
            .map(|l| anchor(l.trim_start_matches('#')))
            .collect();
        assert!(
            anchors.iter().any(|a| a == section),
            "{alert}: no heading for #{section} in {file}"
        );
        assert_eq!(
            section,
            alert.to_lowercase(),
            "{alert} points at another alert's section"
        );
    }
}

/// vCenter `lab` goes away at 2m: its no_ssh group `quiet` goes on answering from the read
/// kept, its target's run timestamp freezing; vCenter `east` was never read, so its group
/// `gpu` answers 503 from the start. One page per vCenter, naming its groups and how old
/// their read is; no PvrdmaExporterDown for the 503, no PvrdmaMetricsStale for the frozen
/// timestamp; the hosts only the stale target serves are silenced (PvrdmaHostStale), a
/// host another target reads fresh is not.
#[test]
#[ignore = "needs promtool: scripts/test.sh runs it"]
fn a_vcenter_that_cannot_be_read_pages_once_and_holds_back_what_follows() {
    require(PROMTOOL);
    let dir = tempfile::tempdir().expect("tempdir");
    let exporter = [
        ("job", "pvrdma-exporter"),
        ("instance", EXPORTER),
        ("exporter", EXPORTER),
    ];
    let quiet = [("job", "pvrdma-groups"), ("instance", "quiet"), ("exporter", EXPORTER)];
    let gpu = [("job", "pvrdma-groups"), ("instance", "gpu"), ("exporter", EXPORTER)];
    let esx06 = [("job", "pvrdma"), ("instance", "esx06"), ("exporter", EXPORTER)];
    let with = |base: &[(&'static str, &'static str)], extra: &[(&'static str, &'static str)]| {
        base.iter().chain(extra).copied().collect::<Vec<_>>()
    };
    let series = vec![
        s("up", &exporter, "1x60"),
        s(
            "pvrdma_doctor_vcenter_group_stale",
            &with(&exporter, &[("group", "quiet"), ("vcenter", "lab")]),
            "0x8 1x52",
        ),
        // Read every 15 s until 2m, then never again: 20 s old at 2m15s.
        s(
            "pvrdma_doctor_vcenter_group_read_age_seconds",
            &with(&exporter, &[("group", "quiet"), ("vcenter", "lab")]),
            "5x8 20+15x52",
        ),
        s(
            "pvrdma_doctor_vcenter_group_stale",
            &with(&exporter, &[("group", "gpu"), ("vcenter", "east")]),
            "1x60",
        ),
        s("up", &gpu, "0x60"),
        s("up", &quiet, "1x60"),
        s("pvrdma_up", &quiet, "1x60"),
        s("pvrdma_vcenter_read_stale", &quiet, "0x8 1x52"),
        s("pvrdma_last_run_timestamp_seconds", &quiet, "0+15x8 120x52"),
        s("pvrdma_host_up", &with(&quiet, &[("host_name", "esx05")]), "1x60"),
        s("pvrdma_host_up", &with(&quiet, &[("host_name", "esx06")]), "1x60"),
        s(
            "pvrdma_check_status",
            &with(
                &quiet,
                &[("host_name", "esx05"), ("check", "firewall-pvrdma"), ("status", "fail")],
            ),
            "1x60",
        ),
        // esx06 is also probed alone over SSH: read fresh.
        s("up", &esx06, "1x60"),
        s("pvrdma_host_up", &with(&esx06, &[("host_name", "esx06")]), "1x60"),
        s("pvrdma_last_run_timestamp_seconds", &esx06, "0+15x60"),
    ];
    let unreadable = |vcenter: &str, stale: &str| {
        firing(
            "PvrdmaVcenterUnreadable",
            json!({"severity": "warning", "vcenter": vcenter}),
            json!({
                "summary": format!("The pvrdma-doctor exporter cannot read vCenter {vcenter}: its groups answer from a stale read"),
                "description": format!("The pvrdma-doctor exporter has not read vCenter {vcenter} for longer than its refresh plus its timeout. Stale: {stale}. A group without SSH judges a configuration that may have changed since; a group over SSH probes hosts that may have left it; a group not read yet answers 503. The alerts that follow from it are held back meanwhile. Why: the exporter's log (`journalctl -u pvrdma-doctor-exporter`); check the vCenter's address, account and certificate (`thumbprint:`, `ca:` of its `vcenters:` entry)."),
                "runbook_url": "docs/monitoring-prometheus.md#pvrdmavcenterunreadable",
            }),
        )
    };
    let stale_host = firing(
        "PvrdmaHostStale",
        json!({"severity": "none", "host_name": "esx05"}),
        json!({
            "summary": "ESXi host esx05 is judged from a stale vCenter read",
            "description": "Every target serving it answers from a configuration read from vCenter longer ago than the vCenter's refresh plus timeout; its alerts are held as last read and silenced until vCenter is read again. PvrdmaVcenterUnreadable is the page.",
            "runbook_url": "docs/monitoring-prometheus.md#pvrdmahoststale",
        }),
    );
    let gpu_page = unreadable("east", "group gpu (no hosts read yet)");
    let at = |t: &str, name: &str, exp: Vec<Value>| json!({"eval_time": t, "alertname": name, "exp_alerts": exp});
    let checks = vec![
        at("1m", "PvrdmaVcenterUnreadable", vec![gpu_page.clone()]),
        at("1m", "PvrdmaHostStale", vec![]),
        at("2m15s", "PvrdmaHostStale", vec![stale_host.clone()]),
        at("2m30s", "PvrdmaVcenterUnreadable", vec![gpu_page.clone()]),
        at(
            "3m",
            "PvrdmaVcenterUnreadable",
            vec![gpu_page.clone(), unreadable("lab", "group quiet (read 1m 5s ago)")],
        ),
        // The 503 of gpu since 0 s: not the exporter down.
        at("5m", "PvrdmaExporterDown", vec![]),
        // The frozen timestamp of quiet is 6 min old: not the textfile going stale.
        at("8m", "PvrdmaMetricsStale", vec![]),
        at("8m", "PvrdmaHostStale", vec![stale_host]),
    ];
    let tests = json!({"rule_files": ["rules.yml"], "evaluation_interval": "15s", "tests": [
        {"interval": "15s", "input_series": series, "alert_rule_test": checks},
    ]});
    promtool_test(dir.path(), tests);
}
