//! A host read through vCenter is named as the vSphere Client and esxcli name it. The API
//! refers to NICs, standard switches and port groups by keys
//! (`key-vim.host.PhysicalNic-vmnic2`) and gives the build bare, where esxcli prints
//! `Releasebuild-`: neither may reach what a user reads (a report in any format, a metric
//! label, a log line), and a baseline the tool wrote when it still showed keys compares
//! with a run that names them without a change that did not happen.
use crate::no_ssh::{configured, no_ssh, vm, SshPort};
use crate::support::client::Doctor;
use crate::support::vcsim::{Spec, Vcsim, VmknicSpec, VswitchSpec};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// What only the API's own spelling holds.
const API_SPELLINGS: [&str; 2] = ["key-vim.", "Releasebuild-"];

/// A fleet whose reports name NICs, switches and port groups wherever a check can: one
/// healthy host; the pvrdma ruleset off; a vDS teaming the HCA with a second uplink; the
/// HCA an uplink of a standard switch rather than of the vDS; the tagged vmknic on a
/// standard switch's port group.
fn fleet_naming_everything() -> Spec {
    let on_vswitch1 = |uplinks: &[&str]| VswitchSpec {
        name: "vSwitch1".into(),
        mtu: 9000,
        uplinks: uplinks.iter().map(|u| u.to_string()).collect(),
        portgroups: vec!["RDMA Control".into()],
    };
    Spec::one_cluster(
        "Lab",
        "HPC",
        vec![
            configured("esx01", 11, |_| {}),
            configured("esx02", 12, |p| p.firewall = false),
            configured("esx03", 13, |p| p.dvs[0].uplinks.push("vmnic3".into())),
            configured("esx04", 14, |p| {
                p.rdma[0].uplink = "vmnic3".into();
                p.vswitches.push(on_vswitch1(&["vmnic3"]));
            }),
            configured("esx05", 15, |p| {
                p.vswitches.push(on_vswitch1(&["vmnic4"]));
                p.vmknic = "vmk2".into();
                p.vmknics.push(VmknicSpec {
                    device: "vmk2".into(),
                    ip: "192.168.60.15".into(),
                    netmask: "255.255.255.0".into(),
                    mtu: 9000,
                    portgroup: "RDMA Control".into(),
                    ..VmknicSpec::default()
                });
            }),
        ],
        (1..=5)
            .map(|n| {
                vm(
                    &format!("hpc-node0{n}"),
                    &format!("esx0{n}"),
                    "vmx-19",
                    true,
                    &["rocev2"],
                )
            })
            .collect(),
    )
}

fn assert_named(what: &str, text: &str) {
    for spelling in API_SPELLINGS {
        assert!(!text.contains(spelling), "{what} shows `{spelling}`:\n{text}");
    }
}

