//! A site that keeps SSH off gets a fix it can use for every check that fails: each
//! configuration fault the vSphere API shows, planted on a host of govmomi's simulator
//! (one fault a host), is judged by `--no-ssh`, and no failing or warning check's only fix
//! is one for the ESXi shell. The human report leads with the vCenter forms.
use crate::support::client::Doctor;
use crate::support::vcsim::{HostSpec, PvrdmaSpec, Spec, Vcsim, VmSpec, VmknicSpec, DVS_UUID};
use serde_json::Value;
use std::time::Duration;

fn configured(name: &str, last: u8, change: impl FnOnce(&mut PvrdmaSpec)) -> HostSpec {
    let mut pvrdma = PvrdmaSpec::healthy(last);
    change(&mut pvrdma);
    HostSpec {
        pvrdma: Some(pvrdma),
        ..HostSpec::new(name)
    }
}

fn vm(name: &str, host: &str, hw: &str, reserved: bool, protocol: &str) -> VmSpec {
    VmSpec {
        hw_version: hw.into(),
        reserved_mb: if reserved { 32 } else { 0 },
        locked_to_max: reserved,
        vrdma: vec![protocol.into()],
        dvs: DVS_UUID.into(),
        ..VmSpec::new(name, host, "")
    }
}

fn vmk2(ip: &str) -> VmknicSpec {
    VmknicSpec {
        device: "vmk2".into(),
        ip: ip.into(),
        netmask: "255.255.255.0".into(),
        mtu: 9000,
        dvs: DVS_UUID.into(),
        ..VmknicSpec::default()
    }
}

/// One fault a host, every one the vSphere API shows.
fn fleet() -> Spec {
    let hosts = vec![
        configured("ok01", 11, |_| {}),
        configured("old01", 12, |p| p.version = "6.0.0".into()),
        configured("nordma01", 13, |p| p.rdma.clear()),
        configured("down01", 14, |p| p.rdma[0].state = "down".into()),
        configured("offdvs01", 15, |p| p.dvs[0].uplinks = vec!["vmnic3".into()]),
        configured("teamed01", 16, |p| p.dvs[0].uplinks.push("vmnic3".into())),
        configured("untagged01", 17, |p| p.vmknic.clear()),
        configured("choice01", 18, |p| {
            p.vmknic.clear();
            p.vmknics.push(vmk2("192.168.50.118"));
        }),
        configured("gone01", 19, |p| p.vmknic = "vmk7".into()),
        configured("noip01", 20, |p| p.vmknics[1].ip.clear()),
        configured("fw01", 21, |p| p.firewall = false),
        configured("dvsmtu01", 22, |p| p.dvs[0].mtu = 1500),
        configured("vmkmtu01", 23, |p| p.vmknics[1].mtu = 1500),
        configured("v1only01", 24, |p| p.rdma[0].roce_v2 = false),
        configured("noroce01", 25, |p| {
            p.rdma[0].roce_v1 = false;
            p.rdma[0].roce_v2 = false;
        }),
        configured("subnet01", 26, |p| p.vmknics[1].ip = "192.168.60.26".into()),
        configured("dup01", 27, |p| p.vmknics[1].ip = "192.168.50.28".into()),
        configured("dup02", 28, |_| {}),
    ];
    let mut vms: Vec<VmSpec> = hosts
        .iter()
        .map(|h| vm(&format!("vm-{}", h.name), &h.name, "vmx-19", true, "rocev2"))
        .collect();
    vms.push(vm("vm-hw11", "ok01", "vmx-11", true, "rocev2"));
    vms.push(vm("vm-unreserved", "ok01", "vmx-19", false, "rocev2"));
    vms.push(vm("vm-rocev1", "dup02", "vmx-19", true, "rocev1"));
    Spec::one_cluster("Lab East", "HPC", hosts, vms)
}

/// The run's words that name a way through vCenter rather than the ESXi shell.
const VCENTER_WAYS: [&str; 5] = ["vSphere Client", "vCenter", "govc", "PowerCLI", "Get-EsxCli"];

