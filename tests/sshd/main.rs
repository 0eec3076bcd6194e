//! The tests that start a real OpenSSH `sshd` on 127.0.0.1 (see `support`), in one binary
//! apart from the rest so `cargo test --test sshd` runs just them. One binary instead of one
//! per file: each integration-test binary links russh, tokio and clap, so every extra file
//! cost a link and about 140 MB of `target/`.
#[path = "../support/mod.rs"]
mod support;

mod batch_shell;
mod batch_sshd;
mod both_ways_sshd;
mod bundle_sshd;
mod evidence_sshd;
mod login;
mod outcomes_sshd;
mod probe_sshd;
mod serve_sshd;
mod serve_vcenter_sshd;
mod vcenter_sshd;
mod watch_vcenter_sshd;
