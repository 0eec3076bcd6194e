//! The option groups the subcommands compose: each is one `#[command(flatten)]` struct,
//! listed under its own heading in `--help`, and given only to the subcommands that use
//! every option in it.
use super::values::{parse_duration, parse_parallel, parse_sample, parse_size};
use clap::{Args, ValueEnum};
use pvrdma_engine::report::Format;
use std::path::PathBuf;
use std::time::Duration;

/// The hosts to diagnose.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct HostArgs {
    /// ESXi hosts as ClusterShell node sets, read as `nodeset -e` reads them: `esx01`,
    /// `esx[01-16]`, `esx[1-9/2]`, `esx01,esx02`, `esx[01-16]!esx07` (also `&`, `^`), groups
    /// from ClusterShell's groups.conf (`@esxi`, `@source:group`; a leading `@` is always
    /// a group), `root@esx01`, `root@@esxi`, `esx01:2222`, `[fe80::1]:22`, or `-` to read
    /// hosts from stdin.
    #[arg(value_name = "HOST")]
    pub(crate) hosts: Vec<String>,
    /// Read hosts from FILE, one node set per line (`#` starts a comment); `-` reads stdin.
    #[arg(long, value_name = "FILE", help_heading = "Hosts")]
    pub(crate) hosts_file: Option<PathBuf>,
}

/// How to log in to the hosts: OpenSSH's options, read as ssh reads them.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "SSH login")]
pub(crate) struct SshArgs {
    /// Use only this ssh_config file, instead of ~/.ssh/config and /etc/ssh/ssh_config (like `ssh -F`).
    #[arg(short = 'F', long = "ssh-config", value_name = "FILE")]
    pub(crate) ssh_config: Option<PathBuf>,
    /// Log in as USER (default: the ssh_config `User`, else root; of -l, -o User and a
    /// `user@host` argument, the first given wins, as with ssh).
    #[arg(short = 'l', long = "user", value_name = "USER")]
    pub(crate) user: Option<String>,
    /// Private key to try first (repeatable); ECDSA or RSA: ESXi refuses ed25519 keys. A file
    /// that cannot be read stops the run.
    #[arg(short = 'i', long = "identity", value_name = "FILE")]
    pub(crate) identity: Vec<PathBuf>,
    /// Connect to this port, a number or a service name (like `ssh -p`; of -p, -o Port
    /// and a `host:port` argument, the first given wins).
    #[arg(short = 'p', long = "port", value_name = "PORT")]
    pub(crate) port: Option<String>,
    /// Go through these jump hosts, comma-separated `[user@]host[:port]` (like `ssh -J`;
    /// `none` turns a configured ProxyJump off).
    #[arg(short = 'J', long = "jump", value_name = "JUMP")]
    pub(crate) jump: Option<String>,
    /// An ssh_config option for the hosts, before ~/.ssh/config and /etc/ssh/ssh_config
    /// (like `ssh -o`, repeatable): HostName, User, Port, IdentityFile, IdentitiesOnly,
    /// ProxyJump, ProxyCommand, UserKnownHostsFile, GlobalKnownHostsFile,
    /// StrictHostKeyChecking, HashKnownHosts, HostKeyAlias, ConnectTimeout.
    #[arg(short = 'o', long = "ssh-option", value_name = "KEY=VALUE")]
    pub(crate) options: Vec<String>,
    /// Record the key of a host not yet in known_hosts (like StrictHostKeyChecking=accept-new).
    #[arg(long)]
    pub(crate) accept_new: bool,
    /// DANGEROUS: do not verify host keys at all. Anyone on the path can impersonate the hosts.
    #[arg(long)]
    pub(crate) insecure_skip_host_key_check: bool,
    /// Prompt once (without echo) for a password used by all hosts; else PVRDMA_DOCTOR_PASSWORD is used when set.
    #[arg(long)]
    pub(crate) ask_password: bool,
}