/// Why a failing check's fix is one only the ESXi shell can apply, or `None` when a site
/// without SSH can apply it: a form through vCenter, or words that name one, or advice
/// that needs no shell at all (hardware, a cable).
fn only_over_ssh(check: &Value) -> Option<String> {
    let r = &check["remediation"];
    if r.is_null() {
        return None;
    }
    let forms = &r["forms"];
    if ["vsphere_client", "powercli", "govc"]
        .iter()
        .any(|f| forms[*f].is_string())
    {
        return None;
    }
    let words = format!(
        "{} {}",
        r["advice"].as_str().unwrap_or_default(),
        r["decision"].as_str().unwrap_or_default()
    );
    let names_vcenter = VCENTER_WAYS.iter().any(|w| words.contains(w));
    let needs_shell = r["command"].is_string() || words.contains("esxcli");
    (needs_shell && !names_vcenter).then(|| format!("{} {}: {r}", check["id"], check["summary"]))
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn without_ssh_every_failing_check_has_a_fix_through_vcenter() {
    let sim = Vcsim::start(&fleet());
    let run = |format: &str| {
        Doctor::new()
            .reading(&sim)
            .args(["--no-ssh", "--cluster", "HPC", "--format", format, "--color", "never"])
            .env("COLUMNS", "80")
            .timeout(Duration::from_secs(180))
            .run()
    };
    let out = run("json");
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).expect("a JSON report");
    let mut judged = std::collections::BTreeSet::new();
    let mut ssh_only = Vec::new();
    let hosts = report["hosts"].as_array().expect("hosts");
    let checks = hosts
        .iter()
        .flat_map(|h| h["checks"].as_array().into_iter().flatten())
        .chain(report["fleet_checks"].as_array().into_iter().flatten());
    for c in checks.filter(|c| c["status"] == "fail" || c["status"] == "warn") {
        judged.insert(c["id"].as_str().unwrap_or_default().to_string());
        ssh_only.extend(only_over_ssh(c));
    }
    assert!(ssh_only.is_empty(), "fixes only the ESXi shell applies: {ssh_only:#?}");
    // The faults planted were found: each of these checks fails or warns on some host.
    for id in [
        "esxi-version",
        "rdma-device-present",
        "rdma-device-active",
        "rdma-uplink-on-dvs",
        "dvs-single-uplink",
        "pvrdma-vmknic-tagged",
        "pvrdma-vmknic-valid",
        "firewall-pvrdma",
        "mtu-consistent",
        "roce-supported",
        "vm-hardware-version",
        "vm-memory-reserved",
        "vmknic-subnets",
        "vmknic-ipv4-unique",
    ] {
        assert!(judged.contains(id), "{id} was not failed or warned: {judged:?}");
    }

    // The human report leads with the forms a run without SSH can use.
    let human = run("human").stdout;
    assert!(!human.contains("run: esxcli"), "{human}");
    // At 80 columns every line fits, the long commands continued between words.
    for line in human.lines() {
        let width = unicode_width::UnicodeWidthStr::width(line);
        assert!(width <= 80, "{width} columns: {line}\n{human}");
    }
    let firewall = human.find("✗ firewall-pvrdma").expect("the firewall check");
    let tail = &human[firewall..];
    let at = |label: &str| tail.find(label).unwrap_or_else(|| panic!("{label}: {tail}"));
    assert!(at("vSphere Client:") < at("PowerCLI:"), "{tail}");
    assert!(at("govc:") < at("ESXi shell:"), "{tail}");

    // So does the page, each form in a list of its own.
    let page = run("html").stdout;
    let firewall = page
        .find("firewall-pvrdma fails on")
        .expect("the firewall finding on the page");
    let fix = &page[firewall..];
    let fix = &fix[..fix.find("</dl>").expect("its fix")];
    let at = |label: &str| {
        fix.find(&format!("<dt>{label}</dt>"))
            .unwrap_or_else(|| panic!("{label}: {fix}"))
    };
    assert!(at("vSphere Client") < at("PowerCLI"), "{fix}");
    assert!(at("PowerCLI") < at("govc"), "{fix}");
    assert!(at("govc") < at("ESXi shell"), "{fix}");
}
