//! The client against govmomi's vSphere simulator (`tests/vcsim/main.go`): the inventory
//! as read, TLS trust and pinning, login failures, sessions always logged out, paging and
//! session renewal. Real-tool tests: scripts/test.sh runs them.
#[path = "../../tests/support/vcsim.rs"]
#[allow(dead_code)]
mod vcsim;

use std::time::Duration;

use pvrdma_vsphere::{
    read_inventory, select, CertificateProblem, Client, ClusterRef, Config, ConnectionState, Endpoint, Error,
    Inventory, PowerState, SecretString, SelectError, Selection, SkipReason, Thumbprint, Trust, VmPattern,
};
use vcsim::{ClusterSpec, DatacenterSpec, HostSpec, Spec, Vcsim, VmSpec};

/// Two datacenters with a cluster `HPC` each, hosts in maintenance, disconnected and not
/// responding, a standalone host, VMs whose names hold spaces, brackets and colons. Lab
/// West is filed in folders, as sites file datacenters by region and clusters by row.
fn discovery() -> Spec {
    Spec {
        datacenters: vec![
            DatacenterSpec {
                name: "Lab East".into(),
                folder: String::new(),
                clusters: vec![
                    ClusterSpec {
                        name: "HPC".into(),
                        folder: String::new(),
                        hosts: vec![
                            HostSpec::new("esx01"),
                            HostSpec::new("esx02"),
                            HostSpec::new("esx03").in_maintenance(),
                            HostSpec::new("esx04").state("disconnected"),
                        ],
                    },
                    ClusterSpec {
                        name: "Web".into(),
                        folder: String::new(),
                        hosts: vec![HostSpec::new("esx05").state("notResponding")],
                    },
                ],
                standalone: vec![HostSpec::new("solo01")],
            },
            DatacenterSpec {
                name: "Lab West".into(),
                folder: "Regions/West".into(),
                clusters: vec![ClusterSpec {
                    name: "HPC".into(),
                    folder: "Row 1".into(),
                    hosts: vec![HostSpec::new("esx11")],
                }],
                standalone: vec![],
            },
        ],
        vms: vec![
            VmSpec::new("hpc-node07", "esx01", ""),
            VmSpec::new("hpc [test] 08", "esx02", ""),
            VmSpec::new("db:primary", "solo01", ""),
            VmSpec::new("hpc-node09", "esx11", ""),
            VmSpec::new("hpc-node10", "esx03", ""),
            VmSpec::new("old vm", "esx01", "poweredOff"),
            VmSpec::new("sleepy", "esx02", "suspended"),
        ],
    }
}

fn config(sim: &Vcsim, trust: Trust) -> Config {
    let endpoint = Endpoint::parse(&sim.url).expect("the simulator's URL");
    let mut c = Config::new(endpoint, trust, &sim.user, SecretString::from(sim.password.clone()));
    c.timeout = Duration::from_secs(60);
    c
}

