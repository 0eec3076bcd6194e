//! The performance data after `|`: counts a monitoring system graphs and thresholds on.
use super::NagiosOptions;
use crate::diagnose::{Diagnosis, HostStatus, Status};

/// The performance data: `'label'=value[UOM];[warn];[crit];[min];[max]`, C-locale
/// numbers, labels unique in their first 19 characters, never the value `U`.
pub(super) fn perfdata(d: &Diagnosis, opts: &NagiosOptions) -> String {
    let s = &d.summary;
    let adapters = s.adapters.to_string();
    let (fb_warn, fb_crit) = fallback_thresholds(opts);
    let all_checks = || d.hosts.iter().flat_map(|h| &h.checks).chain(&d.fleet_checks);
    let checks = |st: Status| all_checks().filter(|c| c.status == st).count();
    let mut items = vec![
        Item::new("adapters_hca", s.hca).max(&adapters),
        Item::new("adapters_tcp_fallback", s.tcp_fallback)
            .warn(fb_warn)
            .crit(fb_crit)
            .max(&adapters),
        Item::new("adapters_unknown", s.unknown).max(&adapters),
        Item::new("checks_fail", checks(Status::Fail)).crit("0"),
        Item::new("checks_warn", checks(Status::Warn)).warn("0"),
        Item::new("checks_unknown", checks(Status::Unknown)),
    ];
    let hosts = s.hosts.to_string();
    for (label, status) in [
        ("hosts_ok", HostStatus::Ok),
        ("hosts_problems", HostStatus::Problems),
        ("hosts_incomplete", HostStatus::Incomplete),
        ("hosts_unreachable", HostStatus::Unreachable),
        ("hosts_error", HostStatus::Error),
        ("hosts_interrupted", HostStatus::Interrupted),
    ] {
        let n = d.hosts.iter().filter(|h| h.status == status).count();
        items.push(Item::new(label, n).max(&hosts));
    }
    let t = &d.transport.totals;
    items.extend([
        Item::new("pairs_rdma", t.rdma),
        Item::new("pairs_tcp", t.tcp),
        Item::new("pairs_blocked", t.blocked).crit("0"),
        Item::new("pairs_unknown", t.unknown),
    ]);
    if let Some(took) = opts.duration {
        items.push(Item::new("duration", format!("{:.3}s", took.as_secs_f64())));
    }
    items.iter().map(Item::text).collect::<Vec<_>>().join(" ")
}

/// The thresholds of `adapters_tcp_fallback`: the plugin's `--warning` and `--critical`
/// ranges when either is given, else critical on any fallback (the plugin's own rule).
fn fallback_thresholds(opts: &NagiosOptions) -> (String, String) {
    match (&opts.warning, &opts.critical) {
        (None, None) => (String::new(), "0".to_string()),
        (w, c) => (
            w.as_ref().map(|r| r.text().to_string()).unwrap_or_default(),
            c.as_ref().map(|r| r.text().to_string()).unwrap_or_default(),
        ),
    }
}

/// One performance data item; every one of them is a count or a time, so its minimum is 0.
struct Item {
    label: &'static str,
    value: String,
    warn: String,
    crit: String,
    max: String,
}

impl Item {
    fn new(label: &'static str, value: impl ToString) -> Self {
        Item {
            label,
            value: value.to_string(),
            warn: String::new(),
            crit: String::new(),
            max: String::new(),
        }
    }

    fn warn(self, warn: impl Into<String>) -> Self {
        Item {
            warn: warn.into(),
            ..self
        }
    }

    fn crit(self, crit: impl Into<String>) -> Self {
        Item {
            crit: crit.into(),
            ..self
        }
    }

    fn max(self, max: &str) -> Self {
        Item {
            max: max.to_string(),
            ..self
        }
    }

    /// `'label'=value;warn;crit;0;max`, its trailing empty fields left out.
    fn text(&self) -> String {
        let Item {
            label,
            value,
            warn,
            crit,
            max,
        } = self;
        let mut item = format!("'{label}'={value};{warn};{crit};0;{max}");
        while item.ends_with(';') {
            item.pop();
        }
        item
    }
}
