//! Peak memory and wall time of the command an admin runs against a large vCenter,
//! `pvrdma-doctor --vcenter … --no-ssh --format json`, without and with `--bundle`,
//! against pyVmomi 7.0.3 (VMware's Python SDK, `scripts/vsphere_config_pyvmomi.py`)
//! reading the same properties of the same fleet in the same run. govmomi's vSphere
//! simulator serves the fleet: every host configured for PVRDMA as VMware's guide asks,
//! every VM powered on with one PVRDMA adapter. Each run is a process of its own, measured
//! from spawn to exit; its peak resident memory is the kernel's (`ru_maxrss` from
//! wait4(2), taken by a small launcher so that this program's own memory is not counted).
//! The runs alternate; medians and ranges are printed (docs/benchmarks.md records them).
//!
//! ```text
//! cargo build --release --bin pvrdma-doctor
//! cargo run --release --example no_ssh_bench [-- [--plain] [--serve] HOSTS VMS_PER_HOST ROUNDS [BINARY…]]
//! ```
//!
//! `--plain`: the simulator's own host and VM configuration instead (its generated fleet:
//! no RDMA device, VMs with its default devices). `--serve`: only start the simulator and
//! print the command line that reads it, to profile a run by hand (until stdin closes).
//!
//! BINARY: one or more builds of pvrdma-doctor to compare (say, one of the commit before a
//! change and one after), each measured in every round; by default the release build
//! beside this example. Needs what `scripts/install-test-deps.sh` installs for the
//! simulator and pyVmomi (its virtualenv, or `PVRDMA_DOCTOR_PYTHON`).
#[path = "../tests/support/measure.rs"]
#[allow(dead_code)]
mod measure;
#[path = "../tests/support/vcsim.rs"]
#[allow(dead_code)]
mod vcsim;
#[path = "../tests/support/vsphere_bench.rs"]
#[allow(dead_code)]
mod vsphere_bench;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use measure::{run_measured, Ran};
use pvrdma_vsphere::config::{HOST_PROPERTIES, VM_PROPERTIES};
use pvrdma_vsphere::Config;
use vcsim::{Spec, Vcsim};
use vsphere_bench::{median, pyvmomi_command};

/// The two ways the command is run.
const MODES: [&str; 2] = ["--format json", "--format json --bundle"];

/// The measured runs of one command.
#[derive(Default)]
struct Runs {
    seconds: Vec<f64>,
    peak_mib: Vec<f64>,
}

impl Runs {
    fn push(&mut self, ran: Ran) {
        self.seconds.push(ran.seconds);
        self.peak_mib.push(ran.peak_kib as f64 / 1024.0);
    }

    fn line(&self, what: &str) -> String {
        format!(
            "{what}: wall median {:.3} s ({}), peak RSS median {:.1} MiB ({})",
            median(self.seconds.clone()),
            range(&self.seconds, "s", 3),
            median(self.peak_mib.clone()),
            range(&self.peak_mib, "MiB", 1)
        )
    }
}

fn range(v: &[f64], unit: &str, decimals: usize) -> String {
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{min:.decimals$}–{max:.decimals$} {unit}")
}

/// One run of `binary` against `sim`, its report to `report`, with `--bundle` to `bundle`
/// when given.
fn doctor(binary: &Path, sim: &Vcsim, report: &Path, bundle: Option<&Path>) -> Ran {
    let mut command = Command::new(binary);
    command
        .args(["--vcenter", &sim.url, "--vcenter-user", &sim.user])
        .arg("--vcenter-ca")
        .arg(&sim.ca)
        .args(["--vcenter-timeout", "300s", "--no-ssh", "--format", "json"])
        .env("PVRDMA_DOCTOR_VCENTER_PASSWORD", &sim.password)
        .env_remove("PVRDMA_DOCTOR_VCENTER_USER");
    if let Some(path) = bundle {
        command.arg("--bundle").arg(path);
    }
    let report = std::fs::File::create(report).expect("the report file");
    let (ran, _) = run_measured(&command, b"", report.into());
    assert!(
        matches!(ran.exit_code, Some(0..=3)),
        "{} exited {:?}",
        binary.display(),
        ran.exit_code
    );
    ran
}

