//! The performance data after `|`: counts a monitoring system graphs and thresholds on.
use super::NagiosOptions;
use crate::diagnose::{Diagnosis, HostStatus, Status};

/// The performance data: `'label'=value[UOM];[warn];[crit];[min];[max]`, C-locale
/// numbers, labels unique in their first 19 characters, never the value `U`.
pub(super) fn perfdata(d: &Diagnosis, opts: &NagiosOptions) -> String {
    let s = &d.summary;
    let adapters = s.adapters.to_string();
    let hosts = s.hosts.to_string();
    let count = |n: usize| n.to_string();
    let (fb_warn, fb_crit) = match (&opts.warning, &opts.critical) {
        (None, None) => (String::new(), "0".to_string()),
        (w, c) => (
            w.as_ref().map(|r| r.text().to_string()).unwrap_or_default(),
            c.as_ref().map(|r| r.text().to_string()).unwrap_or_default(),
        ),
    };
    let all_checks = || d.hosts.iter().flat_map(|h| &h.checks).chain(&d.fleet_checks);
    let checks = |st: Status| all_checks().filter(|c| c.status == st).count();
    let hosts_in = |st: HostStatus| d.hosts.iter().filter(|h| h.status == st).count();
    let t = &d.transport.totals;
    let mut items: Vec<(&str, String, String, String, String, String)> = vec![
        (
            "adapters_hca",
            count(s.hca),
            String::new(),
            String::new(),
            "0".into(),
            adapters.clone(),
        ),
        (
            "adapters_tcp_fallback",
            count(s.tcp_fallback),
            fb_warn,
            fb_crit,
            "0".into(),
            adapters.clone(),
        ),
        (
            "adapters_unknown",
            count(s.unknown),
            String::new(),
            String::new(),
            "0".into(),
            adapters,
        ),
        (
            "checks_fail",
            count(checks(Status::Fail)),
            String::new(),
            "0".into(),
            "0".into(),
            String::new(),
        ),
        (
            "checks_warn",
            count(checks(Status::Warn)),
            "0".into(),
            String::new(),
            "0".into(),
            String::new(),
        ),
        (
            "checks_unknown",
            count(checks(Status::Unknown)),
            String::new(),
            String::new(),
            "0".into(),
            String::new(),
        ),
    ];
    for (label, status) in [
        ("hosts_ok", HostStatus::Ok),
        ("hosts_problems", HostStatus::Problems),
        ("hosts_incomplete", HostStatus::Incomplete),
        ("hosts_unreachable", HostStatus::Unreachable),
        ("hosts_error", HostStatus::Error),
        ("hosts_interrupted", HostStatus::Interrupted),
    ] {
        items.push((
            label,
            count(hosts_in(status)),
            String::new(),
            String::new(),
            "0".into(),
            hosts.clone(),
        ));
    }
    for (label, n, crit) in [
        ("pairs_rdma", t.rdma, ""),
        ("pairs_tcp", t.tcp, ""),
        ("pairs_blocked", t.blocked, "0"),
        ("pairs_unknown", t.unknown, ""),
    ] {
        items.push((
            label,
            n.to_string(),
            String::new(),
            crit.into(),
            "0".into(),
            String::new(),
        ));
    }
    if let Some(took) = opts.duration {
        items.push((
            "duration",
            format!("{:.3}s", took.as_secs_f64()),
            String::new(),
            String::new(),
            "0".into(),
            String::new(),
        ));
    }
    items
        .iter()
        .map(|(label, value, warn, crit, min, max)| {
            let mut item = format!("'{label}'={value};{warn};{crit};{min};{max}");
            while item.ends_with(';') {
                item.pop();
            }
            item
        })
        .collect::<Vec<_>>()
        .join(" ")
}
