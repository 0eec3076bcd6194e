//! The traffic counters of the RDMA uplinks, as the report carries them (JSON `uplinks`,
//! the `pvrdma_uplink_*_total` metrics): read, never judged. A NIC's counters add up from
//! its driver's load (a reboot, a driver reload), so only their growth between two runs
//! says anything: what a time-series database does with them, not one report.
use crate::facts::HostFacts;
use serde::Serialize;

/// One RDMA uplink's counters (`esxcli network nic stats get -n <uplink>`); each `null`
/// when the output lacks it or the query did not answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct UplinkCounters {
    /// The uplink, e.g. `vmnic2` (the `Paired Uplink` of an RDMA device).
    pub uplink: String,
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
    /// Why the counters are not known (the query failed or broke off), when they are not.
    pub error: Option<String>,
}

/// The counters of every RDMA uplink the host answered for, in the order asked; none when
/// the query did not run (its absence is told with the other incomplete outputs).
pub(crate) fn uplink_counters(facts: &HostFacts) -> Vec<UplinkCounters> {
    let Ok(sections) = &facts.nic_stats else {
        return Vec::new();
    };
    sections
        .iter()
        .map(|s| {
            let stats = s.stats.as_ref().ok();
            let read = |counter: fn(&pvrdma_parsers::NicStats) -> Option<u64>| stats.and_then(counter);
            UplinkCounters {
                uplink: s.nic.clone(),
                packets_received: read(|c| c.packets_received),
                packets_sent: read(|c| c.packets_sent),
                receive_dropped: read(|c| c.receive_dropped),
                transmit_dropped: read(|c| c.transmit_dropped),
                receive_errors: read(|c| c.receive_errors),
                transmit_errors: read(|c| c.transmit_errors),
                error: s.stats.as_ref().err().cloned(),
            }
        })
        .collect()
}
