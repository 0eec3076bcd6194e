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

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pvrdma_vsphere::{Client, Config, Endpoint, SecretString, Trust};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

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
    let address = sim.address();
    let (host, port) = address.rsplit_once(':').expect("host:port");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut config = Config::new(
        Endpoint::parse(&sim.url).expect("URL"),
        Trust::Ca(sim.ca.clone()),
        &sim.user,
        SecretString::from(sim.password.clone()),
    );
    config.timeout = Duration::from_secs(300);

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

        // pyVmomi: one run of the script, its own timing (interpreter start-up and imports
        // left out).
        let mut child = Command::new("python3")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../scripts/vsphere_inventory_pyvmomi.py"
            ))
            .args([host, port, &sim.user])
            .arg(&sim.ca)
            .args([page_size.to_string(), "1".to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3");
        writeln!(child.stdin.take().expect("stdin"), "{}", sim.password).expect("password");
        let out = child.wait_with_output().expect("pyVmomi run");
        assert!(out.status.success(), "the pyVmomi script failed");
        let line: serde_json::Value = serde_json::from_slice(&out.stdout).expect("its JSON line");
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
