//! The exporter's vCenter group probed end to end: the group's hosts come from govmomi's
//! vSphere simulator, and `/probe?target=GROUP` reads each of them over SSH from real
//! OpenSSH servers that the exporter's ssh_config knows by the names vCenter gives. A host
//! put into maintenance leaves the probe at the next inventory read.
use crate::support::client::Doctor;
use crate::support::measure::get;
use crate::support::promtool;
use crate::support::vcsim::{HostSpec, Spec, Vcsim, VmSpec};
use crate::support::*;
use crate::vcenter_sshd::ssh_fleet;
use std::time::{Duration, Instant};

/// The lines of `body` holding every one of `needles`.
fn lines<'a>(body: &'a str, needles: &[&str]) -> Vec<&'a str> {
    body.lines()
        .filter(|l| !l.starts_with('#') && needles.iter().all(|n| l.contains(n)))
        .collect()
}

#[test]
#[ignore = "needs the vSphere simulator, sshd and promtool: scripts/test.sh runs it"]
fn a_vcenter_group_is_probed_over_ssh_on_the_hosts_vcenter_gives_and_follows_maintenance() {
    // esx01 and esx02 of the healthy sample fleet, known by those names in ssh_config.
    let (_esx01, b, client) = ssh_fleet();
    let mut sim = Vcsim::start(&Spec::one_cluster(
        "Lab",
        "HPC",
        vec![HostSpec::new("esx01"), HostSpec::new("esx02")],
        vec![
            VmSpec::new("hpc-node01", "esx01", ""),
            VmSpec::new("hpc-node02", "esx02", ""),
        ],
    ));
    let config = client.dir.path().join("exporter.yml");
    std::fs::write(
        &config,
        format!(
            "modules:\n  default: {{ssh_config: \"{}\", ssh_agent: false, connect_timeout: 20s, command_timeout: 20s}}\nlimits: {{default_timeout: 120s}}\nvcenters:\n  lab: {{url: \"{}\", user: \"{}\", password_env: PVRDMA_TEST_VC_PW, ca: \"{}\", refresh: 1s}}\ngroups:\n  hpc: {{vcenter: lab, cluster: HPC}}\n",
            client.config.display(),
            sim.url,
            sim.user,
            sim.ca.display()
        ),
    )
    .expect("configuration");
    let addr = format!("127.0.0.1:{}", free_port());
    let running = Doctor::new()
        .home(client.dir.path())
        .env("PVRDMA_TEST_VC_PW", &sim.password)
        .args(["serve", "--config"])
        .arg(&config)
        .args(["--listen", &addr])
        .spawn_until("group hpc: 2 host(s) from vCenter lab", Duration::from_secs(120));

    let (status, body) = get(&addr, "/probe?target=hpc");
    assert_eq!(status, 200, "{body}\n{}", running.stderr());
    promtool::assert_accepts("a probe of a vCenter group", &body);
    assert!(body.contains("\npvrdma_up 1\n"), "{body}\n{}", running.stderr());
    for host in ["esx01", "esx02"] {
        assert!(
            body.contains(&format!("\npvrdma_host_up{{host_name=\"{host}\"}} 1\n")),
            "{host} read over SSH: {body}"
        );
        // Its VMs' adapters, their transport observed on the host.
        let hca = lines(
            &body,
            &[
                "pvrdma_adapter_verdict{",
                &format!("host_name=\"{host}\""),
                "verdict=\"hca\"} 1",
            ],
        );
        assert!(!hca.is_empty(), "no adapter of {host} on the HCA: {body}");
    }
    let rdma = lines(&body, &["pvrdma_adapter_pairs{transport=\"rdma\"} "]);
    assert!(
        rdma.len() == 1 && !rdma[0].ends_with(" 0"),
        "the pairs between the two hosts use RDMA: {body}"
    );

    // esx02 goes into maintenance: once vCenter was read again, it is no longer probed.
    sim.set_maintenance("esx02", true);
    let deadline = Instant::now() + Duration::from_secs(60);
    while get(&addr, "/sd?group=hpc").1.contains("esx02") {
        assert!(Instant::now() < deadline, "esx02 still at /sd: {}", running.stderr());
        std::thread::sleep(Duration::from_millis(200));
    }
    let logins = || b.log().matches("Accepted publickey").count();
    let before = logins();
    assert!(before > 0, "{}", b.log());
    let (status, body) = get(&addr, "/probe?target=hpc");
    assert_eq!(status, 200, "{body}");
    promtool::assert_accepts("a probe of a vCenter group after a host left it", &body);
    assert!(body.contains("\npvrdma_host_up{host_name=\"esx01\"} 1\n"), "{body}");
    assert!(
        lines(&body, &["host_name=\"esx02\""]).is_empty(),
        "esx02 probed: {body}"
    );
    // Nor can it be probed alone: it is no longer one of the allowed targets.
    let (status, alone) = get(&addr, "/probe?target=esx02");
    assert_ne!(status, 200, "{alone}");
    assert!(alone.contains("is not on the exporter's allow-list"), "{alone}");
    assert_eq!(logins(), before, "no SSH login to esx02 since: {}", b.log());
    assert_eq!(sim.sessions(), 1, "one session kept between reads");

    // vCenter goes away: the group is still probed, on the hosts read last.
    drop(sim);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !get(&addr, "/metrics")
        .1
        .contains("\npvrdma_doctor_vcenter_up{vcenter=\"lab\"} 0\n")
    {
        assert!(Instant::now() < deadline, "vCenter still up: {}", running.stderr());
        std::thread::sleep(Duration::from_millis(200));
    }
    let (status, body) = get(&addr, "/probe?target=hpc");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\npvrdma_host_up{host_name=\"esx01\"} 1\n"), "{body}");
    assert!(body.contains("\npvrdma_up 1\n"), "{body}");

    running.interrupt();
    let out = running.wait(Duration::from_secs(60));
    assert!(out.stderr.contains("pvrdma-doctor: stopped"), "{}", out.stderr);
}
