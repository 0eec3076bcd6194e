//! `watch`'s rounds: before each, the source is read again (a hosts file, the demo's
//! scenario, vCenter's inventory in the watch's one session), then the round's hosts are
//! collected over SSH (those whose SSH refuses completed from vCenter) or, with
//! `--no-ssh`, judged from the configuration read with the inventory. When vCenter cannot
//! be read after the first round, the hosts of its last inventory (or the configuration
//! last read) stand, and the round says so.
use super::follow::{Followed, Follower};
use super::{start_live, HostList, HostSource, LiveSetup, Reading, Via};
use crate::live::{collect_live, LiveOptions, LiveRun};
use crate::vcenter::VcenterSetup;
use anyhow::Context;
use pvrdma_engine::capture::HostCapture;
use std::time::{Instant, SystemTime};
use tokio::runtime::Runtime;
use tokio::signal::unix::Signal;

/// A watch's rounds: where each round's hosts come from and how they are read.
pub(crate) struct Rounds {
    ssh: Ssh,
    vcenter: Option<Following>,
}

/// How the round's hosts are collected over SSH.
enum Ssh {
    Live(LiveOptions),
    /// The demo's simulated hosts, kept running across rounds; the scenario directory, if
    /// any, is read again before each round.
    Demo {
        fleet: crate::demo::SimFleet,
        live: LiveOptions,
        scenario: Option<std::path::PathBuf>,
        /// The hosts already said to be left out of the simulation (said once).
        warned: Vec<String>,
    },
}

/// vCenter as a watch follows it: one session for the whole watch.
pub(crate) struct Following {
    follower: Follower,
    followed: Followed,
    setup: VcenterSetup,
    via: Via,
    /// `--no-ssh`: the configuration last read, judged again when a read fails.
    last_api: Vec<HostCapture>,
    /// Whether the inventory was read before (the first read has nothing to fall back on).
    read_before: bool,
    /// The VMs the last reading chose (VM-first).
    vms: Option<pvrdma_engine::capture::VmChoice>,
}

/// What could not be read from vCenter in a round, the last read standing instead.
pub(crate) enum Unread {
    /// The inventory: the hosts of the last one are watched.
    Inventory(anyhow::Error),
    /// The hosts' configuration (`--no-ssh`): the last one read is judged.
    Configuration(anyhow::Error),
}

/// What a round read from its source, before its hosts are collected.
pub(crate) struct Round {
    /// vCenter's reading this round (`None`: hosts named, or vCenter unread).
    pub(crate) reading: Option<Reading>,
    pub(crate) unread: Option<Unread>,
}

impl Following {
    /// The step of a watch that logs in to vCenter: reads the password and prepares the
    /// session it keeps (no connection yet); `None` when the hosts do not come from
    /// vCenter.
    pub(crate) fn start(source: &HostSource) -> anyhow::Result<Option<Following>> {
        let HostSource::Vcenter(vc) = source else {
            return Ok(None);
        };
        let login = crate::vcenter::login_config(&vc.setup)?;
        Ok(Some(Following {
            follower: Follower::new(login).map_err(crate::vcenter::VsphereError)?,
            followed: super::follow::Followed::new(vc.setup.selection.clone()),
            setup: vc.setup.clone(),
            via: vc.via,
            last_api: Vec::new(),
            read_before: false,
            vms: None,
        }))
    }
}

impl Rounds {
    /// Sets up the rounds: the demo's simulated hosts started, or the hosts named (stdin
    /// read once: every round watches the same hosts) with the SSH password read.
    pub(crate) fn start(source: &HostSource, live: &LiveSetup, vcenter: Option<Following>) -> anyhow::Result<Rounds> {
        let mut options = live.options.clone();
        let ssh = match source {
            HostSource::Demo { demo, hosts } => demo_fleet(demo, hosts, options)?,
            HostSource::List(list) => {
                anyhow::ensure!(
                    !list.is_empty(),
                    "no hosts to watch. Try `pvrdma-doctor watch esx01 esx02 --interval 5m`, or `pvrdma-doctor watch --demo`"
                );
                hosts_once(list, &mut options)?;
                Ssh::Live(start_live(LiveSetup {
                    options,
                    ask_password: live.ask_password,
                })?)
            }
            HostSource::Vcenter(_) | HostSource::Capture(_) => Ssh::Live(start_live(LiveSetup {
                options,
                ask_password: live.ask_password,
            })?),
        };
        Ok(Rounds { ssh, vcenter })
    }

    fn live(&mut self) -> &mut LiveOptions {
        match &mut self.ssh {
            Ssh::Live(live) | Ssh::Demo { live, .. } => live,
        }
    }

