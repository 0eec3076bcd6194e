//! What can go wrong while connecting, in the SSH layer's own terms. The collection stage
//! turns an [`SshError`] into its report failure one to one (see `collect::ssh`), so this
//! module does not depend on the capture model.

use crate::ssh::endpoint::Endpoint;

/// The class of an SSH failure; each maps to the report's error kind of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SshErrorKind {
    /// The name did not resolve.
    Dns,
    /// TCP connect refused, no route, or the connection broke before authentication.
    Unreachable,
    /// No common algorithm, or the handshake failed.
    KeyExchange,
    /// Every authentication attempt was refused.
    Auth,
    /// The host key is not in known_hosts.
    HostKeyUnknown,
    /// The host key differs from the recorded one, or is revoked.
    HostKeyChanged,
    /// Local configuration (ssh_config, known_hosts file, key file) is unusable.
    Config,
    /// The hop's `ConnectTimeout` ran out before its TCP connect and handshake finished.
    Timeout,
    /// A bug in pvrdma-doctor.
    Internal,
}

/// A failure with the message the admin reads: it names the host and says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct SshError {
    pub(crate) kind: SshErrorKind,
    pub(crate) message: String,
    /// The message without the target host's name in front (see the report failure's
    /// `detail`); `None` when the message is not about the target (a jump host's failure).
    pub(crate) detail: Option<String>,
}

impl SshError {
    /// A failure at `hop`, as `<hop label>: <detail>`; the detail is kept apart when the
    /// hop is the target host, whose report it lands in.
    pub(crate) fn at(kind: SshErrorKind, hop: &Endpoint, detail: String) -> Self {
        SshError {
            kind,
            message: format!("{}: {detail}", hop.label),
            detail: hop.is_target.then_some(detail),
        }
    }
}
