//! The vCenter groups' state between reads: what a probe, `/sd` and `/metrics` see after
//! a read, a failed read, a reload. The reads themselves are the simulator's (see the
//! suite's `serve_vcenter`); here they are inventories as the client returns them.
use super::*;
use pvrdma_vsphere::{ConnectionState, Host, Inventory};
use std::time::UNIX_EPOCH;

/// Whether `host` is one a vCenter group has now, so a probe may name it alone (as the
/// exporter asks: each group's members).
fn allows(fleet: &Fleet, host: &str) -> bool {
    let names: Vec<String> = fleet.groups.borrow().keys().cloned().collect();
    names.iter().any(|g| {
        fleet
            .members(g)
            .and_then(Result::ok)
            .is_some_and(|m| m.iter().any(|h| h == host))
    })
}

fn config(dir: &std::path::Path, groups: &str) -> Config {
    std::fs::write(dir.join("pw"), "pw\n").unwrap();
    let text = format!(
        "targets: [static01]\nvcenters:\n  lab: {{url: vc01, user: u, password_file: {}/pw, refresh: 1s}}\ngroups:\n{groups}",
        dir.display()
    );
    Config::parse(&text).unwrap()
}

fn host(name: &str, dc: &str, cluster: Option<&str>, maintenance: bool) -> Host {
    Host {
        id: format!("host-{name}"),
        name: name.into(),
        datacenter: dc.into(),
        cluster: cluster.map(Into::into),
        cluster_path: cluster.map(|c| format!("/{dc}/host/{c}")),
        connection_state: ConnectionState::Connected,
        in_maintenance: maintenance,
    }
}

fn inventory(esx02_in_maintenance: bool) -> Inventory {
    Inventory {
        hosts: vec![
            host("esx01", "Lab East", Some("HPC"), false),
            host("esx02", "Lab East", Some("HPC"), esx02_in_maintenance),
            host("esx03", "Lab East", Some("HPC"), true),
            host("web01", "Lab East", Some("Web"), false),
            host("solo01", "Lab East", None, false),
            host("esx11", "Lab West", Some("HPC"), false),
        ],
        vms: Vec::new(),
    }
}

/// A read of `inventory` that ended at `read_at`.
fn snapshot(inventory: Inventory, read_at: SystemTime) -> Snapshot {
    Snapshot { inventory, read_at }
}

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

