use super::*;
use crate::diagnose::{fleet_diagnosis, Adapter, HostDiagnosis, PortView, PvrdmaVmknic, Vm};

fn adapter(verdict: Verdict, switch: &str, roce: u32) -> Adapter {
    Adapter {
        index: 0,
        verdict,
        reasons: Vec::new(),
        mac: None,
        roce_version: Some(roce),
        active_mtu: None,
        port: Some(PortView {
            vswitch: Some(switch.to_string()),
            vds_id: None,
            portgroup: None,
            uplink: None,
        }),
        predicted: None,
    }
}

fn host(name: &str, ip: &str, vms: Vec<Adapter>) -> HostDiagnosis {
    HostDiagnosis {
        host: name.to_string(),
        status: HostStatus::Ok,
        error: None,
        esxi_version: None,
        checks: Vec::new(),
        vms: vms
            .into_iter()
            .enumerate()
            .map(|(i, a)| Vm {
                name: format!("{name}-vm{i:03}"),
                world_id: Some(i as u64),
                config_file: None,
                adapters: vec![a],
            })
            .collect(),
        adapters_error: None,
        pvrdma_vmknic: Some(PvrdmaVmknic {
            name: "vmk1".into(),
            ipv4: Some(ip.into()),
            netmask: Some("255.255.255.0".into()),
            mtu: None,
        }),
        uplinks: Vec::new(),
        fleet_failures: Vec::new(),
        record_errors: Vec::new(),
        vms_error: None,
        incomplete_outputs: Vec::new(),
        unparsed_outputs: Vec::new(),
        send_evidence: None,
        configuration_only: false,
        topology: Default::default(),
    }
}

#[test]
fn counts_are_exact_and_exceptions_grow_linearly() {
    let n = 300;
    let healthy = |h: &str, ip: &str| host(h, ip, (0..n).map(|_| adapter(Verdict::Hca, "DS", 2)).collect());
    let mut third: Vec<Adapter> = (0..n - 1).map(|_| adapter(Verdict::Hca, "DS", 2)).collect();
    third.push(adapter(Verdict::TcpFallback, "DS", 2));
    let d = fleet_diagnosis(vec![
        healthy("a", "10.0.0.1"),
        healthy("b", "10.0.0.2"),
        host("c", "10.0.0.3", third),
    ]);
    let t = d.transport.totals;
    let n = n as u64;
    assert_eq!(t.memcpy, 3 * n * (n - 1) / 2);
    assert_eq!(t.tcp, 2 * n, "the fallback adapter's pairs with a and b");
    assert_eq!(t.rdma, n * n + 2 * n * (n - 1));
    // One exception per (adapter, peer host) touched by the fallback adapter: every
    // adapter of a and b towards c, and the fallback adapter towards a and b.
    assert_eq!(d.transport.exceptions.len() as u64, 2 * n + 2);
    // Within a, b and c, then a-c and b-c; a-b has only rdma pairs: in the totals above,
    // not listed (a healthy fleet of N hosts would list N(N-1)/2 rows).
    assert_eq!(d.transport.host_pairs.len(), 5);
}

#[test]
fn a_mismatch_warns_but_stays_rdma_and_different_switches_block() {
    let d = fleet_diagnosis(vec![
        host("a", "10.0.0.1", vec![adapter(Verdict::Hca, "DS", 2)]),
        host("b", "10.0.0.2", vec![adapter(Verdict::Hca, "DS", 1)]),
    ]);
    assert_eq!(d.transport.totals.rdma, 1);
    let c = d.fleet_checks.iter().find(|c| c.id == ROCE_PAIR).expect("roce pair");
    assert_eq!(c.status, Status::Warn);
    assert!(d.hosts.iter().all(|h| h.status == HostStatus::Ok));

    let d = fleet_diagnosis(vec![
        host("a", "10.0.0.1", vec![adapter(Verdict::Hca, "DS", 2)]),
        host("b", "10.0.0.2", vec![adapter(Verdict::Hca, "Other", 2)]),
    ]);
    assert_eq!(d.transport.totals.blocked, 1);
    let c = d.fleet_checks.iter().find(|c| c.id == SAME_VDS).expect("same vds");
    assert_eq!(c.status, Status::Fail);
    assert!(d.hosts.iter().all(|h| h.fleet_failures == [SAME_VDS]));
}

#[test]
fn same_name_with_different_uuids_is_two_switches() {
    let a = Switch {
        name: "DS".into(),
        id: Some("50 aa".into()),
    };
    let b = Switch {
        name: "DS".into(),
        id: Some("50 bb".into()),
    };
    let unknown = Switch {
        name: "DS".into(),
        id: None,
    };
    assert!(!a.same(&b));
    assert!(a.same(&unknown) && unknown.same(&b));
}

