//! `esxcli network vswitch dvs vmware list` and `... standard list`: the RDMA uplink must be
//! the one and only uplink of the vDS the PVRDMA ports use, and a vDS MTU to compare.
//! Real sample (ESXi 8.x; trailing spaces on empty values, a whitespace-only line between
//! `DVPort` entries):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! VDS-Prod
//!    Name: VDS-Prod
//!    VDS ID: 50 33 8c 87 5f 05 cd 73-bc 4f 7c 4f 55 23 fc f8
//!    MTU: 1500
//!    Uplinks:
//!    DVPort:
//!          Client:
//!          DVPortgroup ID: dvportgroup-4024
//!          In Use: false
//!          Port ID: 0
//!       
//!          Client:
//! "#;
//! let switches = parse_dvs_list(output.trim_start_matches('\n'))?;
//! assert_eq!(switches[0].name, "VDS-Prod");
//! assert_eq!(switches[0].mtu, Some(1500));
//! assert!(switches[0].uplinks.is_empty());
//! # Ok::<(), ParseError>(())
//! ```
use crate::common::{bool_value, check_record_names, fail, find, list_value, non_empty, records, run, value, PResult};
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

/// Keys of a `DVPort:` entry: at the level of the switch's own fields they mean the
/// nesting was lost (a copy whose indentation was flattened), and which port a `Client:`
/// belongs to can no longer be told.
const PORT_KEYS: [&str; 4] = ["Client", "DVPortgroup ID", "In Use", "Port ID"];

fn dvs(input: &str) -> PResult<'_, Vec<DvsSwitch>> {
    let (rest, recs) = records(input)?;
    check_record_names(&recs, "a vDS record name line matching its `Name:` field")?;
    for r in &recs {
        if let Some(f) = r
            .fields
            .iter()
            .find(|f| PORT_KEYS.iter().any(|k| f.key.eq_ignore_ascii_case(k)))
        {
            return Err(fail(f.line, "`DVPort:` entries indented under `DVPort:`"));
        }
    }
    let out = recs
        .iter()
        .map(|r| {
            let f = &r.fields;
            let ports = find(f, "DVPort")
                .map(|p| {
                    p.children
                        .iter()
                        .map(|e| DvPort {
                            client: value(e, "Client").and_then(non_empty),
                            portgroup_id: value(e, "DVPortgroup ID").and_then(non_empty),
                            in_use: value(e, "In Use").and_then(bool_value),
                            port_id: value(e, "Port ID").and_then(non_empty),
                        })
                        .collect()
                })
                .unwrap_or_default();
            DvsSwitch {
                name: value(f, "Name")
                    .and_then(non_empty)
                    .unwrap_or_else(|| r.name.to_string()),
                vds_id: value(f, "VDS ID").and_then(non_empty),
                mtu: value(f, "MTU").and_then(|v| v.trim().parse().ok()),
                uplinks: value(f, "Uplinks").map(list_value).unwrap_or_default(),
                ports,
            }
        })
        .collect();
    Ok((rest, out))
}

fn standard(input: &str) -> PResult<'_, Vec<StandardSwitch>> {
    let (rest, recs) = records(input)?;
    check_record_names(&recs, "a vSwitch record name line matching its `Name:` field")?;
    let out = recs
        .iter()
        .map(|r| {
            let f = &r.fields;
            StandardSwitch {
                name: value(f, "Name")
                    .and_then(non_empty)
                    .unwrap_or_else(|| r.name.to_string()),
                mtu: value(f, "MTU").and_then(|v| v.trim().parse().ok()),
                uplinks: value(f, "Uplinks").map(list_value).unwrap_or_default(),
                portgroups: value(f, "Portgroups").map(list_value).unwrap_or_default(),
            }
        })
        .collect();
    Ok((rest, out))
}

pub fn parse_dvs_list(input: &str) -> Result<Vec<DvsSwitch>, ParseError> {
    run(crate::by_id::DVS_LIST.id, input, dvs)
}