#[test]
fn a_group_has_no_hosts_until_read_then_the_selected_ones_and_keeps_them_through_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(
        dir.path(),
        "  hpc: {vcenter: lab, cluster: \"Lab East/HPC\"}\n  all: {vcenter: lab, module: default}\n",
    );
    let fleet = Fleet::default();
    let generation = fleet.sync(&c);
    let err = fleet.members("hpc").unwrap().unwrap_err();
    assert!(
        err.contains("no hosts yet") && err.contains("first read is under way"),
        "{err}"
    );
    assert!(fleet.members("static01").is_none() && !allows(&fleet, "esx01"));
    assert_eq!(fleet.sd(&c, Some("hpc")).unwrap(), "[]");

    let lines = fleet.apply(
        &c,
        generation,
        "lab",
        Ok(&snapshot(inventory(false), at(1000))),
        at(1000),
    );
    assert_eq!(fleet.members("hpc").unwrap().unwrap(), ["esx01", "esx02"]);
    assert!(allows(&fleet, "esx02") && allows(&fleet, "solo01") && !allows(&fleet, "esx03"));
    let text = lines.join("\n");
    assert!(
        text.contains("group hpc: 2 host(s) from vCenter lab: esx[01-02]"),
        "{text}"
    );
    assert!(text.contains("group hpc: skipped esx03: in maintenance mode"), "{text}");

    // /sd: one entry per datacenter and cluster, with the labels the recipe relabels.
    let sd: serde_json::Value = serde_json::from_str(&fleet.sd(&c, None).unwrap()).unwrap();
    let entries = sd.as_array().unwrap();
    let find = |group: &str, dc: &str, cluster: &str| {
        entries
            .iter()
            .find(|e| {
                e["labels"]["__meta_pvrdma_group"] == group
                    && e["labels"]["__meta_vcenter_datacenter"] == dc
                    && e["labels"]["__meta_vcenter_cluster"] == cluster
            })
            .unwrap_or_else(|| panic!("{group} {dc}/{cluster} in {sd}"))
    };
    assert_eq!(
        find("hpc", "Lab East", "HPC")["targets"],
        serde_json::json!(["esx01", "esx02"])
    );
    assert_eq!(find("hpc", "Lab East", "HPC")["labels"]["__meta_vcenter_name"], "lab");
    assert_eq!(
        find("hpc", "Lab East", "HPC")["labels"]["__meta_vcenter_cluster_path"],
        "/Lab East/host/HPC"
    );
    assert_eq!(find("all", "Lab West", "HPC")["targets"], serde_json::json!(["esx11"]));
    assert_eq!(find("all", "Lab East", "")["targets"], serde_json::json!(["solo01"]));
    assert_eq!(
        find("all", "Lab East", "Web")["labels"]["__meta_pvrdma_module"],
        "default"
    );
    assert!(find("hpc", "Lab East", "HPC")["labels"]
        .get("__meta_pvrdma_module")
        .is_none());
    assert_eq!(
        entries.len(),
        1 + 4,
        "hpc: 1; all: East/HPC, East/Web, East standalone, West/HPC"
    );
    assert!(fleet
        .sd(&c, Some("static01"))
        .unwrap_err()
        .contains("not a group read from vCenter"));

    // vCenter down: the hosts stay, the metrics say so.
    let lines = fleet.apply(&c, generation, "lab", Err("connection refused".into()), at(1030));
    assert_eq!(fleet.members("hpc").unwrap().unwrap(), ["esx01", "esx02"]);
    assert!(lines[0].contains("cannot be read: connection refused"), "{lines:?}");
    assert!(
        lines[0].contains("group hpc keeps its 2 host(s) read 30s ago"),
        "{lines:?}"
    );
    let mut m = String::new();
    fleet.render(&c, &mut m, at(1030));
    for line in [
        "pvrdma_doctor_vcenter_group_read_age_seconds{group=\"hpc\",vcenter=\"lab\"} 30.000",
        "pvrdma_doctor_vcenter_group_stale{group=\"hpc\",vcenter=\"lab\"} 0",
        "pvrdma_doctor_vcenter_up{vcenter=\"lab\"} 0",
        "pvrdma_doctor_vcenter_last_success_timestamp_seconds{vcenter=\"lab\"} 1000.000",
        "pvrdma_doctor_vcenter_reads_total{vcenter=\"lab\"} 2",
        "pvrdma_doctor_vcenter_read_failures_total{vcenter=\"lab\"} 1",
        "pvrdma_doctor_vcenter_group_hosts{group=\"hpc\",vcenter=\"lab\"} 2",
        "pvrdma_doctor_vcenter_group_current{group=\"hpc\",vcenter=\"lab\"} 0",
        "pvrdma_doctor_vcenter_probes_unavailable_total 0",
    ] {
        assert!(m.lines().any(|l| l == line), "{line} in\n{m}");
    }

    // Back, with esx02 in maintenance: it leaves the group, and the log says why.
    let lines = fleet.apply(
        &c,
        generation,
        "lab",
        Ok(&snapshot(inventory(true), at(1060))),
        at(1060),
    );
    assert_eq!(fleet.members("hpc").unwrap().unwrap(), ["esx01"]);
    assert!(!allows(&fleet, "esx02"));
    let text = lines.join("\n");
    assert!(text.contains("vCenter lab (vc01) answers again"), "{text}");
    assert!(
        text.contains("group hpc: esx02 left the hosts vCenter selects (in maintenance mode)"),
        "{text}"
    );
}

