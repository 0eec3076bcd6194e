//! The main job, live: from host arguments to one [`HostCapture`] per host, collected
//! concurrently over SSH, with every timeout bounded and Ctrl-C still yielding a report.
//!
//! Usage errors (a bad host spec, an unreadable hosts file or `-F` file) are `Err` because
//! nothing sensible can run; everything that goes wrong on a host is data in its capture,
//! so one dead host never hides the others.
use crate::collect::ssh::{collect_host_open, HostJob, Sink, Stage, DEFAULT_CHANNELS};
use crate::hosts::{collect_targets, HostSpec};
use crate::ssh::endpoint::Credentials;
use crate::ssh::plan::{Flags, Planner};
use anyhow::Context;
use pvrdma_engine::capture::{CaptureSource, ErrorKind, Failure, HostCapture};
use pvrdma_ssh_config::{CommandLineOptions, LocalContext, SshConfig};
use secrecy::SecretString;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Environment variable holding the password for all hosts.
const PASSWORD_ENV: &str = "PVRDMA_DOCTOR_PASSWORD";

/// OpenSSH's system-wide client config.
const SYSTEM_SSH_CONFIG: &str = "/etc/ssh/ssh_config";

/// Environment variable naming another system-wide ssh_config (for tests and packagers
/// whose OpenSSH lives elsewhere).
const SYSTEM_SSH_CONFIG_ENV: &str = "PVRDMA_DOCTOR_SYSTEM_SSH_CONFIG";

/// [`SYSTEM_SSH_CONFIG`], or the file [`SYSTEM_SSH_CONFIG_ENV`] names.
pub(crate) fn system_ssh_config_path() -> PathBuf {
    std::env::var_os(SYSTEM_SSH_CONFIG_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(SYSTEM_SSH_CONFIG))
}

/// What `collect_live` needs; the CLI fills it.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// Raw positional args; `-` = read stdin.
    pub targets: Vec<String>,
    /// Where each of `targets` stood on the command line, and where `--hosts-file` did
    /// (for ssh's "first value given wins" between `user@host` and `-l`, `-o User`...).
    /// Missing entries count as after every option.
    pub target_positions: Vec<usize>,
    pub hosts_file_position: usize,
    pub hosts_file: Option<PathBuf>,
    /// `-F`; `None` = `~/.ssh/config` then `system_ssh_config`, each when it exists.
    pub ssh_config: Option<PathBuf>,
    /// The system-wide ssh_config read after the user's (not with `-F`, as with ssh).
    /// Tests point it at a temporary file.
    pub system_ssh_config: PathBuf,
    /// `-l`, `-p`, `-J` and `-o Key=Value` in command-line order, for the targets.
    pub ssh_options: CommandLineOptions,
    /// `-l/--user` (also in `ssh_options`), for redaction.
    pub login_user: Option<String>,
    /// `-i`, tried before config/default keys.
    pub identity_files: Vec<PathBuf>,
    pub parallel: usize,
    /// `--connect-timeout`, the limit of a whole login; `None`: [`DEFAULT_CONNECT_TIMEOUT`],
    /// or the host's `ConnectTimeout` when that is longer.
    pub connect_timeout: Option<Duration>,
    /// How a user sets `connect_timeout`, for the message when a login runs out of it:
    /// `--connect-timeout`, or the exporter module's `connect_timeout`.
    pub connect_timeout_option: &'static str,
    pub command_timeout: Duration,
    /// `--host-output-budget`: most bytes kept per host, all outputs together.
    pub host_output_budget: usize,
    /// `--total-output-budget`: most bytes kept for all hosts together.
    pub total_output_budget: usize,
    pub run_timeout: Option<Duration>,
    /// Set by the exporter: the run's deadline, which may move later while the run goes
    /// (a scrape with a later deadline joined it); it stops the run instead of
    /// `run_timeout`, and its words say why a host was cut.
    pub run_deadline: Option<RunDeadline>,
    pub accept_new: bool,
    pub insecure_skip_host_key_check: bool,
    pub password: Option<SecretString>,
    /// Draw the indicatif bar (the caller decides whether stderr is a terminal).
    pub progress: bool,
    /// Log in only with `-i`/`IdentityFile` keys and the password: no ssh-agent, no
    /// `~/.ssh/id_*` defaults. The demo uses it so the user's own keys are never offered
    /// to a simulated host.
    pub only_given_keys: bool,
    /// `--probe`: after collection, ping between the hosts' PVRDMA vmknics.
    pub probe: Option<crate::probe::ProbeOptions>,
    /// What runs with these options share, read once ([`LiveOptions::prepare`]: the
    /// exporter, once per configuration load); `None`: each run reads its own.
    pub prepared: Option<Arc<Prepared>>,
    /// The run's output budget when the caller hands one in (the exporter: a share of its
    /// process-wide budget); `None`: a fresh `total_output_budget`.
    pub run_budget: Option<Arc<crate::collect::ssh::RunBudget>>,
    /// Called with each host's capture the moment that host is read, before the run ends
    /// (the exporter diagnoses hosts as they come in; see [`OnHostRead`]).
    pub on_host_read: Option<OnHostRead>,
}

