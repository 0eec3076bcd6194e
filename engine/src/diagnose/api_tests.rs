//! Hosts read through the vSphere API alone: the same checks, evidence that names the
//! API property, and no adapter called `hca` without the host's own observation.
use super::*;
use crate::capture::from_vsphere;

const HOST: &str = include_str!("../../../parsers/tests/fixtures/vsphere_host_config.xml");
const VM: &str = include_str!("../../../parsers/tests/fixtures/vsphere_vm_config.xml");

fn judged(host_xml: &str) -> HostDiagnosis {
    diagnose_host(&from_vsphere("esx01", host_xml.to_string(), &[VM.to_string()], 12))
}

fn status(h: &HostDiagnosis, id: &str) -> Status {
    h.checks.iter().find(|c| c.id == id).map(|c| c.status).unwrap()
}

fn adapters(h: &HostDiagnosis) -> Vec<&Adapter> {
    h.vms.iter().flat_map(|v| &v.adapters).collect()
}

#[test]
fn a_healthy_configuration_predicts_the_hca_but_never_claims_it() {
    let h = judged(HOST);
    assert!(h.configuration_only);
    assert_eq!(h.status, HostStatus::Incomplete, "{h:#?}");
    for id in [
        "esxi-version",
        "rdma-device-present",
        "rdma-device-active",
        "firewall-pvrdma",
        "pvrdma-vmknic-tagged",
    ] {
        assert_eq!(status(&h, id), Status::Pass, "{id}: {:#?}", h.checks);
    }
    let lossless = h.checks.iter().find(|c| c.id == "lossless-network").unwrap();
    assert_eq!(lossless.status, Status::Unknown);
    assert!(lossless.summary.contains("only SSH shows it"), "{}", lossless.summary);
    let firewall = h.checks.iter().find(|c| c.id == "firewall-pvrdma").unwrap();
    assert!(
        firewall
            .evidence
            .iter()
            .all(|e| e.command == cat::VSPHERE_HOST_CONFIG && e.field.starts_with("config.firewall")),
        "{:?}",
        firewall.evidence
    );
    let hw = h.checks.iter().find(|c| c.id == "vm-hardware-version").unwrap();
    assert_eq!(
        (hw.evidence[0].command, hw.evidence[0].field.as_str()),
        (cat::VSPHERE_VM_CONFIG, "config.version")
    );
    let all = adapters(&h);
    assert_eq!(all.len(), 2, "{:#?}", h.vms);
    assert_eq!(h.vms[0].name, "hpc-node07");
    for a in all {
        assert_eq!(
            (a.verdict, a.predicted),
            (Verdict::Unknown, Some(Verdict::Hca)),
            "{a:?}"
        );
        assert!(a.reasons[0].contains("observed only over SSH"), "{:?}", a.reasons);
    }
    assert!(h.vms_error.is_none() && h.incomplete_outputs.is_empty(), "{h:#?}");
}

#[test]
fn a_disabled_ruleset_fails_and_predicts_the_fallback() {
    let disabled = HOST.replacen("<key>pvrdma</key>", "<key>pvrdma</key><enabled>false</enabled>", 1);
    // The answer now has two <enabled> elements; the first one is read.
    let h = judged(&disabled);
    let fw = h.checks.iter().find(|c| c.id == "firewall-pvrdma").unwrap();
    assert_eq!(fw.status, Status::Fail, "{fw:?}");
    assert_eq!(
        fw.remedy.as_ref().and_then(|r| r.command.as_deref()),
        Some("esxcli network firewall ruleset set -e true -r pvrdma")
    );
    for a in adapters(&h) {
        assert_eq!((a.verdict, a.predicted), (Verdict::Unknown, Some(Verdict::TcpFallback)));
        assert!(
            a.reasons.iter().any(|r| r.contains("firewall-pvrdma")),
            "{:?}",
            a.reasons
        );
    }
    assert_eq!(h.status, HostStatus::Problems);
}

#[test]
fn no_rdma_device_makes_the_fallback_certain() {
    let start = HOST.find("<rdmaDevice>").unwrap();
    let end = HOST.rfind("</rdmaDevice>").unwrap() + "</rdmaDevice>".len();
    let h = judged(&format!("{}{}", &HOST[..start], &HOST[end..]));
    assert_eq!(status(&h, "rdma-device-present"), Status::Fail);
    for a in adapters(&h) {
        assert_eq!(a.verdict, Verdict::TcpFallback, "{a:?}");
        assert!(a.reasons[0].contains("rdma-device-present"), "{:?}", a.reasons);
    }
}

#[test]
fn a_host_that_reported_no_configuration_is_unknown_not_failed() {
    let bare =
        r#"<objects><obj type="HostSystem">host-9</obj><propSet><name>name</name><val>esx09</val></propSet></objects>"#;
    let h = judged(bare);
    // The VMs' own configuration was read: only the host's checks have nothing.
    for c in h.checks.iter().filter(|c| !c.id.id().starts_with("vm-")) {
        assert_ne!(c.status, Status::Fail, "{c:?}");
        assert_ne!(c.status, Status::Pass, "{c:?}");
    }
    // Never a certain fallback for want of a listed device, never a predicted HCA.
    for a in adapters(&h) {
        assert_eq!(a.verdict, Verdict::Unknown, "{a:?}");
        assert_ne!(a.predicted, Some(Verdict::Hca), "{a:?}");
    }
}