#[test]
fn a_reload_keeps_what_it_did_not_change_and_ignores_the_old_followers() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(
        dir.path(),
        "  hpc: {vcenter: lab, cluster: HPC}\n  web: {vcenter: lab, cluster: Web}\n",
    );
    let fleet = Fleet::default();
    let first = fleet.sync(&c);
    let inv = Inventory {
        hosts: vec![
            host("esx01", "East", Some("HPC"), false),
            host("web01", "East", Some("Web"), false),
        ],
        vms: Vec::new(),
    };
    fleet.apply(&c, first, "lab", Ok(&snapshot(inv.clone(), at(10))), at(10));
    let changed = config(
        dir.path(),
        "  hpc: {vcenter: lab, cluster: HPC}\n  web: {vcenter: lab, cluster: [Web, HPC]}\n",
    );
    let second = fleet.sync(&changed);
    assert_eq!(fleet.members("hpc").unwrap().unwrap(), ["esx01"], "unchanged: kept");
    assert!(
        fleet.members("web").unwrap().is_err(),
        "its selection changed: read again"
    );
    // A read of the follower the reload stopped does not count.
    assert!(fleet
        .apply(&changed, first, "lab", Err("late".into()), at(11))
        .is_empty());
    let mut m = String::new();
    fleet.render(&changed, &mut m, at(11));
    assert!(m.contains("pvrdma_doctor_vcenter_up{vcenter=\"lab\"} 1"), "{m}");
    fleet.apply(&changed, second, "lab", Ok(&snapshot(inv, at(12))), at(12));
    assert_eq!(fleet.members("web").unwrap().unwrap(), ["esx01", "web01"]);
}

#[test]
fn hosts_a_probe_cannot_name_are_left_out_and_an_empty_selection_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(dir.path(), "  hpc: {vcenter: lab}\n  rack: static01\n");
    let fleet = Fleet::default();
    let generation = fleet.sync(&c);
    let inv = Inventory {
        hosts: vec![
            host("esx 01", "East", Some("HPC"), false),
            host("rack", "East", Some("HPC"), false),
            host("esx02", "East", Some("HPC"), true),
        ],
        vms: Vec::new(),
    };
    let text = fleet
        .apply(&c, generation, "lab", Ok(&snapshot(inv, at(1))), at(1))
        .join("\n");
    assert!(text.contains("host \"esx 01\" left out"), "{text}");
    assert!(
        text.contains("host \"rack\" left out: it is also the name of a group"),
        "{text}"
    );
    let err = fleet.members("hpc").unwrap().unwrap_err();
    assert!(
        err.contains("no host to probe") && err.contains("esx02 in maintenance mode"),
        "{err}"
    );
}

/// A cluster name vCenter has in two places: the log says which `cluster:` to write in
/// the exporter's configuration, never the command line's option.
#[test]
fn an_ambiguous_cluster_is_told_in_the_configurations_words() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(dir.path(), "  hpc: {vcenter: lab, cluster: HPC}\n");
    let fleet = Fleet::default();
    let generation = fleet.sync(&c);
    let lines = fleet.apply(
        &c,
        generation,
        "lab",
        Ok(&snapshot(inventory(false), at(1000))),
        at(1000),
    );
    let text = lines.join("\n");
    assert!(
        text.contains(
            "group hpc: vCenter lab: cluster `HPC` is in more than one place (Lab East/HPC, Lab West/HPC): write \
             DATACENTER/NAME or the inventory path, e.g. cluster: \"Lab East/HPC\"; the group has no hosts yet"
        ),
        "{text}"
    );
    assert!(!text.contains("--cluster"), "{text}");
    let why = fleet.members("hpc").unwrap().unwrap_err();
    assert!(why.contains("e.g. cluster: \"Lab East/HPC\")"), "{why}");
}

/// The exporter's metric of one group: its value at `now`, `None` when absent.
fn group_metric(fleet: &Fleet, c: &Config, name: &str, group: &str, now: SystemTime) -> Option<String> {
    let mut m = String::new();
    fleet.render(c, &mut m, now);
    let prefix = format!("{name}{{group=\"{group}\",vcenter=\"lab\"}} ");
    m.lines().find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
}

