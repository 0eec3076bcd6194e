//! The exporter follows vCenter: a group written as a cluster of vCenter gets its hosts from
//! govmomi's vSphere simulator (never a fake of the API), serves them as Prometheus HTTP
//! service discovery at `/sd`, drops a host that went into maintenance at the next read,
//! and logs its one session out when it stops.
use crate::serve::get;
use crate::support::client::Doctor;
use crate::support::free_port;
use crate::support::vcsim::{ClusterSpec, DatacenterSpec, HostSpec, Spec, Vcsim};
use std::time::{Duration, Instant};

fn targets(sd: &str) -> Vec<String> {
    let groups: serde_json::Value = serde_json::from_str(sd).unwrap_or_else(|e| panic!("{e}: {sd}"));
    groups
        .as_array()
        .expect("a list")
        .iter()
        .flat_map(|g| g["targets"].as_array().cloned().unwrap_or_default())
        .map(|t| t.as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_vcenter_group_serves_the_clusters_hosts_as_service_discovery_and_follows_them() {
    let mut sim = Vcsim::start(&Spec {
        datacenters: vec![DatacenterSpec {
            name: "Lab East".into(),
            clusters: vec![ClusterSpec {
                name: "HPC".into(),
                hosts: vec![
                    HostSpec::new("esx01"),
                    HostSpec::new("esx02"),
                    HostSpec::new("esx03").in_maintenance(),
                ],
            }],
            standalone: vec![],
        }],
        vms: vec![],
    });
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

    running.interrupt();
    let out = running.wait(Duration::from_secs(60));
    assert!(out.stderr.contains("vCenter lab: session logged out"), "{}", out.stderr);
    assert_eq!(sim.sessions(), 0, "the exporter logs its session out when it stops");
}
