//! Reads `~/.ssh/config` then `/etc/ssh/ssh_config` (or only `-F FILE`), after the
//! command line's `-o` options, the way OpenSSH does, for the options that decide
//! where and how pvrdma-doctor connects. Admins already describe their ESXi hosts there
//! (aliases, jump hosts, keys); a tool that ignored it would connect somewhere else than
//! `ssh esx01` does, and its verdict would not be trusted.
//!
//! Semantics kept from ssh_config(5): sources are read in the order command line, user
//! file, system file, and the first value obtained for an option wins, except
//! `IdentityFile` (and the known-hosts file lists) which accumulate; `Host` takes
//! whitespace-separated patterns with `*`, `?` and `!` negation; `Include` splices files
//! (relative paths are under `~/.ssh` in the user file and under `/etc/ssh` in the system
//! file, the last path component may be a glob) at the place
//! it appears, and its blocks apply only when the block holding the `Include` does.
//! `Match` evaluates `all`, `host`, `originalhost` and `user` (comma-separated patterns,
//! `!` on a pattern or on a criterion, several criteria ANDed). Other criteria (`exec`,
//! `localuser`, `canonical`, `final`, `tagged`, ...) are never run: a block using one is a
//! config error for the hosts its host/user criteria select, since silently skipping or
//! applying it could connect differently than `ssh` does.
use std::path::{Path, PathBuf};

mod command_line;
mod matching;
pub use command_line::{CommandLineOptions, HONOURED_OPTIONS};
pub(crate) use matching::{host_patterns_match, wildcard_match};
use matching::{match_applies, parse_match, Criterion, MatchState};

/// Include depth OpenSSH allows; deeper means a loop.
const MAX_INCLUDE_DEPTH: usize = 16;

/// `StrictHostKeyChecking` as configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StrictHostKeyChecking {
    /// `yes` (and `ask`, which a batch tool cannot ask): unknown hosts fail.
    Yes,
    /// `accept-new`: unknown hosts are recorded, changed keys still fail.
    AcceptNew,
    /// `no`/`off`: unknown hosts are recorded too; changed keys still fail in this tool.
    No,
}

/// The effective options for one host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HostConfig {
    pub(crate) hostname: Option<String>,
    pub(crate) user: Option<String>,
    pub(crate) port: Option<u16>,
    pub(crate) identity_files: Vec<PathBuf>,
    /// `UserKnownHostsFile`: `None` = not set (the defaults apply), `Some(empty)` = `none`.
    pub(crate) user_known_hosts_files: Option<Vec<PathBuf>>,
    /// `GlobalKnownHostsFile`, same convention.
    pub(crate) global_known_hosts_files: Option<Vec<PathBuf>>,
    pub(crate) strict_host_key_checking: Option<StrictHostKeyChecking>,
    /// Where that `StrictHostKeyChecking` came from (`file:line`), for the warning when it
    /// turns on trust-on-first-use.
    pub(crate) strict_host_key_checking_at: Option<String>,
    /// `ProxyJump` hops in order (`None` = not set; an empty list = `ProxyJump none`).
    pub(crate) proxy_jump: Option<Vec<String>>,
    /// `ProxyCommand` (not `none`) where it was set, `file:line`. It is not supported: a
    /// host with one must fail rather than be reached directly, skipping the bastion.
    pub(crate) proxy_command_at: Option<String>,
    /// `HostKeyAlias`: the name host keys are looked up and recorded under.
    pub(crate) host_key_alias: Option<String>,
    /// `IdentitiesOnly yes`: offer only the configured keys, even from the agent.
    pub(crate) identities_only: Option<bool>,
    /// `HashKnownHosts yes`: names learnt into known_hosts are written hashed.
    pub(crate) hash_known_hosts: Option<bool>,
}

/// A config file that could not be read or understood.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    // Not a `source`: the OS error is in the message once, and `{:#}` must not print it
    // a second time from the error chain.
    #[error("cannot read ssh config {path}: {error}")]
    Read { path: PathBuf, error: std::io::Error },
    #[error("{path}:{line}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{at}: ProxyCommand is not supported by pvrdma-doctor (connecting directly would skip your bastion); use ProxyJump instead")]
    ProxyCommand { at: String },
}

#[derive(Debug, Clone)]
struct Directive {
    key: String,
    args: Vec<String>,
    file: PathBuf,
    line: usize,
}

#[derive(Debug, Clone)]
enum Condition {
    Always,
    Host(Vec<String>),
    Match {
        criteria: Vec<Criterion>,
        file: PathBuf,
        line: usize,
    },
    /// The continuation of an earlier block after an `Include` inside it: whatever that
    /// block's condition gave, without evaluating it a second time.
    SameAs(usize),
}

