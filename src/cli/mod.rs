//! Command-line interface: clap derive structs and their validation. No I/O here.
//!
//! Each subcommand accepts exactly the options it uses, composed from the groups of
//! [`groups`] (hosts, SSH login, collection limits, path probe, report, support bundle,
//! monitoring plugin); `--help` lists only those, and any other option is a usage error
//! naming the subcommand. The default job takes `check`'s options, so `pvrdma-doctor
//! esx01 esx02` is `pvrdma-doctor check esx01 esx02`; `check` is the explicit form, for a
//! host whose name is a subcommand (`pvrdma-doctor check demo`). Options may stand before
//! the subcommand too, as admins expect from ssh and clush: `pvrdma-doctor --format json
//! analyze DIR` is read as `pvrdma-doctor analyze --format json DIR`, so they are the
//! subcommand's to accept or refuse.
mod commands;
mod groups;
mod positions;
mod values;
mod vcenter;

pub(crate) use commands::{AnalyzeArgs, CheckArgs, DemoArgs, ServeArgs, WatchArgs, WatchFormat};
pub use groups::BundleArgs;
pub(crate) use groups::{BaselineArgs, ColorChoice, FormatArg, HostArgs, LayoutArgs, ReportArgs, RunArgs, SshArgs};
pub(crate) use positions::ArgPositions;
pub(crate) use values::parse_size;
pub(crate) use vcenter::{HostsArgs, HostsFormat, VcenterArgs};

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::time::Duration;

/// Tells, for every PVRDMA adapter on your ESXi hosts, whether its traffic goes through the
/// physical RDMA HCA or silently falls back to TCP, and why.
///
/// Without a subcommand, diagnoses the HOSTs over SSH (as `check`). Only read-only
/// commands are sent (see --list-checks). Exit codes: 0 healthy, 1 a check fails or an
/// adapter falls back to TCP, 2 usage or internal error, 3 nothing failed but a host was
/// unreachable or something is unknown, 4 nothing failed but the run was configuration-only
/// (--no-ssh: the transport was not observed), 130 interrupted by Ctrl-C.
#[derive(Debug, Parser)]
#[command(
    name = "pvrdma-doctor",
    version,
    max_term_width = 100,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Print the read-only commands this tool sends (id, command, purpose) and the check
    /// ids, then exit (`-v` adds each batched query's exact command line, `--format json`
    /// gives a JSON document).
    #[arg(long, help_heading = "Information")]
    pub(crate) list_checks: bool,

    /// Print a shell completion script, the man page or the JSON Schema of the report on
    /// stdout, then exit.
    #[arg(
        long,
        value_enum,
        value_name = "KIND",
        help_heading = "Information",
        conflicts_with = "list_checks"
    )]
    pub(crate) generate: Option<Generate>,

    #[command(flatten)]
    pub(crate) check: CheckArgs,

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
    Check(CheckArgs),
    /// Diagnose captured outputs offline: a directory (<host>/<command-id>.txt), a
    /// pvrdma-doctor support bundle (.tar.gz) or an ESXi vm-support bundle (folder or .tgz).
    Analyze(AnalyzeArgs),
    /// Diagnose the hosts again and again: the full report first, then one timestamped
    /// line (or JSON Lines event) per change between consecutive rounds.
    Watch(WatchArgs),
    /// Start simulated ESXi hosts on 127.0.0.1, with problems planted on purpose, and
    /// diagnose them over real SSH. Says first and last what is simulated and planted;
    /// exits 0 when the report finds what was planted.
    Demo(DemoArgs),
    /// Print the ESXi hosts vCenter has for a cluster or a VM, as one folded node set on
    /// the first line (`pvrdma-doctor $(pvrdma-doctor hosts --vcenter vc01 --cluster HPC)`,
    /// `clush -w`); the hosts it skipped, and why, on stderr.
    ///
    /// The password comes from --vcenter-password-file, PVRDMA_DOCTOR_VCENTER_PASSWORD or
    /// a prompt on a terminal, asked only once vCenter's certificate is trusted. Exits 0
    /// when a host is selected; 3 when none is (all skipped) or vCenter cannot be read;
    /// 2 on a usage, login or certificate error, or a cluster or VM vCenter does not have;
    /// 130 on Ctrl-C.
    Hosts(HostsArgs),
    /// Run as a Prometheus multi-target exporter: `/probe?target=HOST` diagnoses a host
    /// (or a group of the configuration, as one fleet) when Prometheus scrapes it.
    Serve(ServeArgs),
}

