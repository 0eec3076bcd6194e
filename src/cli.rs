//! Command-line interface: clap derive structs and their validation. No I/O here.
//!
//! Options may stand anywhere on the line, before or after the subcommand, as admins
//! expect from ssh, clush and ripgrep: [`command`] marks every option `global` (including
//! options other branches add later), so `pvrdma-doctor --no-progress analyze DIR` runs
//! `analyze`, never a login to a host called `analyze`. `check` is the explicit form of the
//! default job, for a host whose name is a subcommand (`pvrdma-doctor check demo`).
use crate::report::Format;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Tells, for every PVRDMA adapter on your ESXi hosts, whether its traffic goes through the
/// physical RDMA HCA or silently falls back to TCP, and why.
///
/// Only read-only commands are sent (see --list-checks). Options may stand anywhere. Exit
/// codes: 0 healthy, 1 a check fails or an adapter falls back to TCP, 2 usage or internal
/// error, 3 nothing failed but a host was unreachable or something is unknown, 130
/// interrupted by Ctrl-C.
#[derive(Debug, Parser)]
#[command(name = "pvrdma-doctor", version, max_term_width = 100)]
pub struct Cli {
    /// ESXi hosts as ClusterShell node sets, read as `nodeset -e` reads them: `esx01`,
    /// `esx[01-16]`, `esx[1-9/2]`, `esx01,esx02`, `esx[01-16]!esx07` (also `&`, `^`), groups
    /// from ClusterShell's groups.conf (`@esxi`, `@source:group`; a leading `@` is always
    /// a group), `root@esx01`, `root@@esxi`, `esx01:2222`, `[fe80::1]:22`, or `-` to read
    /// hosts from stdin.
    #[arg(value_name = "HOST")]
    pub(crate) hosts: Vec<String>,

    /// Print the read-only commands this tool sends (id, command, purpose) and the check
    /// ids, then exit (`-v` adds each batched query's exact command line, `--format json`
    /// gives a JSON document).
    #[arg(long)]
    pub(crate) list_checks: bool,

    /// Print a shell completion script, the man page or the JSON Schema of the report on
    /// stdout, then exit.
    #[arg(long, value_enum, value_name = "KIND")]
    pub(crate) generate: Option<Generate>,

    /// Show each command sent (host, duration, exit status) on stderr; twice (-vv) also
    /// the SSH negotiation. RUST_LOG overrides the filter.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,

    #[command(flatten)]
    pub(crate) live: LiveArgs,

    #[command(flatten)]
    pub(crate) bundle: BundleArgs,

    #[command(flatten)]
    pub(crate) output: OutputArgs,

    #[command(flatten)]
    pub(crate) probe: ProbeArgs,

