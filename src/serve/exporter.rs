//! The exporter's state: the configuration in force, the probes, its own metrics and the
//! hosts of its vCenter groups; and what a `/probe` of a target means (which hosts, read
//! how), before the probes' machinery ([`super::scrape`]) runs it.
use super::config::{Config, InForce};
use super::metrics::Metrics;
use super::scrape::{render, Collector, InFlight, Outcome, Probes, Refused};
use super::vcenter::Fleet;
use crate::source::targets::{self, Meaning};
use crate::source::Via;
use pvrdma_engine::capture::{HostCapture, VmChoice};
use pvrdma_engine::diagnose::Selection;
use pvrdma_engine::report::prometheus::Scope;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::time::Instant;

/// What a reload changed: the keys applied, and those refused (with why).
#[derive(Debug, Default)]
pub struct Reload {
    pub applied: Vec<String>,
    pub refused: Vec<String>,
}

/// The server's state: configuration, probes, the metrics, the vCenter groups' hosts.
pub struct Exporter {
    /// Shared with the vCenter followers, which read it at every inventory read.
    config: Rc<InForce>,
    probes: Rc<Probes>,
    pub metrics: Arc<Metrics>,
    /// The hosts of the groups read from vCenter.
    pub vcenter: Rc<Fleet>,
}

impl Exporter {
    pub fn new(mut config: Config, collector: Box<dyn Collector>) -> Rc<Exporter> {
        let metrics = Arc::new(Metrics::new());
        prepare(&mut config);
        Rc::new(Exporter {
            probes: Rc::new(Probes::new(&config.limits, metrics.clone(), collector)),
            config: Rc::new(InForce::new(config)),
            metrics,
            vcenter: Rc::default(),
        })
    }

    /// The configuration in force.
    pub fn config(&self) -> Arc<Config> {
        self.config.get()
    }

    /// The configuration in force as the vCenter followers read it: replaced by a reload.
    pub fn config_in_force(&self) -> Rc<InForce> {
        self.config.clone()
    }

    /// Puts a new configuration in force (probes already running keep theirs): every key
    /// applies to the next probe or connection, except those read at start only
    /// ([`super::config::RESTART_ONLY`]), which keep the value in force. Says which changed keys were
    /// applied and which were not, and sets `pvrdma_doctor_config_reload_refused`.
    pub fn replace_config(&self, mut config: Config) -> Reload {
        prepare(&mut config);
        self.probes.resize_budget(config.limits.output_budget);
        let old = self.config();
        let mut report = Reload::default();
        let show = |a: Option<std::net::SocketAddr>| a.map_or_else(|| "(not set)".to_string(), |a| a.to_string());
        let listen = config.listen != old.listen;
        if listen {
            report.refused.push(format!(
                "listen: the file says {}; the server keeps the listener it started with ({} in the file then, or --listen) until it is restarted",
                show(config.listen),
                show(old.listen)
            ));
            config.listen = old.listen;
        }
        let max_hosts = self.probes.max_hosts();
        let hosts = config.limits.max_concurrent_hosts != max_hosts;
        if hosts {
            report.refused.push(format!(
                "limits.max_concurrent_hosts: the file says {}; the running server keeps {max_hosts} until it is restarted",
                config.limits.max_concurrent_hosts
            ));
            config.limits.max_concurrent_hosts = max_hosts;
        }
        report.applied = applied_limits(&old, &config);
        let [listen_refused, hosts_refused] = &self.metrics.config_reload_refused;
        listen_refused.set(u64::from(listen));
        hosts_refused.set(u64::from(hosts));
        self.config.set(config);
        self.metrics.config_loaded();
        report
    }

    /// The `/metrics` body.
    pub fn render_metrics(&self) -> String {
        let mut text = self.metrics.render(
            crate::ssh::client::open_connections(),
            self.probes.max_hosts(),
            self.config().limits.max_connections,
        );
        self.vcenter.render(&self.config(), &mut text, SystemTime::now());
        text
    }

