//! Opening an authenticated SSH connection to one ESXi host, possibly through ProxyJump
//! hops: the chain of transport + authentication per hop. What a hop is lives in
//! [`crate::ssh::endpoint`], the transport in [`crate::ssh::transport`], authentication
//! in [`crate::ssh::auth`].
//!
//! Every way this can go wrong ends as an [`SshError`] whose message names the hop and says
//! what to do, because the admin reading the report is not looking at a debug log.
use crate::ssh::auth::authenticate;
use crate::ssh::endpoint::{Credentials, Endpoint};
use crate::ssh::error::{SshError, SshErrorKind};
use crate::ssh::transport::{handshake, resolve, tcp_connect, ClientHandler};
use russh::client::Handle;
use std::borrow::Cow;

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