/// The options of `--list-checks` and `--generate` besides themselves.
const INFORMATION_TAKES: &[&str] = &["list_checks", "generate", "verbose", "format", "output_file"];

impl Cli {
    /// `-v`'s count, whatever the subcommand (0 where it has none).
    pub(crate) fn verbose(&self) -> u8 {
        match &self.command {
            None => self.check.verbose.verbose,
            Some(Command::Check(a)) => a.verbose.verbose,
            Some(Command::Watch(a)) => a.verbose.verbose,
            Some(Command::Demo(a)) => a.verbose.verbose,
            Some(Command::Serve(a)) => a.verbose.verbose,
            Some(Command::Hosts(a)) => a.verbose,
            Some(Command::Analyze(_)) => 0,
        }
    }

    /// Whether the job only prints what was asked (`--list-checks`, `--generate`).
    pub(crate) fn informational(&self) -> bool {
        self.list_checks || self.generate.is_some()
    }

    /// `--timeout` of the job that collects.
    pub(crate) fn run_timeout(&self) -> Option<Duration> {
        match &self.command {
            None => self.check.run.timeout,
            Some(Command::Check(a)) => a.run.timeout,
            Some(Command::Demo(a)) => a.run.timeout,
            Some(Command::Watch(_) | Command::Analyze(_) | Command::Serve(_) | Command::Hosts(_)) => None,
        }
    }

    /// `--timeout` of the job that collects, to be bounded by a monitoring plugin's own.
    pub(crate) fn run_timeout_mut(&mut self) -> Option<&mut Option<Duration>> {
        match &mut self.command {
            None => Some(&mut self.check.run.timeout),
            Some(Command::Check(a)) => Some(&mut a.run.timeout),
            Some(Command::Demo(a)) => Some(&mut a.run.timeout),
            Some(Command::Watch(_) | Command::Analyze(_) | Command::Serve(_) | Command::Hosts(_)) => None,
        }
    }
}

/// The clap command.
pub(crate) fn command() -> clap::Command {
    Cli::command()
}

/// Parses the command line (exits with clap's usage message and code 2 on an error).
pub fn parse() -> Cli {
    match try_parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => exit_with(&e),
    }
}

/// Prints clap's message and exits as clap would (help and version on stdout with 0, a
/// usage error on stderr with 2), a usage error wrapped to the terminal like every other
/// error.
fn exit_with(e: &clap::Error) -> ! {
    if !e.use_stderr() {
        e.exit();
    }
    eprint!("{}", crate::terminal::stderr_lines(&e.render().to_string()));
    std::process::exit(i32::from(pvrdma_engine::exit::USAGE));
}

/// Parses `args` (the first is the program name), returning clap's error (a usage error
/// names the subcommand whose options were wrong).
pub fn try_parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut cmd = command();
    let args = positions::subcommand_first(args.into_iter().map(Into::into).collect(), &cmd);
    let matches = cmd.try_get_matches_from_mut(&args)?;
    refuse_idle_options(&mut cmd, &matches)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    match &mut cli.command {
        None => cli.check.positions = ArgPositions::from_args(&args, &cmd),
        Some(Command::Check(a)) => a.positions = ArgPositions::from_args(&args, &cmd),
        Some(Command::Watch(a)) => a.positions = ArgPositions::from_args(&args, &cmd),
        Some(_) => {}
    }
    Ok(cli)
}