    #[command(flatten)]
    pub(crate) baseline: BaselineArgs,

    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// What `--generate` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Generate {
    CompleteBash,
    CompleteZsh,
    CompleteFish,
    CompletePowershell,
    CompleteElvish,
    /// The man page (roff), e.g. `pvrdma-doctor --generate man > pvrdma-doctor.1`.
    Man,
    /// The JSON Schema of the `--format json` report, every field described.
    ReportSchema,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Diagnose ESXi hosts over SSH (the default: `pvrdma-doctor esx01` is
    /// `pvrdma-doctor check esx01`).
    Check {
        /// ESXi hosts, as for the default command.
        #[arg(value_name = "HOST")]
        hosts: Vec<String>,
    },
    /// Diagnose captured outputs offline: a directory (<host>/<command-id>.txt), a
    /// pvrdma-doctor support bundle (.tar.gz) or an ESXi vm-support bundle (folder or .tgz).
    Analyze {
        /// The directory or bundle to analyse.
        #[arg(value_name = "PATH")]
        path: PathBuf,
    },
    /// Diagnose the hosts again and again: the full report first, then one timestamped
    /// line (or JSON event) per change between consecutive rounds.
    Watch(WatchArgs),
    /// Start simulated ESXi hosts on 127.0.0.1, with problems planted on purpose, and
    /// diagnose them over real SSH. Says first and last what is simulated and planted;
    /// exits 0 when the report finds what was planted.
    Demo {
        /// A scenario directory (<host>/<command-id>.txt) to serve instead of the built-in one.
        #[arg(long, value_name = "DIR")]
        scenario: Option<PathBuf>,
        /// Simulated latency of every command.
        #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
        latency: Duration,
        /// Serve the simulated hosts as a Prometheus exporter (see `serve`) instead of
        /// diagnosing them once.
        #[arg(long)]
        serve: bool,
        /// With --serve: the address to listen on (default 127.0.0.1:39155).
        #[arg(long, value_name = "ADDR", requires = "serve")]
        listen: Option<String>,
        /// With --serve: TLS and basic authentication, in the format of Prometheus'
        /// exporter-toolkit.
        #[arg(long = "web.config.file", value_name = "FILE", requires = "serve")]
        web_config: Option<PathBuf>,
    },
    /// Run as a Prometheus multi-target exporter: `/probe?target=HOST` diagnoses a host
    /// (or a group of the configuration, as one fleet) when Prometheus scrapes it.
    Serve {
        /// The exporter's YAML configuration: modules, allowed targets, groups, limits.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// The address to listen on (default: the configuration's `listen`, else
        /// 127.0.0.1:39155).
        #[arg(long, alias = "web.listen-address", value_name = "ADDR")]
        listen: Option<String>,
        /// TLS and basic authentication, in the format of Prometheus' exporter-toolkit
        /// (`tls_server_config`, `basic_auth_users` with bcrypt hashes).
        #[arg(long = "web.config.file", value_name = "FILE")]
        web_config: Option<PathBuf>,
        /// Check the configuration (and the web configuration) and exit.
        #[arg(long)]
        check_config: bool,
    },
}

/// The clap command with every option global, so it is accepted before or after the
/// subcommand. Positional arguments stay where they are.
pub(crate) fn command() -> clap::Command {
    let cmd = Cli::command().mut_args(|a| {
        if a.is_positional() || a.get_id() == "help" || a.get_id() == "version" {
            a
        } else {
            a.global(true)
        }
    });
    // `demo` logs into its own simulated hosts: the SSH options, accepted anywhere, are
    // refused there (see `app`), so `demo --help` does not list them. A subcommand that
    // has its own (hidden) copy of a global option keeps that copy; its value still
    // reaches the top-level matches, where the refusal sees it.
    let hidden: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| DEMO_REFUSES.contains(&a.get_id().as_str()))
        .map(|a| a.clone().hide(true))
        .collect();
    cmd.mut_subcommand("demo", |demo| demo.args(hidden))
}

/// The options `demo` refuses: how to reach real hosts over SSH.
const DEMO_REFUSES: &[&str] = &[
    "hosts_file",
    "ssh_config",
    "user",
    "identity",
    "port",
    "jump",
    "options",
    "accept_new",
    "insecure_skip_host_key_check",
    "ask_password",
];

/// Parses the command line (exits with clap's usage message and code 2 on an error).
pub fn parse() -> Cli {
    parse_from(std::env::args_os())
}

/// Parses `args` (the first is the program name), as [`parse`] does.
fn parse_from<I, T>(args: I) -> Cli
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let matches = match command().try_get_matches_from(&args) {
        Ok(matches) => matches,
        Err(e) => exit_with(&e),
    };
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| exit_with(&e));
    cli.live.positions = ArgPositions::from_args(&args);
    cli
}

/// Prints clap's message and exits as clap would (help and version on stdout with 0, a
/// usage error on stderr with 2), a usage error wrapped to the terminal like every other
/// error.
fn exit_with(e: &clap::Error) -> ! {
    if !e.use_stderr() {
        e.exit();
    }
    eprint!("{}", crate::report::stderr_lines(&e.render().to_string()));
    std::process::exit(i32::from(crate::exit::USAGE));
}

/// Like [`parse_from`], returning clap's error instead of exiting.
pub(crate) fn try_parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let matches = command().try_get_matches_from(&args)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    cli.live.positions = ArgPositions::from_args(&args);
    Ok(cli)
}

