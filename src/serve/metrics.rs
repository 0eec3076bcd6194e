//! The exporter's own metrics (`/metrics`): build, probes, load, configuration reloads and
//! the process. Counters end in `_total`; everything else is a gauge ("Metric and label
//! naming", "Writing exporters", prometheus.io). Probe results never appear here: they
//! belong to `/probe` answers.
use pvrdma_engine::capture::ErrorKind;
use pvrdma_engine::report::exposition::{Family, Kind};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A counter or gauge shared by the server's tasks.
#[derive(Debug, Default)]
pub struct Value(AtomicU64);

impl Value {
    pub fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }
    pub fn sub(&self, n: u64) {
        self.0.fetch_sub(n, Ordering::Relaxed);
    }
    pub fn set(&self, n: u64) {
        self.0.store(n, Ordering::Relaxed);
    }
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Everything `/metrics` shows that the server counts itself.
#[derive(Debug, Default)]
pub struct Metrics {
    pub probes: Value,
    pub probe_failures: Value,
    pub probes_rejected: Value,
    pub probes_shared: Value,
    pub probes_deadline_exceeded: Value,
    pub probes_in_flight: Value,
    pub collections_in_flight: Value,
    pub hosts_collecting: Value,
    pub hosts_waiting: Value,
    pub http_requests: Value,
    pub http_connections_open: Value,
    pub http_connection_errors: Value,
    pub http_connections_evicted: Value,
    pub auth_failures: Value,
    /// bcrypt checks run (basic authentication).
    pub auth_checks: Value,
    /// bcrypt checks dropped before they started: their client had gone.
    pub auth_checks_dropped: Value,
    pub config_reload_ok: Value,
    /// Outputs cut because the probes in flight held the whole `limits.output_budget`.
    pub outputs_cut_by_budget: Value,
    /// Hosts a collection could not read because of the host or the way to it, by failure
    /// class (the JSON report's error kind: a small fixed set).
    pub hosts_not_read: std::sync::Mutex<std::collections::BTreeMap<String, u64>>,
    /// Hosts a collection did not read because of the exporter's own limits: its
    /// deadline passed (`deadline`), or no collection slot came free in time
    /// (`max_concurrent_hosts`).
    pub hosts_not_collected: [Value; 2],
    /// Unix seconds of the last successful (re)load.
    pub config_reload_success_time: AtomicI64,
    /// The keys a reload cannot apply to the running server
    /// ([`super::config::RESTART_ONLY`], in its order), each 1 while the file last loaded
    /// sets it to a value other than the one in force.
    pub config_reload_refused: [Value; super::config::RESTART_ONLY.len()],
}

/// A failure kind's name, as the JSON report and the `class` labels spell it.
fn class(kind: ErrorKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "error".into())
}

/// Writes one metric family of one unlabelled sample, with the engine crate's exposition
/// writer.
fn family(out: &mut String, name: &'static str, kind: Kind, help: &'static str, value: String) {
    let mut f = match kind {
        Kind::Gauge => Family::new(name, help),
        Kind::Counter => Family::counter(name, help),
    };
    f.add(Vec::new(), value);
    f.write(out);
}

impl Metrics {
    /// A fresh set with the configuration marked as loaded now, and every class of
    /// hosts not read at 0 (Prometheus' "avoid missing metrics": a rate over a class that
    /// never failed is 0, not nothing).
    pub fn new() -> Self {
        let m = Metrics::default();
        m.config_loaded();
        if let Ok(mut counts) = m.hosts_not_read.lock() {
            counts.extend(ErrorKind::ALL.iter().map(|k| (class(*k), 0)));
        }
        m
    }

    /// A successful load or reload.
    pub fn config_loaded(&self) {
        self.config_reload_ok.set(1);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        self.config_reload_success_time
            .store(i64::try_from(now).unwrap_or(i64::MAX), Ordering::Relaxed);
    }

