//! The one front-end set-up: the command line and the terminal resolved into what a job
//! runs with, before any I/O. Every front end (the one-shot run, `analyze`, `watch`,
//! `demo`, `serve`) starts from here, so an option reaches its job through one place, and
//! a test can see that it does (`option_effects`).
use crate::cli::{
    BaselineArgs, BundleArgs, Cli, ColorChoice, Command, Generate, HostArgs, HostsFormat, LayoutArgs, ReportArgs,
    RunArgs, SshArgs, VcenterArgs, WatchFormat,
};
use crate::live::LiveOptions;
use crate::source::{HostList, HostSource, LiveSetup, VcenterSource, Via};
use crate::terminal::Terminal;
use crate::vcenter::VcenterSetup;
use pvrdma_engine::report::{self, Format, HumanOptions};
use std::path::PathBuf;
use std::time::Duration;

/// One invocation, resolved.
#[derive(Debug)]
pub(crate) struct Setup {
    /// `-v`'s count.
    pub(crate) verbose: u8,
    pub(crate) job: Job,
}

/// What to do.
#[derive(Debug)]
pub(crate) enum Job {
    /// `--generate KIND`.
    Generate { kind: Generate, output: Option<PathBuf> },
    /// `--list-checks`.
    ListChecks {
        json: bool,
        width: usize,
        output: Option<PathBuf>,
    },
    /// The default job, `check` and `analyze PATH`: diagnose the hosts of a source once.
    OneShot(OneShot),
    /// `watch`.
    Watch(WatchSetup),
    /// `demo`.
    Demo {
        demo: crate::demo::DemoOptions,
        live: LiveOptions,
        /// `--serve`: where to listen, the web configuration, and `--ssh-dir` (the
        /// hosts alone, for an exporter of its own).
        serve: Option<(Option<String>, Option<PathBuf>, Option<PathBuf>)>,
        report: ReportSetup,
        bundle: BundleArgs,
        baseline: Option<PathBuf>,
    },
    /// `hosts`: the hosts vCenter has for a selection.
    Hosts { vcenter: VcenterSource, json: bool },
    /// `serve`.
    Serve {
        config: PathBuf,
        listen: Option<String>,
        web_config: Option<PathBuf>,
        check_only: bool,
    },
}

/// The one-shot run: where the hosts come from, and what becomes of them.
#[derive(Debug)]
pub(crate) struct OneShot {
    pub(crate) source: HostSource,
    /// How the hosts are logged in to over SSH (a capture read back has no use for it).
    pub(crate) live: LiveSetup,
    pub(crate) report: ReportSetup,
    /// `--bundle` (`analyze` writes none).
    pub(crate) bundle: BundleArgs,
    pub(crate) baseline: Option<PathBuf>,
    /// The hosts came without `check`, so a misspelt subcommand may be among them.
    pub(crate) may_be_typo: bool,
}

/// One report: its format, where it goes and how each format is shaped.
#[derive(Debug, Clone)]
pub(crate) struct ReportSetup {
    pub(crate) format: Format,
    pub(crate) output: Option<PathBuf>,
    pub(crate) human: HumanOptions,
    pub(crate) plugin: PluginSetup,
    /// A live run's options, from which the report says how to send an output that did
    /// not parse (the redacted bundle command for that host).
    pub(crate) evidence: Option<crate::evidence::Evidence>,
    /// A VM-first run (`--vm`): the VMs the report is narrowed to.
    pub(crate) vms: Option<pvrdma_engine::capture::VmChoice>,
    /// What a plan (`--format ansible`, `powercli`) says it came from and addresses.
    pub(crate) plan: PlanSource,
}

/// Where a plan's facts came from and which vCenter it addresses (`None`: each host's own
/// vSphere API).
#[derive(Debug, Clone)]
pub(crate) struct PlanSource {
    pub(crate) vcenter: Option<String>,
    pub(crate) source: String,
}

impl Default for PlanSource {
    fn default() -> Self {
        PlanSource {
            vcenter: None,
            source: "the hosts, read over SSH".to_string(),
        }
    }
}

