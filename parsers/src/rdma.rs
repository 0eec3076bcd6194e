use crate::ParseError;
use serde::Serialize;

/// Port state of an RDMA device (`State` column), from VMKAPI's `vmk_RDMAPortState`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PortState {
    Active,
    /// Also `ACTIVE_DEFER`.
    ActiveDefer,
    Down,
    Init,
    Armed,
    Nop,
    /// Anything else, kept verbatim so a new ESXi build degrades to "unknown state".
    Other(String),
}

/// One row of `esxcli rdma device list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RdmaDevice {
    pub name: String,
    pub driver: String,
    pub state: PortState,
    /// RDMA MTU (256..4096); not the Ethernet MTU.
    pub mtu: Option<u32>,
    /// Verbatim, e.g. `100 Gbps` or `0`.
    pub speed: String,
    /// `None` when the cell is empty.
    pub paired_uplink: Option<String>,
    pub description: String,
}

/// One row of `esxcli rdma device protocol list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RdmaProtocols {
    pub device: String,
    pub roce_v1: Option<bool>,
    pub roce_v2: Option<bool>,
    pub iwarp: Option<bool>,
}

/// One row of `esxcli rdma device vmknic list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RdmaVmknic {
    pub device: String,
    pub vmknic: Option<String>,
    pub netstack: Option<String>,
}

pub fn parse_rdma_device_list(input: &str) -> Result<Vec<RdmaDevice>, ParseError> {
    let _ = input;
    Err(crate::error::pending("esxcli_rdma_device_list"))
}

pub fn parse_rdma_device_protocol_list(input: &str) -> Result<Vec<RdmaProtocols>, ParseError> {
    let _ = input;
    Err(crate::error::pending("esxcli_rdma_device_protocol_list"))
}

pub fn parse_rdma_device_vmknic_list(input: &str) -> Result<Vec<RdmaVmknic>, ParseError> {
    let _ = input;
    Err(crate::error::pending("esxcli_rdma_device_vmknic_list"))
}