/// Options clap cannot tie to their condition: those `--list-checks` and `--generate`
/// leave unused, and the plugin's outside `--format nagios`. The error's usage line is the
/// subcommand's.
fn refuse_idle_options(cmd: &mut clap::Command, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
    use clap::error::ErrorKind;
    let (sub, m) = match matches.subcommand() {
        Some((name, m)) => (Some(name.to_string()), m),
        None => (None, matches),
    };
    // clap matched `name` on this very command, so it is there; were it not, there would
    // be nothing of its to refuse.
    let cmd = match &sub {
        Some(name) => match cmd.find_subcommand_mut(name) {
            Some(c) => c,
            None => return Ok(()),
        },
        None => cmd,
    };
    let given = |id: &str| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
    let spelt = |cmd: &clap::Command, id: &str| {
        cmd.get_arguments()
            .find(|a| a.get_id() == id)
            .and_then(|a| a.get_long().map(|l| format!("--{l}")))
            .unwrap_or_else(|| "HOST".to_string())
    };
    // `ids` also holds the groups (one per option struct): only options count.
    let given_ids: Vec<String> = m
        .ids()
        .map(|id| id.as_str().to_string())
        .filter(|id| given(id) && cmd.get_arguments().any(|a| a.get_id() == id))
        .collect();
    if sub.is_none() && (given("list_checks") || given("generate")) {
        let idle: Vec<String> = given_ids
            .iter()
            .filter(|id| !INFORMATION_TAKES.contains(&id.as_str()))
            .map(|id| spelt(cmd, id))
            .collect();
        if !idle.is_empty() {
            let what = if given("list_checks") {
                "--list-checks"
            } else {
                "--generate"
            };
            return Err(cmd.error(
                ErrorKind::ArgumentConflict,
                format!("{what} prints and exits; {} would do nothing with it", idle.join(", ")),
            ));
        }
    }
    let nagios = m
        .try_get_one::<FormatArg>("format")
        .ok()
        .flatten()
        .is_some_and(|f| *f == FormatArg::Nagios);
    let plugin: Vec<String> = given_ids
        .iter()
        .filter(|id| ["warning", "critical", "unreachable_state"].contains(&id.as_str()))
        .map(|id| spelt(cmd, id))
        .collect();
    if !nagios && !plugin.is_empty() {
        let name = sub.map_or_else(|| "pvrdma-doctor".to_string(), |s| format!("pvrdma-doctor {s}"));
        let verb = if plugin.len() == 1 { "applies" } else { "apply" };
        return Err(cmd.error(
            ErrorKind::ArgumentConflict,
            format!("{name}: {} {verb} to --format nagios only", plugin.join(", ")),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pvrdma_engine::report::Format;
    use std::path::PathBuf;

    #[test]
    fn cli_is_well_formed() {
        command().debug_assert();
    }

    #[test]
    fn options_before_the_subcommand_are_the_subcommands() {
        let cli = try_parse_from([
            "pvrdma-doctor",
            "--format",
            "json",
            "analyze",
            "DIR",
            "--color",
            "never",
        ])
        .unwrap();
        let Some(Command::Analyze(a)) = &cli.command else {
            panic!("{cli:?}")
        };
        assert_eq!(a.path, PathBuf::from("DIR"));
        assert_eq!(a.report.format(), Format::Json);
        assert_eq!(a.report.layout.color, ColorChoice::Never);
        let cli = try_parse_from(["pvrdma-doctor", "-l", "admin", "--parallel", "3", "check", "esx01"]).unwrap();
        let Some(Command::Check(c)) = &cli.command else {
            panic!("{cli:?}")
        };
        assert_eq!(c.ssh.user.as_deref(), Some("admin"));
        assert_eq!(c.run.parallel, 3);
        assert_eq!(c.hosts.hosts, ["esx01"]);
        // An option the subcommand does not use is refused wherever it stands, naming it.
        for line in [
            &["pvrdma-doctor", "-l", "admin", "analyze", "DIR"][..],
            &["pvrdma-doctor", "analyze", "DIR", "-l", "admin"],
        ] {
            let e = try_parse_from(line).unwrap_err().render().to_string();
            assert!(e.contains("Usage: pvrdma-doctor analyze"), "{e}");
        }
        let e = try_parse_from(["pvrdma-doctor", "serve", "--config", "c", "-p", "1"]).unwrap_err();
        assert!(e.render().to_string().contains("Usage: pvrdma-doctor serve"), "{e}");
    }

    #[test]
    fn hosts_are_the_default_job_and_a_host_may_be_named_like_a_subcommand() {
        let cli = try_parse_from(["pvrdma-doctor", "esx01", "--format", "json", "esx02"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.check.hosts.hosts, ["esx01", "esx02"]);
        let cli = try_parse_from(["pvrdma-doctor", "esx01", "demo"]).unwrap();
        assert_eq!(cli.check.hosts.hosts, ["esx01", "demo"]);
        let cli = try_parse_from(["pvrdma-doctor", "check", "demo", "-vv"]).unwrap();
        assert!(matches!(&cli.command, Some(Command::Check(c)) if c.hosts.hosts == ["demo"]));
        assert_eq!(cli.verbose(), 2);
        let cli = try_parse_from(["pvrdma-doctor", "--", "demo"]).unwrap();
        assert_eq!(cli.check.hosts.hosts, ["demo"]);
    }

    #[test]
    fn plugin_options_need_the_plugin_format_and_information_takes_no_hosts() {
        let e = try_parse_from(["pvrdma-doctor", "analyze", "DIR", "-w", "1"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--warning applies to --format nagios only"), "{e}");
        assert!(try_parse_from(["pvrdma-doctor", "analyze", "DIR", "-w", "1", "--format", "nagios"]).is_ok());
        let e = try_parse_from(["pvrdma-doctor", "--list-checks", "-l", "root"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--user would do nothing"), "{e}");
        assert!(try_parse_from(["pvrdma-doctor", "--list-checks", "--format", "json", "-v"]).is_ok());
    }

    #[test]
    fn demo_refuses_what_a_simulated_host_or_the_exporter_ignores() {
        for line in [
            &["pvrdma-doctor", "demo", "-l", "root"][..],
            &["pvrdma-doctor", "demo", "--hosts-file", "f"],
            &["pvrdma-doctor", "demo", "--serve", "--format", "json"],
            &["pvrdma-doctor", "demo", "--serve", "--bundle", "b.tgz"],
            &["pvrdma-doctor", "watch", "--demo", "-l", "root"],
            &["pvrdma-doctor", "watch", "esx01", "--output", "f"],
            &["pvrdma-doctor", "watch", "esx01", "--format", "prometheus"],
            &["pvrdma-doctor", "watch", "esx01", "--bundle", "b.tgz"],
        ] {
            assert!(try_parse_from(line).is_err(), "{line:?}");
        }
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
        let p = &cli.check.positions;
        assert_eq!(
            (p.hosts.clone(), p.user.clone(), p.options.clone()),
            (vec![1, 6], vec![2], vec![4, 9])
        );
        assert_eq!(p.port, vec![7]);
        // Options before `check` keep their order against the hosts after it.
        let cli = try_parse_from(["pvrdma-doctor", "-ladmin", "check", "root@esx01", "-J", "j1"]).unwrap();
        let Some(Command::Check(c)) = &cli.command else {
            panic!("{cli:?}")
        };
        let p = &c.positions;
        assert!(p.user[0] < p.hosts[0] && p.hosts[0] < p.jump[0], "{p:?}");
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
        let p = &cli.check.positions;
        assert_eq!(
            (p.hosts.clone(), p.user.clone(), p.hosts_file),
            (vec![3, 8], vec![4], Some(5))
        );
    }
}
