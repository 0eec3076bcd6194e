//! pvrdma-doctor: for every PVRDMA adapter on a fleet of ESXi hosts, does its traffic go
//! through the physical RDMA HCA or silently fall back to TCP, and why.
//!
//! The pipeline: [`hosts`] → [`collect`] raw outputs → facts (parsed, typed) → checks and
//! verdicts → report. The pure stages (capture model, catalogue, facts, diagnose, report,
//! baseline) are the `pvrdma-engine` crate, used by its own name (`pvrdma_engine::…`);
//! this crate adds what touches the world: SSH, the command line, bundles, the exporter,
//! the demo's simulated hosts.
// No `unsafe` but calls into the C library, each allowed where it stands with the reason
// it is sound: the two rlimit calls of `live::fanout` (and its test). (The ssh_config
// reader's C library calls are in its own crate, `pvrdma-ssh-config`.)
#![deny(unsafe_code)]
pub mod app;
mod archive;
mod atomic_file;
pub mod bundle;
pub mod cli;
pub mod collect;
pub mod demo;
mod evidence;
pub mod hosts;
pub mod live;
pub mod offline;
pub mod plugin;
pub mod probe;
pub mod redact;
pub mod serve;
mod source;
pub mod ssh;
pub mod terminal;
mod vcenter;
pub mod vmsupport;
