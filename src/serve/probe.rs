//! One `/probe`: the allow-list, single flight per target, the global cap on hosts being
//! collected, and the deadline. Everything here runs on the server's one thread (a
//! `LocalSet`), as a live run does.
//!
//! Concurrent scrapes of one target and module (two Prometheus replicas, a retry) share
//! one collection; the first starts it, with its own deadline. A request whose deadline
//! passes first still gets an answer: the hosts marked as timed out, `pvrdma_up 0`. No
//! result is kept once it has been handed out, so every scrape sees a fresh collection
//! and a VM that vanished leaves no series behind.
use super::config::{Config, Module};
use super::metrics::Metrics;
use crate::collect::ssh::{ProcessBudget, RunBudget};
use crate::collect::{CaptureSource, ErrorKind, Failure, HostCapture};
use crate::diagnose::Diagnosis;
use crate::live::LiveOptions;
use crate::report::prometheus::{PrometheusOptions, Scope};
use futures::future::LocalBoxFuture;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::{watch, Semaphore};
use tokio::time::Instant;

/// What collects hosts: the live SSH collection, or a stand-in in tests.
pub trait Collector {
    /// Collects `live.targets`; every target gets a capture, failures included.
    fn collect(&self, live: LiveOptions) -> LocalBoxFuture<'static, Vec<HostCapture>>;
}

/// The real thing: [`crate::live::collect_live_async`].
pub struct LiveCollector;

impl Collector for LiveCollector {
    fn collect(&self, live: LiveOptions) -> LocalBoxFuture<'static, Vec<HostCapture>> {
        Box::pin(async move {
            match crate::live::collect_live_async(&live).await {
                Ok(run) => run.captures,
                Err(e) => failed_captures(&live.targets, ErrorKind::Config, &format!("{e:#}")),
            }
        })
    }
}

/// A shared collection's result.
#[derive(Debug)]
pub struct Outcome {
    pub diagnosis: Diagnosis,
    /// Every host was reached and read before the deadline.
    pub up: bool,
    pub finished: SystemTime,
}

/// Why a probe request is refused (HTTP 400): nothing was attempted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

type Key = (String, String);
type Pending = watch::Receiver<Option<Arc<Outcome>>>;

/// The server's state: configuration, collections in flight, the host slots, the metrics.
pub struct Engine {
    config: RefCell<Arc<Config>>,
    inflight: RefCell<HashMap<Key, Pending>>,
    slots: Arc<Semaphore>,
    max_hosts: usize,
    /// `limits.output_budget`: one pool for the outputs of every probe in flight.
    output_budget: Arc<ProcessBudget>,
    pub metrics: Arc<Metrics>,
    collector: Box<dyn Collector>,
}

impl Engine {
    pub fn new(mut config: Config, collector: Box<dyn Collector>) -> Rc<Engine> {
        let max_hosts = config.limits.max_concurrent_hosts;
        prepare(&mut config);
        Rc::new(Engine {
            output_budget: ProcessBudget::new(config.limits.output_budget),
            config: RefCell::new(Arc::new(config)),
            inflight: RefCell::new(HashMap::new()),
            slots: Arc::new(Semaphore::new(max_hosts)),
            max_hosts,
            metrics: Arc::new(Metrics::new()),
            collector,
        })
    }

    /// The configuration in force.
    pub fn config(&self) -> Arc<Config> {
        self.config.borrow().clone()
    }

    /// Puts a new configuration in force (probes already running keep theirs). The host
    /// cap is sized at start: a different `max_concurrent_hosts` needs a restart, which
    /// the returned warning says.
    pub fn replace_config(&self, mut config: Config) -> Option<String> {
        prepare(&mut config);
        self.output_budget.resize(config.limits.output_budget);
        let warning = (config.limits.max_concurrent_hosts != self.max_hosts).then(|| {
            format!(
                "limits.max_concurrent_hosts changed to {}; the running server keeps {} until it is restarted",
                config.limits.max_concurrent_hosts, self.max_hosts
            )
        });
        *self.config.borrow_mut() = Arc::new(config);
        self.metrics.config_loaded();
        warning
    }