#[test]
fn broken_api_answers_are_reported_once() {
    let h = judged("<objects><propSet>");
    assert_eq!(h.unparsed_outputs.len(), 1, "{:?}", h.unparsed_outputs);
    assert_eq!(h.unparsed_outputs[0].command, cat::VSPHERE_HOST_CONFIG);
    assert!(h
        .checks
        .iter()
        .filter(|c| !c.id.id().starts_with("vm-"))
        .all(|c| c.status != Status::Pass && c.status != Status::Fail));
}

#[test]
fn a_vm_first_run_keeps_only_the_chosen_vms() {
    let other = VM.replace("hpc-node07", "hpc-node08");
    let capture = from_vsphere("esx01", HOST.to_string(), &[VM.to_string(), other], 12);
    let d = diagnose_selected(&[capture], &Selection::default().only_vms(["hpc-node08".to_string()]));
    let names: Vec<&str> = d.hosts[0].vms.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["hpc-node08"]);
    let scope = d.vm_scope.unwrap();
    assert!(scope.not_running.is_empty() && scope.not_seen.is_empty(), "{scope:?}");
}

#[test]
fn a_healthy_configuration_only_fleet_exits_with_its_own_code() {
    let d = two_hosts(vm_on("hpc-node07", DVS, "rocev2"), vm_on("hpc-node08", DVS, "rocev2"));
    let unknown: Vec<_> = d.fleet_checks.iter().filter(|c| c.status == Status::Unknown).collect();
    assert!(unknown.is_empty(), "{unknown:#?}");
    assert_eq!(d.exit_code(), crate::exit::CONFIGURATION_ONLY, "{:#?}", d.fleet_checks);
}

const DVS: &str = "50 2a 6b 1c 3d 4e 5f 60-71 82 93 a4 b5 c6 d7 e8";

/// The fixture VM (adapters RoCE v2 then v1) named `name`, each adapter's port on the vDS
/// `switch` and its protocol `protocol`, as the simulator writes a port backing.
fn vm_on(name: &str, switch: &str, protocol: &str) -> String {
    let backing = format!(
        r#"<backing XMLSchema-instance:type="VirtualEthernetCardDistributedVirtualPortBackingInfo"><port><switchUuid>{switch}</switchUuid><portgroupKey>dvportgroup-pvrdma</portgroupKey></port></backing>"#
    );
    VM.replace("hpc-node07", name)
        .replace(
            "<deviceProtocol>rocev2</deviceProtocol>",
            &format!("<deviceProtocol>{protocol}</deviceProtocol>{backing}"),
        )
        .replace(
            "<deviceProtocol>rocev1</deviceProtocol>",
            &format!("<deviceProtocol>{protocol}</deviceProtocol>{backing}"),
        )
}

fn two_hosts(vm1: String, vm2: String) -> Diagnosis {
    let second = HOST.replace("192.168.50.11", "192.168.50.12");
    diagnose(&[
        from_vsphere("esx01", HOST.to_string(), &[vm1], 12),
        from_vsphere("esx02", second, &[vm2], 12),
    ])
}

fn fleet_status(d: &Diagnosis, id: &str) -> Status {
    d.fleet_checks.iter().find(|c| c.id == id).map(|c| c.status).unwrap()
}

#[test]
fn across_hosts_the_configured_switch_and_roce_version_are_compared() {
    let d = two_hosts(vm_on("a", DVS, "rocev2"), vm_on("b", DVS, "rocev2"));
    assert_eq!(
        fleet_status(&d, "pvrdma-same-vds"),
        Status::Pass,
        "{:#?}",
        d.fleet_checks
    );
    assert_eq!(
        fleet_status(&d, "roce-version-pair"),
        Status::Pass,
        "{:#?}",
        d.fleet_checks
    );
    let same = d.fleet_checks.iter().find(|c| c.id == "pvrdma-same-vds").unwrap();
    assert!(
        same.evidence.iter().any(|e| e.command == cat::VSPHERE_VM_CONFIG),
        "{same:?}"
    );
    // No pair is called rdma: the transport was not observed.
    assert_eq!(d.transport.totals.rdma, 0);
    assert!(d.transport.totals.unknown > 0, "{:?}", d.transport.totals);
    assert_eq!(d.exit_code(), crate::exit::CONFIGURATION_ONLY);

    let d = two_hosts(
        vm_on("a", DVS, "rocev2"),
        vm_on("b", "50 00 00 00 00 00 00 00-00 00 00 00 00 00 00 01", "rocev2"),
    );
    assert_eq!(
        fleet_status(&d, "pvrdma-same-vds"),
        Status::Fail,
        "{:#?}",
        d.fleet_checks
    );
    assert!(d.transport.totals.blocked > 0);
    // What the configuration blocks is listed, pair by pair.
    assert!(!d.transport.exceptions.is_empty() && d.transport.host_pairs.iter().any(|p| p.a() != p.b()));
    assert_eq!(d.exit_code(), crate::exit::PROBLEMS);

    let d = two_hosts(vm_on("a", DVS, "rocev1"), vm_on("b", DVS, "rocev2"));
    assert_eq!(
        fleet_status(&d, "roce-version-pair"),
        Status::Warn,
        "{:#?}",
        d.fleet_checks
    );
}

