//! The one-shot run's one round, and `analyze`'s: hosts named are collected once;
//! vCenter's inventory is read once in a session of its own (logged out on every path,
//! also on Ctrl-C) and its hosts collected over SSH, those whose SSH refuses completed
//! from vCenter with the same login, or with `--no-ssh` judged from the configuration
//! read in that session; a capture is read back.
use super::{start_live, HostList, HostSource, LiveSetup, Reading, VcenterSource, Via};
use crate::live::{LiveOptions, LiveRun};
use crate::vcenter::{HostSink, VcenterSetup};
use pvrdma_engine::capture::HostCapture;
use std::path::PathBuf;
use std::time::{Instant, SystemTime};

/// A one-shot run's round.
pub(crate) struct Once {
    /// What vCenter's inventory said (`None`: hosts named, or a capture).
    pub(crate) reading: Option<Reading>,
    pub(crate) hosts: OnceHosts,
}

/// How the round's hosts are read.
pub(crate) enum OnceHosts {
    /// Collected over SSH.
    Ssh(Box<Collect>),
    /// Read through the vSphere API (`--no-ssh`), each host handed to the sink
    /// [`HostSource::read_once`] was given: when the read began and ended.
    Api { started: SystemTime, finished: SystemTime },
    /// Read back from a capture.
    Capture(Capture),
}

/// Hosts to collect over SSH: named, or vCenter's selection (`vcenter`: its setup and
/// the run's login, which read the hosts that refuse SSH).
pub(crate) struct Collect {
    hosts: Targets,
    vcenter: Option<(VcenterSetup, pvrdma_vsphere::Config)>,
}

enum Targets {
    List(HostList),
    Names(Vec<String>),
}

/// A capture read back, and what it recorded of its run.
pub(crate) struct Capture {
    pub(crate) path: PathBuf,
    pub(crate) captures: Vec<HostCapture>,
    /// When `analyze` started reading it.
    pub(crate) started: Instant,
    /// The VMs the run that wrote it was narrowed to (a support bundle's).
    vms: Option<pvrdma_engine::capture::VmChoice>,
}

impl HostSource {
    /// What the run is doing while the source is read (a monitoring plugin's timeout
    /// says it); `None` when reading it is no step of its own (hosts named: a hosts
    /// file and stdin are read by the collection).
    pub(crate) fn stage(&self) -> Option<&'static str> {
        match self {
            HostSource::Vcenter(vc) if vc.via == Via::Api => Some("reading the hosts' configuration from vCenter"),
            HostSource::Vcenter(_) => Some("reading the hosts from vCenter"),
            HostSource::Capture(_) => Some("reading the capture"),
            HostSource::List(_) | HostSource::Demo { .. } => None,
        }
    }

    /// Reads the one round of a one-shot run: vCenter's inventory (the password is read
    /// first: the step that logs in), with `--no-ssh` the selected hosts' configuration
    /// too, each host handed to `api` as it is read, or the capture. `Ok(None)` when
    /// Ctrl-C stopped a vCenter read.
    pub(crate) fn read_once(self, api: &mut dyn HostSink) -> anyhow::Result<Option<Once>> {
        let vc = match self {
            HostSource::List(list) => {
                return Ok(Some(Once {
                    reading: None,
                    hosts: OnceHosts::Ssh(Box::new(Collect {
                        hosts: Targets::List(list),
                        vcenter: None,
                    })),
                }))
            }
            HostSource::Demo { .. } => {
                anyhow::bail!("the demo's simulated hosts are diagnosed once by `demo`, watched by `watch --demo`")
            }
            HostSource::Capture(path) => return read_capture(path).map(Some),
            HostSource::Vcenter(vc) => vc,
        };
        let login = crate::vcenter::login_config(&vc.setup)?;
        if vc.via == Via::Api {
            let label = vc.setup.endpoint.label();
            let Some(read) = crate::vcenter::read_configuration(&vc.setup, login, api)? else {
                return Ok(None);
            };
            return Ok(Some(Once {
                reading: Some(first_reading(label, read.discovery)),
                hosts: OnceHosts::Api {
                    started: read.started,
                    finished: read.finished,
                },
            }));
        }
        let Some(reading) = discover_with(&vc, login.clone())? else {
            return Ok(None);
        };
        let names = reading.hosts();
        Ok(Some(Once {
            reading: Some(reading),
            hosts: OnceHosts::Ssh(Box::new(Collect {
                hosts: Targets::Names(names),
                vcenter: Some((vc.setup, login)),
            })),
        }))
    }
}

/// Reads vCenter's inventory once, in a session of its own, the password read first (the
/// step that logs in): what `hosts` prints. `Ok(None)` when Ctrl-C stopped it.
pub(crate) fn discover(vcenter: &VcenterSource) -> anyhow::Result<Option<Reading>> {
    discover_with(vcenter, crate::vcenter::login_config(&vcenter.setup)?)
}

fn discover_with(vcenter: &VcenterSource, login: pvrdma_vsphere::Config) -> anyhow::Result<Option<Reading>> {
    let found = crate::vcenter::discover(&vcenter.setup, login)?;
    Ok(found.map(|found| first_reading(vcenter.setup.endpoint.label(), found)))
}

/// A one-shot reading: the selection's first, nothing moved before it.
fn first_reading(vcenter: String, found: crate::vcenter::Discovery) -> Reading {
    Reading {
        vcenter,
        found,
        read_at: SystemTime::now(),
        moves: None,
    }
}

fn read_capture(path: PathBuf) -> anyhow::Result<Once> {
    let started = Instant::now();
    let captures = crate::offline::load_captures(&path)?;
    let vms = crate::offline::recorded_vm_scope(&path);
    Ok(Once {
        reading: None,
        hosts: OnceHosts::Capture(Capture {
            path,
            captures,
            started,
            vms,
        }),
    })
}

impl Once {
    /// The VMs the report is narrowed to: a VM-first run's, or those the support bundle
    /// read back recorded; `None`: every VM.
    pub(crate) fn vms(&self) -> Option<pvrdma_engine::capture::VmChoice> {
        match (&self.hosts, &self.reading) {
            (OnceHosts::Capture(c), _) => c.vms.clone(),
            (_, Some(reading)) => reading.vms(),
            _ => None,
        }
    }
}

impl Collect {
    /// The collection's settings for these hosts, with the SSH password read (the step
    /// that logs in to the hosts).
    pub(crate) fn start(&self, mut live: LiveSetup) -> anyhow::Result<LiveOptions> {
        match &self.hosts {
            Targets::List(list) => list.aim(&mut live.options),
            Targets::Names(names) => {
                live.options.targets.clone_from(names);
                live.options.target_positions.clear();
            }
        }
        start_live(live)
    }

    /// Collects the hosts over SSH with `options` (from [`Collect::start`]); hosts
    /// vCenter gave whose SSH refused are then judged from vCenter, in a session of their
    /// own with the run's login.
    pub(crate) fn collect(self, options: &LiveOptions) -> anyhow::Result<LiveRun> {
        let mut run = crate::live::collect_live(options)?;
        if let (Some((setup, login)), false) = (&self.vcenter, run.interrupted) {
            crate::vcenter::complete_refused(setup, login, &mut run.captures);
        }
        Ok(run)
    }
}
