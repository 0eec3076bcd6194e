use super::*;
use proptest::prelude::*;

fn no_groups() -> crate::hosts::groups::GroupConfig {
    crate::hosts::groups::GroupConfig::from_files(Vec::new())
}

fn exp(spec: &str) -> Result<Vec<String>, TargetError> {
    expand_ranges(spec, &mut no_groups()).map(|(n, _)| n)
}

fn names(spec: &str) -> Vec<String> {
    exp(spec).unwrap()
}

/// A ClusterShell configuration with a `local` source whose `map` reads a file.
fn groups_in(dir: &Path) -> crate::hosts::groups::GroupConfig {
    std::fs::write(
        dir.join("groups.conf"),
        "[Main]\ndefault: local\n[local]\nmap: sed -n 's/^$GROUP: *//p' $CFGDIR/groups.txt\nlist: cut -d: -f1 $CFGDIR/groups.txt\n",
    )
    .unwrap();
    std::fs::write(dir.join("groups.txt"), "esxi: esx[01-03]\nnone:\n").unwrap();
    crate::hosts::groups::GroupConfig::from_files(vec![dir.join("groups.conf")])
}

#[test]
fn groups_users_and_ports_around_node_sets() {
    let dir = tempfile::tempdir().unwrap();
    let mut groups = groups_in(dir.path());
    let labels = |args: &[&str], groups: &mut crate::hosts::groups::GroupConfig| -> Vec<String> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        collect_targets_with(&args, None, &mut "".as_bytes(), groups)
            .unwrap()
            .iter()
            .map(HostSpec::to_string)
            .collect()
    };
    assert_eq!(labels(&["@esxi"], &mut groups), ["esx01", "esx02", "esx03"]);
    assert_eq!(labels(&["@esxi!esx02"], &mut groups), ["esx01", "esx03"]);
    assert_eq!(
        labels(&["root@@esxi"], &mut groups),
        ["root@esx01", "root@esx02", "root@esx03"]
    );
    assert_eq!(labels(&["@local:esxi&esx03"], &mut groups), ["esx03"]);
    assert_eq!(
        labels(&["admin@esx[01-02]:2222,esx07"], &mut groups),
        ["admin@esx01:2222", "admin@esx02:2222", "esx07"]
    );
    let args = vec!["@none".to_string()];
    assert!(matches!(
        collect_targets_with(&args, None, &mut "".as_bytes(), &mut groups),
        Err(TargetError::EmptySet { .. })
    ));
    // Without any group configuration, `@esxi` is an error, never a host named esxi.
    let args = vec!["@esxi".to_string()];
    let err = collect_targets_with(&args, None, &mut "".as_bytes(), &mut no_groups()).unwrap_err();
    assert!(err.to_string().contains("groups.conf"), "{err}");
    let args = vec!["root@@esxi".to_string()];
    match collect_targets_with(&args, None, &mut "".as_bytes(), &mut no_groups()) {
        Err(TargetError::Syntax(e)) => assert_eq!(e.at, 5, "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn hosts_files_keep_the_blanks_clustershell_ignores() {
    assert_eq!(
        specs_from_text("esx01, esx02 db1\nesx[ 7-8] ! esx8  # comment\n"),
        ["esx01, esx02", "db1", "esx[ 7-8] ! esx8"]
    );
}

#[test]
fn ranges_keep_zero_padding_and_lists() {
    assert_eq!(names("esx[01-03]"), ["esx01", "esx02", "esx03"]);
    assert_eq!(names("esx[1-3,7]"), ["esx1", "esx2", "esx3", "esx7"]);
    assert_eq!(names("esx[8-10]"), ["esx8", "esx9", "esx10"]);
    assert_eq!(names("esx[098-101]"), ["esx098", "esx099", "esx100", "esx101"]);
    assert_eq!(
        names("r[1-2]n[01-02].lab"),
        ["r1n01.lab", "r1n02.lab", "r2n01.lab", "r2n02.lab"]
    );
    assert_eq!(names("esx01"), ["esx01"]);
}

#[test]
fn ipv6_brackets_are_not_ranges() {
    assert_eq!(names("[fe80::1]:22"), ["[fe80::1]:22"]);
    let h = parse_host_spec("[fe80::1]:22").unwrap();
    assert_eq!((h.host.as_str(), h.port), ("fe80::1", Some(22)));
    let h = parse_host_spec("root@fe80::1").unwrap();
    assert_eq!((h.host.as_str(), h.port), ("fe80::1", None));
}

#[test]
fn host_spec_forms() {
    let h = parse_host_spec("esx01").unwrap();
    assert_eq!(
        h,
        HostSpec {
            user: None,
            host: "esx01".into(),
            port: None,
            arg: None
        }
    );
    let h = parse_host_spec("admin@esx01:2222").unwrap();
    assert_eq!(h.user.as_deref(), Some("admin"));
    assert_eq!(h.port, Some(2222));
    assert_eq!(h.label(), "esx01:2222");
    assert!(matches!(parse_host_spec("esx01:ssh"), Err(TargetError::BadPort { .. })));
    assert!(matches!(parse_host_spec("esx01:0"), Err(TargetError::BadPort { .. })));
    assert!(matches!(parse_host_spec("root@"), Err(TargetError::EmptyHost(_))));
    let h = parse_host_spec("ssh://jumper@bastion:2200").unwrap();
    assert_eq!(
        (h.user.as_deref(), h.host.as_str(), h.port),
        (Some("jumper"), "bastion", Some(2200))
    );
    let h = parse_host_spec("ssh://[fe80::1]:22/").unwrap();
    assert_eq!((h.host.as_str(), h.port), ("fe80::1", Some(22)));
    assert!(matches!(parse_host_spec("ssh://"), Err(TargetError::EmptyHost(_))));
}

#[test]
fn labels_split_without_checking_the_port() {
    let p = split_label("root@esx07.lab:22x");
    assert_eq!((p.user, p.host, p.port), (Some("root"), "esx07.lab", Some("22x")));
    let p = split_label("[fe80::1]junk");
    assert_eq!((p.host, p.port, p.trailing), ("fe80::1", None, "junk"));
    let p = split_label("@[fe80::1");
    assert_eq!((p.user, p.host, p.unclosed), (None, "fe80::1", true));
    assert_eq!(split_label("fe80::1").host, "fe80::1");
}

#[test]
fn names_that_are_not_hosts_never_reach_dns() {
    let at = |s: &str| match parse_host_spec(s) {
        Err(TargetError::Syntax(e)) => e.at,
        other => panic!("{s}: {other:?}"),
    };
    assert_eq!(at("samples/esx01"), 7);
    assert_eq!(at("user@host:22:33"), 12);
    assert_eq!(at("esx 01"), 3);
    assert!(parse_host_spec("fe80::1").is_ok());
    let err = collect_targets(&["esx[a-c]".to_string()], None, &mut "".as_bytes()).unwrap_err();
    assert!(err.to_string().contains("^"), "{err}");
    let got = collect_targets(&["esx01,esx02".to_string()], None, &mut "".as_bytes()).unwrap();
    assert_eq!(got.len(), 2);
    let got = collect_targets(&[], Some(Path::new("-")), &mut "esx[1-9/4]\n".as_bytes()).unwrap();
    let labels: Vec<String> = got.iter().map(HostSpec::label).collect();
    assert_eq!(labels, ["esx1", "esx5", "esx9"]);
}

#[test]
fn bad_ranges_are_errors() {
    assert!(matches!(exp("esx[5-1]"), Err(TargetError::Syntax(_))));
    assert!(matches!(exp("esx[1-3"), Err(TargetError::Syntax(_))));
    assert!(matches!(exp("esx[1-99999]"), Err(TargetError::TooMany { .. })));
}

#[test]
fn huge_lists_are_refused_before_they_are_built() {
    // 2000 parts of 9999 names: 20 million strings if built before counting.
    let body = vec!["1-9999"; 2000].join(",");
    assert!(matches!(exp(&format!("esx[{body}]")), Err(TargetError::TooMany { .. })));
    // The same full-size range given many times stops once the total is too large.
    let args: Vec<String> = (0..50).map(|_| "esx[1-9000]".to_string()).collect();
    assert!(matches!(
        collect_targets(&args, None, &mut "".as_bytes()),
        Err(TargetError::TooMany { .. })
    ));
    // A fleet listed twice is fine and keeps first-seen order.
    let args = vec!["esx[1-9000]".to_string(), "esx[1-9000]".to_string()];
    let got = collect_targets(&args, None, &mut "".as_bytes()).unwrap();
    assert_eq!(got.len(), 9000);
    assert_eq!(got.first().map(HostSpec::label).as_deref(), Some("esx1"));
    assert_eq!(got.last().map(HostSpec::label).as_deref(), Some("esx9000"));
}

#[test]
fn the_same_host_with_two_users_is_a_usage_error() {
    let args = vec!["root@esx01".to_string(), "admin@esx01".to_string()];
    let err = collect_targets(&args, None, &mut "".as_bytes()).unwrap_err();
    assert_eq!(
        err,
        TargetError::SameLabel {
            label: "esx01".into(),
            first: "root@esx01".into(),
            second: "admin@esx01".into()
        }
    );
    assert!(err.to_string().contains("list each host once"), "{err}");
    let args = vec!["esx01".to_string(), "root@esx01".to_string()];
    assert!(matches!(
        collect_targets(&args, None, &mut "".as_bytes()),
        Err(TargetError::SameLabel { .. })
    ));
    // Another port is another host; the exact same spec twice is just a duplicate.
    let args = vec![
        "root@esx01".to_string(),
        "admin@esx01:2222".to_string(),
        "root@esx01".to_string(),
    ];
    assert_eq!(collect_targets(&args, None, &mut "".as_bytes()).unwrap().len(), 2);
}

#[test]
fn files_stdin_comments_and_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hosts");
    std::fs::write(&file, "# fleet\nesx[01-02]  # rack 1\n\nesx03\nesx01\n").unwrap();
    let mut stdin = "esx04\nesx02\n".as_bytes();
    let args = vec!["esx02".to_string(), "-".to_string()];
    let got = collect_targets(&args, Some(&file), &mut stdin).unwrap();
    let labels: Vec<String> = got.iter().map(HostSpec::label).collect();
    assert_eq!(labels, ["esx02", "esx04", "esx01", "esx03"]);
    let missing = dir.path().join("nope");
    assert!(matches!(
        collect_targets(&[], Some(&missing), &mut "".as_bytes()),
        Err(TargetError::Read { .. })
    ));
    assert_eq!(
        collect_targets(&[], None, &mut "".as_bytes()),
        Err(TargetError::NoHosts)
    );
}

proptest! {
    /// Any zero-padded sequence written as a range (`esx[0098-0120]`) expands back to
    /// exactly the names it was folded from, padding included.
    #[test]
    fn padded_ranges_round_trip(prefix in "[a-z]{1,6}", width in 1u32..5, a in 0u64..10_000, len in 1u64..40) {
        let limit = 10u64.pow(width);
        let start = a % limit;
        let end = (start + len - 1).min(limit - 1);
        let w = width as usize;
        let expected: Vec<String> = (start..=end).map(|n| format!("{prefix}{n:0w$}")).collect();
        let spec = format!("{prefix}[{start:0w$}-{end:0w$}]");
        prop_assert_eq!(exp(&spec).unwrap(), expected);
    }

    /// Expanding never changes a name that has no range in it.
    #[test]
    fn plain_names_are_untouched(name in "[a-z][a-z0-9.-]{0,20}") {
        prop_assert_eq!(exp(&name).unwrap(), vec![name]);
    }
}
