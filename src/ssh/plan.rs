//! From a host argument to a route: the target and the jump hosts, each resolved as
//! OpenSSH resolves them (command line, then user config, then system config; the first
//! value obtained wins). A jump host is reached as ssh reaches it: ssh runs
//! `ssh [-l user] [-p port] [-J earlier,hops] jump` for the last hop of a `ProxyJump`
//! list, so that hop's own `ProxyJump` is replaced by the earlier hops, and only the
//! first hop of a list follows its own config.
use crate::hosts::HostSpec;
use crate::ssh::endpoint::{Endpoint, HostKeyPolicy, Identity, KeyOrigin};
use pvrdma_ssh_config::{
    expand_tilde, CommandLineOptions, ConfigError, HostArg, HostConfig, JumpHost, SshConfig, StrictHostKeyChecking,
};
use std::path::{Path, PathBuf};

/// Jump hosts do not nest deeper than this; deeper is a ProxyJump loop in the config
/// (ssh itself would start one ssh inside another without end).
const MAX_JUMP_DEPTH: usize = 8;

/// What the command line says about connecting, for every host of the run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Flags {
    /// `-i`, tried before the config's and the default keys, on the target only: ssh
    /// reaches a jump host with `ssh -W` without passing `-i` on.
    pub(crate) identity_files: Vec<PathBuf>,
    /// `-l`, `-p`, `-J`, `-o` in command-line order: obtained first for the target (ssh
    /// does not pass them to the jump hosts).
    pub(crate) options: CommandLineOptions,
    /// Where each host argument stood on the command line (by its index among the
    /// arguments), and where `--hosts-file` did, for "the first value given wins".
    pub(crate) host_positions: Vec<usize>,
    pub(crate) hosts_file_position: usize,
    pub(crate) accept_new: bool,
    pub(crate) insecure_skip_host_key_check: bool,
    /// No `~/.ssh/id_*` defaults (the demo).
    pub(crate) only_given_keys: bool,
}

/// The hops to go through, in connection order, then the target.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    pub(crate) jumps: Vec<Endpoint>,
    pub(crate) target: Endpoint,
}

/// Why a route could not be planned.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PlanError {
    #[error("ssh config error: {0}; fix the file")]
    Config(#[from] ConfigError),
    #[error("ProxyJump nests more than {MAX_JUMP_DEPTH} deep; check the ssh config for a loop")]
    TooDeep,
}

/// Plans routes for one run.
pub(crate) struct Planner<'a> {
    pub(crate) config: &'a SshConfig,
    pub(crate) home: &'a Path,
    pub(crate) flags: &'a Flags,
}

impl Planner<'_> {
    /// The route to `spec`.
    pub(crate) fn route(&self, spec: &HostSpec) -> Result<Route, PlanError> {
        let position = match spec.arg {
            Some(i) => self.flags.host_positions.get(i).copied().unwrap_or(usize::MAX),
            None => self.flags.hosts_file_position,
        };
        let arg = HostArg {
            host: &spec.host,
            user: spec.user.as_deref(),
            port: spec.port,
            position,
        };
        let cfg = self.config.resolve(&arg, &self.flags.options)?;
        let target = self.endpoint(&cfg, true)?;
        let jumps = self.jump_chain(cfg.jump.as_ref(), 0)?;
        Ok(Route { jumps, target })
    }

    /// The hops before a host whose jump host is `jump`, in connection order.
    fn jump_chain(&self, jump: Option<&JumpHost>, depth: usize) -> Result<Vec<Endpoint>, PlanError> {
        let Some(j) = jump else {
            return Ok(Vec::new());
        };
        if depth >= MAX_JUMP_DEPTH {
            return Err(PlanError::TooDeep);
        }
        let cfg = self.config.resolve_jump(j)?;
        let mut out = self.jump_chain(cfg.jump.as_ref(), depth + 1)?;
        out.push(self.endpoint(&cfg, false)?);
        Ok(out)
    }

    fn endpoint(&self, cfg: &HostConfig, is_target: bool) -> Result<Endpoint, PlanError> {
        let home = self.home;
        if let Some(e) = &cfg.identity_file_error {
            return Err(ConfigError::Refused(e.clone()).into());
        }
        if let Some((_, at)) = &cfg.proxy_command {
            // Connecting directly would skip the bastion the admin configured.
            return Err(ConfigError::ProxyCommand { at: at.clone() }.into());
        }
        let mut identity_files: Vec<Identity> = Vec::new();
        let mut add = |path: PathBuf, origin: KeyOrigin| {
            if !identity_files.iter().any(|i| i.path == path) {
                identity_files.push(Identity { path, origin });
            }
        };
        // A jump host is offered only its own keys, as ssh offers them: the `IdentityFile`s
        // its own configuration gives it, or the default keys when it has none; `-i` is
        // the target's. Offering a bastion every key of the run could use up its
        // `MaxAuthTries` before its own key came.
        if is_target {
            for p in &self.flags.identity_files {
                add(p.clone(), KeyOrigin::CommandLine);
            }
        }
        for p in &cfg.identity_files {
            add(p.clone(), KeyOrigin::Config);
        }
        if !self.flags.only_given_keys && (is_target || cfg.identity_files.is_empty()) {
            for d in ["id_ecdsa", "id_rsa", "id_ed25519"] {
                add(home.join(".ssh").join(d), KeyOrigin::Default);
            }
        }
        // As in ssh, the config may turn on trust-on-first-use; the run says so (see
        // `live::config_tofu_warning`) because the admin did not ask for it here.
        let config_tofu = matches!(
            cfg.strict_host_key_checking,
            Some(StrictHostKeyChecking::AcceptNew | StrictHostKeyChecking::No)
        );
        let accept_new = self.flags.accept_new || config_tofu;
        let accept_new_from_config = if config_tofu && !self.flags.accept_new {
            cfg.strict_host_key_checking_at.clone()
        } else {
            None
        };
        let learn_to = cfg
            .user_known_hosts_files
            .first()
            .map(|p| expand_tilde(&p.to_string_lossy(), home));
        let mut known_hosts = cfg.user_known_hosts_files.clone();
        known_hosts.extend(cfg.global_known_hosts_files.iter().cloned());
        let port = cfg.port;
        Ok(Endpoint {
            // A jump host's failure lands in the target's report: say it is the jump host.
            label: if is_target {
                format!("{}:{port}", cfg.host_arg)
            } else {
                format!("jump host {}:{port}", cfg.host_arg)
            },
            is_target,
            hostname: cfg.hostname.clone(),
            port,
            user: cfg.user.clone(),
            identity_files,
            identities_only: cfg.identities_only,
            config_source: self.config.described_as.clone(),
            connect_timeout: cfg
                .connect_timeout
                .filter(|s| *s > 0)
                .map(std::time::Duration::from_secs),
            policy: HostKeyPolicy {
                known_hosts,
                learn_to,
                accept_new,
                accept_new_from_config,
                insecure: self.flags.insecure_skip_host_key_check,
                host_key_alias: cfg.host_key_alias.clone(),
                hash_known_hosts: cfg.hash_known_hosts,
            },
        })
    }
}