pub fn parse_standard_switch_list(input: &str) -> Result<Vec<StandardSwitch>, ParseError> {
    run(crate::by_id::STANDARD_SWITCH_LIST.id, input, standard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esxi8_vds_with_empty_uplinks_and_nested_ports() {
        let input = "VDS-Prod\n   Name: VDS-Prod\n   VDS ID: 50 33 8c 87 5f 05 cd 73-bc 4f 7c 4f 55 23 fc f8\n   Class: cswitch\n   MTU: 1500\n   Uplinks: \n   VMware Branded: true\n   DVPort: \n         Client: \n         DVPortgroup ID: dvportgroup-4024\n         In Use: false\n         Port ID: 0\n      \n         Client: vmnic0\n         DVPortgroup ID: dvportgroup-4024\n         In Use: true\n         Port ID: 1\n\
TEST\n   Name: TEST\n   MTU: 9000\n   Uplinks: vmnic3, vmnic2\n";
        assert_eq!(
            parse_dvs_list(input).unwrap(),
            vec![
                DvsSwitch {
                    name: "VDS-Prod".into(),
                    vds_id: Some("50 33 8c 87 5f 05 cd 73-bc 4f 7c 4f 55 23 fc f8".into()),
                    mtu: Some(1500),
                    uplinks: vec![],
                    ports: vec![
                        DvPort {
                            client: None,
                            portgroup_id: Some("dvportgroup-4024".into()),
                            in_use: Some(false),
                            port_id: Some("0".into()),
                        },
                        DvPort {
                            client: Some("vmnic0".into()),
                            portgroup_id: Some("dvportgroup-4024".into()),
                            in_use: Some(true),
                            port_id: Some("1".into()),
                        },
                    ],
                },
                DvsSwitch {
                    name: "TEST".into(),
                    vds_id: None,
                    mtu: Some(9000),
                    uplinks: vec!["vmnic3".into(), "vmnic2".into()],
                    ports: vec![],
                },
            ]
        );
    }

    #[test]
    fn standard_switch_portgroups_with_spaces() {
        let input = "vSwitch0\n   Name: vSwitch0\n   MTU: 1500\n   Beacon Required By: \n   Uplinks: vmnic0\n   Portgroups: VM_VLAN1, VM Network, Management Network\n\nstorage\n   Name: storage\n   Uplinks: \n";
        assert_eq!(
            parse_standard_switch_list(input).unwrap(),
            vec![
                StandardSwitch {
                    name: "vSwitch0".into(),
                    mtu: Some(1500),
                    uplinks: vec!["vmnic0".into()],
                    portgroups: vec!["VM_VLAN1".into(), "VM Network".into(), "Management Network".into()],
                },
                StandardSwitch {
                    name: "storage".into(),
                    mtu: None,
                    uplinks: vec![],
                    portgroups: vec![],
                },
            ]
        );
    }

    const NESTED: &str = "DSwitch-RDMA\n   Name: DSwitch-RDMA\n   MTU: 9000\n   Uplinks: vmnic2\n   DVPort: \n         Client: vmnic2\n         DVPortgroup ID: dvportgroup-11\n\n         In Use: true\n         Port ID: 0\n      \n         Client: hpc-node01.eth1\n         DVPortgroup ID: dvportgroup-12\n         In Use: true\n         Port ID: 24\n";

    #[test]
    fn a_blank_line_inside_a_port_entry_keeps_the_entry_whole() {
        let s = parse_dvs_list(NESTED).unwrap();
        let ports = &s[0].ports;
        assert_eq!(ports.len(), 2, "{ports:?}");
        assert_eq!(ports[0].client.as_deref(), Some("vmnic2"));
        assert_eq!(ports[0].port_id.as_deref(), Some("0"));
        assert_eq!(ports[1].client.as_deref(), Some("hpc-node01.eth1"));
        assert_eq!(ports[1].port_id.as_deref(), Some("24"));
    }

    #[test]
    fn a_flattened_copy_is_an_error_not_switches_named_client() {
        let flat: String = NESTED.lines().map(|l| format!("{}\n", l.trim_start())).collect();
        let e = parse_dvs_list(&flat).unwrap_err();
        assert!(e.expected.contains("DVPort") || e.expected.contains("name line"), "{e}");
        // Only the nested entries flattened: still ambiguous.
        let half = NESTED.replace("         ", "   ");
        assert!(parse_dvs_list(&half).is_err());
    }

    #[test]
    fn no_switch_is_an_empty_list() {
        assert_eq!(parse_dvs_list("").unwrap(), vec![]);
    }
}
