//! The exporter follows vCenter: a group written as a cluster of vCenter gets its hosts from
//! govmomi's vSphere simulator (never a fake of the API), serves them as Prometheus HTTP
//! service discovery at `/sd`, drops a host that went into maintenance at the next read,
//! and logs its one session out when it stops.
use crate::serve::get;
use crate::support::client::{Doctor, Running};
use crate::support::free_port;
use crate::support::vcsim::{HostSpec, Spec, Vcsim, VmSpec};
use std::time::{Duration, Instant};

/// The targets of an `/sd` body, in order.
pub(crate) fn targets(sd: &str) -> Vec<String> {
    let groups: serde_json::Value = serde_json::from_str(sd).unwrap_or_else(|e| panic!("{e}: {sd}"));
    groups
        .as_array()
        .expect("a list")
        .iter()
        .flat_map(|g| g["targets"].as_array().cloned().unwrap_or_default())
        .map(|t| t.as_str().unwrap_or_default().to_string())
        .collect()
}

/// Cluster HPC of datacenter Lab East: esx01 and esx02 up, esx03 in maintenance.
pub(crate) fn cluster_of_three() -> Vcsim {
    Vcsim::start(&Spec::one_cluster(
        "Lab East",
        "HPC",
        vec![
            HostSpec::new("esx01"),
            HostSpec::new("esx02"),
            HostSpec::new("esx03").in_maintenance(),
        ],
        vec![],
    ))
}

/// Stops the exporter `running` and checks it left no session on `sim`: its stderr.
pub(crate) fn stop(running: Running, sim: &mut Vcsim) -> String {
    running.interrupt();
    let out = running.wait(Duration::from_secs(60));
    assert_eq!(
        sim.sessions(),
        0,
        "the exporter logs its session out when it stops: {}",
        out.stderr
    );
    out.stderr
}

/// `pvrdma-doctor serve --config config` on a free address (the vCenter password in
/// `PVRDMA_TEST_VC_PW`), once its stderr says `until`: the process and its address.
pub(crate) fn serving(sim: &Vcsim, config: &std::path::Path, until: &str) -> (Running, String) {
    let addr = format!("127.0.0.1:{}", free_port());
    let running = Doctor::new()
        .env("PVRDMA_TEST_VC_PW", &sim.password)
        .args(["serve", "--config"])
        .arg(config)
        .args(["--listen", &addr])
        .spawn_until(until, Duration::from_secs(120));
    (running, addr)
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_vcenter_group_serves_the_clusters_hosts_as_service_discovery_and_follows_them() {
    let mut sim = cluster_of_three();
    let dir = tempfile::tempdir().expect("tempdir");
    let password = dir.path().join("vcenter.pw");
    std::fs::write(&password, format!("{}\n", sim.password)).expect("password file");
    let config = dir.path().join("exporter.yml");
    std::fs::write(
        &config,
        format!(
            "vcenters:\n  lab: {{url: \"{}\", user: \"{}\", password_file: \"{}\", ca: \"{}\", refresh: 1s}}\ngroups:\n  hpc: {{vcenter: lab, cluster: \"Lab East/HPC\"}}\n",
            sim.url,
            sim.user,
            password.display(),
            sim.ca.display()
        ),
    )
    .expect("configuration");
    let addr = format!("127.0.0.1:{}", free_port());
    let running = Doctor::new()
        .args(["serve", "--config"])
        .arg(&config)
        .args(["--listen", &addr])
        .spawn_until("group hpc: 2 host(s) from vCenter lab", Duration::from_secs(120));

    let (status, sd) = get(&addr, "/sd?group=hpc");
    assert_eq!(status, 200, "{sd}");
    assert_eq!(targets(&sd), ["esx01", "esx02"]);
    let labels = &serde_json::from_str::<serde_json::Value>(&sd).expect("JSON")[0]["labels"];
    assert_eq!(labels["__meta_vcenter_datacenter"], "Lab East");
    assert_eq!(labels["__meta_vcenter_cluster"], "HPC");
    assert_eq!(labels["__meta_vcenter_name"], "lab");
    let (_, metrics) = get(&addr, "/metrics");
    assert!(
        metrics.contains("pvrdma_doctor_vcenter_up{vcenter=\"lab\"} 1"),
        "{metrics}"
    );
    assert_eq!(sim.sessions(), 1, "one session is kept between reads");

    // DRS or an admin puts esx02 into maintenance: the next read drops it.
    sim.set_maintenance("esx02", true);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut now = targets(&get(&addr, "/sd?group=hpc").1);
    while now != ["esx01"] && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        now = targets(&get(&addr, "/sd?group=hpc").1);
    }
    assert_eq!(now, ["esx01"]);

    let said = stop(running, &mut sim);
    assert!(said.contains("vCenter lab: session logged out"), "{said}");
}