/// The path probe (off by default: it sends packets, though it changes nothing).
#[derive(Debug, Clone, Args)]
pub(crate) struct ProbeArgs {
    /// After collection, ping every other host's PVRDMA vmknic from each host's own, plainly
    /// and with a don't-fragment packet filling the vmknic MTU (vmkping; see --list-checks).
    #[arg(long)]
    probe: bool,
    /// With --probe: each host pings K peers (the next K on a ring of the sorted host names,
    /// the same pairs every run) instead of all of them.
    #[arg(long, value_name = "K", requires = "probe", value_parser = parse_sample)]
    probe_sample: Option<usize>,
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
pub(crate) struct BaselineArgs {
    /// Compare with an earlier `--format json` report: the report then lists every host
    /// status, check status, adapter verdict and probe status that changed.
    #[arg(long, value_name = "OLD.json")]
    pub(crate) baseline: Option<PathBuf>,
}

/// How to reach the hosts.
#[derive(Debug, Clone, Args)]
pub(crate) struct LiveArgs {
    /// Read hosts from FILE, one node set per line (`#` starts a comment); `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    pub(crate) hosts_file: Option<PathBuf>,
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
    /// StrictHostKeyChecking, HashKnownHosts, HostKeyAlias.
    #[arg(short = 'o', long = "ssh-option", value_name = "KEY=VALUE")]
    pub(crate) options: Vec<String>,
    /// Where each option and host argument stood on the command line.
    #[arg(skip)]
    pub(crate) positions: ArgPositions,
    /// How many hosts to diagnose at once.
    #[arg(long, value_name = "N", default_value_t = crate::live::DEFAULT_PARALLEL, value_parser = parse_parallel)]
    pub(crate) parallel: usize,
    /// Limit for TCP connect + key exchange + authentication, per host.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub(crate) connect_timeout: Duration,
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

/// Positions on the command line of the options whose order matters to ssh (the first
/// value given wins between `-l`, `-o User` and `user@host`; likewise for the port and
/// the jump hosts). Filled by [`parse_from`].
#[derive(Debug, Clone, Default)]
pub(crate) struct ArgPositions {
    pub(crate) user: Vec<usize>,
    pub(crate) port: Vec<usize>,
    pub(crate) jump: Vec<usize>,
    pub(crate) options: Vec<usize>,
    pub(crate) hosts: Vec<usize>,
    pub(crate) hosts_file: Option<usize>,
}

impl ArgPositions {
    /// Scans the raw arguments as clap reads them (long and short options, attached or
    /// separate values, `--`, the subcommand) and notes where each option and host stood.
    /// clap's own indices restart inside a subcommand, so they cannot order `-l` before
    /// `check` against a host after it.
    fn from_args(args: &[OsString]) -> Self {
        let cmd = command();
        let takes_value = |a: &clap::Arg| a.get_action().takes_values();
        let id_of_long = |name: &str| {
            cmd.get_arguments()
                .find(|a| a.get_long() == Some(name))
                .map(|a| (a.get_id().to_string(), takes_value(a)))
        };
        let id_of_short = |c: char| {
            cmd.get_arguments()
                .find(|a| a.get_short() == Some(c))
                .map(|a| (a.get_id().to_string(), takes_value(a)))
        };
        let mut out = ArgPositions::default();
        let mut note = |id: &str, at: usize| match id {
            "user" => out.user.push(at),
            "port" => out.port.push(at),
            "jump" => out.jump.push(at),
            "options" => out.options.push(at),
            "hosts_file" => out.hosts_file = out.hosts_file.or(Some(at)),
            _ => {}
        };
        let mut hosts = Vec::new();
        let mut subcommand: Option<String> = None;
        let mut only_positionals = false;
        let mut i = 1;
        while let Some(raw) = args.get(i) {
            let t = raw.to_string_lossy();
            if only_positionals || t == "-" || !t.starts_with('-') {
                if subcommand.is_none() && hosts.is_empty() && cmd.find_subcommand(t.as_ref()).is_some() {
                    subcommand = Some(t.to_string());
                } else if subcommand.as_deref().is_none_or(|s| s == "check") {
                    hosts.push(i);
                }
            } else if t == "--" {
                only_positionals = true;
            } else if let Some(long) = t.strip_prefix("--") {
                let (name, attached) = match long.split_once('=') {
                    Some((n, _)) => (n, true),
                    None => (long, false),
                };
                if let Some((id, value)) = id_of_long(name) {
                    note(&id, i);
                    if value && !attached {
                        i += 1;
                    }
                }
            } else {
                for (k, c) in t.chars().skip(1).enumerate() {
                    if let Some((id, value)) = id_of_short(c) {
                        note(&id, i);
                        if value {
                            // The value is the rest of this word, or the next word.
                            if k + 2 == t.chars().count() {
                                i += 1;
                            }
                            break;
                        }
                    }
                }
            }
            i += 1;
        }
        out.hosts = hosts;
        out
    }
}

/// Support bundle options.
#[derive(Debug, Clone, Args)]
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
}

impl From<FormatArg> for Format {
    fn from(arg: FormatArg) -> Format {
        match arg {
            FormatArg::Human => Format::Human,
            FormatArg::Json => Format::Json,
            FormatArg::Prometheus => Format::Prometheus,
            FormatArg::Nagios => Format::Nagios,
        }
    }
}

/// How to print the report.
#[derive(Debug, Clone, Args)]
pub(crate) struct OutputArgs {
    /// Report format.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "human")]
    pub(crate) format: FormatArg,
    /// Write the report (or what --list-checks or --generate prints) to FILE instead of
    /// stdout, atomically: a temporary file in FILE's folder, synced, then renamed over
    /// FILE, so a reader (node_exporter's textfile collector) never sees half a report.
    /// The file is readable by all (mode 0644).
    #[arg(long = "output", value_name = "FILE")]
    pub(crate) output_file: Option<PathBuf>,
    /// When to colour the human report (`auto`: on a terminal unless NO_COLOR is set).
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub(crate) color: ColorChoice,
    /// Never draw the progress bar (it is only drawn when stderr is a terminal).
    #[arg(long)]
    pub(crate) no_progress: bool,
    /// Show only hosts, checks and adapters with a problem, a warning or an unknown; the
    /// summary still counts everything.
    #[arg(long)]
    pub(crate) only_problems: bool,
    /// Print every host on its own instead of folding hosts with identical results into
    /// node sets (`esx[01-20]`, as `clush -b` does).
    #[arg(long)]
    pub(crate) no_fold: bool,
    #[command(flatten)]
    pub(crate) plugin: PluginArgs,
}

impl OutputArgs {
    /// The report format, as the engine names it.
    pub(crate) fn format(&self) -> Format {
        self.format.into()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// `--format nagios` (the monitoring-plugin mode) only.
#[derive(Debug, Clone, Args)]
pub(crate) struct PluginArgs {
    /// With --format nagios: the number of adapters in TCP fallback that makes the state
    /// WARNING, as a Monitoring Plugins range (`0` = any, `2` = more than 2, `@1:3`).
    #[arg(short = 'w', long = "warning", value_name = "RANGE")]
    pub(crate) warning: Option<crate::report::nagios::Range>,
    /// With --format nagios: the number that makes it CRITICAL. Without -w and -c any
    /// fallback is CRITICAL; a failing check or a blocked pair always is.
    #[arg(short = 'c', long = "critical", value_name = "RANGE")]
    pub(crate) critical: Option<crate::report::nagios::Range>,
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

impl From<StateArg> for crate::report::nagios::State {
    fn from(arg: StateArg) -> Self {
        use crate::report::nagios::State;
        match arg {
            StateArg::Ok => State::Ok,
            StateArg::Warning => State::Warning,
            StateArg::Critical => State::Critical,
            StateArg::Unknown => State::Unknown,
        }
    }
}

impl PluginArgs {
    /// Whether an option of the plugin mode was given.
    pub(crate) fn any_given(&self) -> bool {
        self.warning.is_some() || self.critical.is_some() || self.unreachable_state != StateArg::Unknown
    }
}

/// `watch`: rerun and report the changes.
#[derive(Debug, Clone, Args)]
pub(crate) struct WatchArgs {
    /// ESXi hosts, as for the default command.
    #[arg(value_name = "HOST")]
    pub(crate) hosts: Vec<String>,
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
    /// Watch the demo's simulated hosts instead of real ones.
    #[arg(long)]
    pub(crate) demo: bool,
    /// With --demo: serve this scenario directory (<host>/<command-id>.txt), read again at
    /// the start of every round, so editing a file there changes what the next round sees.
    #[arg(long, value_name = "DIR", requires = "demo")]
    pub(crate) scenario: Option<PathBuf>,
    /// With --demo: simulated latency of every command.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration, requires = "demo")]
    pub(crate) latency: Duration,
}

/// `--interval`: at least 100 ms.
fn parse_interval(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d < Duration::from_millis(100) {
        return Err(format!("{text:?} is shorter than 100ms"));
    }
    Ok(d)
}

/// `--count`: 1 or more rounds.
fn parse_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{text:?} is not a number of rounds (1 or more)")),
    }
}

/// `--host-output-budget`: `10MiB`, `512KiB`, `1GiB`, `4096` (bytes); at least 64 KiB so a
/// healthy host always fits.
pub(crate) fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: usize = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 10MiB, 512KiB)"))?;
    let factor: usize = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        "g" | "gb" | "gib" => 1024 * 1024 * 1024,
        other => return Err(format!("unknown size unit {other:?} (use B, KiB, MiB or GiB)")),
    };
    let bytes = n.checked_mul(factor).ok_or_else(|| format!("{text:?} is too large"))?;
    if bytes < 64 * 1024 {
        return Err(format!(
            "{text:?} is below 64KiB, too small for one healthy host's outputs"
        ));
    }
    Ok(bytes)
}

