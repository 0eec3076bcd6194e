use super::*;

#[test]
fn a_full_configuration_is_read() {
    let c = Config::parse(
        r#"
listen: 0.0.0.0:39155
limits:
  max_concurrent_hosts: 8
  timeout_offset: 250ms
  default_timeout: 20
modules:
  default:
    user: monitor
    known_hosts: /etc/pvrdma-doctor/known_hosts
    connect_timeout: 5s
    command_timeout: 30s
  probe:
    probe: true
    probe_sample: 2
    fleet_checks: [pvrdma-same-vds, vmknic-reachability]
targets: ["esx[01-03]", lab.example.com]
groups:
  rack1: "esx[10-11]"
  rack2: { hosts: ["esx20", "esx21"], module: probe }
"#,
    )
    .unwrap();
    assert_eq!(c.listen, Some("0.0.0.0:39155".parse().unwrap()));
    assert_eq!(c.limits.max_concurrent_hosts, 8);
    assert_eq!(c.limits.timeout_offset, Duration::from_millis(250));
    assert_eq!(c.limits.default_timeout, Duration::from_secs(20));
    let names: Vec<&str> = c.hosts.iter().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "esx01",
            "esx02",
            "esx03",
            "esx10",
            "esx11",
            "esx20",
            "esx21",
            "lab.example.com"
        ]
    );
    assert_eq!(c.groups["rack1"].members, ["esx10", "esx11"]);
    let (name, m) = c.module_for("rack2", None).unwrap();
    assert_eq!(name, "probe");
    assert_eq!(m.live.probe.map(|p| p.sample), Some(Some(2)));
    let (name, m) = c.module_for("esx01", None).unwrap();
    assert_eq!(name, "default");
    assert_eq!(m.live.login_user.as_deref(), Some("monitor"));
    assert_eq!(m.live.connect_timeout, Some(Duration::from_secs(5)));
    assert!(c.module_for("esx01", Some("nope")).is_err());
}

#[test]
fn mistakes_are_refused_with_the_reason() {
    let cases = [
        ("targets: [esx01]\nbogus: 1\n", "bogus"),
        ("modules:\n  default:\n    pasword_env: X\n", "pasword_env"),
        ("listen: nowhere\n", "listen"),
        ("targets: [\"esx[01-\"]\n", "targets"),
        ("groups:\n  g: { hosts: esx01, module: missing }\n", "missing"),
        ("targets: [g]\ngroups:\n  g: esx01\n", "both a group and a host"),
        (
            "modules:\n  default:\n    fleet_checks: [firewall-pvrdma]\n",
            "not a fleet check",
        ),
        (
            "modules:\n  default:\n    password_env: PVRDMA_TEST_SURELY_UNSET_VAR\n",
            "not set",
        ),
        ("targets: [\"esx[1-20000]\"]\n", "more than"),
        ("targets: [\"-\"]\n", "not a host name"),
        ("limits:\n  max_concurrent_hosts: 0\n", "max_concurrent_hosts"),
        ("modules:\n  default:\n    connect_timeout: soon\n", "not a duration"),
    ];
    for (text, needle) in cases {
        let err = format!("{:#}", Config::parse(text).unwrap_err());
        assert!(err.contains(needle), "{text:?}: {err}");
    }
}

#[test]
fn an_empty_file_is_a_default_module_and_no_target() {
    let c = Config::parse("").unwrap();
    assert!(c.hosts.is_empty() && c.groups.is_empty());
    assert!(c.modules.contains_key(DEFAULT_MODULE));
    assert_eq!(c.limits, Limits::default());
}
