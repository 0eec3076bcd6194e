//! The main job, live: from host arguments to one [`HostCapture`] per host, collected
//! concurrently over SSH, with every timeout bounded and Ctrl-C still yielding a report.
//!
//! Usage errors (a bad host spec, an unreadable hosts file or `-F` file) are `Err` because
//! nothing sensible can run; everything that goes wrong on a host is data in its capture,
//! so one dead host never hides the others.
use crate::collect::ssh::{collect_host_open, HostJob, Sink, Stage, DEFAULT_CHANNELS};
use crate::collect::{CaptureSource, ErrorKind, Failure, HostCapture};
use crate::ssh::client::Credentials;
use crate::ssh::config::{CommandLineOptions, SshConfig};
use crate::ssh::plan::{Flags, Planner};
use crate::target::{collect_targets, HostSpec};
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

/// OpenSSH's system-wide client config.
pub const SYSTEM_SSH_CONFIG: &str = "/etc/ssh/ssh_config";

/// Environment variable naming another system-wide ssh_config (for tests and packagers
/// whose OpenSSH lives elsewhere).
pub const SYSTEM_SSH_CONFIG_ENV: &str = "PVRDMA_DOCTOR_SYSTEM_SSH_CONFIG";

/// [`SYSTEM_SSH_CONFIG`], or the file [`SYSTEM_SSH_CONFIG_ENV`] names.
pub fn system_ssh_config_path() -> PathBuf {
    std::env::var_os(SYSTEM_SSH_CONFIG_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(SYSTEM_SSH_CONFIG))
}

/// What `collect_live` needs; the CLI fills it.
#[derive(Clone)]
pub struct LiveOptions {
    /// Raw positional args; `-` = read stdin.
    pub targets: Vec<String>,
    pub hosts_file: Option<PathBuf>,
    /// `-F`; `None` = `~/.ssh/config` then `system_ssh_config`, each when it exists.
    pub ssh_config: Option<PathBuf>,
    /// The system-wide ssh_config read after the user's (not with `-F`, as with ssh).
    /// Tests point it at a temporary file.
    pub system_ssh_config: PathBuf,
    /// `-p`, `-J` and `-o Key=Value`, for the targets.
    pub ssh_options: CommandLineOptions,
    /// `-l/--user`; else config `User`; else root.
    pub login_user: Option<String>,
    /// `-i`, tried before config/default keys.
    pub identity_files: Vec<PathBuf>,
    pub parallel: usize,
    pub connect_timeout: Duration,
    pub command_timeout: Duration,
    /// `--host-output-budget`: most bytes kept per host, all outputs together.
    pub host_output_budget: usize,
    /// `--total-output-budget`: most bytes kept for all hosts together.
    pub total_output_budget: usize,
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
    /// `--probe`: after collection, ping between the hosts' PVRDMA vmknics.
    pub probe: Option<crate::probe::ProbeOptions>,
}

/// Above this many hosts, probing every pair is worth a hint about `--probe-sample`.
const PROBE_ALL_PAIRS_WARN: usize = 64;

/// Connections kept open between collection and the probe phase, at most; hosts beyond
/// log in again for the probe, so a large fleet never holds more descriptors than this.
pub const PROBE_KEEP_OPEN: usize = 256;

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            targets: Vec::new(),
            hosts_file: None,
            ssh_config: None,
            system_ssh_config: system_ssh_config_path(),
            ssh_options: CommandLineOptions::default(),
            login_user: None,
            identity_files: Vec::new(),
            parallel: DEFAULT_PARALLEL,
            connect_timeout: Duration::from_secs(10),
            command_timeout: Duration::from_secs(60),
            host_output_budget: crate::collect::DEFAULT_HOST_BUDGET,
            total_output_budget: crate::collect::DEFAULT_TOTAL_BUDGET,
            run_timeout: None,
            accept_new: false,
            insecure_skip_host_key_check: false,
            password: None,
            progress: false,
            only_given_keys: false,
            probe: None,
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
    pub local_values: crate::redact::LocalValues,
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
    check_identity_files(&opts.identity_files)?;
    let config = load_config(opts.ssh_config.as_deref(), &opts.system_ssh_config, &home)?;
    let mut jobs: Vec<Result<HostJob, Failure>> = targets.iter().map(|t| plan_host(t, opts, &config, &home)).collect();
    share_run_budget(&mut jobs, opts.total_output_budget);
    let local_values = local_values(&jobs, opts, &home);
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
        local_values,
    })
}