#[test]
fn an_adapter_without_a_port_leaves_the_switch_check_unknown() {
    let d = two_hosts(VM.to_string(), VM.replace("hpc-node07", "b"));
    assert_eq!(
        fleet_status(&d, "pvrdma-same-vds"),
        Status::Unknown,
        "{:#?}",
        d.fleet_checks
    );
    assert_eq!(d.exit_code(), crate::exit::INCOMPLETE);
}

#[test]
fn before_esxi_7_the_api_lists_no_rdma_device_and_that_proves_nothing() {
    let old = HOST.replace("<version>7.0.3</version>", "<version>6.7.0</version>");
    let start = old.find("<rdmaDevice>").unwrap();
    let end = old.rfind("</rdmaDevice>").unwrap() + "</rdmaDevice>".len();
    let h = judged(&format!("{}{}", &old[..start], &old[end..]));
    let present = h.checks.iter().find(|c| c.id == "rdma-device-present").unwrap();
    assert_eq!(present.status, Status::Unknown, "{present:?}");
    assert!(present.summary.contains("ESXi 7.0 and later"), "{}", present.summary);
    // Never a certain fallback for want of a listed device, never a predicted HCA.
    for a in adapters(&h) {
        assert_eq!(a.verdict, Verdict::Unknown, "{a:?}");
        assert_ne!(a.predicted, Some(Verdict::Hca), "{a:?}");
    }
}

#[test]
fn an_option_a_connected_host_does_not_list_is_unknown_for_that_reason() {
    // config.option answered, but without Net.PVRDMAVmknic: the host did report its
    // configuration, so "not connected" would send the admin the wrong way.
    let start = HOST.find("<OptionValue").unwrap();
    let end = HOST.find("</OptionValue>").unwrap() + "</OptionValue>".len();
    let h = judged(&format!("{}{}", &HOST[..start], &HOST[end..]));
    let tagged = h.checks.iter().find(|c| c.id == "pvrdma-vmknic-tagged").unwrap();
    assert_eq!(tagged.status, Status::Unknown, "{tagged:?}");
    let said = format!("{} {:?}", tagged.summary, tagged.evidence);
    assert!(
        said.contains("config.option as vCenter reported it has no such entry"),
        "{said}"
    );
    assert!(!said.contains("not connected"), "{said}");
}

#[test]
fn a_host_whose_running_vms_have_no_pvrdma_adapter_says_so_of_vcenter_not_of_vmx_files() {
    let plain = VM.replace("VirtualVmxnet3Vrdma", "VirtualVmxnet3");
    let h = diagnose_host(&from_vsphere("esx01", HOST.to_string(), &[plain], 12));
    let hw = h.checks.iter().find(|c| c.id == "vm-hardware-version").unwrap();
    assert_eq!(hw.status, Status::Pass, "{hw:?}");
    assert!(hw.summary.contains("vCenter"), "{}", hw.summary);
    assert!(!hw.summary.contains(".vmx"), "no .vmx file was read: {}", hw.summary);
}

#[test]
fn judged_host_by_host_in_any_order_the_report_is_the_one_of_the_whole_fleet() {
    let second = HOST.replace("192.168.50.11", "192.168.50.12");
    let captures = [
        from_vsphere("esx01", HOST.to_string(), &[vm_on("a", DVS, "rocev2")], 12),
        from_vsphere("esx02", second, &[vm_on("b", DVS, "rocev1")], 12),
        crate::capture::HostCapture::failed(
            "esx03",
            crate::capture::CaptureSource::VsphereApi,
            crate::capture::Failure::new(crate::capture::ErrorKind::CommandFailed, "no configuration"),
        ),
    ];
    let names: Vec<String> = captures.iter().map(|c| c.host.clone()).collect();
    let chosen = crate::capture::VmChoice {
        vms: vec!["b".to_string(), "gone".to_string()],
        left_out: Vec::new(),
    };
    for vms in [None, Some(&chosen)] {
        let selection = Selection::of_vms(vms);
        let whole = diagnose_selected(&captures, &selection);
        let mut by_host = HostByHost::new(selection);
        // As pages bring them: not in the order the run was given.
        for c in captures.iter().rev() {
            by_host.add(c);
        }
        by_host.order_by(&names);
        let streamed = by_host.finish();
        // The whole diagnosis, every field the reports are made from.
        assert_eq!(streamed, whole, "VM scope {vms:?}");
    }
}
