use super::super::Config;
use super::*;
use std::path::Path;

/// A directory with a password file and a CA certificate (PEM), as an admin sets up.
fn secrets() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("vcenter.pw"), "s3cret pass\nignored second line\n").unwrap();
    let ca = rcgen::generate_simple_self_signed(vec!["vc01.example.com".to_string()]).unwrap();
    std::fs::write(dir.path().join("vcenter.pem"), ca.cert.pem()).unwrap();
    dir
}

fn with_dir(text: &str, dir: &Path) -> String {
    text.replace("DIR", &dir.display().to_string())
}

const FULL: &str = r#"
modules:
  probe: {probe: true}
targets: [esx99]
vcenters:
  lab:
    url: https://vc01.example.com
    user: monitor@vsphere.local
    password_file: DIR/vcenter.pw
    ca: DIR/vcenter.pem
  east:
    url: vc02.example.com:8443
    user: monitor@vsphere.local
    password_env: PVRDMA_TEST_VCENTER_PW_SET
    thumbprint: "AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB"
    refresh: 1m
    timeout: 10s
  spare: {url: vc03, user: u, password_file: DIR/vcenter.pw}
groups:
  rack1: "esx[10-11]"
  rack2: {hosts: [esx20, esx21], module: probe}
  hpc: {vcenter: lab, cluster: "Lab East/HPC"}
  mpi: {vcenter: east, cluster: [A, B], vm: ["hpc-node[07]*", "x y"], include_maintenance: true, module: probe}
"#;

#[test]
fn vcenters_and_their_groups_are_read_beside_static_groups() {
    let dir = secrets();
    std::env::set_var("PVRDMA_TEST_VCENTER_PW_SET", "from-env");
    let c = Config::parse(&with_dir(FULL, dir.path())).unwrap();
    let vc = &c.vcenter;
    assert_eq!(vc.vcenters.len(), 3);
    let lab = &vc.vcenters["lab"];
    assert_eq!(lab.endpoint.to_string(), "https://vc01.example.com/sdk");
    assert_eq!(lab.password.expose_secret(), "s3cret pass", "the file's first line");
    assert_eq!(lab.trust, Trust::Ca(dir.path().join("vcenter.pem")));
    assert_eq!(lab.refresh, DEFAULT_REFRESH);
    assert_eq!(lab.timeout, DEFAULT_TIMEOUT);
    let east = &vc.vcenters["east"];
    assert_eq!(east.password.expose_secret(), "from-env");
    assert!(matches!(east.trust, Trust::Pinned(t) if t.0 == [0xab; 32]));
    assert_eq!(
        (east.refresh, east.timeout),
        (Duration::from_secs(60), Duration::from_secs(10))
    );
    assert_eq!(east.client_config().endpoint.port, 8443);

    assert_eq!(
        c.groups.keys().collect::<Vec<_>>(),
        ["rack1", "rack2"],
        "static groups stay"
    );
    assert_eq!(c.groups["rack2"].module.as_deref(), Some("probe"));
    let hpc = &vc.groups["hpc"];
    assert_eq!(hpc.vcenter, "lab");
    assert_eq!(hpc.selection.clusters, [ClusterRef::parse("Lab East/HPC").unwrap()]);
    assert!(!hpc.selection.include_maintenance && !hpc.selection.include_disconnected);
    let mpi = &vc.groups["mpi"];
    assert_eq!(mpi.selection.clusters.len(), 2);
    assert_eq!(
        mpi.selection.vms.iter().map(VmPattern::as_str).collect::<Vec<_>>(),
        ["hpc-node[07]*", "x y"]
    );
    assert!(mpi.selection.include_maintenance);
    assert_eq!(c.module_for("mpi", None).unwrap().0, "probe");
    assert_eq!(c.module_for("hpc", None).unwrap().0, "default");
    // Only the vCenters a group reads are connected to.
    assert_eq!(
        vc.followed().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["east", "lab"]
    );
    assert!(
        c.summary()
            .contains("2 node-set group(s), 3 vCenter(s) feeding 2 vCenter group(s)"),
        "{}",
        c.summary()
    );

    let lines = vc.lines().join("\n");
    for needle in [
        "vcenter lab: https://vc01.example.com/sdk as monitor@vsphere.local (password from the file",
        "trusting a certificate the CA in",
        "every 5m, each request within 30s",
        "every 1m, each request within 10s",
        "group(s) hpc",
        "trusting exactly the certificate with SHA-256 thumbprint AB:AB:",
        "password from $PVRDMA_TEST_VCENTER_PW_SET",
        "vcenter spare: https://vc03/sdk",
        "no group reads it, so it is not connected to",
        "group hpc: from vcenter lab: cluster Lab East/HPC (connected, not in maintenance mode)",
        "group mpi: from vcenter east: cluster A, B, the hosts running VM hpc-node[07]*, x y (connected, in maintenance mode or not), module probe",
        "not by --check-config",
    ] {
        assert!(lines.contains(needle), "{needle:?} in\n{lines}");
    }
    assert!(
        !lines.contains("s3cret") && !format!("{c:?}").contains("s3cret"),
        "never the password"
    );
}

