use super::fixtures::{adapter, host};
use super::*;
use crate::capture::ErrorKind;
use crate::exit;

fn diagnosis(hosts: Vec<HostDiagnosis>) -> Diagnosis {
    fleet_diagnosis(hosts)
}

/// The pairs of one adapter (first adapter of VM `a.1` on host `a.0`) with host `peer`.
fn counts(d: &Diagnosis, a: (&str, &str), peer: &str) -> TransportCounts {
    if let Some(e) = d
        .transport
        .exceptions
        .iter()
        .find(|e| (e.adapter.host.as_str(), e.adapter.vm.as_str()) == a && e.peer_host == peer)
    {
        return e.pairs;
    }
    // Not an exception: every pair with that host is plain rdma.
    let n = d
        .hosts
        .iter()
        .find(|h| h.host == peer)
        .map_or(0, |h| h.vms.iter().map(|v| v.adapters.len() as u64).sum());
    TransportCounts {
        rdma: n,
        ..TransportCounts::default()
    }
}

fn transport(d: &Diagnosis, a: (&str, &str), b: (&str, &str)) -> Transport {
    if a.0 == b.0 {
        return Transport::Memcpy;
    }
    let c = counts(d, a, b.0);
    let peer = d.hosts.iter().find(|h| h.host == b.0).expect("peer");
    // Single-adapter VMs on a peer with one profile per verdict: look the class up by
    // the peer adapter's own pairs with a's host.
    let mirrored = counts(d, b, a.0);
    let only = |x: &TransportCounts| {
        [
            (x.rdma, Transport::Rdma),
            (x.tcp, Transport::Tcp),
            (x.blocked, Transport::Blocked),
            (x.unknown, Transport::Unknown),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(_, t)| *t)
        .collect::<Vec<_>>()
    };
    let (ca, cb) = (only(&c), only(&mirrored));
    let common: Vec<Transport> = ca.iter().copied().filter(|t| cb.contains(t)).collect();
    assert!(!peer.vms.is_empty());
    match common.as_slice() {
        [one] => *one,
        _ => panic!("ambiguous pair {a:?} {b:?}: {ca:?} / {cb:?}"),
    }
}

#[test]
fn transport_follows_the_pvrdma_rules() {
    let d = diagnosis(vec![
        host(
            "esx01",
            HostStatus::Problems,
            vec![
                ("a", vec![adapter(0, Verdict::Hca)]),
                ("b", vec![adapter(0, Verdict::TcpFallback)]),
            ],
        ),
        host("esx02", HostStatus::Ok, vec![("c", vec![adapter(0, Verdict::Hca)])]),
        host(
            "esx03",
            HostStatus::Incomplete,
            vec![("d", vec![adapter(0, Verdict::Unknown)])],
        ),
    ]);
    // Same host: memcpy whatever the verdicts, the HCA is not involved.
    assert_eq!(transport(&d, ("esx01", "a"), ("esx01", "b")), Transport::Memcpy);
    assert_eq!(transport(&d, ("esx01", "a"), ("esx02", "c")), Transport::Rdma);
    assert_eq!(transport(&d, ("esx01", "b"), ("esx02", "c")), Transport::Tcp);
    assert_eq!(transport(&d, ("esx01", "a"), ("esx03", "d")), Transport::Unknown);
    // One side falling back decides it even when the other is unknown.
    assert_eq!(transport(&d, ("esx01", "b"), ("esx03", "d")), Transport::Tcp);
    let t = d.transport.totals;
    assert_eq!((t.memcpy, t.rdma, t.tcp, t.unknown, t.blocked), (1, 1, 2, 2, 0));
    assert_eq!(t.total(), 6);
}

#[test]
fn adapters_of_the_same_vm_are_not_paired() {
    let d = diagnosis(vec![host(
        "esx01",
        HostStatus::Ok,
        vec![("a", vec![adapter(0, Verdict::Hca), adapter(1, Verdict::Hca)])],
    )]);
    assert_eq!(d.transport.totals.total(), 0);
    assert!(d.transport.host_pairs.is_empty());
}

