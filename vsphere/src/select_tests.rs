use super::*;
use crate::inventory::Vm;

fn host(id: &str, name: &str, dc: &str, cluster: Option<&str>) -> Host {
    Host {
        id: id.into(),
        name: name.into(),
        datacenter: dc.into(),
        cluster: cluster.map(Into::into),
        cluster_path: cluster.map(|c| format!("/{dc}/host/{c}")),
        connection_state: ConnectionState::Connected,
        in_maintenance: false,
    }
}

fn vm(id: &str, name: &str, host: Option<&str>, power: PowerState) -> Vm {
    Vm {
        id: id.into(),
        name: name.into(),
        host: host.map(Into::into),
        power_state: power,
    }
}

/// Two datacenters each with a cluster `HPC`, one host in maintenance, one disconnected,
/// one not responding, a standalone host, VMs with odd names.
fn lab() -> Inventory {
    let mut maint = host("host-3", "esx03", "Lab East", Some("HPC"));
    maint.in_maintenance = true;
    let mut disc = host("host-4", "esx04", "Lab East", Some("HPC"));
    disc.connection_state = ConnectionState::Disconnected;
    let mut nr = host("host-5", "esx05", "Lab East", Some("Web"));
    nr.connection_state = ConnectionState::NotResponding;
    Inventory {
        hosts: vec![
            host("host-2", "esx02", "Lab East", Some("HPC")),
            host("host-1", "esx01", "Lab East", Some("HPC")),
            maint,
            disc,
            nr,
            host("host-6", "esx06", "Lab East", Some("Web")),
            host("host-7", "esx11", "Lab West", Some("HPC")),
            host("host-8", "solo", "Lab West", None),
        ],
        vms: vec![
            vm("vm-1", "hpc-node01", Some("host-1"), PowerState::PoweredOn),
            vm("vm-2", "hpc-node02", Some("host-1"), PowerState::PoweredOn),
            vm("vm-3", "hpc-node03", Some("host-7"), PowerState::PoweredOn),
            vm("vm-4", "hpc [test] 07", Some("host-2"), PowerState::PoweredOn),
            vm("vm-5", "db:1", Some("host-8"), PowerState::PoweredOn),
            vm("vm-6", "hpc-node04", Some("host-2"), PowerState::PoweredOff),
            vm("vm-7", "hpc-node05", Some("host-3"), PowerState::PoweredOn),
            vm("vm-8", "web 1", Some("host-6"), PowerState::Suspended),
        ],
    }
}

fn sel(clusters: &[&str], vms: &[&str]) -> Selection {
    Selection {
        clusters: clusters.iter().map(|c| ClusterRef::parse(c).unwrap()).collect(),
        vms: vms.iter().map(|v| VmPattern::parse(v).unwrap()).collect(),
        ..Selection::default()
    }
}

fn names(s: &Selected) -> Vec<&str> {
    s.hosts.iter().map(|h| h.name.as_str()).collect()
}

fn skipped(s: &Selected) -> Vec<(&str, SkipReason)> {
    s.skipped.iter().map(|h| (h.name.as_str(), h.reason)).collect()
}

#[test]
fn everything_by_default_without_hosts_that_cannot_be_diagnosed() {
    let s = select(&lab(), &Selection::default()).unwrap();
    assert_eq!(names(&s), ["esx01", "esx02", "esx06", "esx11", "solo"]);
    assert_eq!(
        skipped(&s),
        [
            ("esx03", SkipReason::Maintenance),
            ("esx04", SkipReason::Disconnected),
            ("esx05", SkipReason::NotResponding)
        ]
    );
    assert!(s.vms.is_empty() && s.vms_not_running.is_empty());
    assert!(s.hosts.iter().all(|h| h.vms.is_empty()));
}

#[test]
fn include_flags_bring_back_what_they_name() {
    let mut s = Selection {
        include_maintenance: true,
        ..Selection::default()
    };
    let got = select(&lab(), &s).unwrap();
    assert!(names(&got).contains(&"esx03"));
    assert_eq!(
        skipped(&got),
        [
            ("esx04", SkipReason::Disconnected),
            ("esx05", SkipReason::NotResponding)
        ]
    );
    s.include_maintenance = false;
    s.include_disconnected = true;
    let got = select(&lab(), &s).unwrap();
    assert_eq!(skipped(&got), [("esx03", SkipReason::Maintenance)]);
    assert!(names(&got).contains(&"esx04") && names(&got).contains(&"esx05"));
}

