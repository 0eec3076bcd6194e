//! Reads the SSH command line and ssh_config the way OpenSSH 9.2 does, for the options
//! that decide where, as whom and through which jump hosts pvrdma-doctor connects.
//! Admins describe their ESXi hosts there already (aliases, jump hosts, keys); read
//! differently, the tool would diagnose another machine than `ssh esx01` reaches.
//!
//! The model is OpenSSH's own: one pass over the command line then the files (`-F FILE`
//! alone, else `~/.ssh/config` then the system file), line by line, with an "active"
//! flag that `Host` and `Match` lines set; for most options the first value obtained
//! wins. `Include` reads its glob(3) matches where it stands, inside the current block.
//! After `Match final` (or `CanonicalizeHostname`) the files are read a second time with
//! the host name found. Then the defaults, the jump-loop check and the `~`/`%`/`${}`
//! expansions. Every rule here is checked against `ssh -G` by `tests/ssh_config_diff.rs`;
//! the differences kept on purpose are listed in the README.
// No `unsafe` but calls into the C library in `sys.rs`, each allowed where it stands with
// the reason it is sound: glob(3), the passwd entry, the host name, address printing.
#![deny(unsafe_code)]
use std::path::{Path, PathBuf};

mod apply;
mod cache;
mod command_line;
mod expand;
mod files;
mod finish;
mod host;
mod jump;
mod keywords;
mod lexer;
mod matching;
mod pass;
mod sys;
mod values;

pub use command_line::{CliOption, CommandLineOptions, HONOURED_OPTIONS};
pub use host::{ConfigError, HostConfig, JumpHost};
pub use jump::{valid_hostname, valid_ruser};
pub use matching::wildcard_match;
pub use sys::{current_user, local_hostname, Passwd};

use apply::*;
use expand::{percent_expand, tilde_expand};
use files::*;
use jump::{a2port, parse_jump, Jump};
use keywords::Keyword;

/// Include depth OpenSSH allows; deeper is refused (a loop, most likely).
const MAX_INCLUDE_DEPTH: usize = 16;
/// Most `IdentityFile`s ssh keeps.
const MAX_IDENTITY_FILES: usize = 100;
/// Most known-hosts files in one list (OpenSSH's `SSH_MAX_HOSTS_FILES`).
const MAX_HOSTS_FILES: usize = 32;

/// `StrictHostKeyChecking` as configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrictHostKeyChecking {
    /// `yes` (and `ask`, which a batch tool cannot ask): unknown hosts fail.
    Yes,
    /// `accept-new`: unknown hosts are recorded, changed keys still fail.
    AcceptNew,
    /// `no`/`off`: unknown hosts are recorded too; changed keys still fail in this tool.
    No,
}

/// Who runs the tool, as ssh sees it: what `~`, `%d`, `%u`, `%i`, `%l` and `Match
/// localuser` stand for, and the user to log in as when none is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalContext {
    /// `~` and `%d`.
    pub home: PathBuf,
    /// `~` inside `Include` (glob(3) takes it from `$HOME`; relative includes of the
    /// user's files are under `<include_home>/.ssh`).
    pub include_home: PathBuf,
    /// `%u` and `Match localuser`.
    pub local_user: String,
    /// `%i`.
    pub uid: u32,
    /// `%l` (and `%L`, its part before the first dot).
    pub local_hostname: String,
    /// The login user when neither the command line nor the config names one (ssh: the
    /// local user; pvrdma-doctor: `root`, ESXi's administrator).
    pub default_user: String,
}

impl LocalContext {
    /// The running user's context with `home` as the home directory and `root` as the
    /// default login user.
    pub fn current(home: &Path) -> Self {
        let pw = sys::current_user();
        LocalContext {
            home: home.to_path_buf(),
            include_home: home.to_path_buf(),
            local_user: pw
                .as_ref()
                .map(|p| p.name.clone())
                .or_else(|| std::env::var("USER").ok())
                .unwrap_or_else(|| "root".into()),
            uid: pw.as_ref().map_or(0, |p| p.uid),
            local_hostname: sys::local_hostname(),
            default_user: "root".into(),
        }
    }
}