    /// How many hosts a round covers, for the "watching" line.
    pub(crate) fn hosts(&self) -> usize {
        match &self.ssh {
            Ssh::Live(live) | Ssh::Demo { live, .. } => live.targets.len(),
        }
    }

    /// Whether the hosts are the demo's simulated ones.
    pub(crate) fn simulated(&self) -> bool {
        matches!(self.ssh, Ssh::Demo { .. })
    }

    /// The VMs the rounds report on: a VM-first watch's, as vCenter last chose them.
    pub(crate) fn vms(&self) -> Option<&pvrdma_engine::capture::VmChoice> {
        self.vcenter.as_ref().and_then(|v| v.vms.as_ref())
    }

    /// The progress bar is for the first, full report; later rounds stay quiet.
    pub(crate) fn quiet(&mut self) {
        self.live().progress = false;
    }

    /// Reads what this round diagnoses: vCenter's inventory (and with `--no-ssh` the
    /// hosts' configuration) in the kept session. `Ok(None)` when Ctrl-C came first;
    /// `Err` when vCenter could not be read on the first round (nothing to fall back on).
    pub(crate) fn read(&mut self, waiter: &Runtime, interrupt: &mut Signal) -> anyhow::Result<Option<Round>> {
        let Some(vc) = self.vcenter.as_mut() else {
            return Ok(Some(Round {
                reading: None,
                unread: None,
            }));
        };
        let label = vc.follower.label();
        let read = waiter.block_on(async {
            tokio::select! {
                r = vc.read(&label) => Some(r),
                _ = interrupt.recv() => None,
            }
        });
        let Some(read) = read else {
            return Ok(None);
        };
        let first = !std::mem::replace(&mut vc.read_before, true);
        let round = match read {
            Err(e) if first => return Err(e),
            Err(e) => Round {
                reading: None,
                unread: Some(Unread::Inventory(e)),
            },
            Ok((reading, configuration)) => {
                vc.vms = reading.vms();
                let unread = match configuration {
                    Some(Ok(captures)) => {
                        vc.last_api = captures;
                        None
                    }
                    Some(Err(e)) => Some(Unread::Configuration(e)),
                    None => None,
                };
                let live = self.live();
                live.targets = reading.hosts();
                live.target_positions.clear();
                Round {
                    reading: Some(reading),
                    unread,
                }
            }
        };
        Ok(Some(round))
    }

    /// The round's captures: the configuration last read (`--no-ssh`), or the hosts
    /// collected over SSH, those whose SSH refused completed from vCenter in the kept
    /// session. `started`: when the round began. `Ok(None)` when Ctrl-C came first.
    pub(crate) fn collect(
        &mut self,
        started: Instant,
        waiter: &Runtime,
        interrupt: &mut Signal,
    ) -> anyhow::Result<Option<LiveRun>> {
        let no_target = self.hosts() == 0;
        match &self.vcenter {
            Some(vc) if vc.via == Via::Api => return Ok(Some(api_run(vc.last_api.clone(), started))),
            // Every host left the selection (into maintenance, out of the cluster): the
            // round has nothing to collect, and the watch goes on until they come back.
            Some(_) if no_target => return Ok(Some(api_run(Vec::new(), started))),
            _ => {}
        }
        let mut run = self.ssh.collect()?;
        // Hosts whose SSH refused are judged from vCenter, as a one-shot run does.
        if let (Some(vc), false) = (self.vcenter.as_mut(), run.interrupted) {
            let setup = &vc.setup;
            let completed = waiter.block_on(async {
                tokio::select! {
                    () = vc.follower.complete_refused(&mut run.captures, |e| setup.explain(e)) => true,
                    _ = interrupt.recv() => false,
                }
            });
            if !completed {
                return Ok(None);
            }
        }
        Ok(Some(run))
    }

    /// Logs vCenter's session out (the watch is ending).
    pub(crate) fn close(&mut self, waiter: &Runtime) {
        if let Some(vc) = self.vcenter.as_mut() {
            vc.close(waiter);
        }
    }
}

impl Following {
    /// The inventory and what it selects, and with `--no-ssh` the configuration of the
    /// hosts selected, in the same session.
    async fn read(&mut self, label: &str) -> anyhow::Result<(Reading, Option<anyhow::Result<Vec<HostCapture>>>)> {
        let snapshot = self.follower.read().await.map_err(|e| self.setup.explain(e))?;
        let reading = self
            .followed
            .reading(label, &snapshot)
            .map_err(|e| crate::vcenter::selection_error(&e))
            .with_context(|| format!("vCenter {label}"))?;
        let configuration = match self.via {
            Via::Api => Some(self.configuration(&reading.hosts()).await),
            Via::Ssh => None,
        };
        Ok((reading, configuration))
    }

