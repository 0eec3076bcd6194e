//! `esxcli network nic list`: link state and Ethernet MTU of the uplink the RDMA device is
//! paired with. Real sample (ESXi 7.0.3, Mellanox ConnectX-4 Lx; note the right-aligned
//! `Speed` and `MTU` and the last dash run shorter than the descriptions):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! Name    PCI Device    Driver      Admin Status  Link Status  Speed  Duplex  MAC Address         MTU  Description
//! ------  ------------  ----------  ------------  -----------  -----  ------  -----------------  ----  -----------
//! vmnic2  0000:5e:00.0  nmlx5_core  Up            Up           10000  Full    b8:ce:f6:dc:74:22  1500  Mellanox Technologies ConnectX-4 Lx EN NIC; 25GbE; dual-port SFP28; (MCX4121A-ACA)
//! "#;
//! let nics = parse_nic_list(output.trim_start_matches('\n'))?;
//! assert_eq!(nics[0].name, "vmnic2");
//! assert_eq!(nics[0].link_status.as_deref(), Some("Up"));
//! assert_eq!((nics[0].speed, nics[0].mtu), (Some(10000), Some(1500)));
//! # Ok::<(), ParseError>(())
//! ```
//!
//! ESXi 5.5 has a single `Link` column instead of `Admin Status` / `Link Status`.
use crate::common::{non_empty, run, table, PResult};
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

fn nic_list(input: &str) -> PResult<'_, Vec<Nic>> {
    let (rest, t) = table(input)?;
    let name = t.require("Name", "a `Name` column")?;
    let pci = t.require("PCI Device", "a `PCI Device` column")?;
    let driver = t.require("Driver", "a `Driver` column")?;
    let admin = t.column("Admin Status");
    let link = t.column("Link Status").or_else(|| t.column("Link"));
    let (speed, duplex, mac) = (t.column("Speed"), t.column("Duplex"), t.column("MAC Address"));
    let (mtu, description) = (t.column("MTU"), t.column("Description"));
    let mut out = Vec::with_capacity(t.rows().len());
    for r in t.rows() {
        out.push(Nic {
            name: r.required(name, "a NIC name")?,
            pci_device: r.cell(Some(pci)).to_string(),
            driver: r.cell(Some(driver)).to_string(),
            admin_status: non_empty(r.cell(admin)),
            link_status: non_empty(r.cell(link)),
            speed: r.cell(speed).parse().ok(),
            duplex: non_empty(r.cell(duplex)),
            mac_address: non_empty(r.cell(mac)),
            mtu: r.cell(mtu).parse().ok(),
            description: r.cell(description).to_string(),
        });
    }
    Ok((rest, out))
}

pub fn parse_nic_list(input: &str) -> Result<Vec<Nic>, ParseError> {
    run(crate::by_id::NIC_LIST.id, input, nic_list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esxi7_rows_with_long_last_column_under_a_short_dash_run() {
        let input = "Name    PCI Device    Driver      Admin Status  Link Status  Speed  Duplex  MAC Address         MTU  Description\n\
------  ------------  ----------  ------------  -----------  -----  ------  -----------------  ----  -----------\n\
vmnic1  0000:1c:00.1  i40en       Up            Down             0  Half    3c:ec:ef:05:48:19  1500  Intel(R) Ethernet Connection X722 for 1GbE\n\
vmnic2  0000:5e:00.0  nmlx5_core  Up            Up           10000  Full    b8:ce:f6:dc:74:22  1500  Mellanox Technologies ConnectX-4 Lx EN NIC; 25GbE; dual-port SFP28; (MCX4121A-ACA)\n";
        let nics = parse_nic_list(input).unwrap();
        assert_eq!(
            nics[1],
            Nic {
                name: "vmnic2".into(),
                pci_device: "0000:5e:00.0".into(),
                driver: "nmlx5_core".into(),
                admin_status: Some("Up".into()),
                link_status: Some("Up".into()),
                speed: Some(10000),
                duplex: Some("Full".into()),
                mac_address: Some("b8:ce:f6:dc:74:22".into()),
                mtu: Some(1500),
                description: "Mellanox Technologies ConnectX-4 Lx EN NIC; 25GbE; dual-port SFP28; (MCX4121A-ACA)"
                    .into(),
            }
        );
        assert_eq!(nics[0].link_status.as_deref(), Some("Down"));
        assert_eq!(nics[0].speed, Some(0));
    }

    #[test]
    fn esxi55_link_column_and_indented_copy() {
        let input = [
            "    Name    PCI Device     Driver  Link  Speed  Duplex  MAC Address         MTU  Description",
            "    ------  -------------  ------  ----  -----  ------  -----------------  ----  -------------------------------------------------------------",
            "    vmnic0  0000:001:00.0  tg3     Up     1000  Full    68:5b:35:c9:96:10  1500  Broadcom Corporation NetXtreme BCM57766 Gigabit Ethernet",
            "",
        ]
        .join("\n");
        let input = input.as_str();
        let nics = parse_nic_list(input).unwrap();
        assert_eq!(nics.len(), 1);
        assert_eq!(nics[0].admin_status, None);
        assert_eq!(nics[0].link_status.as_deref(), Some("Up"));
        assert_eq!(nics[0].pci_device, "0000:001:00.0");
        assert_eq!(nics[0].speed, Some(1000));
        assert_eq!(
            nics[0].description,
            "Broadcom Corporation NetXtreme BCM57766 Gigabit Ethernet"
        );
    }

    #[test]
    fn missing_required_column_names_it() {
        let e = parse_nic_list("Name    MTU\n------  ----\nvmnic0  1500\n").unwrap_err();
        assert_eq!(e.expected, "a `PCI Device` column");
        assert_eq!(e.line, 1);
    }
}
