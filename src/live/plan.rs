//! From targets and options to connection plans: ssh_config, identity files, budgets, warnings.
use super::*;

/// The admin's own paths and the login users, which SSH messages may name.
pub(super) fn local_values(
    jobs: &[Result<HostJob, Failure>],
    opts: &LiveOptions,
    home: &Path,
) -> crate::redact::LocalValues {
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
pub(crate) fn config_tofu_warning(jobs: &[Result<HostJob, Failure>]) -> Option<String> {
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

/// One output budget (`--total-output-budget`) and one reading of the identity files for
/// every host of this run.
pub(crate) fn share_run_budget(
    jobs: &mut [Result<HostJob, Failure>],
    pool: &Arc<crate::collect::ssh::RunBudget>,
    keys: &Arc<crate::ssh::key_files::KeyFiles>,
) {
    for job in jobs.iter_mut().flatten() {
        job.run_budget = pool.clone();
        job.credentials.keys = keys.clone();
    }
}

/// As ssh warns about an `-i` file it cannot read, this stops the run before any host is
/// tried with fewer keys than the admin meant. A missing private key whose `.pub` is there
/// is fine: its private half can be in the ssh-agent (the IdentitiesOnly idiom).
pub(crate) fn check_identity_files(files: &[PathBuf]) -> anyhow::Result<()> {
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

/// The ssh_config as ssh reads it: only `-F FILE` when given (`-F none`: no file), else
/// `~/.ssh/config` then the system-wide file, each when it exists.
pub(crate) fn load_config(f_flag: Option<&Path>, system: &Path, home: &Path) -> anyhow::Result<SshConfig> {
    let local = LocalContext::current(home);
    Ok(match f_flag {
        Some(p) => SshConfig::load(p, local)?,
        None => SshConfig::load_user_and_system(&home.join(".ssh/config"), system, local),
    })
}

/// When every host fails on the same ssh config error (a misspelled keyword, a bad
/// `Match` line), the file is what is wrong, as `ssh` refuses it whatever the host: one
/// error for the run rather than the same line under every host.
pub(crate) fn refuse_a_config_no_host_can_use(
    targets: &[HostSpec],
    jobs: &[Result<HostJob, Failure>],
) -> anyhow::Result<()> {
    let mut common: Option<&str> = None;
    for (t, job) in targets.iter().zip(jobs) {
        let Err(f) = job else {
            return Ok(());
        };
        let prefix = format!("{}: ", t.label());
        let Some(message) = f.message.strip_prefix(&prefix).filter(|_| f.kind == ErrorKind::Config) else {
            return Ok(());
        };
        if common.is_some_and(|c| c != message) {
            return Ok(());
        }
        common = Some(message);
    }
    match common {
        Some(m) => anyhow::bail!("{m}"),
        None => Ok(()),
    }
}

/// The connection flags of a run.
pub(super) fn flags(opts: &LiveOptions) -> Flags {
    Flags {
        identity_files: opts.identity_files.clone(),
        options: opts.ssh_options.clone(),
        host_positions: opts.target_positions.clone(),
        hosts_file_position: opts.hosts_file_position,
        accept_new: opts.accept_new,
        insecure_skip_host_key_check: opts.insecure_skip_host_key_check,
        only_given_keys: opts.only_given_keys,
    }
}

/// How long a whole login may take: `--connect-timeout` when given; else the default,
/// or the target's `ConnectTimeout` when that is longer (it bounds each hop's connect and
/// handshake on its own, so a shorter one still ends a dead host's login early).
pub(super) fn login_limit(
    opts: &LiveOptions,
    configured: Option<std::time::Duration>,
) -> crate::collect::ssh::ConnectLimit {
    let (limit, from_ssh_config) = match (opts.connect_timeout, configured) {
        (Some(given), _) => (given, false),
        (None, Some(c)) if c > super::DEFAULT_CONNECT_TIMEOUT => (c, true),
        (None, _) => (super::DEFAULT_CONNECT_TIMEOUT, false),
    };
    crate::collect::ssh::ConnectLimit {
        limit,
        option: opts.connect_timeout_option,
        from_ssh_config,
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
        .map_err(|e| Failure::of_host(ErrorKind::Config, &label, e.to_string()))?;
    let connect_timeout = login_limit(opts, route.target.connect_timeout);
    Ok(HostJob {
        label,
        jumps: route.jumps,
        target: route.target,
        credentials: Credentials {
            use_agent: !opts.only_given_keys,
            password: opts.password.clone(),
            keys: Default::default(),
        },
        connect_timeout,
        command_timeout: opts.command_timeout,
        host_output_budget: opts.host_output_budget,
        run_budget: crate::collect::ssh::RunBudget::new(opts.total_output_budget),
        channels: DEFAULT_CHANNELS,
    })
}