/// A read older than its vCenter's refresh plus timeout is stale: the hosts an SSH group
/// probes, the configuration a no_ssh group judges (its oldest host's), and a group no read
/// has given hosts once its first read failed.
#[test]
fn a_read_older_than_refresh_plus_timeout_is_stale_and_said_so() {
    use pvrdma_engine::capture::CaptureSource;
    let dir = tempfile::tempdir().unwrap();
    // refresh 1s, timeout 30s (the default): stale after 31 s.
    let c = config(
        dir.path(),
        "  hpc: {vcenter: lab, cluster: \"Lab East/HPC\"}\n  quiet: {vcenter: lab, cluster: \"Lab East/HPC\", no_ssh: true}\n",
    );
    let fleet = Fleet::default();
    let generation = fleet.sync(&c);
    let age = |group: &str, now| group_metric(&fleet, &c, "pvrdma_doctor_vcenter_group_read_age_seconds", group, now);
    let stale = |group: &str, now| group_metric(&fleet, &c, "pvrdma_doctor_vcenter_group_stale", group, now);
    let started = SystemTime::now();
    assert_eq!(age("hpc", started), None, "no read yet");
    assert_eq!(
        stale("hpc", started).as_deref(),
        Some("0"),
        "the first read is under way"
    );
    assert_eq!(
        stale("hpc", started + Duration::from_secs(31)).as_deref(),
        Some("1"),
        "it outlasted the timeout"
    );

    let read = at(1000);
    fleet.apply(&c, generation, "lab", Ok(&snapshot(inventory(false), read)), read);
    assert_eq!(age("hpc", at(1010)).as_deref(), Some("10.000"));
    assert_eq!(stale("hpc", at(1031)).as_deref(), Some("0"));
    // The inventory is read, not yet the configuration: the no_ssh group has none.
    assert_eq!(age("quiet", at(1001)), None);
    let capture = |h: &str| HostCapture::new(h, CaptureSource::Live);
    fleet.store_configuration(generation, "lab", vec![capture("esx01")], at(1002));
    fleet.store_configuration(generation, "lab", vec![capture("esx02")], at(1004));
    assert_eq!(age("quiet", at(1010)).as_deref(), Some("8.000"), "the oldest host's");
    assert!(!fleet.configuration_stale(&[capture("esx01"), capture("esx02")], at(1033)));

    // vCenter goes away: the reads kept grow old, then stale.
    fleet.apply(&c, generation, "lab", Err("connection refused".into()), at(1020));
    assert_eq!(stale("hpc", at(1031)).as_deref(), Some("0"));
    assert_eq!(stale("hpc", at(1032)).as_deref(), Some("1"));
    assert_eq!(stale("quiet", at(1033)).as_deref(), Some("0"));
    assert_eq!(stale("quiet", at(1034)).as_deref(), Some("1"));
    assert_eq!(age("quiet", at(1100)).as_deref(), Some("98.000"));
    assert!(fleet.configuration_stale(&[capture("esx01")], at(1034)));
    assert!(!fleet.configuration_stale(&[capture("esx02")], at(1034)));

    // A group added by a reload while vCenter cannot be read: stale once a read failed.
    let more = config(
        dir.path(),
        "  hpc: {vcenter: lab, cluster: \"Lab East/HPC\"}\n  web: {vcenter: lab, cluster: \"Lab East/Web\"}\n",
    );
    let generation = fleet.sync(&more);
    let now = SystemTime::now();
    assert_eq!(
        group_metric(&fleet, &more, "pvrdma_doctor_vcenter_group_stale", "web", now).as_deref(),
        Some("0")
    );
    fleet.apply(&more, generation, "lab", Err("connection refused".into()), now);
    assert_eq!(
        group_metric(&fleet, &more, "pvrdma_doctor_vcenter_group_stale", "web", now).as_deref(),
        Some("1")
    );
}
