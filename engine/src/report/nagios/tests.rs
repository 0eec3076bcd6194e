use super::*;
use std::path::Path;
use std::time::Duration;

fn sample(name: &str) -> Diagnosis {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples").join(name);
    let captures = crate::capture::folder::read_dir_for_tests(&dir).expect("sample loads");
    crate::diagnose::diagnose(&captures)
}

fn range(text: &str) -> Range {
    text.parse().expect("a valid range")
}

#[test]
fn ranges_follow_the_guidelines() {
    // "10": alert outside 0..10.
    let r = range("10");
    assert!(!r.alerts(0.0) && !r.alerts(10.0) && r.alerts(11.0) && r.alerts(-1.0));
    // "10:": alert below 10.
    let r = range("10:");
    assert!(r.alerts(9.0) && !r.alerts(10.0) && !r.alerts(1e9));
    // "~:10": alert above 10.
    let r = range("~:10");
    assert!(!r.alerts(-1e9) && !r.alerts(10.0) && r.alerts(10.5));
    // "10:20": alert outside 10..20; "@10:20": alert inside.
    let r = range("10:20");
    assert!(r.alerts(9.0) && !r.alerts(15.0) && r.alerts(21.0));
    let r = range("@10:20");
    assert!(!r.alerts(9.0) && r.alerts(10.0) && r.alerts(20.0) && !r.alerts(21.0));
    // "0": any positive count alerts.
    assert!(range("0").alerts(1.0) && !range("0").alerts(0.0));
    assert_eq!(range(" 5:7 ").text(), "5:7");
    for bad in ["", "abc", "1,5", "20:10", "@", ":", "1:2:3", "inf", "NaN"] {
        assert!(bad.parse::<Range>().is_err(), "{bad:?} accepted");
    }
}

#[test]
fn states_of_the_samples() {
    let state = |name: &str| render(&sample(name), &NagiosOptions::default()).state;
    assert_eq!(state("healthy-cluster"), State::Ok);
    assert_eq!(state("lossless-network-off"), State::Warning);
    assert_eq!(state("firewall-pvrdma-disabled"), State::Critical);
    assert_eq!(state("pvrdma-different-vds"), State::Critical, "a blocked pair");
    assert_eq!(state("vsish-listing-failed"), State::Unknown);
    // A fallback on one host outranks an unreachable one.
    assert_eq!(state("esxi80-mixed-fleet"), State::Critical);
}

#[test]
fn unreachable_hosts_take_the_state_the_site_chose() {
    let mut d = sample("esxi80-mixed-fleet");
    // Keep only the unreachable host.
    d.hosts.retain(|h| h.status == HostStatus::Unreachable);
    d.fleet_checks.clear();
    d.transport = Default::default();
    let unknown = render(&d, &NagiosOptions::default());
    assert_eq!(unknown.state, State::Unknown, "{}", unknown.text);
    assert!(
        unknown.text.starts_with("PVRDMA UNKNOWN - esx03: unreachable | "),
        "{}",
        unknown.text
    );
    let critical = render(
        &d,
        &NagiosOptions {
            unreachable: State::Critical,
            ..NagiosOptions::default()
        },
    );
    assert_eq!(critical.state, State::Critical);
    // The run's own timeout is not the host's fault: UNKNOWN whatever the site chose.
    // Collection stopped a little before the user's `-t 2s` (room for this report): the
    // text names the user's limit and the stage, whatever the capture's message says.
    for h in &mut d.hosts {
        h.error = Some(crate::capture::Failure::run_timeout(
            "1s 500ms",
            crate::capture::RunStage::Connecting,
            "; raise --timeout or check the host",
        ));
    }
    let stopped_at_2s = NagiosOptions {
        unreachable: State::Critical,
        timed_out: Some(Duration::from_secs(2)),
        ..NagiosOptions::default()
    };
    let timed_out = render(&d, &stopped_at_2s);
    assert_eq!(timed_out.state, State::Unknown, "{}", timed_out.text);
    assert!(
        timed_out
            .text
            .starts_with("PVRDMA UNKNOWN - timed out after 2s (while connecting to esx03)"),
        "{}",
        timed_out.text
    );
    assert!(
        timed_out.text.contains(
            "\n[UNKNOWN] esx03: unreachable: the run hit --timeout 2s while connecting and logging in to this host\n"
        ),
        "{}",
        timed_out.text
    );
    assert!(!timed_out.text.contains("500ms"), "{}", timed_out.text);
    // A message that merely reads like the run's timeout is the host's own failure.
    for h in &mut d.hosts {
        h.error = Some(crate::capture::Failure::new(
            crate::capture::ErrorKind::Timeout,
            "esx03: the whole run hit --timeout 2s while connecting and logging in to this host",
        ));
    }
    let own = render(&d, &stopped_at_2s);
    assert_eq!(own.state, State::Critical, "{}", own.text);
}

