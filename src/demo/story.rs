//! What the demo tells before and after its report: that its hosts are simulated on
//! 127.0.0.1, and which problems the scenario plants, so that a refused connection and a
//! failing check read as the point of the demo, not as a failed set-up. The planted
//! problems are read from the scenario itself (its captures diagnosed as `analyze` would,
//! its closed ports, its simulated switch ports), never written down for one scenario.
use super::*;
use pvrdma_engine::diagnose::probe::ProbeStatus;
use pvrdma_engine::diagnose::{Diagnosis, HostStatus, Status, Verdict};

/// What a scenario plants, read before the hosts start.
#[derive(Debug, Clone)]
pub struct Planted {
    /// The scenario's name (the built-in one's, or the `--scenario` folder's).
    pub(crate) scenario: String,
    /// Every simulated host, sorted.
    pub(crate) hosts: Vec<String>,
    /// One line per planted problem (`esx02: firewall-pvrdma fails: ...`).
    pub(crate) problems: Vec<String>,
    /// Short names of the problems for the closing line (`esx02: firewall-pvrdma`).
    pub(crate) short: Vec<String>,
    /// Each host's expected status class (see [`class`]).
    expected: BTreeMap<String, &'static str>,
    /// What the report must show for each planted problem.
    findings: Vec<Finding>,
}

/// One planted problem as the report must show it.
#[derive(Debug, Clone)]
enum Finding {
    /// A check (`host` `None`: across hosts) with this status.
    Check {
        host: Option<String>,
        id: pvrdma_engine::diagnose::CheckId,
        status: Status,
    },
    /// Some probe pair to or from `host` with this status.
    Probe { host: String, status: ProbeStatus },
    /// An adapter with this verdict.
    Adapter {
        host: String,
        vm: String,
        index: u32,
        verdict: Verdict,
    },
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Hca => "hca",
        Verdict::TcpFallback => "tcp-fallback",
        Verdict::Unknown => "unknown",
    }
}

/// Reads what the scenario of `opts` plants (`probe`: the `demo --probe` scenario and its
/// simulated switch ports).
pub fn planted(opts: &DemoOptions, probe: bool) -> anyhow::Result<Planted> {
    let hosts = if probe {
        load_probe_scenario(opts.scenario.as_deref())?
    } else {
        load_scenario(opts.scenario.as_deref())?
    };
    let scenario = match &opts.scenario {
        Some(dir) => dir
            .file_name()
            .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned()),
        None if probe => EMBEDDED_PROBE_SCENARIO.to_string(),
        None => EMBEDDED_SCENARIO.to_string(),
    };
    let diagnosis = diagnose_offline(&hosts)?;
    let mut told = Told::default();
    let mut expected = BTreeMap::new();
    for h in &diagnosis.hosts {
        // The demo serves a host whose capture is only its error as a closed port.
        let down = hosts.iter().any(|s| s.name == h.host && s.is_down());
        let status = if down { HostStatus::Unreachable } else { h.status };
        expected.insert(h.host.clone(), class(status));
        told.host(h, down);
    }
    for c in diagnosis
        .fleet_checks
        .iter()
        .filter(|c| matches!(c.status, Status::Fail | Status::Warn))
    {
        let verb = if c.status == Status::Fail { "fails" } else { "warns" };
        told.problems
            .push(format!("across hosts: {} {verb}: {}", c.id, c.summary));
        told.short.push(format!("across hosts: {}", c.id));
        told.findings.push(Finding::Check {
            host: None,
            id: c.id,
            status: c.status,
        });
    }
    if probe {
        for port in crate::demo::simnet::SimNet::planted_ports(&hosts) {
            told.problems.push(port.line);
            told.short.push(port.short);
            told.findings.push(Finding::Probe {
                host: port.host,
                status: port.status,
            });
        }
    }
    Ok(Planted {
        scenario,
        hosts: hosts.iter().map(|h| h.name.clone()).collect(),
        problems: told.problems,
        short: told.short,
        expected,
        findings: told.findings,
    })
}

/// The planted problems as the demo tells them: a line each, a short name each for the
/// closing line, and what the report must show.
#[derive(Default)]
struct Told {
    problems: Vec<String>,
    short: Vec<String>,
    findings: Vec<Finding>,
}

