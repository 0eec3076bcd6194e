use super::fixtures::{adapter, host};
use super::fleet::checks::check_vmknic_subnets;
use super::*;
use crate::exit;

fn with_vmknic(name: &str, ip: &str, mask: &str, roce: Option<u32>) -> HostDiagnosis {
    let adapter = Adapter {
        roce_version: roce,
        ..adapter(0, Verdict::Hca)
    };
    let mut h = host(name, HostStatus::Ok, vec![(&format!("{name}-vm"), vec![adapter])]);
    h.pvrdma_vmknic = Some(PvrdmaVmknic {
        name: "vmk1".to_string(),
        ipv4: Some(ip.to_string()),
        netmask: Some(mask.to_string()),
        mtu: None,
    });
    h
}

#[test]
fn networks_from_address_and_mask() {
    assert_eq!(
        ipv4_network("10.10.10.11", "255.255.255.0").as_deref(),
        Some("10.10.10.0/24")
    );
    assert_eq!(
        ipv4_network("172.16.5.9", "255.255.240.0").as_deref(),
        Some("172.16.0.0/20")
    );
    assert_eq!(
        ipv4_network("10.0.0.1", "255.0.255.0"),
        None,
        "a non-contiguous mask is not a subnet"
    );
    assert_eq!(ipv4_network("not-an-ip", "255.255.255.0"), None);
}

#[test]
fn one_subnet_passes_two_warn_and_roce_v1_across_them_fails() {
    let same = [
        with_vmknic("a", "10.1.1.1", "255.255.255.0", Some(2)),
        with_vmknic("b", "10.1.1.2", "255.255.255.0", Some(2)),
    ];
    assert_eq!(check_vmknic_subnets(&same).map(|c| c.status), Some(Status::Pass));
    let split = [
        with_vmknic("a", "10.1.1.1", "255.255.255.0", Some(2)),
        with_vmknic("b", "10.2.1.2", "255.255.255.0", Some(2)),
    ];
    let c = check_vmknic_subnets(&split).expect("check");
    assert_eq!(c.status, Status::Warn);
    assert!(
        c.summary.contains("10.1.1.0/24 (a vmk1)") && c.summary.contains("10.2.1.0/24 (b vmk1)"),
        "{}",
        c.summary
    );
    let v1 = [
        with_vmknic("a", "10.1.1.1", "255.255.255.0", Some(1)),
        with_vmknic("b", "10.2.1.2", "255.255.255.0", Some(2)),
    ];
    assert_eq!(check_vmknic_subnets(&v1).map(|c| c.status), Some(Status::Fail));
    let d = fleet_diagnosis(v1.to_vec());
    assert_eq!(d.exit_code(), exit::PROBLEMS, "a failing fleet check fails the run");
    // The report does not contradict itself: the pair is blocked, the hosts are not healthy.
    assert_eq!(d.transport.totals.blocked, 1);
    assert_eq!(d.transport.totals.rdma, 0);
    assert!(d
        .hosts
        .iter()
        .all(|h| h.status == HostStatus::Problems && h.fleet_failures == [CheckId::VmknicSubnets]));
    assert_eq!(d.summary.problems, 2);
    assert_eq!(d.summary.adapter_pairs.blocked, 1);
}

#[test]
fn a_single_host_has_no_fleet_check() {
    assert!(check_vmknic_subnets(&[with_vmknic("a", "10.1.1.1", "255.255.255.0", None)]).is_none());
}
