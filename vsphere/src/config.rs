//! The hosts' and VMs' configuration as the property collector returns it: the
//! properties a PVRDMA diagnosis reads (vSphere Web Services API reference:
//! `HostConfigInfo`, `VirtualMachineConfigInfo`), for a set of hosts and the VMs
//! registered on them, in pages. Handed back as XML text per host, one `ObjectContent`
//! each, for the caller to store and parse: this crate knows nothing of the checks.
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::soap::{call, MoRef, ObjectContent};
use crate::xml::{moref_element, text_element, write_xml};

/// The host properties read: the product (version, build), the network configuration
/// (RDMA devices, VMkernel interfaces, vDS membership), the firewall and the advanced
/// options (`Net.PVRDMAVmknic`). `config.firewall` and `config.option` are the same data
/// as `configManager.firewallSystem` and `configManager.advancedOption`, readable for
/// every host in the same traversal instead of one managed object per host.
pub const HOST_PROPERTIES: [&str; 5] = [
    "name",
    "config.product",
    "config.network",
    "config.firewall",
    "config.option",
];

/// The VM properties read: what the VM checks judge.
pub const VM_PROPERTIES: [&str; 8] = [
    "name",
    "runtime.host",
    "runtime.powerState",
    "config.version",
    "config.hardware.memoryMB",
    "config.memoryAllocation",
    "config.memoryReservationLockedToMax",
    "config.hardware.device",
];

/// One host's configuration: its `ObjectContent` and those of its VMs, as XML.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostConfig {
    /// The host's name (`HostSystem.name`).
    pub name: String,
    pub host_xml: String,
    /// The VMs registered on it, in the collector's order.
    pub vm_xml: Vec<String>,
}

/// `RetrievePropertiesEx` of the hosts' configuration and, through `HostSystem.vm`, of
/// their VMs: one object set per host in one request, `max_objects` a page.
pub fn retrieve_config(collector: &MoRef, hosts: &[String], max_objects: u32) -> String {
    let mut args = String::from("<specSet><propSet><type>HostSystem</type><all>false</all>");
    for p in HOST_PROPERTIES {
        text_element(&mut args, "pathSet", p);
    }
    args.push_str("</propSet><propSet><type>VirtualMachine</type><all>false</all>");
    for p in VM_PROPERTIES {
        text_element(&mut args, "pathSet", p);
    }
    args.push_str("</propSet>");
    for h in hosts {
        args.push_str("<objectSet>");
        moref_element(&mut args, "obj", "HostSystem", h);
        args.push_str(
            r#"<skip>false</skip><selectSet xsi:type="TraversalSpec"><name>vms</name><type>HostSystem</type><path>vm</path><skip>false</skip></selectSet>"#,
        );
        args.push_str("</objectSet>");
    }
    args.push_str("</specSet>");
    let _ = write!(args, "<options><maxObjects>{max_objects}</maxObjects></options>");
    call("RetrievePropertiesEx", collector, &args)
}

/// An `ObjectContent` written back as XML, its `xsi` prefix declared so the fragment
/// stands alone.
pub fn object_xml(o: &ObjectContent) -> String {
    let mut out = String::from(r#"<objects xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">"#);
    moref_element(&mut out, "obj", &o.obj.kind, &o.obj.value);
    for (name, val) in &o.props {
        out.push_str("<propSet>");
        text_element(&mut out, "name", name);
        write_xml(val, &mut out);
        out.push_str("</propSet>");
    }
    out.push_str("</objects>");
    out
}

/// Groups the collected objects per host id: each host with the VMs whose
/// `runtime.host` is that host (a VM moving between pages is counted where it was read).
pub fn group(objects: &[ObjectContent]) -> BTreeMap<String, HostConfig> {
    let mut out: BTreeMap<String, HostConfig> = BTreeMap::new();
    for o in objects.iter().filter(|o| o.obj.kind == "HostSystem") {
        let entry = out.entry(o.obj.value.clone()).or_default();
        entry.name = o.text("name").unwrap_or_default().trim().to_string();
        entry.host_xml = object_xml(o);
    }
    for o in objects.iter().filter(|o| o.obj.kind == "VirtualMachine") {
        if let Some(host) = o.moref("runtime.host").filter(|h| out.contains_key(&h.value)) {
            if let Some(entry) = out.get_mut(&host.value) {
                entry.vm_xml.push(object_xml(o));
            }
        }
    }
    out
}
