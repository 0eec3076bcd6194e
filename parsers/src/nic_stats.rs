//! `esxcli network nic stats get -n <vmnic>`, batched over the RDMA uplinks: the packet,
//! drop and error counters of each uplink an RDMA device is paired with. Real sample
//! (Broadcom KB 341594, "Troubleshooting NIC errors and other network traffic faults in
//! ESXi"; the counters add up from the driver's load, so only their growth says anything):
//!
//! ```
//! # use pvrdma_parsers::*;
//! let output = r#"
//! NIC statistics for vmnic2
//!    Packets received: 701280499176
//!    Packets sent: 687061948450
//!    Bytes received: 664124780523852
//!    Bytes sent: 676938646792793
//!    Receive packets dropped: 2452783244
//!    Transmit packets dropped: 0
//!    Multicast packets received: 976222150
//!    Broadcast packets received: 0
//!    Multicast packets sent: 0
//!    Broadcast packets sent: 0
//!    Total receive errors: 0
//!    Receive length errors: 0
//!    Receive over errors: 0
//!    Receive CRC errors: 0
//!    Receive frame errors: 0
//!    Receive FIFO errors: 0
//!    Receive missed errors: 0
//!    Total transmit errors: 0
//!    Transmit aborted errors: 0
//!    Transmit carrier errors: 0
//!    Transmit FIFO errors: 0
//!    Transmit heartbeat errors: 0
//!    Transmit window errors: 0
//! "#;
//! let stats = nic_stats::parse_nic_stats(output.trim_start_matches('\n'))?;
//! assert_eq!(stats.nic.as_deref(), Some("vmnic2"));
//! let counters = stats.counters;
//! assert_eq!(counters.receive_dropped, Some(2452783244));
//! assert_eq!((counters.transmit_dropped, counters.receive_errors, counters.transmit_errors), (Some(0), Some(0), Some(0)));
//! assert_eq!(counters.packets_received, Some(701280499176));
//! # Ok::<(), ParseError>(())
//! ```
//!
//! The batch heads each uplink's output with `==> vmnicN <==` and ends it with
//! `<== vmnicN exit N ==>` ([`parse_nic_stats_batch`]); a section without that end marker
//! was cut off. A counter the output lacks is `None`, never 0.
use crate::common::{
    error_text, fail, line_iter, marked_answers, non_empty, offset_in, run, structure, value, PResult,
};
use crate::ParseError;
use nom::bytes::complete::tag;
use nom::combinator::rest;
use nom::sequence::preceded;
use nom::Parser;
use serde::Serialize;

/// One `nic stats get`: the NIC it names and its counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NicStats {
    /// The NIC its title line names (`NIC statistics for vmnic2`).
    pub nic: Option<String>,
    /// The counters the tool reads.
    #[serde(flatten)]
    pub counters: NicCounters,
}

/// The packet, drop and error counters of one NIC (each `None` when the output lacks it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NicCounters {
    /// `Packets received`.
    pub packets_received: Option<u64>,
    /// `Packets sent`.
    pub packets_sent: Option<u64>,
    /// `Receive packets dropped`: frames the NIC received but could not hand on. On a
    /// RoCE uplink each one costs a retransmission.
    pub receive_dropped: Option<u64>,
    /// `Transmit packets dropped`.
    pub transmit_dropped: Option<u64>,
    /// `Total receive errors` (length, overrun, CRC, frame, FIFO and missed errors).
    pub receive_errors: Option<u64>,
    /// `Total transmit errors` (aborted, carrier, FIFO, heartbeat and window errors).
    pub transmit_errors: Option<u64>,
}

/// One uplink's section of the batched query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NicStatsSection {
    /// The uplink the query asked for.
    pub nic: String,
    /// Its counters, or why they are not known (esxcli's error, an exit status, another
    /// NIC's counters, a cut-off section, unreadable output).
    pub stats: Result<NicStats, String>,
    /// The section has no end marker: the batch broke off inside it.
    pub cut_off: bool,
}

const SINGLE: &str = crate::by_id::NIC_STATS.id;

/// `NIC statistics for <name>`: the NIC's name.
fn title(l: &str) -> PResult<'_, &str> {
    preceded(tag("NIC statistics for "), rest).parse(l.trim())
}

fn stats(input: &str) -> PResult<'_, NicStats> {
    let mut lines = line_iter(input).filter(|l| !l.trim().is_empty());
    let first = lines
        .next()
        .ok_or_else(|| fail(input, "`NIC statistics for <vmnic>`"))?;
    let (nic, body) = match title(first) {
        Ok((_, name)) => {
            let after = offset_in(input, first).map_or(0, |at| at + first.len());
            (non_empty(name), input.get(after..).unwrap_or(""))
        }
        // Copies that lost the title line still hold the counters.
        Err(_) => (None, input),
    };
    let (rest, fields) = structure(body)?;
    let counter = |key: &'static str| match value(&fields, key) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| fail(v, "a counter (a whole number)")),
    };
    Ok((
        rest,
        NicStats {
            nic,
            counters: NicCounters {
                packets_received: counter("Packets received")?,
                packets_sent: counter("Packets sent")?,
                receive_dropped: counter("Receive packets dropped")?,
                transmit_dropped: counter("Transmit packets dropped")?,
                receive_errors: counter("Total receive errors")?,
                transmit_errors: counter("Total transmit errors")?,
            },
        },
    ))
}

