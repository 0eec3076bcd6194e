//! The plan: every fix of a diagnosis as the changes to make, host by host, for a site's
//! own tool to apply after review (`--format ansible`, `--format powercli`: one model, two
//! renderings). The tool itself never changes a host.
//!
//! A change the vSphere API makes safely (a firewall ruleset, an advanced option, a VM's
//! memory reservation) is a step to apply; anything else (a decision to take first, a
//! change only esxcli makes, advice) is a step by hand, kept in its place so nothing is
//! silently left out.
use crate::diagnose::{Check, CheckId, ConfigChange, Diagnosis, HostStatus, RemedyForms, Setting, Status};
use std::time::SystemTime;

pub mod ansible;
pub mod powercli;
#[cfg(test)]
mod tests;

/// Where a plan comes from, which API it addresses, and when it was made.
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// The vCenter the run read (`vc01.example.com`, `vc01:8443`); `None`: the run read no
    /// vCenter, and each ESXi host's own vSphere API (hostd) is addressed by the name
    /// the run used.
    pub vcenter: Option<String>,
    /// Where the diagnosis came from, in words (`vCenter vc01, without SSH`).
    pub source: String,
    /// When the plan was made.
    pub made: SystemTime,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            vcenter: None,
            source: "a run over SSH".to_string(),
            made: SystemTime::now(),
        }
    }
}

impl PlanOptions {
    /// The vCenter's host name and port (`None`: the default, 443).
    pub fn vcenter_address(&self) -> Option<(String, Option<u16>)> {
        self.vcenter.as_deref().map(split_port)
    }
}

/// `vc01:8443` → (`vc01`, 8443); `[fd00::1]:443` → (`fd00::1`, 443); a bare IPv6
/// address stays whole.
fn split_port(address: &str) -> (String, Option<u16>) {
    let address = address
        .trim_start_matches("https://")
        .trim_end_matches("/sdk")
        .trim_end_matches('/');
    if let Some(rest) = address.strip_prefix('[') {
        if let Some((host, port)) = rest.split_once(']') {
            return (host.to_string(), port.strip_prefix(':').and_then(|p| p.parse().ok()));
        }
    }
    match address.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(p) => (host.to_string(), Some(p)),
            Err(_) => (address.to_string(), None),
        },
        _ => (address.to_string(), None),
    }
}

/// The whole plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Failing checks across hosts: steps by hand, before any host.
    pub fleet: Vec<Step>,
    /// The hosts with something to do, in report order.
    pub hosts: Vec<HostPlan>,
    /// Hosts that were not diagnosed, and why: nothing is planned for them.
    pub not_diagnosed: Vec<(String, String)>,
}

/// What to do on one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPlan {
    /// The host as the run named it (the name vCenter has for it, on a vCenter run).
    pub host: String,
    /// Its steps, in the report's check order.
    pub steps: Vec<Step>,
}

impl HostPlan {
    /// The changes to apply, with the check each fixes.
    pub fn changes(&self) -> impl Iterator<Item = (CheckId, &ConfigChange)> {
        self.steps.iter().filter_map(|s| match s {
            Step::Apply { check, change } => Some((*check, change)),
            Step::Manual { .. } => None,
        })
    }
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A change the API makes safely.
    Apply { check: CheckId, change: ConfigChange },
    /// A fix for a person: what failed and the lines to follow, in order.
    Manual {
        check: CheckId,
        what: String,
        lines: Vec<String>,
    },
}

impl Plan {
    /// The plan of a diagnosis: a step for every check that fails (or warns with a fix).
    pub fn of(diagnosis: &Diagnosis) -> Plan {
        let fleet = diagnosis
            .fleet_checks
            .iter()
            .filter(|c| wanted(c))
            .flat_map(|c| steps(c, None))
            .collect();
        let mut hosts = Vec::new();
        let mut not_diagnosed = Vec::new();
        for h in &diagnosis.hosts {
            if h.checks.is_empty()
                && matches!(
                    h.status,
                    HostStatus::Unreachable | HostStatus::Error | HostStatus::Interrupted
                )
            {
                let why = h
                    .error
                    .as_ref()
                    .map_or_else(|| "not diagnosed".to_string(), |e| e.message.clone());
                not_diagnosed.push((h.host.clone(), why));
                continue;
            }
            let steps: Vec<Step> = h
                .checks
                .iter()
                .filter(|c| wanted(c))
                .flat_map(|c| steps(c, Some(&h.host)))
                .collect();
            if !steps.is_empty() {
                hosts.push(HostPlan {
                    host: h.host.clone(),
                    steps,
                });
            }
        }
        Plan {
            fleet,
            hosts,
            not_diagnosed,
        }
    }

