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
# ClusterShell) run, and fail when a tool is missing; a plain `cargo test` skips them.
export PVRDMA_REAL_TOOLS=1
cargo test --workspace --all-targets "$@"
# `--all-targets` leaves out doctests: the parser samples and the engine's example are ones.
cargo test --workspace --doc "$@"