#[test]
fn thresholds_decide_the_state_of_a_fallback_without_a_failing_check() {
    let mut d = sample("firewall-pvrdma-disabled");
    // The fallback alone: no failing check left.
    for h in &mut d.hosts {
        h.checks.retain(|c| c.status != Status::Fail);
    }
    let with = |w: Option<&str>, c: Option<&str>| {
        render(
            &d,
            &NagiosOptions {
                warning: w.map(range),
                critical: c.map(range),
                ..NagiosOptions::default()
            },
        )
    };
    assert_eq!(with(None, None).state, State::Critical, "any fallback by default");
    assert_eq!(with(Some("0"), Some("2")).state, State::Warning);
    let ok = with(Some("1"), Some("2"));
    assert_eq!(ok.state, State::Ok);
    // The culprit first and whole, then what is wrong with it.
    assert!(
        ok.text
            .starts_with("PVRDMA OK - esx01 hpc-node01#0: TCP fallback (within thresholds) | "),
        "{}",
        ok.text
    );
    assert!(ok.text.contains("'adapters_tcp_fallback'=1;1;2;0;1"), "{}", ok.text);
    assert_eq!(with(None, Some("@1:3")).state, State::Critical);
}

/// Every sample's output: the status line fits a pager, the performance data keeps the
/// guidelines' syntax, labels are unique in 19 characters, no value is `U`.
#[test]
fn every_sample_renders_a_well_formed_plugin_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let mut seen = 0;
    for entry in std::fs::read_dir(&root).expect("samples") {
        let dir = entry.expect("entry").path();
        let Some(captures) = crate::capture::folder::read_dir_for_tests(&dir) else {
            continue;
        };
        let d = crate::diagnose::diagnose(&captures);
        let out = render(
            &d,
            &NagiosOptions {
                duration: Some(Duration::from_millis(1234)),
                ..NagiosOptions::default()
            },
        );
        seen += 1;
        let first = out.text.lines().next().expect("a first line");
        let (status, perf) = first.split_once(" | ").expect("performance data");
        assert!(
            status.chars().count() <= STATUS_LINE_WIDTH,
            "{}: {status}",
            dir.display()
        );
        assert!(status.starts_with(&format!("PVRDMA {} - ", out.state.word())));
        assert_eq!(out.text.matches('|').count(), 1, "one | only: {}", out.text);
        let mut prefixes = std::collections::BTreeSet::new();
        for item in perf.split(' ') {
            let (label, rest) = item.split_once('=').expect("label=value");
            let label = label.trim_matches('\'');
            assert!(prefixes.insert(label.chars().take(19).collect::<String>()), "{label}");
            let value = rest.split(';').next().unwrap_or_default();
            let number = value.trim_end_matches('s');
            assert!(number.parse::<f64>().is_ok(), "{item}");
            assert!(rest.split(';').all(|f| !f.contains(',') && f != "U"), "{item}");
        }
        assert!(perf.contains("'duration'=1.234s;;;0"), "{perf}");
        // A problem state has a line per problem.
        if out.state != State::Ok {
            assert!(out.text.lines().count() > 1, "{}", out.text);
        }
    }
    assert!(seen > 20, "only {seen} samples read");
}

