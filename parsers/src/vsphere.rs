//! A host's configuration as vCenter's property collector returns it (`HostSystem`
//! properties `config.product`, `config.network`, `config.firewall`, `config.option`;
//! vSphere Web Services API reference, `HostConfigInfo`), one `ObjectContent` as XML,
//! turned into the same rows the `esxcli` parsers produce where the meaning is the same.
//! Real sample (govmomi's vSphere simulator answering for a host configured for PVRDMA,
//! cut to the parts read; its odd namespace prefix is Go's encoding/xml):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let xml = r#"<objects><obj type="HostSystem">host-17</obj>
//! <propSet><name>config.product</name><val xmlns:XMLSchema-instance="http://www.w3.org/2001/XMLSchema-instance" XMLSchema-instance:type="AboutInfo"><name>VMware ESXi</name><fullName>VMware ESXi 7.0.3 build-21930508</fullName><vendor>VMware, Inc.</vendor><version>7.0.3</version><build>21930508</build></val></propSet>
//! <propSet><name>config.network</name><val xmlns:XMLSchema-instance="http://www.w3.org/2001/XMLSchema-instance" XMLSchema-instance:type="HostNetworkInfo"><pnic><key>key-vim.host.PhysicalNic-vmnic2</key><device>vmnic2</device><pci>0000:3b:00.2</pci><driver>nmlx5_core</driver></pnic><rdmaDevice><key>key-vim.host.RdmaDevice-vmrdma0</key><device>vmrdma0</device><driver>nmlx5_rdma</driver><description>RDMA device 0</description><backing XMLSchema-instance:type="HostRdmaDevicePnicBacking"><pairedUplink>key-vim.host.PhysicalNic-vmnic2</pairedUplink></backing><connectionInfo><state>active</state><mtu>4096</mtu><speedInMbps>100000</speedInMbps></connectionInfo><capability><roceV1Capable>true</roceV1Capable><roceV2Capable>true</roceV2Capable><iWarpCapable>false</iWarpCapable></capability></rdmaDevice><vnic><device>vmk1</device><key>key-vim.host.VirtualNic-vmk1</key><portgroup></portgroup><spec><ip><dhcp>false</dhcp><ipAddress>192.168.50.11</ipAddress><subnetMask>255.255.255.0</subnetMask></ip><distributedVirtualPort><switchUuid>50 2a 6b 1c 3d 4e 5f 60-71 82 93 a4 b5 c6 d7 e8</switchUuid><portKey>vmk1</portKey></distributedVirtualPort><mtu>9000</mtu></spec></vnic><proxySwitch><dvsUuid>50 2a 6b 1c 3d 4e 5f 60-71 82 93 a4 b5 c6 d7 e8</dvsUuid><dvsName>dvs-rdma</dvsName><key>50 2a 6b 1c 3d 4e 5f 60-71 82 93 a4 b5 c6 d7 e8</key><numPorts>512</numPorts><numPortsAvailable>500</numPortsAvailable><mtu>9000</mtu><pnic>key-vim.host.PhysicalNic-vmnic2</pnic></proxySwitch></val></propSet>
//! <propSet><name>config.firewall</name><val xmlns:XMLSchema-instance="http://www.w3.org/2001/XMLSchema-instance" XMLSchema-instance:type="HostFirewallInfo"><defaultPolicy><incomingBlocked>true</incomingBlocked><outgoingBlocked>true</outgoingBlocked></defaultPolicy><ruleset><key>pvrdma</key><label>pvrdma</label><required>false</required><rule><port>28250</port><endPort>28761</endPort><direction>inbound</direction><portType>dst</portType><protocol>tcp</protocol></rule><enabled>true</enabled><allowedHosts><allIp>true</allIp></allowedHosts></ruleset></val></propSet>
//! <propSet><name>config.option</name><val xmlns:XMLSchema-instance="http://www.w3.org/2001/XMLSchema-instance" XMLSchema-instance:type="ArrayOfOptionValue"><OptionValue XMLSchema-instance:type="OptionValue"><key>Net.PVRDMAVmknic</key><value XMLSchema-instance:type="xsd:string">vmk1</value></OptionValue></val></propSet></objects>"#;
//! let host = parse_vsphere_host_config(xml)?;
//! assert_eq!(host.version.as_ref().unwrap().version, "7.0.3");
//! assert_eq!(host.rdma[0].paired_uplink.as_deref(), Some("vmnic2"));
//! assert!(host.rdma[0].state.is_active());
//! assert_eq!(host.protocols[0].roce_v2, Some(true));
//! assert_eq!(host.rulesets[0].enabled, Some(true));
//! assert_eq!(host.options[0].string_value, "vmk1");
//! assert_eq!(host.vmknics[0].vds_name.as_deref(), Some("dvs-rdma"));
//! assert_eq!(host.ipv4[0].address.as_deref(), Some("192.168.50.11"));
//! assert_eq!(host.dvs[0].uplinks, ["vmnic2"]);
//! # Ok::<(), ParseError>(())
//! ```
//!
//! A property the host did not report (a host never connected has no `config`) leaves
//! its rows empty: absent data, judged `unknown` by the checks, never invented.
use serde::Serialize;