    /// How many changes it applies, and how many steps are left to a person.
    pub fn counts(&self) -> (usize, usize) {
        let all = self.hosts.iter().flat_map(|h| &h.steps).chain(&self.fleet);
        let apply = all.clone().filter(|s| matches!(s, Step::Apply { .. })).count();
        (apply, all.count() - apply)
    }
}

/// A check that fails, or warns with a fix.
fn wanted(c: &Check) -> bool {
    c.status == Status::Fail || (c.status == Status::Warn && c.remedy.is_some())
}

/// A check's steps: its changes the API makes safely, each on its own, and the rest for a
/// person (a fix that needs a decision stays whole, by hand).
fn steps(c: &Check, host: Option<&str>) -> Vec<Step> {
    let manual = |lines: Vec<String>| Step::Manual {
        check: c.id,
        what: c.summary.clone(),
        lines,
    };
    let Some(remedy) = &c.remedy else {
        return vec![manual(vec!["no fix is known for this: see the report".to_string()])];
    };
    let forms = remedy.forms.clone().unwrap_or_default();
    let by_hand = || {
        let mut lines = Vec::new();
        if let Some(d) = &remedy.decision {
            lines.push(format!("decide first: {d}"));
        }
        lines.extend(form_lines(&forms));
        if forms.esxcli.is_none() {
            if let Some(command) = &remedy.command {
                lines.push(format!("ESXi shell: {command}"));
            }
        }
        if let Some(a) = &remedy.advice {
            lines.push(a.clone());
        }
        lines
    };
    if remedy.decision.is_some() || remedy.changes.is_empty() {
        return vec![manual(by_hand())];
    }
    let mut out: Vec<Step> = Vec::new();
    for change in &remedy.changes {
        match &change.setting {
            Setting::Esxcli { .. } => {
                // esxcli through the API runs whatever it is given, unchecked: a person
                // runs it, after reading it.
                let forms = match host {
                    Some(host) => change.forms(host),
                    None => forms.clone(),
                };
                out.push(manual(form_lines(&forms)));
            }
            _ => out.push(Step::Apply {
                check: c.id,
                change: change.clone(),
            }),
        }
    }
    // Beside changes the plan applies, the advice says the same change in the vSphere
    // Client's words: it is a step by hand only beside one the plan leaves to a person
    // (an alternative to it, or what follows it).
    let all_applied = out.iter().all(|s| matches!(s, Step::Apply { .. }));
    if let (Some(a), false) = (&remedy.advice, all_applied) {
        out.push(manual(vec![a.clone()]));
    }
    out
}

/// A step by hand as the lines of a comment: what fails `place` (`on esx01`, `across
/// hosts`), then what to do, in order.
pub(crate) fn manual_lines(place: &str, step: &Step) -> Vec<String> {
    match step {
        Step::Manual { check, what, lines } => std::iter::once(format!("BY HAND {place}, {check} ({what}):"))
            .chain(lines.iter().map(|l| format!("  {l}")))
            .collect(),
        Step::Apply { .. } => Vec::new(),
    }
}

/// A fix's forms for a person, each line labelled with its tool, the vCenter ones first.
fn form_lines(forms: &RemedyForms) -> Vec<String> {
    [
        ("vSphere Client", &forms.vsphere_client),
        ("PowerCLI", &forms.powercli),
        ("govc", &forms.govc),
        ("ESXi shell", &forms.esxcli),
    ]
    .into_iter()
    .filter_map(|(label, line)| line.as_ref().map(|l| format!("{label}: {l}")))
    .collect()
}

/// Text from a host or vCenter for one comment line: control characters (a newline would
/// end the comment) become spaces.
pub(crate) fn comment_text(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// The header lines every plan opens with (without the comment marker).
pub(crate) fn header(plan: &Plan, options: &PlanOptions, tool: &str) -> Vec<String> {
    let (apply, by_hand) = plan.counts();
    let made = humantime::format_rfc3339_seconds(options.made);
    let api = match &options.vcenter {
        Some(vc) => format!("vCenter {vc}, the one the run read"),
        None => "each ESXi host's own vSphere API, by the name the run used (the run read no vCenter)".to_string(),
    };
    vec![
        format!("pvrdma-doctor {} plan for {tool}: the fixes of the checks that fail.", env!("CARGO_PKG_VERSION")),
        format!("Made {made} from {}.", comment_text(&options.source)),
        format!("It addresses {}.", comment_text(&api)),
        format!(
            "{apply} change(s) on {} host(s) to apply; {by_hand} fix(es) by hand, written as comments where they belong.",
            plan.hosts.iter().filter(|h| h.changes().next().is_some()).count()
        ),
        "Nothing here has been applied: review it first. A passing check afterwards proves the configuration only; an adapter uses the HCA once the host says so (run pvrdma-doctor over SSH again).".to_string(),
    ]
}