impl Told {
    /// What keeps one host from `ok` (`down`: the demo serves it as a closed port).
    fn host(&mut self, h: &pvrdma_engine::diagnose::HostDiagnosis, down: bool) {
        let listed = self.problems.len();
        if let Some(e) = &h.error {
            if down {
                self.problems.push(format!(
                    "{}: its SSH port is closed (the connection is refused)",
                    h.host
                ));
                self.short.push(format!("{}: SSH port closed", h.host));
            } else {
                self.problems.push(format!("{}: {}", h.host, e.message));
                self.short.push(format!(
                    "{}: {}",
                    h.host,
                    pvrdma_engine::diagnose::status_name(h.status)
                ));
            }
        }
        for c in h
            .checks
            .iter()
            .filter(|c| matches!(c.status, Status::Fail | Status::Warn | Status::Unknown))
        {
            let verb = match c.status {
                Status::Fail => "fails",
                Status::Warn => "warns",
                _ => "is unknown",
            };
            self.problems
                .push(format!("{}: {} {verb}: {}", h.host, c.id, c.summary));
            self.short.push(format!("{}: {}", h.host, c.id));
            self.findings.push(Finding::Check {
                host: Some(h.host.clone()),
                id: c.id,
                status: c.status,
            });
        }
        // An adapter off the HCA that no failing check of its host explains.
        if !h.checks.iter().any(|c| c.status == Status::Fail) {
            self.adapters_off_the_hca(h);
        }
        // Whatever else keeps the host from `ok` (a record that did not parse, a listing
        // that failed), as the report says it.
        if self.problems.len() == listed && h.status != HostStatus::Ok {
            let status = pvrdma_engine::diagnose::status_name(h.status);
            let why: Vec<&str> = h
                .record_errors
                .iter()
                .chain(&h.adapters_error)
                .chain(&h.vms_error)
                .map(String::as_str)
                .chain(h.incomplete_outputs.iter().map(|o| o.reason.as_str()))
                .collect();
            self.problems.push(format!("{}: {status}: {}", h.host, why.join("; ")));
            self.short.push(format!("{}: {status}", h.host));
        }
    }

    /// Every adapter of the host that is not on the HCA, with its reasons.
    fn adapters_off_the_hca(&mut self, h: &pvrdma_engine::diagnose::HostDiagnosis) {
        for vm in &h.vms {
            for a in vm.adapters.iter().filter(|a| a.verdict != Verdict::Hca) {
                let verdict = verdict_name(a.verdict);
                self.problems.push(format!(
                    "{}: VM {} adapter {} is {verdict}: {}",
                    h.host,
                    vm.name,
                    a.index,
                    a.reasons.join("; ")
                ));
                self.short
                    .push(format!("{}: VM {} adapter {} {verdict}", h.host, vm.name, a.index));
                self.findings.push(Finding::Adapter {
                    host: h.host.clone(),
                    vm: vm.name.clone(),
                    index: a.index,
                    verdict: a.verdict,
                });
            }
        }
    }
}

/// The scenario's capture files read back as `analyze` reads a folder.
fn diagnose_offline(hosts: &[SimHost]) -> anyhow::Result<Diagnosis> {
    let dir = tempfile::Builder::new().prefix("pvrdma-doctor-demo-").tempdir()?;
    for h in hosts {
        let host_dir = dir.path().join(&h.name);
        std::fs::create_dir_all(&host_dir)?;
        for (name, content) in &h.files {
            std::fs::write(host_dir.join(name), content)?;
        }
    }
    let captures = crate::collect::replay::read_dir(dir.path(), pvrdma_engine::capture::CaptureSource::Directory)?;
    Ok(pvrdma_engine::diagnose::diagnose(&captures))
}

/// What must come out as planted: a diagnosed host (ok or with problems: `--probe` may
/// add problems the captures alone do not show) or exactly the status that stopped it.
fn class(status: HostStatus) -> &'static str {
    match status {
        HostStatus::Ok | HostStatus::Problems => "diagnosed",
        other => pvrdma_engine::diagnose::status_name(other),
    }
}