use crate::vmx::{VmxAdapter, VmxConfig};
use crate::xml::{self, Element};
use crate::{
    AdvancedOption, DvsSwitch, FirewallRuleset, FirewallStatus, Ipv4Interface, ParseError, RdmaDevice, RdmaProtocols,
    StandardSwitch, SystemVersion, VmkInterface,
};

mod network;

/// The catalogue id of the host configuration read through the API.
pub const HOST_CONFIG_ID: &str = "vsphere_host_config";

/// Everything one host's `ObjectContent` says, as the `esxcli` parsers' rows.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct HostConfigRows {
    pub version: Option<SystemVersion>,
    pub rdma: Vec<RdmaDevice>,
    pub protocols: Vec<RdmaProtocols>,
    pub firewall: Option<FirewallStatus>,
    pub rulesets: Vec<FirewallRuleset>,
    pub options: Vec<AdvancedOption>,
    pub vmknics: Vec<VmkInterface>,
    pub ipv4: Vec<Ipv4Interface>,
    pub dvs: Vec<DvsSwitch>,
    /// The standard switches (`HostVirtualSwitch`), as `esxcli network vswitch standard
    /// list` names them.
    pub standard_switches: Vec<StandardSwitch>,
    /// The properties the answer holds (`config.network`, ...): a host that never
    /// connected reports none, and empty rows then mean "not reported", not "none".
    pub reported: Vec<String>,
}

/// Reading the values of an `ObjectContent` at paths of child names.
trait Values {
    /// The trimmed text at a path of child names, `None` when absent or empty.
    fn text(&self, path: &[&str]) -> Option<String>;

    fn flag(&self, path: &[&str]) -> Option<bool> {
        self.text(path).and_then(|t| t.parse().ok())
    }

    fn number(&self, path: &[&str]) -> Option<u32> {
        self.text(path).and_then(|t| t.parse().ok())
    }
}

impl Values for Element {
    fn text(&self, path: &[&str]) -> Option<String> {
        let mut node = self;
        for p in path {
            node = node.child(p)?;
        }
        Some(node.text.trim().to_string()).filter(|t| !t.is_empty())
    }
}

/// Reads `input`, a sequence of `<objects>` elements, with the reader the vSphere client
/// reads the answers with.
fn objects(input: &str, command: &'static str) -> Result<Vec<Element>, ParseError> {
    let fail = |pos: usize, expected: &'static str| {
        let mut at = pos.min(input.len());
        while !input.is_char_boundary(at) {
            at -= 1;
        }
        let before = &input[..at];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        ParseError {
            command,
            line,
            column: before[line_start..].chars().count() + 1,
            expected,
            snippet: input[line_start..]
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(80)
                .collect(),
        }
    };
    let list = xml::read_elements(input).map_err(|e| {
        let expected = match e.expected {
            "an element" => "an <objects> element",
            other => other,
        };
        fail(e.at, expected)
    })?;
    if list.iter().any(|c| c.name != "objects") {
        return Err(fail(0, "only <objects> elements (ObjectContents)"));
    }
    Ok(list)
}

fn fail_at_start(command: &'static str, input: &str, expected: &'static str) -> ParseError {
    ParseError {
        command,
        line: 1,
        column: 1,
        expected,
        snippet: input.lines().next().unwrap_or("").chars().take(80).collect(),
    }
}

