//! Each subcommand's options: the groups it composes (see [`super::groups`]) and its own.
//! A subcommand has exactly the options it uses; clap refuses any other, naming it.
use super::groups::{BaselineArgs, BundleArgs, HostArgs, LayoutArgs, ProbeArgs, ReportArgs, RunArgs, SshArgs};
use super::positions::ArgPositions;
use super::values::{parse_count, parse_duration, parse_interval};
use super::vcenter::VcenterArgs;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// `check`, and the default job (`pvrdma-doctor esx01`): diagnose hosts over SSH once.
#[derive(Debug, Clone, Args)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    pub(crate) hosts: HostArgs,
    #[command(flatten)]
    pub(crate) vcenter: VcenterArgs,
    /// Read the hosts' and their VMs' configuration through vCenter's vSphere API instead
    /// of logging in over SSH, for hosts whose SSH service stays off. The configuration
    /// checks are judged; the adapters' transport, seen only over SSH, is `unknown` with
    /// what the configuration predicts, and so is lossless-network.
    #[arg(
        long,
        requires = "vcenter",
        conflicts_with = "probe",
        help_heading = "Hosts from vCenter"
    )]
    pub(crate) no_ssh: bool,
    #[command(flatten)]
    pub(crate) ssh: SshArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    pub(crate) probe: ProbeArgs,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
    #[command(flatten)]
    pub(crate) baseline: BaselineArgs,
    #[command(flatten)]
    pub(crate) bundle: BundleArgs,
    #[command(flatten)]
    pub(crate) verbose: Verbose,
    /// Where each option and host stood on the command line.
    #[arg(skip)]
    pub(crate) positions: ArgPositions,
}

/// `-v`, for the subcommands that log in to hosts.
#[derive(Debug, Clone, Args)]
pub(crate) struct Verbose {
    /// Show each command sent (host, duration, exit status) on stderr; twice (-vv) also
    /// the SSH negotiation. RUST_LOG overrides the filter.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
}

/// `analyze PATH`.
#[derive(Debug, Clone, Args)]
pub(crate) struct AnalyzeArgs {
    /// The directory or bundle to analyse.
    #[arg(value_name = "PATH")]
    pub(crate) path: PathBuf,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
    #[command(flatten)]
    pub(crate) baseline: BaselineArgs,
}

/// `demo`.
#[derive(Debug, Clone, Args)]
pub(crate) struct DemoArgs {
    /// Diagnose only these hosts of the scenario (default: all of them).
    #[arg(value_name = "HOST")]
    pub(crate) hosts: Vec<String>,
    /// A scenario directory (<host>/<command-id>.txt) to serve instead of the built-in one.
    #[arg(long, value_name = "DIR")]
    pub(crate) scenario: Option<PathBuf>,
    /// Simulated latency of every command.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    pub(crate) latency: Duration,
    /// Serve the simulated hosts as a Prometheus exporter (see `serve`) instead of
    /// diagnosing them once: the report, bundle and baseline options do not apply.
    #[arg(long, conflicts_with_all = [
        "format", "output_file", "color", "only_problems", "no_fold", "warning", "critical",
        "unreachable_state", "bundle", "baseline", "no_progress",
    ])]
    pub(crate) serve: bool,
    /// With --serve: the address to listen on (default 127.0.0.1:39155).
    #[arg(long, value_name = "ADDR", requires = "serve")]
    pub(crate) listen: Option<String>,
    /// With --serve: serve only the simulated hosts, over SSH on 127.0.0.1, and write
    /// into DIR what reaches them (ssh_config, known_hosts, id_demo) and an exporter.yml
    /// for `serve --config`: the exporter then runs in its own process, in front of them.
    #[arg(long, value_name = "DIR", requires = "serve", conflicts_with_all = ["listen", "web_config"])]
    pub(crate) ssh_dir: Option<PathBuf>,
    /// With --serve: TLS and basic authentication, in the format of Prometheus'
    /// exporter-toolkit.
    #[arg(long = "web.config.file", value_name = "FILE", requires = "serve")]
    pub(crate) web_config: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    pub(crate) probe: ProbeArgs,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
    #[command(flatten)]
    pub(crate) baseline: BaselineArgs,
    #[command(flatten)]
    pub(crate) bundle: BundleArgs,
    #[command(flatten)]
    pub(crate) verbose: Verbose,
}

