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
        fleet_failures: Vec::new(),
        record_errors: Vec::new(),
        vms_error: None,
        incomplete_outputs: Vec::new(),
        unparsed_outputs: Vec::new(),
        send_evidence: None,
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
