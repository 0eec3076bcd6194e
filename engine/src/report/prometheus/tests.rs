use super::*;
use crate::diagnose::fixtures::{adapter, host};
use crate::diagnose::Vm;

fn options(scope: Scope) -> PrometheusOptions {
    PrometheusOptions {
        scope,
        finished: UNIX_EPOCH + Duration::from_millis(1_764_000_000_250),
        duration: Duration::from_millis(4_321),
    }
}

fn diagnosis(hosts: Vec<HostDiagnosis>) -> Diagnosis {
    Diagnosis {
        hosts,
        ..Diagnosis::default()
    }
}

fn check(id: &'static str, status: Status) -> Check {
    let id = crate::diagnose::CheckId::from_id(id).unwrap_or_else(|| panic!("no check {id}"));
    Check::new(id, status, String::new())
}

fn lines_of<'a>(text: &'a str, metric: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")) || l.starts_with(&format!("{metric} ")))
        .collect()
}

#[test]
fn every_metric_has_help_and_type_before_its_samples_and_appears_once() {
    let mut h = host(
        "esx01",
        HostStatus::Problems,
        vec![("vm1", vec![adapter(0, Verdict::TcpFallback)])],
    );
    h.checks = vec![check("firewall-pvrdma", Status::Fail)];
    let text = render(&diagnosis(vec![h]), &options(Scope::Fleet));
    assert!(text.ends_with('\n'));
    let mut seen: Vec<&str> = Vec::new();
    let mut current = "";
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap();
            assert!(!seen.contains(&name), "{name} twice:\n{text}");
            seen.push(name);
            current = name;
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            assert_eq!(rest, format!("{current} gauge"));
        } else {
            let name = line.split(['{', ' ']).next().unwrap();
            assert_eq!(name, current, "sample outside its group:\n{text}");
            assert!(name.starts_with("pvrdma_"));
        }
    }
    for name in [
        "pvrdma_doctor_build_info",
        "pvrdma_last_run_timestamp_seconds",
        "pvrdma_run_duration_seconds",
        "pvrdma_host_up",
        "pvrdma_host_status",
        "pvrdma_check_status",
        "pvrdma_adapter_verdict",
        "pvrdma_adapters",
    ] {
        assert!(seen.contains(&name), "{name} missing:\n{text}");
    }
}

#[test]
fn run_time_and_duration_are_plain_seconds() {
    let text = render(&diagnosis(Vec::new()), &options(Scope::Fleet));
    assert!(
        text.contains("\npvrdma_last_run_timestamp_seconds 1764000000.250\n"),
        "{text}"
    );
    assert!(text.contains("\npvrdma_run_duration_seconds 4.321\n"), "{text}");
    let quick = PrometheusOptions {
        duration: Duration::from_micros(1_250),
        ..options(Scope::Fleet)
    };
    assert!(render(&diagnosis(Vec::new()), &quick).contains("\npvrdma_run_duration_seconds 0.00125\n"));
    assert!(text.contains(&format!(
        "pvrdma_doctor_build_info{{version=\"{}\"}} 1\n",
        env!("CARGO_PKG_VERSION")
    )));
}

