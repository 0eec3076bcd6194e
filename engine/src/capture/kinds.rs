//! Every failure kind at once, for what counts failures by kind.
use super::ErrorKind;

impl ErrorKind {
    /// Every kind, in the order declared: a metric labelled by kind shows each at 0
    /// before the first failure, so a rate over it is never empty on a healthy fleet.
    pub const ALL: [ErrorKind; 13] = [
        ErrorKind::Dns,
        ErrorKind::Unreachable,
        ErrorKind::Timeout,
        ErrorKind::KeyExchange,
        ErrorKind::Auth,
        ErrorKind::HostKeyUnknown,
        ErrorKind::HostKeyChanged,
        ErrorKind::NotEsxi,
        ErrorKind::CommandFailed,
        ErrorKind::Unparseable,
        ErrorKind::Interrupted,
        ErrorKind::Config,
        ErrorKind::Internal,
    ];
}