/// One `esxcli network nic stats get -n <vmnic>` output.
pub fn parse_nic_stats(input: &str) -> Result<NicStats, ParseError> {
    run(SINGLE, input, stats)
}

/// What one uplink's section says: its counters, or why they are unknown.
fn section_stats(nic: &str, body: &str) -> Result<NicStats, String> {
    if error_text(body).is_some() {
        return Err(non_empty(body).unwrap_or_default());
    }
    let parsed = match parse_nic_stats(body) {
        Ok(s) => s,
        Err(e) => return Err(format!("unreadable `nic stats get` output for {nic}: {}", e.spot())),
    };
    // The output names its NIC: another NIC's counters say nothing about this uplink.
    match parsed.nic.as_deref() {
        Some(named) if named != nic => Err(format!("the section of {nic} holds the statistics of {named}")),
        _ => Ok(parsed),
    }
}

fn batch(input: &str) -> PResult<'_, Vec<NicStatsSection>> {
    let (rest, answers) = marked_answers(input, "a `==> <vmnic> <==` section header", section_stats)?;
    let sections = answers
        .into_iter()
        .map(|a| NicStatsSection {
            nic: a.key.to_string(),
            stats: a.answer,
            cut_off: a.cut_off,
        })
        .collect();
    Ok((rest, sections))
}

/// The batched query: one section per RDMA uplink. An uplink whose section failed or was
/// cut off gets its reason in [`NicStatsSection::stats`]; the others survive.
pub fn parse_nic_stats_batch(input: &str) -> Result<Vec<NicStatsSection>, ParseError> {
    run(SINGLE, input, batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATS: &str = "NIC statistics for vmnic2\n   Packets received: 10\n   Packets sent: 20\n   Receive packets dropped: 3\n   Transmit packets dropped: 0\n   Total receive errors: 1\n   Total transmit errors: 0\n";

    #[test]
    fn sections_survive_one_another() {
        let input = format!(
            "==> vmnic2 <==\n{STATS}<== vmnic2 exit 0 ==>\n==> vmnic3 <==\nError: Unable to get NIC stats for vmnic3\n<== vmnic3 exit 1 ==>\n==> vmnic4 <==\nNIC statistics for vmnic4\n   Packets received: 1\n"
        );
        let s = parse_nic_stats_batch(&input).unwrap();
        assert_eq!(s.len(), 3);
        let ok = s[0].stats.as_ref().unwrap().counters;
        assert_eq!(
            (ok.receive_dropped, ok.receive_errors, ok.packets_sent),
            (Some(3), Some(1), Some(20))
        );
        assert!(s[1]
            .stats
            .as_ref()
            .unwrap_err()
            .contains("exit status 1: Error: Unable"));
        assert!(!s[1].cut_off);
        assert!(s[2].cut_off && s[2].stats.as_ref().unwrap_err().contains("cut off"));
        assert_eq!(parse_nic_stats_batch("").unwrap(), vec![]);
    }

    #[test]
    fn another_nics_counters_or_a_word_for_a_counter_are_no_answer() {
        let other = "==> vmnic2 <==\nNIC statistics for vmnic5\n   Packets received: 1\n<== vmnic2 exit 0 ==>\n";
        assert!(parse_nic_stats_batch(other).unwrap()[0]
            .stats
            .as_ref()
            .unwrap_err()
            .contains("vmnic5"));
        let word =
            "==> vmnic2 <==\nNIC statistics for vmnic2\n   Receive packets dropped: many\n<== vmnic2 exit 0 ==>\n";
        let why = parse_nic_stats_batch(word).unwrap()[0].stats.clone().unwrap_err();
        assert!(why.contains("a counter"), "{why}");
    }

    #[test]
    fn a_missing_counter_is_unknown_not_zero() {
        let s = parse_nic_stats("NIC statistics for vmnic2\n   Packets received: 5\n").unwrap();
        assert_eq!(
            (s.counters.packets_received, s.counters.receive_dropped),
            (Some(5), None)
        );
        // A copy without its title line still reads.
        let untitled = parse_nic_stats("Receive packets dropped: 7\n").unwrap();
        assert_eq!((untitled.nic, untitled.counters.receive_dropped), (None, Some(7)));
        assert!(parse_nic_stats("").is_err());
        assert!(parse_nic_stats("==> vmnic2 <==\n").is_err());
    }
}
