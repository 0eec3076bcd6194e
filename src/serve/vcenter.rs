//! The exporter follows vCenter: the hosts of each vCenter group (`groups: NAME:
//! {vcenter: …}`) are read from its vCenter when the server starts, every `refresh:`
//! after, and again on SIGHUP. Those hosts may be probed one by one, the group as one
//! fleet (`/probe?target=NAME`), and Prometheus finds them at `/sd` (HTTP service
//! discovery, see [`expose`]).
//!
//! Each vCenter is followed by the host source's one follower ([`Follower`], its rounds
//! run by [`crate::source::follow::follow_every`]): one session per vCenter, kept between
//! reads and logged out when the server stops or reloads. This module keeps what the reads
//! gave each group and words them for the log. A read that fails keeps the hosts read
//! last, so a vCenter outage never empties Prometheus' targets; `pvrdma_doctor_vcenter_up`
//! and the log say so. Before a first successful read a group has no hosts: a probe of it
//! answers HTTP 503 and says why, `/sd` lists nothing for it.
use super::config::vcenter::{Vcenter, KEYS};
use super::config::{Config, InForce};
use super::metrics::Value;
use crate::source::follow::{Feed, Followed, Follower, Logout, Snapshot, STOP_GRACE};
use crate::source::Reading;
use pvrdma_engine::capture::{HostCapture, VmChoice};
use pvrdma_vsphere::{Selected, Selection};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, SystemTime};
use tokio::sync::watch;

mod configs;
pub mod expose;
mod freshness;

/// A host of a vCenter group, where vCenter has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    pub datacenter: String,
    /// `None`: a standalone host.
    pub cluster: Option<String>,
    /// The cluster's inventory path, which tells apart same-named clusters of one
    /// datacenter filed in different folders.
    pub cluster_path: Option<String>,
    /// The chosen VMs vCenter has running on it (a `vm:` group's; empty for a group that
    /// chooses no VM).
    pub vms: Vec<String>,
}

/// One group's hosts as last read.
#[derive(Debug)]
struct GroupState {
    /// The vCenter they were read from and the selection followed there: a reload that
    /// changes either forgets them.
    vcenter: String,
    followed: Followed,
    /// `None` until a read of its vCenter has selected them once.
    hosts: Option<Vec<Member>>,
    /// A `vm:` group's chosen VMs as the last read placed them (those on hosts it skipped
    /// apart); `None` for a group that chooses no VM, or before a first read.
    vms: Option<VmChoice>,
    /// Whether the last read of its vCenter gave its hosts (else they are older).
    current: bool,
    /// Why the hosts are not current (or why there are none), for the log and a 503.
    why: Option<String>,
    /// The last time a read selected them.
    read_at: Option<SystemTime>,
    /// When the exporter began following it (start, or the reload that changed it): a
    /// first read that takes longer than its vCenter's timeout leaves it stale.
    since: SystemTime,
}

/// One vCenter's reads.
#[derive(Debug)]
struct VcenterState {
    source: Vcenter,
    /// The last read succeeded.
    up: bool,
    last_success: Option<SystemTime>,
    reads: u64,
    failures: u64,
}

/// The hosts every vCenter group has now, and each vCenter's reads: written by the
/// followers, read by probes, `/sd` and `/metrics`. The exporter holds it.
#[derive(Debug, Default)]
pub struct Fleet {
    groups: RefCell<BTreeMap<String, GroupState>>,
    vcenters: RefCell<BTreeMap<String, VcenterState>>,
    /// Reads from followers of an older configuration are ignored.
    generation: Cell<u64>,
    /// Probes of a vCenter group refused (HTTP 503) for want of hosts.
    pub unavailable: Value,
    /// The configuration of the hosts of `no_ssh` groups, by host, as last read.
    configs: RefCell<BTreeMap<String, configs::ReadConfiguration>>,
}

impl GroupState {
    fn new(vcenter: &str, selection: &Selection, since: SystemTime) -> GroupState {
        GroupState {
            vcenter: vcenter.to_string(),
            followed: Followed::new(selection.clone()),
            hosts: None,
            vms: None,
            current: false,
            why: None,
            read_at: None,
            since,
        }
    }
}

