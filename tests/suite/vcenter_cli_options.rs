//! The vCenter options' limits and refusals, against govmomi's vSphere simulator: a
//! vCenter slower than `--vcenter-timeout` ends the run as unknown, naming the vCenter
//! and the option, with its session logged out; a bad `--vcenter-thumbprint` is said once;
//! vCenter's own self-signed certificate given as `--vcenter-ca` is trusted.
use crate::support::client::Doctor;
use crate::support::vcsim::{HostSpec, Spec, Vcsim, VmSpec};
use std::time::Duration;

fn inventory() -> Spec {
    Spec::one_cluster(
        "Lab",
        "HPC",
        vec![HostSpec::new("esx01")],
        vec![VmSpec::new("hpc-node01", "esx01", "")],
    )
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_vcenter_slower_than_vcenter_timeout_ends_the_run_as_unknown_and_logs_out() {
    let mut sim = Vcsim::start(&inventory());
    // (what, the subcommand, its other arguments)
    let runs: [(&str, &[&str], &[&str]); 3] = [
        ("hosts", &["hosts"], &[]),
        ("the diagnosis", &[], &["--format", "nagios"]),
        ("watch", &["watch"], &["--count", "1", "--interval", "1s"]),
    ];
    for (what, command, args) in runs {
        // The inventory read answers after 10 s; the run waits 1 s for it.
        sim.delay_next_read(10);
        let out = Doctor::new()
            .args(command)
            .reading(&sim)
            .args(args)
            .args(["--vcenter-timeout", "1s"])
            .timeout(Duration::from_secs(120))
            .run();
        assert_eq!(out.code, Some(3), "{what}: {}{}", out.stdout, out.stderr);
        let said = format!("{}{}", out.stdout, out.stderr).replace('\n', " ");
        let label = sim.address();
        assert!(
            said.contains(&format!(
                "vCenter {label} did not answer RetrievePropertiesEx within 1s"
            )),
            "{what}: {said}"
        );
        assert!(
            said.contains("give it more time with --vcenter-timeout"),
            "{what}: {said}"
        );
        assert_eq!(sim.sessions(), 0, "{what}: the session is logged out after the timeout");
    }
}

#[test]
fn a_bad_thumbprint_is_named_once_and_a_zero_vcenter_timeout_is_refused() {
    let out = Doctor::new()
        .args(["hosts", "--vcenter", "vc01", "--vcenter-user", "u"])
        .args(["--vcenter-thumbprint", "AB:CD"])
        .run();
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    let text = out.stderr.replace('\n', " ");
    assert_eq!(text.matches("AB:CD").count(), 1, "{text}");
    assert!(text.contains("not a SHA-256 thumbprint"), "{text}");
    let zero = Doctor::new()
        .args([
            "hosts",
            "--vcenter",
            "vc01",
            "--vcenter-user",
            "u",
            "--vcenter-timeout",
            "0s",
        ])
        .run();
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    assert!(zero.stderr.contains("must be above zero"), "{}", zero.stderr);
}

/// A vCenter that kept the certificate it made itself: the admin gives that certificate
/// as `--vcenter-ca`, as to curl's `--cacert`, and the run reads the inventory.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_self_signed_vcenter_certificate_given_as_the_ca_file_is_trusted() {
    let mut sim = Vcsim::start_self_signed(&inventory());
    let out = Doctor::new()
        .args(["hosts"])
        .reading(&sim)
        .timeout(Duration::from_secs(120))
        .run();
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("esx01"), "{}", out.stdout);
    assert_eq!(sim.sessions(), 0);
}

/// A real server on a loopback port, stopped when dropped.
struct Loopback {
    child: std::process::Child,
    port: u16,
}

impl Loopback {
    /// Runs `command` (its last argument the port, or `{port}` in one) and waits until
    /// the port accepts connections.
    fn start(program: &str, args: &[&str], dir: &std::path::Path) -> Loopback {
        let port = crate::support::free_port();
        let args: Vec<String> = args.iter().map(|a| a.replace("{port}", &port.to_string())).collect();
        let child = std::process::Command::new(program)
            .args(&args)
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program}: {e} (scripts/install-test-deps.sh installs it)"));
        let server = Loopback { child, port };
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "{program} is not listening on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The run against `address` that is not vCenter: `hosts`, the password from the
/// environment, the CA file when given.
fn hosts_at(address: &str, ca: Option<&std::path::Path>) -> crate::support::client::Outcome {
    let mut doctor = Doctor::new().env("PVRDMA_DOCTOR_VCENTER_PASSWORD", "secret").args([
        "hosts",
        "--vcenter",
        address,
        "--vcenter-user",
        "monitor@vsphere.local",
    ]);
    if let Some(ca) = ca {
        doctor = doctor.arg("--vcenter-ca").arg(ca);
    }
    doctor.timeout(Duration::from_secs(120)).run()
}

/// An address that is no vCenter is said for what it is, at once (not after the request
/// timeout), and is the admin's to fix: exit 2, as a refused certificate.
#[test]
#[ignore = "needs python3 and openssl (s_server): scripts/test.sh runs it"]
fn a_web_server_is_told_apart_from_vcenter_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");

    // Plain HTTP where HTTPS was expected.
    let http = Loopback::start(
        "python3",
        &["-m", "http.server", "--bind", "127.0.0.1", "{port}"],
        dir.path(),
    );
    let out = hosts_at(&http.address(), None);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    let said = out.stderr.replace("\n    ", " ");
    assert!(
        said.contains(&format!("vCenter {}: this port speaks HTTP, not HTTPS", http.address())),
        "{said}"
    );
    drop(http);

    // HTTPS that is not the vSphere API: OpenSSL's test server, which answers any GET with
    // a status page and never answers a POST; its certificate is given as the CA file.
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("certificate");
    std::fs::write(dir.path().join("cert.pem"), cert.pem()).expect("cert");
    std::fs::write(dir.path().join("key.pem"), key.serialize_pem()).expect("key");
    let https = Loopback::start(
        "openssl",
        &[
            "s_server",
            "-quiet",
            "-www",
            "-accept",
            "127.0.0.1:{port}",
            "-cert",
            "cert.pem",
            "-key",
            "key.pem",
        ],
        dir.path(),
    );
    let out = hosts_at(&https.address(), Some(&dir.path().join("cert.pem")));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    let said = out.stderr.replace("\n    ", " ");
    assert!(
        said.contains(&format!(
            "vCenter {}: this is not a vSphere API endpoint (https://{}/sdk/vimServiceVersions.xml answered HTTP 200, \
             text/html: <HTML>",
            https.address(),
            https.address()
        )),
        "{said}"
    );
    assert!(
        !said.contains("--vcenter-timeout"),
        "said at once, not after the timeout: {said}"
    );
}
