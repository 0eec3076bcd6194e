//! What reading the configuration gives: a host's effective options, its jump host, and
//! the errors ssh would refuse with.
use super::*;

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
    pub strict_host_key_checking: Option<StrictHostKeyChecking>,
    /// Where that `StrictHostKeyChecking` came from (`file:line`), for the warning when it
    /// turns on trust-on-first-use.
    pub strict_host_key_checking_at: Option<String>,
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
    /// `ConnectTimeout` in seconds, when set (`0`: ssh waits as long as the system does).
    pub connect_timeout: Option<u64>,
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