impl GroupState {
    /// A failed read of its vCenter (`why`): the hosts read last stay, no longer current.
    /// Says what the group keeps.
    fn unread(&mut self, name: &str, vcenter: &str, label: &str, why: &str, now: SystemTime) -> String {
        self.current = false;
        self.why = Some(format!("the last read of vCenter {vcenter} ({label}) failed: {why}"));
        match (&self.hosts, self.read_at) {
            (Some(h), Some(at)) => format!(
                "group {name} keeps its {} host(s) read {} ago",
                h.len(),
                humantime::format_duration(ago(at, now))
            ),
            _ => format!("group {name} has no hosts yet (a probe of it answers 503)"),
        }
    }

    /// Takes what a read of its vCenter selects for it; the first read names its hosts
    /// and those skipped, later ones what moved.
    fn read(&mut self, config: &Config, name: &str, vcenter: &str, reading: &Reading, lines: &mut Vec<String>) {
        let selected = &reading.found.selected;
        let members = probeable(config, name, selected, lines);
        match &reading.moves {
            None => {
                let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
                lines.push(format!(
                    "group {name}: {} host(s) from vCenter {vcenter}: {}",
                    members.len(),
                    pvrdma_nodeset::fold(&names)
                ));
                lines.extend(
                    selected
                        .skipped
                        .iter()
                        .map(|h| format!("group {name}: skipped {}: {}", h.name, h.reason)),
                );
            }
            Some(moves) => lines.extend(moves.iter().map(|m| format!("group {name}: {}", m.line()))),
        }
        self.why = members.is_empty().then(|| {
            format!(
                "vCenter {vcenter} selects no host for it now ({} skipped: {})",
                selected.skipped.len(),
                selected
                    .skipped
                    .iter()
                    .map(|h| format!("{} {}", h.name, h.reason))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        });
        self.hosts = Some(members);
        self.vms = reading.vms();
        self.current = true;
        self.read_at = Some(reading.read_at);
    }
}

impl Fleet {
    /// Aligns the state with `config` (start, reload) and starts a new generation. A
    /// vCenter key still followed keeps its counters and its last read's outcome,
    /// whatever its settings now (a new pin, another timeout: `reads_total` and
    /// `read_failures_total` are counters, which a reload must not reset); a group of a
    /// vCenter reached the same way, selecting the same hosts, keeps them; the others
    /// start with nothing.
    pub fn sync(&self, config: &Config) -> u64 {
        let mut vcenters = self.vcenters.borrow_mut();
        let mut old = std::mem::take(&mut *vcenters);
        // The vCenters whose hosts a group may keep: reached as before, and read.
        let mut same = Vec::new();
        for (name, vc) in config.vcenter.followed() {
            let state = match old.remove(name) {
                Some(mut s) => {
                    if vc.same_source(&s.source) && s.reads > 0 {
                        same.push(name.as_str());
                    }
                    s.source = vc.clone();
                    s
                }
                None => VcenterState {
                    source: vc.clone(),
                    up: false,
                    last_success: None,
                    reads: 0,
                    failures: 0,
                },
            };
            vcenters.insert(name.clone(), state);
        }
        let mut groups = self.groups.borrow_mut();
        let mut old = std::mem::take(&mut *groups);
        for (name, g) in &config.vcenter.groups {
            let same_vcenter = same.contains(&g.vcenter.as_str());
            let state = old
                .remove(name)
                .filter(|s| same_vcenter && s.vcenter == g.vcenter && s.followed.selection() == &g.selection)
                .unwrap_or_else(|| GroupState::new(&g.vcenter, &g.selection, SystemTime::now()));
            groups.insert(name.clone(), state);
        }
        let generation = self.generation.get() + 1;
        self.generation.set(generation);
        generation
    }