#[test]
fn vcenter_mistakes_are_refused_with_the_reason() {
    let dir = secrets();
    let vc = "vcenters:\n  lab: {url: vc01, user: u, password_file: DIR/vcenter.pw}\n";
    let cases = [
        (format!("{vc}groups:\n  hpc: {{vcenter: nope, cluster: HPC}}\n"), "\"nope\" is not defined under vcenters: (they are: lab)"),
        ("groups:\n  hpc: {vcenter: lab}\n".to_string(), "(there are none)"),
        (
            "vcenters:\n  lab: {url: vc01, user: u, password_file: DIR/vcenter.pw, ca: DIR/vcenter.pem, thumbprint: \"AB\"}\n".to_string(),
            "ca and thumbprint are both set",
        ),
        (
            "vcenters:\n  lab: {url: vc01, user: u, password_file: DIR/missing.pw}\n".to_string(),
            "cannot read the vCenter password file",
        ),
        ("vcenters:\n  lab: {url: \"http://vc01\", user: u, password_file: DIR/vcenter.pw}\n".to_string(), "plain http is refused"),
        ("vcenters:\n  lab: {url: \"vc01:99999\", user: u, password_file: DIR/vcenter.pw}\n".to_string(), "bad port"),
        ("vcenters:\n  lab: {url: vc01, user: u}\n".to_string(), "no password"),
        (
            "vcenters:\n  lab: {url: vc01, user: u, password_env: PVRDMA_TEST_SURELY_UNSET_VAR}\n".to_string(),
            "PVRDMA_TEST_SURELY_UNSET_VAR is not set",
        ),
        (
            "vcenters:\n  lab: {url: vc01, user: u, password_file: DIR/vcenter.pw, thumbprint: \"AB:CD\"}\n".to_string(),
            "thumbprint: `AB:CD` is not a SHA-256 thumbprint",
        ),
        ("vcenters:\n  lab: {url: vc01, user: u, password_file: DIR/vcenter.pw, ca: DIR/nothing.pem}\n".to_string(), "is not a readable file"),
        // A file that is not PEM certificates: named now, not at the first refresh.
        ("vcenters:\n  lab: {url: vc01, user: u, password_file: DIR/vcenter.pw, ca: DIR/vcenter.pw}\n".to_string(), "DIR/vcenter.pw"),
        ("vcenters:\n  lab: {url: vc01, user: u, password_file: DIR/vcenter.pw, refresh: 10ms}\n".to_string(), "refresh:"),
        ("vcenters:\n  lab: {url: vc01, user: u, passwd_file: x}\n".to_string(), "passwd_file"),
        (format!("{vc}groups:\n  hpc: {{vcenter: lab, clusters: HPC}}\n"), "clusters"),
        (format!("{vc}groups:\n  hpc: {{vcenter: lab, hosts: esx01}}\n"), "hosts: and vcenter: are both set"),
        ("groups:\n  hpc: {hosts: esx01, cluster: HPC}\n".to_string(), "cluster: is for a group read from vCenter"),
        ("groups:\n  hpc: {module: default}\n".to_string(), "neither hosts: nor vcenter:"),
        (format!("{vc}groups:\n  hpc: {{vcenter: lab, vm: \"\"}}\n"), "vm:"),
        (format!("{vc}groups:\n  hpc: {{vcenter: lab, module: gone}}\n"), "module \"gone\" is not defined"),
        (format!("{vc}targets: [hpc]\ngroups:\n  hpc: {{vcenter: lab}}\n"), "both a group and a host"),
        ("groups:\n  hpc: 12\n".to_string(), "a node set, a list of node sets, or a map"),
    ];
    let dir_text = dir.path().display().to_string();
    for (text, needle) in cases {
        let text = with_dir(&text, dir.path());
        let err = format!("{:#}", Config::parse(&text).unwrap_err());
        let needle = needle.replace("DIR", &dir_text);
        assert!(err.contains(&needle), "{text:?}: {err}");
        assert!(!err.contains("s3cret"), "{err}");
    }
}

