//! A CA file that holds the server's own self-signed certificate (vCenter's or a
//! standalone ESXi's, which say they are a CA): trusted as curl, Python's ssl and Go trust
//! it, its host name and dates checked; every refusal says why in plain words and names
//! the file. Against govmomi's vSphere simulator serving such a certificate, and OpenSSL's
//! `s_server` serving one out of its dates. Real-tool tests: scripts/test.sh runs them.
#[path = "../../tests/support/vcsim.rs"]
#[allow(dead_code)]
mod vcsim;

use std::io::Read as _;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pvrdma_vsphere::{read_inventory, CertificateProblem, Config, Endpoint, Error, Inventory, SecretString, Trust};
use vcsim::{HostSpec, Spec, Vcsim, VmSpec};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn read(address: &str, trust: Trust, user: &str, password: &str) -> Result<Inventory, Error> {
    let mut c = Config::new(
        Endpoint::parse(address).unwrap(),
        trust,
        user,
        SecretString::from(password.to_string()),
    );
    c.timeout = Duration::from_secs(30);
    runtime().block_on(read_inventory(c, std::future::pending()))
}

/// The problem of a refused certificate, with the message the user reads.
fn refusal(result: Result<Inventory, Error>) -> (CertificateProblem, String) {
    match result {
        Err(e @ Error::UnknownCertificate { .. }) => {
            let text = e.to_string();
            let Error::UnknownCertificate { problem, .. } = e else {
                unreachable!()
            };
            (problem, text)
        }
        other => panic!("expected a refused certificate, got {other:?}"),
    }
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_self_signed_certificate_in_the_ca_file_is_trusted_for_its_own_name() {
    let spec = Spec::one_cluster(
        "Lab",
        "HPC",
        vec![HostSpec::new("esx01")],
        vec![VmSpec::new("hpc-node01", "esx01", "")],
    );
    let mut sim = Vcsim::start_self_signed(&spec);
    let at = |host: &str| sim.url.replace("127.0.0.1", host);
    let ca = Trust::Ca(sim.ca.clone());

    // The file holds the very certificate the server presents: trusted, as curl trusts
    // it given as its CA file.
    let inventory = read(&sim.url, ca.clone(), &sim.user, &sim.password).expect("trusted");
    assert_eq!(inventory.hosts.len(), 1);

    // Its name is still checked: it is issued for 127.0.0.1, not for localhost.
    let (problem, text) = refusal(read(&at("localhost"), ca, &sim.user, &sim.password));
    assert_eq!(
        problem,
        CertificateProblem::Anchor {
            ca_file: sim.ca.clone(),
            problem: Box::new(CertificateProblem::WrongName {
                names: vec!["127.0.0.1".into()]
            }),
        }
    );
    assert!(
        text.contains(&format!(
            "(it is the certificate in {}, but it is not issued for the address given: it names 127.0.0.1; give one \
             of those in the vCenter address)",
            sim.ca.display()
        )),
        "{text}"
    );

    // Not in the file (the system's roots, another certificate): a CA's certificate where
    // a server's belongs, said in those words, naming the file.
    let (problem, text) = refusal(read(&sim.url, Trust::System, &sim.user, &sim.password));
    assert_eq!(problem, CertificateProblem::CaCertificate { ca_file: None });
    assert!(text.contains("(it is a CA's certificate, not a server's)"), "{text}");
    let other = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/self-signed-vcenter.pem");
    let (problem, text) = refusal(read(&sim.url, Trust::Ca(other.clone()), &sim.user, &sim.password));
    assert_eq!(
        problem,
        CertificateProblem::CaCertificate {
            ca_file: Some(other.clone())
        }
    );
    assert!(
        text.contains(&format!("not a server's, and not the one in {})", other.display())),
        "{text}"
    );
    assert!(!text.contains("CaUsedAsEndEntity"), "{text}");
    assert_eq!(sim.sessions(), 0, "no session opened, or each logged out");
}

/// `openssl s_server` on a free loopback port with `certificate`, killed when dropped.
struct TlsServer {
    child: Child,
    port: u16,
}

impl TlsServer {
    fn start(dir: &Path, certificate: &rcgen::Certificate, key: &rcgen::KeyPair) -> TlsServer {
        std::fs::write(dir.join("cert.pem"), certificate.pem()).unwrap();
        std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new("openssl")
            .args(["s_server", "-quiet", "-www", "-accept"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("-cert")
            .arg(dir.join("cert.pem"))
            .arg("-key")
            .arg(dir.join("key.pem"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("openssl s_server (scripts/install-test-deps.sh installs openssl)");
        let mut server = TlsServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                let mut err = String::new();
                let _ = server.child.stderr.take().map(|mut e| e.read_to_string(&mut err));
                panic!("openssl s_server ended ({status}): {err}");
            }
            assert!(Instant::now() < deadline, "openssl s_server is not listening");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A self-signed certificate for 127.0.0.1 that says it is a CA, valid from `from` to
/// `to` (year, month, day).
fn self_signed(from: (i32, u8, u8), to: (i32, u8, u8)) -> (rcgen::Certificate, rcgen::KeyPair) {
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.not_before = rcgen::date_time_ymd(from.0, from.1, from.2);
    params.not_after = rcgen::date_time_ymd(to.0, to.1, to.2);
    let key = rcgen::KeyPair::generate().unwrap();
    let certificate = params.self_signed(&key).unwrap();
    (certificate, key)
}

#[test]
#[ignore = "needs openssl (s_server): scripts/test.sh runs it"]
fn a_self_signed_certificate_in_the_ca_file_is_refused_out_of_its_dates() {
    for (from, to, expected, words) in [
        (
            (2020, 1, 1),
            (2021, 1, 1),
            CertificateProblem::Expired,
            "it has expired",
        ),
        (
            (2090, 1, 1),
            (2091, 1, 1),
            CertificateProblem::NotValidYet,
            "it is not valid yet",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (certificate, key) = self_signed(from, to);
        let server = TlsServer::start(dir.path(), &certificate, &key);
        let ca = dir.path().join("cert.pem");
        let address = format!("127.0.0.1:{}", server.port);
        let (problem, text) = refusal(read(&address, Trust::Ca(ca.clone()), "u", "p"));
        assert_eq!(
            problem,
            CertificateProblem::Anchor {
                ca_file: ca.clone(),
                problem: Box::new(expected)
            }
        );
        assert!(
            text.contains(&format!("(it is the certificate in {}, but {words}", ca.display())),
            "{text}"
        );
        // In its dates, the same certificate is trusted: the handshake goes through (the
        // server is no vSphere API, which the client then says).
        drop(server);
    }
    let dir = tempfile::tempdir().unwrap();
    let (certificate, key) = self_signed((2020, 1, 1), (2090, 1, 1));
    let server = TlsServer::start(dir.path(), &certificate, &key);
    let address = format!("127.0.0.1:{}", server.port);
    let err = read(&address, Trust::Ca(dir.path().join("cert.pem")), "u", "p").unwrap_err();
    assert!(
        !matches!(err, Error::UnknownCertificate { .. } | Error::Tls { .. }),
        "the certificate is trusted, what follows is not TLS's: {err:?}"
    );
}
