//! Pipeline stage: *collect*. The only stage that does I/O: a live SSH host ([`ssh`]), a
//! directory of captured outputs ([`replay`], in the layout of [`folder`]). What they produce, one
//! [`HostCapture`](pvrdma_engine::capture::HostCapture) per host, is the engine's capture
//! model (`pvrdma_engine::capture`).

pub mod replay;
mod schedule;
pub mod ssh;
