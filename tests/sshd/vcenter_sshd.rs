//! Hosts from vCenter, end to end: the binary reads govmomi's vSphere simulator (never a
//! hand-written fake of the API), picks a cluster's or a VM's hosts, and diagnoses them
//! over SSH against real OpenSSH servers whose ssh_config aliases carry the names vCenter
//! gives. Every run must leave vCenter with no session open.
use crate::support::client::{alias, Client, Doctor};
use crate::support::vcsim::{ClusterSpec, DatacenterSpec, HostSpec, Spec, Vcsim, VmSpec};
use crate::support::*;
use serde_json::Value;
use std::time::Duration;

/// Two datacenters with a cluster `HPC` each, hosts in maintenance and disconnected, a
/// standalone host, VMs whose names hold spaces, brackets and colons, and one powered off.
fn inventory() -> Spec {
    Spec {
        datacenters: vec![
            DatacenterSpec {
                name: "Lab East".into(),
                folder: String::new(),
                clusters: vec![
                    ClusterSpec {
                        name: "HPC".into(),
                        folder: String::new(),
                        hosts: vec![
                            HostSpec::new("esx01"),
                            HostSpec::new("esx02"),
                            HostSpec::new("esx03").in_maintenance(),
                            HostSpec::new("esx04").state("disconnected"),
                        ],
                    },
                    ClusterSpec {
                        name: "GPU".into(),
                        folder: "Row 2".into(),
                        hosts: vec![HostSpec::new("gpu01")],
                    },
                ],
                standalone: vec![HostSpec::new("esx99")],
            },
            DatacenterSpec {
                name: "Lab West".into(),
                folder: String::new(),
                clusters: vec![ClusterSpec {
                    name: "HPC".into(),
                    folder: String::new(),
                    hosts: vec![HostSpec::new("esx11")],
                }],
                standalone: vec![],
            },
        ],
        vms: vec![
            VmSpec::new("hpc-node01", "esx01", ""),
            VmSpec::new("hpc-node02", "esx02", ""),
            VmSpec::new("rank [1]: mpi job", "esx02", ""),
            VmSpec::new("hpc-node03", "esx03", ""),
            VmSpec::new("hpc-old", "esx01", "poweredOff"),
            VmSpec::new("west-1", "esx11", ""),
        ],
    }
}

/// The binary reading `sim` as its account, the password from the environment and the
/// simulator's CA trusted.
fn doctor(sim: &Vcsim) -> Doctor {
    Doctor::new().reading(sim)
}