/// What a run calls with each host's capture as soon as the host is read (not with hosts
/// the run's deadline or Ctrl-C cuts: those come only in the run's result). The path
/// probe, when asked for, comes after and is not in it.
#[derive(Clone)]
pub struct OnHostRead(pub Arc<dyn Fn(&pvrdma_engine::capture::HostCapture) + Send + Sync>);

impl std::fmt::Debug for OnHostRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnHostRead(..)")
    }
}

/// The ssh_config and identity files of a set of options, shared by every run made with
/// them: each file is read the first time a host needs it, then kept (see
/// `pvrdma_ssh_config` and `ssh::key_files`).
pub struct Prepared {
    home: PathBuf,
    config: SshConfig,
    keys: Arc<crate::ssh::key_files::KeyFiles>,
}

/// The files' contents are no one's business in a debug print of the options.
impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prepared { .. }")
    }
}

impl LiveOptions {
    /// Sets up what every run with these options shares, so that runs (an exporter's
    /// probes) stop reading ssh_config and the key files again; until the options are
    /// built again (the exporter's SIGHUP), changes to those files are not seen. Left as
    /// is when the ssh_config cannot be opened: each run then says why.
    pub fn prepare(&mut self) {
        if let Ok(prepared) = Prepared::load(self) {
            self.prepared = Some(Arc::new(prepared));
        }
    }
}

impl Prepared {
    /// The home directory, the ssh_config these options name, and no key file read yet.
    fn load(opts: &LiveOptions) -> anyhow::Result<Prepared> {
        let home = home_dir();
        let config = load_config(opts.ssh_config.as_deref(), &opts.system_ssh_config, &home)?;
        Ok(Prepared {
            home,
            config,
            keys: Arc::default(),
        })
    }
}

/// Above this many hosts, probing every pair is worth a hint about `--probe-sample`.
const PROBE_ALL_PAIRS_WARN: usize = 64;

/// Connections kept open between collection and the probe phase, at most; hosts beyond
/// log in again for the probe, so a large fleet never holds more descriptors than this.
const PROBE_KEEP_OPEN: usize = 256;

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            targets: Vec::new(),
            target_positions: Vec::new(),
            hosts_file_position: usize::MAX,
            hosts_file: None,
            ssh_config: None,
            system_ssh_config: system_ssh_config_path(),
            ssh_options: CommandLineOptions::default(),
            login_user: None,
            identity_files: Vec::new(),
            parallel: DEFAULT_PARALLEL,
            connect_timeout: None,
            connect_timeout_option: "--connect-timeout",
            command_timeout: Duration::from_secs(60),
            host_output_budget: pvrdma_engine::capture::DEFAULT_HOST_BUDGET,
            total_output_budget: pvrdma_engine::capture::DEFAULT_TOTAL_BUDGET,
            run_timeout: None,
            run_deadline: None,
            accept_new: false,
            insecure_skip_host_key_check: false,
            password: None,
            progress: false,
            only_given_keys: false,
            probe: None,
            prepared: None,
            run_budget: None,
            on_host_read: None,
        }
    }
}

/// The limit for a host's TCP connect, key exchange and authentication when neither
/// `--connect-timeout` nor the host's `ConnectTimeout` sets one.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A run deadline that its owner may move later while the run goes.
#[derive(Debug, Clone)]
pub struct RunDeadline {
    /// When the run stops; only ever moved later.
    pub at: tokio::sync::watch::Receiver<tokio::time::Instant>,
    /// What passed, instead of the `--timeout` wording (the exporter has no `--timeout`:
    /// it names the scrape timeout): "the probe's deadline (...) passed".
    pub what: String,
    /// What to do about it: "raise scrape_timeout in the Prometheus job ...".
    pub advice: String,
}

