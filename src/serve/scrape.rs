//! One scrape of `/probe` (the multi-target exporter's endpoint, named as Prometheus
//! names it; nothing to do with `--probe`, the path probe): the allow-list, single flight
//! per target, the global cap on hosts being collected, and the deadline. Everything here runs on the server's one thread (a
//! `LocalSet`), as a live run does.
//!
//! Concurrent scrapes of one target and module (two Prometheus replicas, a retry) share
//! one collection, and each keeps its own deadline: the collection runs until the latest
//! deadline of the scrapes waiting for it (a scrape that joins with a later deadline moves
//! it), and each scrape is answered at its own deadline, with the result when the
//! collection has finished by then, else with `pvrdma_up 0`, the hosts read by then as
//! they were read (each is diagnosed the moment it is read) and the others marked as
//! timed out. So a client with a short scrape timeout can never turn another client's
//! scrape into `up 0`. No result is kept once it has been handed out, so every scrape
//! sees a fresh collection and a VM that vanished leaves no series behind.
use super::config::{Limits, Module};
use super::metrics::Metrics;
use crate::collect::ssh::{ProcessBudget, RunBudget};
use crate::live::{LiveOptions, OnHostRead, RunDeadline};
use futures::future::LocalBoxFuture;
use pvrdma_engine::capture::{CaptureSource, ErrorKind, Failure, HostCapture};
use pvrdma_engine::diagnose::{Diagnosis, KnownHost, Selection};
use pvrdma_engine::report::prometheus::{PrometheusOptions, Scope};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::sync::{watch, Semaphore};
use tokio::time::Instant;

/// What collects hosts: the live SSH collection, or a stand-in in tests.
pub trait Collector {
    /// Collects `live.targets`; every target gets a capture, failures included.
    fn collect(&self, live: LiveOptions) -> LocalBoxFuture<'static, Vec<HostCapture>>;
}

/// What runs before each collection (see [`super::ServeOptions::before_collect`]).
pub type BeforeCollect = Box<dyn Fn()>;

/// The real thing: [`crate::live::collect_live_async`].
pub struct LiveCollector {
    pub before: Option<BeforeCollect>,
}

impl Collector for LiveCollector {
    fn collect(&self, live: LiveOptions) -> LocalBoxFuture<'static, Vec<HostCapture>> {
        if let Some(before) = &self.before {
            before();
        }
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
    /// Every host was reached and read before the deadline: at least one of its
    /// command outputs arrived whole (see [`nothing_read`]).
    pub up: bool,
    pub finished: SystemTime,
    /// A probe judged from the configuration read from vCenter: whether that read is
    /// stale (see [`super::vcenter`]); `None` for a probe over SSH.
    pub vcenter_read_stale: Option<bool>,
}

/// Why a probe request is refused: nothing was attempted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub why: String,
    /// A vCenter group with no host to probe now (HTTP 503: try again later), rather than
    /// a request that names no allowed target or module (HTTP 400).
    pub unavailable: bool,
}

impl Refused {
    pub fn not_allowed(why: String) -> Refused {
        Refused {
            why,
            unavailable: false,
        }
    }

    pub fn unavailable(why: String) -> Refused {
        Refused { why, unavailable: true }
    }
}

/// A collection's target and module.
pub(super) type Key = (String, String);
type Pending = watch::Receiver<Option<Arc<Outcome>>>;

/// A collection in flight: where its result will appear, when it stops (the latest
/// deadline of the scrapes waiting for it, less a margin to hand the result over), and
/// the hosts it has read so far.
struct Flight {
    result: Pending,
    stop: Rc<watch::Sender<Instant>>,
    read: HostsRead,
}

/// The hosts a collection has read so far, each diagnosed the moment it was read: what a
/// scrape whose deadline comes before the collection's end is answered with.
type HostsRead = Arc<Mutex<BTreeMap<String, KnownHost>>>;

/// What is in `read` now (a poisoned lock is only a host's diagnosis that panicked).
fn lock(read: &HostsRead) -> std::sync::MutexGuard<'_, BTreeMap<String, KnownHost>> {
    read.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// When a collection serving a scrape due at `deadline` stops: a little before, so its
/// partial result (what each host had answered) reaches the scrape in time.
fn stop_for(deadline: Instant) -> Instant {
    let left = deadline.saturating_duration_since(Instant::now());
    let margin = (left / 10).min(Duration::from_millis(200));
    (deadline - margin).max(Instant::now() + Duration::from_millis(1))
}

