//! `esxcli rdma device list`, `... protocol list` and `... vmknic list`: is there a physical
//! RDMA device, is it Active, which uplink is it paired with, which RoCE versions does it
//! speak. Real sample (Cisco UCS VIC guide, ESXi 7/8; its column alignment is damaged,
//! which the dash-run slicing copes with):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! Name    Driver State  MTU  Speed   Paired Uplink Description
//! -----   ------ -----  ---  -----   ------------- -----
//! vmrdma0 nenic  Active 4096 50 Gbps vmnic1        Cisco UCS VIC 15XXX (A0)
//! "#;
//! let devices = parse_rdma_device_list(output.trim_start_matches('\n'))?;
//! assert_eq!(devices[0].name, "vmrdma0");
//! assert!(devices[0].state.is_active());
//! assert_eq!(devices[0].paired_uplink.as_deref(), Some("vmnic1"));
//! # Ok::<(), ParseError>(())
//! ```
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! Device  RoCE v1 RoCE v2 iWARP
//! -----   ------- ------- -----
//! vmrdma0 false   true    false
//! "#;
//! let protocols = parse_rdma_device_protocol_list(output.trim_start_matches('\n'))?;
//! assert_eq!((protocols[0].roce_v1, protocols[0].roce_v2), (Some(false), Some(true)));
//! # Ok::<(), ParseError>(())
//! ```
use crate::common::{bool_value, non_empty, run, table, PResult};
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

impl PortState {
    /// Whether the port carries traffic: `Active`, deferred or not.
    pub fn is_active(&self) -> bool {
        matches!(self, PortState::Active | PortState::ActiveDefer)
    }
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

impl PortState {
    /// Maps the `State` cell; unknown spellings are kept, never an error.
    pub fn from_cell(cell: &str) -> PortState {
        let key: String = cell
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        match key.as_str() {
            "active" => PortState::Active,
            "activedefer" => PortState::ActiveDefer,
            "down" => PortState::Down,
            "init" => PortState::Init,
            "armed" => PortState::Armed,
            "nop" => PortState::Nop,
            _ => PortState::Other(cell.trim().to_string()),
        }
    }
}

fn device_list(input: &str) -> PResult<'_, Vec<RdmaDevice>> {
    let (rest, t) = table(input)?;
    let name = t.require("Name", "a `Name` column")?;
    let driver = t.require("Driver", "a `Driver` column")?;
    let state = t.require("State", "a `State` column")?;
    let mtu = t.column("MTU");
    let speed = t.column("Speed");
    let uplink = t.column("Paired Uplink");
    let description = t.column("Description");
    let mut out = Vec::with_capacity(t.rows().len());
    for r in t.rows() {
        out.push(RdmaDevice {
            name: r.required(name, "a device name")?,
            driver: r.cell(Some(driver)).to_string(),
            state: PortState::from_cell(&r.required(state, "a device state")?),
            mtu: r.cell(mtu).parse().ok(),
            speed: r.cell(speed).to_string(),
            paired_uplink: non_empty(r.cell(uplink)),
            description: r.cell(description).to_string(),
        });
    }
    Ok((rest, out))
}

fn protocol_list(input: &str) -> PResult<'_, Vec<RdmaProtocols>> {
    let (rest, t) = table(input)?;
    let device = t.require("Device", "a `Device` column")?;
    let (v1, v2, iwarp) = (t.column("RoCE v1"), t.column("RoCE v2"), t.column("iWARP"));
    let mut out = Vec::with_capacity(t.rows().len());
    for r in t.rows() {
        out.push(RdmaProtocols {
            device: r.required(device, "a device name")?,
            roce_v1: bool_value(r.cell(v1)),
            roce_v2: bool_value(r.cell(v2)),
            iwarp: bool_value(r.cell(iwarp)),
        });
    }
    Ok((rest, out))
}

fn vmknic_list(input: &str) -> PResult<'_, Vec<RdmaVmknic>> {
    let (rest, t) = table(input)?;
    let device = t.require("Device", "a `Device` column")?;
    let (vmknic, netstack) = (t.column("Vmknic"), t.column("NetStack"));
    let mut out = Vec::with_capacity(t.rows().len());
    for r in t.rows() {
        out.push(RdmaVmknic {
            device: r.required(device, "a device name")?,
            vmknic: non_empty(r.cell(vmknic)),
            netstack: non_empty(r.cell(netstack)),
        });
    }
    Ok((rest, out))
}

/// A host without RDMA device: esxcli prints either the header and dash rows alone or, as
/// for the other empty lists it prints (`vm process list` with no running VM), nothing at
/// all. Both are an empty list, not a parse error (a command that failed is caught before
/// parsing by its exit status and `Error:` text).
fn empty_or<T>(input: &str, parse: impl FnOnce() -> Result<Vec<T>, ParseError>) -> Result<Vec<T>, ParseError> {
    if input.trim().is_empty() {
        return Ok(Vec::new());
    }
    parse()
}

pub fn parse_rdma_device_list(input: &str) -> Result<Vec<RdmaDevice>, ParseError> {
    empty_or(input, || run(crate::by_id::RDMA_DEVICE_LIST.id, input, device_list))
}

pub fn parse_rdma_device_protocol_list(input: &str) -> Result<Vec<RdmaProtocols>, ParseError> {
    empty_or(input, || run(crate::by_id::RDMA_PROTOCOL_LIST.id, input, protocol_list))
}

