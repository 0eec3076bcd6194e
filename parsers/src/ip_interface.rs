//! `esxcli network ip interface list` and `... ipv4 get`: the vmknic tagged for PVRDMA must
//! exist, be enabled and have an IPv4 address; its MTU should match the vDS. Real samples
//! (vSAN design guide, vmk on a vDS; Equinix Metal):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! vmk1
//!    Name: vmk1
//!    MAC Address: 00:50:56:69:96:f0
//!    Enabled: true
//!    Portset: DvsPortset-0
//!    Portgroup: N/A
//!    Netstack Instance: defaultTcpipStack
//!    VDS Name: vDS
//!    VDS Port: 16
//!    MTU: 9000
//! "#;
//! let vmknics = parse_ip_interface_list(output.trim_start_matches('\n'))?;
//! assert_eq!(vmknics[0].name, "vmk1");
//! assert_eq!(vmknics[0].enabled, Some(true));
//! assert_eq!(vmknics[0].vds_name.as_deref(), Some("vDS"));
//! assert_eq!(vmknics[0].mtu, Some(9000));
//! # Ok::<(), ParseError>(())
//! ```
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! Name  IPv4 Address    IPv4 Netmask     IPv4 Broadcast  Address Type  Gateway         DHCP DNS
//! ----  --------------  ---------------  --------------  ------------  --------------  --------
//! vmk1  10.88.154.2     255.255.255.248  10.88.154.7     STATIC        0.0.0.0            false
//! "#;
//! let ipv4 = parse_ip_interface_ipv4_get(output.trim_start_matches('\n'))?;
//! assert_eq!(ipv4[0].address.as_deref(), Some("10.88.154.2"));
//! assert_eq!(ipv4[0].netmask.as_deref(), Some("255.255.255.248"));
//! # Ok::<(), ParseError>(())
//! ```
use crate::common::{bool_value, check_record_names, non_empty, non_na, records, run, table, value, PResult};
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

fn interfaces(input: &str) -> PResult<'_, Vec<VmkInterface>> {
    let (rest, recs) = records(input)?;
    check_record_names(&recs, "a vmknic record name line matching its `Name:` field")?;
    let out = recs
        .iter()
        .map(|r| {
            let f = &r.fields;
            let get = |k: &str| value(f, k).and_then(non_empty);
            VmkInterface {
                name: get("Name").unwrap_or_else(|| r.name.to_string()),
                mac_address: get("MAC Address"),
                enabled: value(f, "Enabled").and_then(bool_value),
                portset: get("Portset"),
                portgroup: value(f, "Portgroup").and_then(non_na),
                netstack: get("Netstack Instance"),
                vds_name: value(f, "VDS Name").and_then(non_na),
                vds_port: value(f, "VDS Port").and_then(non_na),
                mtu: value(f, "MTU").and_then(|v| v.trim().parse().ok()),
            }
        })
        .collect();
    Ok((rest, out))
}

fn ipv4(input: &str) -> PResult<'_, Vec<Ipv4Interface>> {
    let (rest, t) = table(input)?;
    let name = t.require("Name", "a `Name` column")?;
    let address = t.require("IPv4 Address", "an `IPv4 Address` column")?;
    let (netmask, broadcast) = (t.column("IPv4 Netmask"), t.column("IPv4 Broadcast"));
    let (kind, gateway, dhcp) = (t.column("Address Type"), t.column("Gateway"), t.column("DHCP DNS"));
    let mut out = Vec::with_capacity(t.rows().len());
    for r in t.rows() {
        out.push(Ipv4Interface {
            name: r.required(name, "a vmknic name")?,
            address: non_empty(r.cell(Some(address))).filter(|a| a != "0.0.0.0"),
            netmask: non_empty(r.cell(netmask)),
            broadcast: non_empty(r.cell(broadcast)),
            address_type: non_empty(r.cell(kind)),
            gateway: non_empty(r.cell(gateway)),
            dhcp_dns: bool_value(r.cell(dhcp)),
        });
    }
    Ok((rest, out))
}

