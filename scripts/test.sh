#!/usr/bin/env bash
# The whole test suite, as the README and CI run it. Installs what the tests need first
# (OpenSSH sshd, busybox, tmux, the PAM test user) so it works on a fresh Debian machine.
# Run it as yourself: only the install step needs root, and it goes through sudo when
# you are not root, so cargo stays your own (a per-user rustup install works as is).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then
    bash scripts/install-test-deps.sh
else
    sudo bash scripts/install-test-deps.sh
fi
# The real-tool oracles (sshd, ssh -G, Prometheus, promtool, node_exporter, Icinga 2, tmux,
# ClusterShell) are the `#[ignore = "needs …"]` tests: a plain `cargo test` counts them as
# ignored, here they run with the rest and fail when a tool is missing (docs/testing.md).
# Arguments go to cargo (a target, a filter), before the harness' `--`.
cargo test --workspace --all-targets "$@" -- --include-ignored
# `--all-targets` leaves out doctests: the parser samples and the engine's example are ones.
cargo test --workspace --doc "$@"
