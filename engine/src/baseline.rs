//! `--baseline OLD.json`: what changed since an earlier report. A runbook answers "what
//! broke since the last good run" in one command: every host status, check status,
//! adapter verdict and probe status that differs, as data (`changes` in the JSON) and as
//! the first lines of the human report.
//!
//! Both sides are read through the JSON report form (the baseline from its file, this run
//! through [`crate::report::json::to_value`]), so the comparison only uses the documented
//! schema and works across tool versions of the same schema major.
//!
//! When: the report holds no timestamp (a live run and `analyze` of its bundle must stay
//! byte-identical), so "since" is the baseline file's modification time, which is when
//! the runbook saved it.
use crate::diagnose::Diagnosis;
pub use crate::diagnose::{Change, ChangeKind, Changes};
use anyhow::Context;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The schema family a baseline must belong to; its major must equal ours.
const SCHEMA_PREFIX: &str = "pvrdma-doctor/report/v";

/// A baseline report read from disk.
#[derive(Debug, Clone)]
pub struct Baseline {
    since: String,
    report: Value,
}

impl Baseline {
    /// A report of this run as the baseline of the next (`watch`), dated `at`.
    pub fn of(diagnosis: &Diagnosis, at: std::time::SystemTime) -> Baseline {
        Baseline {
            since: humantime::format_rfc3339_seconds(at).to_string(),
            report: crate::report::json::to_value(diagnosis),
        }
    }
}

/// Reads and vets a baseline: a pvrdma-doctor JSON report of our schema major.
pub fn load(path: &Path) -> anyhow::Result<Baseline> {
    let shown = path.display();
    let text = std::fs::read(path).with_context(|| format!("cannot read the baseline {shown}"))?;
    let report: Value = serde_json::from_slice(&text)
        .with_context(|| format!("the baseline {shown} is not JSON; pass a report written with --format json"))?;
    let schema = report.get("schema").and_then(Value::as_str).unwrap_or_default();
    let Some(major) = schema.strip_prefix(SCHEMA_PREFIX) else {
        anyhow::bail!(
            "the baseline {shown} is not a pvrdma-doctor report (its \"schema\" is {schema:?}, expected {:?}); pass a report written with --format json",
            crate::report::json::SCHEMA
        );
    };
    let ours = crate::report::json::SCHEMA
        .strip_prefix(SCHEMA_PREFIX)
        .unwrap_or_default();
    anyhow::ensure!(
        major == ours,
        "the baseline {shown} has schema {schema:?} but this pvrdma-doctor writes {:?}; a baseline must come from the same schema major (write a new one with this version)",
        crate::report::json::SCHEMA
    );
    anyhow::ensure!(
        report.get("hosts").is_some_and(Value::is_array),
        "the baseline {shown} has no \"hosts\" list; it is not a complete pvrdma-doctor report"
    );
    let modified = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .with_context(|| format!("cannot read the modification time of the baseline {shown}"))?;
    Ok(Baseline {
        since: humantime::format_rfc3339_seconds(modified).to_string(),
        report,
    })
}

/// Every status that differs between the baseline and this run's diagnosis.
pub fn compare(baseline: &Baseline, current: &Diagnosis) -> Changes {
    let now = crate::report::json::to_value(current);
    Changes {
        since: baseline.since.clone(),
        list: diff(&Snapshot::of(&baseline.report), &Snapshot::of(&now)),
    }
}

/// The comparable statuses of one report.
#[derive(Debug, Default)]
struct Snapshot {
    /// In report order.
    hosts: Vec<(String, HostSnap)>,
    fleet: Vec<(String, String)>,
    probes: Vec<((String, String), String)>,
    /// A VM-first run's chosen VMs, each `diagnosed` or `not-diagnosed`.
    vms: Option<Vec<(String, String)>>,
    /// Why each item is what it is, and its fix: what a change to it carries.
    why: BTreeMap<(ChangeKind, Option<String>, String), Why>,
}

#[derive(Debug, Default)]
struct HostSnap {
    status: String,
    /// Checks or adapters were judged (an unreachable host has neither).
    diagnosed: bool,
    checks: Vec<(String, String)>,
    adapters: Vec<(String, String)>,
}