/// Why a host cut by the probe's deadline failed, and what to raise: the exporter reads
/// no `--timeout`, its deadline is the scrape timeout Prometheus sends.
pub const DEADLINE_IS: &str = "the scrape timeout Prometheus sends in X-Prometheus-Scrape-Timeout-Seconds, minus limits.timeout_offset; limits.default_timeout without that header; at most limits.max_timeout";

/// What to do about it.
pub const DEADLINE_ADVICE: &str =
    "raise scrape_timeout in the Prometheus job (and limits.max_timeout if it caps it) or check the host";

/// The probes' shared machinery: the collections in flight (one per target and module),
/// the host slots and the process's output budget.
pub struct Probes {
    inflight: RefCell<HashMap<Key, Flight>>,
    slots: Arc<Semaphore>,
    max_hosts: usize,
    /// `limits.output_budget`: one pool for the outputs of every probe in flight.
    output_budget: Arc<ProcessBudget>,
    metrics: Arc<Metrics>,
    collector: Box<dyn Collector>,
}

impl Probes {
    pub(super) fn new(limits: &Limits, metrics: Arc<Metrics>, collector: Box<dyn Collector>) -> Probes {
        Probes {
            inflight: RefCell::new(HashMap::new()),
            slots: Arc::new(Semaphore::new(limits.max_concurrent_hosts)),
            max_hosts: limits.max_concurrent_hosts,
            output_budget: ProcessBudget::new(limits.output_budget),
            metrics,
            collector,
        }
    }

    /// Hosts collected at once, all probes together: the limit the server started with.
    pub(super) fn max_hosts(&self) -> usize {
        self.max_hosts
    }

    /// A reload's `limits.output_budget`, for the probes from now on.
    pub(super) fn resize_budget(&self, bytes: usize) {
        self.output_budget.resize(bytes);
    }

    /// The outcome of probing `members` (the target and module of `key`), diagnosed as
    /// `selection` says, for a scrape due at `deadline`: joins the collection of `key` in
    /// flight, or starts it.
    pub(super) async fn run(
        self: &Rc<Self>,
        key: Key,
        members: Vec<String>,
        module: &Module,
        selection: Selection,
        start: Instant,
        deadline: Instant,
    ) -> Arc<Outcome> {
        let joined = self
            .inflight
            .borrow()
            .get(&key)
            .map(|f| (f.result.clone(), f.stop.clone(), f.read.clone()));
        let (mut pending, read) = match joined {
            Some((rx, stop, read)) => {
                self.metrics.probes_shared.inc();
                // A later deadline keeps the collection running for this scrape.
                let until = stop_for(deadline);
                stop.send_if_modified(|at| {
                    let later = until > *at;
                    if later {
                        *at = until;
                    }
                    later
                });
                (rx, read)
            }
            None => self.start_collection(key, members.clone(), module.clone(), selection.clone(), deadline),
        };
        let waited = tokio::time::timeout_at(deadline, pending.wait_for(Option::is_some)).await;
        let expired = || self.expired(&members, &read, &selection, deadline - start);
        match waited {
            Ok(Ok(v)) => v.clone().unwrap_or_else(expired),
            _ => {
                self.metrics.probes_deadline_exceeded.inc();
                expired()
            }
        }
    }

    /// What a probe whose deadline passed before its collection finished answers: the
    /// hosts read by then as they were read, the others timed out (each scrape's deadline
    /// is its own: the collection may go on for a scrape with a later one). The hosts not
    /// read are logged, as the collection's failures are.
    fn expired(&self, members: &[String], read: &HostsRead, selection: &Selection, budget: Duration) -> Arc<Outcome> {
        let message = format!(
            "this scrape's deadline ({}: {DEADLINE_IS}) passed before this host was collected; {DEADLINE_ADVICE}",
            pvrdma_engine::duration::text(budget)
        );
        let mut known = lock(read).clone();
        // A run names each host by its label (`root@esx01` is `esx01`), and so does this.
        let labels: Vec<String> = members
            .iter()
            .map(|m| crate::hosts::parse_host_spec(m).map_or_else(|_| m.clone(), |spec| spec.label()))
            .collect();
        let missing: Vec<String> = labels.iter().filter(|m| !known.contains_key(*m)).cloned().collect();
        let cut = failed_captures(&missing, ErrorKind::Timeout, &message);
        log_failures(&cut);
        let mut cut = cut.into_iter();
        // In the members' order; a host read is taken from `known`, its capture unused.
        let captures: Vec<HostCapture> = labels
            .iter()
            .filter_map(|m| match known.contains_key(m) {
                true => Some(HostCapture::new(m.clone(), CaptureSource::Live)),
                false => cut.next(),
            })
            .collect();
        Arc::new(Outcome {
            diagnosis: pvrdma_engine::diagnose::diagnose_selected_known(&captures, &mut known, selection),
            up: false,
            finished: SystemTime::now(),
            vcenter_read_stale: None,
        })
    }