/// The admin's own paths and the login users, which SSH messages may name.
fn local_values(jobs: &[Result<HostJob, Failure>], opts: &LiveOptions, home: &Path) -> crate::redact::LocalValues {
    let mut v = crate::redact::LocalValues::default();
    let mut path = |p: &Path| v.paths.push(p.display().to_string());
    path(home);
    path(&home.join(".ssh/config"));
    path(&opts.system_ssh_config);
    for p in opts.ssh_config.iter().chain(&opts.identity_files) {
        path(p);
    }
    for job in jobs.iter().flatten() {
        for ep in job.jumps.iter().chain(std::iter::once(&job.target)) {
            for id in &ep.identity_files {
                path(&id.path);
            }
            v.users.push(ep.user.clone());
        }
    }
    if let Some(u) = &opts.login_user {
        v.users.push(u.clone());
    }
    v
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

/// One `--total-output-budget` for every host of this run.
pub fn share_run_budget(jobs: &mut [Result<HostJob, Failure>], bytes: usize) {
    let pool = crate::collect::ssh::RunBudget::new(bytes);
    for job in jobs.iter_mut().flatten() {
        job.run_budget = pool.clone();
    }
}

/// As ssh warns about an `-i` file it cannot read, this stops the run before any host is
/// tried with fewer keys than the admin meant. A missing private key whose `.pub` is there
/// is fine: its private half can be in the ssh-agent (the IdentitiesOnly idiom).
pub fn check_identity_files(files: &[PathBuf]) -> anyhow::Result<()> {
    for p in files {
        if let Err(e) = std::fs::File::open(p) {
            let mut public = p.clone().into_os_string();
            public.push(".pub");
            if e.kind() == std::io::ErrorKind::NotFound && Path::new(&public).is_file() {
                continue;
            }
            return Err(e).with_context(|| format!("-i {}: cannot read the key file", p.display()));
        }
    }
    Ok(())
}

/// The ssh_config as ssh reads it: only `-F FILE` when given, else `~/.ssh/config` then
/// the system-wide file, each when it exists.
pub fn load_config(f_flag: Option<&Path>, system: &Path, home: &Path) -> anyhow::Result<SshConfig> {
    Ok(match f_flag {
        Some(p) => SshConfig::load(p, home)?,
        None => SshConfig::load_user_and_system(&home.join(".ssh/config"), system, home)?,
    })
}

/// The connection flags of a run.
fn flags(opts: &LiveOptions) -> Flags {
    Flags {
        login_user: opts.login_user.clone(),
        identity_files: opts.identity_files.clone(),
        options: opts.ssh_options.clone(),
        accept_new: opts.accept_new,
        insecure_skip_host_key_check: opts.insecure_skip_host_key_check,
        only_given_keys: opts.only_given_keys,
    }
}

/// Turns a target into connection parameters, applying the CLI flags and ssh_config.
pub fn plan_host(spec: &HostSpec, opts: &LiveOptions, config: &SshConfig, home: &Path) -> Result<HostJob, Failure> {
    let label = spec.label();
    let flags = flags(opts);
    let planner = Planner {
        config,
        home,
        flags: &flags,
    };
    let route = planner
        .route(spec)
        .map_err(|e| Failure::new(ErrorKind::Config, format!("{label}: {e}")))?;
    Ok(HostJob {
        label,
        jumps: route.jumps,
        target: route.target,
        credentials: Credentials {
            use_agent: !opts.only_given_keys,
            password: opts.password.clone(),
        },
        connect_timeout: opts.connect_timeout,
        command_timeout: opts.command_timeout,
        host_output_budget: opts.host_output_budget,
        run_budget: crate::collect::ssh::RunBudget::new(opts.total_output_budget),
        channels: DEFAULT_CHANNELS,
    })
}

struct Progress {
    bar: Option<indicatif::ProgressBar>,
    in_flight: Mutex<BTreeMap<String, Stage>>,
    /// Set once the bar is cleared: a host task still running (after Ctrl-C or the run
    /// timeout) must not draw it again over the report.
    finished: std::sync::atomic::AtomicBool,
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
            finished: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn stage(&self, host: &str, stage: Stage) {
        let Some(bar) = &self.bar else { return };
        if self.finished.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
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
        if self.finished.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    fn finish(&self) {
        self.finished.store(true, std::sync::atomic::Ordering::SeqCst);
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
    // The probe phase needs each host's job again and, where kept, its open connection.
    let probing = opts.probe.is_some();
    let probe_jobs: Vec<Option<HostJob>> = jobs.iter().map(|j| j.as_ref().ok().cloned()).collect();
    let mut conns: Vec<Option<crate::ssh::client::Connection>> = jobs.iter().map(|_| None).collect();
    let kept = Arc::new(std::sync::atomic::AtomicUsize::new(0));
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
        let kept = kept.clone();
        set.spawn(async move {
            let _permit = slots.acquire_owned().await.ok();
            let label = job.label.clone();
            let p = progress.clone();
            let on_stage = move |s: Stage| p.stage(&label, s);
            let (capture, conn) = collect_host_open(&job, &on_stage, &sink).await;
            let conn = match conn {
                Some(c) if probing && kept.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < PROBE_KEEP_OPEN => {
                    Some(c)
                }
                Some(c) => {
                    c.close().await;
                    None
                }
                None => None,
            };
            progress.host_done(&job.label);
            (i, capture, conn)
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
                Some(Ok((i, capture, conn))) => {
                    if let Some(slot) = results.get_mut(i) { *slot = Some(capture); }
                    if let Some(slot) = conns.get_mut(i) { *slot = conn; }
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
    let mut captures: Vec<HostCapture> = results
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
                if let Some(done) = sinks
                    .get(i)
                    .and_then(|s| s.lock().ok().map(|mut m| std::mem::take(&mut *m)))
                {
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
    if let Some(probe) = opts.probe {
        match &stop {
            None => {
                let (_, int) = probe_phase(
                    &mut captures,
                    probe_jobs,
                    conns,
                    probe,
                    opts,
                    &mut deadline,
                    &mut ctrl_c,
                )
                .await;
                interrupted |= int;
            }
            // Collection itself was stopped: the plan still shows which pairs were not probed.
            Some(f) => {
                let sinks: Vec<crate::collect::probe::ProbeSink> =
                    captures.iter().map(|_| Default::default()).collect();
                let lines = crate::collect::probe::plan_lines(&captures, probe, &sinks);
                for ((c, sink), todo) in captures.iter_mut().zip(&sinks).zip(&lines) {
                    c.probe = Some(crate::collect::probe::finish(sink, todo, Some(f)));
                }
            }
        }
    }
    (captures, interrupted)
}

/// The `--probe` phase after collection, bounded by the same run deadline and Ctrl-C.
/// Returns why it was stopped (if it was) and whether that was Ctrl-C.
async fn probe_phase(
    captures: &mut [HostCapture],
    jobs: Vec<Option<HostJob>>,
    conns: Vec<Option<crate::ssh::client::Connection>>,
    probe: crate::probe::ProbeOptions,
    opts: &LiveOptions,
    deadline: &mut std::pin::Pin<&mut impl std::future::Future<Output = ()>>,
    ctrl_c: &mut std::pin::Pin<&mut impl std::future::Future<Output = std::io::Result<()>>>,
) -> (Option<Failure>, bool) {
    use crate::collect::probe::{finish, plan_lines, run, ProbeHost, ProbeSink};
    let sinks: Vec<ProbeSink> = captures.iter().map(|_| ProbeSink::default()).collect();
    let lines = plan_lines(captures, probe, &sinks);
    let total: usize = lines.iter().map(Vec::len).sum();
    if probe.sample.is_none() && captures.len() > PROBE_ALL_PAIRS_WARN {
        eprintln!(
            "pvrdma-doctor: --probe on {} hosts pings every pair ({total} probes); --probe-sample K bounds it to K peers per host",
            captures.len()
        );
    }
    if opts.progress && total > 0 {
        eprintln!("pvrdma-doctor: probing {total} vmknic pairs (vmkping, about 3 s each, 8 at once per host)");
    }
    let hosts: Vec<ProbeHost> = jobs
        .into_iter()
        .zip(conns)
        .zip(&sinks)
        .map(|((job, conn), sink)| ProbeHost {
            job,
            conn,
            sink: sink.clone(),
        })
        .collect();
    let mut stop = None;
    let mut interrupted = false;
    tokio::select! {
        _ = run(hosts, lines.clone(), opts.parallel) => {}
        _ = deadline.as_mut() => {
            stop = Some(Failure::new(ErrorKind::Timeout, format!(
                "the whole run hit --timeout {}s during the path probe; raise --timeout",
                opts.run_timeout.map(|d| d.as_secs()).unwrap_or(0))));
        }
        _ = ctrl_c.as_mut() => {
            interrupted = true;
            stop = Some(Failure::new(ErrorKind::Interrupted, "the path probe was stopped by Ctrl-C"));
        }
    }
    for ((c, sink), todo) in captures.iter_mut().zip(&sinks).zip(&lines) {
        c.probe = Some(finish(sink, todo, stop.as_ref()));
    }
    (stop, interrupted)
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
            job.target
                .identity_files
                .iter()
                .map(|i| i.path.clone())
                .collect::<Vec<_>>(),
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
