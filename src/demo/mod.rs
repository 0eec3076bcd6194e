//! `pvrdma-doctor demo`: a few simulated ESXi hosts, started in-process, diagnosed over
//! real SSH. It shows the main job on a fresh machine with no lab, and it is the harness
//! for the scaling benchmark.
//!
//! Each simulated host is a russh server on 127.0.0.1 with ESXi 8's algorithm lists, a
//! generated ECDSA host key, publickey and keyboard-interactive auth, that answers each
//! catalogue command line from `samples/<scenario>/<host>/` after an optional simulated
//! latency. A host directory holding only `host-error.json` is a closed port (a real
//! connection refused). The demo writes a temporary ssh_config (`Host esx01` → `HostName
//! 127.0.0.1`, `Port N`) and known_hosts, then goes through the same [`collect_live`] path
//! as a real run, so the report shows the scenario's host names.
use crate::live::{collect_live, LiveOptions, LiveRun};
use anyhow::Context;
use russh::keys::ssh_key::LineEnding;
use russh::keys::{Algorithm, EcdsaCurve, PrivateKey, PublicKey};
use russh::server::{self, Auth, Msg, Session};
use russh::{Channel, ChannelId, MethodKind, MethodSet};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

include!(concat!(env!("OUT_DIR"), "/demo_scenario.rs"));

/// What to simulate.
#[derive(Debug, Clone, Default)]
pub struct DemoOptions {
    /// A scenario directory on disk (`samples/<scenario>`); `None` = the embedded one.
    pub scenario: Option<PathBuf>,
    /// Simulate this many hosts, cycling through the scenario's hosts (`None` = as many
    /// as the scenario has).
    pub hosts: Option<usize>,
    /// Delay before each command answers, as a slow host would.
    pub latency: Duration,
}

/// Starts the simulated fleet and diagnoses it through [`collect_live`]. `live` supplies
/// the run's timeouts, parallelism and progress; its targets and SSH settings are
/// replaced by the demo's own.
pub fn run_demo(opts: &DemoOptions, live: LiveOptions) -> anyhow::Result<LiveRun> {
    let fleet = start_fleet(opts, live.probe.is_some())?;
    let requested = live.targets.clone();
    let names = fleet.host_names();
    let unknown: Vec<String> = requested.iter().filter(|h| !names.contains(h)).cloned().collect();
    anyhow::ensure!(
        unknown.is_empty(),
        "{} not a host of the demo scenario; its hosts are {}",
        pvrdma_nodeset::fold(&unknown),
        pvrdma_nodeset::fold(&names)
    );
    let mut live = fleet.live_options(live);
    if !requested.is_empty() {
        live.targets = requested;
    }
    collect_live(&live)
}

/// Starts the simulated hosts of `opts` (the path-probe scenario by default when
/// `probe`).
pub fn start_fleet(opts: &DemoOptions, probe: bool) -> anyhow::Result<SimFleet> {
    let scenario = if probe {
        load_probe_scenario(opts.scenario.as_deref())?
    } else {
        load_scenario(opts.scenario.as_deref())?
    };
    let hosts = scale_fleet(scenario, opts.hosts);
    SimFleet::start(hosts, opts.latency)
}

mod expose;
mod fleet;
mod scenario;
mod simhost;
mod simnet;
mod story;

use crate::demo::simhost::SimHost;
pub use expose::*;
pub use fleet::*;
pub use scenario::*;
pub use story::*;
