//! `--no-ssh`: a fleet whose SSH stays off is judged from vCenter alone. govmomi's vSphere
//! simulator (never a hand-written fake of the API) carries each host's PVRDMA
//! configuration; every check the API can read is judged from it, no adapter is called
//! `hca` without the host's own observation, and no SSH connection is attempted.
use crate::support::client::{Doctor, Outcome};
use crate::support::vcsim::{HostSpec, PvrdmaSpec, Spec, Vcsim, VmSpec, DVS_UUID};
use serde_json::Value;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

pub(crate) fn configured(name: &str, last: u8, change: impl FnOnce(&mut PvrdmaSpec)) -> HostSpec {
    let mut pvrdma = PvrdmaSpec::healthy(last);
    change(&mut pvrdma);
    HostSpec {
        pvrdma: Some(pvrdma),
        ..HostSpec::new(name)
    }
}

pub(crate) fn vm(name: &str, host: &str, hw: &str, reserved: bool, adapters: &[&str]) -> VmSpec {
    VmSpec {
        hw_version: hw.into(),
        reserved_mb: if reserved { 4096 } else { 0 },
        locked_to_max: reserved,
        vrdma: adapters.iter().map(|a| a.to_string()).collect(),
        dvs: DVS_UUID.into(),
        ..VmSpec::new(name, host, "")
    }
}

/// One healthy host, one with the ruleset off, one without an RDMA device whose VM is
/// below hardware 13 and unreserved, one with `Net.PVRDMAVmknic` empty, and a host in
/// maintenance that is skipped.
fn fleet() -> Spec {
    Spec::one_cluster(
        "Lab East",
        "HPC",
        vec![
            configured("esx01", 11, |_| {}),
            configured("esx02", 12, |p| p.firewall = false),
            configured("esx03", 13, |p| p.rdma.clear()),
            configured("esx04", 14, |p| p.vmknic.clear()),
            configured("esx05", 15, |_| {}).in_maintenance(),
        ],
        vec![
            vm("hpc-node01", "esx01", "vmx-19", true, &["rocev2"]),
            vm("hpc-node02", "esx02", "vmx-19", true, &["rocev2", "rocev1"]),
            vm("hpc-node03", "esx03", "vmx-11", false, &["rocev2"]),
            vm("hpc-node04", "esx04", "vmx-19", true, &["rocev2"]),
            VmSpec {
                power: "poweredOff".into(),
                ..vm("hpc-off", "esx01", "vmx-19", true, &["rocev2"])
            },
        ],
    )
}

/// An ssh_config that sends every host to one loopback port: a listener there records
/// any connection (`trap`), or nothing listens and every SSH connection is refused
/// (`closed`).
pub(crate) struct SshPort {
    _dir: tempfile::TempDir,
    pub(crate) config: PathBuf,
    listener: Option<TcpListener>,
}

impl SshPort {
    pub(crate) fn trap() -> SshPort {
        let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
        listener.set_nonblocking(true).expect("non-blocking");
        let port = listener.local_addr().expect("address").port();
        SshPort::at(port, Some(listener))
    }

    fn closed() -> SshPort {
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("listener")
            .local_addr()
            .expect("address")
            .port();
        SshPort::at(port, None)
    }

    fn at(port: u16, listener: Option<TcpListener>) -> SshPort {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("ssh_config");
        std::fs::write(&config, format!("Host *\n  HostName 127.0.0.1\n  Port {port}\n")).expect("ssh_config");
        SshPort {
            _dir: dir,
            config,
            listener,
        }
    }

    /// Whether an SSH connection came to the trap.
    pub(crate) fn connected(&self) -> bool {
        self.listener.as_ref().is_some_and(|l| l.accept().is_ok())
    }
}

/// The binary reading `sim` with `--no-ssh`, every host sent to `ssh` should anything
/// try SSH.
pub(crate) fn no_ssh(sim: &Vcsim, ssh: &SshPort, extra: &[&str]) -> Outcome {
    Doctor::new()
        .reading(sim)
        .arg("-F")
        .arg(&ssh.config)
        .arg("--no-ssh")
        .env("COLUMNS", "200")
        .args(extra)
        .timeout(Duration::from_secs(120))
        .run()
}

