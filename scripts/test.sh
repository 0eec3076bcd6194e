#!/usr/bin/env bash
# The whole test suite, as the README and CI run it. Installs what the tests need first
# (OpenSSH sshd, busybox, the PAM test user) so it works on a fresh Debian machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
cargo test --workspace --all-targets "$@"
# `--all-targets` leaves out doctests: the parser samples and the engine's example are ones.
cargo test --workspace --doc "$@"