    /// The `/metrics` body (text format 0.0.4).
    pub fn render(&self, ssh_sessions_open: usize, max_hosts: usize, max_connections: usize) -> String {
        let mut out = String::with_capacity(4096);
        let version = env!("CARGO_PKG_VERSION");
        let mut build = Family::new(
            "pvrdma_doctor_build_info",
            "Always 1; the version label says which pvrdma-doctor serves.",
        );
        build.add(vec![("version", version.to_string())], "1");
        build.write(&mut out);
        for (name, help, v) in self.counters() {
            family(&mut out, name, Kind::Counter, help, v.get().to_string());
        }
        for (name, help, v) in self.gauges(ssh_sessions_open, max_hosts, max_connections) {
            family(&mut out, name, Kind::Gauge, help, v.to_string());
        }
        family(
            &mut out,
            "pvrdma_doctor_config_last_reload_successful",
            Kind::Gauge,
            "1 when the last load of the configuration file succeeded, 0 when a reload failed and the previous configuration is still in use.",
            self.config_reload_ok.get().to_string(),
        );
        family(
            &mut out,
            "pvrdma_doctor_config_last_reload_success_timestamp_seconds",
            Kind::Gauge,
            "Unix time of the last successful load of the configuration file.",
            self.config_reload_success_time.load(Ordering::Relaxed).to_string(),
        );
        let mut refused = Family::new(
            "pvrdma_doctor_config_reload_refused",
            "1 when the configuration file last loaded sets this key to a value the running exporter cannot change (it keeps the one it started with until restarted), else 0.",
        );
        for (key, value) in super::config::RESTART_ONLY.iter().zip(&self.config_reload_refused) {
            refused.add(vec![("key", key.to_string())], value.get().to_string());
        }
        refused.write(&mut out);
        family(
            &mut out,
            "pvrdma_doctor_outputs_cut_total",
            Kind::Counter,
            "Command outputs cut because the probes in flight held the exporter's whole output budget (limits.output_budget); what depends on them was reported unknown.",
            self.outputs_cut_by_budget.get().to_string(),
        );
        self.render_hosts(&mut out);
        process_metrics(&mut out);
        out
    }

    /// The counters of `/metrics`: name, help, value.
    fn counters(&self) -> [(&'static str, &'static str, &Value); 11] {
        [
            ("pvrdma_doctor_probes_total", "Probes answered (/probe requests with a target on the allow-list).", &self.probes),
            ("pvrdma_doctor_probe_failures_total", "Probes answered with pvrdma_up 0 (a host not reached or not read before the deadline).", &self.probe_failures),
            ("pvrdma_doctor_probes_rejected_total", "Probe requests refused with HTTP 400 (no target, a target not on the allow-list, an unknown module); no connection was attempted.", &self.probes_rejected),
            ("pvrdma_doctor_probes_shared_total", "Probes that joined a collection of the same target already running instead of starting one.", &self.probes_shared),
            ("pvrdma_doctor_probes_deadline_exceeded_total", "Probes whose deadline passed before their collection finished; they were answered with what was known.", &self.probes_deadline_exceeded),
            ("pvrdma_doctor_http_requests_total", "HTTP requests received, on every path.", &self.http_requests),
            ("pvrdma_doctor_http_connection_errors_total", "HTTP connections closed on an error: a malformed request, a TLS handshake that failed, a client too slow to send its headers.", &self.http_connection_errors),
            ("pvrdma_doctor_http_connections_evicted_total", "Connections closed to make room for a new one at limits.max_connections: each time the one not serving a request that had waited longest for one.", &self.http_connections_evicted),
            ("pvrdma_doctor_http_auth_failures_total", "Requests refused with HTTP 401 (basic authentication missing or wrong).", &self.auth_failures),
            ("pvrdma_doctor_http_auth_checks_total", "bcrypt checks of basic-auth credentials run (a credential checked once is remembered, good or wrong; an unknown user is checked too).", &self.auth_checks),
            ("pvrdma_doctor_http_auth_checks_dropped_total", "bcrypt checks dropped before they started because their client had closed its side of the connection.", &self.auth_checks_dropped),
        ]
    }