    /// Takes one read of vCenter `vcenter` (its inventory, or why it failed, at `now`)
    /// for each group it feeds; the log lines to write. A read from an older generation
    /// (a follower stopped by a reload) is ignored.
    pub(crate) fn apply(
        &self,
        config: &Config,
        generation: u64,
        vcenter: &str,
        read: Result<&Snapshot, String>,
        now: SystemTime,
    ) -> Vec<String> {
        if generation != self.generation.get() {
            return Vec::new();
        }
        let mut lines = Vec::new();
        let mut vcenters = self.vcenters.borrow_mut();
        let Some(vc) = vcenters.get_mut(vcenter) else {
            return lines;
        };
        let label = vc.source.endpoint.label();
        vc.reads += 1;
        let mut groups = self.groups.borrow_mut();
        let mine = groups.iter_mut().filter(|(_, g)| g.vcenter == vcenter);
        let snapshot = match read {
            Ok(snapshot) => snapshot,
            Err(why) => {
                vc.up = false;
                vc.failures += 1;
                let kept: Vec<String> = mine
                    .map(|(name, g)| g.unread(name, vcenter, &label, &why, now))
                    .collect();
                lines.push(format!(
                    "vCenter {vcenter} ({label}): the inventory cannot be read: {why}; {}; read again in {}",
                    kept.join(", "),
                    humantime::format_duration(vc.source.refresh)
                ));
                return lines;
            }
        };
        let recovered = !vc.up && vc.reads > 1;
        vc.up = true;
        vc.last_success = Some(now);
        if recovered {
            lines.push(format!("vCenter {vcenter} ({label}) answers again"));
        }
        for (name, g) in mine {
            match g.followed.reading(&label, snapshot) {
                Ok(reading) => g.read(config, name, vcenter, &reading, &mut lines),
                Err(e) => {
                    g.current = false;
                    let keeps = match &g.hosts {
                        Some(h) => format!("keeps its {} last known host(s)", h.len()),
                        None => "has no hosts yet".to_string(),
                    };
                    let e = e.worded(&KEYS);
                    lines.push(format!("group {name}: vCenter {vcenter}: {e}; the group {keeps}"));
                    g.why = Some(e);
                }
            }
        }
        lines
    }

    /// The VMs vCenter group `group` chose, as its last read placed them: `None` when it
    /// is not one, or chooses no VM (it reports every VM of its hosts).
    pub fn chosen_vms(&self, group: &str) -> Option<VmChoice> {
        self.groups.borrow().get(group)?.vms.clone()
    }

    /// The VMs vCenter group `group` chose that run on `host` as its last read placed
    /// them: `None` when it is not one, does not have `host`, or chooses no VM.
    pub fn chosen_vms_on(&self, group: &str, host: &str) -> Option<Vec<String>> {
        let groups = self.groups.borrow();
        let g = groups.get(group)?;
        g.vms.as_ref()?;
        let member = g.hosts.as_ref()?.iter().find(|m| m.name == host)?;
        Some(member.vms.clone())
    }

    /// The hosts of vCenter group `group`: `None` when it is not one; an error saying
    /// why when it has none to probe (never read yet, or none selected now).
    pub fn members(&self, group: &str) -> Option<Result<Vec<String>, String>> {
        let groups = self.groups.borrow();
        let g = groups.get(group)?;
        Some(match &g.hosts {
            Some(h) if !h.is_empty() => Ok(h.iter().map(|m| m.name.clone()).collect()),
            Some(_) => Err(format!(
                "group {group:?} has no host to probe: {}",
                g.why.as_deref().unwrap_or("vCenter selects none")
            )),
            None => Err(format!(
                "group {group:?} has no hosts yet: they have not been read from vCenter {} ({}); see the exporter's log and pvrdma_doctor_vcenter_up",
                g.vcenter,
                g.why.as_deref().unwrap_or("the first read is under way")
            )),
        })
    }
}

/// How long before `now` a read happened (zero for a clock that went back).
fn ago(at: SystemTime, now: SystemTime) -> Duration {
    Duration::from_secs(now.duration_since(at).map_or(0, |d| d.as_secs()))
}

/// The selected hosts a probe can name: a name a URL cannot carry, or that is also a
/// group's, is left out and said so.
fn probeable(config: &Config, group: &str, selected: &Selected, lines: &mut Vec<String>) -> Vec<Member> {
    let mut members = Vec::new();
    for h in &selected.hosts {
        let refused = match super::config::check_name(&h.name) {
            Err(e) => Some(e),
            Ok(()) if config.groups.contains_key(&h.name) || config.vcenter.groups.contains_key(&h.name) => {
                Some("it is also the name of a group: a probe could not tell which is meant".to_string())
            }
            Ok(()) => None,
        };
        match refused {
            Some(why) => lines.push(format!("group {group}: host {:?} left out: {why}", h.name)),
            None => members.push(Member {
                name: h.name.clone(),
                datacenter: h.datacenter.clone(),
                cluster: h.cluster.clone(),
                cluster_path: h.cluster_path.clone(),
                vms: h.vms.clone(),
            }),
        }
    }
    members
}

/// The followers of the configuration in force: one task per vCenter a group reads, each
/// with its own session.
pub struct Followers {
    fleet: Rc<Fleet>,
    config: Rc<InForce>,
    stop: watch::Sender<bool>,
    tasks: tokio::task::JoinSet<()>,
}

impl Followers {
    /// Starts following the vCenters of the exporter's configuration (on the current
    /// `LocalSet`).
    pub fn start(fleet: Rc<Fleet>, config: Rc<InForce>) -> Followers {
        let mut f = Followers {
            fleet,
            config,
            stop: watch::channel(false).0,
            tasks: tokio::task::JoinSet::new(),
        };
        f.spawn();
        f
    }