/// How a collection runs: parallelism, time and memory limits, the progress bar.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Collection")]
pub(crate) struct RunArgs {
    /// How many hosts to diagnose at once.
    #[arg(long, value_name = "N", default_value_t = crate::live::DEFAULT_PARALLEL, value_parser = parse_parallel)]
    pub(crate) parallel: usize,
    /// Limit for TCP connect + key exchange + authentication, per host [default: 10s, or
    /// the host's ConnectTimeout in ssh_config when longer].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) connect_timeout: Option<Duration>,
    /// Limit for each command on a host.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub(crate) command_timeout: Duration,
    /// Most output kept per host, all commands together (on top of the 16 MiB per-command
    /// cap); past it outputs are cut, and what depends on them is `unknown`. Units: B, KiB,
    /// MiB, GiB.
    #[arg(long, value_name = "SIZE", default_value = "32MiB", value_parser = parse_size)]
    pub(crate) host_output_budget: usize,
    /// Most output kept for all hosts of the run together; past it outputs are cut and
    /// marked like the per-host budget. Keeps client memory bounded whatever the fleet
    /// size (64 hosts flooding every command stay under 1 GB).
    #[arg(long, value_name = "SIZE", default_value = "640MiB", value_parser = parse_size)]
    pub(crate) total_output_budget: usize,
    /// Limit for the whole run; hosts not finished by then are reported as timed out.
    /// With --format nagios the plugin ends on its own within it (default 30s).
    #[arg(short = 't', long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) timeout: Option<Duration>,
    /// Never draw the progress bar (it is only drawn when stderr is a terminal).
    #[arg(long)]
    pub(crate) no_progress: bool,
}

/// The path probe (off by default: it sends packets, though it changes nothing).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Path probe")]
pub(crate) struct ProbeArgs {
    /// After collection, ping every other host's PVRDMA vmknic from each host's own, plainly
    /// and with a don't-fragment packet filling the vmknic MTU (vmkping; see --list-checks).
    #[arg(long)]
    pub(crate) probe: bool,
    /// With --probe: each host pings K peers (the next K on a ring of the sorted host names,
    /// the same pairs every run) instead of all of them.
    #[arg(long, value_name = "K", requires = "probe", value_parser = parse_sample)]
    pub(crate) probe_sample: Option<usize>,
}

impl ProbeArgs {
    /// The probe settings, `None` without `--probe`.
    pub(crate) fn options(&self) -> Option<crate::probe::ProbeOptions> {
        self.probe.then_some(crate::probe::ProbeOptions {
            sample: self.probe_sample,
        })
    }
}

/// Comparison with an earlier report.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Report")]
pub(crate) struct BaselineArgs {
    /// Compare with an earlier `--format json` report: the report then lists every host
    /// status, check status, adapter verdict and probe status that changed.
    #[arg(long, value_name = "OLD.json")]
    pub(crate) baseline: Option<PathBuf>,
}

/// Support bundle options.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Support bundle")]
pub struct BundleArgs {
    /// Also write a support bundle (raw outputs, manifest, reports) to FILE, which must end
    /// in .tar.gz or .tgz.
    #[arg(long, value_name = "FILE")]
    pub bundle: Option<PathBuf>,
    /// Replace host names, addresses, MACs, VM names, UUIDs and datastore paths in the bundle
    /// (the mapping goes to FILE.redaction-map.json next to it).
    #[arg(long, requires = "bundle")]
    pub redact: bool,
    /// Overwrite an existing bundle file.
    #[arg(long, requires = "bundle")]
    pub force: bool,
}