fn host<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["hosts"]
        .as_array()
        .and_then(|hosts| hosts.iter().find(|h| h["host"] == name))
        .unwrap_or_else(|| panic!("no host {name} in {report:#}"))
}

fn check<'a>(host: &'a Value, id: &str) -> &'a Value {
    host["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no check {id} in {host:#}"))
}

fn adapters(host: &Value) -> Vec<&Value> {
    host["vms"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|vm| vm["adapters"].as_array().into_iter().flatten())
        .collect()
}

fn statuses(report: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for h in report["hosts"].as_array().into_iter().flatten() {
        for c in h["checks"].as_array().into_iter().flatten() {
            out.push((h["host"].to_string(), c["id"].to_string(), c["status"].to_string()));
        }
        for a in adapters(h) {
            out.push((h["host"].to_string(), "adapter".into(), a["verdict"].to_string()));
        }
    }
    out
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn without_ssh_every_check_the_api_carries_is_judged_and_no_adapter_is_called_hca() {
    let mut sim = Vcsim::start(&fleet());
    let dir = tempfile::tempdir().expect("tempdir");
    // Anything that tried SSH would land here.
    let trap = SshPort::trap();
    let bundle = dir.path().join("api.tgz");

    let out = no_ssh(
        &sim,
        &trap,
        &[
            "--cluster",
            "HPC",
            "--format",
            "json",
            "--bundle",
            bundle.to_str().expect("path"),
        ],
    );
    assert_eq!(
        out.code,
        Some(1),
        "failing checks exit 1\n{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(!trap.connected(), "--no-ssh must not open an SSH connection");
    assert_eq!(sim.sessions(), 0, "the session is logged out");
    assert!(out.stderr.contains("skipped esx05"), "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    let hosts: Vec<&str> = report["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .map(|h| h["host"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(hosts, ["esx01", "esx02", "esx03", "esx04"]);

    // The healthy host: every check the API carries passes, with the API as evidence;
    // lossless-network needs SSH; its adapter is unknown, predicted on the HCA.
    let esx01 = host(&report, "esx01");
    assert_eq!(esx01["configuration_only"], true, "{esx01:#}");
    // The build as a host read over SSH shows it (esxcli's `Releasebuild-` is esxcli's own).
    assert_eq!(esx01["esxi_version"], "7.0.3 (build 21930508)");
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
        "vm-pvrdma-adapter-count",
    ] {
        assert_eq!(check(esx01, id)["status"], "pass", "{id}: {:#}", check(esx01, id));
    }
    // The API refers to the HCA's uplink by its key; the report names it as esxcli does.
    let uplink = check(esx01, "rdma-uplink-on-dvs");
    assert_eq!(
        uplink["summary"], "vmrdma0 (uplink vmnic2) is an uplink of vDS dvs-rdma",
        "{uplink:#}"
    );
    assert!(!out.stdout.contains("key-vim."), "{}", out.stdout);
    let firewall = check(esx01, "firewall-pvrdma");
    assert!(
        firewall["evidence"]
            .as_array()
            .expect("evidence")
            .iter()
            .all(|e| e["command"] == "vsphere_host_config"),
        "{firewall:#}"
    );
    let lossless = check(esx01, "lossless-network");
    assert_eq!(lossless["status"], "unknown", "{lossless:#}");
    assert!(
        lossless["summary"]
            .as_str()
            .unwrap_or_default()
            .contains("only SSH shows it"),
        "{lossless:#}"
    );
    let a = adapters(esx01);
    assert_eq!(a.len(), 1, "the powered-off VM uses no transport: {esx01:#}");
    assert_eq!(
        (&a[0]["verdict"], &a[0]["predicted"]),
        (&"unknown".into(), &"hca".into())
    );

    // The ruleset off: the check fails with the command that fixes it; both adapters of
    // its VM are predicted to fall back, still unknown.
    let esx02 = host(&report, "esx02");
    let fw = check(esx02, "firewall-pvrdma");
    assert_eq!(fw["status"], "fail", "{fw:#}");
    assert_eq!(
        fw["remediation"]["command"],
        "esxcli network firewall ruleset set -e true -r pvrdma"
    );
    let a = adapters(esx02);
    assert_eq!(a.len(), 2, "{esx02:#}");
    for adapter in a {
        assert_eq!(
            (&adapter["verdict"], &adapter["predicted"]),
            (&"unknown".into(), &"tcp-fallback".into())
        );
    }

    // No RDMA device: the fallback is certain; the VM's own settings fail.
    let esx03 = host(&report, "esx03");
    assert_eq!(check(esx03, "rdma-device-present")["status"], "fail");
    assert_eq!(check(esx03, "vm-hardware-version")["status"], "fail");
    assert_eq!(check(esx03, "vm-memory-reserved")["status"], "fail");
    assert_eq!(adapters(esx03)[0]["verdict"], "tcp-fallback");

    // Net.PVRDMAVmknic empty: untagged, with the command that tags the vDS's vmknic.
    let esx04 = host(&report, "esx04");
    let tagged = check(esx04, "pvrdma-vmknic-tagged");
    assert_eq!(tagged["status"], "fail", "{tagged:#}");
    assert_eq!(
        tagged["remediation"]["command"],
        "esxcli system settings advanced set -o /Net/PVRDMAVmknic -s vmk1"
    );

    // Across hosts, the adapters' configured switch and RoCE version are compared.
    let fleet = report["fleet_checks"].as_array().expect("fleet checks");
    let same = fleet
        .iter()
        .find(|c| c["id"] == "pvrdma-same-vds")
        .expect("pvrdma-same-vds");
    assert_eq!(same["status"], "pass", "{same:#}");
    assert!(
        same["summary"].as_str().unwrap_or_default().contains("dvs-rdma"),
        "{same:#}"
    );
    let observed: Vec<&Value> = report["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .flat_map(adapters)
        .collect();
    assert!(observed.iter().all(|a| a["verdict"] != "hca"), "{report:#}");

    // The bundle keeps the API's answers: analysed offline, redacted or not, it gives the
    // same statuses.
    let offline = Doctor::new().args(["analyze", "--format", "json"]).arg(&bundle).run();
    let again: Value = serde_json::from_str(&offline.stdout).unwrap_or_else(|e| panic!("{e}: {}", offline.stderr));
    assert_eq!(statuses(&again), statuses(&report));
    assert_eq!(offline.code, Some(1), "{}", offline.stderr);

    let redacted = dir.path().join("redacted.tgz");
    let out = no_ssh(
        &sim,
        &trap,
        &[
            "--cluster",
            "HPC",
            "--format",
            "json",
            "--redact",
            "--bundle",
            redacted.to_str().expect("path"),
        ],
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let offline = Doctor::new().args(["analyze", "--format", "json"]).arg(&redacted).run();
    let masked: Value = serde_json::from_str(&offline.stdout).unwrap_or_else(|e| panic!("{e}: {}", offline.stderr));
    let strip =
        |s: Vec<(String, String, String)>| s.into_iter().map(|(_, id, status)| (id, status)).collect::<Vec<_>>();
    assert_eq!(strip(statuses(&masked)), strip(statuses(&report)));
    let raw = std::process::Command::new("tar")
        .args(["-xzOf"])
        .arg(&redacted)
        .output()
        .expect("tar");
    let text = String::from_utf8_lossy(&raw.stdout);
    for secret in ["esx01", "hpc-node01", "192.168.50.11"] {
        assert!(!text.contains(secret), "{secret} left in the redacted bundle");
    }
    assert!(!trap.connected(), "no SSH connection at any point");
    assert_eq!(sim.sessions(), 0);
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_configuration_only_report_says_so_and_a_vm_first_run_keeps_its_vms() {
    let mut sim = Vcsim::start(&fleet());
    let ssh = SshPort::closed();
    let out = no_ssh(&sim, &ssh, &["--vm", "hpc-node01", "--color", "never"]);
    assert_eq!(
        out.code,
        Some(4),
        "nothing fails, the run was configuration-only\n{}\n{}",
        out.stdout,
        out.stderr
    );
    let text = &out.stdout;
    assert!(
        text.contains("configuration only: esx01 judged from vCenter's vSphere API"),
        "{text}"
    );
    assert!(text.contains("observed only over SSH"), "{text}");
    assert!(
        text.contains("esx01 · configuration only (no SSH) · ESXi 7.0.3"),
        "{text}"
    );
    assert!(!text.contains("incomplete"), "nothing is missing but SSH: {text}");
    assert!(text.contains("1 host: 1 configuration only (esx01);"), "{text}");
    assert!(text.contains("the configuration predicts the HCA"), "{text}");
    assert!(text.contains("configuration only (no SSH): 1 of 1 hosts"), "{text}");
    assert!(!text.contains("hpc-node02"), "{text}");

    // As a monitoring plugin: OK, saying the transport was not observed; CRITICAL with
    // the failing check when the configuration is wrong.
    let plugin = no_ssh(&sim, &ssh, &["--vm", "hpc-node01", "--format", "nagios"]);
    assert_eq!(plugin.code, Some(0), "{}{}", plugin.stdout, plugin.stderr);
    assert!(
        plugin.stdout.starts_with(
            "PVRDMA OK - configuration only (no SSH) on 1 of 1 host: it predicts the HCA for 1 of 1 PVRDMA adapters"
        ),
        "{}",
        plugin.stdout
    );
    let plugin = no_ssh(&sim, &ssh, &["--vm", "hpc-node02", "--format", "nagios"]);
    assert_eq!(plugin.code, Some(2), "{}{}", plugin.stdout, plugin.stderr);
    assert!(plugin.stdout.contains("firewall-pvrdma failing"), "{}", plugin.stdout);
    assert_eq!(sim.sessions(), 0);
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn hosts_that_refuse_ssh_are_judged_from_the_api_and_keep_the_ssh_error() {
    let mut sim = Vcsim::start(&fleet());
    // A port nothing listens on: every SSH connection is refused.
    let ssh = SshPort::closed();
    let out = Doctor::new()
        .reading(&sim)
        .arg("-F")
        .arg(&ssh.config)
        .args(["--cluster", "HPC", "--format", "json"])
        .timeout(Duration::from_secs(120))
        .run();
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    for name in ["esx01", "esx02", "esx03", "esx04"] {
        let h = host(&report, name);
        assert_eq!(h["configuration_only"], true, "{h:#}");
        assert_eq!(h["error"]["kind"], "unreachable", "the SSH error stays: {h:#}");
        assert!(
            h["error"]["message"].as_str().unwrap_or_default().contains("refused"),
            "{h:#}"
        );
        assert_ne!(h["status"], "unreachable", "{h:#}");
        assert!(adapters(h).iter().all(|a| a["verdict"] != "hca"), "{h:#}");
    }
    assert_eq!(check(host(&report, "esx02"), "firewall-pvrdma")["status"], "fail");
    assert_eq!(check(host(&report, "esx01"), "firewall-pvrdma")["status"], "pass");
    assert_eq!(sim.sessions(), 0, "both sessions are logged out");
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn watch_without_ssh_follows_a_moved_vm_in_one_session() {
    let mut sim = Vcsim::start(&fleet());
    let trap = SshPort::trap();
    let running = Doctor::new()
        .arg("watch")
        .reading(&sim)
        .arg("-F")
        .arg(&trap.config)
        .args([
            "--no-ssh",
            "--vm",
            "hpc-node01",
            "--format",
            "json",
            "--count",
            "2",
            "--interval",
            "5s",
            "-v",
        ])
        .spawn_until("read the configuration of 1 host(s)", Duration::from_secs(120));
    // DRS moves the VM between the rounds: the second round judges it on esx04.
    sim.move_vm("hpc-node01", "esx04");
    let out = running.wait(Duration::from_secs(120));
    // esx04's Net.PVRDMAVmknic is empty: its configuration fails.
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    let events: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let first = events.iter().find(|e| e["event"] == "report").expect("a report event");
    assert_eq!(host(&first["report"], "esx01")["configuration_only"], true);
    let moved = events
        .iter()
        .find(|e| e["event"] == "vm-moved")
        .unwrap_or_else(|| panic!("no vm-moved event in {}", out.stdout));
    assert_eq!(
        (&moved["from"], &moved["to"]),
        (&Value::from("esx01"), &Value::from("esx04"))
    );
    assert!(
        events.iter().any(|e| e["event"] == "change" && e["host"] == "esx04"),
        "{}",
        out.stdout
    );
    assert!(!trap.connected(), "watch --no-ssh opened an SSH connection");
    assert_eq!(sim.sessions(), 0, "the watch's one session is logged out");
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn each_configuration_fault_the_api_shows_fails_its_check() {
    let mut sim = Vcsim::start(&Spec::one_cluster(
        "Lab East",
        "HPC",
        vec![
            configured("down01", 21, |p| p.rdma[0].state = "down".into()),
            configured("teamed01", 22, |p| p.dvs[0].uplinks.push("vmnic3".into())),
            configured("mtu01", 23, |p| p.dvs[0].mtu = 1500),
            configured("v1only01", 24, |p| p.rdma[0].roce_v2 = false),
            configured("ok01", 25, |_| {}),
            configured("v1only02", 26, |p| p.rdma[0].roce_v2 = false),
        ],
        vec![
            vm("vm-down", "down01", "vmx-19", true, &["rocev2"]),
            vm("vm-teamed", "teamed01", "vmx-19", true, &["rocev2"]),
            vm("vm-mtu", "mtu01", "vmx-19", true, &["rocev2"]),
            vm("vm-v1only", "v1only01", "vmx-19", true, &["rocev1"]),
            vm("vm-ok", "ok01", "vmx-19", true, &["rocev2"]),
            vm("vm-v2-on-v1", "v1only02", "vmx-19", true, &["rocev2"]),
        ],
    ));
    let ssh = SshPort::closed();
    let out = no_ssh(&sim, &ssh, &["--format", "json"]);
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    let status = |h: &str, id: &str| {
        check(host(&report, h), id)["status"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(status("down01", "rdma-device-active"), "fail");
    assert_eq!(
        adapters(host(&report, "down01"))[0]["verdict"],
        "tcp-fallback",
        "no usable HCA: certain"
    );
    assert_eq!(status("teamed01", "dvs-single-uplink"), "fail");
    assert_ne!(status("mtu01", "mtu-consistent"), "pass");
    assert_eq!(status("v1only01", "roce-supported"), "pass", "RoCE v1 is supported");
    // An adapter configured for RoCE v2 on an HCA that has only v1.
    let roce = check(host(&report, "v1only02"), "roce-supported");
    assert_eq!(roce["status"], "fail", "{roce:#}");
    assert!(
        roce["summary"]
            .as_str()
            .unwrap_or_default()
            .contains("vm-v2-on-v1 is set to RoCE v2"),
        "{roce:#}"
    );
    for h in ["down01", "teamed01", "mtu01", "v1only01", "ok01", "v1only02"] {
        assert_eq!(status(h, "lossless-network"), "unknown", "{h}");
    }
    // ok01 against v1only01: the configured RoCE versions differ.
    let fleet = report["fleet_checks"].as_array().expect("fleet checks");
    let pair = fleet
        .iter()
        .find(|c| c["id"] == "roce-version-pair")
        .expect("roce-version-pair");
    assert_eq!(pair["status"], "warn", "{pair:#}");
    assert_eq!(sim.sessions(), 0);
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn after_the_service_content_every_request_names_the_api_release_vcenter_reports() {
    // vCenter writes its answers for the release a request names and leaves newer
    // properties out: naming an older one than the server's would hide rdmaDevice.
    let mut sim = Vcsim::start(&fleet());
    let ssh = SshPort::closed();
    let _ = sim.soap_actions();
    let out = no_ssh(&sim, &ssh, &["--format", "json"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let actions = sim.soap_actions();
    // The simulator reports API release 6.5 in its service content.
    assert_eq!(
        actions.first().map(String::as_str),
        Some("urn:vim25/6.7"),
        "{actions:?}"
    );
    assert!(actions.len() > 3, "{actions:?}");
    assert!(actions[1..].iter().all(|a| a == "urn:vim25/6.5"), "{actions:?}");
}

/// vCenter's certificate renewed while a watch pinned the old one: the round says so and
/// watches on, and the option that pins the new certificate stands whole on a line of its
/// own in piped output (80 columns), never cut inside the thumbprint; with `--format
/// json`, one `vcenter-unread` event carries it, the stream staying JSON Lines.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_watch_whose_pinned_vcenter_certificate_was_renewed_prints_the_new_pin_whole() {
    for format in ["human", "json"] {
        let mut sim = Vcsim::start(&fleet());
        let running = Doctor::new()
            .arg("watch")
            .logging_in_to(&sim)
            .args(["--vcenter-thumbprint", &sim.thumbprint.clone()])
            .env("COLUMNS", "80")
            .args(["--no-ssh", "--vm", "hpc-node01", "--format", format])
            .args(["--count", "2", "--interval", "2s", "-v"])
            .spawn_until("read the configuration of 1 host(s)", Duration::from_secs(120));
        let renewed = sim.new_certificate();
        let out = running.wait(Duration::from_secs(120));
        let pin = format!("--vcenter-thumbprint {renewed}");
        if format == "human" {
            assert!(
                out.stdout.lines().any(|l| l.trim() == pin),
                "the pin whole on a line: {}",
                out.stdout
            );
            assert!(
                out.stdout
                    .contains("vCenter could not be read; watching the hosts of its last"),
                "{}",
                out.stdout
            );
        } else {
            let events: Vec<Value> = out
                .stdout
                .lines()
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
                .collect();
            let unread = events
                .iter()
                .find(|e| e["event"] == "vcenter-unread")
                .unwrap_or_else(|| panic!("no vcenter-unread event: {}", out.stdout));
            assert_eq!(
                (&unread["what"], &unread["round"]),
                (&Value::from("inventory"), &Value::from(2))
            );
            assert_eq!(unread["pin"], Value::from(pin.clone()), "{unread}");
            assert!(
                unread["message"].as_str().unwrap_or_default().ends_with(&pin),
                "{unread}"
            );
        }
        // The first round's verdicts stand: the last configuration read is judged again.
        assert_eq!(out.code, Some(4), "{}\n{}", out.stdout, out.stderr);
    }
}

/// A chosen VM whose host vCenter's selection left out (it stopped responding) was not
/// diagnosed: the run is unknown (3), never "configuration only" (4) or healthy, and says
/// which VM and why in the report, the JSON report, as a monitoring plugin, and again
/// when `analyze` reads the run's bundle back.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_chosen_vm_on_a_host_left_out_makes_the_run_unknown_and_is_named() {
    let mut sim = Vcsim::start(&fleet());
    sim.set_state("esx02", "notResponding");
    let ssh = SshPort::closed();
    let chosen = ["--vm", "hpc-node01", "--vm", "hpc-node02"];
    let dir = tempfile::tempdir().expect("tempdir");
    let bundle = dir.path().join("vm-first.tar.gz");
    let bundle_arg = bundle.to_str().expect("UTF-8 path");

    let human = no_ssh(
        &sim,
        &ssh,
        &[&chosen[..], &["--color", "never", "--bundle", bundle_arg]].concat(),
    );
    assert_eq!(human.code, Some(3), "{}\n{}", human.stdout, human.stderr);
    assert!(
        human
            .stdout
            .contains("not diagnosed, on hosts this run left out: hpc-node02 (on esx02, not responding)"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("; 1 of 2 chosen VMs not diagnosed"),
        "{}",
        human.stdout
    );

    let json = no_ssh(&sim, &ssh, &[&chosen[..], &["--format", "json"]].concat()).json();
    assert_eq!(json["exit_code"], 3);
    assert_eq!(json["vm_scope"]["not_diagnosed"], serde_json::json!(["hpc-node02"]));
    assert_eq!(
        json["vm_scope"]["on_hosts_left_out"],
        serde_json::json!([{"vm": "hpc-node02", "host": "esx02", "reason": "not responding"}])
    );

    let plugin = no_ssh(&sim, &ssh, &[&chosen[..], &["--format", "nagios"]].concat());
    assert_eq!(plugin.code, Some(3), "{}", plugin.stdout);
    assert!(
        plugin
            .stdout
            .starts_with("PVRDMA UNKNOWN - hpc-node02: VM not diagnosed"),
        "{}",
        plugin.stdout
    );

    // The bundle records the choice: analyze says the same offline.
    let again = Doctor::new()
        .args(["analyze", "--format", "json", bundle_arg])
        .timeout(Duration::from_secs(60))
        .run();
    assert_eq!(again.code, Some(3), "{}", again.stderr);
    let report = again.json();
    assert_eq!(report["vm_scope"], json["vm_scope"], "{report:#}");
    assert_eq!(sim.sessions(), 0);
}