/// `-w`, `-c`, `--unreachable-state` (the run's clock is the plugin session's).
#[derive(Debug, Clone)]
pub(crate) struct PluginSetup {
    pub(crate) warning: Option<report::nagios::Range>,
    pub(crate) critical: Option<report::nagios::Range>,
    pub(crate) unreachable: report::nagios::State,
}

/// `watch`.
#[derive(Debug)]
pub(crate) struct WatchSetup {
    /// The hosts named, the demo's simulated ones (`--demo`), or vCenter's.
    pub(crate) source: HostSource,
    pub(crate) live: LiveSetup,
    pub(crate) interval: Duration,
    pub(crate) until_change: bool,
    pub(crate) count: Option<u64>,
    /// `--format json`: JSON Lines events.
    pub(crate) json: bool,
    pub(crate) human: HumanOptions,
    pub(crate) baseline: Option<PathBuf>,
}

impl Setup {
    /// Resolves the command line on this terminal.
    pub(crate) fn new(cli: Cli, terminal: &Terminal) -> anyhow::Result<Setup> {
        let verbose = cli.verbose();
        let job = if let Some(kind) = cli.generate {
            Job::Generate {
                kind,
                output: cli.check.report.output_file,
            }
        } else if cli.list_checks {
            Job::ListChecks {
                json: cli.check.report.format() == Format::Json,
                width: terminal.width,
                output: cli.check.report.output_file,
            }
        } else {
            match cli.command {
                None => check(cli.check, terminal, true)?,
                Some(Command::Check(args)) => check(args, terminal, false)?,
                Some(Command::Analyze(a)) => analyze(a, terminal),
                Some(Command::Watch(a)) => watch(a, terminal)?,
                Some(Command::Demo(a)) => demo(a, terminal)?,
                Some(Command::Hosts(a)) => Job::Hosts {
                    vcenter: VcenterSource {
                        setup: vcenter_setup(&a.vcenter, &HostArgs::default())?.ok_or_else(|| {
                            anyhow::anyhow!(
                                "`hosts` reads the hosts from vCenter: give --vcenter URL and --vcenter-user USER"
                            )
                        })?,
                        via: Via::Ssh,
                    },
                    json: a.format == HostsFormat::Json,
                },
                Some(Command::Serve(a)) => Job::Serve {
                    config: a.config,
                    listen: a.listen,
                    web_config: a.web_config,
                    check_only: a.check_config,
                },
            }
        };
        Ok(Setup { verbose, job })
    }
}

/// The one-shot run over SSH: the hosts named, or vCenter's.
fn check(args: crate::cli::CheckArgs, terminal: &Terminal, may_be_typo: bool) -> anyhow::Result<Job> {
    let via = if args.no_ssh { Via::Api } else { Via::Ssh };
    let vcenter = vcenter_setup(&args.vcenter, &args.hosts)?.map(|setup| VcenterSource { setup, via });
    anyhow::ensure!(
        !args.hosts.hosts.is_empty() || args.hosts.hosts_file.is_some() || vcenter.is_some(),
        "no hosts given. Try `pvrdma-doctor esx01 esx02`, `pvrdma-doctor --vcenter vc01 --cluster HPC`, `pvrdma-doctor analyze DIR`, or `pvrdma-doctor demo`"
    );
    let (live, hosts) = live_setup(
        &args.hosts,
        Some(&args.ssh),
        &args.run,
        &args.positions,
        terminal,
        args.probe.options(),
    )?;
    let mut report = report_setup(&args.report, terminal);
    report.evidence = Some(crate::evidence::Evidence {
        ssh: args.ssh.clone(),
        hosts: args.hosts.clone(),
        positions: args.positions.clone(),
    });
    Ok(Job::OneShot(OneShot {
        source: vcenter.map_or(HostSource::List(hosts), HostSource::Vcenter),
        live,
        report,
        bundle: args.bundle,
        baseline: baseline(args.baseline),
        may_be_typo,
    }))
}

