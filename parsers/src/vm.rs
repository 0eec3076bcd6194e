use crate::ParseError;
use serde::Serialize;

/// One record of `esxcli vm process list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmProcess {
    /// `Display Name:` (falls back to the record's name line).
    pub display_name: String,
    pub world_id: u64,
    pub process_id: Option<u64>,
    pub vmx_cartel_id: Option<u64>,
    pub uuid: Option<String>,
    pub config_file: Option<String>,
}

/// One record of `esxcli network vm port list -w <World ID>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmPort {
    pub port_id: Option<String>,
    pub vswitch: Option<String>,
    pub portgroup: Option<String>,
    /// `None` when empty (standard vSwitch port).
    pub dvport_id: Option<String>,
    pub mac_address: Option<String>,
    pub ip_address: Option<String>,
    /// `None` when empty or `void`.
    pub team_uplink: Option<String>,
    pub uplink_port_id: Option<String>,
}

/// One section of the batched port query (one `==> world <id> <==` block).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmPorts {
    pub world_id: u64,
    pub ports: Vec<VmPort>,
    /// An `Error: ...` line esxcli printed for this world instead of ports.
    pub error: Option<String>,
}

pub fn parse_vm_process_list(input: &str) -> Result<Vec<VmProcess>, ParseError> {
    let _ = input;
    Err(crate::error::pending("esxcli_vm_process_list"))
}

pub fn parse_vm_port_list(input: &str) -> Result<Vec<VmPort>, ParseError> {
    let _ = input;
    Err(crate::error::pending("esxcli_network_vm_port_list"))
}

pub fn parse_vm_port_list_batch(input: &str) -> Result<Vec<VmPorts>, ParseError> {
    let _ = input;
    Err(crate::error::pending("esxcli_network_vm_port_list"))
}
