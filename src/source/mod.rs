//! The host source: where a run's hosts come from, and how they are read. The first stage
//! of the pipeline (hosts → collect → parse → diagnose → render) for every front end.
//!
//! A source is one value, typed once from the command line ([`HostSource`]): hosts named
//! (arguments with node sets and ClusterShell groups, a hosts file, stdin), the demo's
//! simulated hosts, vCenter's inventory (its hosts collected over SSH, or with `--no-ssh`
//! judged from their configuration as its vSphere API gives it), or a capture read back
//! (`analyze`). It yields the rounds the front ends run:
//!
//! - the one-shot run and `analyze`: one round ([`once`]);
//! - `watch`: one round per interval ([`rounds`]), vCenter followed in one session;
//! - the exporter: one round per refresh for each vCenter group ([`follow::follow_every`])
//!   and one per probe of its node-set groups and hosts.
//!
//! A round carries what the inventory said ([`Reading`]: when it was read, the hosts
//! chosen with their datacenter and cluster, those skipped and why, the VMs chosen and
//! where they run, what moved since the round before). The front ends differ only in what
//! they do with rounds: report one, compare each with the one before, or answer probes.
use crate::live::LiveOptions;
use crate::vcenter::{Discovery, VcenterSetup};
use std::path::PathBuf;
use std::time::SystemTime;

pub(crate) mod follow;
pub(crate) mod once;
pub(crate) mod rounds;
pub(crate) mod targets;

pub(crate) use follow::Move;

/// Where a run's hosts come from, as the command line said it.
#[derive(Debug)]
pub(crate) enum HostSource {
    /// Hosts named: arguments (node sets, ClusterShell groups), a hosts file, stdin.
    List(HostList),
    /// The demo's simulated hosts (`watch --demo`), or those of them named.
    Demo {
        demo: crate::demo::DemoOptions,
        hosts: HostList,
    },
    /// The hosts vCenter's inventory selects.
    Vcenter(VcenterSource),
    /// A capture read back: a capture folder, a support bundle, a vm-support bundle.
    Capture(PathBuf),
}

/// Hosts named on the command line, as the collection reads them (a hosts file again
/// each time, stdin once).
#[derive(Debug, Clone, Default)]
pub(crate) struct HostList {
    /// The host arguments; `-` is stdin.
    pub(crate) targets: Vec<String>,
    /// Where each of `targets` stood on the command line, and where `--hosts-file` did
    /// (ssh's "first value given wins" between `user@host` and `-l`, `-o User`).
    pub(crate) target_positions: Vec<usize>,
    pub(crate) hosts_file: Option<PathBuf>,
    pub(crate) hosts_file_position: usize,
}

impl HostList {
    /// Whether no host is named at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.targets.is_empty() && self.hosts_file.is_none()
    }

    /// Points a collection at these hosts.
    pub(crate) fn aim(&self, options: &mut LiveOptions) {
        options.targets.clone_from(&self.targets);
        options.target_positions.clone_from(&self.target_positions);
        options.hosts_file.clone_from(&self.hosts_file);
        options.hosts_file_position = self.hosts_file_position;
    }
}

/// Hosts from vCenter: which vCenter and selection, and how the hosts are read.
#[derive(Debug, Clone)]
pub(crate) struct VcenterSource {
    pub(crate) setup: VcenterSetup,
    pub(crate) via: Via,
}

/// How the hosts vCenter selects are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// Over SSH, by the names vCenter gives (ssh_config applies as to any host); a host
    /// whose SSH refuses is judged from its configuration in vCenter.
    Ssh,
    /// `--no-ssh`: their configuration through vCenter's vSphere API; no SSH at all.
    Api,
}

/// Live collection over SSH: the settings and whether to prompt for the password (read
/// when the run starts, by [`start_live`], not here).
#[derive(Debug, Default)]
pub(crate) struct LiveSetup {
    pub(crate) options: LiveOptions,
    pub(crate) ask_password: bool,
}

/// What every front end that logs in to real hosts does first: warns when host keys are
/// not verified, reads the password (the environment, or a prompt with
/// `--ask-password`). Returns the collection settings with the password in.
pub(crate) fn start_live(live: LiveSetup) -> anyhow::Result<LiveOptions> {
    if live.options.insecure_skip_host_key_check {
        eprint!(
            "{}",
            crate::terminal::stderr_message(
                "pvrdma-doctor: ",
                "WARNING: --insecure-skip-host-key-check: host keys are NOT verified; anyone on the network path can impersonate these hosts and receive your credentials"
            )
        );
    }
    let mut options = live.options;
    options.password = crate::live::read_password(live.ask_password)?;
    Ok(options)
}

/// What one read of vCenter's inventory found for a selection.
pub(crate) struct Reading {
    /// How messages name the vCenter (`vc01`, `vc01:8443`).
    pub(crate) vcenter: String,
    /// The hosts chosen (with datacenter and cluster), those skipped and why, the VMs
    /// chosen and where they run.
    pub(crate) found: Discovery,
    /// When the inventory was read.
    pub(crate) read_at: SystemTime,
    /// What moved since the selection's reading before; `None` on its first.
    pub(crate) moves: Option<Vec<Move>>,
}

impl Reading {
    /// The hosts a round diagnoses.
    pub(crate) fn hosts(&self) -> Vec<String> {
        self.found.host_names()
    }

    /// The VMs a VM-first run reports on (`None`: every VM of the hosts).
    pub(crate) fn vms(&self) -> Option<pvrdma_engine::capture::VmChoice> {
        self.found.vms()
    }

    /// What the selection left out, one line each.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.found.lines()
    }
}
