//! How long discovering a large vCenter inventory takes: the Rust client against pyVmomi
//! 7.0.3 (VMware's Python SDK, `scripts/vsphere_inventory_pyvmomi.py`) reading the same
//! properties of 1,000 hosts and 10,000 VMs from govmomi's vSphere simulator, in the same
//! run, alternating, each timed from the connection to the logout. Prints the medians,
//! their ratio and the SOAP calls each makes (docs/benchmarks.md records them).
//!
//!     cargo run --release -p pvrdma-vsphere --example inventory_bench [-- HOSTS VMS ROUNDS]
//!
//! Needs what `scripts/install-test-deps.sh` installs for the simulator, and
//! `pip install pyvmomi==7.0.3`.
#[path = "../../tests/support/vcsim.rs"]
#[allow(dead_code)]
mod vcsim;
#[path = "../../tests/support/vsphere_bench.rs"]
mod vsphere_bench;

use std::time::Instant;

use pvrdma_vsphere::{Client, Config};
use vsphere_bench::{median, pyvmomi_run};

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a number")).collect();
    let (hosts, vms, rounds) = match args[..] {
        [h, v, r] => (h, v, r),
        [] => (1000, 10_000, 7),
        _ => panic!("arguments: HOSTS VMS ROUNDS"),
    };
    let page_size = Config::DEFAULT_PAGE_SIZE;
    eprintln!("starting the simulator with {hosts} hosts and {vms} VMs…");
    let mut sim = vcsim::Vcsim::start_scale(hosts, vms);
    let rt = vsphere_bench::runtime();
    let config = vsphere_bench::config(&sim);

    let (mut rust, mut python) = (Vec::new(), Vec::new());
    let (mut rust_calls, mut python_calls) = (String::new(), String::new());
    for round in 0..rounds {
        // Rust: login, the paged read, logout, as read_inventory does.
        let start = Instant::now();
        let mut client = Client::new(config.clone()).expect("client");
        let inv = rt.block_on(client.inventory()).expect("inventory");
        rt.block_on(client.logout()).expect("logout");
        rust.push(start.elapsed().as_secs_f64());
        assert_eq!((inv.hosts.len(), inv.vms.len()), (hosts, vms));
        rust_calls = format!("{:?}", client.calls());

        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/vsphere_inventory_pyvmomi.py");
        let line = pyvmomi_run(script, &sim, page_size, &[]);
        assert_eq!(
            (line["hosts"].as_u64(), line["vms"].as_u64()),
            (Some(hosts as u64), Some(vms as u64))
        );
        python.push(line["seconds"].as_f64().expect("seconds"));
        python_calls = line["calls"].to_string();
        eprintln!(
            "round {}: Rust {:.3} s, pyVmomi {:.3} s",
            round + 1,
            rust[round],
            python[round]
        );
        assert_eq!(sim.sessions(), 0, "both logged out");
    }
    let (r, p) = (median(rust.clone()), median(python.clone()));
    println!("inventory of {hosts} hosts and {vms} VMs, page {page_size}, {rounds} rounds each, alternating");
    println!("Rust client: median {r:.3} s (runs {rust:.3?})");
    println!("pyVmomi 7.0.3: median {p:.3} s (runs {python:.3?})");
    println!("ratio Rust/pyVmomi: {:.2}", r / p);
    println!("SOAP calls, Rust: {rust_calls}");
    println!("SOAP calls, pyVmomi: {python_calls}");
}
