//! The main job, live: from host arguments to one [`HostCapture`] per host, collected
//! concurrently over SSH, with every timeout bounded and Ctrl-C still yielding a report.
//!
//! Usage errors (a bad host spec, an unreadable hosts file or `-F` file) are `Err` because
//! nothing sensible can run; everything that goes wrong on a host is data in its capture,
//! so one dead host never hides the others.
use crate::collect::ssh::{collect_host, HostJob, Sink, Stage, DEFAULT_CHANNELS};
use crate::collect::{CaptureSource, ErrorKind, Failure, HostCapture};
use crate::ssh::client::{Credentials, Endpoint, HostKeyPolicy};
use crate::ssh::config::{expand_tilde, SshConfig, StrictHostKeyChecking};
use crate::target::{collect_targets, parse_host_spec, HostSpec};
use anyhow::Context;
use secrecy::SecretString;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Hosts collected at once unless `--parallel` says otherwise. A host costs the client one
/// TCP socket, a few KiB of state and well under 3 ms of CPU (measured: README,
/// Benchmarks), and spends its time waiting for esxcli; so a fleet of a few hundred hosts
/// runs in one wave and finishes in about the time of its slowest host. Bounded at run
/// time by the open-file limit (see [`fanout_limit`]).
pub const DEFAULT_PARALLEL: usize = 512;

/// File descriptors kept free for everything that is not a host connection: stdio, the
/// async runtime, ssh_config / known_hosts / key files being read, the bundle being
/// written.
const FD_RESERVE: libc::rlim_t = 64;

/// File descriptors one host holds at most at a time: its TCP socket (jump hosts are
/// reached through channels of the first hop, not sockets of their own) and a file being
/// read for it (known_hosts, a key).
const FDS_PER_HOST: libc::rlim_t = 2;

/// How many hosts can really be collected at once: `requested`, bounded by the open-file
/// limit so a wide fan-out never fails hosts with "too many open files". The soft
/// `RLIMIT_NOFILE` is first raised to the hard limit (as the process is allowed to; many
/// systems start shells at a soft 1024 with a hard limit far above), which lets the
/// default fan-out run where it could not otherwise.
pub fn fanout_limit(requested: usize) -> usize {
    let soft = raise_nofile_limit();
    let room = soft.saturating_sub(FD_RESERVE) / FDS_PER_HOST;
    let room = usize::try_from(room).unwrap_or(usize::MAX);
    requested.min(room).max(1)
}

/// Raises the soft open-file limit to the hard one; returns the soft limit in force.
fn raise_nofile_limit() -> libc::rlim_t {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed by pointer, which
    // lives for the whole call.
    #[allow(unsafe_code)]
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    if got != 0 {
        // Unknown: assume the common default rather than nothing.
        return 1024;
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: as above.
        #[allow(unsafe_code)]
        let set = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) };
        if set == 0 {
            lim.rlim_cur = lim.rlim_max;
        }
    }
    lim.rlim_cur
}

/// Environment variable holding the password for all hosts.
pub const PASSWORD_ENV: &str = "PVRDMA_DOCTOR_PASSWORD";

/// What `collect_live` needs; the CLI fills it.
#[derive(Clone)]
pub struct LiveOptions {
    /// Raw positional args; `-` = read stdin.
    pub targets: Vec<String>,
    pub hosts_file: Option<PathBuf>,
    /// `-F`; `None` = `~/.ssh/config` when it exists.
    pub ssh_config: Option<PathBuf>,
    /// `-l/--user`; else config `User`; else root.
    pub login_user: Option<String>,
    /// `-i`, tried before config/default keys.
    pub identity_files: Vec<PathBuf>,
    pub parallel: usize,
    pub connect_timeout: Duration,
    pub command_timeout: Duration,
    pub run_timeout: Option<Duration>,
    pub accept_new: bool,
    pub insecure_skip_host_key_check: bool,
    pub password: Option<SecretString>,
    /// Draw the indicatif bar (the caller decides whether stderr is a terminal).
    pub progress: bool,
    /// Log in only with `-i`/`IdentityFile` keys and the password: no ssh-agent, no
    /// `~/.ssh/id_*` defaults. The demo uses it so the user's own keys are never offered
    /// to a simulated host.
    pub only_given_keys: bool,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            targets: Vec::new(),
            hosts_file: None,
            ssh_config: None,
            login_user: None,
            identity_files: Vec::new(),
            parallel: DEFAULT_PARALLEL,
            connect_timeout: Duration::from_secs(10),
            command_timeout: Duration::from_secs(60),
            run_timeout: None,
            accept_new: false,
            insecure_skip_host_key_check: false,
            password: None,
            progress: false,
            only_given_keys: false,
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
}