#[test]
fn summary_counts_when_nothing_was_diagnosed_and_names_failing_sets() {
    let down = |n: u32| {
        let mut h = host(&format!("esx{n:02}"), HostStatus::Unreachable, vec![]);
        h.error = Some(Failure::new(ErrorKind::Timeout, "no login"));
        h
    };
    let d = diagnosis((1..=11).map(down).collect());
    assert_eq!(d.summary.diagnosed, 0);
    assert_eq!(
        d.summary.host_sets.get("unreachable").map(String::as_str),
        Some("esx[01-11]")
    );
}

#[test]
fn summary_counts_warnings_on_hosts_and_across_hosts() {
    let warned = |name: &str| {
        let mut h = host(name, HostStatus::Ok, vec![("a", vec![adapter(0, Verdict::Hca)])]);
        h.checks
            .push(check(CheckId::MtuConsistent, Status::Warn, "differ", Vec::new()));
        h
    };
    let hosts = vec![warned("esx01"), warned("esx02")];
    let fleet = vec![check(CheckId::VmknicSubnets, Status::Warn, "two subnets", Vec::new())];
    let s = summarize(&hosts, &fleet, &TransportSummary::default());
    assert_eq!(s.warnings, 3);
    assert_eq!((s.hosts, s.healthy, s.adapters, s.hca, s.diagnosed), (2, 2, 2, 2, 2));
}

#[test]
fn remedies_quote_host_values_for_the_shell() {
    assert_eq!(shell_quote("vmk1"), "vmk1");
    assert_eq!(shell_quote("DSwitch RDMA"), "'DSwitch RDMA'");
    assert_eq!(shell_quote("a'b;rm -rf /"), "'a'\\''b;rm -rf /'");
    assert_eq!(shell_quote(""), "''");
    let c = with_command(
        check(CheckId::FirewallPvrdma, Status::Fail, "s", Vec::new()),
        "esxcli network firewall ruleset set -e true -r pvrdma",
    );
    assert!(c
        .remedy
        .as_ref()
        .is_some_and(|r| r.command.is_some() && r.advice.is_none()));
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["remedy"], "esxcli network firewall ruleset set -e true -r pvrdma");
    let c = with_advice(
        check(CheckId::FirewallPvrdma, Status::Fail, "s", Vec::new()),
        "in vCenter, remove vmnic3",
    );
    assert!(c
        .remedy
        .as_ref()
        .is_some_and(|r| r.command.is_none() && r.advice.is_some()));
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["remedy"], "in vCenter, remove vmnic3");
    assert_eq!(json["remediation"]["advice"], "in vCenter, remove vmnic3");
    assert!(json["remediation"]["command"].is_null());
}

#[test]
fn exit_code_precedence() {
    let ok = || host("esx01", HostStatus::Ok, vec![("a", vec![adapter(0, Verdict::Hca)])]);
    assert_eq!(diagnosis(vec![ok()]).exit_code(), exit::HEALTHY);
    let unreachable = host("esx02", HostStatus::Unreachable, vec![]);
    assert_eq!(diagnosis(vec![ok(), unreachable.clone()]).exit_code(), exit::INCOMPLETE);
    let unknown = host(
        "esx03",
        HostStatus::Incomplete,
        vec![("u", vec![adapter(0, Verdict::Unknown)])],
    );
    assert_eq!(diagnosis(vec![ok(), unknown]).exit_code(), exit::INCOMPLETE);
    let fallback = host(
        "esx04",
        HostStatus::Problems,
        vec![("t", vec![adapter(0, Verdict::TcpFallback)])],
    );
    // A problem outranks an unreachable host: the runbook must see the failure.
    assert_eq!(diagnosis(vec![ok(), unreachable, fallback]).exit_code(), exit::PROBLEMS);
    let mut failing = ok();
    failing
        .checks
        .push(check(CheckId::FirewallPvrdma, Status::Fail, "blocked", Vec::new()));
    assert_eq!(diagnosis(vec![failing]).exit_code(), exit::PROBLEMS);
    let mut warned = ok();
    warned
        .checks
        .push(check(CheckId::MtuConsistent, Status::Warn, "differ", Vec::new()));
    assert_eq!(diagnosis(vec![warned]).exit_code(), exit::HEALTHY);
}

