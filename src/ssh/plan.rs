//! From a host argument to a route: the jump hosts and the target, each resolved once
//! against the command line's options and the ssh_config files, with OpenSSH's precedence
//! (command line, then user config, then system config; the first value obtained wins).
use crate::ssh::client::{Endpoint, HostKeyPolicy, Identity, KeyOrigin};
use crate::ssh::config::{expand_tilde, CommandLineOptions, ConfigError, HostConfig, SshConfig, StrictHostKeyChecking};
use crate::target::{parse_host_spec, HostSpec};
use std::path::{Path, PathBuf};

/// Jump hosts do not nest deeper than this; deeper is a ProxyJump loop in the config.
const MAX_JUMP_DEPTH: usize = 8;

/// What the command line says about connecting, for every host of the run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Flags {
    /// `-l`: the target's user (not the jump hosts', as with ssh).
    pub(crate) login_user: Option<String>,
    /// `-i`, tried before the config's and the default keys, on every hop.
    pub(crate) identity_files: Vec<PathBuf>,
    /// `-p`, `-J`, `-o`: obtained first for the target (ssh does not pass them to the
    /// jump hosts either).
    pub(crate) options: CommandLineOptions,
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
    #[error("bad ProxyJump entry {entry:?}: {why}")]
    BadJump { entry: String, why: String },
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
        let (target, jumps) = self.hop(spec, true)?;
        let jumps = self.jump_chain(jumps, 0)?;
        Ok(Route { jumps, target })
    }

    /// Resolves one hop once: its endpoint and its own ProxyJump list.
    fn hop(&self, spec: &HostSpec, is_target: bool) -> Result<(Endpoint, Vec<String>), PlanError> {
        let cli_user = self.cli_user(spec, is_target);
        let none = CommandLineOptions::default();
        let options = if is_target { &self.flags.options } else { &none };
        let cfg = self.config.resolve_with(&spec.host, cli_user.as_deref(), options)?;
        let endpoint = self.endpoint(spec, &cfg, cli_user, is_target)?;
        Ok((endpoint, cfg.proxy_jump.unwrap_or_default()))
    }

    /// The hops to go through, in connection order. A jump host's own `ProxyJump` comes
    /// before it, as with ssh.
    fn jump_chain(&self, hops: Vec<String>, depth: usize) -> Result<Vec<Endpoint>, PlanError> {
        if depth >= MAX_JUMP_DEPTH && !hops.is_empty() {
            return Err(PlanError::TooDeep);
        }
        let mut out = Vec::new();
        for entry in hops {
            let spec = parse_host_spec(&entry).map_err(|e| PlanError::BadJump {
                entry: entry.clone(),
                why: e.to_string(),
            })?;
            let (endpoint, inner) = self.hop(&spec, false)?;
            out.extend(self.jump_chain(inner, depth + 1)?);
            out.push(endpoint);
        }
        Ok(out)
    }

    /// The user given on the command line for this host. Precedence as in ssh: user@host,
    /// then -l (for the target only: ssh's -l does not apply to jump hosts); the config's
    /// `User` and then ESXi's usual root come after.
    fn cli_user(&self, spec: &HostSpec, is_target: bool) -> Option<String> {
        spec.user
            .clone()
            .or_else(|| if is_target { self.flags.login_user.clone() } else { None })
    }

    fn endpoint(
        &self,
        spec: &HostSpec,
        cfg: &HostConfig,
        cli_user: Option<String>,
        is_target: bool,
    ) -> Result<Endpoint, PlanError> {
        let home = self.home;
        if let Some(at) = &cfg.proxy_command_at {
            // Connecting directly would skip the bastion the admin configured.
            return Err(ConfigError::ProxyCommand { at: at.clone() }.into());
        }
        let user = cli_user.or(cfg.user.clone()).unwrap_or_else(|| "root".to_string());
        let port = spec.port.or(cfg.port).unwrap_or(22);
        let hostname = cfg.hostname.clone().unwrap_or_else(|| spec.host.clone());
        let mut identity_files: Vec<Identity> = Vec::new();
        let mut add = |path: PathBuf, origin: KeyOrigin| {
            if !identity_files.iter().any(|i| i.path == path) {
                identity_files.push(Identity { path, origin });
            }
        };
        for p in &self.flags.identity_files {
            add(p.clone(), KeyOrigin::CommandLine);
        }
        for p in &cfg.identity_files {
            add(p.clone(), KeyOrigin::Config);
        }
        if !self.flags.only_given_keys {
            for d in ["id_ecdsa", "id_rsa", "id_ed25519"] {
                add(home.join(".ssh").join(d), KeyOrigin::Default);
            }
        }
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
                insecure: self.flags.insecure_skip_host_key_check,
                host_key_alias: cfg.host_key_alias.clone(),
                hash_known_hosts: cfg.hash_known_hosts.unwrap_or(false),
            },
        })
    }
}