/// One top-level file.
#[derive(Debug, Clone)]
struct TopFile {
    path: PathBuf,
    /// A user file (`-F`, `~/.ssh/config`): relative includes are under `~/.ssh` and `~`
    /// is allowed in them; in the system file they are under its directory.
    user_conf: bool,
    /// `~/.ssh/config` is checked for safe ownership and modes, as ssh does.
    check_perm: bool,
}

/// The ssh_config sources for a run; a file is read when a host first needs it, then kept
/// for the life of this value (see [`cache`]).
#[derive(Debug, Clone)]
pub struct SshConfig {
    files: Vec<TopFile>,
    local: LocalContext,
    /// The files as read the first time a host needed them (shared by clones).
    cache: std::sync::Arc<cache::FileCache>,
    /// What the DNS hint names: `-F FILE` when one is in use.
    pub described_as: String,
    /// Whether a name resolves (the system resolver; tests simulate it): canonicalizing
    /// a fully qualified name written with its trailing dot depends on it, as in ssh.
    resolves: fn(&str) -> bool,
}

/// The system resolver's answer for `name` (getaddrinfo, as ssh asks it).
fn system_resolves(name: &str) -> bool {
    use std::net::ToSocketAddrs;
    (name, 0u16).to_socket_addrs().is_ok_and(|mut a| a.next().is_some())
}

/// `CanonicalizeHostname` as configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Canonicalize {
    No,
    /// `yes`: only for a host reached directly (no ProxyJump or ProxyCommand).
    Yes,
    Always,
}