#[test]
fn a_deselected_fleet_check_is_not_judged_and_counts_nowhere() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/pvrdma-different-vds");
    let captures = crate::capture::folder::read_dir_for_tests(&dir).expect("sample loads");
    let all = diagnose(&captures);
    assert_eq!(all.summary.fleet_failures, [CheckId::PvrdmaSameVds]);
    assert_eq!(all.summary.problems, 2);
    let d = diagnose_selected(&captures, &Selection::only_fleet([CheckId::VmknicSubnets]));
    let ids: Vec<CheckId> = d.fleet_checks.iter().map(|c| c.id).collect();
    assert_eq!(ids, [CheckId::VmknicSubnets]);
    assert!(d.summary.fleet_failures.is_empty(), "{:?}", d.summary.fleet_failures);
    assert_eq!((d.summary.problems, d.summary.healthy), (0, 2));
    assert!(d.hosts.iter().all(|h| h.status == HostStatus::Ok));
    // Naming only host checks keeps every host check: selection is of checks across hosts.
    assert!(Selection::only_fleet([]).judges(CheckId::FirewallPvrdma));
    assert!(!Selection::only_fleet([]).judges(CheckId::PvrdmaSameVds));
}

#[test]
fn a_vm_first_run_reports_only_the_chosen_vms_and_the_transports_between_them() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/esxi80-mixed-fleet");
    let captures = crate::capture::folder::read_dir_for_tests(&dir).expect("sample loads");
    let total = |d: &Diagnosis| {
        let t = &d.transport.totals;
        t.memcpy + t.rdma + t.tcp + t.blocked + t.unknown
    };
    let names =
        |d: &Diagnosis| -> Vec<String> { d.hosts.iter().flat_map(|h| &h.vms).map(|v| v.name.clone()).collect() };
    let all = diagnose(&captures);
    assert!(all.vm_scope.is_none());
    assert_eq!(names(&all), ["hpc-node01", "hpc-node02"]);
    assert!(total(&all) > 0, "the two VMs on two hosts make pairs");

    // One VM: its adapters alone, no pair, and the other host's fallback is not its problem.
    let one = diagnose_selected(&captures, &Selection::default().only_vms(["hpc-node01".to_string()]));
    assert_eq!(names(&one), ["hpc-node01"]);
    assert_eq!(total(&one), 0);
    let scope = one.vm_scope.as_ref().expect("scoped");
    assert_eq!(
        (scope.vms.as_slice(), scope.not_running.len()),
        (&["hpc-node01".to_string()][..], 0)
    );
    let esx02 = one.hosts.iter().find(|h| h.host == "esx02").expect("esx02");
    assert!(esx02.vms.is_empty());
    // The host's own configuration is still judged whole; its VM checks had no chosen VM.
    let esx02_all = all.hosts.iter().find(|h| h.host == "esx02").expect("esx02");
    let host_checks = |h: &HostDiagnosis| -> Vec<(CheckId, Status)> {
        h.checks
            .iter()
            .filter(|c| c.id.family() != Family::VmConfig)
            .map(|c| (c.id, c.status))
            .collect()
    };
    assert_eq!(host_checks(esx02), host_checks(esx02_all));
    assert!(esx02.checks.iter().all(|c| c.id.family() != Family::VmConfig));

    // Both VMs: the same pairs as the whole run; a name running nowhere is said so.
    let both = diagnose_selected(
        &captures,
        &Selection::default().only_vms(["hpc-node01", "hpc-node02", "hpc-node99"].map(String::from)),
    );
    assert_eq!(names(&both), ["hpc-node01", "hpc-node02"]);
    assert_eq!(both.transport.totals, all.transport.totals);
    // esx03 could not be read: a VM not seen may run there, so it is not said stopped.
    let scope = both.vm_scope.expect("scoped");
    assert_eq!(
        (scope.not_seen, scope.unread_hosts),
        (vec!["hpc-node99".to_string()], vec!["esx03".to_string()])
    );
    assert!(scope.not_running.is_empty());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/healthy-cluster");
    let healthy = crate::capture::folder::read_dir_for_tests(&dir).expect("sample loads");
    let d = diagnose_selected(&healthy, &Selection::default().only_vms(["hpc-node99".to_string()]));
    assert_eq!(d.vm_scope.expect("scoped").not_running, ["hpc-node99"]);
}

