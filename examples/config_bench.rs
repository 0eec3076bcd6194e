//! How long judging a large fleet from vCenter alone takes (`--no-ssh`): the Rust client
//! reading, in one session, the inventory and then every host's configuration and its
//! VMs' (the properties of `pvrdma_vsphere::config`, one paged property-collector read),
//! then each host made a capture and all of them diagnosed; against pyVmomi 7.0.3
//! (VMware's Python SDK, `scripts/vsphere_config_pyvmomi.py`) reading the same properties
//! with the same traversal and page size. govmomi's vSphere simulator serves the fleet:
//! every host configured for PVRDMA as VMware's guide asks, every VM powered on with one
//! PVRDMA adapter. Alternating, each read timed from the connection to the logout. Prints
//! the medians, ranges, their ratio and the SOAP calls each makes (docs/benchmarks.md
//! records them).
//!
//!     cargo run --release --example config_bench [-- HOSTS VMS_PER_HOST ROUNDS]
//!
//! Needs what `scripts/install-test-deps.sh` installs for the simulator, and
//! `pip install pyvmomi==7.0.3`.
#[path = "../tests/support/vcsim.rs"]
#[allow(dead_code)]
mod vcsim;
#[path = "../tests/support/vsphere_bench.rs"]
mod vsphere_bench;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use pvrdma_engine::capture::{from_vsphere, HostCapture};
use pvrdma_engine::diagnose::{diagnose, Adapter, Diagnosis};
use pvrdma_vsphere::config::{HOST_PROPERTIES, VM_PROPERTIES};
use pvrdma_vsphere::{Client, Config};
use vcsim::{Spec, Vcsim};
use vsphere_bench::{median, pyvmomi_run};

fn range(v: &[f64]) -> String {
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{min:.3}–{max:.3} s")
}

/// One Rust run: the read (login, inventory, configuration of every host, logout), then
/// the judging (a capture per host, the diagnosis); their times, the SOAP calls, how
/// many hosts, VMs and PVRDMA adapters the diagnosis holds, and how they were judged.
fn rust_run(rt: &tokio::runtime::Runtime, config: &Config) -> (f64, f64, String, [usize; 3], String) {
    let start = Instant::now();
    let mut client = Client::new(config.clone()).expect("client");
    let configs = rt.block_on(async {
        let inventory = client.inventory().await?;
        let ids: Vec<String> = inventory.hosts.iter().map(|h| h.id.clone()).collect();
        let configs = client.host_configs(&ids).await?;
        client.logout().await?;
        Ok::<_, pvrdma_vsphere::Error>(configs)
    });
    let configs = configs.expect("the configuration read");
    let read = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let captures: Vec<HostCapture> = configs
        .into_values()
        .map(|c| from_vsphere(&c.name, c.host_xml, &c.vm_xml, 0))
        .collect();
    let diagnosis = diagnose(&captures);
    let judge = start.elapsed().as_secs_f64();

    let vms: usize = diagnosis.hosts.iter().map(|h| h.vms.len()).sum();
    let adapters: Vec<&Adapter> = diagnosis
        .hosts
        .iter()
        .flat_map(|h| &h.vms)
        .flat_map(|vm| &vm.adapters)
        .collect();
    let calls = format!("{:?}", client.calls());
    (
        read,
        judge,
        calls,
        [diagnosis.hosts.len(), vms, adapters.len()],
        judged(&diagnosis, &adapters),
    )
}