impl SshConfig {
    /// `-F FILE`: only that file (`none`: no file at all), which must be readable.
    pub fn load(path: &Path, local: LocalContext) -> Result<Self, ConfigError> {
        if path == Path::new("none") {
            return Ok(SshConfig {
                files: Vec::new(),
                local,
                cache: Default::default(),
                described_as: "a config file (-F none reads none)".into(),
                resolves: system_resolves,
            });
        }
        std::fs::File::open(path).map_err(|error| ConfigError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        Ok(SshConfig {
            files: vec![TopFile {
                path: path.to_path_buf(),
                user_conf: true,
                check_perm: false,
            }],
            local,
            cache: Default::default(),
            described_as: format!("{} (the -F file)", path.display()),
            resolves: system_resolves,
        })
    }

    /// What `ssh` reads without `-F`: `~/.ssh/config` then the system-wide file, each
    /// when it exists. Relative includes of the system file are under its directory.
    pub fn load_user_and_system(user: &Path, system: &Path, local: LocalContext) -> Self {
        SshConfig {
            files: vec![
                TopFile {
                    path: user.to_path_buf(),
                    user_conf: true,
                    check_perm: true,
                },
                TopFile {
                    path: system.to_path_buf(),
                    user_conf: false,
                    check_perm: false,
                },
            ],
            local,
            cache: Default::default(),
            described_as: "~/.ssh/config".into(),
            resolves: system_resolves,
        }
    }

    /// An empty config (no file): every host gets the defaults.
    pub fn empty(local: LocalContext) -> Self {
        SshConfig {
            files: Vec::new(),
            local,
            cache: Default::default(),
            described_as: "~/.ssh/config".into(),
            resolves: system_resolves,
        }
    }

    /// The same sources with another resolver (tests simulate name resolution).
    pub fn with_resolver(mut self, resolves: fn(&str) -> bool) -> Self {
        self.resolves = resolves;
        self
    }

    /// Who the config is read for.
    pub fn local(&self) -> &LocalContext {
        &self.local
    }

    /// The effective options for `host` as given on the command line with `command_line`
    /// (its options and where the host argument stood among them), as `ssh -G` shows
    /// them. Nothing is looked up on the network.
    pub fn resolve(&self, host: &HostArg<'_>, command_line: &CommandLineOptions) -> Result<HostConfig, ConfigError> {
        let mut opts = Options::default();
        command_line.apply(&mut opts, Some(host))?;
        if !valid_hostname(host.host) {
            return Err(ConfigError::CommandLine(format!(
                "{:?}: hostname contains invalid characters",
                host.host
            )));
        }
        if opts.user_from_command_line {
            if let Some(u) = opts.user.as_deref().filter(|u| !valid_ruser(u)) {
                return Err(ConfigError::CommandLine(format!(
                    "remote username {u:?} contains invalid characters"
                )));
            }
        }
        let mut pass = Pass {
            config: self,
            host: host.host.to_string(),
            original_host: host.host,
            final_pass: false,
            wants_final: false,
        };
        pass.read_all(&mut opts)?;
        let mut name = match &opts.hostname {
            Some(h) => percent_expand(h, &[('h', host.host)], false)
                .map_err(|e| ConfigError::Refused(format!("HostName {h:?}: {e}")))?,
            None => host.host.to_string(),
        };
        // ssh lowercases a name, and writes an address the way getnameinfo(3) does
        // (`010.0.0.1` is `8.0.0.1`) unless only the letter case differs.
        match sys::numeric_address(&name) {
            Some(canonical) => {
                if !canonical.eq_ignore_ascii_case(&name) {
                    name = canonical;
                }
            }
            None if looks_like_address(&name) => {}
            None => name = name.to_ascii_lowercase(),
        }
        opts.hostname = Some(name.clone());
        let canonicalize = opts.canonicalize_hostname.unwrap_or(Canonicalize::No);
        if canonicalize != Canonicalize::No {
            if opts.canonical_domains.as_ref().is_some_and(|d| !d.is_empty()) {
                return Err(ConfigError::Refused(
                    "CanonicalizeHostname with CanonicalDomains is not supported by pvrdma-doctor (it would have to try each domain in DNS as ssh does); set HostName to the full name instead".into(),
                ));
            }
            name = self.canonical_name(name, canonicalize, &opts)?;
            opts.hostname = Some(name.clone());
            pass.wants_final = true;
        }
        if pass.wants_final {
            pass.host = name.clone();
            pass.final_pass = true;
            pass.read_all(&mut opts)?;
        }
        self.finish(host.host, name, opts)
    }

    /// ssh's `resolve_canonicalize` without `CanonicalDomains` (refused above): an address
    /// stays; a name written with its trailing dot that resolves loses the dot (and the
    /// files are read again for it); a name with more dots than `CanonicalizeMaxDots` is
    /// left alone; any other name is not found, which with `CanonicalizeFallbackLocal no`
    /// stops ssh: "Could not resolve host".
    fn canonical_name(&self, name: String, how: Canonicalize, opts: &Options) -> Result<String, ConfigError> {
        let direct = opts.jump.as_ref().is_none_or(|j| matches!(j, Jump::None))
            && opts
                .proxy_command
                .as_ref()
                .is_none_or(|(c, _)| c.eq_ignore_ascii_case("none"));
        if (!direct && how != Canonicalize::Always) || sys::numeric_address(&name).is_some() {
            return Ok(name);
        }
        let not_found = |name: String| {
            if opts.canonicalize_fallback_local == Some(false) {
                Err(ConfigError::Refused(format!(
                    "Could not resolve host \"{name}\" (CanonicalizeHostname with CanonicalizeFallbackLocal no: ssh stops here too)"
                )))
            } else {
                Ok(name)
            }
        };
        if let Some(stripped) = name.strip_suffix('.') {
            return if (self.resolves)(&name) {
                Ok(stripped.to_string())
            } else {
                not_found(name)
            };
        }
        let dots = name.matches('.').count();
        if dots > opts.canonicalize_max_dots.unwrap_or(1) as usize {
            return Ok(name);
        }
        not_found(name)
    }

    /// The options of a jump host, as its own ssh gets them: ssh reaches the last hop of
    /// a `ProxyJump` list by running `ssh [-l user] [-p port] [-J earlier,hops] host`,
    /// so none of the target's options apply, and the earlier hops replace the hop's own
    /// `ProxyJump`.
    pub fn resolve_jump(&self, jump: &JumpHost) -> Result<HostConfig, ConfigError> {
        let options = CommandLineOptions::for_jump(jump.user.as_deref(), jump.port, jump.extra.as_deref())?;
        self.resolve(&HostArg::named(&jump.host), &options)
    }
}

/// The host argument and what it carries: `user@` and our `:port` extension, and where
/// it stood among the options (for "first value given wins").
#[derive(Debug, Clone, Copy)]
pub struct HostArg<'a> {
    pub host: &'a str,
    pub user: Option<&'a str>,
    pub port: Option<u16>,
    /// Its position on the command line, compared with the options' positions.
    pub position: usize,
}