#[test]
fn check_config_fits_80_columns_and_never_cuts_a_url_path_or_thumbprint() {
    let dir = secrets();
    std::env::set_var("PVRDMA_TEST_VCENTER_PW_SET", "from-env");
    let c = Config::parse(&with_dir(FULL, dir.path())).unwrap();
    let path = Path::new("/etc/pvrdma-doctor/exporters/production-datacenter-east/pvrdma-doctor-serve.yml");
    let out = crate::serve::check_report(path, &c, None, 80);
    let pin = ["AB"; 32].join(":");
    let ca = dir.path().join("vcenter.pem").display().to_string();
    let whole = [
        path.display().to_string(),
        pin.clone(),
        ca,
        "https://vc02.example.com:8443/sdk".into(),
    ];
    for token in &whole {
        assert!(
            out.split_whitespace().any(|w| w.contains(token.as_str())),
            "{token} whole in\n{out}"
        );
    }
    for line in out.lines() {
        // Only a line that is one such token alone may be wider than the terminal.
        let alone = line.split_whitespace().count() == 1 && whole.iter().any(|t| line.contains(t.as_str()));
        assert!(line.chars().count() <= 80 || alone, "{line:?} in\n{out}");
    }
    let first = out.lines().next().unwrap();
    assert_eq!(first, format!("{}:", path.display()), "{out}");
    assert!(
        out.replace("\n    ", " ").contains(
            "valid: 2 module(s), 5 host(s) allowed, 2 node-set group(s), 3 vCenter(s) feeding 2 vCenter group(s)"
        ),
        "{out}"
    );
    // Each vCenter and group starts its own paragraph, two columns in; its continuation
    // lines six.
    for start in ["  vcenter lab: ", "  vcenter east: ", "  group hpc: ", "  group mpi: "] {
        assert!(out.lines().any(|l| l.starts_with(start)), "{start:?} in\n{out}");
    }
    assert!(
        out.lines()
            .skip(1)
            .all(|l| l.starts_with("    ") || l.starts_with("  vcenter ") || l.starts_with("  group ")),
        "{out}"
    );
}

/// The exporter's log tells an admin the keys of the `vcenters:` entry to change, never a
/// command-line option the exporter does not take.
#[test]
fn vsphere_refusals_name_the_keys_of_the_vcenters_entry() {
    use pvrdma_vsphere::{CertificateProblem, Error, Stage};
    let got = Thumbprint([0xab; 32]);
    let unknown = Error::UnknownCertificate {
        endpoint: "vc01".into(),
        thumbprint: got,
        problem: CertificateProblem::UnknownIssuer { ca_file: None },
    };
    assert_eq!(
        unknown.worded(&KEYS),
        format!(
            "the certificate of vCenter vc01 is not trusted (it is signed by a CA this system does not trust). If it \
             is vCenter's certificate (compare its SHA-256 thumbprint, at the end of this message, with the one the \
             vSphere Client or the appliance shows), give the CA that signed it (the VMCA root from the vCenter \
             landing page) with `ca: FILE` in its vcenters: entry, or pin its SHA-256 thumbprint: thumbprint: \"{got}\""
        )
    );
    let mismatch = Error::ThumbprintMismatch {
        endpoint: "vc01".into(),
        expected: Thumbprint([0x11; 32]),
        got,
    };
    assert_eq!(
        mismatch.worded(&KEYS),
        format!(
            "the certificate of vCenter vc01 is not the one pinned with `thumbprint:`. If vCenter's certificate was \
             renewed, compare its SHA-256 thumbprint, at the end of this message, with the one the vSphere Client or \
             the appliance shows, and pin it: thumbprint: \"{got}\""
        )
    );
    let slow = Error::Timeout {
        endpoint: "vc01".into(),
        stage: Stage::Call("RetrievePropertiesEx"),
        limit: Duration::from_secs(30),
    };
    assert_eq!(
        slow.worded(&KEYS),
        "vCenter vc01 did not answer RetrievePropertiesEx within 30s, the limit `timeout:` in its vcenters: entry \
         sets: a loaded vCenter or a large inventory can take longer; give it more time with `timeout:` in its \
         vcenters: entry"
    );
    for text in [unknown.worded(&KEYS), mismatch.worded(&KEYS), slow.worded(&KEYS)] {
        assert!(!text.contains("--vcenter"), "{text}");
    }
}

/// The `cluster:` an ambiguous cluster's message suggests reads back as that cluster's
/// name, whatever it holds.
#[test]
fn the_suggested_cluster_key_reads_back_as_the_name() {
    for name in [
        "Lab East/HPC",
        "it's \"quoted\"",
        r"back\slash",
        "tab\there",
        "HPC: [1-2] #x",
    ] {
        let line = (KEYS.cluster)(name);
        let read: BTreeMap<String, String> = serde_norway::from_str(&line).unwrap();
        assert_eq!(read["cluster"], name, "{line}");
    }
}
