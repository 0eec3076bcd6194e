//! `esxcli network firewall get` and `... ruleset list`: the `pvrdma` ruleset must be enabled
//! (it is disabled by default on ESXi 8.0) unless the firewall is off altogether.
//! Real samples (ESXi 5.x `get`; ESXi 8.0 U2b ruleset list, 4 columns; ESXi 6/7 have only
//! `Name` and `Enabled`):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//!    Default Action: DROP
//!    Enabled: true
//!    Loaded: true
//! "#;
//! let firewall = parse_firewall_get(output.trim_start_matches('\n'))?;
//! assert_eq!(firewall.enabled, Some(true));
//! # Ok::<(), ParseError>(())
//! ```
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! Name                         Enabled  Enable/Disable configurable  Allowed IP configurable
//! ---------------------------  -------  ---------------------------  -----------------------
//! sshServer                       true                         true                     true
//! pvrdma                         false                         true                     true
//! "#;
//! let rulesets = parse_firewall_ruleset_list(output.trim_start_matches('\n'))?;
//! let pvrdma = rulesets.iter().find(|r| r.name == "pvrdma").expect("a pvrdma row");
//! assert_eq!(pvrdma.enabled, Some(false));
//! # Ok::<(), ParseError>(())
//! ```
use crate::common::{bool_value, non_empty, run, structure, table, value, PResult};
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

fn status(input: &str) -> PResult<'_, FirewallStatus> {
    let (rest, fields) = structure(input)?;
    Ok((
        rest,
        FirewallStatus {
            default_action: value(&fields, "Default Action").and_then(non_empty),
            enabled: value(&fields, "Enabled").and_then(bool_value),
            loaded: value(&fields, "Loaded").and_then(bool_value),
        },
    ))
}

fn rulesets(input: &str) -> PResult<'_, Vec<FirewallRuleset>> {
    let (rest, t) = table(input)?;
    let name = t.require("Name", "a `Name` column")?;
    let enabled = t.require("Enabled", "an `Enabled` column")?;
    let configurable = t.column("Enable/Disable configurable");
    let allowed_ip = t.column("Allowed IP configurable");
    let mut out = Vec::with_capacity(t.rows().len());
    for r in t.rows() {
        out.push(FirewallRuleset {
            name: r.required(name, "a ruleset name")?,
            enabled: bool_value(r.cell(Some(enabled))),
            configurable: bool_value(r.cell(configurable)),
            allowed_ip_configurable: bool_value(r.cell(allowed_ip)),
        });
    }
    Ok((rest, out))
}

pub fn parse_firewall_get(input: &str) -> Result<FirewallStatus, ParseError> {
    run(crate::by_id::FIREWALL_GET.id, input, status)
}

pub fn parse_firewall_ruleset_list(input: &str) -> Result<Vec<FirewallRuleset>, ParseError> {
    run(crate::by_id::FIREWALL_RULESET_LIST.id, input, rulesets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_with_trailing_space_and_markdown_indent() {
        let input = "       Default Action: DROP\n       Enabled: true\n       Loaded: true \n";
        assert_eq!(
            parse_firewall_get(input).unwrap(),
            FirewallStatus {
                default_action: Some("DROP".into()),
                enabled: Some(true),
                loaded: Some(true),
            }
        );
    }

    #[test]
    fn esxi8_four_columns() {
        let input = "Name                         Enabled  Enable/Disable configurable  Allowed IP configurable\n\
---------------------------  -------  ---------------------------  -----------------------\n\
nfsClient                      false                        false                    false\n\
pvrdma                         false                         true                     true\n";
        assert_eq!(
            parse_firewall_ruleset_list(input).unwrap(),
            vec![
                FirewallRuleset {
                    name: "nfsClient".into(),
                    enabled: Some(false),
                    configurable: Some(false),
                    allowed_ip_configurable: Some(false),
                },
                FirewallRuleset {
                    name: "pvrdma".into(),
                    enabled: Some(false),
                    configurable: Some(true),
                    allowed_ip_configurable: Some(true),
                },
            ]
        );
    }

    #[test]
    fn esxi6_two_columns_right_aligned_with_trailing_space() {
        let input = "Name              Enabled\n----------------  -------\nremoteSerialPort    false \npvrdma               true\n";
        let r = parse_firewall_ruleset_list(input).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].enabled, Some(false));
        assert_eq!(
            r[1],
            FirewallRuleset {
                name: "pvrdma".into(),
                enabled: Some(true),
                configurable: None,
                allowed_ip_configurable: None,
            }
        );
    }

    #[test]
    fn unknown_namespace_error_is_rejected() {
        let e = parse_firewall_ruleset_list("Error: Unknown command or namespace network firewall ruleset list\n")
            .unwrap_err();
        assert_eq!(e.command, "esxcli_network_firewall_ruleset_list");
        assert_eq!(e.expected, "command output, not an esxcli `Error:` message");
        assert_eq!((e.line, e.column), (1, 1));
    }
}
