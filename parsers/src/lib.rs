//! Parsers for the output of the read-only ESXi commands pvrdma-doctor runs.
//!
//! Pipeline stage: *parse*. Every function here takes the text a command printed and
//! returns typed facts or a [`ParseError`] that names the command, line, column and what
//! was expected. Nothing here does I/O, so a live host, a support bundle and a test
//! sample all go through the same code. No function panics, whatever the input.
#![forbid(unsafe_code)]

pub mod advanced;
pub mod by_id;
mod common;
pub mod error;
pub mod firewall;
pub mod flow_control;
pub mod ip_interface;
pub mod nic;
pub mod nic_stats;
pub mod rdma;
pub mod version;
pub mod vm;
pub mod vmkping;
pub mod vmx;
pub mod vsish;
pub mod vsphere;
pub mod vswitch;
pub mod xml;

pub use advanced::{parse_advanced_option, AdvancedOption};
pub use by_id::{parse_by_id, Parser};
pub use common::{table_layout, TableLayout};
pub use error::ParseError;

/// `<== KEY exit N ==>`, the line each iteration of the catalogue's batched loops ends with:
/// the key and the iteration's exit status.
pub fn batch_end_marker(line: &str) -> Option<(&str, u32)> {
    common::end_marker(line)
}
pub use firewall::{parse_firewall_get, parse_firewall_ruleset_list, FirewallRuleset, FirewallStatus};
pub use flow_control::{parse_nic_dcb_status_batch, parse_nic_pause_params_list, DcbState, DcbStatus, NicPause};
pub use ip_interface::{parse_ip_interface_ipv4_get, parse_ip_interface_list, Ipv4Interface, VmkInterface};
pub use nic::{parse_nic_list, Nic};
pub use nic_stats::{NicCounters, NicStats, NicStatsSection};
pub use rdma::{
    parse_rdma_device_list, parse_rdma_device_protocol_list, parse_rdma_device_vmknic_list, PortState, RdmaDevice,
    RdmaProtocols, RdmaVmknic,
};
pub use version::{parse_system_version, SystemVersion};
pub use vm::{
    parse_vm_port_list, parse_vm_port_list_batch, parse_vm_process_list, parse_vm_process_records, VmPort, VmPortView,
    VmPorts, VmProcess, VmProcessList,
};
pub use vmkping::{parse_vmkping, parse_vmkping_probe, PingStatistics, RoundTrip, Vmkping, VmkpingSection};
pub use vmx::{parse_vmx, parse_vmx_pvrdma_lines, VmxAdapter, VmxConfig, VmxSection};
pub use vsish::{
    parse_pvrdma_device_ls, parse_pvrdma_properties, parse_pvrdma_properties_batch, PropertyMembers, PvrdmaDeviceId,
    PvrdmaProperties, PvrdmaPropertiesSection,
};
pub use vsphere::{parse_vsphere_host_config, parse_vsphere_vm_config, HostConfigRows, VmConfigRows};
pub use vswitch::{parse_dvs_list, parse_standard_switch_list, DvPort, DvsSwitch, StandardSwitch};