#[test]
fn a_disconnected_host_in_maintenance_is_skipped_for_its_connection() {
    let mut inv = lab();
    inv.hosts[3].in_maintenance = true; // esx04, disconnected
    let got = select(&inv, &Selection::default()).unwrap();
    assert!(skipped(&got).contains(&("esx04", SkipReason::Disconnected)));
    let got = select(
        &inv,
        &Selection {
            include_disconnected: true,
            ..Selection::default()
        },
    )
    .unwrap();
    assert!(skipped(&got).contains(&("esx04", SkipReason::Maintenance)));
}

#[test]
fn cluster_names_in_two_datacenters_need_the_datacenter() {
    let err = select(&lab(), &sel(&["HPC"], &[])).unwrap_err();
    assert_eq!(
        err,
        SelectError::AmbiguousCluster {
            name: "HPC".into(),
            paths: vec!["Lab East/HPC".into(), "Lab West/HPC".into()]
        }
    );
    let text = err.to_string();
    assert!(text.contains("Lab East/HPC") && text.contains("Lab West/HPC") && text.contains("DATACENTER/NAME"));

    let got = select(&lab(), &sel(&["Lab East/HPC"], &[])).unwrap();
    assert_eq!(names(&got), ["esx01", "esx02"]);
    assert_eq!(skipped(&got).len(), 2);
    let got = select(&lab(), &sel(&["Lab West/HPC", "Web"], &[])).unwrap();
    assert_eq!(names(&got), ["esx06", "esx11"]);
    assert_eq!(skipped(&got), [("esx05", SkipReason::NotResponding)]);
}

#[test]
fn unknown_clusters_list_the_known_ones() {
    let err = select(&lab(), &sel(&["HCP"], &[])).unwrap_err();
    let SelectError::NoSuchCluster { cluster, known } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(cluster, "HCP");
    assert_eq!(known, &["Lab East/HPC", "Lab East/Web", "Lab West/HPC"]);
    assert!(err.to_string().contains("Lab East/Web"), "{err}");
    // A standalone host is in no cluster; the datacenter must be the cluster's.
    assert!(select(&lab(), &sel(&["solo"], &[])).is_err());
    assert!(select(&lab(), &sel(&["Lab West/Web"], &[])).is_err());

    let many = Inventory {
        hosts: (0..25)
            .map(|i| host(&format!("h{i}"), "x", "DC", Some(&format!("C{i:02}"))))
            .collect(),
        vms: vec![],
    };
    let text = select(&many, &sel(&["nope"], &[])).unwrap_err().to_string();
    assert!(
        text.contains("DC/C09") && !text.contains("DC/C10") && text.contains("15 more"),
        "{text}"
    );
}

#[test]
fn vm_first_selects_the_hosts_the_vms_run_on() {
    let got = select(&lab(), &sel(&[], &["hpc-node0?"])).unwrap();
    assert_eq!(names(&got), ["esx01", "esx11"]);
    assert_eq!(got.hosts[0].vms, ["hpc-node01", "hpc-node02"]);
    assert_eq!(got.hosts[1].vms, ["hpc-node03"]);
    // hpc-node05 runs on esx03, in maintenance: its host is skipped, the VM is still named.
    assert_eq!(skipped(&got), [("esx03", SkipReason::Maintenance)]);
    let running: Vec<_> = got.vms.iter().map(|v| (v.name.as_str(), v.host.as_deref())).collect();
    assert_eq!(
        running,
        [
            ("hpc-node01", Some("esx01")),
            ("hpc-node02", Some("esx01")),
            ("hpc-node03", Some("esx11")),
            ("hpc-node05", Some("esx03"))
        ]
    );
    assert_eq!(got.vms_not_running.len(), 1);
    assert_eq!(got.vms_not_running[0].name, "hpc-node04");
    assert_eq!(got.vms_not_running[0].power_state, PowerState::PoweredOff);
}

#[test]
fn vm_and_cluster_together_intersect() {
    let got = select(&lab(), &sel(&["Lab East/HPC"], &["hpc-*", "hpc ?test*"])).unwrap();
    assert_eq!(names(&got), ["esx01", "esx02"]);
    assert_eq!(got.hosts[1].vms, ["hpc [test] 07"]);
    assert!(got.vms.iter().all(|v| v.name != "hpc-node03"), "esx11 is in Lab West");
}

