//! The path probe (`--probe`): the only proof that the hosts' PVRDMA vmknics really reach
//! each other, jumbo frames included ("The vmknics of hosts on which VMs with PVRDMA
//! reside must be able to reach each other", VMware, "Paravirtual RDMA for High
//! Performance Computing"). Off by default: vmkping changes no configuration, but it
//! sends packets.
//!
//! Pipeline: after collection, [`plan`] picks for every host the peers it pings (all of
//! them, or `--probe-sample K` of them on a ring of the sorted host names, so two runs
//! probe the same pairs). Each probe is one command line on the connection collection
//! used: a plain `vmkping -I <vmk> -c 3 -W 1 <ip>` and a don't-fragment
//! `vmkping -I <vmk> -d -s <MTU-28> -c 3 -W 1 <ip>`, framed with the house end markers
//! (see [`probe_command`]). The outputs are stored per host in [`ProbeCapture`] (and in a
//! bundle as `<host>/vmkping/<peer>.txt`), so `analyze` judges them exactly as the live
//! run did: [`results`] is a pure function of the captures and the host diagnoses.
//!
//! Values from a host (vmknic name, address, MTU) end up on another host's command line,
//! so they are validated here first: a vmknic is `vmkN`, an address is re-printed from a
//! parsed IPv4 address, the size is a number.
use pvrdma_engine::capture::{ProbeCapture, PROBE_ID};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// What `--probe` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeOptions {
    /// `--probe-sample K`: each host probes K peers instead of all of them.
    pub sample: Option<usize>,
}

pub(crate) mod live;
mod plan;
#[cfg(test)]
mod tests;

pub use plan::*;
