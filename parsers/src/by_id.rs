//! The one table from catalogue id to parser: each id is written here once, next to the
//! parser of its output and the parser family (fuzz target) it belongs to. The application's catalogue takes its ids from it, its facts
//! parse with these entries, and the sample tests dispatch through [`parse_by_id`].
use crate::*;
/// The bound of [`Visitor::visit`], for visitors in crates without their own serde.
pub use serde::Serialize;
use std::fmt::Debug;

/// A catalogue id and the parser of that command's output.
pub struct Parser<T> {
    /// The catalogue id (also the file stem of its output in captures and bundles).
    pub id: &'static str,
    /// Parses the command's output.
    pub parse: fn(&str) -> Result<T, ParseError>,
}

macro_rules! table {
    ($($name:ident: $t:ty = $id:literal => $($parse:ident)::+ in $family:literal;)*) => {
        $(
            #[doc = concat!("`", $id, "` → [`", stringify!($($parse)::+), "`].")]
            pub const $name: Parser<$t> = Parser { id: $id, parse: $($parse)::+ };
        )*

        /// Every catalogue id with a parser, in table order.
        pub const IDS: &[&str] = &[$($id),*];

        /// Each id's parser family: the fuzz target its outputs are fuzzed in (the
        /// target runs every parser of its family; `fuzz/seed.py` fills its corpus with the
        /// samples of these ids).
        pub const FAMILIES: &[(&str, &str)] = &[$(($id, $family)),*];

        /// Parses `text` with the parser of catalogue id `id` and hands the typed result to
        /// `visitor`; `None` for an id without a parser.
        pub fn parse_by_id<V: Visitor>(id: &str, text: &str, visitor: V) -> Option<V::Output> {
            $(
                if id == $name.id {
                    return Some(visitor.visit(($name.parse)(text)));
                }
            )*
            None
        }
    };
}

/// Receives a parse result of whichever type the id's parser returns.
pub trait Visitor {
    type Output;
    fn visit<T: Serialize + Debug>(self, result: Result<T, ParseError>) -> Self::Output;
}

table! {
    SYSTEM_VERSION: SystemVersion = "esxcli_system_version_get" => parse_system_version in "version";
    RDMA_DEVICE_LIST: Vec<RdmaDevice> = "esxcli_rdma_device_list" => parse_rdma_device_list in "rdma";
    RDMA_PROTOCOL_LIST: Vec<RdmaProtocols> = "esxcli_rdma_device_protocol_list" => parse_rdma_device_protocol_list in "rdma";
    RDMA_VMKNIC_LIST: Vec<RdmaVmknic> = "esxcli_rdma_device_vmknic_list" => parse_rdma_device_vmknic_list in "rdma";
    NIC_LIST: Vec<Nic> = "esxcli_network_nic_list" => parse_nic_list in "nic";
    DVS_LIST: Vec<DvsSwitch> = "esxcli_network_vswitch_dvs_vmware_list" => parse_dvs_list in "vswitch";
    STANDARD_SWITCH_LIST: Vec<StandardSwitch> = "esxcli_network_vswitch_standard_list" => parse_standard_switch_list in "vswitch";
    IP_INTERFACE_LIST: Vec<VmkInterface> = "esxcli_network_ip_interface_list" => parse_ip_interface_list in "ip_interface";
    IPV4_GET: Vec<Ipv4Interface> = "esxcli_network_ip_interface_ipv4_get" => parse_ip_interface_ipv4_get in "ip_interface";
    PVRDMA_VMKNIC_OPTION: AdvancedOption = "esxcli_system_settings_advanced_list_pvrdmavmknic" => parse_advanced_option in "advanced";
    FIREWALL_GET: FirewallStatus = "esxcli_network_firewall_get" => parse_firewall_get in "firewall";
    FIREWALL_RULESET_LIST: Vec<FirewallRuleset> = "esxcli_network_firewall_ruleset_list" => parse_firewall_ruleset_list in "firewall";
    VM_PROCESS_LIST: Vec<VmProcess> = "esxcli_vm_process_list" => parse_vm_process_list in "vm";
    VM_PORT_LIST: Vec<VmPorts> = "esxcli_network_vm_port_list" => parse_vm_port_list_batch in "vm";
    PVRDMA_DEVICES_LS: Vec<PvrdmaDeviceId> = "vsish_pvrdma_devices_ls" => parse_pvrdma_device_ls in "vsish";
    PVRDMA_PROPERTIES: Vec<PvrdmaPropertiesSection> = "vsish_pvrdma_properties" => parse_pvrdma_properties_batch in "vsish";
    NIC_PAUSE_PARAMS: Vec<NicPause> = "esxcli_network_nic_pauseparams_list" => parse_nic_pause_params_list in "nic";
    NIC_DCB_STATUS: Vec<DcbStatus> = "esxcli_network_nic_dcb_status_get" => parse_nic_dcb_status_batch in "nic";
    NIC_STATS: Vec<NicStatsSection> = "esxcli_network_nic_stats_get" => nic_stats::parse_nic_stats_batch in "nic";
    VMX_PVRDMA_LINES: Vec<VmxSection> = "vmx_pvrdma_lines" => parse_vmx_pvrdma_lines in "vmx";
}

/// `esxcli_vm_process_list` read record by record, as the diagnosis reads it (a broken
/// record costs only itself); [`VM_PROCESS_LIST`] is the all-or-nothing form.
pub const VM_PROCESS_RECORDS: Parser<VmProcessList> = Parser {
    id: VM_PROCESS_LIST.id,
    parse: parse_vm_process_records,
};