/// The hosts and PVRDMA adapters a JSON report holds.
fn counted(report: &Path) -> (usize, usize) {
    let text = std::fs::read(report).expect("the report");
    let doc: serde_json::Value = serde_json::from_slice(&text).expect("the report is JSON");
    let hosts = doc["hosts"].as_array().expect("hosts");
    let adapters = hosts
        .iter()
        .flat_map(|h| h["vms"].as_array().into_iter().flatten())
        .flat_map(|vm| vm["adapters"].as_array().into_iter().flatten())
        .count();
    (hosts.len(), adapters)
}

/// `analyze` of the bundle gives the report the run printed: the bundle holds every
/// host's answers.
fn check_bundle(binary: &Path, bundle: &Path, printed: &Path, dir: &Path) {
    let again = dir.join("analyzed.json");
    let status = Command::new(binary)
        .arg("analyze")
        .arg(bundle)
        .args(["--format", "json"])
        .stdout(std::fs::File::create(&again).expect("the analyzed report"))
        .status()
        .expect("analyze");
    assert!(matches!(status.code(), Some(0..=3)), "analyze exited {status}");
    let read =
        |p: &Path| -> serde_json::Value { serde_json::from_slice(&std::fs::read(p).expect("a report")).expect("JSON") };
    assert_eq!(
        read(&again)["hosts"],
        read(printed)["hosts"],
        "analyze of the bundle gives the printed report's hosts"
    );
}

/// One pyVmomi run reading what `--no-ssh` reads: the process measured, and the script's
/// own time from the connection to the logout.
fn pyvmomi(sim: &Vcsim, hosts: usize, vms: usize) -> (Ran, f64) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/vsphere_config_pyvmomi.py");
    let extra = [HOST_PROPERTIES.join(","), VM_PROPERTIES.join(",")];
    let command = pyvmomi_command(script, sim, Config::DEFAULT_PAGE_SIZE, &extra);
    let password = format!("{}\n", sim.password);
    let (ran, out) = run_measured(&command, password.as_bytes(), Stdio::piped());
    assert_eq!(ran.exit_code, Some(0), "the pyVmomi script failed");
    let line: serde_json::Value = serde_json::from_slice(&out).expect("its JSON line");
    let count = |k: &str| line[k].as_u64().and_then(|n| usize::try_from(n).ok());
    assert_eq!(
        (count("hosts"), count("grouped")),
        (Some(hosts), Some(vms)),
        "hosts and VMs pyVmomi read: {line}"
    );
    (ran, line["seconds"].as_f64().expect("seconds"))
}

/// What the command line asks: the fleet's size, the rounds and the binaries compared.
struct Options {
    /// `--plain`: the simulator's own host and VM configuration (its generated fleet, no
    /// PVRDMA), VMS_PER_HOST × HOSTS VMs spread over the hosts.
    plain: bool,
    /// `--serve`: only serve the fleet, to profile a run by hand.
    serve_only: bool,
    hosts: usize,
    per_host: usize,
    rounds: usize,
    binaries: Vec<PathBuf>,
}

impl Options {
    fn from_args() -> Options {
        let plain = std::env::args().any(|a| a == "--plain");
        let serve_only = std::env::args().any(|a| a == "--serve");
        let mut args = std::env::args().skip(1).filter(|a| a != "--plain" && a != "--serve");
        let mut number = |default: usize| {
            args.next()
                .map_or(default, |a| a.parse().expect("HOSTS VMS_PER_HOST ROUNDS [BINARY…]"))
        };
        let (hosts, per_host, rounds) = (number(1000), number(10), number(5));
        let mut binaries: Vec<PathBuf> = args.map(PathBuf::from).collect();
        if binaries.is_empty() {
            // target/release/examples/no_ssh_bench -> target/release/pvrdma-doctor
            let exe = std::env::current_exe().expect("this program's path");
            binaries.push(
                exe.parent()
                    .and_then(Path::parent)
                    .expect("target dir")
                    .join("pvrdma-doctor"),
            );
        }
        for b in &binaries {
            assert!(
                b.is_file(),
                "{} is missing: cargo build --release --bin pvrdma-doctor",
                b.display()
            );
        }
        Options {
            plain,
            serve_only,
            hosts,
            per_host,
            rounds,
            binaries,
        }
    }
}

/// Prints the command that reads the simulator, and serves it until stdin closes.
fn serve_until_stdin_closes(sim: &Vcsim) {
    println!(
        "PVRDMA_DOCTOR_VCENTER_PASSWORD='{}' pvrdma-doctor --vcenter {} --vcenter-user {} --vcenter-ca {} --no-ssh --format json",
        sim.password,
        sim.url,
        sim.user,
        sim.ca.display()
    );
    println!("serving until this program's stdin closes");
    let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
}

