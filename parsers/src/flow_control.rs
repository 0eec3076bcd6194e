//! Flow control of the HCA uplink, read-only: `esxcli network nic pauseParams list` (global
//! pause) and the batched `esxcli network nic dcb status get -n <vmnic>` (DCB / PFC). RoCE
//! needs a lossless network: global pause or PFC (VMware vSphere documentation, "Remote
//! Direct Memory Access for Virtual Machines"). Real sample of the pause list
//! (ESXi 8.0 U1a, ConnectX NIC; booleans right-aligned under their dash runs):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! NIC     Pause Params Supported  Pause RX  Pause TX  Auto Negotiation  Auto Negotiation Resolution Avail  RX Auto Negotiation Resolution  TX Auto Negotiation Resolution
//! ------  ----------------------  --------  --------  ----------------  ---------------------------------  ------------------------------  ------------------------------
//! vmnic0                    true      true      true             false                              false                           false                           false
//! "#;
//! let pause = parse_nic_pause_params_list(output.trim_start_matches('\n'))?;
//! assert_eq!((pause[0].nic.as_str(), pause[0].rx, pause[0].tx), ("vmnic0", Some(true), Some(true)));
//! # Ok::<(), ParseError>(())
//! ```
//!
//! No public capture of `nic dcb status get` exists; its field names (`Mode: IEEE Mode`,
//! `PFC Enabled: true`, `PFC Configuration: 0 0 0 1 0 0 0 0`) are known only paraphrased,
//! so it is read as a generic `Key: value` structure and only those fields are used. The
//! batch heads each uplink's output with `==> vmnicN <==` and ends it with
//! `<== vmnicN exit N ==>`; a section without that end marker was cut off.
use crate::common::{bool_value, error_text, find, marked_answers, non_empty, run, structure, table, value, PResult};
use crate::ParseError;
use serde::Serialize;

/// One row of `esxcli network nic pauseParams list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NicPause {
    pub nic: String,
    pub supported: Option<bool>,
    pub rx: Option<bool>,
    pub tx: Option<bool>,
    pub auto_negotiation: Option<bool>,
}

/// One uplink's section of the batched DCB query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DcbStatus {
    pub nic: String,
    /// The parsed state, or why this uplink's state is not known (esxcli error, exit
    /// status, cut-off section, unreadable output).
    pub state: Result<DcbState, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DcbState {
    /// `Mode:` (e.g. `IEEE Mode`).
    pub mode: Option<String>,
    /// `Enabled:` (DCB itself).
    pub enabled: Option<bool>,
    pub pfc_enabled: Option<bool>,
    /// Priorities whose `PFC Configuration:` flag is 1.
    pub pfc_priorities: Vec<u8>,
}

fn pause_list(input: &str) -> PResult<'_, Vec<NicPause>> {
    let (rest, t) = table(input)?;
    let nic = t.require("NIC", "a `NIC` column")?;
    let (supported, rx, tx, auto) = (
        t.column("Pause Params Supported"),
        t.column("Pause RX"),
        t.column("Pause TX"),
        t.column("Auto Negotiation"),
    );
    let mut out = Vec::with_capacity(t.rows().len());
    for r in t.rows() {
        out.push(NicPause {
            nic: r.required(nic, "a NIC name")?,
            supported: bool_value(r.cell(supported)),
            rx: bool_value(r.cell(rx)),
            tx: bool_value(r.cell(tx)),
            auto_negotiation: bool_value(r.cell(auto)),
        });
    }
    Ok((rest, out))
}

pub fn parse_nic_pause_params_list(input: &str) -> Result<Vec<NicPause>, ParseError> {
    run(crate::by_id::NIC_PAUSE_PARAMS.id, input, pause_list)
}

const DCB_BATCH: &str = crate::by_id::NIC_DCB_STATUS.id;