#[test]
fn host_text_cannot_break_the_protocol() {
    assert_eq!(plain("vm|1\nx"), "vm¦1 x");
    let line = status_only(State::Unknown, &"x".repeat(200));
    let mut lines = line.lines();
    assert_eq!(lines.next().map(|l| l.chars().count()), Some(STATUS_LINE_WIDTH));
    assert_eq!(lines.next().map(str::len), Some(200), "the whole reason follows");
}

/// `sample`'s first host again under each of `names` (same checks, same adapters).
fn fleet_of(sample_name: &str, names: &[String]) -> Diagnosis {
    let d = sample(sample_name);
    let hosts = names
        .iter()
        .map(|n| {
            let mut h = d.hosts[0].clone();
            h.host = n.clone();
            h
        })
        .collect();
    crate::diagnose::fleet_diagnosis(hosts)
}

fn status_of(out: &PluginOutput) -> &str {
    out.text.split(" | ").next().unwrap_or_default()
}

/// The first line names the culprit first and never cuts a name: the failing check on
/// its hosts, the fallback's adapters, each whole, the rest counted.
#[test]
fn the_culprit_comes_first_and_whole_whatever_the_names() {
    let out = render(&sample("esxi80-mixed-fleet"), &NagiosOptions::default());
    assert_eq!(
        status_of(&out),
        "PVRDMA CRITICAL - esx02: firewall-pvrdma failing; +2 more problems"
    );
    let out = render(&sample("firewall-pvrdma-disabled"), &NagiosOptions::default());
    assert_eq!(
        status_of(&out),
        "PVRDMA CRITICAL - esx01: firewall-pvrdma failing; +1 more problem"
    );
    // A check across hosts names the hosts whose pairs it blocks.
    let out = render(&sample("pvrdma-different-vds"), &NagiosOptions::default());
    assert_eq!(
        status_of(&out),
        "PVRDMA CRITICAL - esx[01-02]: pvrdma-same-vds failing across hosts"
    );
    // Numbered hosts fold into a node set.
    let names: Vec<String> = (1..=40).map(|i| format!("esx{i:02}")).collect();
    let out = render(&fleet_of("firewall-pvrdma-disabled", &names), &NagiosOptions::default());
    assert!(
        status_of(&out).starts_with("PVRDMA CRITICAL - esx[01-40]: firewall-pvrdma failing; "),
        "{}",
        out.text
    );

    // Long names that do not fold: as many whole as fit, the others counted.
    let names: Vec<String> = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
        .iter()
        .map(|n| format!("esx-{n}-rack12.hpc.example.com"))
        .collect();
    let out = render(&fleet_of("firewall-pvrdma-disabled", &names), &NagiosOptions::default());
    let line = status_of(&out);
    assert!(line.chars().count() <= STATUS_LINE_WIDTH, "{line}");
    assert!(!line.contains('…'), "no name cut: {line}");
    // Seven long names: the first alone, its host name shrunk to its first label, whole.
    assert_eq!(
        line,
        "PVRDMA CRITICAL - esx-alpha-rack12 (+6 more): firewall-pvrdma failing"
    );
    // Two shorter ones fit whole, in full.
    let two = ["esx-alpha.lab".to_string(), "esx-bravo.lab".to_string()];
    let out = render(&fleet_of("firewall-pvrdma-disabled", &two), &NagiosOptions::default());
    let line = status_of(&out);
    assert!(
        line.contains("esx-alpha.lab") && line.contains("esx-bravo.lab"),
        "{line}"
    );
    assert!(line.contains(": firewall-pvrdma failing"), "{line}");

    // One culprit too long for the line with its text: its host name shrinks to the first
    // label, still whole.
    let long = format!("esx-{}.hpc.example.com", "x".repeat(30));
    let out = render(
        &fleet_of("firewall-pvrdma-disabled", std::slice::from_ref(&long)),
        &NagiosOptions::default(),
    );
    let line = status_of(&out);
    assert_eq!(
        line,
        format!("PVRDMA CRITICAL - esx-{}: firewall-pvrdma failing", "x".repeat(30))
    );
    // Longer than the line itself: cut at the end, never before the culprit starts.
    let huge = "h".repeat(120);
    let out = render(
        &fleet_of("firewall-pvrdma-disabled", &[huge]),
        &NagiosOptions::default(),
    );
    let line = status_of(&out);
    assert_eq!(line.chars().count(), STATUS_LINE_WIDTH, "{line}");
    assert!(
        line.starts_with("PVRDMA CRITICAL - hhhh") && line.ends_with('…'),
        "{line}"
    );
    // Every problem keeps its whole long-output line.
    assert!(out
        .text
        .lines()
        .any(|l| l.starts_with(&format!("[CRITICAL] {} firewall-pvrdma: ", "h".repeat(120)))));
}