    /// The `/metrics` body.
    pub fn render_metrics(&self) -> String {
        self.metrics
            .render(crate::ssh::client::open_connections(), self.max_hosts)
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
    /// anything is attempted.
    pub async fn probe(
        self: &Rc<Self>,
        target: &str,
        module: Option<&str>,
        start: Instant,
        deadline: Instant,
    ) -> Result<String, Refused> {
        let config = self.config();
        let (members, scope) = if let Some(g) = config.groups.get(target) {
            (g.members.clone(), Scope::Fleet)
        } else if config.hosts.contains(target) {
            (vec![target.to_string()], Scope::SingleTarget)
        } else {
            self.metrics.probes_rejected.inc();
            return Err(Refused(format!(
                "target {target:?} is not on the exporter's allow-list (targets: and groups: in its configuration); no connection was attempted"
            )));
        };
        let (module_name, module) = config.module_for(target, module).map_err(|e| {
            self.metrics.probes_rejected.inc();
            Refused(e)
        })?;
        self.metrics.probes.inc();
        let _in_flight = InFlight::new(&self.metrics);
        let key = (target.to_string(), module_name.to_string());
        let existing = self.inflight.borrow().get(&key).cloned();
        let mut pending = match existing {
            Some(rx) => {
                self.metrics.probes_shared.inc();
                rx
            }
            None => self.start_collection(key, members.clone(), module.clone(), deadline),
        };
        let waited = tokio::time::timeout_at(deadline, pending.wait_for(Option::is_some)).await;
        let outcome: Arc<Outcome> = match waited {
            Ok(Ok(v)) => v.clone().unwrap_or_else(|| self.expired(&members, deadline - start)),
            _ => {
                self.metrics.probes_deadline_exceeded.inc();
                self.expired(&members, deadline - start)
            }
        };
        if !outcome.up {
            self.metrics.probe_failures.inc();
        }
        Ok(render(&outcome, scope, start.elapsed()))
    }

    /// What a probe whose deadline passed answers: every host timed out.
    fn expired(&self, members: &[String], budget: Duration) -> Arc<Outcome> {
        let message = format!(
            "the probe's deadline ({:.1} s: the scrape timeout minus limits.timeout_offset) passed before this host was collected; raise the scrape timeout or check the host",
            budget.as_secs_f64()
        );
        let captures = failed_captures(members, ErrorKind::Timeout, &message);
        Arc::new(Outcome {
            diagnosis: crate::diagnose::diagnose(&captures),
            up: false,
            finished: SystemTime::now(),
        })
    }

    /// Starts the one collection of `key`, bounded by `deadline`; returns where its result
    /// will appear.
    fn start_collection(self: &Rc<Self>, key: Key, members: Vec<String>, module: Module, deadline: Instant) -> Pending {
        let (tx, rx) = watch::channel(None);
        self.inflight.borrow_mut().insert(key.clone(), rx.clone());
        let engine = self.clone();
        tokio::task::spawn_local(async move {
            engine.metrics.collections_in_flight.inc();
            let outcome = engine.collect(members, module, deadline).await;
            engine.inflight.borrow_mut().remove(&key);
            engine.metrics.collections_in_flight.sub(1);
            let _ = tx.send(Some(Arc::new(outcome)));
        });
        rx
    }

    /// Waits for host slots (bounded by the deadline), collects, diagnoses.
    async fn collect(&self, members: Vec<String>, module: Module, deadline: Instant) -> Outcome {
        let wanted = members.len().min(self.max_hosts).max(1);
        let n = u32::try_from(wanted).unwrap_or(u32::MAX);
        let hosts = members.len() as u64;
        // This probe's share of the process's output budget, held until its outputs are
        // dropped below.
        let run_budget = RunBudget::within(module.live.total_output_budget, &self.output_budget);
        self.metrics.hosts_waiting.add(hosts);
        let permit = tokio::time::timeout_at(deadline, self.slots.clone().acquire_many_owned(n)).await;
        self.metrics.hosts_waiting.sub(hosts);
        let captures = match permit {
            Ok(Ok(permit)) => {
                self.metrics.hosts_collecting.add(hosts);
                let now = Instant::now();
                // The collection stops a little before the deadline, so its partial result
                // (what each host had answered) reaches the waiting request in time.
                let left = deadline.saturating_duration_since(now);
                let margin = (left / 10).min(Duration::from_millis(200));
                let mut live = module.live.clone();
                live.targets = members.clone();
                live.parallel = wanted;
                live.run_timeout = Some((left - margin).max(Duration::from_millis(1)));
                live.run_budget = Some(run_budget.clone());
                let captures = self.collector.collect(live).await;
                self.metrics.hosts_collecting.sub(hosts);
                drop(permit);
                captures
            }
            _ => failed_captures(
                &members,
                ErrorKind::Timeout,
                &format!(
                    "waited for a collection slot until the probe's deadline: {} hosts are collected at most at once (limits.max_concurrent_hosts); raise it or scrape less at once",
                    self.max_hosts
                ),
            ),
        };
        let up = !captures.is_empty() && captures.iter().all(|c| c.error.is_none());
        // A scrape shows `pvrdma_up 0`; why is the operator's next question, and the
        // exporter's log (journald under the shipped unit) is where they look.
        for c in &captures {
            if let Some(e) = &c.error {
                let kind = serde_json::to_value(e.kind).ok();
                let kind = kind.as_ref().and_then(|k| k.as_str()).unwrap_or("error");
                let line = format!("probe of {}: {kind}: {}", c.host, e.message);
                eprint!("{}", crate::report::stderr_message("pvrdma-doctor: ", &line));
            }
        }
        let cut = captures
            .iter()
            .flat_map(|c| c.outputs.values())
            .filter(|o| {
                matches!(
                    o.outcome,
                    Some(crate::collect::Outcome::Truncated {
                        cap: crate::collect::Cap::ProcessBudget,
                        ..
                    })
                )
            })
            .count();
        self.metrics.outputs_cut_by_budget.add(cut as u64);
        let mut diagnosis = crate::diagnose::diagnose(&captures);
        // The outputs go, and their bytes back to the process's budget.
        drop(captures);
        drop(run_budget);
        if let Some(keep) = &module.fleet_checks {
            diagnosis.fleet_checks.retain(|c| keep.iter().any(|k| *k == c.id.id()));
        }
        Outcome {
            diagnosis,
            up,
            finished: SystemTime::now(),
        }
    }
}

/// Sets up each module's shared reading of its ssh_config and identity files: once per
/// configuration load, not per probe.
fn prepare(config: &mut Config) {
    for module in config.modules.values_mut() {
        module.live.prepare();
    }
}

/// Counts a probe in flight until it is answered or its client goes away (hyper drops
/// the request's future then).
struct InFlight<'a>(&'a Metrics);