/// A chosen VM the run did not diagnose leaves the run unknown, never healthy: one that
/// moved (no host read runs it) and one on a host the run left out, each named (the
/// renderings: `report/summary/tests.rs`).
#[test]
fn a_chosen_vm_not_diagnosed_makes_the_run_unknown() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/healthy-cluster");
    let captures = crate::capture::folder::read_dir_for_tests(&dir).expect("sample loads");
    let found = diagnose_selected(&captures, &Selection::default().only_vms(["hpc-node01".to_string()]));
    assert_eq!(found.exit_code(), exit::HEALTHY);
    assert!(found.vm_scope.as_ref().expect("scoped").not_diagnosed.is_empty());

    let chosen = VmChoice {
        vms: vec!["hpc-node01".into(), "hpc-node07".into()],
        left_out: vec![VmLeftOut {
            vm: "hpc-node09".into(),
            host: "esx09".into(),
            reason: "not responding".into(),
        }],
    };
    let d = diagnose_selected(&captures, &Selection::of_vms(Some(&chosen)));
    assert_eq!(d.exit_code(), exit::INCOMPLETE);
    let scope = d.vm_scope.as_ref().expect("scoped");
    assert_eq!(scope.vms, ["hpc-node01", "hpc-node07", "hpc-node09"]);
    assert_eq!(scope.not_running, ["hpc-node07"]);
    assert_eq!(scope.on_hosts_left_out, chosen.left_out);
    assert_eq!(scope.not_diagnosed, ["hpc-node07", "hpc-node09"]);
}

/// A VM-first exporter's scrape cut by its deadline answers with the hosts read by then,
/// each diagnosed when it was read: narrowed to the chosen VMs as the whole collection
/// would be, and counted as found where it runs them.
#[test]
fn hosts_diagnosed_as_read_keep_the_vm_narrowing() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/healthy-cluster");
    let captures = crate::capture::folder::read_dir_for_tests(&dir).expect("sample loads");
    let selection = Selection::default().only_vms(["hpc-node01".to_string()]);
    let whole = diagnose_selected(&captures, &selection);
    let mut known: BTreeMap<String, KnownHost> = captures
        .iter()
        .map(|c| (c.host.clone(), selection.diagnose_host(c)))
        .collect();
    // What the exporter passes for a host already read: its name, nothing collected.
    let empty: Vec<HostCapture> = captures
        .iter()
        .map(|c| HostCapture::new(c.host.clone(), crate::capture::CaptureSource::Live))
        .collect();
    let cut = diagnose_selected_known(&empty, &mut known, &selection);
    let vms = |d: &Diagnosis| -> Vec<String> {
        d.hosts
            .iter()
            .flat_map(|h| h.vms.iter().map(|vm| vm.name.clone()))
            .collect()
    };
    assert_eq!(vms(&whole), ["hpc-node01"]);
    assert_eq!(vms(&cut), vms(&whole));
    assert_eq!(cut.vm_scope, whole.vm_scope);
    assert!(cut.vm_scope.expect("scoped").not_diagnosed.is_empty());
}