pub fn parse_ip_interface_list(input: &str) -> Result<Vec<VmkInterface>, ParseError> {
    run(crate::by_id::IP_INTERFACE_LIST.id, input, interfaces)
}

pub fn parse_ip_interface_ipv4_get(input: &str) -> Result<Vec<Ipv4Interface>, ParseError> {
    run(crate::by_id::IPV4_GET.id, input, ipv4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_whose_name_line_disagrees_or_reads_as_a_field_is_an_error() {
        assert!(parse_ip_interface_list("vmk0\n   Name: vmk0\n   Enabled: true\n").is_ok());
        assert!(parse_ip_interface_list("vmk0\n   Name: vmk1\n   Enabled: true\n").is_err());
        // Flattened, and a record lost its name line: "Name: vmk1" would be a vmknic name.
        assert!(parse_ip_interface_list("vmk0\nName: vmk0\n\nName: vmk1\nEnabled: true\n").is_err());
    }

    #[test]
    fn vds_and_standard_vmknics_without_blank_separator() {
        let input = "vmk0\n   Name: vmk0\n   MAC Address: 00:50:56:9f:78:3b\n   Enabled: true\n   Portset: vSwitch0\n   Portgroup: Management Network\n   Netstack Instance: defaultTcpipStack\n   VDS Name: N/A\n   VDS Port: N/A\n   MTU: 9000\n   URPF: 0\n\
vmk1\n   Name: vmk1\n   Enabled: false\n   Portset: DvsPortset-0\n   Portgroup: N/A\n   VDS Name: vDS\n   VDS Port: 16\n   MTU: 9000\n";
        assert_eq!(
            parse_ip_interface_list(input).unwrap(),
            vec![
                VmkInterface {
                    name: "vmk0".into(),
                    mac_address: Some("00:50:56:9f:78:3b".into()),
                    enabled: Some(true),
                    portset: Some("vSwitch0".into()),
                    portgroup: Some("Management Network".into()),
                    netstack: Some("defaultTcpipStack".into()),
                    vds_name: None,
                    vds_port: None,
                    mtu: Some(9000),
                },
                VmkInterface {
                    name: "vmk1".into(),
                    mac_address: None,
                    enabled: Some(false),
                    portset: Some("DvsPortset-0".into()),
                    portgroup: None,
                    netstack: None,
                    vds_name: Some("vDS".into()),
                    vds_port: Some("16".into()),
                    mtu: Some(9000),
                },
            ]
        );
    }

    #[test]
    fn a_line_without_key_is_an_error_with_position() {
        let e = parse_ip_interface_list("vmk0\n   Name: vmk0\n   <<truncated>>\n").unwrap_err();
        assert_eq!(e.expected, "a `Key: value` line");
        assert_eq!((e.line, e.column), (3, 4));
    }

    #[test]
    fn ipv4_headers_with_spaces_and_unset_address() {
        let input = [
            "    Name   IPv4 Address  IPv4 Netmask   IPv4 Broadcast   Address Type  Gateway  DHCP DNS",
            "    -----  ------------  -------------  ---------------  ------------  -------  --------",
            "    vmk0   192.168.1.83  255.255.255.0  192.168.1.255    STATIC        0.0.0.0     false",
            "    vmk10  0.0.0.0       0.0.0.0        0.0.0.0          NONE          0.0.0.0      true",
        ]
        .join("\n");
        let input = input.as_str();
        let v = parse_ip_interface_ipv4_get(input).unwrap();
        assert_eq!(
            v[0],
            Ipv4Interface {
                name: "vmk0".into(),
                address: Some("192.168.1.83".into()),
                netmask: Some("255.255.255.0".into()),
                broadcast: Some("192.168.1.255".into()),
                address_type: Some("STATIC".into()),
                gateway: Some("0.0.0.0".into()),
                dhcp_dns: Some(false),
            }
        );
        assert_eq!(v[1].address, None);
        assert_eq!(v[1].dhcp_dns, Some(true));
    }
}