/// With `-c 1` one fallback is within the thresholds: the OK line still names the adapter
/// first and whole (it used to come after the count, cut mid-name).
#[test]
fn a_fallback_within_thresholds_names_its_adapter_whole() {
    let mut d = sample("two-hcas-adapter-on-vswitch0");
    for h in &mut d.hosts {
        for vm in &mut h.vms {
            vm.name = "hpc-node01-with-a-rather-long-display-name".to_string();
        }
    }
    let out = render(
        &d,
        &NagiosOptions {
            critical: Some(range("1")),
            ..NagiosOptions::default()
        },
    );
    assert_eq!(out.state, State::Ok);
    let line = status_of(&out);
    assert!(line.chars().count() <= STATUS_LINE_WIDTH, "{line}");
    // A name too long for the line with its text: the name whole, the text cut after it.
    assert!(
        line.starts_with("PVRDMA OK - esx01 hpc-node01-with-a-rather-long-display-name#0: TCP fallback"),
        "{line}"
    );
    // The long output says what decided the verdict and why.
    assert!(
        out.text.contains(
            "[OK] esx01 hpc-node01-with-a-rather-long-display-name#0: tcp-fallback (vsish `Physical HCA available:0`): its port"
        ),
        "{}",
        out.text
    );
}

#[test]
fn a_fallback_within_thresholds_fits_whole_when_it_can() {
    let mut d = sample("two-hcas-adapter-on-vswitch0");
    for vm in d.hosts.iter_mut().flat_map(|h| &mut h.vms) {
        vm.name = "hpc-node01-display-name".to_string();
    }
    let out = render(
        &d,
        &NagiosOptions {
            critical: Some(range("1")),
            ..NagiosOptions::default()
        },
    );
    assert_eq!(
        status_of(&out),
        "PVRDMA OK - esx01 hpc-node01-display-name#0: TCP fallback (within thresholds)"
    );
}

#[test]
fn a_run_timeout_during_the_probe_names_the_probing_hosts() {
    let mut d = sample("healthy-cluster");
    let mut stopped = crate::diagnose::probe::Probe {
        from: "esx01".into(),
        to: "esx02".into(),
        from_vmknic: Some("vmk1".into()),
        to_ip: Some("10.10.10.12".into()),
        status: crate::diagnose::probe::ProbeStatus::Unknown,
        detail: "not probed: the whole run hit --timeout 1s 500ms during the path probe".into(),
        losses: None,
        rtt: None,
        jumbo: None,
        run_stage: Some(crate::capture::RunStage::Probing),
    };
    d.probes.push(stopped.clone());
    let opts = NagiosOptions {
        timed_out: Some(Duration::from_secs(2)),
        ..NagiosOptions::default()
    };
    let out = render(&d, &opts);
    assert!(
        out.text.contains("timed out after 2s (while probing from esx01)"),
        "{}",
        out.text
    );
    // The same words without the typed stage are a probe's own result, not the timeout.
    stopped.run_stage = None;
    d.probes = vec![stopped];
    let out = render(&d, &opts);
    assert!(!out.text.contains("timed out after"), "{}", out.text);
}

#[test]
fn a_culprit_shortens_its_host_name_only() {
    let adapter = Culprit::adapter("esx02.lab.example.com", "node 2.lab", 0);
    assert_eq!(adapter.name(false), "esx02.lab.example.com node 2.lab#0");
    assert_eq!(adapter.name(true), "esx02 node 2.lab#0");
    assert_eq!(Culprit::host("10.0.0.12".to_string()).name(true), "10.0.0.12");
    assert_eq!(Culprit::host("esx03.lab".to_string()).name(true), "esx03");
}