    /// Starts the one collection of `key`, which runs until the latest deadline of the
    /// scrapes that wait for it (`deadline` until one with a later deadline joins); returns
    /// where its result will appear.
    fn start_collection(
        self: &Rc<Self>,
        key: Key,
        members: Vec<String>,
        module: Module,
        selection: Selection,
        deadline: Instant,
    ) -> (Pending, HostsRead) {
        let (tx, rx) = watch::channel(None);
        let stop = Rc::new(watch::channel(stop_for(deadline)).0);
        let read = HostsRead::default();
        self.inflight.borrow_mut().insert(
            key.clone(),
            Flight {
                result: rx.clone(),
                stop: stop.clone(),
                read: read.clone(),
            },
        );
        let probes = self.clone();
        let hosts_read = read.clone();
        tokio::task::spawn_local(async move {
            probes.metrics.collections_in_flight.inc();
            let outcome = probes
                .collect(members, module, selection, stop.subscribe(), hosts_read)
                .await;
            probes.inflight.borrow_mut().remove(&key);
            probes.metrics.collections_in_flight.sub(1);
            let _ = tx.send(Some(Arc::new(outcome)));
        });
        (rx, read)
    }

    /// Waits for host slots (until the collection's stop), collects, diagnoses each host
    /// as it is read (into `read`) and the rest at the end, as `selection` says.
    async fn collect(
        &self,
        members: Vec<String>,
        module: Module,
        selection: Selection,
        stop: watch::Receiver<Instant>,
        read: HostsRead,
    ) -> Outcome {
        let wanted = members.len().min(self.max_hosts).max(1);
        let n = u32::try_from(wanted).unwrap_or(u32::MAX);
        let hosts = members.len() as u64;
        // This probe's share of the process's output budget, held until its outputs are
        // dropped below.
        let run_budget = RunBudget::within(module.live.total_output_budget, &self.output_budget);
        self.metrics.hosts_waiting.add(hosts);
        let permit = tokio::select! {
            p = self.slots.clone().acquire_many_owned(n) => p.ok(),
            () = RunDeadline::passed(stop.clone()) => None,
        };
        self.metrics.hosts_waiting.sub(hosts);
        let slot_wait = permit.is_none();
        let captures = match permit {
            Some(permit) => {
                self.metrics.hosts_collecting.add(hosts);
                let mut live = module.live.clone();
                live.targets = members.clone();
                live.parallel = wanted;
                live.run_timeout = Some(
                    stop.borrow()
                        .saturating_duration_since(Instant::now())
                        .max(Duration::from_millis(1)),
                );
                live.run_deadline = Some(RunDeadline {
                    at: stop,
                    what: format!("the probe's deadline ({DEADLINE_IS}) passed"),
                    advice: DEADLINE_ADVICE.to_string(),
                });
                live.run_budget = Some(run_budget.clone());
                let into = read.clone();
                let narrowed = selection.clone();
                live.on_host_read = Some(OnHostRead(Arc::new(move |capture: &HostCapture| {
                    let host = narrowed.diagnose_host(capture);
                    lock(&into).insert(capture.host.clone(), host);
                })));
                let captures = self.collector.collect(live).await;
                self.metrics.hosts_collecting.sub(hosts);
                drop(permit);
                captures
            }
            None => failed_captures(
                &members,
                ErrorKind::Timeout,
                &format!(
                    "waited for a collection slot until the probe's deadline: {} hosts are collected at most at once (limits.max_concurrent_hosts); raise it or scrape less at once",
                    self.max_hosts
                ),
            ),
        };
        let unread = nothing_read(&captures);
        let up = !captures.is_empty() && captures.iter().all(|c| c.error.is_none()) && unread.is_empty();
        log_failures(&captures);
        for line in &unread {
            eprint!("{}", crate::terminal::stderr_message("pvrdma-doctor: ", line));
        }
        self.metrics.count_not_read(&captures, slot_wait);
        let cut = captures
            .iter()
            .flat_map(|c| c.outputs.values())
            .filter(|o| {
                matches!(
                    o.outcome,
                    Some(pvrdma_engine::capture::Outcome::Truncated {
                        cap: pvrdma_engine::capture::Cap::ProcessBudget,
                        ..
                    })
                )
            })
            .count();
        self.metrics.outputs_cut_by_budget.add(cut as u64);
        let mut known = std::mem::take(&mut *lock(&read));
        let diagnosis = pvrdma_engine::diagnose::diagnose_selected_known(&captures, &mut known, &selection);
        // The outputs go, and their bytes back to the process's budget.
        drop(captures);
        drop(run_budget);
        Outcome {
            diagnosis,
            up,
            finished: SystemTime::now(),
            vcenter_read_stale: None,
        }
    }
}

