use crate::ParseError;
use serde::Serialize;

/// One record of `esxcli network ip interface list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmkInterface {
    pub name: String,
    pub mac_address: Option<String>,
    pub enabled: Option<bool>,
    pub portset: Option<String>,
    /// `None` for `N/A`.
    pub portgroup: Option<String>,
    pub netstack: Option<String>,
    /// `None` for `N/A`.
    pub vds_name: Option<String>,
    pub vds_port: Option<String>,
    pub mtu: Option<u32>,
}

/// One row of `esxcli network ip interface ipv4 get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ipv4Interface {
    pub name: String,
    /// `None` when empty or `0.0.0.0`.
    pub address: Option<String>,
    pub netmask: Option<String>,
    pub broadcast: Option<String>,
    pub address_type: Option<String>,
    pub gateway: Option<String>,
    pub dhcp_dns: Option<bool>,
}

pub fn parse_ip_interface_list(input: &str) -> Result<Vec<VmkInterface>, ParseError> {
    let _ = input;
    Err(crate::error::pending("esxcli_network_ip_interface_list"))
}

pub fn parse_ip_interface_ipv4_get(input: &str) -> Result<Vec<Ipv4Interface>, ParseError> {
    let _ = input;
    Err(crate::error::pending(
        "esxcli_network_ip_interface_ipv4_get",
    ))
}
