//! The exporter keeps following vCenter through what happens to a long-running server:
//! vCenter failing a read or gone altogether (the hosts read last stay at `/sd`, never an
//! empty list, and `pvrdma_doctor_vcenter_up` says so), a reload (SIGHUP: the old
//! session logged out, one session left), and a session vCenter expired (renewed, the
//! cluster still followed). Against govmomi's vSphere simulator, never a fake of the API.
use crate::serve::get;
use crate::serve_vcenter::{cluster_of_three as cluster, exporter_config, exporter_of, stop, targets};
use std::time::{Duration, Instant};

/// The value of the series `series` (name and labels, as written) in an exposition.
fn value<'a>(body: &'a str, series: &str) -> Option<&'a str> {
    body.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
}

const UP: &str = "pvrdma_doctor_vcenter_up{vcenter=\"lab\"}";
const FAILURES: &str = "pvrdma_doctor_vcenter_read_failures_total{vcenter=\"lab\"}";
const GROUP_HOSTS: &str = "pvrdma_doctor_vcenter_group_hosts{group=\"hpc\",vcenter=\"lab\"}";
const CURRENT: &str = "pvrdma_doctor_vcenter_group_current{group=\"hpc\",vcenter=\"lab\"}";

/// Asks `addr` for `path` until `done` holds for the body (at most a minute, every
/// 50 ms); that body. Fails the test with the last body otherwise.
fn until(addr: &str, path: &str, what: &str, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = get(addr, path);
        if status == 200 && done(&body) {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not within a minute; {path}:\n{body}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn an_unreadable_vcenter_keeps_the_hosts_read_last_and_says_so_until_it_answers_again() {
    let mut sim = cluster();
    let dir = tempfile::tempdir().expect("tempdir");
    let (running, addr) = exporter_of(&sim, dir.path(), ", refresh: 2s", "");
    until(&addr, "/metrics", "the first read", |m| value(m, UP) == Some("1"));

    // One read answers a fault: the group keeps its hosts, marked as not current.
    sim.fail_next_read();
    let failed = until(&addr, "/metrics", "vCenter up 0 after a failed read", |m| {
        value(m, UP) == Some("0")
    });
    assert_eq!(value(&failed, FAILURES), Some("1"), "{failed}");
    assert_eq!(value(&failed, GROUP_HOSTS), Some("2"), "{failed}");
    assert_eq!(value(&failed, CURRENT), Some("0"), "{failed}");
    let said = running.stderr();
    assert!(said.contains("the inventory cannot be read: "), "{said}");
    assert!(said.contains("group hpc keeps its 2 host(s) read "), "{said}");
    // The next read answers: back to 1, the failure counted once.
    let back = until(&addr, "/metrics", "vCenter up 1 again", |m| value(m, UP) == Some("1"));
    assert_eq!(value(&back, FAILURES), Some("1"), "{back}");
    assert_eq!(value(&back, CURRENT), Some("1"), "{back}");
    let said = running.stderr();
    assert!(
        said.contains("vCenter lab (") && said.contains(") answers again"),
        "{said}"
    );

    // vCenter is gone (its process killed): every read fails from now on, and Prometheus
    // is still given the hosts read last, read after read.
    drop(sim);
    let gone = until(&addr, "/metrics", "three more failed reads", |m| {
        value(m, FAILURES).and_then(|f| f.parse::<u64>().ok()) >= Some(4)
    });
    assert_eq!(value(&gone, UP), Some("0"), "{gone}");
    assert_eq!(value(&gone, GROUP_HOSTS), Some("2"), "{gone}");
    assert_eq!(value(&gone, CURRENT), Some("0"), "{gone}");
    for path in ["/sd?group=hpc", "/sd"] {
        let (status, sd) = get(&addr, path);
        assert_eq!(status, 200, "{sd}");
        assert_eq!(targets(&sd), ["esx01", "esx02"], "{path}");
    }

    running.interrupt();
    let out = running.wait(Duration::from_secs(60));
    assert!(out.stderr.contains("pvrdma-doctor: stopped"), "{}", out.stderr);
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn sighup_reads_the_configuration_and_the_inventory_again_over_one_new_session() {
    let mut sim = cluster();
    let dir = tempfile::tempdir().expect("tempdir");
    // No read but at the start and on SIGHUP.
    let (running, addr) = exporter_of(&sim, dir.path(), ", refresh: 1h", "");
    assert_eq!(sim.sessions(), 1);
    sim.set_maintenance("esx02", true);
    // The reloaded file names a module for the group: its label shows the file was read.
    std::fs::write(
        dir.path().join("exporter.yml"),
        format!(
            "modules:\n  nightly: {{}}\n{}",
            exporter_config(&sim, ", refresh: 1h", ", module: nightly")
        ),
    )
    .expect("configuration");
    running.signal("-HUP");

    // The hosts stay served through the reload, and the next read drops esx02.
    let deadline = Instant::now() + Duration::from_secs(60);
    let sd = loop {
        let (status, sd) = get(&addr, "/sd?group=hpc");
        assert_eq!(status, 200, "{sd}");
        let now = targets(&sd);
        assert!(!now.is_empty(), "no target during the reload: {sd}");
        if now == ["esx01"] {
            break sd;
        }
        assert!(
            Instant::now() < deadline,
            "esx02 still served: {sd}\n{}",
            running.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let labels = &serde_json::from_str::<serde_json::Value>(&sd).expect("JSON")[0]["labels"];
    assert_eq!(labels["__meta_pvrdma_module"], "nightly", "{sd}");

    // The session of the configuration before is logged out: one is left, the new one.
    let deadline = Instant::now() + Duration::from_secs(30);
    while sim.sessions() != 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(sim.sessions(), 1, "{}", running.stderr());
    let said = running.stderr();
    assert!(said.contains("pvrdma-doctor: reloaded "), "{said}");
    assert!(said.contains("vCenter lab: session logged out"), "{said}");
    let (_, metrics) = get(&addr, "/metrics");
    assert_eq!(value(&metrics, UP), Some("1"), "{metrics}");

    let said = stop(running, &mut sim);
    assert_eq!(said.matches("vCenter lab: session logged out").count(), 2, "{said}");
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_session_vcenter_expired_is_renewed_and_the_cluster_still_followed() {
    let mut sim = cluster();
    let dir = tempfile::tempdir().expect("tempdir");
    let (running, addr) = exporter_of(&sim, dir.path(), ", refresh: 1s", "");
    assert_eq!(sim.sessions(), 1);

    // vCenter ends the session (its idle timeout), then DRS evacuates esx02 for esx03.
    // (No count of sessions here: a read under way may already have logged in again.)
    sim.expire_sessions();
    sim.set_maintenance("esx03", false);
    sim.set_maintenance("esx02", true);
    let sd = until(&addr, "/sd?group=hpc", "the change after the expiry", |sd| {
        targets(sd) == ["esx01", "esx03"]
    });
    assert_eq!(targets(&sd), ["esx01", "esx03"]);
    // Renewed with one login, not a failed read: vCenter stayed up all along.
    let (_, metrics) = get(&addr, "/metrics");
    assert_eq!(value(&metrics, UP), Some("1"), "{metrics}");
    assert_eq!(value(&metrics, FAILURES), Some("0"), "{metrics}");
    assert_eq!(sim.sessions(), 1, "one new session: {}", running.stderr());

    let said = stop(running, &mut sim);
    assert!(said.contains("vCenter lab: session logged out"), "{said}");
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_reload_during_a_read_vcenter_is_slow_to_answer_still_logs_that_session_out() {
    let mut sim = cluster();
    let dir = tempfile::tempdir().expect("tempdir");
    let (running, addr) = exporter_of(&sim, dir.path(), ", refresh: 1h, timeout: 60s", "");
    // The read after the first reload answers only after 20 s.
    sim.delay_next_read(20);
    running.signal("-HUP");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(running.stderr().contains("vCenter lab: session logged out") && sim.sessions() == 1) {
        assert!(Instant::now() < deadline, "no new session: {}", running.stderr());
        std::thread::sleep(Duration::from_millis(100));
    }
    // That read is under way: a second reload cuts it, and its session is logged out.
    running.signal("-HUP");
    let deadline = Instant::now() + Duration::from_secs(60);
    while running.stderr().matches("vCenter lab: session logged out").count() < 2 {
        assert!(
            Instant::now() < deadline,
            "the cut read's session: {}",
            running.stderr()
        );
        let (_, sd) = get(&addr, "/sd?group=hpc");
        assert_eq!(targets(&sd), ["esx01", "esx02"], "the hosts stay served");
        std::thread::sleep(Duration::from_millis(100));
    }
    let metrics = until(&addr, "/metrics", "the read after the second reload", |m| {
        value(m, "pvrdma_doctor_vcenter_reads_total{vcenter=\"lab\"}") == Some("2")
    });
    assert_eq!(value(&metrics, UP), Some("1"), "{metrics}");
    assert_eq!(
        value(&metrics, FAILURES),
        Some("0"),
        "the cut read is no failure: {metrics}"
    );
    assert_eq!(sim.sessions(), 1, "{}", running.stderr());

    let said = stop(running, &mut sim);
    assert_eq!(said.matches("vCenter lab: session logged out").count(), 3, "{said}");
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn the_read_counters_survive_a_reload_that_changes_the_vcenters_settings() {
    let mut sim = cluster();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("exporter.yml");
    // Pinned to a certificate vCenter does not have: every read is refused.
    let wrong = ["AB"; 32].join(":");
    let right = exporter_config(&sim, ", refresh: 1s", "");
    std::fs::write(&config, right.replace(&sim.thumbprint, &wrong)).expect("configuration");
    let (running, addr) = crate::serve_vcenter::serving(&sim, &config, "the inventory cannot be read");
    let before = until(&addr, "/metrics", "three refused reads", |m| {
        value(m, FAILURES).and_then(|f| f.parse::<u64>().ok()) >= Some(3)
    });
    let count = |m: &str, series: &str| -> u64 {
        value(m, series)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{series}: {m}"))
    };
    let reads = "pvrdma_doctor_vcenter_reads_total{vcenter=\"lab\"}";
    let (reads_before, failures_before) = (count(&before, reads), count(&before, FAILURES));

    // The admin pins the right certificate: the counters go on from where they were.
    std::fs::write(&config, &right).expect("configuration");
    running.signal("-HUP");
    let after = until(&addr, "/metrics", "a read with the new pin", |m| {
        value(m, UP) == Some("1")
    });
    assert!(
        count(&after, FAILURES) >= failures_before,
        "reset by the reload: {after}"
    );
    assert!(count(&after, reads) > reads_before, "{after}");
    assert_eq!(value(&after, GROUP_HOSTS), Some("2"), "{after}");

    stop(running, &mut sim);
}

/// vCenter gone while a no_ssh group is probed: the probes answer from the configuration
/// read last (`pvrdma_up` still 1: every host was read, from vCenter), and once that read is
/// older than `refresh` plus `timeout` they and `/metrics` say it is stale, its age growing.
#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_no_ssh_group_whose_vcenter_is_gone_answers_from_the_last_read_and_says_it_is_stale() {
    const STALE: &str = "pvrdma_doctor_vcenter_group_stale{group=\"hpc\",vcenter=\"lab\"}";
    const AGE: &str = "pvrdma_doctor_vcenter_group_read_age_seconds{group=\"hpc\",vcenter=\"lab\"}";
    let sim = cluster();
    let dir = tempfile::tempdir().expect("tempdir");
    let (running, addr) = exporter_of(&sim, dir.path(), ", refresh: 1s, timeout: 2s", ", no_ssh: true");
    let fresh = until(&addr, "/probe?target=hpc", "the configuration read", |b| {
        value(b, "pvrdma_vcenter_read_stale") == Some("0")
    });
    assert_eq!(value(&fresh, "pvrdma_up"), Some("1"), "{fresh}");
    let metrics = until(&addr, "/metrics", "the group's read age", |m| value(m, AGE).is_some());
    assert_eq!(value(&metrics, STALE), Some("0"), "{metrics}");
    let age = |m: &str| value(m, AGE).and_then(|a| a.parse::<f64>().ok()).unwrap_or(-1.0);
    assert!(age(&metrics) < 3.0, "{metrics}");

    drop(sim);
    let gone = until(&addr, "/metrics", "the group stale", |m| value(m, STALE) == Some("1"));
    assert_eq!(value(&gone, UP), Some("0"), "{gone}");
    assert!(age(&gone) > 3.0, "older than refresh plus timeout: {gone}");
    let probe = until(&addr, "/probe?target=hpc", "the probe stale", |b| {
        value(b, "pvrdma_vcenter_read_stale") == Some("1")
    });
    assert_eq!(
        value(&probe, "pvrdma_up"),
        Some("1"),
        "answered from the last read: {probe}"
    );
    assert!(probe.contains("pvrdma_host_up{host_name=\"esx01\"} 1"), "{probe}");
    // A host of the group probed alone says so too.
    let (status, one) = get(&addr, "/probe?target=esx02");
    assert_eq!(status, 200, "{one}");
    assert_eq!(value(&one, "pvrdma_vcenter_read_stale"), Some("1"), "{one}");

    running.interrupt();
    let out = running.wait(Duration::from_secs(60));
    assert!(out.stderr.contains("pvrdma-doctor: stopped"), "{}", out.stderr);
}
