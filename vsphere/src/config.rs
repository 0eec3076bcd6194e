//! The hosts' and VMs' configuration as the property collector returns it: the
//! properties a PVRDMA diagnosis reads (vSphere Web Services API reference:
//! `HostConfigInfo`, `VirtualMachineConfigInfo`), for a set of hosts and the VMs
//! registered on them, in pages. Handed on as XML text per host, one `ObjectContent`
//! each as vCenter wrote it, for the caller to store and parse (with the reader this
//! crate reads the pages with): this crate knows nothing of the checks. Each host is
//! handed on the moment its object and its VMs' have come, so a caller that turns it into
//! what it keeps holds one page of the answer at a time, not the fleet's.
use std::collections::{btree_map, BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::soap::{call, MoRef, ObjectContent, Page, RetrieveResult};
use crate::xml::{escape, moref_element, text_element};

/// The host properties read: the product (version, build), the network configuration
/// (RDMA devices, VMkernel interfaces, vDS membership), the firewall and the advanced
/// options (`Net.PVRDMAVmknic`). `config.firewall` and `config.option` are the same data
/// as `configManager.firewallSystem` and `configManager.advancedOption`, readable for
/// every host in the same traversal instead of one managed object per host. `vm`, the VMs
/// registered on the host, tells when all of a host's VMs have come.
pub const HOST_PROPERTIES: [&str; 6] = [
    "name",
    "config.product",
    "config.network",
    "config.firewall",
    "config.option",
    "vm",
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
    /// The host's managed object id (`host-21`).
    pub id: String,
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
/// was read), each object as vCenter wrote it. A host is handed on as soon as its own
/// object and every VM its `vm` property lists have been read (vCenter and the simulator
/// send a host's VMs right after it), the rest when the pages end; only the hosts still
/// waiting for a VM are held.
#[derive(Debug, Default)]
pub struct Grouping {
    /// The hosts not handed on yet, by id: read, or named by a VM read before them.
    pending: BTreeMap<String, Pending>,
    /// The VMs a host read lists and that have not come yet: VM id → that host.
    awaited: BTreeMap<String, String>,
    /// The VMs read so far, so that a host read after them does not wait for them.
    vms_read: BTreeSet<String>,
    /// The hosts handed on: read again after a renewed session, none is handed twice.
    handed: BTreeSet<String>,
}

/// A host not handed on yet.
#[derive(Debug, Default)]
struct Pending {
    config: HostConfig,
    /// Whether its own object came (else only VMs running on it did).
    read: bool,
    /// How many VMs it lists that have not come yet.
    waiting: usize,
}

impl Grouping {
    /// Takes the objects of one page, read from `answer`, handing each host that is
    /// whole to `each`.
    pub fn take(
        &mut self,
        page: RetrieveResult,
        answer: &Page,
        each: &mut impl FnMut(HostConfig),
    ) -> Result<(), String> {
        for o in page.objects {
            match o.obj.kind.as_str() {
                "HostSystem" => self.host(&o, answer, each)?,
                "VirtualMachine" => self.vm(&o, answer, each)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn host(&mut self, o: &ObjectContent, answer: &Page, each: &mut impl FnMut(HostConfig)) -> Result<(), String> {
        let id = &o.obj.value;
        if self.handed.contains(id) {
            return Ok(());
        }
        let listed = listed_vms(o, answer)?;
        let entry = self.pending.entry(id.clone()).or_default();
        entry.config.id.clone_from(id);
        entry.config.name = o.text("name").unwrap_or_default().trim().to_string();
        entry.config.host_xml = standalone(o, answer)?;
        entry.read = true;
        for vm in listed {
            if self.vms_read.contains(&vm) {
                continue;
            }
            // A VM two hosts list (it moved while the answer was made) is waited for once.
            if let btree_map::Entry::Vacant(v) = self.awaited.entry(vm) {
                v.insert(id.clone());
                entry.waiting += 1;
            }
        }
        self.hand_if_whole(id, each);
        Ok(())
    }

    fn vm(&mut self, o: &ObjectContent, answer: &Page, each: &mut impl FnMut(HostConfig)) -> Result<(), String> {
        let id = &o.obj.value;
        self.vms_read.insert(id.clone());
        let lister = self.awaited.remove(id);
        // Where it runs; if that host was handed on already (the VM moved onto it after it
        // was read), the host that listed it.
        let home = o.moref("runtime.host").map(|h| h.value).and_then(|h| {
            if self.handed.contains(&h) {
                lister.clone()
            } else {
                Some(h)
            }
        });
        if let Some(home) = home {
            let xml = standalone(o, answer)?;
            self.pending.entry(home).or_default().config.vm_xml.push(xml);
        }
        if let Some(lister) = lister {
            if let Some(p) = self.pending.get_mut(&lister) {
                p.waiting = p.waiting.saturating_sub(1);
            }
            self.hand_if_whole(&lister, each);
        }
        Ok(())
    }

    fn hand_if_whole(&mut self, id: &str, each: &mut impl FnMut(HostConfig)) {
        if self.pending.get(id).is_some_and(|p| p.read && p.waiting == 0) {
            if let Some(p) = self.pending.remove(id) {
                self.handed.insert(p.config.id.clone());
                each(p.config);
            }
        }
    }

    /// Forgets what was read of an answer that broke off, before it is asked for again
    /// (after a renewed session): the hosts handed on stay handed.
    pub fn restart(&mut self) {
        self.pending.clear();
        self.awaited.clear();
        self.vms_read.clear();
    }

    /// Hands on, by id, every host read that was still waiting for a VM (one that never
    /// came); VMs of a host never read are left out.
    pub fn finish(self, each: &mut impl FnMut(HostConfig)) {
        for (_, p) in self.pending {
            if p.read {
                each(p.config);
            }
        }
    }
}

/// The VMs a host object's `vm` property lists (an `ArrayOfManagedObjectReference`, read
/// from its text: the page was read only down to the property values).
fn listed_vms(o: &ObjectContent, answer: &Page) -> Result<Vec<String>, String> {
    let Some(val) = o.prop("vm") else {
        return Ok(Vec::new());
    };
    let text = answer.written(val.span.clone())?;
    let whole = pvrdma_parsers::xml::read(text).map_err(|e| format!("a host's VM list: {e}"))?;
    Ok(whole
        .children
        .iter()
        .filter_map(|r| MoRef::of(r).ok())
        .filter(|r| r.kind == "VirtualMachine")
        .map(|r| r.value)
        .collect())
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
        let mut configs = Vec::new();
        let mut each = |c: HostConfig| configs.push(c);
        // The VMs come on a page before their host's.
        let (first, text) = answer(&format!("<token>t1</token>{VM}{ELSEWHERE}"));
        grouping.take(first, &text, &mut each).unwrap();
        let (second, text) = answer(HOST);
        // The page was read only down to the property values: their contents are left to
        // the parser of the object, which reads them once.
        let network = second.objects[0].prop("config.network").unwrap();
        assert!(network.children.is_empty(), "{network:?}");
        grouping.take(second, &text, &mut each).unwrap();
        grouping.finish(&mut each);

        assert_eq!(configs.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["host-1"]);
        let host = &configs[0];
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

    /// A host whose `vm` property lists these VMs.
    fn host(id: &str, name: &str, vms: &[&str]) -> String {
        let listed: String = vms
            .iter()
            .map(|vm| format!(r#"<ManagedObjectReference type="VirtualMachine" xsi:type="ManagedObjectReference">{vm}</ManagedObjectReference>"#))
            .collect();
        format!(
            r#"<objects><obj type="HostSystem">{id}</obj><propSet><name>name</name><val xsi:type="xsd:string">{name}</val></propSet><propSet><name>vm</name><val xsi:type="ArrayOfManagedObjectReference">{listed}</val></propSet></objects>"#
        )
    }

    fn vm(id: &str, on: &str) -> String {
        format!(
            r#"<objects><obj type="VirtualMachine">{id}</obj><propSet><name>name</name><val xsi:type="xsd:string">{id}</val></propSet><propSet><name>runtime.host</name><val type="HostSystem" xsi:type="ManagedObjectReference">{on}</val></propSet></objects>"#
        )
    }

    /// The ids handed on after each page, and after the end.
    fn handed_per_page(grouping: &mut Grouping, pages: &[String]) -> Vec<Vec<(String, usize)>> {
        let mut out = Vec::new();
        for page in pages {
            let mut handed = Vec::new();
            let (objects, text) = answer(page);
            grouping
                .take(objects, &text, &mut |c: HostConfig| {
                    handed.push((c.name, c.vm_xml.len()))
                })
                .unwrap();
            out.push(handed);
        }
        let mut handed = Vec::new();
        std::mem::take(grouping).finish(&mut |c: HostConfig| handed.push((c.name, c.vm_xml.len())));
        out.push(handed);
        out
    }

    #[test]
    fn each_host_is_handed_on_the_moment_its_vms_have_come() {
        let pages = [
            // esx01 whole on the first page; esx02's second VM comes on the next.
            format!(
                "<token>t1</token>{}{}{}{}{}",
                host("host-1", "esx01", &["vm-1", "vm-2"]),
                vm("vm-1", "host-1"),
                vm("vm-2", "host-1"),
                host("host-2", "esx02", &["vm-3", "vm-4"]),
                vm("vm-3", "host-2")
            ),
            // A VM before its host; a host with no VM.
            format!(
                "<token>t2</token>{}{}{}",
                vm("vm-4", "host-2"),
                vm("vm-5", "host-3"),
                host("host-4", "esx04", &[])
            ),
            host("host-3", "esx03", &["vm-5"]),
        ];
        let handed = handed_per_page(&mut Grouping::default(), &pages);
        let names = |page: &[(String, usize)]| page.iter().map(|(n, v)| format!("{n}:{v}")).collect::<Vec<_>>();
        assert_eq!(names(&handed[0]), ["esx01:2"], "esx02 waits for vm-4");
        assert_eq!(names(&handed[1]), ["esx02:2", "esx04:0"]);
        assert_eq!(names(&handed[2]), ["esx03:1"], "a VM read before its host joins it");
        assert!(handed[3].is_empty(), "nothing was left: {:?}", handed[3]);
    }

    #[test]
    fn a_vm_that_never_comes_holds_its_host_only_to_the_end() {
        let pages = [host("host-1", "esx01", &["vm-1", "vm-gone"]) + &vm("vm-1", "host-1")];
        let handed = handed_per_page(&mut Grouping::default(), &pages);
        assert!(handed[0].is_empty());
        assert_eq!(handed[1], [("esx01".to_string(), 1)]);
    }

    #[test]
    fn a_vm_that_moved_onto_a_host_handed_on_stays_with_the_host_that_listed_it() {
        // vm-9 was listed by esx02 but runs on esx01 by the time it is read, after esx01
        // was handed on: it is reported once, with esx02, rather than lost.
        let pages = [
            host("host-1", "esx01", &[]) + &host("host-2", "esx02", &["vm-9"]),
            vm("vm-9", "host-1"),
        ];
        let handed = handed_per_page(&mut Grouping::default(), &pages);
        assert_eq!(handed[0], [("esx01".to_string(), 0)]);
        assert_eq!(handed[1], [("esx02".to_string(), 1)]);
    }

    #[test]
    fn an_answer_read_again_hands_no_host_twice() {
        let first = host("host-1", "esx01", &["vm-1"]) + &vm("vm-1", "host-1") + &host("host-2", "esx02", &["vm-2"]);
        let mut grouping = Grouping::default();
        let handed = handed_per_page(&mut grouping, std::slice::from_ref(&first));
        assert_eq!(handed[0], [("esx01".to_string(), 1)]);

        // The session ended before the next page; the answer is asked for again whole.
        let mut grouping = Grouping::default();
        let (objects, text) = answer(&first);
        let mut handed = Vec::new();
        grouping
            .take(objects, &text, &mut |c: HostConfig| handed.push(c.name))
            .unwrap();
        grouping.restart();
        let again = first + &vm("vm-2", "host-2");
        let (objects, text) = answer(&again);
        grouping
            .take(objects, &text, &mut |c: HostConfig| handed.push(c.name))
            .unwrap();
        grouping.finish(&mut |c: HostConfig| handed.push(c.name));
        assert_eq!(handed, ["esx01", "esx02"]);
    }
}