impl RunDeadline {
    /// Resolves once the latest deadline set has passed.
    pub async fn passed(mut at: tokio::sync::watch::Receiver<tokio::time::Instant>) {
        loop {
            let when = *at.borrow_and_update();
            tokio::select! {
                () = tokio::time::sleep_until(when) => {
                    if *at.borrow() <= tokio::time::Instant::now() {
                        return;
                    }
                }
                changed = at.changed() => {
                    if changed.is_err() {
                        // The owner is gone: the last deadline set stands.
                        tokio::time::sleep_until(*at.borrow()).await;
                        return;
                    }
                }
            }
        }
    }
}

/// The result of a live run.
#[derive(Debug, Clone)]
pub struct LiveRun {
    /// One per target, in target order.
    pub captures: Vec<HostCapture>,
    pub started: SystemTime,
    pub finished: SystemTime,
    /// Ctrl-C stopped the run early.
    pub interrupted: bool,
    /// Local paths and login users that messages may hold, for `--redact`.
    pub(crate) local_values: crate::redact::LocalValues,
    /// The hosts as the run read them, in target order (`user@`, `:port`, the argument
    /// each came from).
    pub(crate) targets: Vec<HostSpec>,
}

impl LiveRun {
    /// A run whose hosts were read through vCenter's vSphere API (`--no-ssh`): no SSH
    /// target, no local value a message could hold.
    pub(crate) fn from_api(captures: Vec<HostCapture>, started: SystemTime, finished: SystemTime) -> LiveRun {
        LiveRun {
            captures,
            started,
            finished,
            interrupted: false,
            local_values: Default::default(),
            targets: Vec::new(),
        }
    }
}

/// The current-thread runtime every front end waits on (a live run, the exporter, the
/// watch between rounds). Blocking work is short file reads (known_hosts, a key); a few
/// threads serve a whole fleet, where tokio's default (512) may start one thread per host
/// at once, each with its own stack and malloc arena.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .max_blocking_threads(8)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Collects every target. See the module doc for what is `Err`.
pub fn collect_live(opts: &LiveOptions) -> anyhow::Result<LiveRun> {
    // One thread drives every host: a host needs a few ms of CPU in a run that waits
    // seconds on esxcli, and with more worker threads each event (a packet, a timer) that
    // lands on a parked worker costs a futex wake and a context switch. Measured on 100
    // hosts of 40 VMs (host_bench, esxcli 4 s): 4.7 ms of client CPU per host against 5.4
    // with two workers.
    let runtime = runtime()?;
    let run = runtime.block_on(collect_live_async(opts));
    // Hosts that hang past every timeout must not keep the process alive.
    runtime.shutdown_timeout(Duration::from_millis(200));
    run
}

/// [`collect_live`] on the caller's runtime (the exporter's, which serves many runs).
pub async fn collect_live_async(opts: &LiveOptions) -> anyhow::Result<LiveRun> {
    let started = SystemTime::now();
    let targets = collect_targets(&opts.targets, opts.hosts_file.as_deref(), &mut std::io::stdin().lock())?;
    check_identity_files(&opts.identity_files)?;
    let read_here;
    let prepared = match &opts.prepared {
        Some(p) => p,
        None => {
            read_here = Prepared::load(opts)?;
            &read_here
        }
    };
    let (home, config) = (&prepared.home, &prepared.config);
    let mut jobs: Vec<Result<HostJob, Failure>> = targets.iter().map(|t| plan_host(t, opts, config, home)).collect();
    refuse_a_config_no_host_can_use(&targets, &jobs)?;
    let budget = match &opts.run_budget {
        Some(b) => b.clone(),
        None => crate::collect::ssh::RunBudget::new(opts.total_output_budget),
    };
    share_run_budget(&mut jobs, &budget, &prepared.keys);
    let local_values = local_values(&jobs, opts, home);
    if let Some(w) = config_tofu_warning(&jobs) {
        let w = w.strip_prefix("pvrdma-doctor: ").unwrap_or(&w);
        eprint!("{}", crate::terminal::stderr_message("pvrdma-doctor: ", w));
    }
    let labels: Vec<String> = targets.iter().map(HostSpec::label).collect();
    let (captures, interrupted) = run_all(jobs, labels, opts).await;
    Ok(LiveRun {
        captures,
        started,
        finished: SystemTime::now(),
        interrupted,
        local_values,
        targets,
    })
}

mod fanout;
mod password;
mod plan;
mod progress;
#[cfg(test)]
mod tests;

use fanout::run_all;
pub use fanout::*;
use password::home_dir;
pub(crate) use password::*;
use plan::local_values;
pub use plan::*;
