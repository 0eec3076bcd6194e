//! Opening an authenticated SSH connection to one ESXi host, possibly through ProxyJump
//! hops: what a hop is ([`Endpoint`]), and the chain of transport + authentication per hop.
//! The transport lives in [`crate::ssh::transport`], authentication in [`crate::ssh::auth`].
//!
//! Every way this can go wrong ends as an [`SshError`] whose message names the hop and says
//! what to do, because the admin reading the report is not looking at a debug log.
use crate::ssh::auth::authenticate;
use crate::ssh::error::{SshError, SshErrorKind};
use crate::ssh::transport::{handshake, resolve, tcp_connect, ClientHandler};
use russh::client::Handle;
use secrecy::SecretString;
use std::borrow::Cow;
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

/// An authenticated connection; jump-host connections are kept alive with it.
pub(crate) struct Connection {
    pub(crate) handle: Handle<ClientHandler>,
    _jumps: Vec<Handle<ClientHandler>>,
    _open: OpenGuard,
}

/// Authenticated connections open in this process (the exporter's
/// `pvrdma_doctor_ssh_sessions_open`).
static OPEN_CONNECTIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many authenticated SSH connections (to a target, its jump hosts counted with it)
/// are open right now.
pub fn open_connections() -> usize {
    OPEN_CONNECTIONS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Counts one open connection for as long as it lives.
struct OpenGuard;

impl OpenGuard {
    fn new() -> Self {
        OPEN_CONNECTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        OpenGuard
    }
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        OPEN_CONNECTIONS.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Connection {
    /// Closes the connection politely; errors do not matter any more at this point.
    pub(crate) async fn close(self) {
        let _ = self.handle.disconnect(russh::Disconnect::ByApplication, "", "en").await;
        for j in self._jumps.into_iter().rev() {
            let _ = j.disconnect(russh::Disconnect::ByApplication, "", "en").await;
        }
    }
}

/// `step` (a hop's TCP connect and handshake) within the hop's `ConnectTimeout`, when set.
async fn within_connect_timeout<T>(
    hop: &Endpoint,
    step: impl std::future::Future<Output = Result<T, SshError>>,
) -> Result<T, SshError> {
    let Some(limit) = hop.connect_timeout else {
        return step.await;
    };
    tokio::time::timeout(limit, step).await.unwrap_or_else(|_| {
        Err(SshError::at(
            SshErrorKind::Timeout,
            hop,
            format!(
                "no SSH handshake (TCP connect, banner, key exchange) within ConnectTimeout {} (ssh_config or -o); check that the host is up and reachable, or raise ConnectTimeout",
                pvrdma_engine::duration::text(limit)
            ),
        ))
    })
}

/// Connects to `target` through `jumps` (in order) and authenticates on each.
/// The caller bounds this with `--connect-timeout`.
pub(crate) async fn connect(
    jumps: &[Endpoint],
    target: &Endpoint,
    creds: &Credentials,
) -> Result<Connection, SshError> {
    let mut handles: Vec<Handle<ClientHandler>> = Vec::new();
    let mut prev: Option<&Endpoint> = None;
    for hop in jumps.iter().chain(std::iter::once(target)) {
        let (mut handle, info) = match handles.last() {
            None => {
                let addrs = resolve(hop).await?;
                within_connect_timeout(hop, async {
                    let tcp = tcp_connect(hop, &addrs).await?;
                    handshake(hop, tcp).await
                })
                .await?
            }
            Some(via) => {
                let ch = via
                    .channel_open_direct_tcpip(hop.hostname.clone(), u32::from(hop.port), "127.0.0.1", 0)
                    .await
                    .map_err(|e| {
                        let via_label = prev.map(|v| v.label.as_str()).unwrap_or("jump host");
                        SshError::at(
                            SshErrorKind::Unreachable,
                            hop,
                            format!(
                                "the jump host {via_label} could not open a connection to it ({e}); check that {via_label} can reach {}:{} and allows TCP forwarding",
                                hop.hostname, hop.port
                            ),
                        )
                    })?;
                within_connect_timeout(hop, handshake(hop, ch.into_stream())).await?
            }
        };
        // The password is the ESXi hosts' password: a jump host (often run by someone
        // else) must never receive it, so hops log in with the agent and keys only.
        let is_target = hop.is_target;
        let hop_creds = if is_target {
            Cow::Borrowed(creds)
        } else {
            Cow::Owned(Credentials {
                use_agent: creds.use_agent,
                password: None,
                keys: creds.keys.clone(),
            })
        };
        authenticate(hop, &mut handle, &hop_creds, is_target, &info).await?;
        handles.push(handle);
        prev = Some(hop);
    }
    let handle = handles
        .pop()
        .ok_or_else(|| SshError::at(SshErrorKind::Internal, target, "no connection was made".to_string()))?;
    Ok(Connection {
        handle,
        _jumps: handles,
        _open: OpenGuard::new(),
    })
}
