//! Golden tests: every sample output under `samples/` through its parser, typed result (or
//! the rendered error, for the malformed samples) compared with a reviewed snapshot.
//!
//! The file stem is the catalogue id, as in a support bundle, so a new sample needs no
//! code here; a new catalogue id needs one line in [`parse`].
use pvrdma_parsers as p;
use serde::Serialize;

/// What a sample parses to: the typed facts, or the error a user would see.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum Outcome<T> {
    Parsed(T),
    Error { message: String, error: p::ParseError },
}

/// Snapshots one result under the name `parse`; `glob!` adds the sample's path to it.
fn check<T: Serialize>(r: Result<T, p::ParseError>) {
    let outcome = match r {
        Ok(v) => Outcome::Parsed(v),
        Err(e) => Outcome::Error {
            message: e.to_string(),
            error: e,
        },
    };
    insta::assert_yaml_snapshot!("parse", outcome);
}

/// Parses a sample with the parser of its catalogue id; `false` for an unknown id.
fn parse(id: &str, text: &str) -> bool {
    match id {
        "esxcli_system_version_get" => check(p::parse_system_version(text)),
        "esxcli_rdma_device_list" => check(p::parse_rdma_device_list(text)),
        "esxcli_rdma_device_protocol_list" => check(p::parse_rdma_device_protocol_list(text)),
        "esxcli_rdma_device_vmknic_list" => check(p::parse_rdma_device_vmknic_list(text)),
        "esxcli_network_nic_list" => check(p::parse_nic_list(text)),
        "esxcli_network_vswitch_dvs_vmware_list" => check(p::parse_dvs_list(text)),
        "esxcli_network_vswitch_standard_list" => check(p::parse_standard_switch_list(text)),
        "esxcli_network_ip_interface_list" => check(p::parse_ip_interface_list(text)),
        "esxcli_network_ip_interface_ipv4_get" => check(p::parse_ip_interface_ipv4_get(text)),
        "esxcli_system_settings_advanced_list_pvrdmavmknic" => check(p::parse_advanced_option(text)),
        "esxcli_network_firewall_get" => check(p::parse_firewall_get(text)),
        "esxcli_network_firewall_ruleset_list" => check(p::parse_firewall_ruleset_list(text)),
        "esxcli_vm_process_list" => check(p::parse_vm_process_list(text)),
        "esxcli_network_vm_port_list" => check(p::parse_vm_port_list_batch(text)),
        "vsish_pvrdma_devices_ls" => check(p::parse_pvrdma_device_ls(text)),
        "vsish_pvrdma_properties" => check(p::parse_pvrdma_properties_batch(text)),
        "esxcli_network_nic_pauseparams_list" => check(p::parse_nic_pause_params_list(text)),
        "esxcli_network_nic_dcb_status_get" => check(p::parse_nic_dcb_status_batch(text)),
        "vmx_pvrdma_lines" => check(p::parse_vmx_pvrdma_lines(text)),
        _ => return false,
    }
    true
}

#[test]
fn every_sample_parses_as_reviewed() {
    insta::glob!("../../samples", "**/*.txt", |path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.ends_with(".stderr.txt") {
            return;
        }
        // samples/vm-support*/ mimic ESXi vm-support bundles: its files are named by
        // vm-support's rule (localcli_...), not by catalogue id; tests/vmsupport.rs covers it.
        if path
            .components()
            .any(|c| c.as_os_str().to_str().is_some_and(|s| s.starts_with("vm-support")))
        {
            return;
        }
        let id = name.trim_end_matches(".txt");
        let text = std::fs::read_to_string(path).unwrap();
        // `<host>/vmkping/<peer>.txt`: a `--probe` capture, named by the peer it pinged.
        if path
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == "vmkping")
        {
            check(p::parse_vmkping_probe(&text));
            return;
        }
        assert!(
            parse(id, &text),
            "{}: no parser for catalogue id {id:?}",
            path.display()
        );
    });
}

/// The typed result of a sample, in a comparable form.
fn debug_of(id: &str, text: &str) -> Option<String> {
    fn d<T: std::fmt::Debug>(r: Result<T, p::ParseError>) -> Option<String> {
        Some(format!("{r:?}"))
    }
    match id {
        "esxcli_system_version_get" => d(p::parse_system_version(text)),
        "esxcli_rdma_device_list" => d(p::parse_rdma_device_list(text)),
        "esxcli_rdma_device_protocol_list" => d(p::parse_rdma_device_protocol_list(text)),
        "esxcli_rdma_device_vmknic_list" => d(p::parse_rdma_device_vmknic_list(text)),
        "esxcli_network_nic_list" => d(p::parse_nic_list(text)),
        "esxcli_network_vswitch_dvs_vmware_list" => d(p::parse_dvs_list(text)),
        "esxcli_network_vswitch_standard_list" => d(p::parse_standard_switch_list(text)),
        "esxcli_network_ip_interface_list" => d(p::parse_ip_interface_list(text)),
        "esxcli_network_ip_interface_ipv4_get" => d(p::parse_ip_interface_ipv4_get(text)),
        "esxcli_system_settings_advanced_list_pvrdmavmknic" => d(p::parse_advanced_option(text)),
        "esxcli_network_firewall_get" => d(p::parse_firewall_get(text)),
        "esxcli_network_firewall_ruleset_list" => d(p::parse_firewall_ruleset_list(text)),
        "esxcli_vm_process_list" => d(p::parse_vm_process_list(text)),
        "esxcli_network_vm_port_list" => d(p::parse_vm_port_list_batch(text)),
        "vsish_pvrdma_devices_ls" => d(p::parse_pvrdma_device_ls(text)),
        "vsish_pvrdma_properties" => d(p::parse_pvrdma_properties_batch(text)),
        "esxcli_network_nic_pauseparams_list" => d(p::parse_nic_pause_params_list(text)),
        "esxcli_network_nic_dcb_status_get" => d(p::parse_nic_dcb_status_batch(text)),
        "vmx_pvrdma_lines" => d(p::parse_vmx_pvrdma_lines(text)),
        _ => None,
    }
}

/// Output saved on Windows (or passed through a tool that adds CRs) must mean the same:
/// same facts, and for malformed samples the same error at the same line and column.
#[test]
fn crlf_copies_of_every_sample_parse_the_same() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let mut checked = 0;
    let dirs = |p: &std::path::Path| -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(p).unwrap().map(|e| e.unwrap().path()).collect();
        v.sort();
        v
    };
    for scenario in dirs(&root).iter().filter(|p| p.is_dir()) {
        for host in dirs(scenario).iter().filter(|p| p.is_dir()) {
            for path in dirs(host) {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                let Some(id) = name.strip_suffix(".txt") else {
                    continue;
                };
                let text = std::fs::read_to_string(&path).unwrap();
                let Some(lf) = debug_of(id, &text) else {
                    continue;
                };
                let crlf = debug_of(id, &text.replace('\n', "\r\n"));
                assert_eq!(Some(lf), crlf, "{}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked > 200, "only {checked} samples found");
}
