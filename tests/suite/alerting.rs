//! The shipped alerting chain against its real consumers: `promtool test rules` fed with
//! the series the exporter and the textfile really expose (captured here, on each path),
//! and a real Prometheus with the shipped rules and recipe sending to a real Alertmanager
//! (Debian package `prometheus-alertmanager`) with the shipped configuration, whose
//! notifications a webhook receiver in this test collects while a fault is injected into
//! the demo's scenario folder, reverted, SSH to a host is broken and the exporter is
//! killed. Intervals are scaled down (30 s scrapes become 3 s), nothing else changes.
use crate::prometheus::{doctor, parse, require, root, NodeExporter, PROMTOOL};
use crate::serve::{exporter, get, get_status, query, Proc, PROMETHEUS};
use crate::support;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ALERTMANAGER: &str = "/usr/bin/prometheus-alertmanager";

fn shipped(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The shipped rules with every duration divided by ten (a 30 s scrape becomes 3 s).
fn scaled_rules() -> String {
    let mut s = shipped("contrib/prometheus/pvrdma-doctor.rules.yml");
    for (from, to) in [
        // keep_firing_for first: "for: 2m" is a part of it.
        ("keep_firing_for: 2m", "keep_firing_for: 12s"),
        ("interval: 15s", "interval: 1s"),
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

/// A series in promtool's notation.
fn series_name(name: &str, labels: &[(String, String)]) -> String {
    let inner: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}={}", serde_json::to_string(v).expect("a string")))
        .collect();
    format!("{name}{{{}}}", inner.join(","))
}

/// The input series of one scraped exposition, with the labels the scrape adds; the
/// run's timestamp becomes fresh at every step (the staleness rule has its own test).
fn input_series(text: &str, job: &str, instance: &str) -> Vec<Value> {
    parse(text)
        .into_iter()
        .map(|(name, labels, value)| {
            let mut l: Vec<(String, String)> = labels.into_iter().collect();
            l.push(("job".into(), job.into()));
            l.push(("instance".into(), instance.into()));
            let values = if name == "pvrdma_last_run_timestamp_seconds" {
                "0+15x40".to_string()
            } else {
                format!("{value}x40")
            };
            json!({"series": series_name(&name, &l), "values": values})
        })
        .collect()
}

/// What the JSON report says about the demo's esx02: its adapter's reasons and the
/// remedy of its failing check (the oracle of the alert texts).
fn esx02_from_the_report() -> (String, String) {
    let (out, _, stderr) = doctor(&["demo", "--no-progress", "--format", "json"]);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let host = report["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .find(|h| h["host"] == "esx02")
        .expect("esx02")
        .clone();
    let reasons: Vec<String> = host["vms"][0]["adapters"][0]["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .map(|r| r.as_str().expect("text").to_string())
        .collect();
    let check = host["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["status"] == "fail")
        .expect("a failing check");
    assert_eq!(check["id"], "firewall-pvrdma");
    (
        reasons.join("; "),
        check["remedy"].as_str().expect("remedy").to_string(),
    )
}

fn promtool_test(dir: &Path, tests: Value) -> String {
    std::fs::write(
        dir.join("rules.yml"),
        shipped("contrib/prometheus/pvrdma-doctor.rules.yml"),
    )
    .unwrap();
    std::fs::write(dir.join("test.yml"), serde_json::to_string_pretty(&tests).unwrap()).unwrap();
    let out = Command::new(PROMTOOL)
        .args(["test", "rules", "test.yml"])
        .current_dir(dir)
        .output()
        .expect("promtool runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success() && said.contains("SUCCESS"), "{said}");
    said
}

#[test]
#[ignore = "needs promtool: scripts/test.sh runs it"]
fn the_rules_name_host_vm_adapter_cause_and_fix_on_every_path_from_captured_series() {
    require(PROMTOOL);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(PROMTOOL)
        .args(["check", "rules"])
        .arg(root().join("contrib/prometheus/pvrdma-doctor.rules.yml"))
        .output()
        .expect("promtool runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));

    // What each path really serves: the exporter's per-host and group probes, and the
    // textfile a one-shot run writes.
    let (_exp, addr) = exporter(dir.path(), &["demo", "--serve"]);
    let mut per_host = Vec::new();
    for host in ["esx01", "esx02", "esx03"] {
        let (status, body) = get(&addr, &format!("/probe?target={host}"));
        assert_eq!(status, 200, "{host}: {body}");
        per_host.extend(input_series(&body, "pvrdma", host));
    }
    let (status, body) = get(&addr, "/probe?target=demo");
    assert_eq!(status, 200, "{body}");
    let group = input_series(&body, "pvrdma-groups", "demo");
    let (textfile, _, stderr) = doctor(&["demo", "--no-progress", "--format", "prometheus"]);
    assert!(textfile.contains("pvrdma_host_up"), "{stderr}");
    let textfile = input_series(&textfile, "node", "textfile:9100");

    let (why, fix) = esx02_from_the_report();
    let fallback = |job: &str, instance: &str| {
        json!({
            "exp_labels": {"severity": "critical", "job": job, "instance": instance, "host_name": "esx02",
                           "vm_name": "hpc-node02", "adapter": "0", "verdict": "tcp-fallback"},
            "exp_annotations": {
                "summary": "PVRDMA adapter 0 of VM hpc-node02 on ESXi host esx02 falls back to TCP",
                "description": format!("PVRDMA adapter 0 of VM hpc-node02 on ESXi host esx02 sends its traffic to other hosts over TCP, not through the physical HCA (vsish `Physical HCA available:0`). Why: {why}. Fix: `{fix}` (firewall-pvrdma). The whole diagnosis: `pvrdma-doctor esx02`."),
            }
        })
    };
    let check = |job: &str, instance: &str| {
        json!({
            "exp_labels": {"severity": "critical", "job": job, "instance": instance, "host_name": "esx02",
                           "check": "firewall-pvrdma", "status": "fail"},
            "exp_annotations": {
                "summary": "PVRDMA host check firewall-pvrdma fails on ESXi host esx02",
                "description": format!("The pvrdma-doctor host check firewall-pvrdma fails on ESXi host esx02: PVRDMA traffic of its VMs cannot use the HCA as the host is set up. Fix: `{fix}`. The whole diagnosis: `pvrdma-doctor esx02`."),
            }
        })
    };
    let not_read = |job: &str, instance: &str| {
        json!({
            "exp_labels": {"severity": "warning", "job": job, "instance": instance, "host_name": "esx03"},
            "exp_annotations": {
                "summary": "pvrdma-doctor cannot read ESXi host esx03: its PVRDMA adapters are not watched",
                "description": "pvrdma-doctor has not read ESXi host esx03 for 2 minutes (status unreachable): unreachable, SSH refused, login refused, timed out or not ESXi, so a fallback there would go unseen. `pvrdma-doctor esx03` says why (the exporter also logs it: `journalctl -u pvrdma-doctor-exporter`).",
            }
        })
    };
    // Each path on its own, then a host scraped both alone and in its group: it alerts
    // once, from its per-host series.
    let both: Vec<Value> = per_host.iter().chain(&group).cloned().collect();
    let mut cases = Vec::new();
    for (series, job, instance) in [
        (per_host, "pvrdma", "esx02"),
        (group, "pvrdma-groups", "demo"),
        (textfile, "node", "textfile:9100"),
        (both, "pvrdma", "esx02"),
    ] {
        let unread = if instance == "esx02" { "esx03" } else { instance };
        cases.push(json!({
            "interval": "15s",
            "input_series": series,
            "alert_rule_test": [
                // Not yet: 45 s of `for` have not passed.
                {"eval_time": "30s", "alertname": "PvrdmaAdapterTcpFallback", "exp_alerts": []},
                {"eval_time": "1m", "alertname": "PvrdmaAdapterTcpFallback", "exp_alerts": [fallback(job, instance)]},
                {"eval_time": "1m", "alertname": "PvrdmaCheckFailing", "exp_alerts": [check(job, instance)]},
                {"eval_time": "1m45s", "alertname": "PvrdmaHostNotRead", "exp_alerts": []},
                {"eval_time": "2m15s", "alertname": "PvrdmaHostNotRead", "exp_alerts": [not_read(job, unread)]},
                {"eval_time": "5m", "alertname": "PvrdmaFleetCheckFailing", "exp_alerts": []},
                {"eval_time": "5m", "alertname": "PvrdmaMetricsStale", "exp_alerts": []},
                {"eval_time": "5m", "alertname": "PvrdmaHostVanished", "exp_alerts": []},
                {"eval_time": "9m", "alertname": "PvrdmaMetricsAbsent", "exp_alerts": []},
                {"eval_time": "9m", "alertname": "PvrdmaExporterDown", "exp_alerts": []},
            ],
        }));
    }
    let tests = json!({"rule_files": ["rules.yml"], "evaluation_interval": "15s", "tests": cases});
    promtool_test(dir.path(), tests);
}

/// Notifications Alertmanager POSTs to the webhook, as JSON, in arrival order.
struct Webhook {
    port: u16,
    got: Arc<Mutex<Vec<Value>>>,
    stop: Arc<AtomicBool>,
}

impl Webhook {
    fn start() -> Webhook {
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

    fn all(&self) -> Vec<Value> {
        self.got.lock().unwrap().clone()
    }

    /// Waits (bounded) for a notification that `pick` accepts; returns it.
    fn wait_for(&self, what: &str, limit: Duration, pick: impl Fn(&Value) -> bool) -> Value {
        self.wait_for_telling(what, limit, pick, &String::new)
    }

    /// [`Webhook::wait_for`], a failure also telling `context()` (the logs of the
    /// Alertmanager and Prometheus that should have sent it).
    fn wait_for_telling(
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

fn spawn(cmd: &mut Command, log: &Path) -> Proc {
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
fn alertmanager(dir: &Path, webhook: u16) -> (Proc, u16) {
    require(ALERTMANAGER);
    let mut config = shipped("contrib/alertmanager/alertmanager.yml");
    for (from, to) in [
        ("http://127.0.0.1:5001/", format!("http://127.0.0.1:{webhook}/")),
        ("group_wait: 10s", "group_wait: 1s".into()),
        ("group_interval: 1m", "group_interval: 2s".into()),
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
fn prometheus(dir: &Path, exporter: &str, alertmanager: u16, extra_jobs: &str) -> (Proc, u16) {
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
fn wait_series(port: u16, expr: &str, want: &[&str], limit: Duration) -> Duration {
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

fn copy_dir(from: &Path, to: &Path) {
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
fn about(n: &Value, host: &str, status: &str) -> bool {
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
fn a_fallback_pages_once_with_its_fix_resolves_and_blindness_pages_too() {
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
    assert_eq!(fallback["labels"]["job"], "pvrdma", "{page:#}");
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

    // Mended: one resolved notification.
    std::fs::write(&vsish, &vsish_ok).unwrap();
    std::fs::write(&ruleset, &ruleset_ok).unwrap();
    hook.wait_for("resolved for esx01", Duration::from_secs(90), |n| {
        about(n, "esx01", "resolved")
    });

    // SSH to esx01 broken: its connections are closed before the banner.
    std::fs::remove_dir_all(fleet.join("esx01")).unwrap();
    std::fs::create_dir(fleet.join("esx01")).unwrap();
    std::fs::copy(fleet.join("esx03/host-error.json"), fleet.join("esx01/host-error.json")).unwrap();
    hook.wait_for("PvrdmaHostNotRead for esx01", Duration::from_secs(90), |n| {
        about(n, "esx01", "firing") && alert_names(n).contains(&"PvrdmaHostNotRead".to_string())
    });

    // The exporter killed: the targets it served page.
    let killed = Instant::now();
    exp.signal("-KILL");
    let _ = exp.wait_exit(Duration::from_secs(10));
    hook.wait_for("PvrdmaExporterDown", Duration::from_secs(90), |n| {
        n["status"] == "firing" && alert_names(n).contains(&"PvrdmaExporterDown".to_string())
    });
    eprintln!(
        "alerting figures (intervals / 10): injection -> notification {:.1} s, exporter killed -> notification {:.1} s",
        to_page.as_secs_f64(),
        killed.elapsed().as_secs_f64()
    );
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
        r#"ALERTS{alertname="PvrdmaAdapterTcpFallback",job="node",alertstate="firing"}"#,
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
    // The exporter's jobs, aimed at a closed port, page as a target down.
    wait_series(
        port,
        r#"ALERTS{alertname="PvrdmaExporterDown",alertstate="firing"}"#,
        &["pvrdma"],
        Duration::from_secs(30),
    );
    eprintln!(
        "alerting figures (intervals / 10): textfile writes stopped -> stale alert {:.1} s",
        stopped.elapsed().as_secs_f64()
    );
}