/// `analyze PATH`: the one-shot run over a capture read back.
fn analyze(a: crate::cli::AnalyzeArgs, terminal: &Terminal) -> Job {
    let mut report = report_setup(&a.report, terminal);
    // An output of a capture folder or a vm-support bundle that did not parse is sent as
    // a live run says: a redacted bundle of that host. A pvrdma-doctor bundle is one, and
    // its analysis is the report of its run.
    if !crate::offline::is_support_bundle(&a.path) {
        report.evidence = Some(crate::evidence::Evidence::default());
    }
    Job::OneShot(OneShot {
        source: HostSource::Capture(a.path),
        live: LiveSetup::default(),
        report,
        bundle: BundleArgs::default(),
        baseline: baseline(a.baseline),
        may_be_typo: false,
    })
}

/// `watch`: the hosts named, the demo's, or vCenter's, every `--interval`.
fn watch(a: crate::cli::WatchArgs, terminal: &Terminal) -> anyhow::Result<Job> {
    let positions = a.positions.clone();
    let (live, hosts) = live_setup(&a.hosts, Some(&a.ssh), &a.run, &positions, terminal, a.probe.options())?;
    let via = if a.no_ssh { Via::Api } else { Via::Ssh };
    let source = match vcenter_setup(&a.vcenter, &a.hosts)? {
        Some(setup) => HostSource::Vcenter(VcenterSource { setup, via }),
        None if a.demo => HostSource::Demo {
            demo: crate::demo::DemoOptions {
                scenario: a.scenario.clone(),
                hosts: None,
                latency: a.latency,
            },
            hosts,
        },
        None => HostSource::List(hosts),
    };
    Ok(Job::Watch(WatchSetup {
        source,
        live,
        interval: a.interval,
        until_change: a.until_change,
        count: a.count,
        json: a.format == WatchFormat::Json,
        human: human_options(&a.layout, terminal, false),
        baseline: baseline(a.baseline),
    }))
}

/// `demo`: the simulated hosts diagnosed once, or served (`--serve`).
fn demo(a: crate::cli::DemoArgs, terminal: &Terminal) -> anyhow::Result<Job> {
    anyhow::ensure!(
        !a.serve || a.hosts.is_empty(),
        "`demo --serve` serves every simulated host (a probe names one); {:?} would be ignored",
        a.hosts
    );
    let chosen = HostArgs {
        hosts: a.hosts.clone(),
        hosts_file: None,
    };
    let positions = crate::cli::ArgPositions::default();
    let (live, chosen) = live_setup(&chosen, None, &a.run, &positions, terminal, a.probe.options())?;
    let mut live = live.options;
    chosen.aim(&mut live);
    let serve = a
        .serve
        .then(|| (a.listen.clone(), a.web_config.clone(), a.ssh_dir.clone()));
    if serve.is_some() {
        live.progress = false;
    }
    Ok(Job::Demo {
        demo: crate::demo::DemoOptions {
            scenario: a.scenario,
            hosts: None,
            latency: a.latency,
        },
        live,
        serve,
        report: report_setup(&a.report, terminal),
        bundle: a.bundle,
        baseline: baseline(a.baseline),
    })
}

fn baseline(args: BaselineArgs) -> Option<PathBuf> {
    args.baseline
}

/// The report's settings (`--color auto` looks at stdout, which a report written to
/// `--output` does not go to).
fn report_setup(args: &ReportArgs, terminal: &Terminal) -> ReportSetup {
    let to_file = args.output_file.is_some();
    ReportSetup {
        format: args.format(),
        output: args.output_file.clone(),
        human: human_options(&args.layout, terminal, to_file),
        plugin: PluginSetup {
            warning: args.plugin.warning.clone(),
            critical: args.plugin.critical.clone(),
            unreachable: args.plugin.unreachable_state.into(),
        },
        evidence: None,
        vms: None,
        plan: PlanSource::default(),
    }
}

