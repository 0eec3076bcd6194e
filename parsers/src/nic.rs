use crate::ParseError;
use serde::Serialize;

/// One row of `esxcli network nic list` (ESXi 5.5 has `Link` instead of
/// `Admin Status`/`Link Status`; both forms fill `link_status`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Nic {
    pub name: String,
    pub pci_device: String,
    pub driver: String,
    pub admin_status: Option<String>,
    pub link_status: Option<String>,
    /// Mbit/s; `None` when not a number.
    pub speed: Option<u64>,
    pub duplex: Option<String>,
    pub mac_address: Option<String>,
    pub mtu: Option<u32>,
    pub description: String,
}

pub fn parse_nic_list(input: &str) -> Result<Vec<Nic>, ParseError> {
    let _ = input;
    Err(crate::error::pending("esxcli_network_nic_list"))
}