    /// The deadline of a request that arrived at `start`: Prometheus' scrape timeout
    /// header minus the offset, else the default, never more than the maximum.
    pub fn deadline(&self, start: Instant, scrape_timeout_header: Option<&str>) -> Instant {
        let limits = self.config().limits.clone();
        let budget = scrape_timeout_header
            .and_then(|h| h.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .map(|t| t.saturating_sub(limits.timeout_offset))
            .unwrap_or(limits.default_timeout)
            .min(limits.max_timeout)
            .max(Duration::from_millis(100));
        start + budget
    }

    /// Answers `/probe?target=&module=` with the exposition text, or refuses it before
    /// anything is attempted. What the target means is the host source's to decide
    /// ([`crate::source::targets`]).
    pub async fn scrape(
        &self,
        target: &str,
        module: Option<&str>,
        start: Instant,
        deadline: Instant,
    ) -> Result<String, Refused> {
        let config = self.config();
        let offered = Offered {
            config: &config,
            fleet: &self.vcenter,
        };
        let (members, via, scope, vms) = match targets::meaning(target, &offered) {
            Meaning::Hosts { hosts, via, fleet, vms } => {
                let scope = if fleet { Scope::Fleet } else { Scope::SingleTarget };
                (hosts, via, scope, vms)
            }
            Meaning::Unavailable(why) => {
                self.vcenter.unavailable.inc();
                return Err(Refused::unavailable(why));
            }
            Meaning::NotAllowed => {
                self.metrics.probes_rejected.inc();
                return Err(Refused::not_allowed(format!(
                    "target {target:?} is not on the exporter's allow-list (targets: and groups: in its configuration, and the hosts of its vCenter groups); no connection was attempted"
                )));
            }
        };
        if via == Via::Api {
            let captures = self.vcenter.configuration(&members).map_err(|why| {
                self.vcenter.unavailable.inc();
                Refused::unavailable(why)
            })?;
            let judged = Judged { captures, scope, vms };
            return self.judge_configuration(&config, target, module, judged, start);
        }
        let (module_name, module) = config.module_for(target, module).map_err(|e| {
            self.metrics.probes_rejected.inc();
            Refused::not_allowed(e)
        })?;
        self.metrics.probes.inc();
        let _in_flight = InFlight::new(&self.metrics);
        let key = (target.to_string(), module_name.to_string());
        let selection = narrowed(&module.fleet_checks, vms.as_ref());
        let outcome = self.probes.run(key, members, module, selection, start, deadline).await;
        if !outcome.up {
            self.metrics.probe_failures.inc();
        }
        Ok(render(&outcome, scope, start.elapsed()))
    }

    /// A probe of a `no_ssh` vCenter group (or of a host only such groups have): the
    /// configuration last read from vCenter, judged now; no SSH connection.
    fn judge_configuration(
        &self,
        config: &Config,
        target: &str,
        module: Option<&str>,
        judged: Judged,
        start: Instant,
    ) -> Result<String, Refused> {
        let (_, module) = config.module_for(target, module).map_err(|e| {
            self.metrics.probes_rejected.inc();
            Refused::not_allowed(e)
        })?;
        self.metrics.probes.inc();
        let Judged { captures, scope, vms } = judged;
        let selection = narrowed(&module.fleet_checks, vms.as_ref());
        let outcome = Outcome {
            diagnosis: pvrdma_engine::diagnose::diagnose_selected(&captures, &selection),
            up: captures.iter().all(|c| c.error.is_none()),
            finished: self
                .vcenter
                .configuration_read_at(&captures)
                .unwrap_or_else(SystemTime::now),
            vcenter_read_stale: Some(self.vcenter.configuration_stale(&captures, SystemTime::now())),
        };
        if !outcome.up {
            self.metrics.probe_failures.inc();
        }
        Ok(render(&outcome, scope, start.elapsed()))
    }
}

/// What a probe judged from the configuration last read from vCenter judges: the hosts'
/// configuration, as one fleet or a host alone, and the VMs reported (`None`: every VM).
struct Judged {
    captures: Vec<HostCapture>,
    scope: Scope,
    vms: Option<VmChoice>,
}

/// A module's selection, narrowed to the VMs a target chose when it chose some, as `--vm`
/// narrows a run: their adapters, their VM checks and the transports between them.
fn narrowed(module: &Selection, vms: Option<&VmChoice>) -> Selection {
    match vms {
        Some(chosen) => module.clone().chosen(chosen),
        None => module.clone(),
    }
}

/// What the exporter offers to probe now, as the host source asks it: its configuration's
/// groups and targets, and the hosts its vCenter groups have.
struct Offered<'a> {
    config: &'a Config,
    fleet: &'a Fleet,
}

impl targets::Offer for Offered<'_> {
    fn group(&self, name: &str) -> Option<targets::Group> {
        if let Some(g) = self.config.groups.get(name) {
            return Some(targets::Group {
                hosts: Ok(g.members.clone()),
                via: Via::Ssh,
                vms: None,
            });
        }
        let hosts = self.fleet.members(name)?;
        Some(targets::Group {
            hosts,
            via: self.via(name),
            vms: self.fleet.chosen_vms(name),
        })
    }

    fn vcenter_groups_having(&self, host: &str) -> Vec<targets::Having> {
        self.config
            .vcenter
            .groups
            .keys()
            .filter(|name| {
                self.fleet
                    .members(name)
                    .and_then(Result::ok)
                    .is_some_and(|m| m.iter().any(|h| h == host))
            })
            .map(|name| targets::Having {
                via: self.via(name),
                vms: self.fleet.chosen_vms_on(name, host),
            })
            .collect()
    }

    fn listed(&self, host: &str) -> bool {
        self.config.hosts.contains(host)
    }
}

impl Offered<'_> {
    /// How vCenter group `name` reads its hosts.
    fn via(&self, name: &str) -> Via {
        match self.config.vcenter.groups.get(name).is_some_and(|g| g.no_ssh) {
            true => Via::Api,
            false => Via::Ssh,
        }
    }
}

/// The limits a reload changed from `old` to `new`, each as `key: before -> after`.
fn applied_limits(old: &Config, new: &Config) -> Vec<String> {
    let (o, n) = (&old.limits, &new.limits);
    let secs = pvrdma_engine::duration::text;
    let mut applied = Vec::new();
    for (key, before, after) in [
        (
            "limits.max_connections",
            o.max_connections.to_string(),
            n.max_connections.to_string(),
        ),
        ("limits.timeout_offset", secs(o.timeout_offset), secs(n.timeout_offset)),
        (
            "limits.default_timeout",
            secs(o.default_timeout),
            secs(n.default_timeout),
        ),
        ("limits.max_timeout", secs(o.max_timeout), secs(n.max_timeout)),
        (
            "limits.output_budget",
            o.output_budget.to_string(),
            n.output_budget.to_string(),
        ),
    ] {
        if before != after {
            applied.push(format!("{key}: {before} -> {after}"));
        }
    }
    applied
}

/// Sets up each module's shared reading of its ssh_config and identity files: once per
/// configuration load, not per probe.
fn prepare(config: &mut Config) {
    for module in config.modules.values_mut() {
        module.live.prepare();
    }
}
