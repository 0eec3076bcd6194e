//! One fault on a host with several PVRDMA VMs is one page, and its mend one "resolved":
//! the shipped rules, `prometheus.yml` and `alertmanager.yml` (receiver swapped, timers
//! divided by ten, as in `alerting.rs`) in front of `demo --serve` on
//! `samples/three-vms-one-host`, whose esx01 runs three VMs with a PVRDMA adapter each.
//! The fault is the host's `pvrdma` firewall ruleset disabled, which makes every adapter
//! on it fall back to TCP (vsish `Physical HCA available:0`).
use crate::alerting::{about, alertmanager, copy_dir, prometheus, wait_series, Webhook};
use crate::prometheus::{require, root, PROMTOOL};
use crate::serve::exporter;

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// The VMs of esx01 in the sample, each with one PVRDMA adapter.
const VMS: [&str; 3] = ["hpc-node01", "hpc-node04", "hpc-node05"];

/// Puts `with` in the place of `fleet/host`, keeping the old directory as `aside`. The
/// demo reads the scenario again before each probe, and a host missing from it keeps its
/// previous answers: a probe sees the host either as it was or as it is now, never half
/// edited, as a probe of a real host sees a ruleset and the adapters it turned off.
fn swap_host(fleet: &Path, host: &str, with: &Path, aside: &Path) {
    std::fs::rename(fleet.join(host), aside).unwrap();
    std::fs::rename(with, fleet.join(host)).unwrap();
}

/// (alertname, vm_name or check, status) of each alert of a notification.
fn alerts(n: &Value) -> BTreeSet<(String, String, String)> {
    n["alerts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            let l = &a["labels"];
            let what = l["vm_name"].as_str().or(l["check"].as_str()).unwrap_or("");
            (
                l["alertname"].as_str().unwrap_or("").to_string(),
                what.to_string(),
                a["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The alerts the fault should raise on esx01, all with `status`.
fn the_fault(status: &str) -> BTreeSet<(String, String, String)> {
    let mut want: BTreeSet<_> = VMS
        .iter()
        .map(|vm| ("PvrdmaAdapterTcpFallback".into(), vm.to_string(), status.into()))
        .collect();
    want.insert(("PvrdmaCheckFailing".into(), "firewall-pvrdma".into(), status.into()));
    want
}

#[test]
#[ignore = "needs Prometheus and Alertmanager: scripts/test.sh runs it"]
fn a_host_fault_hitting_three_vms_is_one_page_and_one_resolved() {
    require(PROMTOOL);
    let began = Instant::now();
    let dir = tempfile::tempdir().expect("tempdir");
    let fleet = dir.path().join("fleet");
    copy_dir(&root().join("samples/three-vms-one-host"), &fleet);
    let scenario = fleet.to_str().unwrap().to_string();
    let (_exp, addr) = exporter(dir.path(), &["demo", "--serve", "--scenario", &scenario]);
    let hook = Webhook::start();
    let (am, am_port) = alertmanager(dir.path(), hook.port);
    let (prom, port) = prometheus(dir.path(), &addr, am_port, "");
    let logs = || format!("\nalertmanager log:\n{}\nprometheus log:\n{}", am.log(), prom.log());

    // Healthy: every adapter of esx01 on the HCA, through the per-host and the group job.
    for job in ["pvrdma", "pvrdma-groups"] {
        for vm in VMS {
            wait_series(
                port,
                &format!(r#"pvrdma_adapter_verdict{{job="{job}",host_name="esx01",verdict="hca"}} == 1"#),
                &[&format!("vm_name=\"{vm}\"")],
                Duration::from_secs(60),
            );
        }
    }
    // Longer than the alerts' `for` (5 s) and group_wait (1 s): a healthy fleet pages no one.
    std::thread::sleep(Duration::from_secs(10));
    assert!(hook.all().is_empty(), "{:#}", Value::Array(hook.all()));

    // The fault: esx01's pvrdma ruleset off (the ESXi 8.0 default row), its adapters at HCA 0.
    let ok = dir.path().join("esx01-ok");
    let broken = dir.path().join("esx01-broken");
    copy_dir(&fleet.join("esx01"), &broken);
    let vsish = broken.join("vsish_pvrdma_properties.txt");
    let text = std::fs::read_to_string(&vsish).unwrap();
    assert_eq!(text.matches("Physical HCA available:1").count(), VMS.len());
    std::fs::write(
        &vsish,
        text.replace("Physical HCA available:1", "Physical HCA available:0"),
    )
    .unwrap();
    std::fs::copy(
        root().join("samples/firewall-pvrdma-disabled/esx01/esxcli_network_firewall_ruleset_list.txt"),
        broken.join("esxcli_network_firewall_ruleset_list.txt"),
    )
    .unwrap();
    let injected = Instant::now();
    swap_host(&fleet, "esx01", &broken, &ok);
    let page = hook.wait_for_telling(
        "firing for esx01",
        Duration::from_secs(90),
        |n| about(n, "esx01", "firing"),
        &logs,
    );
    let to_page = injected.elapsed();
    // Three group intervals (6 s): a page for an alert that fired late would be here.
    std::thread::sleep(Duration::from_secs(20));
    let all = hook.all();
    let dump = Value::Array(all.clone());
    assert_eq!(all.len(), 1, "one page for one fault, none for another host: {dump:#}");
    assert_eq!(alerts(&page), the_fault("firing"), "{page:#}");
    // Each VM is named with the host, the cause and its fix.
    for a in page["alerts"].as_array().unwrap() {
        let text = a["annotations"]["description"].as_str().unwrap_or_default();
        let mut words = vec![
            "ESXi host esx01",
            "firewall-pvrdma",
            "`esxcli network firewall ruleset set -e true -r pvrdma`",
        ];
        let vm = a["labels"]["vm_name"].as_str().map(|vm| format!("VM {vm}"));
        words.extend(vm.as_deref());
        for word in words {
            assert!(text.contains(word), "{word} missing: {a:#}");
        }
    }

    // Mended: one notification, every alert of the page resolved in it.
    let mended = Instant::now();
    swap_host(&fleet, "esx01", &ok, &broken);
    let resolved = hook.wait_for_telling(
        "resolved for esx01",
        Duration::from_secs(90),
        |n| about(n, "esx01", "resolved"),
        &logs,
    );
    let to_resolved = mended.elapsed();
    std::thread::sleep(Duration::from_secs(20));
    let all = hook.all();
    let dump = Value::Array(all.clone());
    assert_eq!(all.len(), 2, "the page and one resolved: {dump:#}");
    assert_eq!(all[1], resolved, "{dump:#}");
    assert_eq!(alerts(&resolved), the_fault("resolved"), "{resolved:#}");
    eprintln!(
        "alerting figures (intervals / 10): one host fault on {} VMs -> 1 notification in {:.1} s, mend -> 1 resolved in {:.1} s, other hosts 0; test {:.1} s",
        VMS.len(),
        to_page.as_secs_f64(),
        to_resolved.as_secs_f64(),
        began.elapsed().as_secs_f64()
    );
}