fn check<'a>(report: &'a Value, host: &str, id: &str) -> &'a Value {
    report["hosts"]
        .as_array()
        .and_then(|hosts| hosts.iter().find(|h| h["host"] == host))
        .and_then(|h| h["checks"].as_array())
        .and_then(|checks| checks.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no check {id} of {host} in {report:#}"))
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn no_report_metric_or_log_line_of_an_api_read_host_shows_a_key_or_releasebuild() {
    let mut sim = Vcsim::start(&fleet_naming_everything());
    let trap = SshPort::trap();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut json = None;
    for format in ["human", "json", "prometheus", "nagios", "ansible", "powercli"] {
        let out = no_ssh(&sim, &trap, &["--cluster", "HPC", "--format", format, "-v"]);
        // Failing checks: 1 (the plugin's CRITICAL is 2).
        let expected = if format == "nagios" { 2 } else { 1 };
        assert_eq!(out.code, Some(expected), "{format}\n{}\n{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains("reading the inventory"),
            "-v logs the run: {}",
            out.stderr
        );
        assert_named(&format!("--format {format}"), &out.stdout);
        assert_named(&format!("the log of --format {format}"), &out.stderr);
        if format == "json" {
            json = Some(out.json());
        }
        // One host read both ways is one series: its version label is esxcli's spelling.
        if format == "prometheus" {
            assert!(
                out.stdout
                    .lines()
                    .any(|l| l.contains("host_name=\"esx01\"") && l.contains("version=\"7.0.3 (build 21930508)\"")),
                "{}",
                out.stdout
            );
        }
    }
    // The names the checks give are the ones esxcli and the vSphere Client show.
    let report = json.expect("the JSON report");
    let named = [
        (
            "esx01",
            "rdma-uplink-on-dvs",
            "vmrdma0 (uplink vmnic2) is an uplink of vDS dvs-rdma",
        ),
        ("esx03", "dvs-single-uplink", "vmnic2, vmnic3"),
        (
            "esx04",
            "rdma-uplink-on-dvs",
            "vmnic3 is an uplink of standard vSwitch vSwitch1",
        ),
        ("esx05", "pvrdma-vmknic-valid", "it sits on standard switch vSwitch1"),
    ];
    for (host, id, words) in named {
        let c = check(&report, host, id);
        assert!(c["summary"].as_str().unwrap_or_default().contains(words), "{c:#}");
    }
    let detach = &check(&report, "esx04", "rdma-uplink-on-dvs")["remediation"]["command"];
    assert_eq!(
        detach, "esxcli network vswitch standard uplink remove -u vmnic3 -v vSwitch1",
        "{report:#}"
    );
    assert!(report["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .all(|h| h["esxi_version"] == "7.0.3 (build 21930508)"));

    // A watch round and the support bundle's own reports say the same.
    let watch = Doctor::new()
        .arg("watch")
        .reading(&sim)
        .arg("-F")
        .arg(&trap.config)
        .args(["--no-ssh", "--cluster", "HPC", "--count", "1", "-v"])
        .env("COLUMNS", "200")
        .timeout(Duration::from_secs(120))
        .run();
    assert_eq!(watch.code, Some(1), "{}\n{}", watch.stdout, watch.stderr);
    assert_named("watch", &watch.stdout);
    assert_named("the log of watch", &watch.stderr);
    let bundle = dir.path().join("api.tar.gz");
    let bundled = no_ssh(
        &sim,
        &trap,
        &["--cluster", "HPC", "--bundle", bundle.to_str().expect("path")],
    );
    assert_eq!(bundled.code, Some(1), "{}", bundled.stderr);
    for file in ["report.json", "report.txt", "manifest.json"] {
        assert_named(&format!("the bundle's {file}"), &bundle_file(&bundle, file));
    }
    assert!(!trap.connected(), "--no-ssh opens no SSH connection");
    assert_eq!(sim.sessions(), 0);
}

/// One file of a support bundle.
fn bundle_file(bundle: &Path, name: &str) -> String {
    let out = std::process::Command::new("tar")
        .arg("-xzOf")
        .arg(bundle)
        .arg(name)
        .output()
        .expect("tar");
    assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The JSON report the tool wrote for [`fleet_with_a_recorded_baseline`] before it named
/// the API's keys and builds as esxcli does (its summaries say
/// `key-vim.host.PhysicalNic-vmnic2` and `build Releasebuild-21930508`): the same answers
/// of the simulator, diagnosed by that release.
const BASELINE_WITH_KEYS: &str = "tests/fixtures/report-with-api-keys.json";

/// One healthy host, one with the pvrdma ruleset off, one whose vDS teams the HCA.
fn fleet_with_a_recorded_baseline() -> Spec {
    Spec::one_cluster(
        "Lab",
        "HPC",
        vec![
            configured("esx01", 11, |_| {}),
            configured("esx02", 12, |p| p.firewall = false),
            configured("esx03", 13, |p| p.dvs[0].uplinks.push("vmnic3".into())),
        ],
        (1..=3)
            .map(|n| {
                vm(
                    &format!("hpc-node0{n}"),
                    &format!("esx0{n}"),
                    "vmx-19",
                    true,
                    &["rocev2"],
                )
            })
            .collect(),
    )
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_baseline_recorded_when_the_api_showed_keys_compares_without_a_spurious_change() {
    let baseline = Path::new(env!("CARGO_MANIFEST_DIR")).join(BASELINE_WITH_KEYS);
    let recorded = std::fs::read_to_string(&baseline).expect("the recorded baseline");
    for spelling in ["key-vim.host.PhysicalNic-vmnic2", "(build Releasebuild-21930508)"] {
        assert!(
            recorded.contains(spelling),
            "the baseline is of the old shape: {spelling}"
        );
    }
    let mut sim = Vcsim::start(&fleet_with_a_recorded_baseline());
    let trap = SshPort::trap();
    let run = |format: &str| {
        Doctor::new()
            .reading(&sim)
            .arg("-F")
            .arg(&trap.config)
            .args(["--no-ssh", "--cluster", "HPC", "--format", format, "--color", "never"])
            .arg("--baseline")
            .arg(&baseline)
            .env("COLUMNS", "200")
            .timeout(Duration::from_secs(120))
            .run()
    };
    let json = run("json");
    assert_eq!(json.code, Some(1), "{}", json.stderr);
    let report = json.json();
    assert_named("the report against the old baseline", &json.stdout);
    assert!(
        report["changes_since"].is_string(),
        "{json:?}",
        json = report["changes_since"]
    );
    assert_eq!(
        report["changes"],
        serde_json::json!([]),
        "the same fleet, read the same way: {:#}",
        report["changes"]
    );
    let human = run("human");
    assert!(
        human.stdout.lines().any(|l| l.starts_with("No change since ")),
        "{}",
        human.stdout
    );
    assert_eq!(sim.sessions(), 0);
}