pub fn parse_rdma_device_vmknic_list(input: &str) -> Result<Vec<RdmaVmknic>, ParseError> {
    empty_or(input, || run(crate::by_id::RDMA_VMKNIC_LIST.id, input, vmknic_list))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_device_in_both_forms_esxcli_prints() {
        for empty in ["", "\n", "  \n\n"] {
            assert_eq!(parse_rdma_device_list(empty).unwrap(), vec![]);
            assert_eq!(parse_rdma_device_protocol_list(empty).unwrap(), vec![]);
            assert_eq!(parse_rdma_device_vmknic_list(empty).unwrap(), vec![]);
        }
        let header_only = "Name  Driver  State  MTU  Speed  Paired Uplink  Description\n----  ------  -----  ---  -----  -------------  -----------\n";
        assert_eq!(parse_rdma_device_list(header_only).unwrap(), vec![]);
        // A header without its dash row is still broken output.
        assert!(parse_rdma_device_list("Name  Driver  State\n").is_err());
    }

    #[test]
    fn mellanox_guide_with_tabs_maps_columns_by_header() {
        // As pasted in the Mellanox (NVIDIA) guide "How-To Configure PVRDMA in VMware
        // vSphere 6.5/6.7": tabs and spaces mixed.
        let input = "Name \t Driver \t State \t MTU    Speed \t   Paired Uplink \tDescription\n\
-------\t ----------\t ------\t ----   --------   -------------\t-----------------------------------\n\
vmrdma0\t nmlx5_rdma  Active\t 1024\t100 Gbps   vmnic2\t\t\tMT28800 Family [ConnectX-5 MT28831]\n\
vmrdma1\t nmlx5_rdma  Down\t 1024\t0\t\t   vmnic3\t\t\tMT28800 Family [ConnectX-5 MT28831]\n";
        let devices = parse_rdma_device_list(input).unwrap();
        assert_eq!(
            devices,
            vec![
                RdmaDevice {
                    name: "vmrdma0".into(),
                    driver: "nmlx5_rdma".into(),
                    state: PortState::Active,
                    mtu: Some(1024),
                    speed: "100 Gbps".into(),
                    paired_uplink: Some("vmnic2".into()),
                    description: "MT28800 Family [ConnectX-5 MT28831]".into(),
                },
                RdmaDevice {
                    name: "vmrdma1".into(),
                    driver: "nmlx5_rdma".into(),
                    state: PortState::Down,
                    mtu: Some(1024),
                    speed: "0".into(),
                    paired_uplink: Some("vmnic3".into()),
                    description: "MT28800 Family [ConnectX-5 MT28831]".into(),
                },
            ]
        );
    }

    #[test]
    fn cisco_sample_with_empty_uplink_and_odd_state() {
        let input = "Name    Driver State  MTU  Speed   Paired Uplink Description\r\n\
-----   ------ -----  ---  -----   ------------- -----\r\n\
vmrdma0 nenic  Active 4096 50 Gbps vmnic1        Cisco UCS VIC 15XXX (A0)\r\n\
vmrdmal nenic  ACTIVE_DEFER 4096 0                     Cisco UCS VIC 15XXX (A0)\r\n";
        let d = parse_rdma_device_list(input).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].speed, "50 Gbps");
        assert_eq!(d[0].paired_uplink.as_deref(), Some("vmnic1"));
        assert_eq!(d[0].description, "Cisco UCS VIC 15XXX (A0)");
        assert_eq!(d[1].paired_uplink, None);
    }

    #[test]
    fn header_and_dashes_only_is_no_device() {
        let input = "Name  Driver  State  MTU  Speed  Paired Uplink  Description\n\
----  ------  -----  ---  -----  -------------  -----------\n";
        assert_eq!(parse_rdma_device_list(input).unwrap(), vec![]);
    }

    #[test]
    fn header_without_dash_row_is_rejected() {
        let e = parse_rdma_device_list("Name     Driver      State   MTU   Speed\n").unwrap_err();
        assert_eq!(e.expected, "a dash row under the header");
        assert_eq!((e.line, e.column), (2, 1));
    }

    #[test]
    fn esxcli_and_shell_errors_are_not_data() {
        let e = parse_rdma_device_list("Error: Unknown command or namespace rdma device list\n").unwrap_err();
        assert_eq!(e.expected, "command output, not an esxcli `Error:` message");
        let e = parse_rdma_device_list("-sh: esxcli: not found\n").unwrap_err();
        assert!(e.expected.contains("shell"));
    }

    #[test]
    fn protocol_headers_with_spaces_and_right_aligned_booleans() {
        let input =
            "Device   RoCE v1  RoCE v2  iWARP\n-------  -------  -------  -----\nvmrdma0    false     true  false\n";
        assert_eq!(
            parse_rdma_device_protocol_list(input).unwrap(),
            vec![RdmaProtocols {
                device: "vmrdma0".into(),
                roce_v1: Some(false),
                roce_v2: Some(true),
                iwarp: Some(false),
            }]
        );
    }

    #[test]
    fn vmknic_list_cisco_sample() {
        let input = "Device  Vmknic NetStack\n------- ------ --------\nvmrdma0 vmk1   defaultTcpipStack\nvmrdma1 vmk2   defaultTcpipStack\n";
        let v = parse_rdma_device_vmknic_list(input).unwrap();
        assert_eq!(
            v[1],
            RdmaVmknic {
                device: "vmrdma1".into(),
                vmknic: Some("vmk2".into()),
                netstack: Some("defaultTcpipStack".into()),
            }
        );
    }
}