/// The value of a property of an `ObjectContent`.
fn property<'a>(objects: &'a Element, name: &str) -> Option<&'a Element> {
    objects
        .children_named("propSet")
        .find(|p| p.text(&["name"]).as_deref() == Some(name))
        .and_then(|p| p.child("val"))
}

/// Parses a host's `ObjectContent` (the output of [`HOST_CONFIG_ID`]).
pub fn parse_vsphere_host_config(input: &str) -> Result<HostConfigRows, ParseError> {
    let mut list = objects(input, HOST_CONFIG_ID)?;
    let objects = match (list.pop(), list.is_empty()) {
        (Some(one), true) => one,
        _ => {
            return Err(fail_at_start(
                HOST_CONFIG_ID,
                input,
                "one <objects> element (an ObjectContent)",
            ))
        }
    };
    let mut rows = HostConfigRows {
        reported: objects
            .children_named("propSet")
            .filter(|p| p.child("val").is_some())
            .filter_map(|p| p.text(&["name"]))
            .collect(),
        ..HostConfigRows::default()
    };
    if let Some(p) = property(&objects, "config.product") {
        rows.version = p.text(&["version"]).map(|version| SystemVersion {
            product: p.text(&["name"]).unwrap_or_else(|| "VMware ESXi".into()),
            version,
            // `AboutInfo.build` is the bare number (`21930508`), as the esxcli parser keeps
            // it once it strips esxcli's own `Releasebuild-`.
            build: p.text(&["build"]),
            update: None,
            patch: None,
        });
    }
    if let Some(net) = property(&objects, "config.network") {
        network::read(net, &mut rows);
    }
    if let Some(fw) = property(&objects, "config.firewall") {
        let incoming_blocked = fw.flag(&["defaultPolicy", "incomingBlocked"]);
        rows.firewall = Some(FirewallStatus {
            default_action: incoming_blocked.map(|blocked| if blocked { "DROP" } else { "PASS" }.to_string()),
            // What `Enabled` means to PVRDMA: whether the firewall stops incoming traffic
            // no ruleset lets through. A default policy that lets it all in stops nothing,
            // as a disabled firewall does.
            enabled: incoming_blocked,
            loaded: None,
        });
        rows.rulesets = fw
            .children_named("ruleset")
            .filter_map(|r| {
                Some(FirewallRuleset {
                    name: r.text(&["key"])?,
                    enabled: r.flag(&["enabled"]),
                    configurable: None,
                    allowed_ip_configurable: None,
                })
            })
            .collect();
    }
    if let Some(opts) = property(&objects, "config.option") {
        rows.options = opts
            .children_named("OptionValue")
            .filter_map(|o| {
                let key = o.text(&["key"])?;
                let value = o.text(&["value"]).unwrap_or_default();
                Some(AdvancedOption {
                    path: format!("/{}", key.replace('.', "/")),
                    option_type: Some("string".into()),
                    int_value: None,
                    string_value: value,
                    default_string_value: None,
                    description: None,
                })
            })
            .collect();
    }
    Ok(rows)
}

/// The catalogue id of the VMs' configuration read through the API.
pub const VM_CONFIG_ID: &str = "vsphere_vm_config";

/// One VM's `ObjectContent` (`VirtualMachineConfigInfo`): the `.vmx` settings the VM checks
/// read, as [`VmxConfig`] holds them, and each PVRDMA adapter's `deviceProtocol`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmConfigRows {
    /// The managed object id (`vm-84`).
    pub id: String,
    /// `runtime.powerState`: `poweredOn`, `poweredOff`, `suspended`.
    pub power_state: Option<String>,
    pub config: VmxConfig,
    /// Per `VirtualVmxnet3Vrdma` adapter, in device order: `rocev1`, `rocev2`, or `None`
    /// when unset.
    pub device_protocols: Vec<Option<String>>,
    /// Per `VirtualVmxnet3Vrdma` adapter, in device order: the uuid of the vDS its port is
    /// on (`backing.port.switchUuid`), `None` on a standard port group or unset.
    pub switch_uuids: Vec<Option<String>>,
}

/// Parses the `ObjectContent`s of a host's VMs (the output of [`VM_CONFIG_ID`]: one
/// `<objects>` element per VM, one after the other).
pub fn parse_vsphere_vm_config(input: &str) -> Result<Vec<VmConfigRows>, ParseError> {
    Ok(objects(input, VM_CONFIG_ID)?.iter().map(vm).collect())
}