#[test]
fn patterns_are_a_union_and_each_must_match() {
    let got = select(&lab(), &sel(&[], &["db:1", "hpc [test] 07", "hpc-node01", "hpc-*1"])).unwrap();
    assert_eq!(names(&got), ["esx01", "esx02", "solo"]);
    assert_eq!(got.vms.len(), 3, "hpc-node01 matched twice, listed once");
    let err = select(&lab(), &sel(&[], &["hpc-node01", "hpc-nod07"])).unwrap_err();
    assert!(
        matches!(&err, SelectError::NoVmMatched { pattern, .. } if pattern == "hpc-nod07"),
        "{err:?}"
    );
    // A suspended VM is matched (no error) but selects no host.
    let got = select(&lab(), &sel(&[], &["web 1"])).unwrap();
    assert!(got.hosts.is_empty() && got.skipped.is_empty());
    assert_eq!(got.vms_not_running[0].power_state, PowerState::Suspended);
}

#[test]
fn only_star_and_question_mark_are_wildcards() {
    let p = |s: &str| VmPattern::parse(s).unwrap();
    assert!(p("hpc [test] 07").matches("hpc [test] 07"));
    assert!(!p("hpc [test] 07").matches("hpc t 07"));
    assert!(!p("node[1-2]").matches("node1"));
    assert!(p("node[1-2]").matches("node[1-2]"));
    assert!(p("db:?").matches("db:1") && !p("db:?").matches("db:12"));
    assert!(p("*").matches("") && p("*").matches("anything at all"));
    assert!(p("a*b*c").matches("aXXbYYc") && p("a*b*c").matches("abc") && !p("a*b*c").matches("abca"));
    assert!(p("*.*").matches("a.b") && !p("*.*").matches("ab"));
    assert!(p("ü?").matches("üé"));
    assert!(!p("Hpc").matches("hpc"));
    assert!(p("a**?").matches("ab") && !p("a**?").matches("a"));
    assert_eq!(VmPattern::parse(""), Err(SelectorError::EmptyVmPattern));
}

#[test]
fn a_cluster_is_named_by_its_name_its_datacenter_or_its_inventory_path() {
    let inv = lab();
    for spelling in ["Lab East/HPC", "/Lab East/host/HPC", "Lab East/host/HPC"] {
        let got = select(&inv, &sel(&[spelling], &[])).unwrap();
        assert_eq!(names(&got), ["esx01", "esx02"], "{spelling}");
    }
    assert_eq!(names(&select(&inv, &sel(&["Web"], &[])).unwrap()), ["esx06"]);
    for bad in ["", "/", "//"] {
        assert_eq!(ClusterRef::parse(bad), Err(SelectorError::EmptyCluster), "{bad}");
    }
    // Half a path names nothing.
    for near in ["host/HPC", "East/HPC", "/Lab East/HPC/"] {
        assert!(select(&inv, &sel(&[near], &[])).is_err(), "{near}");
    }
}

#[test]
fn slashes_inside_names_are_not_separators() {
    // A datacenter `Lab/East` (sent by the API as `Lab%2fEast`) holding a cluster `HPC`.
    let mut inv = lab();
    let mut h = host("host-9", "esx09", "Lab/East", Some("HPC"));
    h.cluster_path = Some("/Lab%2fEast/host/HPC".into());
    inv.hosts.push(h);
    let got = select(&inv, &sel(&["Lab/East/HPC"], &[])).unwrap();
    assert_eq!(names(&got), ["esx09"]);
    assert_eq!(
        names(&select(&inv, &sel(&["/Lab%2fEast/host/HPC"], &[])).unwrap()),
        ["esx09"]
    );
}