fn pinned(sim: &Vcsim) -> Trust {
    Trust::Pinned(Thumbprint::parse(&sim.thumbprint).expect("the simulator's thumbprint"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn host<'a>(inv: &'a Inventory, name: &str) -> &'a pvrdma_vsphere::Host {
    inv.hosts
        .iter()
        .find(|h| h.name == name)
        .unwrap_or_else(|| panic!("no host {name}"))
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn the_inventory_as_the_vsphere_client_shows_it() {
    let mut sim = Vcsim::start(&discovery());
    let inv = runtime()
        .block_on(read_inventory(config(&sim, pinned(&sim)), std::future::pending()))
        .expect("inventory");
    assert_eq!(sim.sessions(), 0, "read_inventory logs out");

    let names: Vec<_> = inv.hosts.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["esx01", "esx02", "esx03", "esx04", "esx05", "esx11", "solo01"]);
    let esx01 = host(&inv, "esx01");
    assert_eq!(
        (esx01.datacenter.as_str(), esx01.cluster.as_deref()),
        ("Lab East", Some("HPC"))
    );
    assert_eq!(esx01.connection_state, ConnectionState::Connected);
    assert!(!esx01.in_maintenance);
    assert!(host(&inv, "esx03").in_maintenance);
    assert_eq!(host(&inv, "esx04").connection_state, ConnectionState::Disconnected);
    assert_eq!(host(&inv, "esx05").connection_state, ConnectionState::NotResponding);
    assert_eq!(host(&inv, "esx11").datacenter, "Lab West");
    assert_eq!(
        host(&inv, "esx11").cluster_path.as_deref(),
        Some("/Regions/West/Lab West/host/Row 1/HPC"),
        "the path as `govc find` prints it"
    );
    assert_eq!(esx01.cluster_path.as_deref(), Some("/Lab East/host/HPC"));
    let solo = host(&inv, "solo01");
    assert_eq!((solo.datacenter.as_str(), solo.cluster.as_ref()), ("Lab East", None));
    assert!(inv.hosts.iter().all(|h| h.id.starts_with("host-")), "{:?}", inv.hosts);

    let vm = |name: &str| {
        inv.vms
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("no VM {name}"))
    };
    assert_eq!(inv.vms.len(), 7);
    assert_eq!(
        vm("hpc [test] 08").host.as_deref(),
        Some(host(&inv, "esx02").id.as_str())
    );
    assert_eq!(vm("db:primary").host.as_deref(), Some(solo.id.as_str()));
    assert_eq!(vm("old vm").power_state, PowerState::PoweredOff);
    assert_eq!(vm("sleepy").power_state, PowerState::Suspended);
    assert_eq!(vm("hpc-node07").power_state, PowerState::PoweredOn);

    // Selection on what was read: the cluster in two datacenters, a VM-first run.
    let err = select(
        &inv,
        &Selection {
            clusters: vec![ClusterRef::parse("HPC").unwrap()],
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(err, SelectError::AmbiguousCluster { ref paths, .. } if paths == &["Lab East/HPC", "Lab West/HPC"])
    );
    for west in ["Lab West/HPC", "/Regions/West/Lab West/host/Row 1/HPC"] {
        let got = select(
            &inv,
            &Selection {
                clusters: vec![ClusterRef::parse(west).unwrap()],
                ..Selection::default()
            },
        )
        .unwrap();
        let names: Vec<_> = got.hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["esx11"], "{west}");
    }
    let vm_first = Selection {
        vms: vec![VmPattern::parse("hpc*").unwrap()],
        ..Selection::default()
    };
    let got = select(&inv, &vm_first).unwrap();
    let selected: Vec<_> = got.hosts.iter().map(|h| (h.name.as_str(), h.vms.clone())).collect();
    assert_eq!(
        selected,
        [
            ("esx01", vec!["hpc-node07".to_string()]),
            ("esx02", vec!["hpc [test] 08".to_string()]),
            ("esx11", vec!["hpc-node09".to_string()])
        ]
    );
    assert_eq!(got.skipped.len(), 1);
    assert_eq!(
        (got.skipped[0].name.as_str(), got.skipped[0].reason),
        ("esx03", SkipReason::Maintenance)
    );
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn certificates_are_verified_and_pinned() {
    let mut sim = Vcsim::start(&discovery());
    let rt = runtime();
    let read = |trust: Trust| rt.block_on(read_inventory(config(&sim, trust), std::future::pending()));

    // The OS roots do not know the simulator's CA: refused, with the thumbprint to pin.
    match read(Trust::System) {
        Err(e @ Error::UnknownCertificate { .. }) => {
            let Error::UnknownCertificate {
                thumbprint, problem, ..
            } = &e
            else {
                unreachable!()
            };
            assert_eq!(thumbprint.to_string(), sim.thumbprint);
            assert_eq!(problem, &CertificateProblem::UnknownIssuer { ca_file: None });
            assert!(e.to_string().ends_with(&format!(": {}", sim.thumbprint)), "{e}");
        }
        other => panic!("expected UnknownCertificate, got {other:?}"),
    }
    // Its CA as the trust root: accepted, for 127.0.0.1 and for localhost alike.
    assert_eq!(read(Trust::Ca(sim.ca.clone())).expect("CA").hosts.len(), 7);
    let mut by_name = config(&sim, Trust::Ca(sim.ca.clone()));
    by_name.endpoint.host = "localhost".into();
    assert!(rt.block_on(read_inventory(by_name, std::future::pending())).is_ok());
    // The right pin works; another certificate's pin is refused, naming both.
    assert!(read(pinned(&sim)).is_ok());
    let wrong = Thumbprint([0x42; 32]);
    match read(Trust::Pinned(wrong)) {
        Err(Error::ThumbprintMismatch { expected, got, .. }) => {
            assert_eq!(expected, wrong);
            assert_eq!(got.to_string(), sim.thumbprint);
        }
        other => panic!("expected ThumbprintMismatch, got {other:?}"),
    }
    // A CA file that holds no certificate is named as such before any connection.
    let empty = tempfile::NamedTempFile::new().unwrap();
    assert!(matches!(
        read(Trust::Ca(empty.path().into())),
        Err(Error::CaFile { .. })
    ));
    assert_eq!(sim.sessions(), 0, "no session was opened, or each was logged out");
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_wrong_password_is_a_login_failure() {
    let mut sim = Vcsim::start(&discovery());
    let mut c = config(&sim, pinned(&sim));
    c.password = SecretString::from("not the password".to_string());
    let err = runtime()
        .block_on(read_inventory(c, std::future::pending()))
        .unwrap_err();
    let Error::Login { user, .. } = &err else {
        panic!("expected Login, got {err:?}")
    };
    assert_eq!(user, &sim.user);
    assert!(err.to_string().contains("wrong user or password"));
    assert!(!err.to_string().contains("not the password") && !format!("{err:?}").contains("not the password"));
    assert_eq!(sim.sessions(), 0);
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_cancel_during_login_still_logs_out() {
    let mut sim = Vcsim::start(&discovery());
    // Cancelled at once: the login already on its way completes, then is logged out.
    let r = runtime().block_on(read_inventory(config(&sim, pinned(&sim)), std::future::ready(())));
    assert!(matches!(r, Err(Error::Cancelled { .. })), "{r:?}");
    assert_eq!(sim.sessions(), 0);
}

/// 1,000 hosts, read in pages of 100: few calls, every host, sessions closed on success,
/// on cancellation in the middle of the read, and on a failure after the login.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_thousand_hosts_are_read_in_pages() {
    let mut sim = Vcsim::start_scale(1000, 0);
    let rt = runtime();
    let mut c = config(&sim, pinned(&sim));
    c.page_size = 100;

    let mut client = Client::new(c.clone()).unwrap();
    let inv = rt.block_on(client.inventory()).expect("inventory");
    assert_eq!(inv.hosts.len(), 1000);
    assert!(inv.hosts.iter().all(|h| h.datacenter == "Scale" && h.cluster.is_some()));
    let clusters: std::collections::BTreeSet<_> = inv.hosts.iter().filter_map(|h| h.cluster.clone()).collect();
    assert_eq!(clusters.len(), 10);
    let calls = client.calls().clone();
    let first = calls.get("RetrievePropertiesEx").copied().unwrap_or(0);
    let more = calls.get("ContinueRetrievePropertiesEx").copied().unwrap_or(0);
    // 1,000 hosts, 10 clusters, a datacenter and its folders: 11 pages of 100.
    assert_eq!(first, 1, "{calls:?}");
    assert!((10..=11).contains(&more), "pages, not a call per host: {calls:?}");
    assert!(calls.values().sum::<u32>() < 20, "{calls:?}");
    assert_eq!(rt.block_on(client.session_count()).unwrap(), sim.sessions());
    assert_eq!(sim.sessions(), 1);
    rt.block_on(client.logout()).unwrap();
    assert_eq!(sim.sessions(), 0);
}

/// Sessions are logged out when the read fails after the login, and when it is cancelled
/// in the middle.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn failures_and_cancels_after_the_login_still_log_out() {
    let mut sim = Vcsim::start(&discovery());
    let rt = runtime();
    let c = config(&sim, pinned(&sim));

    sim.fail_next_read();
    let r = rt.block_on(read_inventory(c.clone(), std::future::pending()));
    assert!(
        matches!(&r, Err(Error::Fault { fault, .. }) if fault == "SystemError"),
        "{r:?}"
    );
    assert_eq!(sim.sessions(), 0, "logged out after the failure");

    // The read hangs for 30 s; the cancel comes once the session is open.
    sim.delay_next_read(30);
    let sim = std::sync::Arc::new(std::sync::Mutex::new(sim));
    let watcher = sim.clone();
    let session_opened = async move {
        loop {
            let w = watcher.clone();
            if tokio::task::spawn_blocking(move || w.lock().unwrap().sessions())
                .await
                .unwrap()
                > 0
            {
                return;
            }
        }
    };
    let started = std::time::Instant::now();
    let r = rt.block_on(read_inventory(c, session_opened));
    assert!(matches!(r, Err(Error::Cancelled { .. })), "{r:?}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the cancel did not wait for the read"
    );
    assert_eq!(sim.lock().unwrap().sessions(), 0, "logged out after the cancel");
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn an_expired_session_is_renewed_and_moves_are_seen() {
    let mut sim = Vcsim::start(&discovery());
    let rt = runtime();
    let mut client = Client::new(config(&sim, pinned(&sim))).unwrap();
    let before = rt.block_on(client.inventory()).unwrap();
    assert_eq!(sim.sessions(), 1);

    sim.expire_sessions();
    assert_eq!(sim.sessions(), 0);
    sim.move_vm("hpc [test] 08", "esx11");
    sim.set_maintenance("esx01", true);
    sim.set_state("esx02", "notResponding");

    let after = rt.block_on(client.inventory()).expect("a new session");
    assert_eq!(client.calls().get("Login"), Some(&2), "{:?}", client.calls());
    assert_eq!(sim.sessions(), 1);
    let on = |inv: &Inventory, vm: &str| {
        let id = inv
            .vms
            .iter()
            .find(|v| v.name == vm)
            .and_then(|v| v.host.clone())
            .unwrap();
        inv.hosts.iter().find(|h| h.id == id).unwrap().name.clone()
    };
    assert_eq!(on(&before, "hpc [test] 08"), "esx02");
    assert_eq!(on(&after, "hpc [test] 08"), "esx11");
    assert!(host(&after, "esx01").in_maintenance);
    assert_eq!(host(&after, "esx02").connection_state, ConnectionState::NotResponding);

    // Every call that needs a session renews it the same way.
    sim.expire_sessions();
    assert_eq!(rt.block_on(client.session_count()).expect("a new session"), 1);
    assert_eq!(client.calls().get("Login"), Some(&3), "{:?}", client.calls());

    rt.block_on(client.logout()).unwrap();
    assert_eq!(sim.sessions(), 0);
    // Logging out twice, or without a session, is harmless.
    rt.block_on(client.logout()).unwrap();
}