/// The exporter's configuration: group `hpc`, cluster HPC of `sim` (its password from
/// `PVRDMA_TEST_VC_PW`, its certificate pinned). `vcenter` and `group` add keys to either
/// entry.
pub(crate) fn exporter_config(sim: &Vcsim, vcenter: &str, group: &str) -> String {
    format!(
        "vcenters:\n  lab: {{url: \"{}\", user: \"{}\", password_env: PVRDMA_TEST_VC_PW, thumbprint: \"{}\"{vcenter}}}\ngroups:\n  hpc: {{vcenter: lab, cluster: HPC{group}}}\n",
        sim.url, sim.user, sim.thumbprint
    )
}

/// The exporter of [`exporter_config`], written to `dir/exporter.yml`, once it has read
/// the group's two hosts: the running process and its address.
pub(crate) fn exporter_of(sim: &Vcsim, dir: &std::path::Path, vcenter: &str, group: &str) -> (Running, String) {
    let config = dir.join("exporter.yml");
    std::fs::write(&config, exporter_config(sim, vcenter, group)).expect("configuration");
    serving(sim, &config, "group hpc: 2 host(s) from vCenter lab")
}

#[test]
#[ignore = "needs the vSphere simulator and Prometheus: scripts/test.sh runs it"]
fn prometheus_reads_a_vcenter_groups_targets_through_http_sd_configs() {
    crate::prometheus::require(crate::serve::PROMETHEUS);
    let mut sim = Vcsim::start(&Spec::one_cluster(
        "Lab East",
        "HPC",
        vec![HostSpec::new("esx01"), HostSpec::new("esx02")],
        vec![],
    ));
    let dir = tempfile::tempdir().expect("tempdir");
    let (exporter, addr) = exporter_of(&sim, dir.path(), "", "");

    // The scrape job of docs/vcenter.md: targets from /sd, probed through the exporter.
    let prometheus_yml = dir.path().join("prometheus.yml");
    std::fs::write(
        &prometheus_yml,
        format!(
            "global: {{scrape_interval: 1m}}\nscrape_configs:\n  - job_name: pvrdma-hpc\n    metrics_path: /probe\n    http_sd_configs:\n      - url: http://{addr}/sd?group=hpc\n        refresh_interval: 1s\n    relabel_configs:\n      - source_labels: [__address__]\n        target_label: __param_target\n      - source_labels: [__param_target]\n        target_label: instance\n      - source_labels: [__meta_vcenter_cluster]\n        target_label: cluster\n      - target_label: __address__\n        replacement: {addr}\n"
        ),
    )
    .expect("prometheus.yml");
    let file = prometheus_yml.display().to_string();
    let (_prometheus, port) =
        crate::alerting::start_on_free_port("prometheus", ("/api/v1/status/flags", &file), |port| {
            crate::alerting::spawn(
                std::process::Command::new(crate::serve::PROMETHEUS)
                    .arg(format!("--config.file={file}"))
                    .arg(format!("--storage.tsdb.path={}", dir.path().join("tsdb").display()))
                    .arg(format!("--web.listen-address=127.0.0.1:{port}")),
                &dir.path().join("prometheus.log"),
            )
        });
    let deadline = Instant::now() + Duration::from_secs(60);
    let found = loop {
        let (_, body) = get(&format!("127.0.0.1:{port}"), "/api/v1/targets");
        let json: serde_json::Value =
            serde_json::from_str(body.split("\r\n\r\n").last().unwrap_or(&body)).unwrap_or(serde_json::Value::Null);
        let mut seen: Vec<(String, String)> = json["data"]["activeTargets"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|t| {
                        (
                            t["labels"]["instance"].as_str().unwrap_or_default().to_string(),
                            t["labels"]["cluster"].as_str().unwrap_or_default().to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        seen.sort();
        if seen.len() == 2 || Instant::now() > deadline {
            break seen;
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    assert_eq!(
        found,
        [
            ("esx01".to_string(), "HPC".to_string()),
            ("esx02".to_string(), "HPC".to_string())
        ]
    );
    exporter.interrupt();
    let _ = exporter.wait(Duration::from_secs(60));
    assert_eq!(sim.sessions(), 0);
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_no_ssh_group_is_judged_from_the_configuration_vcenter_gives() {
    use crate::support::vcsim::PvrdmaSpec;
    let healthy = |name: &str, last: u8, firewall: bool| HostSpec {
        pvrdma: Some(PvrdmaSpec {
            firewall,
            ..PvrdmaSpec::healthy(last)
        }),
        ..HostSpec::new(name)
    };
    let mut sim = Vcsim::start(&Spec::one_cluster(
        "Lab East",
        "HPC",
        vec![healthy("esx01", 11, true), healthy("esx02", 12, false)],
        vec![],
    ));
    let dir = tempfile::tempdir().expect("tempdir");
    let (running, addr) = exporter_of(&sim, dir.path(), ", refresh: 1s", ", no_ssh: true");

    // The configuration is read right after the inventory: until then a probe says so (503).
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut status, mut body) = get(&addr, "/probe?target=hpc");
    while status != 200 && Instant::now() < deadline {
        assert_eq!(status, 503, "{body}");
        std::thread::sleep(Duration::from_millis(200));
        (status, body) = get(&addr, "/probe?target=hpc");
    }
    assert_eq!(status, 200, "{body}");
    let line = |needles: &[&str]| body.lines().any(|l| needles.iter().all(|n| l.contains(n)));
    assert!(
        line(&[
            "pvrdma_check_status{",
            "host_name=\"esx02\"",
            "check=\"firewall-pvrdma\"",
            "status=\"fail\"} 1"
        ]),
        "{body}"
    );
    assert!(
        line(&[
            "pvrdma_check_status{",
            "host_name=\"esx01\"",
            "check=\"firewall-pvrdma\"",
            "status=\"pass\"} 1"
        ]),
        "{body}"
    );
    assert!(
        !body.contains("verdict=\"hca\"} 1"),
        "no adapter is hca without SSH: {body}"
    );
    // The version label reads as over SSH, so a host read both ways is one series; no
    // label carries one of the API's keys.
    assert!(
        line(&["host_name=\"esx01\"", "version=\"7.0.3 (build 21930508)\"} 1"]),
        "{body}"
    );
    for spelling in ["key-vim.", "Releasebuild-"] {
        assert!(!body.contains(spelling), "{spelling}: {body}");
    }
    // A host of the group probed alone is judged the same way, without SSH.
    let (status, one) = get(&addr, "/probe?target=esx02");
    assert_eq!(status, 200, "{one}");
    assert!(one.contains("check=\"firewall-pvrdma\""), "{one}");

    running.interrupt();
    let out = running.wait(Duration::from_secs(60));
    for spelling in ["key-vim.", "Releasebuild-"] {
        assert!(!out.stderr.contains(spelling), "the exporter's log: {}", out.stderr);
    }
    assert!(
        !out.stderr.contains("cannot connect"),
        "no SSH connection: {}",
        out.stderr
    );
    assert_eq!(sim.sessions(), 0, "the exporter logs its session out when it stops");
}

/// The VM series of an exposition (`pvrdma_adapter_verdict`, `pvrdma_adapter_reason_info`,
/// `pvrdma_adapters`, `pvrdma_adapter_pairs`, `pvrdma_vm_diagnosed`), sorted.
fn vm_series(body: &str) -> Vec<String> {
    let mut series: Vec<String> = body
        .lines()
        .filter(|l| {
            ["pvrdma_adapter", "pvrdma_vm_diagnosed{"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(str::to_string)
        .collect();
    series.sort();
    series
}

/// The VMs an exposition's adapter series name, sorted and once each.
fn adapter_vms(body: &str) -> Vec<String> {
    let mut vms: Vec<String> = body
        .lines()
        .filter(|l| l.starts_with("pvrdma_adapter_verdict{"))
        .filter_map(|l| l.split("vm_name=\"").nth(1)?.split('"').next().map(str::to_string))
        .collect();
    vms.sort();
    vms.dedup();
    vms
}

/// A `vm:` group reports its chosen VMs' adapters and the transports between them, as
/// `--vm` narrows a run, and so does one of its hosts probed alone: the other VMs of
/// those hosts are none of its business.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_vm_group_reports_only_its_chosen_vms_as_the_vm_option_does() {
    use crate::support::vcsim::{PvrdmaSpec, DVS_UUID};
    let host = |name: &str, last: u8| HostSpec {
        pvrdma: Some(PvrdmaSpec::healthy(last)),
        ..HostSpec::new(name)
    };
    let vm = |name: &str, on: &str| VmSpec {
        hw_version: "vmx-19".into(),
        reserved_mb: 4096,
        locked_to_max: true,
        vrdma: vec!["rocev2".into()],
        dvs: DVS_UUID.into(),
        ..VmSpec::new(name, on, "")
    };
    let mut sim = Vcsim::start(&Spec::one_cluster(
        "Lab East",
        "HPC",
        vec![host("esx01", 11), host("esx02", 12), host("esx03", 13)],
        vec![
            vm("mpi-a", "esx01"),
            vm("web-1", "esx01"),
            vm("mpi-b", "esx02"),
            vm("db-1", "esx02"),
            vm("batch-1", "esx03"),
        ],
    ));
    let dir = tempfile::tempdir().expect("tempdir");
    let (running, addr) = exporter_of(&sim, dir.path(), ", refresh: 1s", ", vm: [\"mpi-*\"], no_ssh: true");
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut status, mut body) = get(&addr, "/probe?target=hpc");
    while status != 200 && Instant::now() < deadline {
        assert_eq!(status, 503, "{body}");
        std::thread::sleep(Duration::from_millis(200));
        (status, body) = get(&addr, "/probe?target=hpc");
    }
    assert_eq!(status, 200, "{body}");
    assert_eq!(adapter_vms(&body), ["mpi-a", "mpi-b"], "{body}");
    for vm in ["mpi-a", "mpi-b"] {
        assert!(
            body.contains(&format!("\npvrdma_vm_diagnosed{{vm_name=\"{vm}\"}} 1\n")),
            "{body}"
        );
    }

    // The command line's `--vm` over the same vCenter is the oracle: the same adapters,
    // counts and pairs.
    let cli = Doctor::new()
        .reading(&sim)
        .args([
            "--no-ssh",
            "--cluster",
            "HPC",
            "--vm",
            "mpi-*",
            "--format",
            "prometheus",
        ])
        .timeout(Duration::from_secs(120))
        .run();
    assert!(cli.stdout.contains("pvrdma_adapter_verdict{"), "{}", cli.stderr);
    assert_eq!(vm_series(&body), vm_series(&cli.stdout), "{body}\n---\n{}", cli.stdout);

    // One of its hosts probed alone (as /sd lists them): its chosen VM only.
    let (status, one) = get(&addr, "/probe?target=esx02");
    assert_eq!(status, 200, "{one}");
    assert_eq!(adapter_vms(&one), ["mpi-b"], "{one}");
    assert!(one.contains("\npvrdma_vm_diagnosed{vm_name=\"mpi-b\"} 1\n"), "{one}");
    // esx03 runs no chosen VM: it is not the group's.
    assert_eq!(get(&addr, "/probe?target=esx03").0, 400);

    running.interrupt();
    let _ = running.wait(Duration::from_secs(60));
    assert_eq!(sim.sessions(), 0, "the exporter logs its session out when it stops");
}

/// The `--option` spellings in `text` (a command-line option: two dashes, a letter).
fn options_named(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("--") {
        let word: String = rest[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if word.starts_with(|c: char| c.is_ascii_alphabetic()) {
            found.push(format!("--{word}"));
        }
        rest = &rest[at + 2..];
    }
    found
}

/// A certificate the exporter refuses is told in its own configuration's words: the log
/// line and the probe's 503 name `thumbprint:` (with the one to paste) or `ca:`, never
/// an option of the command line, which the exporter does not take.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_refused_certificate_is_told_with_the_exporters_keys_never_an_option() {
    let mut sim = cluster_of_three();
    let other = cluster_of_three();
    let dir = tempfile::tempdir().expect("tempdir");
    // Pinned, then renewed by the VMCA: the pin no longer matches.
    let (running, _) = exporter_of(&sim, dir.path(), ", refresh: 1s", "");
    let renewed = sim.new_certificate();
    let deadline = Instant::now() + Duration::from_secs(60);
    let pin = format!("thumbprint: \"{renewed}\"");
    while !running.stderr().contains(&pin) {
        assert!(Instant::now() < deadline, "no {pin} in:\n{}", running.stderr());
        std::thread::sleep(Duration::from_millis(100));
    }
    // (Its session cannot be logged out: the exporter no longer trusts that vCenter.)
    running.interrupt();
    let said = running.wait(Duration::from_secs(60)).stderr;
    let refusal: Vec<&str> = said.lines().filter(|l| l.contains("certificate")).collect();
    assert!(!refusal.is_empty(), "{said}");
    for line in &refusal {
        assert!(line.contains("`thumbprint:`"), "{line}");
        assert_eq!(options_named(line), Vec::<String>::new(), "{line}");
    }

    // Trusting another vCenter's CA: the certificate's issuer is unknown; a group never
    // read answers 503 saying so.
    let config = dir.path().join("exporter.yml");
    std::fs::write(
        &config,
        format!(
            "vcenters:\n  lab: {{url: \"{}\", user: \"{}\", password_env: PVRDMA_TEST_VC_PW, ca: \"{}\", refresh: 1s}}\ngroups:\n  hpc: {{vcenter: lab, cluster: HPC}}\n",
            sim.url,
            sim.user,
            other.ca.display()
        ),
    )
    .expect("configuration");
    let (running, addr2) = serving(&sim, &config, "the inventory cannot be read");
    let (status, body) = get(&addr2, "/probe?target=hpc");
    assert_eq!(status, 503, "{body}");
    let said = running.stderr();
    for text in [body.as_str(), said.as_str()] {
        assert!(text.contains("`ca: FILE` in its vcenters: entry"), "{text}");
        assert!(text.contains("thumbprint: \""), "{text}");
        assert_eq!(options_named(text), Vec::<String>::new(), "{text}");
    }
    running.interrupt();
    let _ = running.wait(Duration::from_secs(60));
}