/// The reasons of the transport exception of host `from`'s adapter towards `to`.
fn exception_reasons(d: &crate::diagnose::Diagnosis, from: &str, to: &str) -> Vec<String> {
    d.transport
        .exceptions
        .iter()
        .find(|e| e.adapter.host == from && e.peer_host == to)
        .map(|e| e.reasons.clone())
        .unwrap_or_default()
}

fn failing(h: &mut HostDiagnosis, ids: &[CheckId]) {
    for id in ids {
        h.checks.push(Check::new(*id, Status::Fail, "fails"));
    }
}

/// Every combination of causes words a fallback by what decided it (vsish's line) and
/// what explains it (the host checks failing there, else the adapter's own reason, else
/// `cause unknown`), never as a missing card.
#[test]
fn a_fallback_names_the_vsish_line_and_the_failing_checks_of_its_own_host() {
    use CheckId::{FirewallPvrdma, MtuConsistent, RdmaDeviceActive};
    let vsish = "falls back to TCP (vsish `Physical HCA available:0`)";
    // esx02's HCA is fine, its firewall blocks; esx01 is healthy.
    let mut b = host("esx02", "10.0.0.2", vec![adapter(Verdict::TcpFallback, "DS", 2)]);
    failing(&mut b, &[FirewallPvrdma]);
    let d = fleet_diagnosis(vec![
        host("esx01", "10.0.0.1", vec![adapter(Verdict::Hca, "DS", 2)]),
        b.clone(),
    ]);
    let want = format!("the adapter on esx02 {vsish}: host check firewall-pvrdma fails on esx02");
    assert_eq!(exception_reasons(&d, "esx01", "esx02"), std::slice::from_ref(&want));
    assert_eq!(exception_reasons(&d, "esx02", "esx01"), [want]);
    for r in d.transport.exceptions.iter().flat_map(|e| &e.reasons) {
        assert!(!r.contains("no HCA"), "{r}");
    }

    // Both ends fall back, each for its own checks; several checks on one host.
    let mut a = host("esx01", "10.0.0.1", vec![adapter(Verdict::TcpFallback, "DS", 2)]);
    failing(&mut a, &[RdmaDeviceActive, MtuConsistent]);
    let d = fleet_diagnosis(vec![a, b]);
    assert_eq!(
        exception_reasons(&d, "esx01", "esx02"),
        [
            format!("the adapter on esx01 {vsish}: host checks rdma-device-active, mtu-consistent fail on esx01"),
            format!("the adapter on esx02 {vsish}: host check firewall-pvrdma fails on esx02"),
        ]
    );

    // No check fails: the adapter's own reason; none either: the cause is unknown.
    let mut port = adapter(Verdict::TcpFallback, "vSwitch0", 2);
    port.reasons = vec!["its port is on vSwitch0".into()];
    let d = fleet_diagnosis(vec![
        host("esx01", "10.0.0.1", vec![port]),
        host("esx02", "10.0.0.2", vec![adapter(Verdict::TcpFallback, "DS", 2)]),
    ]);
    assert_eq!(
        exception_reasons(&d, "esx01", "esx02"),
        [
            format!("the adapter on esx01 {vsish}: its port is on vSwitch0"),
            format!("the adapter on esx02 {vsish}: cause unknown"),
        ]
    );

    // An unknown verdict says why there is none.
    let mut unknown = adapter(Verdict::Unknown, "DS", 2);
    unknown.reasons = vec!["vsish could not read its properties: timed out".into()];
    let d = fleet_diagnosis(vec![
        host("esx01", "10.0.0.1", vec![adapter(Verdict::Hca, "DS", 2)]),
        host("esx02", "10.0.0.2", vec![unknown]),
    ]);
    assert_eq!(
        exception_reasons(&d, "esx01", "esx02"),
        ["the adapter on esx02 has no verdict: vsish could not read its properties: timed out"]
    );
}

/// A blocked pair names the check across hosts that blocks it; a warning names its check.
#[test]
fn a_blocked_or_warned_pair_names_its_check_across_hosts() {
    let d = fleet_diagnosis(vec![
        host("a", "10.0.0.1", vec![adapter(Verdict::Hca, "DS", 2)]),
        host("b", "10.0.0.1", vec![adapter(Verdict::Hca, "Other", 1)]),
    ]);
    let reasons = exception_reasons(&d, "a", "b");
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons[0].starts_with("pvrdma-same-vds fails: the ports are on different switches"),
        "{reasons:?}"
    );
    assert!(
        reasons[1].starts_with("vmknic-ipv4-unique fails: the PVRDMA vmknics"),
        "{reasons:?}"
    );
    let d = fleet_diagnosis(vec![
        host("a", "10.0.0.1", vec![adapter(Verdict::Hca, "DS", 2)]),
        host("b", "10.0.0.2", vec![adapter(Verdict::Hca, "DS", 1)]),
    ]);
    let reasons = exception_reasons(&d, "a", "b");
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(
        reasons[0].starts_with("roce-version-pair warns: RoCE v2 on a and v1 on b"),
        "{reasons:?}"
    );
}