    fn spawn(&mut self) {
        let config = self.config.get();
        let generation = self.fleet.sync(&config);
        let (tx, rx) = watch::channel(false);
        for (name, vc) in config.vcenter.followed() {
            let fed = Fed {
                fleet: self.fleet.clone(),
                config: self.config.clone(),
                generation,
                name: name.clone(),
            };
            match Follower::new(vc.client_config()) {
                Ok(follower) => {
                    let rounds = crate::source::follow::follow_every(follower, vc.refresh, rx.clone(), fed);
                    self.tasks.spawn_local(rounds);
                }
                // The CA file cannot be used: nothing is read until a reload mends it.
                Err(e) => {
                    let mut fed = fed;
                    fed.inventory(Err(&e));
                }
            }
        }
        self.stop = tx;
    }

    /// After a reload (SIGHUP): the sessions in use are logged out (in the background) and
    /// every vCenter of the configuration now in force is read again at once.
    pub fn restart(&mut self) {
        let _ = self.stop.send(true);
        while self.tasks.try_join_next().is_some() {}
        self.spawn();
    }

    /// Stops every follower and waits for their logouts (each bounded).
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        while self.tasks.join_next().await.is_some() {}
    }
}

fn log(line: &str) {
    eprint!("{}", crate::terminal::stderr_message("pvrdma-doctor: ", line));
}

/// What a follower of vCenter `name` feeds: the fleet's state, with the configuration in
/// force, for the generation the follower belongs to.
struct Fed {
    fleet: Rc<Fleet>,
    config: Rc<InForce>,
    generation: u64,
    name: String,
}

impl Feed for Fed {
    fn inventory(&mut self, read: Result<&Snapshot, &pvrdma_vsphere::Error>) -> Vec<String> {
        let config = self.config.get();
        let now = read.map_or_else(|_| SystemTime::now(), |s| s.read_at);
        let worded = read.map_err(|e| e.worded(&KEYS));
        let lines = self.fleet.apply(&config, self.generation, &self.name, worded, now);
        lines.iter().for_each(|l| log(l));
        match read {
            Ok(_) => self.fleet.api_hosts(&config, &self.name),
            Err(_) => Vec::new(),
        }
    }

    fn configuration(&mut self, hosts: &[String], read: Result<Vec<HostCapture>, pvrdma_vsphere::Error>) {
        match read {
            Ok(captures) => self
                .fleet
                .store_configuration(self.generation, &self.name, captures, SystemTime::now()),
            Err(e) => log(&format!(
                "vCenter {}: the configuration of {} cannot be read: {}; probes judge the last one read",
                self.name,
                pvrdma_nodeset::fold(hosts),
                e.worded(&KEYS)
            )),
        }
    }

    fn closed(&mut self, logout: Logout) {
        let name = &self.name;
        log(&match logout {
            Logout::Done => format!("vCenter {name}: session logged out"),
            Logout::Failed(e) => format!("vCenter {name}: the logout failed: {}", e.worded(&KEYS)),
            Logout::NoAnswer => format!(
                "vCenter {name}: no answer to the logout within {}s; vCenter ends the session when it times out",
                STOP_GRACE.as_secs()
            ),
        });
    }
}

#[cfg(test)]
mod tests;
