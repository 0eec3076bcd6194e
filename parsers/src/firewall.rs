use crate::ParseError;
use serde::Serialize;

/// `esxcli network firewall get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FirewallStatus {
    pub default_action: Option<String>,
    pub enabled: Option<bool>,
    pub loaded: Option<bool>,
}

/// One row of `esxcli network firewall ruleset list` (2 columns on ESXi 6/7, 4 on 8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FirewallRuleset {
    pub name: String,
    pub enabled: Option<bool>,
    /// `Enable/Disable configurable` (ESXi 8 only).
    pub configurable: Option<bool>,
    /// `Allowed IP configurable` (ESXi 8 only).
    pub allowed_ip_configurable: Option<bool>,
}

pub fn parse_firewall_get(input: &str) -> Result<FirewallStatus, ParseError> {
    let _ = input;
    Err(crate::error::pending("esxcli_network_firewall_get"))
}

pub fn parse_firewall_ruleset_list(input: &str) -> Result<Vec<FirewallRuleset>, ParseError> {
    let _ = input;
    Err(crate::error::pending(
        "esxcli_network_firewall_ruleset_list",
    ))
}
