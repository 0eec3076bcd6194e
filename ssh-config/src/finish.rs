//! What ssh.c does after reading the config: the defaults, the jump-loop check and the
//! `~`/`%`/`${}` expansions of the paths, giving the [`HostConfig`].
use super::*;

impl SshConfig {
    /// Defaults, the jump-loop check and expansions (ssh.c after reading the config).
    pub(super) fn finish(&self, host_arg: &str, hostname: String, opts: Options) -> Result<HostConfig, ConfigError> {
        let local = &self.local;
        let user = opts.user.clone().unwrap_or_else(|| local.default_user.clone());
        let port = match opts.port {
            Some(p) if p > 0 => p,
            _ => sys::service_port("ssh").unwrap_or(22),
        };
        let jump = checked_jump(opts.jump, &hostname, port, &user)?;
        let proxy_command = opts.proxy_command.filter(|(c, _)| !c.eq_ignore_ascii_case("none"));
        let host_key_alias = opts.host_key_alias.map(|a| a.to_ascii_lowercase());
        let key_alias = host_key_alias.as_deref().unwrap_or(host_arg);
        let expansion = Expansion::new(local, host_arg, &hostname, port, &user, key_alias);
        let identity_files_raw: Vec<String> = opts.identity_files.iter().map(|(p, _)| p.clone()).collect();
        // ssh expands these only when it loads the keys, after connecting; a bad token
        // stops it there. It is kept here and refused by the planner before connecting.
        let (identity_files, identity_file_error) = match identity_files_raw
            .iter()
            .map(|p| expansion.path("IdentityFile", p))
            .collect()
        {
            Ok(files) => (files, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let user_files = match opts.user_hostfiles {
            Some(l) if l.first().is_some_and(|f| f.eq_ignore_ascii_case("none")) => Vec::new(),
            Some(l) => l,
            None => vec!["~/.ssh/known_hosts".into(), "~/.ssh/known_hosts2".into()],
        };
        let user_known_hosts_files = user_files
            .iter()
            .map(|p| expansion.path("UserKnownHostsFile", p))
            .collect::<Result<Vec<_>, _>>()?;
        let global_known_hosts_files_raw = opts
            .system_hostfiles
            .unwrap_or_else(|| vec!["/etc/ssh/ssh_known_hosts".into(), "/etc/ssh/ssh_known_hosts2".into()]);
        let global_known_hosts_files = global_known_hosts(&global_known_hosts_files_raw, &local.home)?;
        let (strict_host_key_checking, strict_host_key_checking_at) = match opts.strict {
            Some((s, at)) => (Some(s), Some(at)),
            None => (None, None),
        };
        Ok(HostConfig {
            host_arg: host_arg.to_string(),
            hostname,
            user,
            port,
            identity_files_raw,
            identity_files,
            identity_file_error,
            user_known_hosts_files,
            global_known_hosts_files_raw,
            global_known_hosts_files,
            strict_host_key_checking,
            strict_host_key_checking_at,
            jump,
            proxy_command,
            host_key_alias,
            identities_only: opts.identities_only.unwrap_or(false),
            hash_known_hosts: opts.hash_known_hosts.unwrap_or(false),
            connect_timeout: opts.connect_timeout,
        })
    }
}

/// The jump host, refused when it is the target itself (same host, port and user):
/// ssh's "jumphost loop".
fn checked_jump(jump: Option<Jump>, hostname: &str, port: u16, user: &str) -> Result<Option<JumpHost>, ConfigError> {
    let Some(Jump::Via {
        user: juser,
        host,
        port: jport,
        extra,
    }) = jump
    else {
        return Ok(None);
    };
    let jump_user = juser.as_deref().unwrap_or(user);
    if host == hostname && port == jport.unwrap_or(22) && jump_user == user {
        return Err(ConfigError::Refused(format!("jumphost loop via {host}")));
    }
    Ok(Some(JumpHost {
        user: juser,
        host,
        port: jport,
        extra,
    }))
}

/// The `%` tokens of one host's paths, and the home `~` stands for.
struct Expansion<'a> {
    tokens: [(char, String); 11],
    home: &'a Path,
}

impl<'a> Expansion<'a> {
    fn new(local: &'a LocalContext, host_arg: &str, hostname: &str, port: u16, user: &str, key_alias: &str) -> Self {
        let port = port.to_string();
        let conn_hash = connection_hash(&local.local_hostname, hostname, &port, user);
        let short_host = local.local_hostname.split('.').next().unwrap_or("");
        let home = local.home.to_string_lossy().into_owned();
        Expansion {
            tokens: [
                ('C', conn_hash),
                ('L', short_host.to_string()),
                ('i', local.uid.to_string()),
                ('k', key_alias.to_string()),
                ('l', local.local_hostname.clone()),
                ('n', host_arg.to_string()),
                ('p', port),
                ('d', home),
                ('h', hostname.to_string()),
                ('r', user.to_string()),
                ('u', local.local_user.clone()),
            ],
            home: &local.home,
        }
    }

    /// A path of option `what` with `~` and its `%` tokens expanded.
    fn path(&self, what: &str, raw: &str) -> Result<PathBuf, ConfigError> {
        let refused = |e: String| ConfigError::Refused(format!("{what} {raw:?}: {e}"));
        let t = tilde_expand(raw, self.home).map_err(refused)?;
        let tokens = self.tokens.each_ref().map(|(c, v)| (*c, v.as_str()));
        percent_expand(&t, &tokens, true).map(PathBuf::from).map_err(refused)
    }
}

/// `GlobalKnownHostsFile`: `~` expanded, no `%` tokens (as ssh), `none` left out.
fn global_known_hosts(raw: &[String], home: &Path) -> Result<Vec<PathBuf>, ConfigError> {
    raw.iter()
        .filter(|f| !f.eq_ignore_ascii_case("none"))
        .map(|p| {
            tilde_expand(p, home)
                .map(PathBuf::from)
                .map_err(|e| ConfigError::Refused(format!("GlobalKnownHostsFile {p:?}: {e}")))
        })
        .collect()
}

/// `%C`: the SHA-1 of local host name, host, port and user, in hex.
fn connection_hash(local: &str, host: &str, port: &str, user: &str) -> String {
    use sha1::Digest;
    let mut h = sha1::Sha1::new();
    for part in [local, host, port, user] {
        h.update(part.as_bytes());
    }
    data_encoding::HEXLOWER.encode(&h.finalize())
}
