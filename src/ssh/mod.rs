//! SSH plumbing for live collection: ssh_config, known_hosts and the russh client.
//!
//! Kept apart from `collect` so the policy (which host, which key, which algorithms) can be
//! tested without a network, and `collect::ssh` only deals with running the catalogue.
pub mod client;
pub mod config;
pub mod known_hosts;