/// `--format`: the engine's [`Format`] as the command line names and documents it (the
/// engine crate does not depend on clap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FormatArg {
    /// Per-host checklist, per-VM table and a summary line.
    Human,
    /// One JSON document (schema `pvrdma-doctor/report/v1`).
    Json,
    /// Prometheus text exposition format 0.0.4 (for node_exporter's textfile collector;
    /// see --output).
    Prometheus,
    /// A monitoring plugin's output for Nagios, Icinga, Naemon: one status line with
    /// performance data, one line per problem; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
    Nagios,
    /// The fixes of the failing checks as an Ansible playbook (community.vmware modules) for
    /// the vCenter the run read, else each host's own API: review it, then run it with
    /// ansible-playbook (credentials from VMWARE_USER and VMWARE_PASSWORD). Writing it
    /// changes nothing, and the exit code stays the diagnosis's: save it with --output
    Ansible,
    /// The same plan as a PowerCLI script (Connect-VIServer with your credential prompt;
    /// -WhatIf shows what it would change); save it with --output
    Powercli,
}

impl From<FormatArg> for Format {
    fn from(arg: FormatArg) -> Format {
        match arg {
            FormatArg::Human => Format::Human,
            FormatArg::Json => Format::Json,
            FormatArg::Prometheus => Format::Prometheus,
            FormatArg::Nagios => Format::Nagios,
            FormatArg::Ansible => Format::Ansible,
            FormatArg::Powercli => Format::Powercli,
        }
    }
}

/// One report, written once: its format and where it goes.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Report")]
pub(crate) struct ReportArgs {
    /// Report format.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "human")]
    pub(crate) format: FormatArg,
    /// Write the report to FILE instead of stdout, atomically: a temporary file in FILE's
    /// folder, synced, then renamed over FILE, so a reader (node_exporter's textfile
    /// collector) never sees half a report. The file is readable by all (mode 0644).
    #[arg(long = "output", value_name = "FILE")]
    pub(crate) output_file: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) layout: LayoutArgs,
    #[command(flatten)]
    pub(crate) plugin: PluginArgs,
}

impl ReportArgs {
    /// The report format, as the engine names it.
    pub(crate) fn format(&self) -> Format {
        self.format.into()
    }
}

/// How the human report is laid out.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Report")]
pub(crate) struct LayoutArgs {
    /// When to colour the human report (`auto`: on a terminal unless NO_COLOR is set).
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub(crate) color: ColorChoice,
    /// Show only hosts, checks and adapters with a problem, a warning or an unknown; the
    /// summary still counts everything.
    #[arg(long)]
    pub(crate) only_problems: bool,
    /// Print every host on its own instead of folding hosts with identical results into
    /// node sets (`esx[01-20]`, as `clush -b` does).
    #[arg(long)]
    pub(crate) no_fold: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// `--format nagios` (the monitoring-plugin mode) only.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Monitoring plugin (--format nagios)")]
pub(crate) struct PluginArgs {
    /// With --format nagios: the number of adapters in TCP fallback that makes the state
    /// WARNING, as a Monitoring Plugins range (`0` = any, `2` = more than 2, `@1:3`).
    #[arg(short = 'w', long = "warning", value_name = "RANGE")]
    pub(crate) warning: Option<pvrdma_engine::report::nagios::Range>,
    /// With --format nagios: the number that makes it CRITICAL. Without -w and -c any
    /// fallback is CRITICAL; a failing check or a blocked pair always is.
    #[arg(short = 'c', long = "critical", value_name = "RANGE")]
    pub(crate) critical: Option<pvrdma_engine::report::nagios::Range>,
    /// With --format nagios: the state of an unreachable host.
    #[arg(long, value_enum, value_name = "STATE", default_value = "unknown")]
    pub(crate) unreachable_state: StateArg,
}

/// A plugin state as `--unreachable-state` names it (the engine's `nagios::State`; the
/// engine does not depend on clap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum StateArg {
    Ok,
    Warning,
    Critical,
    Unknown,
}

impl From<StateArg> for pvrdma_engine::report::nagios::State {
    fn from(arg: StateArg) -> Self {
        use pvrdma_engine::report::nagios::State;
        match arg {
            StateArg::Ok => State::Ok,
            StateArg::Warning => State::Warning,
            StateArg::Critical => State::Critical,
            StateArg::Unknown => State::Unknown,
        }
    }
}
