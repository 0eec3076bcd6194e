//! The hosts' and VMs' configuration as the property collector returns it: the
//! properties a PVRDMA diagnosis reads (vSphere Web Services API reference:
//! `HostConfigInfo`, `VirtualMachineConfigInfo`), for a set of hosts and the VMs
//! registered on them, in pages. Handed back as XML text per host, one `ObjectContent`
//! each as vCenter wrote it, for the caller to store and parse (with the reader this
//! crate reads the pages with): this crate knows nothing of the checks.
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::soap::{call, MoRef, ObjectContent, Page, RetrieveResult};
use crate::xml::{escape, moref_element, text_element};

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

/// The hosts' objects and their VMs', page by page, grouped per host: each host with the
/// VMs whose `runtime.host` is that host (a VM moving between pages is counted where it
/// was read), each object as vCenter wrote it.
#[derive(Debug, Default)]
pub struct Grouping {
    hosts: BTreeMap<String, HostConfig>,
    /// Each VM's host id and text, in the collector's order: a VM's host may come on a
    /// later page.
    vms: Vec<(String, String)>,
}

impl Grouping {
    /// Takes the objects of one page, read from `answer`.
    pub fn take(&mut self, page: RetrieveResult, answer: &Page) -> Result<(), String> {
        for o in page.objects {
            match o.obj.kind.as_str() {
                "HostSystem" => {
                    let entry = self.hosts.entry(o.obj.value.clone()).or_default();
                    entry.name = o.text("name").unwrap_or_default().trim().to_string();
                    entry.host_xml = standalone(&o, answer)?;
                }
                "VirtualMachine" => {
                    if let Some(host) = o.moref("runtime.host") {
                        self.vms.push((host.value, standalone(&o, answer)?));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Each host read, by id, with the VMs registered on it.
    pub fn finish(mut self) -> BTreeMap<String, HostConfig> {
        for (host, xml) in self.vms {
            if let Some(entry) = self.hosts.get_mut(&host) {
                entry.vm_xml.push(xml);
            }
        }
        self.hosts
    }
}

/// An object's `<objects>` element as vCenter wrote it, made to stand alone: the namespace
/// declarations in scope in the answer that it uses (the default `urn:vim25`, a prefix
/// written in it, `xsi:type="xsd:string"`) and does not make itself are written on its
/// start tag.
fn standalone(o: &ObjectContent, answer: &Page) -> Result<String, String> {
    let written = answer.written(o.span.clone())?;
    let name_end = written
        .find(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/')
        .filter(|&i| i > 1 && written.starts_with('<'))
        .ok_or_else(|| "an object that is not an element".to_string())?;
    let (tag, rest) = written.split_at(name_end);
    let mut out = String::with_capacity(written.len() + 200);
    out.push_str(tag);
    for (key, value) in answer.namespaces() {
        let used = match key.strip_prefix("xmlns:") {
            Some(prefix) => written.contains(&format!("{prefix}:")),
            None => true,
        };
        if used && !o.declares.contains(key) {
            let _ = write!(out, r#" {key}="{}""#, escape(value));
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::soap::{decode, retrieve_result, Answer, Returned, VALUE_DEPTH};

    /// A page as vCenter writes it: the `xsi` and `xsd` prefixes declared on the envelope,
    /// the default namespace on the response.
    fn answer(objects: &str) -> (RetrieveResult, Page) {
        let text = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<soapenv:Body><RetrievePropertiesExResponse xmlns="urn:vim25"><returnval>{objects}</returnval></RetrievePropertiesExResponse></soapenv:Body></soapenv:Envelope>"#
        );
        let Answer::Return(Returned { value, namespaces }) =
            decode(text.as_bytes(), "RetrievePropertiesEx", VALUE_DEPTH).unwrap()
        else {
            panic!("a fault")
        };
        let page = retrieve_result(value).unwrap();
        (page, Page::new(text.into(), namespaces))
    }

    const VM: &str = r#"<objects><obj type="VirtualMachine">vm-7</obj><propSet><name>name</name><val xsi:type="xsd:string">hpc &amp; co</val></propSet><propSet><name>runtime.host</name><val type="HostSystem" xsi:type="ManagedObjectReference">host-1</val></propSet></objects>"#;
    const ELSEWHERE: &str = r#"<objects><obj type="VirtualMachine">vm-8</obj><propSet><name>runtime.host</name><val type="HostSystem" xsi:type="ManagedObjectReference">host-9</val></propSet></objects>"#;
    const HOST: &str = r#"<objects xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><obj type="HostSystem">host-1</obj><propSet><name>name</name><val xsi:type="xsd:string"> esx01 </val></propSet><propSet><name>config.network</name><val xsi:type="HostNetworkInfo"><rdmaDevice><key>key-vim.host.RdmaDevice-vmrdma0</key><device>vmrdma0</device><driver>nmlx5_rdma</driver><description>RDMA device 0</description><backing xsi:type="HostRdmaDevicePnicBacking"><pairedUplink>vmnic2</pairedUplink></backing><connectionInfo><state>active</state><mtu>4096</mtu><speedInMbps>100000</speedInMbps></connectionInfo></rdmaDevice></val></propSet></objects>"#;

    #[test]
    fn each_object_is_kept_as_vcenter_wrote_it_with_the_namespaces_it_uses() {
        let mut grouping = Grouping::default();
        // The VMs come on a page before their host's.
        let (first, text) = answer(&format!("<token>t1</token>{VM}{ELSEWHERE}"));
        grouping.take(first, &text).unwrap();
        let (second, text) = answer(HOST);
        // The page was read only down to the property values: their contents are left to
        // the parser of the object, which reads them once.
        let network = second.objects[0].prop("config.network").unwrap();
        assert!(network.children.is_empty(), "{network:?}");
        grouping.take(second, &text).unwrap();
        let configs = grouping.finish();

        assert_eq!(configs.keys().collect::<Vec<_>>(), ["host-1"]);
        let host = &configs["host-1"];
        assert_eq!(host.name, "esx01");
        // Its own declaration of xsi stands; the others it uses are added; soapenv and
        // soapenc, which it does not use, are not.
        assert_eq!(
            host.host_xml,
            format!(
                r#"<objects xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns="urn:vim25"{}"#,
                &HOST["<objects".len()..]
            )
        );
        assert_eq!(host.vm_xml.len(), 1, "the VM of another host is not this one's");
        assert_eq!(
            host.vm_xml[0],
            format!(
                r#"<objects xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="urn:vim25"{}"#,
                &VM["<objects".len()..]
            )
        );

        let rows = pvrdma_parsers::parse_vsphere_host_config(&host.host_xml).unwrap();
        assert_eq!(rows.rdma[0].paired_uplink.as_deref(), Some("vmnic2"));
        let vms = pvrdma_parsers::parse_vsphere_vm_config(&host.vm_xml.join("\n")).unwrap();
        assert_eq!(vms[0].config.display_name.as_deref(), Some("hpc & co"));
    }
}
