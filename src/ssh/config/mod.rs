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
use std::path::{Path, PathBuf};

mod cache;
mod command_line;
mod expand;
mod jump;
mod keywords;
mod lexer;
mod matching;
mod sys;
mod values;

pub use command_line::{CliOption, CommandLineOptions, HONOURED_OPTIONS};
pub(crate) use jump::{valid_hostname, valid_ruser};
pub(crate) use matching::wildcard_match;
pub use sys::{current_user, local_hostname, Passwd};

use expand::{percent_expand, tilde_expand};
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
pub(crate) enum StrictHostKeyChecking {
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

/// The effective options for one host, after defaults and expansions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostConfig {
    /// The name given (`Host` patterns and `%n` see it).
    pub host_arg: String,
    /// Where to connect: `HostName` with `%h` expanded, lowercased unless an address.
    pub hostname: String,
    pub user: String,
    pub port: u16,
    /// `IdentityFile`s as written, in order, duplicates dropped (what `ssh -G` lists);
    /// empty when none is configured.
    pub identity_files_raw: Vec<String>,
    /// The same with `~`, `%` tokens and `${VAR}` expanded.
    pub identity_files: Vec<PathBuf>,
    /// Why they could not be expanded (an unknown `%` token, an unset variable): ssh
    /// stops when it loads the keys, so the host cannot be reached.
    pub identity_file_error: Option<String>,
    /// `UserKnownHostsFile` expanded (defaults applied; `none` = empty).
    pub user_known_hosts_files: Vec<PathBuf>,
    /// `GlobalKnownHostsFile` as written (defaults applied), as `ssh -G` shows it.
    pub global_known_hosts_files_raw: Vec<String>,
    /// The same with `~` expanded, as ssh uses them (`none`: no file).
    pub global_known_hosts_files: Vec<PathBuf>,
    pub(crate) strict_host_key_checking: Option<StrictHostKeyChecking>,
    /// Where that `StrictHostKeyChecking` came from (`file:line`), for the warning when it
    /// turns on trust-on-first-use.
    pub(crate) strict_host_key_checking_at: Option<String>,
    /// The jump host to connect through (the last of a `ProxyJump` list).
    pub jump: Option<JumpHost>,
    /// `ProxyCommand` (not `none`) and where it was set, `file:line`. pvrdma-doctor does
    /// not run it: such a host fails rather than being reached directly.
    pub proxy_command: Option<(String, String)>,
    /// `HostKeyAlias`, lowercased: the name host keys are looked up and recorded under.
    pub host_key_alias: Option<String>,
    /// `IdentitiesOnly yes`: offer only the configured keys, even from the agent.
    pub identities_only: bool,
    /// `HashKnownHosts yes`: names learnt into known_hosts are written hashed.
    pub hash_known_hosts: bool,
}

/// The jump host of a route and how ssh reaches it: its own ssh is run as
/// `ssh [-l user] [-p port] [-J extra] host`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JumpHost {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
    /// The hops before it, as written (`a,b` of `-J a,b,c`).
    pub extra: Option<String>,
}

impl JumpHost {
    /// How `ssh -G` prints it (an address in brackets).
    pub fn display(&self) -> String {
        let mut s = String::new();
        if let Some(e) = &self.extra {
            s.push_str(e);
            s.push(',');
        }
        if let Some(u) = &self.user {
            s.push_str(u);
            s.push('@');
        }
        let bracket = self.host.contains(':') || self.host.chars().all(|c| c.is_ascii_digit() || c == '.');
        if bracket {
            s.push_str(&format!("[{}]", self.host));
        } else {
            s.push_str(&self.host);
        }
        if let Some(p) = self.port {
            s.push_str(&format!(":{p}"));
        }
        s
    }
}