#[test]
fn a_verdict_is_one_series_per_value_and_unknown_is_never_a_zero_on_fallback() {
    let h = host(
        "esx01",
        HostStatus::Incomplete,
        vec![("vm1", vec![adapter(0, Verdict::Unknown), adapter(1, Verdict::Hca)])],
    );
    let text = render(&diagnosis(vec![h]), &options(Scope::Fleet));
    let v = lines_of(&text, "pvrdma_adapter_verdict");
    assert_eq!(
        v,
        [
            r#"pvrdma_adapter_verdict{host_name="esx01",vm_name="vm1",adapter="0",verdict="hca"} 0"#,
            r#"pvrdma_adapter_verdict{host_name="esx01",vm_name="vm1",adapter="0",verdict="tcp-fallback"} 0"#,
            r#"pvrdma_adapter_verdict{host_name="esx01",vm_name="vm1",adapter="0",verdict="unknown"} 1"#,
            r#"pvrdma_adapter_verdict{host_name="esx01",vm_name="vm1",adapter="1",verdict="hca"} 1"#,
            r#"pvrdma_adapter_verdict{host_name="esx01",vm_name="vm1",adapter="1",verdict="tcp-fallback"} 0"#,
            r#"pvrdma_adapter_verdict{host_name="esx01",vm_name="vm1",adapter="1",verdict="unknown"} 0"#,
        ]
    );
    assert_eq!(
        lines_of(&text, "pvrdma_adapters"),
        [
            r#"pvrdma_adapters{host_name="esx01",verdict="hca"} 1"#,
            r#"pvrdma_adapters{host_name="esx01",verdict="tcp-fallback"} 0"#,
            r#"pvrdma_adapters{host_name="esx01",verdict="unknown"} 1"#,
        ]
    );
    // A known verdict makes the host "read".
    assert_eq!(
        lines_of(&text, "pvrdma_host_up"),
        [r#"pvrdma_host_up{host_name="esx01"} 1"#]
    );
}

#[test]
fn an_unreachable_host_is_down_with_its_status_and_no_adapter_or_check_series() {
    let down = host("esx02", HostStatus::Unreachable, Vec::new());
    let text = render(&diagnosis(vec![down]), &options(Scope::Fleet));
    assert_eq!(
        lines_of(&text, "pvrdma_host_up"),
        [r#"pvrdma_host_up{host_name="esx02"} 0"#]
    );
    assert!(text.contains("pvrdma_host_status{host_name=\"esx02\",status=\"unreachable\"} 1\n"));
    assert!(text.contains("pvrdma_host_status{host_name=\"esx02\",status=\"ok\"} 0\n"));
    assert_eq!(lines_of(&text, "pvrdma_host_status").len(), 6);
    for absent in ["pvrdma_adapter_verdict", "pvrdma_adapters", "pvrdma_check_status"] {
        assert!(!text.contains(absent), "{absent} present:\n{text}");
    }
}

#[test]
fn a_host_not_read_says_why_in_one_bounded_series() {
    let mut down = host("esx02", HostStatus::Unreachable, Vec::new());
    down.error = Some(crate::capture::Failure::new(
        crate::capture::ErrorKind::Auth,
        format!(
            "esx02: every authentication method was refused {}\nsecond line",
            "x".repeat(300)
        ),
    ));
    let read = host("esx01", HostStatus::Ok, vec![("vm1", vec![adapter(0, Verdict::Hca)])]);
    let text = render(&diagnosis(vec![down, read]), &options(Scope::Fleet));
    let lines = lines_of(&text, "pvrdma_host_read_failure_info");
    assert_eq!(lines.len(), 1, "{text}");
    let line = lines[0];
    assert!(
        line.starts_with(r#"pvrdma_host_read_failure_info{host_name="esx02",class="auth",message="esx02: every authentication method was refused xx"#),
        "{line}"
    );
    assert!(line.ends_with(r#"xx..."} 1"#), "{line}");
    let message = line.split("message=\"").nth(1).unwrap().trim_end_matches("\"} 1");
    assert_eq!(message.chars().count(), MESSAGE_CHARS, "{message}");
    assert!(!line.contains("second line"));
}

#[test]
fn a_host_whose_checks_are_all_unknown_is_not_up_and_has_no_adapter_count() {
    let mut h = host("esx03", HostStatus::Incomplete, Vec::new());
    h.checks = vec![check("esxi-version", Status::Unknown)];
    let text = render(&diagnosis(vec![h]), &options(Scope::Fleet));
    assert_eq!(
        lines_of(&text, "pvrdma_host_up"),
        [r#"pvrdma_host_up{host_name="esx03"} 0"#]
    );
    assert!(text.contains("pvrdma_check_status{host_name=\"esx03\",check=\"esxi-version\",status=\"unknown\"} 1\n"));
    assert!(!text.contains("pvrdma_adapters{"), "{text}");
    // Reached, but nothing told: it says so rather than nothing.
    assert_eq!(
        lines_of(&text, "pvrdma_host_read_failure_info"),
        [
            r#"pvrdma_host_read_failure_info{host_name="esx03",class="incomplete",message="no check or adapter verdict could be told"} 1"#
        ]
    );
}

#[test]
fn adapters_that_could_not_be_listed_are_not_counted_as_none() {
    let mut h = host("esx01", HostStatus::Incomplete, Vec::new());
    h.checks = vec![check("firewall-pvrdma", Status::Pass)];
    h.adapters_error = Some("vsish failed".to_string());
    let text = render(&diagnosis(vec![h]), &options(Scope::Fleet));
    assert!(!text.contains("pvrdma_adapters{"), "{text}");
    let mut listed = host("esx01", HostStatus::Ok, Vec::new());
    listed.checks = vec![check("firewall-pvrdma", Status::Pass)];
    let text = render(&diagnosis(vec![listed]), &options(Scope::Fleet));
    assert!(
        text.contains("pvrdma_adapters{host_name=\"esx01\",verdict=\"hca\"} 0\n"),
        "{text}"
    );
}

#[test]
fn checks_are_one_series_per_status() {
    let mut h = host("esx01", HostStatus::Problems, Vec::new());
    h.checks = vec![check("firewall-pvrdma", Status::Fail)];
    let mut d = diagnosis(vec![h]);
    d.fleet_checks = vec![check("vmknic-subnets", Status::Warn)];
    let text = render(&d, &options(Scope::Fleet));
    assert_eq!(
        lines_of(&text, "pvrdma_check_status"),
        [
            r#"pvrdma_check_status{host_name="esx01",check="firewall-pvrdma",status="not-applicable"} 0"#,
            r#"pvrdma_check_status{host_name="esx01",check="firewall-pvrdma",status="pass"} 0"#,
            r#"pvrdma_check_status{host_name="esx01",check="firewall-pvrdma",status="warn"} 0"#,
            r#"pvrdma_check_status{host_name="esx01",check="firewall-pvrdma",status="fail"} 1"#,
            r#"pvrdma_check_status{host_name="esx01",check="firewall-pvrdma",status="unknown"} 0"#,
        ]
    );
    assert!(text.contains("pvrdma_fleet_check_status{check=\"vmknic-subnets\",status=\"warn\"} 1\n"));
}

#[test]
fn a_single_target_names_its_host_and_invents_no_pairs() {
    let mut h = host("esx01", HostStatus::Ok, vec![("vm1", vec![adapter(0, Verdict::Hca)])]);
    h.checks = vec![check("firewall-pvrdma", Status::Pass)];
    let text = render(&diagnosis(vec![h.clone()]), &options(Scope::SingleTarget));
    assert!(text.contains("pvrdma_host_up{host_name=\"esx01\"} 1\n"), "{text}");
    assert!(
        text.contains("pvrdma_adapter_verdict{host_name=\"esx01\",vm_name=\"vm1\",adapter=\"0\",verdict=\"hca\"} 1\n")
    );
    assert!(!text.contains("pvrdma_adapter_pairs"), "{text}");
    let text = render(&diagnosis(vec![h.clone()]), &options(Scope::Fleet));
    assert!(text.contains("pvrdma_adapter_pairs{transport=\"rdma\"} 0\n"), "{text}");
    // A fleet with a host not read: its adapters would be missing from the tally.
    let down = host("esx02", HostStatus::Unreachable, Vec::new());
    let text = render(&diagnosis(vec![h, down]), &options(Scope::Fleet));
    assert!(!text.contains("pvrdma_adapter_pairs"), "{text}");
}

#[test]
fn label_values_are_escaped() {
    let h = host(
        "esx01",
        HostStatus::Ok,
        vec![("a \"quoted\" \\ name\nsecond line", vec![adapter(0, Verdict::Hca)])],
    );
    let text = render(&diagnosis(vec![h]), &options(Scope::Fleet));
    assert!(
        text.contains(r#"vm_name="a \"quoted\" \\ name\nsecond line",adapter="0",verdict="hca"} 1"#),
        "{text}"
    );
    assert_eq!(super::super::exposition::escape_help("a\\b\nc"), "a\\\\b\\nc");
}

#[test]
fn vms_sharing_a_name_get_distinct_series() {
    let mut h = host(
        "esx01",
        HostStatus::Ok,
        vec![
            ("twin", vec![adapter(0, Verdict::Hca)]),
            ("twin", vec![adapter(0, Verdict::TcpFallback)]),
        ],
    );
    h.vms[1].world_id = Some(2);
    h.vms.push(Vm {
        name: "solo".to_string(),
        world_id: Some(3),
        config_file: None,
        adapters: vec![adapter(0, Verdict::Hca)],
    });
    let text = render(&diagnosis(vec![h]), &options(Scope::Fleet));
    let series: Vec<&str> = lines_of(&text, "pvrdma_adapter_verdict")
        .into_iter()
        .map(|l| l.rsplit_once(' ').unwrap().0)
        .collect();
    let mut unique = series.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), series.len(), "{text}");
    assert!(text.contains(r#"{host_name="esx01",vm_name="twin",adapter="0",world_id="2",verdict="tcp-fallback"} 1"#));
    assert!(text.contains(r#"{host_name="esx01",vm_name="solo",adapter="0",verdict="hca"} 1"#));
}

#[test]
fn floats_are_plain() {
    assert_eq!(float(0.0012), "0.0012");
    assert_eq!(float(1.0), "1");
    assert_eq!(float(f64::NAN), "NaN");
    assert_eq!(float(f64::INFINITY), "+Inf");
    assert_eq!(seconds(Duration::from_millis(5)), "0.005");
}

#[test]
fn uplink_counters_are_counters_per_uplink_and_absent_when_unknown() {
    let mut h = host("esx01", HostStatus::Ok, Vec::new());
    let known = UplinkCounters {
        uplink: "vmnic2".to_string(),
        counters: NicCounters {
            packets_received: Some(701_280_499_176),
            packets_sent: Some(687_061_948_450),
            receive_dropped: Some(2_452_783_244),
            transmit_dropped: Some(0),
            receive_errors: Some(0),
            transmit_errors: None,
        },
        error: None,
    };
    let unknown = UplinkCounters {
        uplink: "vmnic3".to_string(),
        counters: NicCounters::default(),
        error: Some("exit status 1: Error: no such NIC".to_string()),
    };
    h.uplinks = vec![known, unknown];
    let text = render(&diagnosis(vec![h]), &options(Scope::SingleTarget));
    assert!(
        text.contains("# TYPE pvrdma_uplink_receive_dropped_total counter\n"),
        "{text}"
    );
    assert_eq!(
        lines_of(&text, "pvrdma_uplink_receive_dropped_total"),
        ["pvrdma_uplink_receive_dropped_total{host_name=\"esx01\",uplink=\"vmnic2\"} 2452783244"]
    );
    assert_eq!(
        lines_of(&text, "pvrdma_uplink_receive_packets_total"),
        ["pvrdma_uplink_receive_packets_total{host_name=\"esx01\",uplink=\"vmnic2\"} 701280499176"]
    );
    // A counter the host did not print has no series, rather than a 0.
    assert!(!text.contains("pvrdma_uplink_transmit_errors_total"), "{text}");
    assert!(!text.contains("vmnic3"), "{text}");
    for name in [
        "pvrdma_uplink_transmit_packets_total",
        "pvrdma_uplink_transmit_dropped_total",
        "pvrdma_uplink_receive_errors_total",
    ] {
        assert_eq!(lines_of(&text, name).len(), 1, "{name}:\n{text}");
    }
}