#[derive(Debug, Clone)]
struct Block {
    condition: Condition,
    /// The block (index) whose `Include` brought this one in: this block applies only when
    /// that one did (OpenSSH's SSHCONF_NEVERMATCH), whatever its own condition says.
    guard: Option<usize>,
    directives: Vec<Directive>,
}

/// A parsed ssh config: blocks in file order, includes already spliced in.
#[derive(Debug, Clone, Default)]
pub struct SshConfig {
    blocks: Vec<Block>,
    home: PathBuf,
}

impl SshConfig {
    /// Reads `path` and its includes. `home` is where `~` points.
    pub(crate) fn load(path: &Path, home: &Path) -> Result<Self, ConfigError> {
        let mut cfg = SshConfig::empty(home);
        cfg.add_file(path, &home.join(".ssh"))?;
        Ok(cfg)
    }

    /// What `ssh` reads without `-F`: the user's file, then the system-wide one, each when
    /// it exists. A relative `Include` is under `~/.ssh` in the first and next to the
    /// system file (`/etc/ssh`) in the second.
    pub(crate) fn load_user_and_system(user: &Path, system: &Path, home: &Path) -> Result<Self, ConfigError> {
        let mut cfg = SshConfig::empty(home);
        if user.is_file() {
            cfg.add_file(user, &home.join(".ssh"))?;
        }
        if system.is_file() {
            let dir = system
                .parent()
                .map_or_else(|| PathBuf::from("/etc/ssh"), Path::to_path_buf);
            cfg.add_file(system, &dir)?;
        }
        Ok(cfg)
    }

    /// Appends one top-level file: it starts outside any `Host` block.
    fn add_file(&mut self, path: &Path, include_dir: &Path) -> Result<(), ConfigError> {
        self.blocks.push(Block {
            condition: Condition::Always,
            guard: None,
            directives: Vec::new(),
        });
        self.read_file(path, 0, None, include_dir)
    }

    /// An empty config (no file): every host gets the defaults.
    pub fn empty(home: &Path) -> Self {
        SshConfig {
            blocks: Vec::new(),
            home: home.to_path_buf(),
        }
    }

