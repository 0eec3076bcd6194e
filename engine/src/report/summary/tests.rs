use super::*;
use crate::capture::{ErrorKind, Failure};
use crate::diagnose::fixtures::{adapter, host};
use crate::diagnose::{fleet_diagnosis, Check, CheckId, HostStatus, Verdict};

fn check(id: &str, status: Status, summary: &str) -> Check {
    Check::new(CheckId::from_id(id).expect("a registered check"), status, summary)
}

#[test]
fn summary_line_reads_like_the_issue_example() {
    let mut down = host("esx03", HostStatus::Unreachable, vec![]);
    down.error = Some(Failure::new(ErrorKind::Unreachable, "refused"));
    let d = fleet_diagnosis(vec![
        host(
            "esx01",
            HostStatus::Ok,
            vec![(
                "a",
                vec![
                    adapter(0, Verdict::Hca),
                    adapter(1, Verdict::Hca),
                    adapter(2, Verdict::Hca),
                ],
            )],
        ),
        host(
            "esx02",
            HostStatus::Problems,
            vec![(
                "b",
                vec![adapter(0, Verdict::TcpFallback), adapter(1, Verdict::Unknown)],
            )],
        ),
        down,
    ]);
    assert_eq!(
            line(&d),
            "3 hosts: 1 healthy, 1 with problems (esx02), 1 unreachable (esx03); 5 PVRDMA adapters: 3 hca, 1 tcp-fallback, 1 unknown; adapter pairs across hosts: 3 tcp, 3 unknown"
        );
    let mut passing = host("esx01", HostStatus::Ok, vec![]);
    passing.checks.push(check("esxi-version", Status::Pass, "8.0"));
    assert_eq!(
        line(&fleet_diagnosis(vec![passing])),
        "1 host: 1 healthy; 0 PVRDMA adapters"
    );
}

#[test]
fn summary_says_when_nothing_was_diagnosed_and_names_failing_sets() {
    let down = |n: u32| {
        let mut h = host(&format!("esx{n:02}"), HostStatus::Unreachable, vec![]);
        h.error = Some(Failure::new(ErrorKind::Timeout, "no login"));
        h
    };
    let d = fleet_diagnosis((1..=11).map(down).collect());
    assert_eq!(line(&d), "11 hosts: 11 unreachable (esx[01-11]); nothing was diagnosed");
}

#[test]
fn summary_shows_warnings_on_hosts_and_across_hosts() {
    let warned = |name: &str| {
        let mut h = host(name, HostStatus::Ok, vec![("a", vec![adapter(0, Verdict::Hca)])]);
        h.checks.push(check("mtu-consistent", Status::Warn, "differ"));
        h
    };
    // The counts as the diagnosis makes them (`diagnose::summarize`, tested there).
    let d = Diagnosis {
        hosts: vec![warned("esx01"), warned("esx02")],
        fleet_checks: vec![check("vmknic-subnets", Status::Warn, "two subnets")],
        transport: Default::default(),
        probes: Vec::new(),
        changes: None,
        vm_scope: None,
        summary: Summary {
            hosts: 2,
            healthy: 2,
            adapters: 2,
            hca: 2,
            diagnosed: 2,
            warnings: 3,
            ..Summary::default()
        },
    };
    assert_eq!(
            line(&d),
            "2 hosts: 2 healthy; 3 warnings: mtu-consistent on esx[01-02], vmknic-subnets across hosts; 2 PVRDMA adapters: 2 hca"
        );
}

#[test]
fn summary_line_names_the_failing_host_checks_by_their_hosts() {
    let mut a = host(
        "esx01",
        HostStatus::Problems,
        vec![("a", vec![adapter(0, Verdict::TcpFallback)])],
    );
    a.checks.push(check("firewall-pvrdma", Status::Fail, "blocked"));
    a.checks.push(check("mtu-consistent", Status::Fail, "1500"));
    let mut b = host("esx02", HostStatus::Problems, vec![]);
    b.checks.push(check("firewall-pvrdma", Status::Fail, "blocked"));
    b.checks.push(check("esxi-version", Status::Pass, "8.0"));
    let mut c = host("esx03", HostStatus::Problems, vec![]);
    c.checks.push(check("mtu-consistent", Status::Fail, "1500"));
    let line = line(&fleet_diagnosis(vec![a, b, c]));
    assert!(
        line.contains("; failing host checks: firewall-pvrdma on esx[01-02], mtu-consistent on esx[01,03]; "),
        "{line}"
    );
}