/// The human layout: colour (only on a terminal, never when NO_COLOR is set, unless
/// `--color always`), the terminal's width, `--only-problems`, `--no-fold`.
fn human_options(args: &LayoutArgs, terminal: &Terminal, to_file: bool) -> HumanOptions {
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => !to_file && !terminal.no_color && terminal.stdout,
    };
    HumanOptions {
        color,
        width: terminal.width,
        only_problems: args.only_problems,
        fold: !args.no_fold,
    }
}

/// The live-collection settings from the command line, and the hosts it names (`ssh`:
/// `None` for the demo, which logs in with its own).
fn live_setup(
    hosts: &HostArgs,
    ssh: Option<&SshArgs>,
    run: &RunArgs,
    positions: &crate::cli::ArgPositions,
    terminal: &Terminal,
    probe: Option<crate::probe::ProbeOptions>,
) -> anyhow::Result<(LiveSetup, HostList)> {
    let list = HostList {
        targets: hosts.hosts.clone(),
        target_positions: positions.hosts.clone(),
        hosts_file_position: positions.hosts_file.unwrap_or(usize::MAX),
        hosts_file: hosts.hosts_file.clone(),
    };
    let mut options = LiveOptions {
        system_ssh_config: crate::live::system_ssh_config_path(),
        parallel: run.parallel,
        connect_timeout: run.connect_timeout,
        command_timeout: run.command_timeout,
        host_output_budget: run.host_output_budget,
        total_output_budget: run.total_output_budget,
        run_timeout: run.timeout,
        progress: !run.no_progress && terminal.stderr,
        probe,
        ..LiveOptions::default()
    };
    let Some(ssh) = ssh else {
        let live = LiveSetup {
            options,
            ask_password: false,
        };
        return Ok((live, list));
    };
    options.ssh_config = ssh.ssh_config.clone();
    options.ssh_options = ssh_options(ssh, positions)?;
    options.login_user = ssh.user.clone();
    options.identity_files = ssh.identity.clone();
    options.accept_new = ssh.accept_new;
    options.insecure_skip_host_key_check = ssh.insecure_skip_host_key_check;
    let live = LiveSetup {
        options,
        ask_password: ssh.ask_password,
    };
    Ok((live, list))
}

/// `--vcenter` and what it selects, resolved; `None` without it. The hosts come from the
/// list or from vCenter, never both: a mix would leave unclear which one a VM-first run
/// narrows.
fn vcenter_setup(args: &VcenterArgs, hosts: &HostArgs) -> anyhow::Result<Option<VcenterSetup>> {
    let Some(endpoint) = args.vcenter.clone() else {
        return Ok(None);
    };
    anyhow::ensure!(
        hosts.hosts.is_empty() && hosts.hosts_file.is_none(),
        "--vcenter reads the hosts from vCenter: give HOST arguments or --hosts-file, or --vcenter, not both"
    );
    let user = args.user()?.ok_or_else(|| {
        anyhow::anyhow!("--vcenter needs the account: --vcenter-user USER (or PVRDMA_DOCTOR_VCENTER_USER)")
    })?;
    let trust = match (&args.vcenter_thumbprint, &args.vcenter_ca) {
        (Some(t), _) => pvrdma_vsphere::Trust::Pinned(*t),
        (None, Some(ca)) => pvrdma_vsphere::Trust::Ca(ca.clone()),
        (None, None) => pvrdma_vsphere::Trust::System,
    };
    Ok(Some(VcenterSetup {
        endpoint,
        trust,
        user,
        password_file: args.vcenter_password_file.clone(),
        selection: pvrdma_vsphere::Selection {
            clusters: args.cluster.clone(),
            vms: args.vm.clone(),
            include_maintenance: args.include_maintenance,
            include_disconnected: args.include_disconnected,
        },
        timeout: args.vcenter_timeout,
    }))
}

/// `-l`, `-p`, `-J` and `-o` in the order given (ssh takes the first value given).
fn ssh_options(
    args: &SshArgs,
    pos: &crate::cli::ArgPositions,
) -> anyhow::Result<pvrdma_ssh_config::CommandLineOptions> {
    pvrdma_ssh_config::CommandLineOptions::ordered(pos.ssh_options(args)).map_err(|e| anyhow::anyhow!("{e}"))
}