impl Planted {
    /// The lines printed before the run.
    pub fn intro(&self) -> String {
        let mut out = crate::terminal::stderr_message(
            "demo: ",
            &format!(
                "{} simulated ESXi {} ({}, scenario {}) on 127.0.0.1 over real SSH; no \
                 real host is contacted. {}",
                self.hosts.len(),
                if self.hosts.len() == 1 {
                    "host answers"
                } else {
                    "hosts answer"
                },
                pvrdma_nodeset::fold(&self.hosts),
                self.scenario,
                if self.problems.is_empty() {
                    "The scenario plants no problem."
                } else {
                    "Problems planted on purpose, for the report to find:"
                }
            ),
        );
        // A large scenario lists its first problems; the report has them all.
        const SHOWN: usize = 12;
        for p in self.problems.iter().take(SHOWN) {
            out.push_str(&crate::terminal::stderr_message("  - ", p));
        }
        if self.problems.len() > SHOWN {
            let more = format!("… and {} more (see the report)", self.problems.len() - SHOWN);
            out.push_str(&crate::terminal::stderr_message("  - ", &more));
        }
        out.push('\n');
        out
    }

    /// How the live run differs from what the scenario plants (empty: as planted): every
    /// host diagnosed or stopped exactly as the captures say (not timed out, not refused
    /// unexpectedly), and every planted problem found.
    fn as_planned(&self, d: &Diagnosis) -> Vec<String> {
        let mut off: Vec<String> = d
            .hosts
            .iter()
            .filter_map(|h| {
                let want = self.expected.get(&h.host).copied();
                let got = class(h.status);
                (want != Some(got)).then(|| match want {
                    Some(want) => format!("{} is {got}, planted {want}", h.host),
                    None => format!("{} is not a host of the scenario", h.host),
                })
            })
            .collect();
        let reported: Vec<&str> = d.hosts.iter().map(|h| h.host.as_str()).collect();
        for f in &self.findings {
            match f {
                Finding::Check { host, id, status } => {
                    let checks = match host {
                        Some(host) if !reported.contains(&host.as_str()) => continue,
                        Some(host) => d.hosts.iter().find(|h| &h.host == host).map(|h| &h.checks),
                        None => Some(&d.fleet_checks),
                    };
                    let got = checks.and_then(|cs| cs.iter().find(|c| c.id == *id)).map(|c| c.status);
                    if got != Some(*status) {
                        let on = host.as_deref().unwrap_or("across hosts");
                        let verb = match status {
                            Status::Fail => "fail",
                            Status::Warn => "warn",
                            _ => "come out unknown",
                        };
                        off.push(format!("{on}: {id} did not {verb}"));
                    }
                }
                Finding::Adapter {
                    host,
                    vm,
                    index,
                    verdict,
                } => {
                    let got = d
                        .hosts
                        .iter()
                        .filter(|h| &h.host == host)
                        .flat_map(|h| &h.vms)
                        .filter(|v| &v.name == vm)
                        .flat_map(|v| &v.adapters)
                        .find(|a| a.index == *index)
                        .map(|a| a.verdict);
                    if reported.contains(&host.as_str()) && got != Some(*verdict) {
                        off.push(format!(
                            "{host}: VM {vm} adapter {index} is not {}",
                            verdict_name(*verdict)
                        ));
                    }
                }
                Finding::Probe { host, status } => {
                    let found = d
                        .probes
                        .iter()
                        .any(|p| (&p.from == host || &p.to == host) && p.status == *status);
                    if reported.contains(&host.as_str()) && !found {
                        off.push(format!("{host}: no probe pair came out {}", status.label()));
                    }
                }
            }
        }
        off
    }

    /// The demo's exit code: 0 when the run came out as planted (its problems are the
    /// point of the demo; the report's own code, what a real run would return, is in the
    /// closing line and in the JSON `exit_code`), else the report's code (at least 1).
    pub fn exit_code(&self, d: &Diagnosis) -> u8 {
        if self.as_planned(d).is_empty() {
            pvrdma_engine::exit::HEALTHY
        } else {
            d.exit_code().max(pvrdma_engine::exit::PROBLEMS)
        }
    }