/// A config or command line that ssh would refuse, or that pvrdma-doctor cannot follow.
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
    /// The command line (`-l`, `-p`, `-J`, `-o`, the host) as ssh refuses it.
    #[error("{0}")]
    CommandLine(String),
    /// Refused after reading, as ssh refuses it (a jump-host loop, a bad `%` token).
    #[error("{0}")]
    Refused(String),
    #[error("{at}: ProxyCommand is not supported by pvrdma-doctor (connecting directly would skip your bastion); use ProxyJump instead")]
    ProxyCommand { at: String },
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
    pub(crate) described_as: String,
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

    /// Defaults, the jump-loop check and expansions (ssh.c after reading the config).
    fn finish(&self, host_arg: &str, hostname: String, opts: Options) -> Result<HostConfig, ConfigError> {
        let local = &self.local;
        let user = opts.user.clone().unwrap_or_else(|| local.default_user.clone());
        let port = match opts.port {
            Some(p) if p > 0 => p,
            _ => sys::service_port("ssh").unwrap_or(22),
        };
        let jump = match opts.jump {
            Some(Jump::Via {
                user: juser,
                host,
                port: jport,
                extra,
            }) => {
                let jump_user = juser.as_deref().unwrap_or(&user);
                if host == hostname && port == jport.unwrap_or(22) && jump_user == user {
                    return Err(ConfigError::Refused(format!("jumphost loop via {host}")));
                }
                Some(JumpHost {
                    user: juser,
                    host,
                    port: jport,
                    extra,
                })
            }
            _ => None,
        };
        let proxy_command = opts.proxy_command.filter(|(c, _)| !c.eq_ignore_ascii_case("none"));
        let host_key_alias = opts.host_key_alias.map(|a| a.to_ascii_lowercase());
        let port_text = port.to_string();
        let uid = local.uid.to_string();
        let short_host = local.local_hostname.split('.').next().unwrap_or("").to_string();
        let conn_hash = connection_hash(&local.local_hostname, &hostname, &port_text, &user);
        let home = local.home.to_string_lossy().into_owned();
        let key_alias = host_key_alias.clone().unwrap_or_else(|| host_arg.to_string());
        let tokens: [(char, &str); 11] = [
            ('C', &conn_hash),
            ('L', &short_host),
            ('i', &uid),
            ('k', &key_alias),
            ('l', &local.local_hostname),
            ('n', host_arg),
            ('p', &port_text),
            ('d', &home),
            ('h', &hostname),
            ('r', &user),
            ('u', &local.local_user),
        ];
        let expand_path = |what: &str, raw: &str| -> Result<PathBuf, ConfigError> {
            let t = tilde_expand(raw, &local.home).map_err(|e| ConfigError::Refused(format!("{what} {raw:?}: {e}")))?;
            percent_expand(&t, &tokens, true)
                .map(PathBuf::from)
                .map_err(|e| ConfigError::Refused(format!("{what} {raw:?}: {e}")))
        };
        let identity_files_raw: Vec<String> = opts.identity_files.iter().map(|(p, _)| p.clone()).collect();
        // ssh expands these only when it loads the keys, after connecting; a bad token
        // stops it there. It is kept here and refused by the planner before connecting.
        let (identity_files, identity_file_error) = match identity_files_raw
            .iter()
            .map(|p| expand_path("IdentityFile", p))
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
            .map(|p| expand_path("UserKnownHostsFile", p))
            .collect::<Result<Vec<_>, _>>()?;
        let global_known_hosts_files_raw = opts
            .system_hostfiles
            .unwrap_or_else(|| vec!["/etc/ssh/ssh_known_hosts".into(), "/etc/ssh/ssh_known_hosts2".into()]);
        let global_known_hosts_files = global_known_hosts_files_raw
            .iter()
            .filter(|f| !f.eq_ignore_ascii_case("none"))
            .map(|p| {
                tilde_expand(p, &local.home)
                    .map(PathBuf::from)
                    .map_err(|e| ConfigError::Refused(format!("GlobalKnownHostsFile {p:?}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
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
        })
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

/// `%C`: the SHA-1 of local host name, host, port and user, in hex.
fn connection_hash(local: &str, host: &str, port: &str, user: &str) -> String {
    use sha1::Digest;
    let mut h = sha1::Sha1::new();
    for part in [local, host, port, user] {
        h.update(part.as_bytes());
    }
    data_encoding::HEXLOWER.encode(&h.finalize())
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
}

/// Where a line comes from.
#[derive(Debug, Clone, Copy)]
pub(super) struct Origin<'a> {
    pub(super) file: &'a Path,
    pub(super) line: usize,
    pub(super) user_conf: bool,
    /// A line of `-o` (no `Host`, `Match` or `Include` there).
    pub(super) command_line: bool,
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

impl Pass<'_> {
    fn read_all(&mut self, opts: &mut Options) -> Result<(), ConfigError> {
        let config = self.config;
        for top in &config.files {
            let file = config.cache.file(&top.path);
            let lexed = match &file.read {
                Ok(l) => l,
                // ssh skips `~/.ssh/config` and the system file when it cannot open them;
                // only `-F FILE` must be readable.
                Err(_) if !top.user_conf || top.check_perm => continue,
                Err((kind, text)) => {
                    return Err(ConfigError::Read {
                        path: top.path.clone(),
                        error: cache::CachedFile::error(*kind, text),
                    })
                }
            };
            if top.check_perm {
                if let Some(refused) = &file.perm {
                    return Err(ConfigError::Refused(refused.clone()));
                }
            }
            let mut active = true;
            let flags = Flags {
                user_conf: top.user_conf,
                never_match: false,
            };
            let include_dir = if top.user_conf {
                None
            } else {
                Some(top.path.parent().unwrap_or(Path::new("/etc/ssh")).to_path_buf())
            };
            self.read_text(opts, &top.path, lexed, &mut active, flags, include_dir.as_deref(), 0)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn read_text(
        &mut self,
        opts: &mut Options,
        path: &Path,
        lexed: &cache::Lexed,
        active: &mut bool,
        flags: Flags,
        system_dir: Option<&Path>,
        depth: usize,
    ) -> Result<(), ConfigError> {
        for (line, cut) in lexed.lines() {
            let origin = Origin {
                file: path,
                line: *line,
                user_conf: flags.user_conf,
                command_line: false,
            };
            let (keyword, rest) = match cut {
                Ok((keyword, range)) => (keyword, lexed.rest(range)),
                Err(k) => return Err(origin.error(format!("no argument after keyword \"{k}\""))),
            };
            match keywords::lookup(keyword) {
                Some(Keyword::Host) => {
                    let words = lexer::argv_split(rest).map_err(|()| origin.error("invalid quotes"))?;
                    if flags.never_match {
                        if words.first().is_some_and(String::is_empty) {
                            return Err(origin.error("keyword host empty argument"));
                        }
                        *active = false;
                    } else {
                        *active = matching::host_line_matches(&words, &self.host).map_err(|m| origin.error(m))?;
                    }
                }
                Some(Keyword::Match) => {
                    lexer::argv_split(rest).map_err(|()| origin.error("invalid quotes"))?;
                    let state = matching::MatchState {
                        host: &match_host(opts, &self.host, self.final_pass)?,
                        original_host: self.original_host,
                        user: opts.user.as_deref().unwrap_or(&self.config.local.default_user),
                        local_user: &self.config.local.local_user,
                        final_pass: self.final_pass,
                    };
                    let outcome = matching::match_line(rest, &state).map_err(|m| origin.error(m))?;
                    self.wants_final |= outcome.wants_final;
                    if outcome.leftover {
                        return Err(origin.error("keyword match extra arguments at end of line"));
                    }
                    *active = outcome.applies && !flags.never_match;
                }
                Some(Keyword::Include) => {
                    let words = lexer::argv_split(rest).map_err(|()| origin.error("invalid quotes"))?;
                    for word in words {
                        self.include(opts, &origin, &word, active, flags, system_dir, depth)?;
                    }
                }
                Some(kw) => apply(opts, kw, keyword, rest, &origin, *active)?,
                None => {
                    let ignored = opts
                        .ignore_unknown
                        .as_deref()
                        .is_some_and(|list| matching::ignored_keyword(list, keyword));
                    if !ignored {
                        return Err(origin.error(format!("Bad configuration option: {keyword}")));
                    }
                    lexer::argv_split(rest).map_err(|()| origin.error("invalid quotes"))?;
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn include(
        &mut self,
        opts: &mut Options,
        origin: &Origin<'_>,
        word: &str,
        active: &mut bool,
        flags: Flags,
        system_dir: Option<&Path>,
        depth: usize,
    ) -> Result<(), ConfigError> {
        if word.is_empty() {
            return Err(origin.error("keyword include empty argument"));
        }
        if word.starts_with('~') && !flags.user_conf {
            return Err(origin.error(format!("bad include path {word}.")));
        }
        let local = &self.config.local;
        let pattern = if word.starts_with('/') {
            word.to_string()
        } else if word.starts_with('~') {
            tilde_expand(word, &local.include_home).map_err(|e| origin.error(e))?
        } else if flags.user_conf {
            format!("{}/.ssh/{word}", glob_escape(&local.include_home.to_string_lossy()))
        } else {
            let dir = system_dir.unwrap_or(Path::new("/etc/ssh"));
            format!("{}/{word}", glob_escape(&dir.to_string_lossy()))
        };
        let files = self.config.cache.glob(&pattern).map_err(|e| origin.error(e))?;
        let outer = *active;
        for file in files {
            if depth + 1 > MAX_INCLUDE_DEPTH {
                return Err(origin.error("Too many recursive configuration includes"));
            }
            let cached = self.config.cache.file(&file);
            let lexed = match &cached.read {
                Ok(l) => l,
                Err((std::io::ErrorKind::NotFound, _)) => continue,
                Err((_, e)) => return Err(origin.error(format!("Can't open user config file {}: {e}", file.display()))),
            };
            if let Some(refused) = &cached.perm {
                return Err(ConfigError::Refused(refused.clone()));
            }
            let inner = Flags {
                user_conf: flags.user_conf,
                never_match: flags.never_match || !outer,
            };
            self.read_text(opts, &file, lexed, active, inner, system_dir, depth + 1)?;
            // A Match in the included file does not change the including block's state.
            *active = outer;
        }
        Ok(())
    }
}

/// What `Match host` compares with when the line is reached: `HostName` so far with
/// `%h` expanded, else the host.
fn match_host(opts: &Options, host: &str, final_pass: bool) -> Result<String, ConfigError> {
    match &opts.hostname {
        Some(h) if final_pass => Ok(h.clone()),
        Some(h) => {
            percent_expand(h, &[('h', host)], false).map_err(|e| ConfigError::Refused(format!("HostName {h:?}: {e}")))
        }
        None => Ok(host.to_string()),
    }
}

#[derive(Debug, Clone, Copy)]
struct Flags {
    user_conf: bool,
    /// Inside an `Include` of a block that did not apply: nothing here applies.
    never_match: bool,
}

/// A file's text (bytes that are not UTF-8 are replaced, as they cannot name anything
/// this tool uses).
fn read_text(path: &Path) -> std::io::Result<String> {
    // A directory opens but reads as nothing, as with fopen().
    if path.is_dir() {
        return Ok(String::new());
    }
    std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// ssh refuses a user config file another user could have written.
fn check_perm(path: &Path) -> Result<(), ConfigError> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let me = sys::current_user().map_or(0, |p| p.uid);
    let group_ok = meta.mode() & 0o020 == 0 || private_group(meta.gid(), meta.uid());
    if (meta.uid() != 0 && meta.uid() != me) || meta.mode() & 0o002 != 0 || !group_ok {
        return Err(ConfigError::Refused(format!(
            "Bad owner or permissions on {} (ssh refuses a config file that another user can write; chmod go-w it)",
            path.display()
        )));
    }
    Ok(())
}

/// Debian's ssh accepts a group-writable file when its group has exactly one member, the
/// file's owner (a user private group): no user but the owner has it as primary group
/// (`/etc/passwd`), and `/etc/group` lists no member or only the owner.
fn private_group(gid: u32, owner: u32) -> bool {
    private_group_in(
        &std::fs::read_to_string("/etc/passwd").unwrap_or_default(),
        &std::fs::read_to_string("/etc/group").unwrap_or_default(),
        gid,
        owner,
    )
}

fn private_group_in(passwd: &str, group: &str, gid: u32, owner: u32) -> bool {
    let users: Vec<(&str, u32, u32)> = passwd
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            Some((*f.first()?, f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?))
        })
        .collect();
    let Some(owner_name) = users.iter().find(|u| u.1 == owner).map(|u| u.0) else {
        return false;
    };
    let Some(members) = group.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.get(2)?.parse::<u32>().ok()? == gid).then(|| f.get(3).copied().unwrap_or(""))
    }) else {
        return false;
    };
    let mut count = 0;
    for (_, uid, primary) in &users {
        if *primary == gid {
            count += 1;
            if *uid != owner {
                return false;
            }
        }
    }
    let listed: Vec<&str> = members.split(',').filter(|m| !m.is_empty()).collect();
    if let Some(first) = listed.first() {
        count += 1;
        if *first != owner_name || listed.len() > 1 {
            return false;
        }
    }
    count > 0
}

/// Backslash-escapes glob(3) metacharacters in a fixed directory part.
fn glob_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// One keyword line (not `Host`, `Match`, `Include`): checks it as ssh does, and when
/// `active`, records a value not obtained yet.
fn apply(
    opts: &mut Options,
    kw: Keyword,
    keyword: &str,
    rest: &str,
    origin: &Origin<'_>,
    active: bool,
) -> Result<(), ConfigError> {
    let args = lexer::argv_split(rest).map_err(|()| origin.error("invalid quotes"))?;
    let extra = || origin.error(format!("keyword {keyword} extra arguments at end of line"));
    let missing = || origin.error("Missing argument.");
    // The single argument of most keywords.
    let one = || -> Result<&String, ConfigError> {
        let a = args.first().filter(|a| !a.is_empty()).ok_or_else(missing)?;
        if args.len() > 1 {
            return Err(extra());
        }
        Ok(a)
    };
    let flag = |what: &[(&str, bool)]| -> Result<bool, ConfigError> {
        let a = args.first().ok_or_else(|| origin.error("missing argument."))?;
        let v = what
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(a))
            .map(|(_, v)| *v)
            .ok_or_else(|| origin.error(format!("unsupported option \"{a}\".")))?;
        if args.len() > 1 {
            return Err(extra());
        }
        Ok(v)
    };
    const YES_NO: &[(&str, bool)] = &[("true", true), ("false", false), ("yes", true), ("no", false)];
    // Raw text after the keyword, for ProxyCommand and ProxyJump.
    let raw = rest.trim_start_matches([' ', '\t', '\r', '\n', '=']);
    match kw {
        Keyword::HostName => set_once(&mut opts.hostname, one()?, active),
        Keyword::User => set_once(&mut opts.user, one()?, active),
        Keyword::HostKeyAlias => set_once(&mut opts.host_key_alias, one()?, active),
        Keyword::IgnoreUnknown => set_once(&mut opts.ignore_unknown, one()?, active),
        Keyword::Port => {
            let a = one()?;
            let port = a2port(a)
                .filter(|&p| p > 0)
                .ok_or_else(|| origin.error(format!("Bad port '{a}'.")))?;
            if active && opts.port.is_none() {
                opts.port = Some(port);
            }
        }
        Keyword::IdentityFile => {
            let a = one()?;
            if active {
                if opts.identity_files.len() >= MAX_IDENTITY_FILES {
                    return Err(origin.error(format!("Too many identity files specified (max {MAX_IDENTITY_FILES}).")));
                }
                let entry = (a.clone(), origin.user_conf);
                if !opts.identity_files.contains(&entry) {
                    opts.identity_files.push(entry);
                }
            }
        }
        Keyword::UserKnownHostsFile | Keyword::GlobalKnownHostsFile => {
            for (i, a) in args.iter().enumerate() {
                if a.is_empty() {
                    return Err(origin.error(format!("keyword {keyword} empty argument")));
                }
                if a.eq_ignore_ascii_case("none") && (i > 0 || args.len() > 1) {
                    return Err(origin.error(format!("keyword {keyword} \"none\" argument must appear alone.")));
                }
            }
            let list = if kw == Keyword::UserKnownHostsFile {
                &mut opts.user_hostfiles
            } else {
                &mut opts.system_hostfiles
            };
            // ssh counts only the entries it keeps: an active line, the list still empty.
            if active && list.is_none() && args.len() > MAX_HOSTS_FILES {
                return Err(origin.error(format!("too many {keyword} entries.")));
            }
            if active && list.is_none() && !args.is_empty() {
                *list = Some(args.clone());
            }
        }
        Keyword::StrictHostKeyChecking => {
            let a = args.first().ok_or_else(|| origin.error("missing argument."))?;
            let v = match a.to_ascii_lowercase().as_str() {
                "true" | "yes" | "ask" => StrictHostKeyChecking::Yes,
                "false" | "no" | "off" => StrictHostKeyChecking::No,
                "accept-new" => StrictHostKeyChecking::AcceptNew,
                _ => return Err(origin.error(format!("unsupported option \"{a}\"."))),
            };
            if args.len() > 1 {
                return Err(extra());
            }
            if active && opts.strict.is_none() {
                opts.strict = Some((v, origin.at()));
            }
        }
        Keyword::IdentitiesOnly => set_once(&mut opts.identities_only, &flag(YES_NO)?, active),
        Keyword::HashKnownHosts => set_once(&mut opts.hash_known_hosts, &flag(YES_NO)?, active),
        Keyword::CanonicalizeHostname => {
            let v = match flag(&[
                ("true", true),
                ("false", false),
                ("yes", true),
                ("no", false),
                ("always", true),
            ])? {
                false => Canonicalize::No,
                true if args.first().is_some_and(|a| a.eq_ignore_ascii_case("always")) => Canonicalize::Always,
                true => Canonicalize::Yes,
            };
            set_once(&mut opts.canonicalize_hostname, &v, active);
        }
        Keyword::CanonicalizeFallbackLocal => {
            set_once(&mut opts.canonicalize_fallback_local, &flag(YES_NO)?, active);
        }
        Keyword::CanonicalizeMaxDots => {
            let dots = values::integer(one()?).map_err(|e| origin.error(e))?;
            set_once(&mut opts.canonicalize_max_dots, &dots, active);
        }
        Keyword::CanonicalDomains => {
            for (i, a) in args.iter().enumerate() {
                if a.is_empty() {
                    return Err(origin.error(format!("keyword {keyword} empty argument")));
                }
                if a.eq_ignore_ascii_case("none") && (i > 0 || args.len() > 1) {
                    return Err(origin.error(format!("keyword {keyword} \"none\" argument must appear alone.")));
                }
                values::domain(a).map_err(|e| origin.error(e))?;
            }
            if active && opts.canonical_domains.is_none() {
                opts.canonical_domains = Some(args.into_iter().filter(|a| !a.eq_ignore_ascii_case("none")).collect());
            }
        }
        Keyword::ProxyCommand => {
            if active && opts.proxy_command.is_none() {
                opts.proxy_command = Some((raw.to_string(), origin.at()));
            }
        }
        Keyword::ProxyJump => {
            let jump = parse_jump(raw, origin.command_line)
                .map_err(|e| origin.error(format!("Invalid ProxyJump \"{raw}\" ({e})")))?;
            match jump {
                Jump::None => {
                    if active && opts.jump.is_none() {
                        opts.jump = Some(Jump::None);
                    }
                }
                via @ Jump::Via { .. } => {
                    if active && opts.proxy_command.is_none() && opts.jump.is_none() {
                        opts.jump = Some(via);
                        // As ssh: a ProxyJump makes any later ProxyCommand void.
                        opts.proxy_command = Some(("none".into(), origin.at()));
                    }
                }
            }
        }
        Keyword::Flag => {
            flag(YES_NO)?;
        }
        Keyword::YesNo => {
            flag(&[("yes", true), ("no", false)])?;
        }
        Keyword::Time => {
            values::time(one()?).map_err(|e| origin.error(e))?;
        }
        Keyword::Integer => {
            values::integer(one()?).map_err(|e| origin.error(e))?;
        }
        Keyword::LogLevel => {
            values::log_level(one()?).map_err(|e| origin.error(e))?;
        }
        Keyword::Single => {
            one()?;
        }
        Keyword::Other => {}
        Keyword::Host | Keyword::Match | Keyword::Include => {
            return Err(origin.error(format!("{keyword} directive not supported as a command-line option")));
        }
    }
    Ok(())
}

fn set_once<T: Clone>(slot: &mut Option<T>, value: &T, active: bool) {
    if active && slot.is_none() {
        *slot = Some(value.clone());
    }
}

/// `~` and `~/x` → the home directory (for paths this tool builds itself).
pub(crate) fn expand_tilde(p: &str, home: &Path) -> PathBuf {
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
