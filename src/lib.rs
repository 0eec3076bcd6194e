//! pvrdma-doctor: for every PVRDMA adapter on a fleet of ESXi hosts, does its traffic go
//! through the physical RDMA HCA or silently fall back to TCP, and why.
//!
//! The pipeline is visible in the modules: hosts → [`collect`] raw outputs → `facts`
//! (parsed, typed) → [`diagnose`] checks and verdicts → [`report`]. Only `collect` does I/O.
pub mod app;
mod archive;
mod atomic;
mod baseline;
pub mod bundle;
pub mod catalogue;
pub mod cli;
pub mod collect;
pub mod demo;
pub mod diagnose;
pub mod exit;
mod facts;
pub mod live;
pub mod nodeset;
pub mod offline;
pub mod probe;
pub mod redact;
pub mod report;
mod simhost;
mod simnet;
pub mod ssh;
pub mod target;
pub mod vmsupport;