/// An item's reason and remedy, as its report says them.
#[derive(Debug, Clone, Default)]
struct Why {
    reason: Option<String>,
    remedy: Option<crate::diagnose::Remedy>,
}

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// A non-empty string field.
fn some_text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A check's fix: its `remediation` object, or (a report older than it) its `remedy`
/// string as advice.
fn remedy_of(check: &Value) -> Option<crate::diagnose::Remedy> {
    match check.get("remediation").filter(|r| r.is_object()) {
        Some(r) => Some(crate::diagnose::Remedy {
            command: some_text(r, "command"),
            advice: some_text(r, "advice"),
            ..crate::diagnose::Remedy::default()
        }),
        None => some_text(check, "remedy").map(|advice| crate::diagnose::Remedy {
            command: None,
            advice: Some(advice),
            ..crate::diagnose::Remedy::default()
        }),
    }
    .filter(|r| r.command.is_some() || r.advice.is_some())
}

/// The fixes of several checks as one: the commands joined by `&&` (each fixes its own
/// check), the advice one after the other.
fn combined(remedies: &[crate::diagnose::Remedy]) -> Option<crate::diagnose::Remedy> {
    let commands: Vec<&str> = remedies.iter().filter_map(|r| r.command.as_deref()).collect();
    let advice: Vec<&str> = remedies.iter().filter_map(|r| r.advice.as_deref()).collect();
    let join = |v: Vec<&str>, sep: &str| (!v.is_empty()).then(|| v.join(sep));
    let r = crate::diagnose::Remedy {
        command: join(commands, " && "),
        advice: join(advice, " "),
        ..crate::diagnose::Remedy::default()
    };
    (r.command.is_some() || r.advice.is_some()).then_some(r)
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

impl Snapshot {
    fn of(report: &Value) -> Snapshot {
        let mut s = Snapshot::default();
        for h in list(report, "hosts") {
            s.add_host(h);
        }
        s.add_fleet(report);
        s.add_chosen_vms(report);
        s.add_probes(report);
        s
    }

    /// One host of the report: its status, checks and adapters, and why each is so.
    fn add_host(&mut self, h: &Value) {
        let name = text(h, "host");
        let checks: Vec<(String, String)> = list(h, "checks")
            .iter()
            .map(|c| (text(c, "id"), text(c, "status")))
            .collect();
        let mut failing_fixes = Vec::new();
        for c in list(h, "checks") {
            let remedy = remedy_of(c);
            if text(c, "status") == "fail" {
                failing_fixes.extend(remedy.clone());
            }
            let why = Why {
                reason: some_text(c, "summary"),
                remedy,
            };
            self.why
                .insert((ChangeKind::Check, Some(name.clone()), text(c, "id")), why);
        }
        let error = h.get("error").and_then(|e| some_text(e, "message"));
        self.why.insert(
            (ChangeKind::Host, Some(name.clone()), "status".to_string()),
            Why {
                reason: error,
                remedy: None,
            },
        );
        let mut adapters: Vec<(String, String)> = Vec::new();
        for vm in list(h, "vms") {
            for a in list(vm, "adapters") {
                let index = a.get("index").and_then(Value::as_u64).unwrap_or_default();
                let base = format!("{}#{index}", text(vm, "name"));
                // Two running VMs may share a display name: number the repeats.
                let mut id = base.clone();
                let mut n = 1;
                while adapters.iter().any(|(k, _)| *k == id) {
                    n += 1;
                    id = format!("{base} ({n})");
                }
                let reasons: Vec<&str> = list(a, "reasons").iter().filter_map(Value::as_str).collect();
                let why = Why {
                    reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
                    remedy: if text(a, "verdict") == "tcp-fallback" {
                        combined(&failing_fixes)
                    } else {
                        None
                    },
                };
                self.why
                    .insert((ChangeKind::Adapter, Some(name.clone()), id.clone()), why);
                adapters.push((id, text(a, "verdict")));
            }
        }
        let snap = HostSnap {
            status: text(h, "status"),
            diagnosed: !checks.is_empty() || !adapters.is_empty(),
            checks,
            adapters,
        };
        self.hosts.push((name, snap));
    }

    /// The checks across hosts, and why each is so.
    fn add_fleet(&mut self, report: &Value) {
        self.fleet = list(report, "fleet_checks")
            .iter()
            .map(|c| (text(c, "id"), text(c, "status")))
            .collect();
        for c in list(report, "fleet_checks") {
            let why = Why {
                reason: some_text(c, "summary"),
                remedy: remedy_of(c),
            };
            self.why.insert((ChangeKind::Check, None, text(c, "id")), why);
        }
    }

    /// The VMs a VM-first run chose: diagnosed or not, and why not.
    fn add_chosen_vms(&mut self, report: &Value) {
        self.vms = report
            .get("vm_scope")
            .and_then(|v| serde_json::from_value::<crate::diagnose::VmScope>(v.clone()).ok())
            .map(|scope| {
                let mut vms = Vec::new();
                for vm in &scope.vms {
                    let why = scope.why_not_diagnosed(vm);
                    let state = if why.is_some() { "not-diagnosed" } else { "diagnosed" };
                    self.why.insert(
                        (ChangeKind::Vm, None, vm.clone()),
                        Why {
                            reason: why,
                            remedy: None,
                        },
                    );
                    vms.push((vm.clone(), state.to_string()));
                }
                vms
            });
    }

    /// The probes between hosts, and what each found.
    fn add_probes(&mut self, report: &Value) {
        self.probes = list(report, "probes")
            .iter()
            .map(|p| ((text(p, "from"), text(p, "to")), text(p, "status")))
            .collect();
        for p in list(report, "probes") {
            let why = Why {
                reason: some_text(p, "detail"),
                remedy: None,
            };
            self.why
                .insert((ChangeKind::Probe, Some(text(p, "from")), text(p, "to")), why);
        }
    }
}

/// Items of two keyed lists that differ, in `now`'s order then the vanished ones.
fn keyed_diff<K: Ord + Clone>(was: &[(K, String)], now: &[(K, String)]) -> Vec<(K, Option<String>, Option<String>)> {
    let old: BTreeMap<&K, &String> = was.iter().map(|(k, v)| (k, v)).collect();
    let new: BTreeMap<&K, &String> = now.iter().map(|(k, v)| (k, v)).collect();
    let mut out = Vec::new();
    for (k, v) in now {
        match old.get(k) {
            Some(o) if *o == v => {}
            other => out.push((k.clone(), other.map(|o| (*o).clone()), Some(v.clone()))),
        }
    }
    for (k, v) in was {
        if !new.contains_key(k) {
            out.push((k.clone(), Some(v.clone()), None));
        }
    }
    out
}

fn diff(was: &Snapshot, now: &Snapshot) -> Vec<Change> {
    let mut out = Vec::new();
    let old_hosts: BTreeMap<&str, &HostSnap> = was.hosts.iter().map(|(h, s)| (h.as_str(), s)).collect();
    let new_hosts: BTreeMap<&str, &HostSnap> = now.hosts.iter().map(|(h, s)| (h.as_str(), s)).collect();
    let change = |host: Option<&str>, kind, id: &str, from: Option<String>, to: Option<String>| {
        // What this run says of it; nothing for an item this run lacks.
        let why = match &to {
            Some(_) => now
                .why
                .get(&(kind, host.map(str::to_string), id.to_string()))
                .cloned()
                .unwrap_or_default(),
            None => Why::default(),
        };
        Change {
            host: host.map(str::to_string),
            kind,
            id: id.to_string(),
            from,
            to,
            reason: why.reason,
            remediation: why.remedy,
        }
    };
    let mut host_order: Vec<&str> = now.hosts.iter().map(|(h, _)| h.as_str()).collect();
    host_order.extend(
        was.hosts
            .iter()
            .map(|(h, _)| h.as_str())
            .filter(|h| !new_hosts.contains_key(h)),
    );
    for host in host_order {
        let (old, new) = (old_hosts.get(host), new_hosts.get(host));
        let status_of = |s: Option<&&HostSnap>| s.map(|s| s.status.clone());
        if status_of(old) != status_of(new) {
            out.push(change(
                Some(host),
                ChangeKind::Host,
                "status",
                status_of(old),
                status_of(new),
            ));
        }
        // A host that appeared, vanished, or was not diagnosed on one side (unreachable)
        // is told by its status alone: listing every check as absent would bury it.
        let (Some(old), Some(new)) = (old, new) else { continue };
        if !old.diagnosed || !new.diagnosed {
            continue;
        }
        for (id, from, to) in keyed_diff(&old.checks, &new.checks) {
            out.push(change(Some(host), ChangeKind::Check, &id, from, to));
        }
        for (id, from, to) in keyed_diff(&old.adapters, &new.adapters) {
            out.push(change(Some(host), ChangeKind::Adapter, &id, from, to));
        }
    }
    // Probes compare only when both runs probed; otherwise every pair would "appear".
    if !was.probes.is_empty() && !now.probes.is_empty() {
        for ((from_host, to_host), from, to) in keyed_diff(&was.probes, &now.probes) {
            out.push(change(Some(&from_host), ChangeKind::Probe, &to_host, from, to));
        }
    }
    let skip_reachability = was.probes.is_empty() || now.probes.is_empty();
    for (id, from, to) in keyed_diff(&was.fleet, &now.fleet) {
        if skip_reachability && id == crate::diagnose::probe::CHECK_ID {
            continue;
        }
        out.push(change(None, ChangeKind::Check, &id, from, to));
    }
    // Chosen VMs compare only when both runs were VM-first.
    if let (Some(was), Some(now)) = (&was.vms, &now.vms) {
        for (vm, from, to) in keyed_diff(was, now) {
            out.push(change(None, ChangeKind::Vm, &vm, from, to));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(hosts: Value, fleet: Value, probes: Value) -> Value {
        json!({"schema": "pvrdma-doctor/report/v1", "hosts": hosts, "fleet_checks": fleet, "probes": probes})
    }

    fn host(name: &str, status: &str, firewall: &str, verdict: &str) -> Value {
        json!({"host": name, "status": status,
               "checks": [{"id": "esxi-version", "status": "pass"}, {"id": "firewall-pvrdma", "status": firewall}],
               "vms": [{"name": "hpc", "adapters": [{"index": 0, "verdict": verdict}]},
                       {"name": "hpc", "adapters": [{"index": 0, "verdict": "hca"}]}]})
    }

    #[test]
    fn every_kind_of_change_and_nothing_else() {
        let was = report(
            json!([
                host("esx01", "ok", "pass", "hca"),
                host("esx02", "ok", "pass", "hca"),
                host("esx09", "ok", "pass", "hca")
            ]),
            json!([{"id": "vmknic-reachability", "status": "pass"}]),
            json!([{"from": "esx01", "to": "esx02", "status": "ok"}]),
        );
        let now = report(
            json!([host("esx01", "problems", "fail", "tcp-fallback"),
                   {"host": "esx02", "status": "unreachable", "checks": [], "vms": []},
                   host("esx03", "ok", "pass", "hca")]),
            json!([{"id": "vmknic-reachability", "status": "warn"}]),
            json!([{"from": "esx01", "to": "esx02", "status": "mtu"}]),
        );
        let got = diff(&Snapshot::of(&was), &Snapshot::of(&now));
        let flat: Vec<String> = got
            .iter()
            .map(|c| format!("{:?} {:?} {} {:?}->{:?}", c.host, c.kind, c.id, c.from, c.to))
            .collect();
        assert_eq!(
            flat,
            [
                r#"Some("esx01") Host status Some("ok")->Some("problems")"#,
                r#"Some("esx01") Check firewall-pvrdma Some("pass")->Some("fail")"#,
                r#"Some("esx01") Adapter hpc#0 Some("hca")->Some("tcp-fallback")"#,
                r#"Some("esx02") Host status Some("ok")->Some("unreachable")"#,
                r#"Some("esx03") Host status None->Some("ok")"#,
                r#"Some("esx09") Host status Some("ok")->None"#,
                r#"Some("esx01") Probe esx02 Some("ok")->Some("mtu")"#,
                r#"None Check vmknic-reachability Some("pass")->Some("warn")"#,
            ]
        );
        assert!(diff(&Snapshot::of(&was), &Snapshot::of(&was)).is_empty());
    }

    #[test]
    fn a_change_carries_why_and_the_fix_as_this_run_says_them() {
        let was = report(json!([host("esx01", "ok", "pass", "hca")]), json!([]), json!([]));
        let mut now = report(
            json!([host("esx01", "problems", "fail", "tcp-fallback")]),
            json!([]),
            json!([]),
        );
        let firewall = &mut now["hosts"][0]["checks"][1];
        firewall["summary"] = json!("the pvrdma ruleset is disabled");
        firewall["remediation"] =
            json!({"command": "esxcli network firewall ruleset set -e true -r pvrdma", "advice": null});
        now["hosts"][0]["vms"][0]["adapters"][0]["reasons"] =
            json!(["host check firewall-pvrdma fails: the pvrdma ruleset is disabled"]);
        let got = diff(&Snapshot::of(&was), &Snapshot::of(&now));
        let fix = Some(crate::diagnose::Remedy {
            command: Some("esxcli network firewall ruleset set -e true -r pvrdma".into()),
            advice: None,
            ..crate::diagnose::Remedy::default()
        });
        let check = got.iter().find(|c| c.kind == ChangeKind::Check).expect("check change");
        assert_eq!(check.reason.as_deref(), Some("the pvrdma ruleset is disabled"));
        assert_eq!(check.remediation, fix);
        // The adapter's fix is that of the check failing on its host.
        let adapter = got
            .iter()
            .find(|c| c.kind == ChangeKind::Adapter)
            .expect("adapter change");
        assert_eq!(
            adapter.reason.as_deref(),
            Some("host check firewall-pvrdma fails: the pvrdma ruleset is disabled")
        );
        assert_eq!(adapter.remediation, fix);
        // Going back to pass: the reason is the passing summary, no fix.
        let back = diff(&Snapshot::of(&now), &Snapshot::of(&was));
        assert!(back.iter().all(|c| c.remediation.is_none()), "{back:?}");
    }

    /// A chosen VM that stops being diagnosed (it moved off the hosts read) is a change,
    /// with why; a report written before the VM-first fields compares as diagnosed.
    #[test]
    fn a_chosen_vm_no_longer_diagnosed_is_a_change_of_its_own() {
        let scoped = |scope: Value| {
            let mut r = report(json!([host("esx01", "ok", "pass", "hca")]), json!([]), json!([]));
            r["vm_scope"] = scope;
            r
        };
        let was = scoped(json!({"vms": ["hpc"], "not_running": [], "not_seen": [], "unread_hosts": []}));
        let now = scoped(
            json!({"vms": ["hpc"], "not_running": ["hpc"], "not_seen": [], "unread_hosts": [],
                                "on_hosts_left_out": [], "not_diagnosed": ["hpc"]}),
        );
        let got = diff(&Snapshot::of(&was), &Snapshot::of(&now));
        assert_eq!(got.len(), 1, "{got:?}");
        let c = &got[0];
        assert_eq!(
            (c.kind, c.host.as_deref(), c.id.as_str()),
            (ChangeKind::Vm, None, "hpc")
        );
        assert_eq!(
            (c.from.as_deref(), c.to.as_deref()),
            (Some("diagnosed"), Some("not-diagnosed"))
        );
        assert_eq!(
            c.reason.as_deref(),
            Some("no host diagnosed runs it (stopped, or moved since the inventory was read)")
        );
        // Not compared against a run that was not VM-first.
        let whole = report(json!([host("esx01", "ok", "pass", "hca")]), json!([]), json!([]));
        assert!(diff(&Snapshot::of(&whole), &Snapshot::of(&now)).is_empty());
    }

    #[test]
    fn probes_are_not_compared_against_a_run_without_them() {
        let was = report(json!([host("esx01", "ok", "pass", "hca")]), json!([]), json!([]));
        let now = report(
            json!([host("esx01", "ok", "pass", "hca")]),
            json!([{"id": "vmknic-reachability", "status": "pass"}]),
            json!([{"from": "esx01", "to": "esx02", "status": "ok"}]),
        );
        assert!(diff(&Snapshot::of(&was), &Snapshot::of(&now)).is_empty());
    }

    #[test]
    fn baselines_of_another_schema_or_no_report_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let v2 = write("v2.json", r#"{"schema": "pvrdma-doctor/report/v2", "hosts": []}"#);
        let e = load(&v2).unwrap_err().to_string();
        assert!(e.contains("report/v2") && e.contains("same schema major"), "{e}");
        let other = write("other.json", r#"{"schema": "something/else", "hosts": []}"#);
        assert!(load(&other)
            .unwrap_err()
            .to_string()
            .contains("not a pvrdma-doctor report"));
        let garbage = write("bad.json", "not json");
        assert!(format!("{:#}", load(&garbage).unwrap_err()).contains("is not JSON"));
        assert!(format!("{:#}", load(&dir.path().join("missing.json")).unwrap_err()).contains("cannot read"));
        let ok = write("ok.json", r#"{"schema": "pvrdma-doctor/report/v1", "hosts": []}"#);
        let b = load(&ok).unwrap();
        assert!(b.since.ends_with('Z'), "{}", b.since);
    }
}