/// `serve`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ServeArgs {
    /// The exporter's YAML configuration: modules, allowed targets, groups (also groups
    /// that follow a vCenter cluster, under `vcenters:`), limits (the SSH login, timeouts
    /// and probe of each module are set there, not on the command line).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: PathBuf,
    /// The address to listen on (default: the configuration's `listen`, else
    /// 127.0.0.1:39155).
    #[arg(long, alias = "web.listen-address", value_name = "ADDR")]
    pub(crate) listen: Option<String>,
    /// TLS and basic authentication, in the format of Prometheus' exporter-toolkit
    /// (`tls_server_config`, `basic_auth_users` with bcrypt hashes).
    #[arg(long = "web.config.file", value_name = "FILE")]
    pub(crate) web_config: Option<PathBuf>,
    /// Check the configuration (and the web configuration) and exit.
    #[arg(long)]
    pub(crate) check_config: bool,
    #[command(flatten)]
    pub(crate) verbose: Verbose,
}

/// What `watch` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum WatchFormat {
    /// The human report first, then one timestamped line per change.
    Human,
    /// JSON Lines, one event per line: the first report, then each change, a heartbeat
    /// per round and the reason it stopped (for log shippers).
    Json,
}

/// `watch`: rerun and report the changes. It writes to stdout as it goes; to keep a log,
/// append it with the shell (`>> watch.log`): there is no `--output`, which writes a
/// report whole, and no `--bundle`, which captures one run.
#[derive(Debug, Clone, Args)]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    pub(crate) hosts: HostArgs,
    #[command(flatten)]
    pub(crate) vcenter: VcenterArgs,
    /// Read the hosts' and their VMs' configuration through vCenter's vSphere API every
    /// round instead of logging in over SSH (for hosts whose SSH service stays off): the
    /// configuration checks are judged, the adapters' transport is not observed.
    #[arg(long, requires = "vcenter", conflicts_with_all = ["probe", "demo"], help_heading = "Hosts from vCenter")]
    pub(crate) no_ssh: bool,
    /// Time from the start of one round to the start of the next; a round that takes
    /// longer starts the next at once (rounds never overlap).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_interval)]
    pub(crate) interval: Duration,
    /// Exit at the first change, with the exit code that round's report deserves (like
    /// `watch -g`).
    #[arg(long)]
    pub(crate) until_change: bool,
    /// Stop after N rounds (the exit code is then the last round's).
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub(crate) count: Option<u64>,
    /// Watch the demo's simulated hosts instead of real ones (HOST then picks among them;
    /// the SSH login options do not apply).
    #[arg(long, conflicts_with_all = [
        "ssh_config", "user", "identity", "port", "jump", "options", "accept_new",
        "insecure_skip_host_key_check", "ask_password", "hosts_file", "vcenter",
    ])]
    pub(crate) demo: bool,
    /// With --demo: serve this scenario directory (<host>/<command-id>.txt), read again at
    /// the start of every round, so editing a file there changes what the next round sees.
    #[arg(long, value_name = "DIR", requires = "demo")]
    pub(crate) scenario: Option<PathBuf>,
    /// With --demo: simulated latency of every command.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration, requires = "demo")]
    pub(crate) latency: Duration,
    /// Output format.
    #[arg(
        long,
        value_enum,
        value_name = "FORMAT",
        default_value = "human",
        help_heading = "Report"
    )]
    pub(crate) format: WatchFormat,
    #[command(flatten)]
    pub(crate) layout: LayoutArgs,
    #[command(flatten)]
    pub(crate) baseline: BaselineArgs,
    #[command(flatten)]
    pub(crate) ssh: SshArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    pub(crate) probe: ProbeArgs,
    #[command(flatten)]
    pub(crate) verbose: Verbose,
    /// Where each option and host stood on the command line.
    #[arg(skip)]
    pub(crate) positions: ArgPositions,
}
