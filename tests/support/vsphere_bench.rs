//! What the two vSphere benchmarks (`inventory_bench`, `config_bench`) share: the median
//! of the rounds, the client's runtime and configuration for the simulator, and one run
//! of a pyVmomi script against it. A benchmark stops with a message when its set-up fails.
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use pvrdma_vsphere::{Config, Endpoint, SecretString, Trust};

use super::vcsim::Vcsim;

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Two worker threads, as the command line runs the client.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// The client's configuration for `sim`: its CA trusted, a timeout long enough for
/// thousands of hosts.
pub fn config(sim: &Vcsim) -> Config {
    let mut config = Config::new(
        Endpoint::parse(&sim.url).expect("URL"),
        Trust::Ca(sim.ca.clone()),
        &sim.user,
        SecretString::from(sim.password.clone()),
    );
    config.timeout = Duration::from_secs(300);
    config
}

/// The Python that has pyVmomi: `PVRDMA_DOCTOR_PYTHON`, else the virtualenv
/// `scripts/install-test-deps.sh` makes, else `python3` on the PATH.
pub fn python() -> String {
    const VENV: &str = "/usr/local/lib/pvrdma-doctor-test/venv/bin/python3";
    match std::env::var("PVRDMA_DOCTOR_PYTHON") {
        Ok(python) if !python.is_empty() => python,
        _ if std::path::Path::new(VENV).is_file() => VENV.to_string(),
        _ => "python3".to_string(),
    }
}

/// The command that runs the pyVmomi `script` against `sim` (its address, account and CA,
/// the page size, one round, then `extra` arguments); it reads the password on stdin.
pub fn pyvmomi_command(script: &str, sim: &Vcsim, page_size: u32, extra: &[String]) -> Command {
    let address = sim.address();
    let (host, port) = address.rsplit_once(':').expect("host:port");
    let mut command = Command::new(python());
    command
        .arg(script)
        .args([host, port, &sim.user])
        .arg(&sim.ca)
        .args([page_size.to_string(), "1".to_string()])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    command
}

/// One run of the pyVmomi `script` against `sim` (see [`pyvmomi_command`]; the password
/// on stdin): its JSON line, with its own timing (interpreter start-up and imports left
/// out).
pub fn pyvmomi_run(script: &str, sim: &Vcsim, page_size: u32, extra: &[String]) -> serde_json::Value {
    let mut child = pyvmomi_command(script, sim, page_size, extra).spawn().expect("python3");
    writeln!(child.stdin.take().expect("stdin"), "{}", sim.password).expect("password");
    let out = child.wait_with_output().expect("pyVmomi run");
    assert!(out.status.success(), "the pyVmomi script {script} failed");
    serde_json::from_slice(&out.stdout).expect("its JSON line")
}