    /// Reads one file; its blocks only apply when block `guard` (the one holding the
    /// `Include`) does.
    fn read_file(
        &mut self,
        path: &Path,
        depth: usize,
        guard: Option<usize>,
        include_dir: &Path,
    ) -> Result<(), ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        for (idx, raw) in text.lines().enumerate() {
            let line = idx + 1;
            let Some((key, args)) = split_line(raw).map_err(|message| ConfigError::Syntax {
                path: path.to_path_buf(),
                line,
                message,
            })?
            else {
                continue;
            };
            match key.as_str() {
                "host" => self.blocks.push(Block {
                    condition: Condition::Host(args),
                    guard,
                    directives: Vec::new(),
                }),
                "match" => {
                    let criteria = parse_match(&args).map_err(|message| ConfigError::Syntax {
                        path: path.to_path_buf(),
                        line,
                        message,
                    })?;
                    self.blocks.push(Block {
                        condition: Condition::Match {
                            criteria,
                            file: path.to_path_buf(),
                            line,
                        },
                        guard,
                        directives: Vec::new(),
                    });
                }
                "include" => {
                    if depth >= MAX_INCLUDE_DEPTH {
                        return Err(ConfigError::Syntax {
                            path: path.to_path_buf(),
                            line,
                            message: "Include nested too deeply (loop?)".into(),
                        });
                    }
                    // The included lines belong to the block that is open here, as in
                    // OpenSSH: each included file starts inside it, and none of its blocks
                    // applies unless this one does. After the file, this block goes on.
                    let open = self.blocks.len().checked_sub(1);
                    for pattern in &args {
                        for file in self.include_paths(pattern, include_dir) {
                            if let Some(i) = open {
                                self.blocks.push(Block {
                                    condition: Condition::SameAs(i),
                                    guard: None,
                                    directives: Vec::new(),
                                });
                            }
                            let inner_guard = self.blocks.len().checked_sub(1);
                            self.read_file(&file, depth + 1, inner_guard, include_dir)?;
                        }
                    }
                    if let Some(i) = open {
                        self.blocks.push(Block {
                            condition: Condition::SameAs(i),
                            guard: None,
                            directives: Vec::new(),
                        });
                    }
                }
                _ => {
                    let d = Directive {
                        key,
                        args,
                        file: path.to_path_buf(),
                        line,
                    };
                    match self.blocks.last_mut() {
                        Some(b) => b.directives.push(d),
                        None => self.blocks.push(Block {
                            condition: Condition::Always,
                            guard,
                            directives: vec![d],
                        }),
                    }
                }
            }
        }
        Ok(())
    }

    fn include_paths(&self, pattern: &str, include_dir: &Path) -> Vec<PathBuf> {
        let expanded = expand_tilde(pattern, &self.home);
        let full = if expanded.is_absolute() {
            expanded
        } else {
            include_dir.join(expanded)
        };
        let name = full
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.contains(['*', '?']) {
            return if full.is_file() { vec![full] } else { Vec::new() };
        }
        let Some(dir) = full.parent() else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_file())
                    .filter(|p| {
                        p.file_name()
                            .is_some_and(|n| wildcard_match(&name, &n.to_string_lossy()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        // OpenSSH reads glob matches in lexical order.
        files.sort();
        files
    }

    /// The effective options for `host` (the name as given on the command line), with no
    /// user given on the command line.
    #[cfg(test)]
    pub(crate) fn resolve(&self, host: &str) -> Result<HostConfig, ConfigError> {
        self.resolve_for(host, None)
    }

    /// The effective options for `host`; `cli_user` is the user given on the command line
    /// (`user@host`, `-l`), which `Match user` sees before any `User` from the config, as
    /// in ssh. With neither, `Match user` sees `root`, the user this tool defaults to.
    #[cfg(test)]
    fn resolve_for(&self, host: &str, cli_user: Option<&str>) -> Result<HostConfig, ConfigError> {
        self.resolve_with(host, cli_user, &CommandLineOptions::default())
    }

    /// The effective options for `host` with the command line's options (`-o`, `-p`, `-J`)
    /// obtained first, so they win over both files, as in ssh.
    pub(crate) fn resolve_with(
        &self,
        host: &str,
        cli_user: Option<&str>,
        command_line: &CommandLineOptions,
    ) -> Result<HostConfig, ConfigError> {
        let mut out = HostConfig::default();
        let mut proxy_command_seen = false;
        for d in &command_line.directives {
            apply(&mut out, &mut proxy_command_seen, d)?;
        }
        // Whether each block applied, in block order; guards and continuations look back.
        let mut applied: Vec<bool> = Vec::with_capacity(self.blocks.len());
        for block in &self.blocks {
            let guard_ok = block.guard.is_none_or(|g| applied.get(g).copied().unwrap_or(false));
            let applies = guard_ok
                && match &block.condition {
                    Condition::Always => true,
                    Condition::Host(patterns) => host_patterns_match(patterns, host),
                    Condition::SameAs(i) => applied.get(*i).copied().unwrap_or(false),
                    Condition::Match { criteria, file, line } => {
                        let state = MatchState {
                            original_host: host,
                            hostname: out.hostname.as_deref().map(|h| h.replace("%h", host)),
                            user: cli_user.or(out.user.as_deref()).unwrap_or("root"),
                        };
                        match_applies(criteria, &state).map_err(|criterion| ConfigError::Syntax {
                            path: file.clone(),
                            line: *line,
                            message: format!(
                                "Match {criterion} is not supported by pvrdma-doctor (it never runs Match conditions it cannot check itself); for this host, use a Host block or a separate config file with -F"
                            ),
                        })?
                    }
                };
            applied.push(applies);
            if !applies {
                continue;
            }
            for d in &block.directives {
                apply(&mut out, &mut proxy_command_seen, d)?;
            }
        }
        // Tokens are expanded after matching, with the final host name and user.
        let hostname = out.hostname.clone().map(|h| h.replace("%h", host));
        out.hostname = hostname;
        let ctx = TokenContext {
            alias: host,
            hostname: out.hostname.as_deref().unwrap_or(host),
            user: out.user.as_deref().unwrap_or("root"),
            port: out.port.unwrap_or(22),
            home: &self.home,
        };
        out.identity_files = out.identity_files.iter().map(|p| ctx.path(p)).collect();
        // `none` empties the list: it must not fall back to the default files.
        let files = |list: &Option<Vec<PathBuf>>| {
            list.as_ref().map(|l| {
                l.iter()
                    .filter(|p| p.as_os_str() != "none")
                    .map(|p| ctx.path(p))
                    .collect::<Vec<_>>()
            })
        };
        out.user_known_hosts_files = files(&out.user_known_hosts_files);
        out.global_known_hosts_files = files(&out.global_known_hosts_files);
        Ok(out)
    }
}

/// Applies one directive: the first value obtained wins, `IdentityFile` accumulates.
fn apply(out: &mut HostConfig, proxy_command_seen: &mut bool, d: &Directive) -> Result<(), ConfigError> {
    let syntax = |message: String| ConfigError::Syntax {
        path: d.file.clone(),
        line: d.line,
        message,
    };
    let first = d.args.first().cloned().unwrap_or_default();
    match d.key.as_str() {
        "hostname" if out.hostname.is_none() => out.hostname = Some(first),
        "user" if out.user.is_none() => out.user = Some(first),
        "port" if out.port.is_none() => {
            out.port = Some(
                first
                    .parse::<u16>()
                    .map_err(|_| syntax(format!("Port {first:?} is not a port number")))?,
            )
        }
        "identityfile" => {
            out.identity_files.extend(d.args.iter().map(PathBuf::from));
        }
        "userknownhostsfile" if out.user_known_hosts_files.is_none() => {
            out.user_known_hosts_files = Some(d.args.iter().map(PathBuf::from).collect());
        }
        "globalknownhostsfile" if out.global_known_hosts_files.is_none() => {
            out.global_known_hosts_files = Some(d.args.iter().map(PathBuf::from).collect());
        }
        "stricthostkeychecking" if out.strict_host_key_checking.is_none() => {
            out.strict_host_key_checking_at = Some(format!("{}:{}", d.file.display(), d.line));
            out.strict_host_key_checking = Some(match first.to_ascii_lowercase().as_str() {
                "yes" | "ask" => StrictHostKeyChecking::Yes,
                "accept-new" => StrictHostKeyChecking::AcceptNew,
                "no" | "off" => StrictHostKeyChecking::No,
                other => {
                    return Err(syntax(format!(
                        "StrictHostKeyChecking {other:?} is not yes, accept-new, no or ask"
                    )))
                }
            })
        }
        "identitiesonly" if out.identities_only.is_none() => {
            out.identities_only = Some(match first.to_ascii_lowercase().as_str() {
                "yes" | "true" => true,
                "no" | "false" => false,
                other => return Err(syntax(format!("IdentitiesOnly {other:?} is not yes or no"))),
            })
        }
        // ProxyJump and ProxyCommand exclude each other: the first one given wins.
        "proxycommand" if out.proxy_jump.is_none() && !*proxy_command_seen => {
            *proxy_command_seen = true;
            let command = d.args.join(" ");
            if !command.eq_ignore_ascii_case("none") {
                out.proxy_command_at = Some(format!("{}:{}", d.file.display(), d.line));
            }
        }
        "hostkeyalias" if out.host_key_alias.is_none() => out.host_key_alias = Some(first),
        "hashknownhosts" if out.hash_known_hosts.is_none() => {
            out.hash_known_hosts = Some(match first.to_ascii_lowercase().as_str() {
                "yes" | "true" => true,
                "no" | "false" => false,
                other => return Err(syntax(format!("HashKnownHosts {other:?} is not yes or no"))),
            })
        }
        "proxyjump" if out.proxy_jump.is_none() && !*proxy_command_seen => {
            out.proxy_jump = Some(if first.eq_ignore_ascii_case("none") {
                Vec::new()
            } else {
                first
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
        }
        _ => {}
    }
    Ok(())
}

struct TokenContext<'a> {
    alias: &'a str,
    hostname: &'a str,
    user: &'a str,
    port: u16,
    home: &'a Path,
}

impl TokenContext<'_> {
    fn path(&self, p: &Path) -> PathBuf {
        let s = p.to_string_lossy();
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some('d') => out.push_str(&self.home.to_string_lossy()),
                Some('h') => out.push_str(self.hostname),
                Some('n') => out.push_str(self.alias),
                Some('r') => out.push_str(self.user),
                Some('p') => out.push_str(&self.port.to_string()),
                Some(other) => {
                    out.push('%');
                    out.push(other);
                }
                None => out.push('%'),
            }
        }
        expand_tilde(&out, self.home)
    }
}

