//! The second capture source: what vCenter's property collector returns for a host and
//! its VMs (vSphere Web Services API reference: `HostConfigInfo`,
//! `VirtualMachineConfigInfo`). It stands in for the `esxcli` commands whose meaning the
//! API carries too; the rest (the adapters' transport from vsish, flow control, the VMs'
//! ports) is observed only on the host itself, over SSH.
use pvrdma_parsers::vsphere::{HOST_CONFIG_ID, VM_CONFIG_ID};

/// The host's configuration, one `ObjectContent`.
pub const VSPHERE_HOST_CONFIG: &str = HOST_CONFIG_ID;
/// The configuration of the VMs registered on the host, one `ObjectContent` each.
pub const VSPHERE_VM_CONFIG: &str = VM_CONFIG_ID;

/// One API answer as messages and evidence name it.
pub struct ApiSource {
    pub id: &'static str,
    pub label: &'static str,
}

pub static API_SOURCES: &[ApiSource] = &[
    ApiSource {
        id: VSPHERE_HOST_CONFIG,
        label: "vSphere API: HostSystem",
    },
    ApiSource {
        id: VSPHERE_VM_CONFIG,
        label: "vSphere API: VirtualMachine",
    },
];

/// The API answer with this id.
pub fn api_source(id: &str) -> Option<&'static ApiSource> {
    API_SOURCES.iter().find(|s| s.id == id)
}

/// How a person reads an id: the command as typed on the host, or the API object read.
pub fn display_label(id: &str) -> &str {
    match (super::spec(id), api_source(id)) {
        (Some(spec), _) => spec.typed_label(),
        (None, Some(api)) => api.label,
        (None, None) => id,
    }
}

/// Where the API carries what an `esxcli` command prints: its catalogue id, the API
/// answer and the property. Evidence of a check judged from the API names the property.
pub static API_EQUIVALENTS: &[(&str, &str, &str)] = &[
    (super::SYSTEM_VERSION, VSPHERE_HOST_CONFIG, "config.product"),
    (
        super::RDMA_DEVICE_LIST,
        VSPHERE_HOST_CONFIG,
        "config.network.rdmaDevice",
    ),
    (
        super::RDMA_PROTOCOL_LIST,
        VSPHERE_HOST_CONFIG,
        "config.network.rdmaDevice.capability",
    ),
    (
        super::FIREWALL_GET,
        VSPHERE_HOST_CONFIG,
        "config.firewall.defaultPolicy",
    ),
    (
        super::FIREWALL_RULESET_LIST,
        VSPHERE_HOST_CONFIG,
        "config.firewall.ruleset",
    ),
    (
        super::PVRDMA_VMKNIC_OPTION,
        VSPHERE_HOST_CONFIG,
        "config.option[Net.PVRDMAVmknic]",
    ),
    (super::IP_INTERFACE_LIST, VSPHERE_HOST_CONFIG, "config.network.vnic"),
    (super::IPV4_GET, VSPHERE_HOST_CONFIG, "config.network.vnic.spec.ip"),
    (super::DVS_LIST, VSPHERE_HOST_CONFIG, "config.network.proxySwitch"),
    (
        super::STANDARD_SWITCH_LIST,
        VSPHERE_HOST_CONFIG,
        "config.network.vswitch",
    ),
    // A vDS sets the MTU of its uplinks: the API shows the switch's, not the NIC's own.
    (super::NIC_LIST, VSPHERE_HOST_CONFIG, "config.network.proxySwitch.mtu"),
    (super::VMX_PVRDMA_LINES, VSPHERE_VM_CONFIG, "config"),
    // Across hosts: the switch and RoCE version each adapter is configured with.
    (
        super::VM_PORT_LIST,
        VSPHERE_VM_CONFIG,
        "config.hardware.device[VirtualVmxnet3Vrdma].backing.port.switchUuid",
    ),
    (
        super::PVRDMA_PROPERTIES,
        VSPHERE_VM_CONFIG,
        "config.hardware.device[VirtualVmxnet3Vrdma].deviceProtocol",
    ),
];

/// The API answer and property that stand for catalogue command `id`, if any.
pub fn api_equivalent(id: &str) -> Option<(&'static str, &'static str)> {
    API_EQUIVALENTS
        .iter()
        .find(|(command, ..)| *command == id)
        .map(|(_, api, property)| (*api, *property))
}