fn hosts(sim: &Vcsim, extra: &[&str]) -> crate::support::client::Outcome {
    doctor(sim)
        .arg("hosts")
        .args(extra)
        .timeout(Duration::from_secs(120))
        .run()
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn hosts_prints_a_clusters_hosts_as_one_node_set_and_names_each_skipped_host_with_why() {
    let mut sim = Vcsim::start(&inventory());

    let out = hosts(&sim, &["--cluster", "Lab East/HPC"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout.lines().next(), Some("esx[01-02]"), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("skipped esx03 (Lab East/HPC): in maintenance mode (--include-maintenance takes it)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("skipped esx04 (Lab East/HPC): disconnected (--include-disconnected takes it)"),
        "{}",
        out.stderr
    );

    let all = hosts(
        &sim,
        &[
            "--cluster",
            "Lab East/HPC",
            "--include-maintenance",
            "--include-disconnected",
        ],
    );
    assert_eq!(all.stdout.lines().next(), Some("esx[01-04]"), "{}", all.stderr);
    assert!(!all.stderr.contains("skipped"), "{}", all.stderr);

    // Without --cluster: every connected host outside maintenance, standalone ones too.
    let every = hosts(&sim, &[]);
    assert_eq!(
        every.stdout.lines().next(),
        Some("esx[01-02,11,99],gpu01"),
        "{}",
        every.stderr
    );

    // A name in two datacenters is an error that lists both paths.
    let ambiguous = hosts(&sim, &["--cluster", "HPC"]);
    assert_eq!(ambiguous.code, Some(2), "{}", ambiguous.stdout);
    assert!(ambiguous.stdout.is_empty(), "{}", ambiguous.stdout);
    for path in ["Lab East/HPC", "Lab West/HPC"] {
        assert!(ambiguous.stderr.contains(path), "{}", ambiguous.stderr);
    }

    // VM names are literal but for * and ?: brackets, spaces and colons match themselves.
    let literal = hosts(&sim, &["--vm", "rank [1]: mpi job"]);
    assert_eq!(literal.stdout.lines().next(), Some("esx02"), "{}", literal.stderr);
    let glob = hosts(&sim, &["--vm", "hpc-*"]);
    assert_eq!(glob.stdout.lines().next(), Some("esx[01-02]"), "{}", glob.stderr);
    assert!(glob.stderr.contains("skipped esx03"), "{}", glob.stderr);
    assert!(
        glob.stderr.contains(
            "VM hpc-node03 runs on esx03, which is skipped (in maintenance mode): its adapters are not diagnosed"
        ),
        "{}",
        glob.stderr
    );
    assert!(
        glob.stderr
            .contains("VM hpc-old is powered off: it has no adapter to diagnose"),
        "{}",
        glob.stderr
    );
    let typo = hosts(&sim, &["--vm", "hpc-nod01"]);
    assert_eq!(typo.code, Some(2));
    assert!(typo.stderr.contains("no VM matches `hpc-nod01`"), "{}", typo.stderr);

    let json = hosts(&sim, &["--cluster", "Lab East/HPC", "--format", "json"]).json();
    assert_eq!(json["nodeset"], "esx[01-02]");
    let selected = json["selected"].as_array().expect("selected");
    assert_eq!(selected.len(), 2);
    assert_eq!(selected[0]["name"], "esx01");
    assert_eq!(selected[0]["datacenter"], "Lab East");
    assert_eq!(selected[0]["cluster"], "HPC");
    assert_eq!(selected[0]["cluster_path"], "/Lab East/host/HPC");
    assert_eq!(selected[0]["connection_state"], "connected");
    let skipped: Vec<(&str, &str)> = json["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .map(|h| (h["name"].as_str().unwrap_or(""), h["reason"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(skipped, [("esx03", "in maintenance mode"), ("esx04", "disconnected")]);

    // Nothing selected (every host of the cluster skipped) is exit 3, not a silent 0.
    let west = hosts(&sim, &["--cluster", "Lab East/GPU"]);
    assert_eq!(west.stdout.lines().next(), Some("gpu01"));
    // The cluster filed in a folder, named by its inventory path as govc prints it.
    let by_path = hosts(&sim, &["--cluster", "/Lab East/host/Row 2/GPU"]);
    assert_eq!(by_path.stdout.lines().next(), Some("gpu01"), "{}", by_path.stderr);
    sim.set_maintenance("gpu01", true);
    let none = hosts(&sim, &["--cluster", "Lab East/GPU"]);
    assert_eq!(none.code, Some(3), "{}", none.stderr);
    assert!(
        none.stderr.contains(&format!(
            "vCenter {} has no host to diagnose for this selection",
            sim.address()
        )),
        "{}",
        none.stderr
    );

    assert_eq!(sim.sessions(), 0, "every run logs its session out");
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn the_certificate_is_always_verified_and_an_unknown_one_is_refused_with_its_thumbprint() {
    let mut sim = Vcsim::start(&inventory());
    let base = |trust: &[&str]| {
        Doctor::new()
            .env("PVRDMA_DOCTOR_VCENTER_PASSWORD", &sim.password)
            .args(["hosts", "--vcenter", &sim.url, "--vcenter-user", &sim.user])
            .args(trust)
            .timeout(Duration::from_secs(120))
            .run()
    };
    // The system's roots do not know the simulator's CA: refused, with what pins it.
    let refused = base(&[]);
    assert_eq!(refused.code, Some(2), "{}", refused.stdout);
    assert!(refused.stdout.is_empty());
    assert!(refused.stderr.contains(&sim.thumbprint), "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains(&format!("--vcenter-thumbprint {}", sim.thumbprint)),
        "{}",
        refused.stderr
    );
    // Pinned: trusted without any CA.
    let pinned = base(&["--vcenter-thumbprint", &sim.thumbprint]);
    assert_eq!(pinned.code, Some(0), "{}", pinned.stderr);
    // The wrong pin is refused, naming both.
    let wrong = "00:".repeat(31) + "00";
    let mismatch = base(&["--vcenter-thumbprint", &wrong]);
    assert_eq!(mismatch.code, Some(2));
    assert!(mismatch.stderr.contains(&sim.thumbprint), "{}", mismatch.stderr);
    assert_eq!(sim.sessions(), 0);
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_wrong_password_is_a_login_failure_and_the_password_is_never_printed() {
    let mut sim = Vcsim::start(&inventory());
    let secret = "not-the-Password-42";
    let wrong = doctor(&sim)
        .env("PVRDMA_DOCTOR_VCENTER_PASSWORD", secret)
        .arg("hosts")
        .timeout(Duration::from_secs(120))
        .run();
    assert_eq!(wrong.code, Some(2), "{}", wrong.stdout);
    assert!(
        wrong
            .stderr
            .contains("refused the login of `monitor@vsphere.local`: wrong user or password"),
        "{}",
        wrong.stderr
    );
    assert!(!wrong.stderr.contains(secret) && !wrong.stdout.contains(secret));

    // The password file wins over the environment, its first line only.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("vcenter.pw");
    std::fs::write(&file, format!("{}\nsecond line\n", sim.password)).expect("write");
    let from_file = doctor(&sim)
        .env("PVRDMA_DOCTOR_VCENTER_PASSWORD", secret)
        .arg("hosts")
        .arg("--vcenter-password-file")
        .arg(&file)
        .timeout(Duration::from_secs(120))
        .run();
    assert_eq!(from_file.code, Some(0), "{}", from_file.stderr);
    assert_eq!(sim.sessions(), 0);
}

/// Two SSH test hosts known to the client by the names vCenter gives them: `esx01` serves
/// the healthy cluster's first host (hpc-node01), `esx02` its second (hpc-node02).
pub(crate) fn ssh_fleet() -> (Sshd, Sshd, Client) {
    let client = Client::new();
    let start = |host: &str| {
        let mut o = SshdOptions::new(samples_host("healthy-cluster", host));
        client.authorize(&mut o);
        Sshd::start(o)
    };
    let (a, b) = (start("esx01"), start("esx02"));
    client.trust(&a);
    client.trust(&b);
    client.write_config(&format!("{}{}", alias("esx01", &a), alias("esx02", &b)));
    (a, b, client)
}

/// The healthy cluster's two hosts and VMs, as vCenter sees them.
fn healthy_inventory() -> Spec {
    Spec::one_cluster(
        "Lab",
        "HPC",
        vec![
            HostSpec::new("esx01"),
            HostSpec::new("esx02"),
            HostSpec::new("esx03").in_maintenance(),
        ],
        vec![
            VmSpec::new("hpc-node01", "esx01", ""),
            VmSpec::new("hpc-node02", "esx02", ""),
        ],
    )
}

fn vm_names(report: &Value) -> Vec<String> {
    report["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .flat_map(|h| h["vms"].as_array().cloned().unwrap_or_default())
        .map(|v| v["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn host_names(report: &Value) -> Vec<String> {
    report["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .map(|h| h["host"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
#[ignore = "needs the vSphere simulator and sshd: scripts/test.sh runs it"]
fn a_cluster_or_a_vm_named_in_vcenter_is_diagnosed_over_ssh_on_the_hosts_vcenter_gives() {
    let (_a, _b, client) = ssh_fleet();
    let mut sim = Vcsim::start(&healthy_inventory());
    let run = |extra: &[&str]| {
        client
            .doctor()
            .reading(&sim)
            .args(["--format", "json", "--connect-timeout", "20s", "--timeout", "120s"])
            .args(extra)
            .timeout(Duration::from_secs(180))
            .run()
    };

    // The cluster: both hosts (esx03 in maintenance is skipped and said so), every VM.
    let cluster = run(&["--cluster", "HPC"]);
    assert_eq!(cluster.code, Some(0), "{}", cluster.stderr);
    assert!(cluster.stderr.contains("skipped esx03"), "{}", cluster.stderr);
    let report = cluster.json();
    assert_eq!(host_names(&report), ["esx01", "esx02"]);
    assert_eq!(vm_names(&report), ["hpc-node01", "hpc-node02"]);
    assert!(report.get("vm_scope").is_none());
    let pairs = report["transport"]["totals"]["rdma"].as_u64().expect("rdma pairs");
    assert!(pairs > 0, "{report}");

    // VM-first: only the host hpc-node01 runs on, only its adapters, no pair.
    let one = run(&["--vm", "hpc-node01"]);
    assert_eq!(one.code, Some(0), "{}", one.stderr);
    let report = one.json();
    assert_eq!(host_names(&report), ["esx01"]);
    assert_eq!(vm_names(&report), ["hpc-node01"]);
    assert_eq!(report["vm_scope"]["vms"], serde_json::json!(["hpc-node01"]));
    assert_eq!(report["transport"]["totals"]["rdma"], 0);

    // Both VMs by a glob: both hosts, and the transport between exactly these two.
    let both = run(&["--vm", "hpc-node0?"]);
    let report = both.json();
    assert_eq!(host_names(&report), ["esx01", "esx02"]);
    assert_eq!(report["transport"]["totals"]["rdma"].as_u64(), Some(pairs));

    assert_eq!(sim.sessions(), 0, "every run logs its session out");
}

/// A chosen VM that moved between vCenter's inventory read and the SSH run (vCenter has it
/// on esx02 now, whose host does not run it when read) was not diagnosed: the run says so
/// and is unknown, never "1 healthy" with exit 0, so a monitoring check does not read OK.
#[test]
#[ignore = "needs the vSphere simulator and sshd: scripts/test.sh runs it"]
fn a_chosen_vm_no_host_read_runs_makes_the_run_unknown() {
    let (_a, _b, client) = ssh_fleet();
    let mut sim = Vcsim::start(&healthy_inventory());
    sim.move_vm("hpc-node01", "esx02");
    let run = |format: &str| {
        client
            .doctor()
            .reading(&sim)
            .args(["--vm", "hpc-node01", "--format", format])
            .args(["--connect-timeout", "20s", "--timeout", "120s"])
            .timeout(Duration::from_secs(180))
            .run()
    };
    let json = run("json");
    assert_eq!(json.code, Some(3), "{}\n{}", json.stdout, json.stderr);
    let report = json.json();
    assert_eq!(host_names(&report), ["esx02"]);
    assert_eq!(report["vm_scope"]["not_running"], serde_json::json!(["hpc-node01"]));
    assert_eq!(report["vm_scope"]["not_diagnosed"], serde_json::json!(["hpc-node01"]));
    let plugin = run("nagios");
    assert_eq!(plugin.code, Some(3), "{}", plugin.stdout);
    assert!(
        plugin
            .stdout
            .starts_with("PVRDMA UNKNOWN - hpc-node01: VM not diagnosed"),
        "{}",
        plugin.stdout
    );
    assert!(
        plugin.stdout.contains(
            "[UNKNOWN] VM hpc-node01: not diagnosed: no host diagnosed runs it (stopped, or moved since the inventory was read)"
        ),
        "{}",
        plugin.stdout
    );
    assert_eq!(sim.sessions(), 0, "every run logs its session out");
}

#[test]
#[ignore = "needs the vSphere simulator and sshd: scripts/test.sh runs it"]
fn watch_follows_a_vm_that_drs_moved_and_says_so() {
    let (_a, _b, client) = ssh_fleet();
    let mut sim = Vcsim::start(&healthy_inventory());
    let running = client
        .doctor()
        .reading(&sim)
        .arg("watch")
        .args([
            "--vm",
            "hpc-node01",
            "--format",
            "json",
            "--count",
            "2",
            "--interval",
            "3s",
        ])
        .args(["--connect-timeout", "20s", "-v"])
        // The first round logs in once it has read the inventory.
        .spawn_until("logged in as", Duration::from_secs(120));
    // DRS moves the VM while the first round runs: the second round reads it on esx02.
    sim.move_vm("hpc-node01", "esx02");
    let out = running.wait(Duration::from_secs(240));
    // The last round, whose code the watch exits with, did not find hpc-node01 on esx02:
    // a chosen VM not diagnosed leaves the round unknown.
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    let events = out.json_lines();
    let first = events.iter().find(|e| e["event"] == "report").expect("a report event");
    assert_eq!(host_names(&first["report"]), ["esx01"]);
    let moved = events
        .iter()
        .find(|e| e["event"] == "vm-moved")
        .unwrap_or_else(|| panic!("no vm-moved event in {}", out.stdout));
    assert_eq!(
        (&moved["vm"], &moved["from"], &moved["to"], &moved["round"]),
        (
            &Value::from("hpc-node01"),
            &Value::from("esx01"),
            &Value::from("esx02"),
            &Value::from(2)
        )
    );
    // The second round diagnosed esx02, where the SSH host does not run that VM: a change
    // the watch reports (esx02 was not diagnosed in round 1), and the VM no longer
    // diagnosed is one of its own.
    assert!(
        events.iter().any(|e| e["event"] == "change" && e["host"] == "esx02"),
        "{}",
        out.stdout
    );
    assert!(
        events.iter().any(|e| e["event"] == "change"
            && e["kind"] == "vm"
            && e["id"] == "hpc-node01"
            && e["to"] == "not-diagnosed"),
        "{}",
        out.stdout
    );
    assert_eq!(sim.sessions(), 0, "the watch's one session is logged out at its end");
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn ctrl_c_while_the_inventory_is_read_logs_the_session_out_and_exits_130() {
    let mut sim = Vcsim::start(&inventory());
    // The read answers only after 20 s: Ctrl-C comes while the session is open.
    sim.delay_next_read(20);
    let running = doctor(&sim)
        .args(["hosts", "-v"])
        .spawn_until("reading the inventory of vCenter", Duration::from_secs(120));
    // The login is under way or done: give it a moment to open the session.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while sim.sessions() == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(sim.sessions(), 1, "the read holds one session");
    running.interrupt();
    let out = running.wait(Duration::from_secs(60));
    assert_eq!(out.code, Some(130), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(out.stderr.contains("its session was logged out"), "{}", out.stderr);
    assert_eq!(sim.sessions(), 0);
}

/// Two hosts of cluster `HPC` on the sample fleet's vDS, as vCenter has them: esx01 served
/// by a real sshd (the healthy sample), esx02 whose SSH service is stopped (its port
/// refuses connections). The sshd lives as long as the value returned.
pub(crate) fn one_ssh_closed() -> (Sshd, Client, Spec) {
    use crate::support::vcsim::PvrdmaSpec;
    let client = Client::new();
    let mut options = SshdOptions::new(samples_host("healthy-cluster", "esx01"));
    client.authorize(&mut options);
    let esx01 = Sshd::start(options);
    client.trust(&esx01);
    // esx02's SSH service is stopped: its port refuses connections.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("listener")
        .local_addr()
        .expect("address")
        .port();
    client.write_config(&format!(
        "{}Host esx02\n  HostName 127.0.0.1\n  Port {closed}\n",
        alias("esx01", &esx01)
    ));
    // The hosts as vCenter has them: on the sample fleet's vDS and vmknic subnet.
    const SAMPLE_DVS: &str = "50 2b 7e 1c 9a 44 0f 63-d1 5e 8a 27 c3 90 4b 11";
    let configured = |name: &str, last: u8| {
        let mut p = PvrdmaSpec::healthy(last);
        p.dvs[0].name = "DSwitch-RDMA".into();
        p.dvs[0].uuid = SAMPLE_DVS.into();
        p.vmknics[1].dvs = SAMPLE_DVS.into();
        p.vmknics[1].ip = format!("10.10.10.{last}");
        HostSpec {
            pvrdma: Some(p),
            ..HostSpec::new(name)
        }
    };
    // Each host's VM with a PVRDMA adapter, as the sample VMs are configured.
    let pvrdma_vm = |name: &str, host: &str| VmSpec {
        hw_version: "vmx-19".into(),
        reserved_mb: 4096,
        locked_to_max: true,
        vrdma: vec!["rocev2".into()],
        dvs: SAMPLE_DVS.into(),
        ..VmSpec::new(name, host, "")
    };
    let spec = Spec::one_cluster(
        "Lab",
        "HPC",
        vec![configured("esx01", 11), configured("esx02", 12)],
        vec![pvrdma_vm("hpc-node01", "esx01"), pvrdma_vm("hpc-node02", "esx02")],
    );
    (esx01, client, spec)
}

/// The host `name` of a JSON report.
pub(crate) fn host_of(report: &Value, name: &str) -> Value {
    report["hosts"]
        .as_array()
        .and_then(|h| h.iter().find(|h| h["host"] == name))
        .cloned()
        .unwrap_or_else(|| panic!("no {name}: {report:#}"))
}

/// The verdicts of a report host's adapters, VM by VM.
pub(crate) fn verdicts(host: &Value) -> Vec<String> {
    host["vms"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|vm| vm["adapters"].as_array().into_iter().flatten())
        .map(|a| a["verdict"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
#[ignore = "needs the vSphere simulator and sshd: scripts/test.sh runs it"]
fn a_host_whose_ssh_is_closed_is_judged_from_vcenter_beside_one_read_over_ssh() {
    let (_esx01, client, spec) = one_ssh_closed();
    let mut sim = Vcsim::start(&spec);
    let out = client
        .doctor()
        .reading(&sim)
        .args(["--cluster", "HPC", "--format", "json", "--connect-timeout", "20s"])
        .timeout(Duration::from_secs(180))
        .run();
    let report = out.json();
    let host = |name: &str| host_of(&report, name);
    // esx01 was read over SSH: its adapters' transport is observed.
    let esx01 = host("esx01");
    assert!(esx01.get("configuration_only").is_none(), "{esx01:#}");
    let verdicts = verdicts(&esx01);
    assert!(!verdicts.is_empty() && verdicts.iter().all(|v| v == "hca"), "{esx01:#}");
    // esx02 refused SSH: judged from vCenter, its SSH error kept.
    let esx02 = host("esx02");
    assert_eq!(esx02["configuration_only"], true, "{esx02:#}");
    assert_eq!(esx02["error"]["kind"], "unreachable", "{esx02:#}");
    let firewall = esx02["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == "firewall-pvrdma"))
        .expect("firewall-pvrdma");
    assert_eq!(firewall["status"], "pass", "{firewall:#}");
    // The pairs between the two are not called rdma: esx02's side was not observed.
    assert!(
        report["transport"]["totals"]["unknown"].as_u64() > Some(0),
        "{report:#}"
    );
    assert_eq!(out.code, Some(3), "esx02's SSH is still a gap: {}", out.stderr);
    assert_eq!(sim.sessions(), 0, "both sessions are logged out");
}
