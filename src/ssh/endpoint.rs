//! What one SSH hop is ([`Endpoint`]: the server, the login, the keys to try, how its
//! host key is judged) and the credentials every hop of a run shares: what the planner
//! builds from ssh_config and the transport, authentication and error messages read.
use secrecy::SecretString;
use std::path::PathBuf;

/// How host keys are judged.
#[derive(Debug, Clone)]
pub(crate) struct HostKeyPolicy {
    /// Files to check, in order (UserKnownHostsFile list, then the global ones).
    pub(crate) known_hosts: Vec<PathBuf>,
    /// Where `--accept-new` records a new key (the first user file).
    pub(crate) learn_to: Option<PathBuf>,
    pub(crate) accept_new: bool,
    /// When `accept_new` comes from ssh_config (`StrictHostKeyChecking accept-new/no`)
    /// rather than `--accept-new`: the `file:line`, so the run can warn about it.
    pub(crate) accept_new_from_config: Option<String>,
    /// `--insecure-skip-host-key-check`: accept anything. Never the default.
    pub(crate) insecure: bool,
    /// ssh_config `HostKeyAlias`: keys are looked up and recorded under this name, with
    /// no `[...]:port` decoration, as ssh does.
    pub(crate) host_key_alias: Option<String>,
    /// ssh_config `HashKnownHosts yes`: a learnt key's host name is written hashed.
    pub(crate) hash_known_hosts: bool,
}

impl HostKeyPolicy {
    /// The (name, port) known_hosts entries are matched against for a server.
    pub(crate) fn key_name<'a>(&'a self, hostname: &'a str, port: u16) -> (&'a str, u16) {
        match &self.host_key_alias {
            Some(alias) => (alias.as_str(), 22),
            None => (hostname, port),
        }
    }
}

/// Where an identity file came from; decides what a missing file means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyOrigin {
    /// `-i`: must exist (checked before the run starts).
    CommandLine,
    /// ssh_config `IdentityFile`: a missing one is mentioned when authentication fails.
    Config,
    /// `~/.ssh/id_ecdsa`, `id_rsa`, `id_ed25519`: tried when present.
    Default,
}

/// One private key file to try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub path: PathBuf,
    pub(crate) origin: KeyOrigin,
}

/// One SSH server to log in to.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// How messages name it (`esx01:22`).
    pub(crate) label: String,
    /// The host being diagnosed (not a jump host on the way to it).
    pub(crate) is_target: bool,
    /// Address to connect to (after ssh_config `HostName`).
    pub(crate) hostname: String,
    pub(crate) port: u16,
    pub(crate) user: String,
    /// Private keys to try, in order, after the agent.
    pub identity_files: Vec<Identity>,
    /// `IdentitiesOnly`: agent keys are offered only when they are one of `identity_files`
    /// (keeps a full agent from using up the server's MaxAuthTries).
    pub(crate) identities_only: bool,
    /// Where its ssh_config comes from, for hints (`~/.ssh/config`, `-F FILE`).
    pub(crate) config_source: String,
    pub(crate) policy: HostKeyPolicy,
    /// Its `ConnectTimeout` (not 0): bounds its TCP connect and SSH handshake (banner and
    /// key exchange), as ssh's bounds its connect and banner; authentication is not in it.
    pub(crate) connect_timeout: Option<std::time::Duration>,
}

/// Credentials shared by all hosts of a run.
/// `Debug` shows the password as redacted (secrecy).
#[derive(Debug, Clone, Default)]
pub(crate) struct Credentials {
    /// Try keys from `SSH_AUTH_SOCK` first.
    pub(crate) use_agent: bool,
    /// Answer for keyboard-interactive / password.
    pub(crate) password: Option<SecretString>,
    /// The identity files, read once for all hosts of the run.
    pub(crate) keys: std::sync::Arc<crate::ssh::key_files::KeyFiles>,
}
