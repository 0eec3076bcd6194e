//! The path probe's results as the diagnosis carries them: the per-pair types, the
//! host's validated PVRDMA end, and the judging of the captured vmkping outputs
//! ([`judge`]). Here, below the `probe` module (planning, command lines, the live phase,
//! which re-exports all of this), because [`crate::diagnose::diagnose`] judges the probes.
use crate::capture::{RawOutput, PROBE_ID};
use crate::diagnose::{Check, CheckId, Evidence, HostDiagnosis, HostStatus, Status};
use pvrdma_parsers as p;
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// The fleet check's stable id.
pub const CHECK_ID: &str = super::CheckId::VmknicReachability.id();
/// Echo requests per ping: enough to tell a lossy path from a dead one, few enough to
/// keep a probe to about three seconds.
pub const COUNT: u32 = 3;
/// Seconds vmkping waits for the last reply.
pub const WAIT_SECONDS: u32 = 1;
/// IPv4 (20) + ICMP (8) headers: the payload that fills an MTU exactly.
pub const HEADERS: u32 = 28;

/// The PVRDMA end of one host, validated for use on a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub vmknic: String,
    pub ip: Ipv4Addr,
    /// The vmknic's MTU; `None` = unknown, then only the plain ping runs.
    pub mtu: Option<u32>,
}

/// One host pair's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeStatus {
    /// Replies to the plain and the MTU-sized don't-fragment ping.
    Ok,
    /// The plain ping passes, the MTU-sized one does not: a smaller MTU on the path.
    Mtu,
    /// No reply to the plain ping.
    Unreachable,
    /// Not probed: a side has no usable vmknic or was not reached.
    Skipped,
    /// Probed, but the output broke off or did not say.
    Unknown,
}

impl ProbeStatus {
    pub fn label(self) -> &'static str {
        match self {
            ProbeStatus::Ok => "ok",
            ProbeStatus::Mtu => "mtu",
            ProbeStatus::Unreachable => "unreachable",
            ProbeStatus::Skipped => "skipped",
            ProbeStatus::Unknown => "unknown",
        }
    }
}

/// A float that compares by bits, so reports stay `Eq`; serialized as a plain number.
#[derive(Debug, Clone, Copy, Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Number(pub f64);

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}
impl Eq for Number {}

/// Echo requests sent and answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Losses {
    /// Echo requests sent.
    pub sent: u32,
    /// Replies received.
    pub received: u32,
    /// Packet loss as vmkping prints it, in percent.
    pub loss_percent: Number,
}

/// Round-trip times of the answered requests, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Rtt {
    /// Fastest reply, in milliseconds.
    min_ms: Number,
    /// Mean, in milliseconds.
    pub avg_ms: Number,
    /// Slowest reply, in milliseconds.
    max_ms: Number,
}

/// The don't-fragment ping that fills the vmknic MTU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct JumboResult {
    /// `-s` payload (MTU − 28).
    pub payload_bytes: u32,
    /// Whether it got through; `null` when its output could not be read.
    pub passed: Option<bool>,
    /// Requests and replies; `null` without statistics.
    losses: Option<Losses>,
    /// Round-trip times; `null` without replies.
    rtt: Option<Rtt>,
}

/// One probed (or skipped) host pair, `from` pinging `to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Probe {
    /// The pinging host.
    pub from: String,
    /// The pinged host.
    pub to: String,
    /// The pinging host's PVRDMA vmknic (`-I`); `null` when it has none.
    pub from_vmknic: Option<String>,
    /// The pinged host's PVRDMA vmknic IPv4 address; `null` when unknown.
    pub to_ip: Option<String>,
    /// `ok`, `mtu`, `unreachable`, `skipped` or `unknown`.
    pub status: ProbeStatus,
    /// One line saying why (what failed, what was lost, why skipped).
    pub detail: String,
    /// Of the plain ping.
    pub losses: Option<Losses>,
    /// Of the plain ping.
    pub rtt: Option<Rtt>,
    /// The jumbo don't-fragment ping; `null` when not run (vmknic MTU unknown).
    pub jumbo: Option<JumboResult>,
    /// Set when the run's own `--timeout` stopped the probe before this pair ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_stage: Option<crate::capture::RunStage>,
}

/// `vmk` followed by digits: the only vmknic names ESXi creates, and safe in a shell line.
pub fn is_vmknic_name(name: &str) -> bool {
    name.strip_prefix("vmk")
        .is_some_and(|n| !n.is_empty() && n.len() <= 5 && n.chars().all(|c| c.is_ascii_digit()))
}

/// The host's usable PVRDMA vmknic, or why there is none (the `skipped` reason).
pub fn endpoint(h: &HostDiagnosis) -> Result<Endpoint, String> {
    if matches!(h.status, HostStatus::Unreachable | HostStatus::Error) {
        return Err(format!("{} was not reached", h.host));
    }
    let Some(v) = &h.pvrdma_vmknic else {
        return Err(format!("{} has no vmknic tagged for PVRDMA", h.host));
    };
    if !is_vmknic_name(&v.name) {
        return Err(format!("{}: {:?} is not a vmknic name", h.host, v.name));
    }
    let valid = h.checks.iter().find(|c| c.id == super::CheckId::PvrdmaVmknicValid);
    if valid.is_some_and(|c| c.status == Status::Fail) {
        return Err(format!("{} {} is not usable (see pvrdma-vmknic-valid)", h.host, v.name));
    }
    let ip = v
        .ipv4
        .as_deref()
        .and_then(|a| a.trim().parse::<Ipv4Addr>().ok())
        .filter(|a| !a.is_unspecified() && !a.is_broadcast() && !a.is_multicast());
    let Some(ip) = ip else {
        return Err(format!("{} {} has no IPv4 address", h.host, v.name));
    };
    Ok(Endpoint {
        vmknic: v.name.clone(),
        ip,
        mtu: v.mtu.filter(|m| *m > HEADERS && *m <= 65535),
    })
}

pub mod judge;
pub use judge::*;