impl<'a> HostArg<'a> {
    /// A bare name given after every option.
    pub fn named(host: &'a str) -> Self {
        HostArg {
            host,
            user: None,
            port: None,
            position: usize::MAX,
        }
    }
}

/// What ssh takes for an address without asking (is_addr_fast): a `%` or `:`, or only
/// digits and dots. Such a name is not lowercased even when it is not a valid address.
fn looks_like_address(s: &str) -> bool {
    s.contains(['%', ':']) || s.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// The options being collected (readconf.c's `Options`, for what is used here).
#[derive(Debug, Clone, Default)]
struct Options {
    hostname: Option<String>,
    user: Option<String>,
    /// The user came from `-l`, `user@` or `-o User` (ssh checks those names).
    user_from_command_line: bool,
    port: Option<u16>,
    /// `(path as written, from a user file)`: ssh drops exact repeats.
    identity_files: Vec<(String, bool)>,
    user_hostfiles: Option<Vec<String>>,
    system_hostfiles: Option<Vec<String>>,
    proxy_command: Option<(String, String)>,
    jump: Option<Jump>,
    strict: Option<(StrictHostKeyChecking, String)>,
    identities_only: Option<bool>,
    hash_known_hosts: Option<bool>,
    host_key_alias: Option<String>,
    ignore_unknown: Option<String>,
    canonicalize_hostname: Option<Canonicalize>,
    canonicalize_fallback_local: Option<bool>,
    canonicalize_max_dots: Option<u32>,
    canonical_domains: Option<Vec<String>>,
    connect_timeout: Option<u64>,
}

/// Where a line comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin<'a> {
    pub(crate) file: &'a Path,
    pub(crate) line: usize,
    pub(crate) user_conf: bool,
    /// A line of `-o` (no `Host`, `Match` or `Include` there).
    pub(crate) command_line: bool,
}

impl Origin<'_> {
    fn error(&self, message: impl Into<String>) -> ConfigError {
        ConfigError::Syntax {
            path: self.file.to_path_buf(),
            line: self.line,
            message: message.into(),
        }
    }

    fn at(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
}

/// One reading of the files for one host.
struct Pass<'a> {
    config: &'a SshConfig,
    /// What `Host` and `Match host` see: the name given, or in the final pass the host
    /// name found by the first.
    host: String,
    original_host: &'a str,
    final_pass: bool,
    wants_final: bool,
}

#[derive(Debug, Clone, Copy)]
struct Flags {
    user_conf: bool,
    /// Inside an `Include` of a block that did not apply: nothing here applies.
    never_match: bool,
}

/// `~` and `~/x` → the home directory (for paths this tool builds itself).
pub fn expand_tilde(p: &str, home: &Path) -> PathBuf {
    if p == "~" {
        home.to_path_buf()
    } else if let Some(rest) = p.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(p)
    }
}

#[cfg(test)]
mod tests;