/// `~` and `~/x` → the home directory.
pub(crate) fn expand_tilde(p: &str, home: &Path) -> PathBuf {
    if p == "~" {
        home.to_path_buf()
    } else if let Some(rest) = p.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(p)
    }
}

/// Splits a config line into a lowercased keyword and its arguments (`Key value`,
/// `Key=value`, double quotes group). `None` for blank and comment lines.
pub(super) fn split_line(raw: &str) -> Result<Option<(String, Vec<String>)>, String> {
    let line = raw.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let key_end = line.find(|c: char| c.is_whitespace() || c == '=').unwrap_or(line.len());
    let (key, rest) = line.split_at(key_end);
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('=').unwrap_or(rest);
    let mut args = Vec::new();
    let mut cur = String::new();
    let mut in_quotes = false;
    let mut has_token = false;
    for c in rest.chars() {
        match c {
            '"' => {
                in_quotes = !in_quotes;
                has_token = true;
            }
            c if c.is_whitespace() && !in_quotes => {
                if has_token {
                    args.push(std::mem::take(&mut cur));
                    has_token = false;
                }
            }
            c => {
                cur.push(c);
                has_token = true;
            }
        }
    }
    if in_quotes {
        return Err("unbalanced quotes".into());
    }
    if has_token {
        args.push(cur);
    }
    if args.is_empty() {
        return Err(format!("{key} needs a value"));
    }
    Ok(Some((key.to_ascii_lowercase(), args)))
}

#[cfg(test)]
mod tests;