/// `--parallel`: 1 to 1024 hosts at once.
fn parse_parallel(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a number of hosts from 1 to 1024")),
    }
}

/// `--probe-sample`: at least one peer.
fn parse_sample(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{text:?} is not a number of peers (1 or more)")),
    }
}

/// `10s`, `500ms`, `2m`, `1h`, or plain seconds (`30`).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 10s, 500ms, 2m"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("unknown unit {unit:?} in {text:?} (use ms, s, m or h)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("5d").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn cli_is_well_formed() {
        command().debug_assert();
    }

    #[test]
    fn options_may_stand_before_or_after_the_subcommand() {
        let cli = try_parse_from(["pvrdma-doctor", "--no-progress", "--format", "json", "analyze", "DIR"]).unwrap();
        assert!(matches!(&cli.command, Some(Command::Analyze { path }) if path == &PathBuf::from("DIR")));
        assert!(cli.hosts.is_empty());
        assert!(cli.output.no_progress);
        assert_eq!(Format::from(cli.output.format), Format::Json);
        let cli = try_parse_from([
            "pvrdma-doctor",
            "analyze",
            "DIR",
            "--format",
            "json",
            "--color",
            "never",
        ])
        .unwrap();
        assert_eq!(Format::from(cli.output.format), Format::Json);
        assert_eq!(cli.output.color, ColorChoice::Never);
        let cli = try_parse_from([
            "pvrdma-doctor",
            "-l",
            "admin",
            "--parallel",
            "3",
            "demo",
            "--latency",
            "1s",
        ])
        .unwrap();
        assert!(matches!(cli.command, Some(Command::Demo { .. })));
        assert_eq!(cli.live.user.as_deref(), Some("admin"));
        assert_eq!(cli.live.parallel, 3);
        let cli = try_parse_from(["pvrdma-doctor", "esx01", "--format", "json", "esx02"]).unwrap();
        assert_eq!(cli.hosts, ["esx01", "esx02"]);
        let cli = try_parse_from(["pvrdma-doctor", "check", "demo", "-vv"]).unwrap();
        assert!(matches!(&cli.command, Some(Command::Check { hosts }) if hosts == &["demo"]));
        assert_eq!(cli.verbose, 2);
    }

    #[test]
    fn positions_follow_the_command_line() {
        let cli = try_parse_from([
            "pvrdma-doctor",
            "root@esx01",
            "-l",
            "admin",
            "-o",
            "User=o",
            "esx02",
            "-p",
            "2222",
            "-o",
            "Port=1",
        ])
        .unwrap();
        let p = &cli.live.positions;
        assert_eq!(
            (p.hosts.clone(), p.user.clone(), p.options.clone()),
            (vec![1, 6], vec![2], vec![4, 9])
        );
        assert_eq!(p.port, vec![7]);
        let cli = try_parse_from(["pvrdma-doctor", "-ladmin", "check", "root@esx01", "-J", "j1"]).unwrap();
        let p = &cli.live.positions;
        assert_eq!(
            (p.user.clone(), p.hosts.clone(), p.jump.clone()),
            (vec![1], vec![3], vec![4])
        );
        let cli = try_parse_from([
            "pvrdma-doctor",
            "--format",
            "json",
            "esx01",
            "--user=a",
            "--hosts-file",
            "f",
            "--",
            "-p",
        ])
        .unwrap();
        let p = &cli.live.positions;
        assert_eq!(
            (p.hosts.clone(), p.user.clone(), p.hosts_file),
            (vec![3, 8], vec![4], Some(5))
        );
    }
}