#[test]
fn same_named_clusters_in_one_datacenter_are_told_apart_by_their_folders() {
    // Names are unique only within a folder: two `HPC` clusters in Lab East's host folders.
    let mut inv = lab();
    let mut a = host("host-10", "esx20", "Lab East", Some("Gpu"));
    a.cluster_path = Some("/Lab East/host/Row 1/Gpu".into());
    let mut b = host("host-11", "esx21", "Lab East", Some("Gpu"));
    b.cluster_path = Some("/Lab East/host/Row 2/Gpu".into());
    inv.hosts.extend([a, b]);
    let err = select(&inv, &sel(&["Lab East/Gpu"], &[])).unwrap_err();
    let SelectError::AmbiguousCluster { paths, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(paths, &["/Lab East/host/Row 1/Gpu", "/Lab East/host/Row 2/Gpu"]);
    let got = select(&inv, &sel(&["/Lab East/host/Row 2/Gpu"], &[])).unwrap();
    assert_eq!(names(&got), ["esx21"]);
}

#[test]
fn duplicate_hosts_are_listed_once_in_name_order() {
    let mut inv = lab();
    inv.hosts.push(inv.hosts[0].clone());
    let got = select(&inv, &sel(&["Lab East/HPC", "Lab East/HPC"], &[])).unwrap();
    assert_eq!(names(&got), ["esx01", "esx02"]);
}

#[test]
fn the_reason_texts_users_read() {
    assert_eq!(SkipReason::Maintenance.to_string(), "in maintenance mode");
    assert_eq!(SkipReason::Disconnected.to_string(), "disconnected");
    assert_eq!(SkipReason::NotResponding.to_string(), "not responding");
}

mod glob_props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A pattern without wildcards matches exactly its own text.
        #[test]
        fn literal_patterns_match_only_themselves(a in "[^*?]{1,12}", b in ".{0,12}") {
            let p = VmPattern::parse(&a).unwrap();
            prop_assert!(p.matches(&a));
            prop_assert_eq!(p.matches(&b), a == b);
        }

        /// `prefix*` matches every name starting with the prefix, and only those.
        #[test]
        fn star_suffix_is_a_prefix_test(a in "[^*?]{0,8}", b in ".{0,12}") {
            let p = VmPattern::parse(&format!("{a}*")).unwrap();
            prop_assert_eq!(p.matches(&b), b.starts_with(&a));
        }
    }
}

#[test]
fn the_json_shape_front_ends_print() {
    let got = select(&lab(), &sel(&["Lab East/HPC"], &["hpc-node0?"])).unwrap();
    let json = serde_json::to_value(&got).unwrap();
    assert_eq!(
        json["hosts"][0],
        serde_json::json!({
            "name": "esx01", "datacenter": "Lab East", "cluster": "HPC",
            "cluster_path": "/Lab East/host/HPC",
            "connection_state": "connected", "in_maintenance": false,
            "vms": ["hpc-node01", "hpc-node02"]
        })
    );
    assert_eq!(json["skipped"][0]["reason"], "maintenance");
    assert_eq!(
        json["skipped"].as_array().unwrap().len(),
        1,
        "esx04 runs none of the VMs"
    );
    assert_eq!(json["vms_not_running"][0]["power_state"], "poweredOff");
    assert_eq!(json["vms_not_running"][0]["host"], "esx02");
    let all = serde_json::to_value(select(&lab(), &Selection::default()).unwrap()).unwrap();
    let reasons: Vec<_> = all["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["reason"].clone())
        .collect();
    assert_eq!(reasons, ["maintenance", "disconnected", "notResponding"]);
    assert_eq!(
        all["hosts"][4]["cluster"],
        serde_json::Value::Null,
        "solo is standalone"
    );
}

#[test]
fn a_vm_typo_suggests_the_names_it_nearly_matches() {
    let near = |pattern: &str| match select(&lab(), &sel(&[], &[pattern])).unwrap_err() {
        SelectError::NoVmMatched { near, .. } => near,
        other => panic!("{other:?}"),
    };
    assert_eq!(near("hpc-node1"), ["hpc-node01"]);
    assert_eq!(
        near("HPC-NODE0?"),
        ["hpc-node01", "hpc-node02", "hpc-node03", "hpc-node04", "hpc-node05"]
    );
    assert_eq!(near("Web 1"), ["web 1"]);
    assert!(near("mpi-rank-17").is_empty());
    let err = select(&lab(), &sel(&[], &["hpc-node1"])).unwrap_err().to_string();
    assert!(err.ends_with("did you mean: hpc-node01?"), "{err}");
}

#[test]
fn an_ambiguous_cluster_ends_with_the_setting_that_names_one_place() {
    const WORDS: crate::Vocabulary = crate::Vocabulary {
        cluster: |path| format!("<cluster {path}>"),
        ..crate::Vocabulary::NEUTRAL
    };
    let err = select(&lab(), &sel(&["HPC"], &[])).unwrap_err();
    let text = err.worded(&WORDS);
    assert!(text.ends_with("inventory path, e.g. <cluster Lab East/HPC>"), "{text}");
    assert!(
        err.to_string().ends_with("inventory path, e.g. `Lab East/HPC`"),
        "{err}"
    );
    let other = select(&lab(), &sel(&[], &["hpc-node1"])).unwrap_err();
    assert_eq!(other.worded(&WORDS), other.to_string());
}