/// The `VirtualEthernetCard` types (vSphere Web Services API reference).
const ETHERNET_CARDS: [&str; 9] = [
    "VirtualE1000",
    "VirtualE1000e",
    "VirtualPCNet32",
    "VirtualVmxnet",
    "VirtualVmxnet2",
    "VirtualVmxnet3",
    "VirtualVmxnet3Vrdma",
    "VirtualSriovEthernetCard",
    "VirtualEthernetCard",
];

fn vm(objects: &Element) -> VmConfigRows {
    let mut adapters = Vec::new();
    let mut protocols = Vec::new();
    let mut switches = Vec::new();
    if let Some(devices) = property(objects, "config.hardware.device") {
        // Adapters are numbered as the guest and the `.vmx` count them: every ethernet
        // card before this one, PVRDMA or not.
        let mut ethernet = 0;
        for d in devices.children.iter() {
            let Some(kind) = d.xsi_type() else { continue };
            if !ETHERNET_CARDS.contains(&kind) {
                continue;
            }
            if kind == "VirtualVmxnet3Vrdma" {
                adapters.push(VmxAdapter {
                    ethernet_index: ethernet,
                    present: Some(true),
                    mac_address: d.text(&["macAddress"]),
                    network_name: d.text(&["deviceInfo", "summary"]),
                    native_endpoint_support: None,
                });
                protocols.push(d.text(&["deviceProtocol"]));
                switches.push(d.text(&["backing", "port", "switchUuid"]));
            }
            ethernet += 1;
        }
    }
    let text = |name: &str| property(objects, name).and_then(|v| v.text(&[]));
    VmConfigRows {
        id: objects.text(&["obj"]).unwrap_or_default(),
        power_state: text("runtime.powerState"),
        config: VmxConfig {
            display_name: text("name"),
            hardware_version: text("config.version").and_then(|v| v.trim_start_matches("vmx-").parse().ok()),
            memsize_mb: text("config.hardware.memoryMB").and_then(|v| v.parse().ok()),
            mem_min_mb: property(objects, "config.memoryAllocation")
                .and_then(|a| a.text(&["reservation"]))
                .and_then(|v| v.parse().ok()),
            mem_pin: text("config.memoryReservationLockedToMax").and_then(|v| v.parse().ok()),
            pvrdma_adapters: adapters,
        },
        device_protocols: protocols,
        switch_uuids: switches,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = include_str!("../tests/fixtures/vsphere_host_config.xml");

    #[test]
    fn the_simulators_whole_answer_gives_every_row() {
        let h = parse_vsphere_host_config(SAMPLE).unwrap();
        let v = h.version.unwrap();
        assert_eq!((v.version.as_str(), v.numbers()), ("7.0.3", Some((7, 0, 3))));
        // The build as esxcli's parser gives it: one host read both ways is one version.
        assert_eq!(v.build.as_deref(), Some("21930508"));
        assert_eq!(h.rdma.len(), 1);
        assert_eq!(h.rdma[0].mtu, Some(4096));
        assert_eq!(h.rdma[0].speed, "100 Gbps");
        assert_eq!(h.protocols[0].roce_v1, Some(true));
        assert_eq!(h.firewall.unwrap().default_action.as_deref(), Some("DROP"));
        let pvrdma = h.rulesets.iter().find(|r| r.name == "pvrdma").unwrap();
        assert_eq!(pvrdma.enabled, Some(true));
        assert!(h.rulesets.len() > 10, "every ruleset the host reports");
        let opt = h.options.iter().find(|o| o.path == "/Net/PVRDMAVmknic").unwrap();
        assert_eq!(opt.string_value, "vmk1");
        let names: Vec<_> = h
            .vmknics
            .iter()
            .map(|v| (v.name.as_str(), v.mtu, v.vds_name.as_deref()))
            .collect();
        assert_eq!(
            names,
            [("vmk0", Some(1500), None), ("vmk1", Some(9000), Some("dvs-rdma"))]
        );
        assert_eq!(h.ipv4[0].address.as_deref(), Some("10.0.0.11"));
        assert_eq!(h.dvs.len(), 1);
        assert_eq!(h.dvs[0].mtu, Some(9000));
        assert_eq!(h.dvs[0].ports[0].client.as_deref(), Some("vmk1"));
        // The NICs, switches and port groups the API refers to by key, named as esxcli
        // names them.
        assert_eq!(h.rdma[0].paired_uplink.as_deref(), Some("vmnic2"));
        assert_eq!(h.dvs[0].uplinks, ["vmnic2"]);
        assert_eq!(
            h.standard_switches,
            [StandardSwitch {
                name: "vSwitch0".into(),
                mtu: Some(1500),
                uplinks: vec!["vmnic0".into()],
                portgroups: vec!["VM Network".into(), "Management Network".into()],
            }]
        );
        let portsets: Vec<_> = h.vmknics.iter().map(|v| v.portset.as_deref()).collect();
        assert_eq!(portsets, [Some("vSwitch0"), Some("dvs-rdma")]);
    }

    #[test]
    fn an_unset_option_and_a_missing_config_are_empty_not_invented() {
        let xml = r#"<objects><obj type="HostSystem">host-9</obj><propSet><name>config.option</name><val><OptionValue><key>Net.PVRDMAVmknic</key><value></value></OptionValue></val></propSet></objects>"#;
        let h = parse_vsphere_host_config(xml).unwrap();
        assert_eq!(h.options[0].string_value, "");
        assert!(h.version.is_none() && h.rdma.is_empty() && h.firewall.is_none());
        assert_eq!(h.reported, ["config.option"]);
    }

    #[test]
    fn a_vms_configuration_reads_as_its_vmx_would() {
        let one = include_str!("../tests/fixtures/vsphere_vm_config.xml");
        let vms = parse_vsphere_vm_config(&format!("{one}\n{one}")).unwrap();
        assert_eq!(vms.len(), 2);
        let c = &vms[0].config;
        assert_eq!(c.display_name.as_deref(), Some("hpc-node07"));
        assert_eq!(c.hardware_version, Some(19));
        assert_eq!((c.mem_min_mb, c.mem_pin), (Some(4096), Some(true)));
        assert!(c.memsize_mb.is_some());
        assert_eq!(c.pvrdma_adapters.len(), 2);
        assert_eq!(c.pvrdma_adapters[0].mac_address.as_deref(), Some("00:50:56:aa:03:00"));
        assert_eq!(
            vms[0].device_protocols,
            [Some("rocev2".to_string()), Some("rocev1".to_string())]
        );
        assert_eq!(vms[0].power_state.as_deref(), Some("poweredOn"));
        assert!(parse_vsphere_vm_config("").unwrap().is_empty());
    }

    /// Bundles written before the answer was kept as vCenter wrote it (read into a tree and
    /// written back, NICs named where the API has keys) read as the answer itself does.
    #[test]
    fn older_bundles_read_as_the_answer_as_written_does() {
        let as_read = include_str!("../tests/fixtures/vsphere_host_config_as_read.xml");
        assert_eq!(
            parse_vsphere_host_config(SAMPLE).unwrap(),
            parse_vsphere_host_config(as_read).unwrap()
        );
        let before = include_str!("../tests/fixtures/vsphere_vm_config.xml");
        let as_read = include_str!("../tests/fixtures/vsphere_vm_config_as_read.xml");
        assert_eq!(
            parse_vsphere_vm_config(before).unwrap(),
            parse_vsphere_vm_config(as_read).unwrap()
        );
    }

    /// The API refers to a NIC by its key; the report names it as esxcli does, through the
    /// host's NICs (vSphere Web Services API reference: `HostRdmaDevicePnicBacking`,
    /// `HostProxySwitch`, `PhysicalNic`).
    #[test]
    fn nics_the_api_refers_to_by_key_are_named_as_esxcli_names_them() {
        let xml = |paired: &str, dvs: &str| {
            format!(
                r#"<objects><obj type="HostSystem">host-9</obj><propSet><name>config.network</name><val><pnic><key>key-vim.host.PhysicalNic-vmnic0</key><device>vmnic0</device></pnic><pnic><key>key-vim.host.PhysicalNic-vmnic2</key><device>vmnic2</device></pnic><rdmaDevice><device>vmrdma0</device><backing><pairedUplink>{paired}</pairedUplink></backing></rdmaDevice><proxySwitch><dvsUuid>50 2a</dvsUuid><dvsName>dvs-rdma</dvsName><pnic>{dvs}</pnic></proxySwitch></val></propSet></objects>"#
            )
        };
        let named = |paired: &str, dvs: &str| {
            let h = parse_vsphere_host_config(&xml(paired, dvs)).unwrap();
            (h.rdma[0].paired_uplink.clone().unwrap(), h.dvs[0].uplinks.clone())
        };
        let key = "key-vim.host.PhysicalNic-vmnic2";
        assert_eq!(named(key, key), ("vmnic2".to_string(), vec!["vmnic2".to_string()]));
        // A key no NIC of the host has: named as such, never passed for a NIC.
        let (paired, _) = named("key-vim.host.PhysicalNic-vmnic9", key);
        assert_eq!(paired, "vmnic9 (no physical NIC of the host has this key)");
        // Captures that hold names (the project's own simulator wrote them) keep them.
        assert_eq!(
            named("vmnic2", "vmnic2"),
            ("vmnic2".to_string(), vec!["vmnic2".to_string()])
        );
    }

    /// A standard switch lists its NICs and port groups by key, a port group its switch by
    /// key; a VMkernel interface names its port group. esxcli names them all, and puts the
    /// interface on its switch's portset (vSphere Web Services API reference:
    /// `HostVirtualSwitch`, `HostPortGroup`, `HostVirtualNic`).
    #[test]
    fn a_standard_switch_and_what_is_on_it_are_named_as_esxcli_names_them() {
        let xml = |switch_key: &str, uplink: &str| {
            format!(
                r#"<objects><obj type="HostSystem">host-9</obj><propSet><name>config.network</name><val><vswitch><name>vSwitch1</name><key>key-vim.host.VirtualSwitch-vSwitch1</key><mtu>9000</mtu><portgroup>key-vim.host.PortGroup-RDMA Mgmt</portgroup><portgroup>key-vim.host.PortGroup-Gone</portgroup><pnic>{uplink}</pnic></vswitch><portgroup><key>key-vim.host.PortGroup-RDMA Mgmt</key><vswitch>{switch_key}</vswitch><spec><name>RDMA Mgmt</name><vswitchName>vSwitch1</vswitchName></spec></portgroup><pnic><key>key-vim.host.PhysicalNic-vmnic3</key><device>vmnic3</device></pnic><vnic><device>vmk2</device><key>key-vim.host.VirtualNic-vmk2</key><portgroup>RDMA Mgmt</portgroup><spec><mtu>9000</mtu></spec></vnic></val></propSet></objects>"#
            )
        };
        let h = parse_vsphere_host_config(&xml(
            "key-vim.host.VirtualSwitch-vSwitch1",
            "key-vim.host.PhysicalNic-vmnic3",
        ))
        .unwrap();
        let s = &h.standard_switches[0];
        assert_eq!((s.name.as_str(), s.mtu), ("vSwitch1", Some(9000)));
        assert_eq!(s.uplinks, ["vmnic3"]);
        assert_eq!(
            s.portgroups,
            ["RDMA Mgmt", "Gone (no port group of the host has this key)"]
        );
        assert_eq!(h.vmknics[0].portset.as_deref(), Some("vSwitch1"));
        assert_eq!(h.vmknics[0].portgroup.as_deref(), Some("RDMA Mgmt"));
        // A switch key nothing stands behind is named as such.
        let h = parse_vsphere_host_config(&xml("key-vim.host.VirtualSwitch-vSwitch9", "vmnic3")).unwrap();
        assert_eq!(
            h.vmknics[0].portset.as_deref(),
            Some("vSwitch9 (no standard switch of the host has this key)")
        );
        assert_eq!(h.standard_switches[0].uplinks, ["vmnic3"]);
        let text = format!("{h:?}");
        assert!(!text.contains("key-vim."), "{text}");
    }

    #[test]
    fn broken_xml_is_an_error_with_its_spot() {
        let e = parse_vsphere_host_config("<objects>\n<propSet></objects>").unwrap_err();
        assert_eq!(e.command, HOST_CONFIG_ID);
        assert_eq!(e.line, 2);
        assert!(parse_vsphere_host_config("<other/>").is_err());
    }
}
