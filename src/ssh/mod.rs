//! SSH plumbing for live collection: ssh_config, known_hosts, keys and the russh client.
//!
//! Kept apart from `collect` so the policy (which host, which key, which algorithms) can be
//! tested without a network, and `collect::ssh` only deals with running the catalogue.
//! Nothing here depends on the capture model: failures are [`error::SshError`].
mod auth;
pub(crate) mod client;
pub(crate) mod endpoint;
pub(crate) mod error;
pub(crate) mod key_files;
pub mod keys;
mod known_hosts;
pub(crate) mod plan;
mod signer;
mod transport;