    async fn configuration(&mut self, hosts: &[String]) -> anyhow::Result<Vec<HostCapture>> {
        let clock = std::time::Instant::now();
        let captures = self
            .follower
            .configuration(hosts)
            .await
            .map_err(|e| self.setup.explain(e))?;
        tracing::info!(
            "read the configuration of {} host(s) from vCenter {} in {} ms",
            hosts.len(),
            self.setup.endpoint.label(),
            clock.elapsed().as_millis()
        );
        Ok(captures)
    }

    /// Logs the session out; a failure is said on stderr.
    pub(crate) fn close(&mut self, waiter: &Runtime) {
        if let Some(Err(e)) = waiter.block_on(self.follower.close()) {
            eprintln!(
                "pvrdma-doctor: could not log out of vCenter {}: {}",
                self.setup.endpoint.label(),
                crate::vcenter::VsphereError(e)
            );
        }
    }
}

impl Ssh {
    /// Collects the round's hosts; the demo reads its scenario again first.
    fn collect(&mut self) -> anyhow::Result<LiveRun> {
        match self {
            Ssh::Live(live) => collect_live(live),
            Ssh::Demo {
                fleet,
                live,
                scenario,
                warned,
            } => {
                if let Some(dir) = scenario {
                    reload_scenario(fleet, dir, warned);
                }
                let run = collect_live(live);
                fleet.forget_commands();
                run
            }
        }
    }
}

/// Reads the demo's scenario directory again; a host it adds cannot be served (said once).
fn reload_scenario(fleet: &crate::demo::SimFleet, dir: &std::path::Path, warned: &mut Vec<String>) {
    match fleet.reload(dir) {
        Ok(mut left_out) => {
            left_out.retain(|h| !warned.contains(h));
            if !left_out.is_empty() {
                eprintln!(
                    "pvrdma-doctor: {} not served as the scenario now says: the simulated hosts and their open ports are those of the scenario at start",
                    pvrdma_nodeset::fold(&left_out)
                );
                warned.extend(left_out);
            }
        }
        Err(e) => {
            eprintln!("pvrdma-doctor: cannot read the scenario again ({e:#}); the hosts keep their previous answers")
        }
    }
}

/// `watch --demo`: the simulated hosts started, said on stderr; the hosts named pick
/// among them.
fn demo_fleet(demo: &crate::demo::DemoOptions, hosts: &HostList, options: LiveOptions) -> anyhow::Result<Ssh> {
    let fleet = crate::demo::start_fleet(demo, options.probe.is_some())?;
    eprintln!(
        "pvrdma-doctor: watch --demo: {} simulated ESXi hosts ({}) on 127.0.0.1, no real host is contacted{}",
        fleet.host_names().len(),
        pvrdma_nodeset::fold(&fleet.host_names()),
        match &demo.scenario {
            Some(dir) => format!(
                "; {} is read again every round: edit a host's files there to break or mend it",
                dir.display()
            ),
            None => "; --scenario DIR serves a folder you can edit while it runs".to_string(),
        }
    );
    let mut live = fleet.live_options(options);
    if !hosts.targets.is_empty() {
        live.targets.clone_from(&hosts.targets);
    }
    Ok(Ssh::Demo {
        fleet,
        live,
        scenario: demo.scenario.clone(),
        warned: Vec::new(),
    })
}

/// Aims `options` at the hosts named. Hosts from stdin are read once: every round
/// watches the same hosts (a hosts file is read again each round, so editing it changes
/// what is watched).
fn hosts_once(list: &HostList, options: &mut LiveOptions) -> anyhow::Result<()> {
    list.aim(options);
    let from_stdin = options.hosts_file.as_deref() == Some(std::path::Path::new("-"));
    if from_stdin || options.targets.iter().any(|h| h == "-") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text)
            .context("cannot read the hosts from stdin")?;
        options.targets.retain(|h| h != "-");
        options.targets.extend(crate::hosts::specs_from_text(&text));
        options.target_positions.clear();
    }
    if from_stdin {
        options.hosts_file = None;
    }
    Ok(())
}

/// A round judged from the vSphere API (`captures`) as a run.
fn api_run(captures: Vec<HostCapture>, started: Instant) -> LiveRun {
    let now = SystemTime::now();
    LiveRun::from_api(captures, now.checked_sub(started.elapsed()).unwrap_or(now), now)
}
