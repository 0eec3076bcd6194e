//! The shipped alerting chain against its real consumers: `promtool test rules` fed with
//! the series the exporter and the textfile really expose (captured here, on each path),
//! and a real Prometheus with the shipped rules and recipe sending to a real Alertmanager
//! (Debian package `prometheus-alertmanager`) with the shipped configuration, whose
//! notifications a webhook receiver in this test collects while a fault is injected into
//! the demo's scenario folder, reverted, SSH to a host is broken and the exporter is
//! killed. Intervals are scaled down (30 s scrapes become 3 s), nothing else changes.
use crate::alerting_rules::shipped;
use crate::prometheus::{doctor, require, root, NodeExporter, PROMTOOL};
use crate::serve::{exporter, exporter_on, get_status, query, Proc, PROMETHEUS};
use crate::support;

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ALERTMANAGER: &str = "/usr/bin/prometheus-alertmanager";

/// The shipped rules with every duration divided by ten (a 30 s scrape becomes 3 s).
fn scaled_rules() -> String {
    let mut s = shipped("contrib/prometheus/pvrdma-doctor.rules.yml");
    for (from, to) in [
        // keep_firing_for first: "for: 2m" is a part of it.
        ("keep_firing_for: 2m", "keep_firing_for: 12s"),
        ("interval: 15s", "interval: 1s"),
        // Before 5m becomes 30s.
        ("for: 30s", "for: 3s"),
        ("for: 45s", "for: 5s"),
        ("for: 1m", "for: 6s"),
        ("for: 2m", "for: 12s"),
        ("for: 5m", "for: 30s"),
        ("> 300", "> 10"),
    ] {
        assert!(s.contains(from), "the shipped rules no longer say {from}");
        s = s.replace(from, to);
    }
    s
}

/// Notifications Alertmanager POSTs to the webhook, as JSON, in arrival order.
pub(crate) struct Webhook {
    pub(crate) port: u16,
    got: Arc<Mutex<Vec<Value>>>,
    stop: Arc<AtomicBool>,
}