/// The password from `PVRDMA_DOCTOR_PASSWORD`, else (with `ask`) from one prompt on the
/// terminal without echo. Never from an argument, never printed.
pub fn read_password(ask: bool) -> anyhow::Result<Option<SecretString>> {
    if let Ok(p) = std::env::var(PASSWORD_ENV) {
        if !p.is_empty() {
            return Ok(Some(SecretString::from(p)));
        }
    }
    if ask {
        let p = rpassword::prompt_password("Password for the ESXi hosts (not echoed): ")
            .context("cannot read the password from the terminal")?;
        return Ok(Some(SecretString::from(p)));
    }
    Ok(None)
}

fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
}

/// Collects every target. See the module doc for what is `Err`.
pub fn collect_live(opts: &LiveOptions) -> anyhow::Result<LiveRun> {
    let started = SystemTime::now();
    let targets = collect_targets(&opts.targets, opts.hosts_file.as_deref(), &mut std::io::stdin().lock())?;
    let home = home_dir();
    let config = match &opts.ssh_config {
        Some(p) => SshConfig::load(p, &home)?,
        None => {
            let p = home.join(".ssh/config");
            if p.is_file() {
                SshConfig::load(&p, &home)?
            } else {
                SshConfig::empty(&home)
            }
        }
    };
    let jobs: Vec<Result<HostJob, Failure>> = targets.iter().map(|t| plan_host(t, opts, &config, &home)).collect();
    if let Some(w) = config_tofu_warning(&jobs) {
        eprintln!("{w}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // Blocking work is short file reads (known_hosts, a key); a few threads serve a
        // whole fleet, where tokio's default (512) may start one thread per host at once,
        // each with its own stack and malloc arena.
        .max_blocking_threads(8)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let labels: Vec<String> = targets.iter().map(HostSpec::label).collect();
    let (captures, interrupted) = runtime.block_on(run_all(jobs, labels, opts));
    // Hosts that hang past every timeout must not keep the process alive.
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(LiveRun {
        captures,
        started,
        finished: SystemTime::now(),
        interrupted,
    })
}

/// The one warning line for a run where ssh_config (not `--accept-new`) makes unknown host
/// keys trusted on first use, naming where; `None` when no host is affected.
pub fn config_tofu_warning(jobs: &[Result<HostJob, Failure>]) -> Option<String> {
    let mut at: Vec<&str> = Vec::new();
    for job in jobs.iter().flatten() {
        for ep in job.jumps.iter().chain(std::iter::once(&job.target)) {
            if let Some(w) = ep.policy.accept_new_from_config.as_deref() {
                if !at.contains(&w) {
                    at.push(w);
                }
            }
        }
    }
    if at.is_empty() {
        return None;
    }
    Some(format!(
        "pvrdma-doctor: WARNING: StrictHostKeyChecking in ssh config ({}) accepts and records unknown host keys without verification; a host seen for the first time could be an impersonator",
        at.join(", ")
    ))
}

/// Turns a target into connection parameters, applying ssh_config and the CLI flags.
pub fn plan_host(spec: &HostSpec, opts: &LiveOptions, config: &SshConfig, home: &Path) -> Result<HostJob, Failure> {
    let label = spec.label();
    let config_failure = |e: crate::ssh::config::ConfigError| {
        Failure::new(
            ErrorKind::Config,
            format!("{label}: ssh config error: {e}; fix the file"),
        )
    };
    let target = endpoint(spec, opts, config, home, true).map_err(config_failure)?;
    let cfg = config
        .resolve_for(&spec.host, cli_user(spec, opts, true).as_deref())
        .map_err(config_failure)?;
    let jumps = jump_chain(cfg.proxy_jump.unwrap_or_default(), &label, opts, config, home, 0)?;
    Ok(HostJob {
        label,
        jumps,
        target,
        credentials: Credentials {
            use_agent: !opts.only_given_keys,
            password: opts.password.clone(),
        },
        connect_timeout: opts.connect_timeout,
        command_timeout: opts.command_timeout,
        channels: DEFAULT_CHANNELS,
    })
}

/// Jump hosts do not nest deeper than this; deeper is a ProxyJump loop in the config.
const MAX_JUMP_DEPTH: usize = 8;

/// The hops to go through, in connection order. A jump host's own `ProxyJump` comes
/// before it, as with ssh.
fn jump_chain(
    hops: Vec<String>,
    label: &str,
    opts: &LiveOptions,
    config: &SshConfig,
    home: &Path,
    depth: usize,
) -> Result<Vec<Endpoint>, Failure> {
    let config_failure = |e: crate::ssh::config::ConfigError| {
        Failure::new(
            ErrorKind::Config,
            format!("{label}: ssh config error: {e}; fix the file"),
        )
    };
    if depth >= MAX_JUMP_DEPTH && !hops.is_empty() {
        return Err(Failure::new(
            ErrorKind::Config,
            format!("{label}: ProxyJump nests more than {MAX_JUMP_DEPTH} deep; check ~/.ssh/config for a loop"),
        ));
    }
    let mut out = Vec::new();
    for hop in hops {
        let spec = parse_host_spec(&hop)
            .map_err(|e| Failure::new(ErrorKind::Config, format!("{label}: bad ProxyJump entry {hop:?}: {e}")))?;
        let inner = config
            .resolve_for(&spec.host, cli_user(&spec, opts, false).as_deref())
            .map_err(config_failure)?
            .proxy_jump
            .unwrap_or_default();
        out.extend(jump_chain(inner, label, opts, config, home, depth + 1)?);
        out.push(endpoint(&spec, opts, config, home, false).map_err(config_failure)?);
    }
    Ok(out)
}

/// The user given on the command line for this host. Precedence as in ssh: user@host,
/// then -l (for the target only: ssh's -l does not apply to jump hosts); the config's
/// `User` and then ESXi's usual root come after.
fn cli_user(spec: &HostSpec, opts: &LiveOptions, is_target: bool) -> Option<String> {
    spec.user
        .clone()
        .or_else(|| if is_target { opts.login_user.clone() } else { None })
}

fn endpoint(
    spec: &HostSpec,
    opts: &LiveOptions,
    config: &SshConfig,
    home: &Path,
    is_target: bool,
) -> Result<Endpoint, crate::ssh::config::ConfigError> {
    let cfg = config.resolve_for(&spec.host, cli_user(spec, opts, is_target).as_deref())?;
    if let Some(at) = &cfg.proxy_command_at {
        // Connecting directly would skip the bastion the admin configured.
        return Err(crate::ssh::config::ConfigError::ProxyCommand { at: at.clone() });
    }
    let user = cli_user(spec, opts, is_target)
        .or(cfg.user.clone())
        .unwrap_or_else(|| "root".to_string());
    let port = spec.port.or(cfg.port).unwrap_or(22);
    let hostname = cfg.hostname.clone().unwrap_or_else(|| spec.host.clone());
    let mut identity_files = opts.identity_files.clone();
    identity_files.extend(cfg.identity_files.iter().cloned());
    if !opts.only_given_keys {
        for d in ["id_ecdsa", "id_rsa", "id_ed25519"] {
            identity_files.push(home.join(".ssh").join(d));
        }
    }
    let mut seen = Vec::new();
    identity_files.retain(|p| {
        let keep = !seen.contains(p);
        seen.push(p.clone());
        keep
    });
    // `none` (an empty list) means no file at all, not the defaults.
    let user_files = cfg
        .user_known_hosts_files
        .clone()
        .unwrap_or_else(|| vec![home.join(".ssh/known_hosts"), home.join(".ssh/known_hosts2")]);
    let global_files = cfg.global_known_hosts_files.clone().unwrap_or_else(|| {
        vec![
            PathBuf::from("/etc/ssh/ssh_known_hosts"),
            PathBuf::from("/etc/ssh/ssh_known_hosts2"),
        ]
    });
    // As in ssh, the config may turn on trust-on-first-use; the run says so (see
    // `config_tofu_warning`) because the admin did not ask for it on this command line.
    let config_tofu = matches!(
        cfg.strict_host_key_checking,
        Some(StrictHostKeyChecking::AcceptNew | StrictHostKeyChecking::No)
    );
    let accept_new = opts.accept_new || config_tofu;
    let accept_new_from_config = if config_tofu && !opts.accept_new {
        cfg.strict_host_key_checking_at.clone()
    } else {
        None
    };
    let learn_to = user_files.first().map(|p| expand_tilde(&p.to_string_lossy(), home));
    let mut known_hosts = user_files;
    known_hosts.extend(global_files);
    Ok(Endpoint {
        // A jump host's failure lands in the target's report: say it is the jump host.
        label: if is_target {
            format!("{}:{port}", spec.host)
        } else {
            format!("jump host {}:{port}", spec.host)
        },
        hostname,
        port,
        user,
        identity_files,
        identities_only: cfg.identities_only.unwrap_or(false),
        policy: HostKeyPolicy {
            known_hosts,
            learn_to,
            accept_new,
            accept_new_from_config,
            insecure: opts.insecure_skip_host_key_check,
            host_key_alias: cfg.host_key_alias.clone(),
        },
    })
}

struct Progress {
    bar: Option<indicatif::ProgressBar>,
    in_flight: Mutex<BTreeMap<String, Stage>>,
}

impl Progress {
    fn new(total: usize, enabled: bool) -> Self {
        let bar = enabled.then(|| {
            let bar =
                indicatif::ProgressBar::with_draw_target(Some(total as u64), indicatif::ProgressDrawTarget::stderr());
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {pos}/{len} hosts done  {wide_msg}",
            ) {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Progress {
            bar,
            in_flight: Mutex::new(BTreeMap::new()),
        }
    }

    fn stage(&self, host: &str, stage: Stage) {
        let Some(bar) = &self.bar else { return };
        let Ok(mut m) = self.in_flight.lock() else {
            return;
        };
        if stage == Stage::Done {
            m.remove(host);
        } else {
            m.insert(host.to_string(), stage);
        }
        let msg: Vec<String> = m
            .iter()
            .take(6)
            .map(|(h, s)| {
                let s = match s {
                    Stage::Connecting => "connecting",
                    Stage::Collecting => "collecting",
                    Stage::Done => "done",
                };
                format!("{h}: {s}")
            })
            .collect();
        let more = m.len().saturating_sub(6);
        bar.set_message(if more > 0 {
            format!("{} (+{more} more)", msg.join(", "))
        } else {
            msg.join(", ")
        });
    }

    fn host_done(&self, host: &str) {
        self.stage(host, Stage::Done);
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

async fn run_all(
    jobs: Vec<Result<HostJob, Failure>>,
    labels: Vec<String>,
    opts: &LiveOptions,
) -> (Vec<HostCapture>, bool) {
    let progress = Arc::new(Progress::new(jobs.len(), opts.progress));
    let slots = Arc::new(tokio::sync::Semaphore::new(fanout_limit(opts.parallel)));
    let mut results: Vec<Option<HostCapture>> = jobs.iter().map(|_| None).collect();
    let sinks: Vec<Sink> = jobs.iter().map(|_| Sink::default()).collect();
    let mut set = tokio::task::JoinSet::new();
    for (i, job) in jobs.into_iter().enumerate() {
        let job = match job {
            Ok(j) => j,
            Err(f) => {
                let label = labels.get(i).cloned().unwrap_or_default();
                if let Some(slot) = results.get_mut(i) {
                    *slot = Some(HostCapture::failed(label, CaptureSource::Live, f));
                }
                continue;
            }
        };
        let slots = slots.clone();
        let progress = progress.clone();
        let sink = sinks.get(i).cloned().unwrap_or_default();
        set.spawn(async move {
            let _permit = slots.acquire_owned().await.ok();
            let label = job.label.clone();
            let p = progress.clone();
            let on_stage = move |s: Stage| p.stage(&label, s);
            let capture = collect_host(&job, &on_stage, &sink).await;
            progress.host_done(&job.label);
            (i, capture)
        });
    }
    let deadline = async {
        match opts.run_timeout {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut stop: Option<Failure> = None;
    let mut interrupted = false;
    loop {
        tokio::select! {
            next = set.join_next() => match next {
                Some(Ok((i, capture))) => {
                    if let Some(slot) = results.get_mut(i) { *slot = Some(capture); }
                }
                // A panicking host task is a bug; its slot is filled below as Internal.
                Some(Err(_)) => {}
                None => break,
            },
            _ = &mut deadline => {
                stop = Some(Failure::new(ErrorKind::Timeout, format!(
                    "the whole run hit --timeout {}s before this host finished; raise --timeout or check the host",
                    opts.run_timeout.map(|d| d.as_secs()).unwrap_or(0))));
                break;
            }
            _ = &mut ctrl_c => {
                interrupted = true;
                stop = Some(Failure::new(ErrorKind::Interrupted,
                    "collection was stopped by Ctrl-C before this host finished"));
                break;
            }
        }
    }
    set.abort_all();
    progress.finish();
    let captures = results
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let label = labels.get(i).cloned().unwrap_or_default();
            c.unwrap_or_else(|| {
                let f = stop
                    .clone()
                    .map(|f| Failure::new(f.kind, format!("{label}: {}", f.message)))
                    .unwrap_or_else(|| {
                        Failure::new(
                            ErrorKind::Internal,
                            format!("{label}: collection task failed unexpectedly; please report this bug"),
                        )
                    });
                // Keep what this host had already answered: a partial capture is still
                // evidence, and the missing ids say why they are missing.
                let mut capture = HostCapture::failed(label, CaptureSource::Live, f.clone());
                if let Some(done) = sinks.get(i).and_then(|s| s.lock().ok().map(|m| m.clone())) {
                    capture.outputs = done;
                }
                for spec in crate::catalogue::CATALOGUE {
                    if !capture.outputs.contains_key(spec.id) {
                        capture.missing.insert(spec.id.to_string(), f.clone());
                    }
                }
                capture
            })
        })
        .collect();
    (captures, interrupted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    #[test]
    fn precedence_of_user_port_keys_and_known_hosts() {
        let home = tempfile::tempdir().unwrap();
        let cfg_path = home.path().join("config");
        std::fs::write(
            &cfg_path,
            "Host esx01\n  HostName 10.1.1.1\n  User cfguser\n  Port 2222\n  IdentityFile ~/.ssh/lab_rsa\n  ProxyJump jumper@bastion:2200\nHost bastion\n  ProxyJump ssh://outer.example:2022/\nHost loop\n  ProxyJump loop\n",
        )
        .unwrap();
        let config = SshConfig::load(&cfg_path, home.path()).unwrap();
        let opts = LiveOptions {
            identity_files: vec![PathBuf::from("/keys/cli_ecdsa")],
            login_user: Some("cliuser".into()),
            ..LiveOptions::default()
        };
        let plan = |spec: &str| {
            let s = crate::target::parse_host_spec(spec).unwrap();
            plan_host(&s, &opts, &config, home.path()).unwrap()
        };
        let job = plan("esx01");
        assert_eq!(job.label, "esx01");
        assert_eq!(job.target.hostname, "10.1.1.1");
        assert_eq!(job.target.port, 2222);
        assert_eq!(job.target.user, "cliuser", "-l beats the config");
        assert_eq!(
            job.target.identity_files,
            vec![
                PathBuf::from("/keys/cli_ecdsa"),
                home.path().join(".ssh/lab_rsa"),
                home.path().join(".ssh/id_ecdsa"),
                home.path().join(".ssh/id_rsa"),
                home.path().join(".ssh/id_ed25519"),
            ]
        );
        assert_eq!(
            job.target.policy.known_hosts.first(),
            Some(&home.path().join(".ssh/known_hosts"))
        );
        assert!(job
            .target
            .policy
            .known_hosts
            .contains(&PathBuf::from("/etc/ssh/ssh_known_hosts")));
        assert!(!job.target.policy.accept_new && !job.target.policy.insecure);
        // bastion's own ProxyJump (outer) comes first.
        let [outer, jump] = job.jumps.as_slice() else {
            panic!("two jumps expected: {:?}", job.jumps)
        };
        assert_eq!((outer.hostname.as_str(), outer.port), ("outer.example", 2022));
        assert_eq!((jump.hostname.as_str(), jump.port), ("bastion", 2200));
        assert_eq!(jump.user, "jumper");
        assert_eq!(jump.label, "jump host bastion:2200");

        let job = plan("admin@esx01:22");
        assert_eq!((job.target.user.as_str(), job.target.port), ("admin", 22));
        assert_eq!(job.label, "esx01:22");

        let s = crate::target::parse_host_spec("loop").unwrap();
        let err = plan_host(&s, &opts, &config, home.path()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Config);
        assert!(err.message.contains("loop"), "{}", err.message);

        let bare = LiveOptions::default();
        let s = crate::target::parse_host_spec("esx02").unwrap();
        let job = plan_host(&s, &bare, &config, home.path()).unwrap();
        assert_eq!((job.target.user.as_str(), job.target.port), ("root", 22));
        assert!(job.jumps.is_empty());
    }

    #[test]
    fn config_accept_new_is_warned_about_once_naming_the_line() {
        let home = tempfile::tempdir().unwrap();
        let cfg_path = home.path().join("config");
        std::fs::write(
            &cfg_path,
            "Host esx*\n  StrictHostKeyChecking accept-new\nHost db*\n  StrictHostKeyChecking yes\n",
        )
        .unwrap();
        let config = SshConfig::load(&cfg_path, home.path()).unwrap();
        let plan = |specs: &[&str], opts: &LiveOptions| -> Vec<Result<HostJob, Failure>> {
            specs
                .iter()
                .map(|s| plan_host(&crate::target::parse_host_spec(s).unwrap(), opts, &config, home.path()))
                .collect()
        };
        let opts = LiveOptions::default();
        let jobs = plan(&["esx01", "esx02", "db1"], &opts);
        assert!(jobs
            .iter()
            .flatten()
            .all(|j| j.target.policy.accept_new == j.label.starts_with("esx")));
        let w = config_tofu_warning(&jobs).expect("warning");
        assert!(w.contains(&format!("{}:2", cfg_path.display())), "{w}");
        assert_eq!(w.matches(":2").count(), 1, "{w}");
        assert_eq!(w.lines().count(), 1);
        assert!(config_tofu_warning(&plan(&["db1"], &opts)).is_none());
        // --accept-new was asked for: nothing to warn about.
        let asked = LiveOptions {
            accept_new: true,
            ..LiveOptions::default()
        };
        assert!(config_tofu_warning(&plan(&["esx01"], &asked)).is_none());
    }

    #[test]
    fn known_hosts_file_none_means_no_file_not_the_defaults() {
        let home = tempfile::tempdir().unwrap();
        let cfg_path = home.path().join("config");
        std::fs::write(
            &cfg_path,
            "Host esx01\n  UserKnownHostsFile /kh/fleet\n  GlobalKnownHostsFile none\nHost esx02\n  UserKnownHostsFile none\n",
        )
        .unwrap();
        let config = SshConfig::load(&cfg_path, home.path()).unwrap();
        let plan = |s: &str| {
            let spec = crate::target::parse_host_spec(s).unwrap();
            plan_host(&spec, &LiveOptions::default(), &config, home.path()).unwrap()
        };
        let one = plan("esx01");
        assert_eq!(one.target.policy.known_hosts, vec![PathBuf::from("/kh/fleet")]);
        assert_eq!(one.target.policy.learn_to, Some(PathBuf::from("/kh/fleet")));
        let two = plan("esx02");
        assert_eq!(
            two.target.policy.known_hosts,
            vec![
                PathBuf::from("/etc/ssh/ssh_known_hosts"),
                PathBuf::from("/etc/ssh/ssh_known_hosts2")
            ]
        );
        assert_eq!(two.target.policy.learn_to, None);
    }

    #[test]
    fn proxycommand_fails_the_host_instead_of_connecting_directly() {
        let home = tempfile::tempdir().unwrap();
        let cfg_path = home.path().join("config");
        std::fs::write(
            &cfg_path,
            "Host esx01\n  ProxyCommand ssh -W %h:%p bastion\nHost esx02\n  ProxyJump bastion\n  ProxyCommand nc %h %p\nHost bastion\n  ProxyCommand none\nHost esx*\n  HostKeyAlias esx-key\n",
        )
        .unwrap();
        let config = SshConfig::load(&cfg_path, home.path()).unwrap();
        let plan = |s: &str| {
            let spec = crate::target::parse_host_spec(s).unwrap();
            plan_host(&spec, &LiveOptions::default(), &config, home.path())
        };
        let err = plan("esx01").unwrap_err();
        assert_eq!(err.kind, ErrorKind::Config);
        assert!(
            err.message.contains(&format!("{}:2", cfg_path.display()))
                && err.message.contains("ProxyCommand is not supported")
                && err.message.contains("ProxyJump"),
            "{}",
            err.message
        );
        // ProxyJump came first: ProxyCommand is ignored, as by ssh.
        let job = plan("esx02").unwrap();
        assert_eq!(job.jumps.len(), 1);
        assert_eq!(job.target.policy.host_key_alias.as_deref(), Some("esx-key"));
        assert_eq!(job.target.policy.key_name("10.0.0.2", 2222), ("esx-key", 22));
        assert!(plan("bastion").is_ok(), "ProxyCommand none");
    }

    #[test]
    fn fanout_is_bounded_by_the_open_file_limit() {
        let n = fanout_limit(usize::MAX);
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        assert_eq!(lim.rlim_cur, lim.rlim_max, "soft limit raised to the hard one");
        assert_eq!(n as libc::rlim_t, (lim.rlim_cur - FD_RESERVE) / FDS_PER_HOST);
        assert_eq!(fanout_limit(3), 3);
        assert_eq!(fanout_limit(0), 1);
    }

    #[test]
    fn password_comes_from_the_environment() {
        std::env::set_var(PASSWORD_ENV, "s3cret");
        let got = read_password(false).unwrap();
        std::env::remove_var(PASSWORD_ENV);
        assert_eq!(got.as_ref().map(|p| p.expose_secret()), Some("s3cret"));
        assert!(read_password(false).unwrap().is_none());
    }
}