    /// The gauges of `/metrics` that are one unlabelled number: name, help, value.
    fn gauges(
        &self,
        ssh_sessions_open: usize,
        max_hosts: usize,
        max_connections: usize,
    ) -> [(&'static str, &'static str, u64); 8] {
        [
            (
                "pvrdma_doctor_probes_in_flight",
                "Probe requests being answered now.",
                self.probes_in_flight.get(),
            ),
            (
                "pvrdma_doctor_collections_in_flight",
                "Collections running now (concurrent probes of one target share one).",
                self.collections_in_flight.get(),
            ),
            (
                "pvrdma_doctor_hosts_collecting",
                "Hosts being collected now, all probes together.",
                self.hosts_collecting.get(),
            ),
            (
                "pvrdma_doctor_hosts_waiting",
                "Hosts of running probes waiting for a collection slot (limits.max_concurrent_hosts).",
                self.hosts_waiting.get(),
            ),
            (
                "pvrdma_doctor_max_concurrent_hosts",
                "The configured limit of hosts collected at once.",
                u64::try_from(max_hosts).unwrap_or(u64::MAX),
            ),
            (
                "pvrdma_doctor_http_max_connections",
                "The limit of HTTP connections open at once in force (limits.max_connections).",
                u64::try_from(max_connections).unwrap_or(u64::MAX),
            ),
            (
                "pvrdma_doctor_ssh_sessions_open",
                "Authenticated SSH connections open now.",
                u64::try_from(ssh_sessions_open).unwrap_or(u64::MAX),
            ),
            (
                "pvrdma_doctor_http_connections_open",
                "HTTP connections open now.",
                self.http_connections_open.get(),
            ),
        ]
    }

    /// Counts the hosts of a finished collection that were not read, apart by whose
    /// fault: the host's (by class) or the exporter's limits.
    pub fn count_not_read(&self, captures: &[pvrdma_engine::capture::HostCapture], slot_wait: bool) {
        for e in captures.iter().filter_map(|c| c.error.as_ref()) {
            if slot_wait {
                self.hosts_not_collected[1].inc();
            } else if e.run_stage.is_some() {
                self.hosts_not_collected[0].inc();
            } else {
                let mut m = match self.hosts_not_read.lock() {
                    Ok(g) => g,
                    Err(poisoned) => poisoned.into_inner(),
                };
                *m.entry(class(e.kind)).or_default() += 1;
            }
        }
    }

    fn render_hosts(&self, out: &mut String) {
        let mut not_read = Family::counter(
            "pvrdma_doctor_hosts_not_read_total",
            "Hosts a collection could not read because of the host or the way to it (refused, timed out, key exchange, authentication, host key, not ESXi...), by failure class; the exporter's own limits are counted apart.",
        );
        let counts = match self.hosts_not_read.lock() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        for (class, n) in counts {
            not_read.add(vec![("class", class)], n.to_string());
        }
        not_read.write(out);
        let mut not_collected = Family::counter(
            "pvrdma_doctor_hosts_not_collected_total",
            "Hosts a collection did not read because of the exporter's own limits: the probe's deadline passed (deadline), or no collection slot came free in time (max_concurrent_hosts).",
        );
        for (limit, v) in ["deadline", "max_concurrent_hosts"]
            .iter()
            .zip(&self.hosts_not_collected)
        {
            not_collected.add(vec![("limit", limit.to_string())], v.get().to_string());
        }
        not_collected.write(out);
    }
}

/// The standard process metrics (as the Prometheus client libraries name them), read from
/// /proc/self; absent where /proc cannot be read.
fn process_metrics(out: &mut String) {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return;
    };
    // Fields after the command name, which is in parentheses and may hold spaces.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // SAFETY: sysconf only reads a configuration value.
    #[allow(unsafe_code)]
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    #[allow(unsafe_code)]
    // SAFETY: as above.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    // utime, stime (fields 14 and 15 of stat(5), here 11 and 12 after the name), rss (24).
    if let (Some(u), Some(s)) = (field(11), field(12)) {
        if ticks > 0 {
            let cpu = (u + s) / ticks as f64;
            family(
                out,
                "process_cpu_seconds_total",
                Kind::Counter,
                "Total user and system CPU time spent in seconds.",
                format!("{cpu}"),
            );
        }
    }
    if let Some(rss) = field(21) {
        let bytes = rss * page as f64;
        family(
            out,
            "process_resident_memory_bytes",
            Kind::Gauge,
            "Resident memory size in bytes.",
            format!("{bytes}"),
        );
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        let n = fds.count();
        family(
            out,
            "process_open_fds",
            Kind::Gauge,
            "Number of open file descriptors.",
            n.to_string(),
        );
    }
}

/// This process's CPU time (user + system) and peak resident memory, for the benchmark.
pub fn process_usage(pid: u32) -> Option<(f64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // SAFETY: sysconf only reads a configuration value.
    #[allow(unsafe_code)]
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let u: f64 = fields.get(11)?.parse().ok()?;
    let s: f64 = fields.get(12)?.parse().ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let hwm_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(((u + s) / ticks.max(1) as f64, hwm_kib * 1024))
}