impl Webhook {
    pub(crate) fn start() -> Webhook {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let got: Arc<Mutex<Vec<Value>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (g, st) = (got.clone(), stop.clone());
        std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                };
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut reader = BufReader::new(stream);
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':') {
                        if k.eq_ignore_ascii_case("content-length") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_ok() {
                    if let Ok(v) = serde_json::from_slice::<Value>(&body) {
                        g.lock().unwrap().push(v);
                    }
                }
                let mut stream = reader.into_inner();
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            }
        });
        Webhook { port, got, stop }
    }

    pub(crate) fn all(&self) -> Vec<Value> {
        self.got.lock().unwrap().clone()
    }

    /// Waits (bounded) for a notification that `pick` accepts; returns it.
    pub(crate) fn wait_for(&self, what: &str, limit: Duration, pick: impl Fn(&Value) -> bool) -> Value {
        self.wait_for_telling(what, limit, pick, &String::new)
    }

    /// [`Webhook::wait_for`], a failure also telling `context()` (the logs of the
    /// Alertmanager and Prometheus that should have sent it).
    pub(crate) fn wait_for_telling(
        &self,
        what: &str,
        limit: Duration,
        pick: impl Fn(&Value) -> bool,
        context: &dyn Fn() -> String,
    ) -> Value {
        let start = Instant::now();
        loop {
            if let Some(n) = self.all().into_iter().find(|n| pick(n)) {
                return n;
            }
            assert!(
                start.elapsed() < limit,
                "no notification {what} within {limit:?}; got {:#}{}",
                Value::Array(self.all()),
                context()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Webhook {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

pub(crate) fn spawn(cmd: &mut Command, log: &Path) -> Proc {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).expect("log"))
        .spawn()
        .expect("start");
    Proc {
        child,
        log: log.to_path_buf(),
    }
}

/// Starts a server on a free port with `start(port)` until one is ready and answers
/// `identity` (a path, and a text only this server's answer holds): the port a test picks
/// is free when picked, but a server started in parallel may take it first, and then its
/// `/-/ready` would answer for ours.
pub(crate) fn start_on_free_port(what: &str, identity: (&str, &str), start: impl Fn(u16) -> Proc) -> (Proc, u16) {
    for _ in 0..3 {
        let port = support::free_port();
        let mut p = start(port);
        let begun = Instant::now();
        let ready = loop {
            if get_status(port, "/-/ready") == 200 {
                break true;
            }
            if p.wait_exit(Duration::from_millis(200)).is_some() {
                break false;
            }
            assert!(
                begun.elapsed() < Duration::from_secs(30),
                "{what} not ready: {}",
                p.log()
            );
        };
        let (path, needle) = identity;
        if ready && crate::serve::get(&format!("127.0.0.1:{port}"), path).1.contains(needle) {
            return (p, port);
        }
        p.signal("-KILL");
        let _ = p.wait_exit(Duration::from_secs(10));
    }
    panic!("{what} could not get a port of its own in 3 tries");
}

/// The shipped Alertmanager configuration, sending to `webhook`, its waits scaled down.
pub(crate) fn alertmanager(dir: &Path, webhook: u16) -> (Proc, u16) {
    require(ALERTMANAGER);
    let mut config = shipped("contrib/alertmanager/alertmanager.yml");
    for (from, to) in [
        ("http://127.0.0.1:5001/", format!("http://127.0.0.1:{webhook}/")),
        ("group_wait: 10s", "group_wait: 1s".into()),
        ("group_interval: 1m", "group_interval: 6s".into()),
        ("repeat_interval: 4h", "repeat_interval: 24m".into()),
    ] {
        assert!(
            config.contains(from),
            "the shipped alertmanager.yml no longer says {from}"
        );
        config = config.replace(from, &to);
    }
    std::fs::write(dir.join("alertmanager.yml"), config).unwrap();
    let webhook_url = format!("127.0.0.1:{webhook}");
    start_on_free_port("alertmanager", ("/api/v2/status", &webhook_url), |port| {
        spawn(
            Command::new(ALERTMANAGER)
                .arg(format!("--config.file={}", dir.join("alertmanager.yml").display()))
                .arg(format!("--storage.path={}", dir.join("am-data").display()))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .arg("--cluster.listen-address="),
            &dir.join("alertmanager.log"),
        )
    })
}

/// The shipped Prometheus recipe aimed at `exporter` and `alertmanager`, 30 s → 3 s.
pub(crate) fn prometheus(dir: &Path, exporter: &str, alertmanager: u16, extra_jobs: &str) -> (Proc, u16) {
    require(PROMETHEUS);
    std::fs::write(dir.join("rules.yml"), scaled_rules()).unwrap();
    let mut config = shipped("contrib/prometheus/prometheus.yml");
    for (from, to) in [
        ("scrape_interval: 30s", "scrape_interval: 3s".to_string()),
        ("scrape_timeout: 25s", "scrape_timeout: 3s".to_string()),
        ("evaluation_interval: 15s", "evaluation_interval: 1s".to_string()),
        (
            "/etc/prometheus/pvrdma-doctor.rules.yml",
            dir.join("rules.yml").display().to_string(),
        ),
        ("127.0.0.1:9093", format!("127.0.0.1:{alertmanager}")),
        ("127.0.0.1:39155", exporter.to_string()),
    ] {
        assert!(
            config.contains(from),
            "the shipped prometheus.yml no longer says {from}"
        );
        config = config.replace(from, &to);
    }
    config.push_str(extra_jobs);
    std::fs::write(dir.join("prometheus.yml"), config).unwrap();
    let file = dir.join("prometheus.yml").display().to_string();
    start_on_free_port("prometheus", ("/api/v1/status/flags", &file), |port| {
        spawn(
            Command::new(PROMETHEUS)
                .arg(format!("--config.file={file}"))
                .arg(format!("--storage.tsdb.path={}", dir.join("tsdb").display()))
                // Scaled like the intervals: an alert whose first send to Alertmanager
                // failed (a loaded machine) is sent again within seconds, not a minute.
                .arg("--rules.alert.resend-delay=6s")
                .arg(format!("--web.listen-address=127.0.0.1:{port}")),
            &dir.join("prometheus.log"),
        )
    })
}

/// Polls `expr` until it has an answer line containing every word of `want`.
pub(crate) fn wait_series(port: u16, expr: &str, want: &[&str], limit: Duration) -> Duration {
    let start = Instant::now();
    loop {
        let lines = query(port, expr);
        if lines.iter().any(|l| want.iter().all(|w| l.contains(w))) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < limit,
            "{expr}: no {want:?} within {limit:?}: {lines:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The alerts of a notification about `host`, with `status`.
pub(crate) fn about(n: &Value, host: &str, status: &str) -> bool {
    n["groupLabels"]["host_name"] == host && n["status"] == status
}

fn alert_names(n: &Value) -> Vec<String> {
    n["alerts"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| x["labels"]["alertname"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
#[ignore = "needs Prometheus and Alertmanager: scripts/test.sh runs it"]
fn one_page_per_cause_across_a_host_going_silent_and_the_exporter_killed_and_restarted() {
    require(PROMTOOL);
    let dir = tempfile::tempdir().expect("tempdir");
    let fleet = dir.path().join("fleet");
    copy_dir(&root().join("samples/esxi80-mixed-fleet"), &fleet);
    let scenario = fleet.to_str().unwrap().to_string();
    let (mut exp, addr) = exporter(dir.path(), &["demo", "--serve", "--scenario", &scenario]);
    let hook = Webhook::start();
    let (_am, am_port) = alertmanager(dir.path(), hook.port);
    let (_prom, port) = prometheus(dir.path(), &addr, am_port, "");

    // The faults the scenario plants page, one notification per host.
    hook.wait_for("for esx02", Duration::from_secs(90), |n| about(n, "esx02", "firing"));
    wait_series(
        port,
        r#"pvrdma_adapter_verdict{job="pvrdma",host_name="esx01",verdict="hca"} == 1"#,
        &["esx01"],
        Duration::from_secs(30),
    );

    // Every panel of the shipped dashboard finds series in this Prometheus.
    let dashboard: Value =
        serde_json::from_str(&shipped("contrib/grafana/pvrdma-doctor.json")).expect("dashboard JSON");
    assert_eq!(dashboard["__inputs"][0]["pluginId"], "prometheus");
    let host_var = &dashboard["templating"]["list"][0];
    assert_eq!(host_var["name"], "host");
    let hosts = query(port, "count by (host_name) (pvrdma_host_up)");
    assert!(hosts.len() >= 3, "{hosts:?}");
    let mut panels = 0;
    for p in dashboard["panels"].as_array().expect("panels") {
        for t in p["targets"].as_array().into_iter().flatten() {
            let expr = t["expr"].as_str().expect("expr").replace("$host", ".*");
            // The demo follows no vCenter: alerting_vcenter.rs checks those panels.
            if expr.contains("pvrdma_doctor_vcenter_") {
                continue;
            }
            let start = Instant::now();
            while query(port, &expr).is_empty() {
                assert!(
                    start.elapsed() < Duration::from_secs(30),
                    "panel {:?}: {expr} returns no series",
                    p["title"]
                );
                std::thread::sleep(Duration::from_millis(500));
            }
            panels += 1;
        }
    }
    assert!(panels >= 15, "{panels} panel queries");

    // Break esx01 as the README says: its pvrdma firewall ruleset off, and vsish shows
    // the adapter without its physical HCA.
    let vsish = fleet.join("esx01/vsish_pvrdma_properties.txt");
    let ruleset = fleet.join("esx01/esxcli_network_firewall_ruleset_list.txt");
    let (vsish_ok, ruleset_ok) = (
        std::fs::read_to_string(&vsish).unwrap(),
        std::fs::read_to_string(&ruleset).unwrap(),
    );
    assert!(vsish_ok.contains("Physical HCA available:1"));
    let injected = Instant::now();
    std::fs::write(
        &vsish,
        vsish_ok.replace("Physical HCA available:1", "Physical HCA available:0"),
    )
    .unwrap();
    std::fs::copy(fleet.join("esx02/esxcli_network_firewall_ruleset_list.txt"), &ruleset).unwrap();
    let page = hook.wait_for("for esx01", Duration::from_secs(90), |n| about(n, "esx01", "firing"));
    let to_page = injected.elapsed();
    std::thread::sleep(Duration::from_secs(8));
    let firing: Vec<Value> = hook.all().into_iter().filter(|n| about(n, "esx01", "firing")).collect();
    assert_eq!(
        firing.len(),
        1,
        "one page for one fault: {:#}",
        Value::Array(firing.clone())
    );
    let fallback = page["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["labels"]["alertname"] == "PvrdmaAdapterTcpFallback")
        .unwrap_or_else(|| panic!("{page:#}"))
        .clone();
    // The alert names the adapter, not the path that saw it: the per-host and the group
    // job's sightings are one alert.
    assert_eq!(
        fallback["labels"],
        serde_json::json!({"alertname": "PvrdmaAdapterTcpFallback", "severity": "critical",
                           "host_name": "esx01", "vm_name": "hpc-node01", "adapter": "0"}),
        "{page:#}"
    );
    let text = fallback["annotations"]["description"].as_str().unwrap();
    for word in [
        "ESXi host esx01",
        "VM hpc-node01",
        "adapter 0",
        "firewall-pvrdma",
        "`esxcli network firewall ruleset set -e true -r pvrdma`",
    ] {
        assert!(text.contains(word), "{word} missing: {text}");
    }
    let names = alert_names(&page);
    assert_eq!(
        names.iter().filter(|n| *n == "PvrdmaAdapterTcpFallback").count(),
        1,
        "{names:?}"
    );

    // esx01 stops answering with its fault in place: it pages as not read, and its
    // fault does not resolve for want of evidence.
    let broken: Vec<(std::ffi::OsString, Vec<u8>)> = std::fs::read_dir(fleet.join("esx01"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    std::fs::remove_dir_all(fleet.join("esx01")).unwrap();
    std::fs::create_dir(fleet.join("esx01")).unwrap();
    std::fs::copy(fleet.join("esx03/host-error.json"), fleet.join("esx01/host-error.json")).unwrap();
    let silent = hook.wait_for("PvrdmaHostNotRead for esx01", Duration::from_secs(90), |n| {
        about(n, "esx01", "firing") && alert_names(n).contains(&"PvrdmaHostNotRead".to_string())
    });
    let why = silent["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["labels"]["alertname"] == "PvrdmaHostNotRead")
        .expect("the alert")["annotations"]["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(why.contains("Why: "), "the page says why: {why}");
    for (alert, firing) in alert_states(&silent) {
        assert_eq!(firing, "firing", "{alert} in {silent:#}");
    }
    // It answers again, the fault unchanged; then it is mended.
    std::fs::remove_file(fleet.join("esx01/host-error.json")).unwrap();
    for (name, bytes) in &broken {
        std::fs::write(fleet.join("esx01").join(name), bytes).unwrap();
    }
    hook.wait_for("PvrdmaHostNotRead resolved for esx01", Duration::from_secs(90), |n| {
        about(n, "esx01", "firing")
            && alert_states(n).contains(&("PvrdmaHostNotRead".to_string(), "resolved".to_string()))
    });
    std::fs::write(&vsish, &vsish_ok).unwrap();
    std::fs::write(&ruleset, &ruleset_ok).unwrap();
    let mended = hook.wait_for("resolved for esx01", Duration::from_secs(90), |n| {
        about(n, "esx01", "resolved")
    });
    for n in hook.all().iter().filter(|n| n["groupLabels"]["host_name"] == "esx01") {
        for (alert, state) in alert_states(n) {
            let last = *n == mended;
            assert!(
                alert == "PvrdmaHostNotRead" || state == "firing" || last,
                "{alert} said resolved while esx01 was still broken: {n:#}"
            );
        }
    }
    let esx01_pages = hook
        .all()
        .iter()
        .filter(|n| n["groupLabels"]["host_name"] == "esx01")
        .count();
    // The fault, the host going silent, its return, the mend: four notifications.
    assert_eq!(esx01_pages, 4, "{:#}", Value::Array(hook.all()));

    // The exporter killed while esx02 is broken and esx03 unreachable: one page for it,
    // naming its targets; nothing about the hosts behind it, firing or resolved.
    let before = hook.all().len();
    let killed = Instant::now();
    exp.signal("-KILL");
    let _ = exp.wait_exit(Duration::from_secs(10));
    let down = hook.wait_for("PvrdmaExporterDown", Duration::from_secs(90), |n| {
        n["status"] == "firing" && alert_names(n).contains(&"PvrdmaExporterDown".to_string())
    });
    let to_exporter_page = killed.elapsed();
    let text = down["alerts"][0]["annotations"]["description"]
        .as_str()
        .unwrap_or_default();
    for target in [
        "esx01 (job pvrdma)",
        "esx02 (job pvrdma)",
        "esx03 (job pvrdma)",
        "demo (job pvrdma-groups)",
    ] {
        assert!(text.contains(target), "{target} missing: {down:#}");
    }
    // Down past keep_firing_for (12 s) and PvrdmaMetricsAbsent's `for` (30 s).
    std::thread::sleep(Duration::from_secs(45));
    let (_exp, back) = exporter_on(dir.path(), &["demo", "--serve", "--scenario", &scenario], &addr);
    assert_eq!(back, addr);
    wait_series(
        port,
        r#"up{job="pvrdma-groups"} == 1"#,
        &["demo"],
        Duration::from_secs(30),
    );
    hook.wait_for("PvrdmaExporterDown resolved", Duration::from_secs(60), |n| {
        n["status"] == "resolved" && alert_names(n).contains(&"PvrdmaExporterDown".to_string())
    });
    // A few group intervals (6 s) for anything that would follow.
    std::thread::sleep(Duration::from_secs(20));
    let since: Vec<Value> = hook.all()[before..].to_vec();
    let all = Value::Array(since.clone());
    let exporter_pages = since
        .iter()
        .filter(|n| alert_states(n).contains(&("PvrdmaExporterDown".to_string(), "firing".to_string())))
        .count();
    assert_eq!(exporter_pages, 1, "one page for the exporter: {all:#}");
    for n in &since {
        assert!(
            !["esx01", "esx02", "esx03"].contains(&n["groupLabels"]["host_name"].as_str().unwrap_or("")),
            "nothing about a host behind the exporter, firing or resolved: {all:#}"
        );
        assert!(
            !alert_names(n).contains(&"PvrdmaMetricsAbsent".to_string()),
            "no metrics because the exporter is down: the same page: {all:#}"
        );
    }
    eprintln!(
        "alerting figures (intervals / 10): injection -> notification {:.1} s, exporter killed -> notification {:.1} s, {} notifications from the kill to after the restart",
        to_page.as_secs_f64(),
        to_exporter_page.as_secs_f64(),
        since.len()
    );
}

/// Each alert of a notification with its status: (alertname, "firing" or "resolved").
fn alert_states(n: &Value) -> Vec<(String, String)> {
    n["alerts"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| {
                    (
                        x["labels"]["alertname"].as_str().unwrap_or("").to_string(),
                        x["status"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
#[ignore = "needs Prometheus and node_exporter: scripts/test.sh runs it"]
fn a_textfile_no_longer_rewritten_goes_stale_and_pages() {
    require(PROMTOOL);
    let dir = tempfile::tempdir().expect("tempdir");
    let textdir = dir.path().join("textfile");
    std::fs::create_dir(&textdir).unwrap();
    let file = textdir.join("pvrdma.prom");
    let node = NodeExporter::start(&textdir, &dir.path().join("node.log"));
    // The timer: a run every 2 s while `running`.
    let running = Arc::new(AtomicBool::new(true));
    let (r, f) = (running.clone(), file.clone());
    let writer = std::thread::spawn(move || {
        while r.load(Ordering::Relaxed) {
            let (_, code, stderr) = doctor(&[
                "demo",
                "--no-progress",
                "--format",
                "prometheus",
                "--output",
                f.to_str().unwrap(),
            ]);
            assert!([0, 1, 3].contains(&code), "{stderr}");
            std::thread::sleep(Duration::from_secs(2));
        }
    });
    let hook = Webhook::start();
    let (am, am_port) = alertmanager(dir.path(), hook.port);
    let node_job = format!(
        "  - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:{}']\n",
        node.port
    );
    // No exporter here: its jobs point at a closed port (and page as such, elsewhere).
    let closed = format!("127.0.0.1:{}", support::free_port());
    let (prom, port) = prometheus(dir.path(), &closed, am_port, &node_job);
    wait_series(
        port,
        r#"pvrdma_host_up{job="node"}"#,
        &["esx01"],
        Duration::from_secs(60),
    );
    wait_series(
        port,
        r#"ALERTS{alertname="PvrdmaAdapterTcpFallback",host_name="esx02",alertstate="firing"}"#,
        &["esx02"],
        Duration::from_secs(60),
    );
    assert!(query(port, r#"ALERTS{alertname="PvrdmaMetricsStale"}"#).is_empty());
    running.store(false, Ordering::Relaxed);
    writer.join().expect("the writer");
    let stopped = Instant::now();
    wait_series(
        port,
        r#"ALERTS{alertname="PvrdmaMetricsStale",alertstate="firing"}"#,
        &["node"],
        Duration::from_secs(60),
    );
    let logs = || format!("\nalertmanager log:\n{}\nprometheus log:\n{}", am.log(), prom.log());
    hook.wait_for_telling(
        "PvrdmaMetricsStale",
        Duration::from_secs(30),
        |n| n["status"] == "firing" && alert_names(n).contains(&"PvrdmaMetricsStale".to_string()),
        &logs,
    );
    // The exporter's jobs, aimed at a closed port, page as that exporter down.
    wait_series(
        port,
        r#"ALERTS{alertname="PvrdmaExporterDown",alertstate="firing"}"#,
        &[&format!("exporter=\"{closed}\"")],
        Duration::from_secs(30),
    );
    eprintln!(
        "alerting figures (intervals / 10): textfile writes stopped -> stale alert {:.1} s",
        stopped.elapsed().as_secs_f64()
    );
}