fn dcb_state(nic: &str, body: &str) -> Result<DcbState, String> {
    if error_text(body).is_some() {
        return Err(non_empty(body).unwrap_or_default());
    }
    let fields = match structure(body) {
        Ok((_, f)) => f,
        Err(_) => return Err(format!("unreadable `dcb status get` output for {nic}")),
    };
    // The output names its NIC: another NIC's status says nothing about this uplink.
    if let Some(named) = value(&fields, "Nic Name")
        .or_else(|| value(&fields, "NIC Name"))
        .and_then(non_empty)
    {
        if named != nic {
            return Err(format!("the section of {nic} holds the DCB status of {named}"));
        }
    }
    let pfc_priorities = find(&fields, "PFC Configuration")
        .map(|f| {
            f.value
                .split_whitespace()
                .enumerate()
                .filter(|(_, v)| *v == "1")
                .filter_map(|(i, _)| u8::try_from(i).ok())
                .collect()
        })
        .unwrap_or_default();
    Ok(DcbState {
        mode: value(&fields, "Mode").and_then(non_empty),
        enabled: value(&fields, "Enabled").and_then(bool_value),
        pfc_enabled: value(&fields, "PFC Enabled").and_then(bool_value),
        pfc_priorities,
    })
}

fn dcb_batch(input: &str) -> PResult<'_, Vec<DcbStatus>> {
    let (rest, answers) = marked_answers(input, "a `==> <vmnic> <==` section header", dcb_state)?;
    let statuses = answers
        .into_iter()
        .map(|a| DcbStatus {
            nic: a.key.to_string(),
            state: a.answer,
        })
        .collect();
    Ok((rest, statuses))
}

/// The batched DCB query: one section per RDMA uplink. An uplink whose section failed or
/// was cut off gets its reason in [`DcbStatus::state`]; the others survive.
pub fn parse_nic_dcb_status_batch(input: &str) -> Result<Vec<DcbStatus>, ParseError> {
    run(DCB_BATCH, input, dcb_batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAUSE_80U1: &str = "NIC     Pause Params Supported  Pause RX  Pause TX  Auto Negotiation  Auto Negotiation Resolution Avail  RX Auto Negotiation Resolution  TX Auto Negotiation Resolution\n------  ----------------------  --------  --------  ----------------  ---------------------------------  ------------------------------  ------------------------------\nvmnic0                    true      true      true             false                              false                           false                           false\nvmnic1                    true     false     false             false                              false                           false                           false\n";

    #[test]
    fn pause_params_from_the_real_capture() {
        let rows = parse_nic_pause_params_list(PAUSE_80U1).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].rx, rows[0].tx, rows[0].supported),
            (Some(true), Some(true), Some(true))
        );
        assert_eq!((rows[1].rx, rows[1].tx), (Some(false), Some(false)));
        assert_eq!(rows[1].auto_negotiation, Some(false));
    }

    #[test]
    fn dcb_sections_survive_one_another() {
        let input = "==> vmnic2 <==\n   Nic Name: vmnic2\n   Mode: IEEE Mode\n   Enabled: true\n   PFC Enabled: true\n   PFC Configuration: 0 0 0 1 0 0 0 0\n<== vmnic2 exit 0 ==>\n==> vmnic3 <==\nError: Unable to get DCB status for vmnic3\n<== vmnic3 exit 1 ==>\n==> vmnic4 <==\n   Nic Name: vmnic4\n";
        let s = parse_nic_dcb_status_batch(input).unwrap();
        assert_eq!(s.len(), 3);
        let ok = s[0].state.as_ref().unwrap();
        assert_eq!(ok.pfc_enabled, Some(true));
        assert_eq!(ok.pfc_priorities, vec![3]);
        assert_eq!(ok.mode.as_deref(), Some("IEEE Mode"));
        assert!(s[1].state.as_ref().unwrap_err().contains("exit status 1"));
        assert!(s[2].state.as_ref().unwrap_err().contains("cut off"));
        let other = "==> vmnic2 <==\n   Nic Name: vmnic5\n   PFC Enabled: true\n<== vmnic2 exit 0 ==>\n";
        assert!(parse_nic_dcb_status_batch(other).unwrap()[0].state.is_err());
        assert_eq!(parse_nic_dcb_status_batch("").unwrap(), vec![]);
    }
}
