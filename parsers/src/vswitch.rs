use crate::ParseError;
use serde::Serialize;

/// One record of `esxcli network vswitch dvs vmware list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DvsSwitch {
    pub name: String,
    pub vds_id: Option<String>,
    pub mtu: Option<u32>,
    /// `Uplinks:` split on `,`, trimmed, empties dropped.
    pub uplinks: Vec<String>,
    /// The nested `DVPort:` entries.
    pub ports: Vec<DvPort>,
}

/// One nested `DVPort:` entry of a vDS record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DvPort {
    /// `None` when `Client:` is empty.
    pub client: Option<String>,
    pub portgroup_id: Option<String>,
    pub in_use: Option<bool>,
    pub port_id: Option<String>,
}

/// One record of `esxcli network vswitch standard list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StandardSwitch {
    pub name: String,
    pub mtu: Option<u32>,
    pub uplinks: Vec<String>,
    pub portgroups: Vec<String>,
}

pub fn parse_dvs_list(input: &str) -> Result<Vec<DvsSwitch>, ParseError> {
    let _ = input;
    Err(crate::error::pending(
        "esxcli_network_vswitch_dvs_vmware_list",
    ))
}

pub fn parse_standard_switch_list(input: &str) -> Result<Vec<StandardSwitch>, ParseError> {
    let _ = input;
    Err(crate::error::pending(
        "esxcli_network_vswitch_standard_list",
    ))
}