impl<'a> InFlight<'a> {
    fn new(m: &'a Metrics) -> Self {
        m.probes_in_flight.inc();
        InFlight(m)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.probes_in_flight.sub(1);
    }
}

/// One failed capture per host, every catalogue command marked missing for `kind`.
fn failed_captures(hosts: &[String], kind: ErrorKind, message: &str) -> Vec<HostCapture> {
    hosts
        .iter()
        .map(|h| {
            let f = Failure::new(kind, format!("{h}: {message}"));
            let mut c = HostCapture::failed(h.clone(), CaptureSource::Live, f.clone());
            for spec in crate::catalogue::CATALOGUE {
                c.missing.insert(spec.id.to_string(), f.clone());
            }
            c
        })
        .collect()
}

/// The exposition: the diagnosis' series, then `pvrdma_up` and
/// `pvrdma_probe_duration_seconds`.
fn render(outcome: &Outcome, scope: Scope, elapsed: Duration) -> String {
    let mut text = crate::report::prometheus::render(
        &outcome.diagnosis,
        &PrometheusOptions {
            scope,
            finished: outcome.finished,
            duration: elapsed,
        },
    );
    text.push_str(
        "# HELP pvrdma_up 1 when every host of the target was reached and its outputs read before the probe's deadline, else 0.\n# TYPE pvrdma_up gauge\n",
    );
    text.push_str(if outcome.up { "pvrdma_up 1\n" } else { "pvrdma_up 0\n" });
    text.push_str(
        "# HELP pvrdma_probe_duration_seconds How long the exporter took to answer this probe, in seconds.\n# TYPE pvrdma_probe_duration_seconds gauge\n",
    );
    text.push_str(&format!("pvrdma_probe_duration_seconds {}\n", elapsed.as_secs_f64()));
    text
}
