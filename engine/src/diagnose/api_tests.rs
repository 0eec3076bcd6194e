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
    for a in adapters(&h) {
        assert_eq!((a.verdict, a.predicted), (Verdict::Unknown, None), "{a:?}");
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
    let second = HOST.replace("192.168.50.11", "192.168.50.12");
    let other_vm = VM.replace("hpc-node07", "hpc-node08");
    let d = diagnose(&[
        from_vsphere("esx01", HOST.to_string(), &[VM.to_string()], 12),
        from_vsphere("esx02", second, &[other_vm], 12),
    ]);
    let unknown: Vec<_> = d.fleet_checks.iter().filter(|c| c.status == Status::Unknown).collect();
    assert!(unknown.is_empty(), "{unknown:#?}");
    assert_eq!(d.exit_code(), crate::exit::CONFIGURATION_ONLY, "{:#?}", d.fleet_checks);
}