/// A serialized enum's name (`pass`, `hca`).
fn name(value: impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// How the healthy fleet was judged: every check's status counted, every adapter's
/// predicted path. Asserts that no check failed and that every adapter is predicted to use
/// the HCA (the configuration read whole; whether traffic does needs the host itself).
fn judged(diagnosis: &Diagnosis, adapters: &[&Adapter]) -> String {
    let mut checks: BTreeMap<String, usize> = BTreeMap::new();
    let host_checks = diagnosis.hosts.iter().flat_map(|h| &h.checks);
    for c in host_checks.chain(&diagnosis.fleet_checks) {
        *checks.entry(format!("{} {}", c.id, name(c.status))).or_default() += 1;
    }
    assert!(
        !checks.keys().any(|k| k.ends_with(" fail")),
        "a check failed: {checks:?}"
    );
    let mut predicted: BTreeMap<String, usize> = BTreeMap::new();
    for a in adapters {
        *predicted.entry(name(a.predicted)).or_default() += 1;
    }
    assert_eq!(predicted.keys().collect::<Vec<_>>(), ["hca"], "predicted paths");
    let transport = &diagnosis.transport;
    format!(
        "checks {checks:?}, adapters predicted {predicted:?}, transport: {} host pairs and {} adapter exceptions listed",
        transport.host_pairs.len(),
        transport.exceptions.len()
    )
}

/// One pyVmomi run of the script, reading the properties the Rust client reads.
fn python_run(sim: &Vcsim, page_size: u32) -> serde_json::Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/vsphere_config_pyvmomi.py");
    pyvmomi_run(
        script,
        sim,
        page_size,
        &[HOST_PROPERTIES.join(","), VM_PROPERTIES.join(",")],
    )
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a number")).collect();
    let (hosts, per_host, rounds) = match args[..] {
        [h, v, r] => (h, v, r),
        [] => (1000, 10, 5),
        _ => panic!("arguments: HOSTS VMS_PER_HOST ROUNDS"),
    };
    let vms = hosts * per_host;
    let page_size = Config::DEFAULT_PAGE_SIZE;
    eprintln!("starting the simulator with {hosts} hosts and {vms} VMs…");
    let mut sim = Vcsim::start_within(&Spec::pvrdma_fleet(hosts, per_host), Duration::from_secs(1800));
    let rt = vsphere_bench::runtime();
    let config = vsphere_bench::config(&sim);

    let (mut read, mut judge, mut total, mut python) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut rust_calls, mut python_calls, mut statuses) = (String::new(), String::new(), String::new());
    for round in 0..rounds {
        let (r, j, calls, counts, judged) = rust_run(&rt, &config);
        assert_eq!(counts, [hosts, vms, vms], "hosts, VMs and adapters judged");
        read.push(r);
        judge.push(j);
        total.push(r + j);
        rust_calls = calls;
        statuses = judged;

        let line = python_run(&sim, page_size);
        let count = |k: &str| line[k].as_u64().and_then(|n| usize::try_from(n).ok());
        assert_eq!(
            (count("hosts"), count("vms"), count("grouped")),
            (Some(hosts), Some(vms), Some(vms)),
            "hosts and VMs pyVmomi read: {line}"
        );
        python.push(line["seconds"].as_f64().expect("seconds"));
        python_calls = line["calls"].to_string();
        eprintln!(
            "round {}: Rust read {r:.3} s + judge {j:.3} s, pyVmomi read {:.3} s",
            round + 1,
            python[round]
        );
        assert_eq!(sim.sessions(), 0, "both logged out");
    }
    let (r, j, t, p) = (
        median(read.clone()),
        median(judge.clone()),
        median(total.clone()),
        median(python.clone()),
    );
    println!("configuration of {hosts} hosts and {vms} VMs, page {page_size}, {rounds} rounds each, alternating");
    println!("Rust read: median {r:.3} s, range {}", range(&read));
    println!("Rust judging: median {j:.3} s, range {}", range(&judge));
    println!("Rust read and judging: median {t:.3} s, range {}", range(&total));
    println!("pyVmomi 7.0.3 read: median {p:.3} s, range {}", range(&python));
    println!("ratio Rust/pyVmomi: read {:.2}, read and judging {:.2}", r / p, t / p);
    let peak = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_string))
        .unwrap_or_default();
    println!("peak memory of this process (read and judging): {peak}");
    println!("judged, Rust: {statuses}");
    println!("SOAP calls, Rust: {rust_calls}");
    println!("SOAP calls, pyVmomi: {python_calls}");
}