/// What the rounds measured: each binary's runs per mode, pyVmomi's process and its read.
struct Measured {
    ours: Vec<[Runs; 2]>,
    python: Runs,
    python_read: Vec<f64>,
}

/// The rounds, alternating: each binary in each mode, then pyVmomi; every report checked
/// to hold `adapters` adapters of every host.
fn measure_rounds(o: &Options, sim: &mut Vcsim, adapters: usize) -> Measured {
    let vms = o.hosts * o.per_host;
    let dir = tempfile::tempdir().expect("a scratch folder");
    let report = dir.path().join("report.json");
    let bundle = dir.path().join("run.tar.gz");
    let mut m = Measured {
        ours: o.binaries.iter().map(|_| Default::default()).collect(),
        python: Runs::default(),
        python_read: Vec::new(),
    };
    for round in 0..o.rounds {
        for (b, binary) in o.binaries.iter().enumerate() {
            for (mode, runs) in m.ours[b].iter_mut().enumerate() {
                let with_bundle = (mode == 1).then_some(bundle.as_path());
                let ran = doctor(binary, sim, &report, with_bundle);
                assert_eq!(counted(&report), (o.hosts, adapters), "hosts and adapters reported");
                if with_bundle.is_some() && round == 0 {
                    check_bundle(binary, &bundle, &report, dir.path());
                }
                let _ = std::fs::remove_file(&bundle);
                eprintln!(
                    "round {}: {} {}: {:.3} s, {:.1} MiB",
                    round + 1,
                    binary.display(),
                    MODES[mode],
                    ran.seconds,
                    ran.peak_kib as f64 / 1024.0
                );
                runs.push(ran);
            }
        }
        let (ran, read) = pyvmomi(sim, o.hosts, vms);
        eprintln!(
            "round {}: pyVmomi: {:.3} s ({read:.3} s from connection to logout), {:.1} MiB",
            round + 1,
            ran.seconds,
            ran.peak_kib as f64 / 1024.0
        );
        m.python.push(ran);
        m.python_read.push(read);
        assert_eq!(sim.sessions(), 0, "every run logged out");
    }
    m
}

/// The medians and ranges of every run, and their ratios to pyVmomi's.
fn print_figures(o: &Options, m: &Measured, fleet: &str) {
    let vms = o.hosts * o.per_host;
    println!(
        "--no-ssh of {} hosts and {vms} VMs ({fleet}), {} rounds, alternating; a process per run",
        o.hosts, o.rounds
    );
    let (py_wall, py_peak) = (median(m.python.seconds.clone()), median(m.python.peak_mib.clone()));
    for (b, binary) in o.binaries.iter().enumerate() {
        for (mode, runs) in m.ours[b].iter().enumerate() {
            println!("{}", runs.line(&format!("{} {}", binary.display(), MODES[mode])));
            println!(
                "  ratio to pyVmomi: wall {:.2}, peak RSS {:.2}",
                median(runs.seconds.clone()) / py_wall,
                median(runs.peak_mib.clone()) / py_peak
            );
        }
    }
    println!("{}", m.python.line("pyVmomi 7.0.3 (the process)"));
    println!(
        "pyVmomi 7.0.3 from connection to logout: median {:.3} s ({})",
        median(m.python_read.clone()),
        range(&m.python_read, "s", 3)
    );
}

fn main() {
    measure::launch_if_asked();
    let o = Options::from_args();
    let vms = o.hosts * o.per_host;
    eprintln!("starting the simulator with {} hosts and {vms} VMs…", o.hosts);
    let mut sim = if o.plain {
        Vcsim::start_scale(o.hosts, vms)
    } else {
        Vcsim::start_within(&Spec::pvrdma_fleet(o.hosts, o.per_host), Duration::from_secs(1800))
    };
    if o.serve_only {
        serve_until_stdin_closes(&sim);
        return;
    }
    // The simulator's own VMs have no PVRDMA adapter.
    let (adapters, fleet) = match o.plain {
        true => (0, "the simulator's own configuration"),
        false => (vms, "configured for PVRDMA"),
    };
    let measured = measure_rounds(&o, &mut sim, adapters);
    print_figures(&o, &measured, fleet);
}