/// A scrape shows `pvrdma_up 0`; why is the operator's next question, and the exporter's
/// log (journald under the shipped unit) is where they look: one line per failed host.
fn log_failures(captures: &[HostCapture]) {
    for c in captures {
        if let Some(e) = &c.error {
            let kind = serde_json::to_value(e.kind).ok();
            let kind = kind.as_ref().and_then(|k| k.as_str()).unwrap_or("error");
            let line = format!("probe of {}: {kind}: {}", c.host, e.message);
            eprint!("{}", crate::terminal::stderr_message("pvrdma-doctor: ", &line));
        }
    }
}

/// The hosts that were reached but of which nothing was read: no command's output
/// arrived whole (ran to its exit, neither cut nor timed out nor broken off), so every
/// check of theirs is `unknown`. Such a host makes the probe `pvrdma_up 0`, as one that
/// could not be reached does; one log line each, saying how its outputs ended.
pub fn nothing_read(captures: &[HostCapture]) -> Vec<String> {
    captures
        .iter()
        .filter(|c| c.error.is_none() && !c.outputs.values().any(|o| o.cut_short().is_none()))
        .map(|c| {
            let mut how: BTreeMap<String, usize> = BTreeMap::new();
            for o in c.outputs.values() {
                *how.entry(o.cut_short().unwrap_or_default()).or_default() += 1;
            }
            let total = c.outputs.len() + c.missing.len();
            let mut line = format!(
                "probe of {}: nothing read: none of its {total} command outputs arrived whole",
                c.host
            );
            if !how.is_empty() {
                let parts: Vec<String> = how.iter().map(|(problem, n)| format!("{n} {problem}")).collect();
                line.push_str(&format!(" ({})", parts.join("; ")));
            }
            if !c.missing.is_empty() {
                line.push_str(&format!("; {} never ran", c.missing.len()));
            }
            line
        })
        .collect()
}

/// Counts a probe in flight until it is answered or its client goes away (hyper drops
/// the request's future then).
pub(super) struct InFlight<'a>(&'a Metrics);

impl<'a> InFlight<'a> {
    pub(super) fn new(m: &'a Metrics) -> Self {
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
            let f = Failure::of_host(kind, h, message);
            HostCapture::stopped(h.clone(), CaptureSource::Live, f, Default::default())
        })
        .collect()
}

/// The exposition: the diagnosis' series, then `pvrdma_up` and
/// `pvrdma_probe_duration_seconds`.
pub(super) fn render(outcome: &Outcome, scope: Scope, elapsed: Duration) -> String {
    use pvrdma_engine::report::exposition::Family;
    let mut text = pvrdma_engine::report::prometheus::render(
        &outcome.diagnosis,
        &PrometheusOptions {
            scope,
            finished: outcome.finished,
            duration: elapsed,
        },
    );
    let mut up = Family::new(
        "pvrdma_up",
        "1 when every host of the target was reached and read (at least one command's output arrived whole) before the probe's deadline, else 0.",
    );
    up.add(Vec::new(), if outcome.up { "1" } else { "0" });
    up.write(&mut text);
    if let Some(stale) = outcome.vcenter_read_stale {
        let mut family = Family::new(
            "pvrdma_vcenter_read_stale",
            "A probe judged from the configuration read from vCenter (no_ssh): 1 when a host's configuration is older than its vCenter's refresh plus timeout (vCenter could not be read since; pvrdma_last_run_timestamp_seconds is when the oldest was read), else 0; absent for a probe over SSH.",
        );
        family.add(Vec::new(), if stale { "1" } else { "0" });
        family.write(&mut text);
    }
    let mut took = Family::new(
        "pvrdma_probe_duration_seconds",
        "How long the exporter took to answer this probe, in seconds.",
    );
    took.add(Vec::new(), elapsed.as_secs_f64().to_string());
    took.write(&mut text);
    text
}
