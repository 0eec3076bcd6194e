//! The traffic counters of the RDMA uplinks, as the report carries them (JSON `uplinks`,
//! the `pvrdma_uplink_*_total` metrics): read, never judged. A NIC's counters add up from
//! its driver's load (a reboot, a driver reload), so only their growth between two runs
//! says anything: what a time-series database does with them, not one report.
use crate::facts::HostFacts;
use pvrdma_parsers::NicCounters;
use serde::Serialize;

/// One RDMA uplink's counters (`esxcli network nic stats get -n <uplink>`); each `null`
/// when the output lacks it or the query did not answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct UplinkCounters {
    /// The uplink, e.g. `vmnic2` (the `Paired Uplink` of an RDMA device).
    pub uplink: String,
    /// Its counters as `nic stats get` printed them, each beside `uplink` in the report.
    #[serde(flatten)]
    pub counters: NicCounters,
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
        .map(|s| UplinkCounters {
            uplink: s.nic.clone(),
            counters: s.stats.as_ref().map(|stats| stats.counters).unwrap_or_default(),
            error: s.stats.as_ref().err().cloned(),
        })
        .collect()
}