    /// The lines printed after the report.
    pub fn outro(&self, d: &Diagnosis) -> String {
        let report_code = d.exit_code();
        let off = self.as_planned(d);
        let text = if off.is_empty() {
            const NAMED: usize = 12;
            let found = match self.short.len() {
                0 => "no problem, as the scenario plants none".to_string(),
                n if n > NAMED => format!(
                    "the {n} planted problems ({}; and {} more)",
                    self.short.iter().take(NAMED).cloned().collect::<Vec<_>>().join("; "),
                    n - NAMED
                ),
                _ => format!("the planted problems ({})", self.short.join("; ")),
            };
            format!(
                "the report above is of simulated hosts on 127.0.0.1. It found {found}, so the \
                 demo worked and exits 0; on real hosts this report would exit {report_code} ({}).",
                exit_meaning(report_code)
            )
        } else {
            format!(
                "the report above is of simulated hosts on 127.0.0.1, and it did not come out as \
                 the scenario plants it: {}. The demo exits {} ({}).",
                off.join("; "),
                self.exit_code(d),
                exit_meaning(self.exit_code(d))
            )
        };
        format!("\n{}", crate::terminal::stderr_message("demo: ", &text))
    }
}

/// The documented meaning of an exit code, in a few words.
fn exit_meaning(code: u8) -> &'static str {
    match code {
        pvrdma_engine::exit::HEALTHY => "healthy",
        pvrdma_engine::exit::PROBLEMS => "problems found",
        pvrdma_engine::exit::USAGE => "usage or internal error",
        pvrdma_engine::exit::INCOMPLETE => "something could not be diagnosed",
        pvrdma_engine::exit::CONFIGURATION_ONLY => "configuration only, transport not observed",
        _ => "interrupted",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> DemoOptions {
        DemoOptions {
            scenario: Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)),
            ..DemoOptions::default()
        }
    }

    #[test]
    fn the_planted_problems_come_from_the_scenario() {
        let built_in = planted(&DemoOptions::default(), false).expect("built-in scenario");
        assert_eq!(built_in.scenario, EMBEDDED_SCENARIO);
        assert_eq!(built_in.short, ["esx02: firewall-pvrdma", "esx03: SSH port closed"]);
        let intro = built_in.intro();
        assert!(
            intro.starts_with("demo: 3 simulated ESXi hosts answer (esx[01-03]"),
            "{intro}"
        );
        assert!(intro.contains("127.0.0.1"), "{intro}");

        let healthy = planted(&sample("healthy-cluster"), false).expect("healthy-cluster");
        assert!(healthy.problems.is_empty(), "{:?}", healthy.problems);
        assert!(healthy.intro().contains("The scenario plants no problem."));

        let other = planted(&sample("dvs-two-uplinks"), false).expect("dvs-two-uplinks");
        assert_eq!(other.scenario, "dvs-two-uplinks");
        assert!(
            other.short.iter().any(|s| s == "esx01: dvs-single-uplink"),
            "{:?}",
            other.short
        );

        let probe = planted(&DemoOptions::default(), true).expect("probe scenario");
        assert_eq!(
            probe.short,
            ["esx03: switch port MTU 1500", "esx04: switch port in VLAN 30"]
        );
    }

    #[test]
    fn the_demo_exits_0_only_when_it_came_out_as_planted() {
        let opts = DemoOptions::default();
        let plan = planted(&opts, false).expect("built-in scenario");
        let hosts = load_scenario(None).expect("scenario");
        let as_planted = diagnose_offline(&hosts).expect("diagnosis");
        assert_eq!(as_planted.exit_code(), pvrdma_engine::exit::PROBLEMS);
        assert_eq!(plan.exit_code(&as_planted), pvrdma_engine::exit::HEALTHY);
        let outro = plan.outro(&as_planted).replace("\n    ", " ");
        assert!(outro.contains("so the demo worked and exits 0"), "{outro}");

        // A host that timed out instead of being diagnosed.
        let mut off = as_planted.clone();
        if let Some(h) = off.hosts.first_mut() {
            h.status = HostStatus::Unreachable;
        }
        assert_ne!(plan.exit_code(&off), pvrdma_engine::exit::HEALTHY);
        let outro = plan.outro(&off).replace("\n    ", " ");
        assert!(outro.contains("esx01 is unreachable, planted diagnosed"), "{outro}");

        // The planted check did not fail.
        let mut missed = as_planted.clone();
        for h in &mut missed.hosts {
            for c in &mut h.checks {
                c.status = Status::Pass;
            }
        }
        assert_ne!(plan.exit_code(&missed), pvrdma_engine::exit::HEALTHY);
        let outro = plan.outro(&missed).replace("\n    ", " ");
        assert!(outro.contains("esx02: firewall-pvrdma did not fail"), "{outro}");
    }
}
